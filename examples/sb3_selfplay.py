"""Self-play with sb3-contrib's MaskablePPO: an opponent pool of shipped players and the learner's
own past snapshots, drawn per game in the batched vector env; rated against the shipped players.

    python examples/sb3_selfplay.py --seed 0                               # 2,000,000 steps
    python examples/sb3_selfplay.py --steps 32768 --snapshot-every 8192 --eval-hands 400   # a smoke run
    dominoes evaluate maskable_ppo@runs/sb3_selfplay/model.zip td_lambda:3 --hands 2000

Needs the ``sb3`` (or ``examples``) extra. The pieces:

- ``OpponentPool(--members, sampling=--sampling)``: who the learner meets. At every new game of
  every slot the vector env draws one member per other seat from it
  (``pool.opponents(num_players)``), and reports the game's result back: against each member
  seated, the learner won (fewer pips), drew or lost. With ``prioritised`` sampling (AlphaStar's
  prioritised fictitious self-play, the default here) the members the learner beats least are
  met most.
- :class:`SnapshotIntoPool`: every ``--snapshot-every`` steps the model is saved to
  ``generation_K.zip`` beside ``--out`` and added to the pool by its spec
  (``maskable_ppo@.../generation_K.zip``): a frozen past self, loaded from its file, that later
  training cannot change. The pool (members and the learner's record against each) is saved to
  ``pool.json`` beside the model.
- ``SingleAgentVectorEnv`` + ``SB3VecEnv`` + ``VecMonitor``: as in ``examples/sb3_vector_env.py``.
- The end: the pool's record, the rating (``examples/rating.py``: against random players and
  the baselines), and the agent at a table of three td_lambda, its pips minus theirs.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

import torch
from rating import DEFAULT_TABLE, SelfPlayRun, margin_against, rate
from sb3_contrib import MaskablePPO
from sb3_progress import ProgressLine
from settings_cli import add_run_options, add_self_play_options, check_run_options, read_self_play_options
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.vec_env import VecMonitor

from baselines import OpponentPool, make_policy
from baselines.adapters.sb3_vec_env import SB3VecEnv
from dominoes_env import GameConfig, SingleAgentVectorEnv

DEFAULT_STEPS = 2_000_000


class SnapshotIntoPool(BaseCallback):
    """Every `every` steps (checked at the end of each rollout): save the model as the next
    generation in `directory` and add it to `pool` by its spec, a frozen copy loaded from the file."""

    def __init__(self, pool: OpponentPool, every: int, directory: Path) -> None:
        super().__init__()
        self.pool, self.every, self.directory = pool, every, directory
        self.generation, self.last = 0, 0

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        if self.num_timesteps - self.last < self.every:
            return
        self.generation += 1
        self.last = self.num_timesteps
        path = self.directory / f"generation_{self.generation}.zip"
        self.model.save(path)
        self.pool.add(f"maskable_ppo@{path}", name=f"generation {self.generation}")


def train(pool: OpponentPool, steps: int, seed: int, games: int, snapshot_every: int, directory: Path,
          table: GameConfig = DEFAULT_TABLE) -> MaskablePPO:
    """MaskablePPO on `games` games whose opponents are drawn from `pool`, snapshots added as it trains."""
    env = VecMonitor(SB3VecEnv(SingleAgentVectorEnv(games, pool.opponents(table.num_players), num_players=table)))
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=512, n_epochs=10, gamma=1.0, ent_coef=0.01,
                        learning_rate=3e-4, policy_kwargs={"net_arch": [256, 256]}, seed=seed, device="cpu")
    model.learn(total_timesteps=steps, callback=CallbackList([ProgressLine(), SnapshotIntoPool(pool, snapshot_every,
                                                                                                  directory)]))
    return model


def record_table(pool: OpponentPool) -> str:
    """The learner's record against each member, as the env reported it."""
    rows = [f"| {name} | {games} | {wins / games:.1%} |" if games else f"| {name} | 0 | |"
            for name, (wins, games) in pool.record().items()]
    return "\n".join(["| member | games met | learner won (ties half) |", "|---|---:|---:|", *rows])


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_run_options(parser, DEFAULT_STEPS, Path("runs/sb3_selfplay/model.zip"))
    add_self_play_options(parser)
    args = parser.parse_args(argv)
    check_run_options(parser, args)
    read_self_play_options(parser, args)
    return args


def main(argv: Sequence[str] | None = None) -> SelfPlayRun:
    """Train against the pool, save the model and the pool, load the model back, and rate it."""
    args = parse_args(argv)
    steps, train_seconds = 0, 0.0
    if not args.rate_only:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        model = train(args.pool, args.steps, args.seed, args.games, args.snapshot_every, args.out.parent, args.table)
        train_seconds, steps = time.perf_counter() - started, model.num_timesteps
        model.save(args.out)
        args.pool.save(args.out.parent / "pool.json")
        print(f"trained {steps:,} steps on {args.games} games in {train_seconds:.0f} s; saved {args.out} and "
              f"{args.out.parent / 'pool.json'}\n\n## the pool\n\n{record_table(args.pool)}", flush=True)
    elif not args.out.is_file():
        raise SystemExit(f"sb3_selfplay.py: error: --rate-only: no model saved at {args.out}")
    try:
        agent = make_policy("maskable_ppo", args.table, checkpoint=str(args.out))  # what `maskable_ppo@FILE` loads
    except ValueError as error:  # a damaged file, or one for another table
        raise SystemExit(f"sb3_selfplay.py: error: --out: {error}") from None
    rating = rate(agent, args.eval_hands, args.rating_seed, table=args.table, bench_mode=args.bench)
    margin = margin_against(agent, "td_lambda", args.eval_hands, args.rating_seed, args.table)
    return SelfPlayRun(args.out, args.pool, steps, train_seconds, rating, margin)


if __name__ == "__main__":
    torch.set_num_threads(1)  # small networks: one thread is faster than several on a shared machine
    main()
