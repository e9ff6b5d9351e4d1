"""DMC (DouZero's Deep Monte-Carlo) against PPO at equal wall time, side by side (docs/ppo.md).

    python benchmarks/dmc_vs_ppo.py --minutes 40 --seed 32000000 --out runs/dmc_vs_ppo

Both learners start from random weights at the same time, one process each on its own core
(torch on one thread), with the same network (``dominoes train ppo``'s defaults: 128x128 tanh,
the after-state head), the same games a rollout and the same learning rate, held constant (a run
cut by the clock has no end to anneal towards). PPO is :class:`~baselines.ppo.trainer.Trainer`,
DMC :class:`~baselines.ppo.dmc.DMCTrainer` (epsilon-greedy, the chosen moves' scores regressed
on their Monte-Carlo returns). Each evaluates itself every ``--eval-every`` steps as PPO's runs
do (against ``--opponent`` in every other seat, on PPO's 400 held-out deals, seats rotated) and
stops at its first evaluation past ``--minutes``. Each run's ``log.csv`` and curve go under
OUT/ppo and OUT/dmc; the table printed at the end gives, at each shared evaluation time, the
better margin so far of each. Plot both with ``benchmarks/imitation_curves.py --curve DMC none
OUT/dmc/log.csv --curve PPO none OUT/ppo/log.csv``.
"""

from __future__ import annotations

import argparse
import csv
import functools
import multiprocessing
import time
from pathlib import Path

from baselines.ppo.config import PPOConfig
from dominoes_env.core.config import make_config


class _OutOfTime(Exception):
    """The run's time is up (raised at an evaluation row, after the row is written)."""


def _train(learner: str, config: PPOConfig, out: Path, seconds: float, epsilon: float) -> None:
    import torch

    from baselines.ppo.dmc import DMCTrainer
    from baselines.ppo.run import train_run
    from baselines.ppo.trainer import Trainer

    torch.set_num_threads(1)
    began = time.perf_counter()

    def stop_when_due(row: dict) -> None:
        if row["kind"] == "eval" and time.perf_counter() - began > seconds:
            raise _OutOfTime

    trainer_class = functools.partial(DMCTrainer, epsilon=epsilon) if learner == "dmc" else Trainer
    try:
        train_run(config, out, "cpu", progress=False, on_row=stop_when_due, torch_threads=1,
                  trainer_class=trainer_class)
    except _OutOfTime:
        pass


def _margins(path: Path, opponent: str) -> list[tuple[float, float, float, float]]:
    """(seconds, steps, margin, interval) of each evaluation against `opponent`."""
    with open(path, newline="") as handle:
        return [(float(row["elapsed_s"]), float(row["steps"]), float(row["margin"]), float(row["margin_ci95"]))
                for row in csv.DictReader(handle) if row["kind"] == "eval" and row["opponent"] == opponent]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=40.0, help="wall time of each learner (default 40)")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--highest", type=int, default=9)
    parser.add_argument("--seed", type=int, default=32000000)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--epsilon", type=float, default=0.01, help="DMC's share of random moves (default 0.01)")
    parser.add_argument("--eval-every", type=int, default=1_000_000, help="learner steps between evaluations")
    parser.add_argument("--eval-hands", type=int, default=400, help="hands of each evaluation (default PPO's 400)")
    parser.add_argument("--num-envs", type=int, default=1024, help="games a rollout (default PPO's 1024)")
    parser.add_argument("--opponent", default="td_lambda")
    parser.add_argument("--out", type=Path, default=Path("runs/dmc_vs_ppo"))
    args = parser.parse_args()

    config = PPOConfig(game=make_config(args.players, args.highest), steps=10**12, seed=args.seed,
                       learning_rate=args.learning_rate, anneal=False, eval_every=args.eval_every,
                       eval_hands=args.eval_hands, num_envs=args.num_envs, eval_opponents=(args.opponent,))
    context = multiprocessing.get_context("spawn")
    runs = {learner: context.Process(target=_train, args=(learner, config, args.out / learner, 60 * args.minutes,
                                                          args.epsilon))
            for learner in ("ppo", "dmc")}
    began = time.perf_counter()
    for process in runs.values():
        process.start()
    for process in runs.values():
        process.join()
    print(f"both runs took {time.perf_counter() - began:.0f} s; margins against {args.players - 1} {args.opponent} "
          f"(pips a hand, lower is better; the best so far at each time)")
    curves = {learner: _margins(args.out / learner / "log.csv", args.opponent) for learner in runs}
    print(f"{'minutes':>8} " + " ".join(f"{learner + ' (steps)':>26}" for learner in runs))
    for minute in [*range(5, int(args.minutes) + 1, 5)] or [args.minutes]:
        cells = []
        for points in curves.values():
            seen = [point for point in points if point[0] <= 60 * minute]
            best = min(seen, key=lambda point: point[2]) if seen else None
            cells.append(f"{best[2]:+7.2f} ± {best[3]:.2f} ({best[1] / 1e6:5.1f}M)" if best else f"{'-':>26}")
        print(f"{minute:>8} " + " ".join(f"{cell:>26}" for cell in cells))


if __name__ == "__main__":
    main()
