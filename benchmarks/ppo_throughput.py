"""Learner steps a second of ``dominoes train ppo`` beside its bounds, in one run (docs/ppo.md).

    python benchmarks/ppo_throughput.py [--hidden 64,64] [--num-envs 1024] [--rollout-steps 32] [--updates 6]
                                        [--torch-threads 2] [--skip-cleanrl]
    python benchmarks/ppo_throughput.py --device cuda --num-envs 16384 --rollout-steps 16 --engine-threads 16
    python benchmarks/ppo_throughput.py --busy [--torch-threads auto|N] [--updates 12]

Four figures at 4 players, double-nine, fixed seeds, each after a warm-up:

1. the trainer: learner steps a second of whole updates (collect a rollout on the batched
   engine, then PPO's update), with the share of the time the engine's steps took;
2. the same network alone on stored data: the rollout's forward pass and PPO's epochs on a
   rollout collected once, no game: the trainer's bound;
3. ``VectorDominoes.step_random`` at B=4096 (the game alone, a uniformly random move);
4. the CleanRL self-play recipe (``examples/cleanrl_selfplay.py``) at its defaults: its rate
   measured as the difference of two runs of different lengths, so that its start-up cancels.

It prints the ratios the goals are stated in: the trainer against the network alone (goal: at
least half) and against the CleanRL recipe (goal: at least 10x). A speed holds for the machine
it ran on, and its load: read the ratios.

``--busy`` measures instead the trainer as ``dominoes train ppo`` runs it, `--updates` updates
on a quiet machine and then as many in the same run once a process this script starts keeps
one core busy: the ratio is the goal (at least 0.5). ``--torch-threads auto`` (the command's
default) chooses the threads as the command does (:class:`baselines.harness.threads.ThreadChooser`);
a number fixes them.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

from baselines.harness.threads import ThreadChooser, thread_candidates
from baselines.ppo.config import PPOConfig
from baselines.ppo.trainer import Trainer
from baselines.selfplay import OpponentPool
from dominoes_env.core import validation
from dominoes_env.vector import VectorDominoes

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def trainer_rate(config: PPOConfig, updates: int, device: str = "cpu", engine_threads: int = 1
                 ) -> tuple[float, float, Trainer]:
    """(learner steps/s of whole updates, the engine's share of their time, the trainer)."""
    trainer = Trainer(config, device, engine_threads)
    trainer.start_segment(0)
    engine_seconds = 0.0
    step = trainer.engine.step

    def timed_step(actions: np.ndarray) -> tuple:
        nonlocal engine_seconds
        began = time.perf_counter()
        result = step(actions)
        engine_seconds += time.perf_counter() - began
        return result

    trainer.engine.step = timed_step  # type: ignore[method-assign]
    trainer.learn(trainer.collect(), config.learning_rate)  # warm-up
    engine_seconds, steps, began = 0.0, 0, time.perf_counter()
    for _ in range(updates):
        rollout = trainer.collect()
        trainer.learn(rollout, config.learning_rate)
        steps += trainer.learner_steps(rollout)
    elapsed = time.perf_counter() - began
    return steps / elapsed, engine_seconds / elapsed, trainer


def timed_updates(trainer: Trainer, updates: int, threads: int | None, chooser: ThreadChooser | None) -> float:
    """Learner steps/s of `updates` whole updates as ``dominoes train ppo`` makes them: torch's threads
    fixed, or chosen by `chooser` from the updates as they run, as the command does."""
    steps, began = 0, time.perf_counter()
    for _ in range(updates):
        count = chooser.next() if chooser is not None else threads
        assert count is not None
        torch.set_num_threads(count)
        start = time.perf_counter()
        rollout = trainer.collect()
        trainer.learn(rollout, trainer.config.learning_rate)
        done = trainer.learner_steps(rollout)
        if chooser is not None:
            chooser.record(count, (time.perf_counter() - start) / done)
        steps += done
    return steps / (time.perf_counter() - began)


def busy_ratio(config: PPOConfig, updates: int, threads: int | None) -> tuple[float, float]:
    """(quiet rate, rate once a process this function starts keeps one core busy): one run whose
    machine gets busy half-way, as a long training run meets another job."""
    trainer = Trainer(config, "cpu", 1)
    trainer.start_segment(0)
    trainer.learn(trainer.collect(), config.learning_rate)  # warm-up
    chooser = ThreadChooser(thread_candidates()) if threads is None else None
    quiet = timed_updates(trainer, updates, threads, chooser)
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.5)
        busy = timed_updates(trainer, updates, threads, chooser)
    finally:
        spinner.kill()
        spinner.wait()
    return quiet, busy


def network_alone_rate(trainer: Trainer, updates: int) -> float:
    """Rows a second of the rollout's forward passes (the trunk, the value and the policy head over each
    step's B rows, as the collection makes them) and PPO's update, on one stored rollout: no game."""
    rollout = trainer.collect()
    observations, actions = rollout.observations.flatten(0, 1), rollout.actions.flatten()
    chunk = trainer.config.num_envs
    began = time.perf_counter()
    for _ in range(updates):
        with torch.no_grad():
            for start in range(0, observations.shape[0], chunk):
                rows = torch.arange(start, min(start + chunk, observations.shape[0]))
                features = trainer.network.trunk(observations[rows].float())
                trainer.network.value(features)
                trainer.head.evaluate(trainer.network, rollout.choices, features, rows, actions[rows])
        trainer.learn(rollout, trainer.config.learning_rate)
    return updates * observations.shape[0] / (time.perf_counter() - began)


def engine_rate(seconds: float = 2.0, batch: int = 4096, threads: int = 1) -> float:
    """Decisions/s of VectorDominoes.step_random at B=`batch`, 4 players double-nine."""
    vec = VectorDominoes(batch, 4, 9, seed=0, threads=threads)
    vec.reset()
    vec.step_random()
    steps, began = 0, time.perf_counter()
    while time.perf_counter() - began < seconds:
        vec.step_random()
        steps += 1
    return steps * batch / (time.perf_counter() - began)


def cleanrl_rate(rollouts: tuple[int, int] = (2, 6)) -> float:
    """Learner steps/s of the CleanRL self-play recipe at its defaults (64 games, 64 steps a rollout): the
    difference of two runs of `rollouts` rollouts each, which cancels the start-up both pay."""
    sys.path.insert(0, str(EXAMPLES))
    import cleanrl_selfplay

    steps_per_rollout = 64 * 64
    times = []
    for count in rollouts:
        pool = OpponentPool(["random", "double", "persistent_line"], sampling="prioritised", seed=0)
        began = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            cleanrl_selfplay.train(pool, count * steps_per_rollout, 0, 64, 64, 10**9)
        times.append(time.perf_counter() - began)
    return (rollouts[1] - rollouts[0]) * steps_per_rollout / (times[1] - times[0])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hidden", default="64,64", help="the network's hidden widths (default 64,64)")
    parser.add_argument("--policy-head", default="actions", choices=("actions", "afterstates"))
    parser.add_argument("--num-envs", type=validation.integer_argument, default=1024)
    parser.add_argument("--rollout-steps", type=validation.integer_argument, default=32)
    parser.add_argument("--updates", type=validation.integer_argument, default=6, help="updates timed (default 6)")
    parser.add_argument("--torch-threads", default=None, help="torch's threads: N, or auto as dominoes train ppo "
                                                                 "chooses them (default 2; --busy: auto)")
    parser.add_argument("--busy", action="store_true", help="the trainer quiet, then beside a process that keeps one "
                                                            "core busy (started here): the ratio")
    parser.add_argument("--device", default="cpu", help="where the network runs: cpu or cuda (default cpu)")
    parser.add_argument("--engine-threads", type=validation.integer_argument, default=1,
                        help="threads of the batched engine (default 1)")
    parser.add_argument("--skip-cleanrl", action="store_true", help="leave the CleanRL recipe out (it takes a minute)")
    args = parser.parse_args(argv)
    hidden = tuple(int(width) for width in args.hidden.split(","))
    config = PPOConfig(hidden=hidden, num_envs=args.num_envs, rollout_steps=args.rollout_steps,
                       policy_head=args.policy_head)
    if args.busy:
        threads = None if args.torch_threads in (None, "auto") else validation.integer_argument(args.torch_threads)
        quiet, busy = busy_ratio(config, args.updates, threads)
        print(f"4 players, double-nine; network {hidden}, policy head {args.policy_head}, B={args.num_envs} x "
              f"{args.rollout_steps}; torch threads {'auto' if threads is None else threads}; {args.updates} updates")
        print(f"  quiet            {quiet:>11,.0f} learner steps/s")
        print(f"  one core busy    {busy:>11,.0f} learner steps/s")
        print(f"  ratio busy / quiet {busy / quiet:.2f} (goal >= 0.5)")
        return
    args.torch_threads = 2 if args.torch_threads is None else validation.integer_argument(args.torch_threads)
    torch.set_num_threads(args.torch_threads)
    print(f"4 players, double-nine; network {hidden} tanh, policy head {args.policy_head}, B={args.num_envs} games x "
          f"{args.rollout_steps} steps "
          f"an update ({config.rollout_rows:,} rows), {config.epochs} epochs of {config.minibatches} minibatches; "
          f"torch on {args.torch_threads} thread(s), device {args.device}, engine on {args.engine_threads} thread(s)",
          flush=True)
    trained, engine_share, trainer = trainer_rate(config, args.updates, args.device, args.engine_threads)
    print(f"  dominoes train ppo          {trained:>11,.0f} learner steps/s (the engine's steps: "
          f"{100 * engine_share:.1f}% of the time)", flush=True)
    alone = network_alone_rate(trainer, args.updates)
    print(f"  the network alone           {alone:>11,.0f} rows/s (forward and update on a stored rollout)", flush=True)
    game = engine_rate(threads=args.engine_threads)
    print(f"  VectorDominoes.step_random  {game:>11,.0f} decisions/s (B=4096, {args.engine_threads} thread(s))",
          flush=True)
    line = f"  ratios: trainer / network alone {trained / alone:.2f} (goal >= 0.5)"
    if not args.skip_cleanrl:
        recipe = cleanrl_rate()
        print(f"  CleanRL self-play recipe    {recipe:>11,.0f} learner steps/s (examples/cleanrl_selfplay.py, "
              f"64 games, hidden 256)", flush=True)
        line += f"; trainer / CleanRL recipe {trained / recipe:.1f}x (goal >= 10x)"
    print(line + f"; game / trainer {game / trained:.0f}x")


if __name__ == "__main__":
    main()
