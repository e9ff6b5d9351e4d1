"""sb3-contrib's MaskablePPO collecting from the batched vector env, rated against the baselines.

    python examples/sb3_vector_env.py --seed 0                          # 200,000 steps from 64 games
    python examples/sb3_vector_env.py --steps 16384 --eval-hands 400    # a smoke run
    python examples/sb3_vector_env.py --players 3 --highest 12 --rules mexican_train   # another table
    dominoes evaluate maskable_ppo@runs/sb3_vector_env/model.zip random:3 --hands 2000

Needs the ``sb3`` (or ``examples``) extra. The pieces:

- ``SingleAgentVectorEnv(games, opponents, table)``: that many games on the batched engine (at the
  table of ``--players``, ``--highest`` and ``--rules``: 4 players, double-nine and the rule book
  by default), one learning seat in each (a random seat per game and episode), the other seats
  played inside the batch (random players choose for all their games at once). Rewards, masks
  and the penalty for an illegal move are ``SingleAgentEnv``'s.
- ``SB3VecEnv``: the vector env as SB3's ``VecEnv``, in place of a ``DummyVecEnv`` of single
  envs; MaskablePPO asks it for the masks through ``env_method("action_masks")``.
- ``VecMonitor``: each episode's return, for the progress line.
- The rating (``examples/rating.py``), at the same table: the agent against random players in
  the other seats beside a random player in the same seats and deals, then a table with the
  shipped baselines.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

import torch
from rating import DEFAULT_TABLE, SavedRun, rate
from sb3_contrib import MaskablePPO
from sb3_progress import ProgressLine
from settings_cli import add_run_options, check_run_options
from stable_baselines3.common.vec_env import VecMonitor

from baselines import make_policy
from baselines.adapters.sb3_vec_env import SB3VecEnv
from baselines.command_line.options import count
from dominoes_env import GameConfig, SingleAgentVectorEnv


def train(games: int, steps: int, seed: int, opponents: str = "random", n_steps: int = 64,
          table: GameConfig = DEFAULT_TABLE) -> MaskablePPO:
    """MaskablePPO on `games` games of `table` stepped at once, `n_steps` per game per rollout."""
    env = VecMonitor(SB3VecEnv(SingleAgentVectorEnv(games, opponents, num_players=table)))
    model = MaskablePPO("MlpPolicy", env, n_steps=n_steps, batch_size=512, n_epochs=10, gamma=1.0, ent_coef=0.01,
                        learning_rate=3e-4, policy_kwargs={"net_arch": [256, 256]}, seed=seed, device="cpu")
    model.learn(total_timesteps=steps, callback=ProgressLine())
    return model


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_run_options(parser, 200_000, Path("runs/sb3_vector_env/model.zip"))
    parser.add_argument("--games", type=int, default=64, help="games stepped at once (default 64)")
    parser.add_argument("--n-steps", type=int, default=64, help="steps per game in each rollout (default 64)")
    parser.add_argument("--opponents", default="random", help="the other seats' policy spec (default random)")
    args = parser.parse_args(argv)
    check_run_options(parser, args)
    try:
        count("--games", args.games, 1, 100_000)
        count("--n-steps", args.n_steps, 2, 10**6)
    except ValueError as error:
        parser.error(str(error))
    return args


def main(argv: Sequence[str] | None = None) -> SavedRun:
    """Train, save, load the saved file back as a policy, and rate it."""
    args = parse_args(argv)
    try:
        SingleAgentVectorEnv(1, args.opponents, args.table)  # a bad spec: one line before any training
    except ValueError as error:
        raise SystemExit(f"sb3_vector_env.py: error: --opponents: {error}") from None
    started = time.perf_counter()
    model = train(args.games, args.steps, args.seed, args.opponents, args.n_steps, args.table)
    train_seconds = time.perf_counter() - started
    args.out.parent.mkdir(parents=True, exist_ok=True)
    model.save(args.out)
    print(f"trained {model.num_timesteps:,} steps on {args.games} games in {train_seconds:.0f} s; saved {args.out}",
          flush=True)
    agent = make_policy("maskable_ppo", args.table, checkpoint=str(args.out))  # what `maskable_ppo@FILE` loads
    rating = rate(agent, args.eval_hands, args.rating_seed, table=args.table, bench_mode=args.bench)
    return SavedRun(args.out, model.num_timesteps, train_seconds, rating)


if __name__ == "__main__":
    torch.set_num_threads(1)  # small networks: one thread is faster than several on a shared machine
    main()
