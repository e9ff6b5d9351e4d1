"""sb3-contrib's MaskablePPO on the single-agent view against random players, rated against the baselines.

    python examples/sb3_maskable_ppo.py --seed 0                    # 100,000 steps, then 2,000 hands of rating
    python examples/sb3_maskable_ppo.py --steps 8192 --eval-hands 400   # a smoke run
    python examples/sb3_maskable_ppo.py --players 3 --highest 12 --rules mexican_train   # another table
    dominoes evaluate maskable_ppo@runs/sb3_maskable_ppo/model.zip random:3 --hands 2000

Needs the ``sb3`` (or ``examples``) extra. How the pieces fit, and why each is there:

- ``SingleAgentEnv`` (the table of ``--players``, ``--highest`` and ``--rules``: 4 players,
  double-nine and the rule book by default; one hand per episode): the learner's seat is drawn
  at every reset, because the seat decides who holds the short hand and who moves first; a
  fixed seat would flatter or handicap the learner. Between two of its moves the other seats
  are played by random players, and the reward of a step is everything the learner earned in
  between: minus its pips left when the hand ends, whoever ended it. One seat, one stream of
  steps and rewards: what a single-agent learner expects.
- Masks: MaskablePPO calls the env's ``action_masks()`` before every step (through the
  ``Monitor`` wrapper, via ``get_wrapper_attr``), so it never plays an illegal move and its
  probabilities are spread over legal moves only. The saved model needs the mask again to act:
  the ``maskable_ppo`` policy passes it (``maskable_ppo@model.zip`` on the command line).
- ``Monitor`` records each episode's return, which the progress line below prints.
- The rating (``examples/rating.py``), at the same table: the agent's pips per hand against random
  players in the other seats, beside a random player's in the same seats and deals, then a table
  with the shipped baselines (persistent_line, double, greedy). A model trained at another table
  plays at that table only: ``dominoes evaluate maskable_ppo@FILE random:2 --players 3 --highest 12
  --rules mexican_train``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from rating import DEFAULT_TABLE, SavedRun, rate
from sb3_contrib import MaskablePPO
from sb3_progress import ProgressLine
from settings_cli import parse_run
from stable_baselines3.common.monitor import Monitor

from baselines import make_policy
from baselines.learning.options import bounded
from dominoes_env import GameConfig, SingleAgentEnv


@dataclass(frozen=True)
class PPOSettings:
    """MaskablePPO's settings (each one is a command-line option: ``--batch-size 64``).

    Tuned within the default 100,000-step budget; docs/integrations/stable_baselines3.md lists
    what was tried and what each gave. Hands are short (about 14 decisions, one reward at the
    end), so nothing is discounted; wider layers, bigger minibatches and an entropy bonus beat
    Stable-Baselines3's defaults (64 x 64, 64, no bonus).
    """

    learning_rate: float = field(default=3e-4, metadata=bounded("Adam's learning rate", 1e-7, 1.0))
    n_steps: int = field(default=2048, metadata=bounded("env steps per rollout", 2, 10**6))
    batch_size: int = field(default=256, metadata=bounded("minibatch size", 2, 10**6))
    n_epochs: int = field(default=10, metadata=bounded("passes over each rollout", 1, 1000))
    gamma: float = field(default=1.0, metadata=bounded("discount (1: one reward per hand, nothing to discount)",
                                                       0.0, 1.0))
    gae_lambda: float = field(default=0.95, metadata=bounded("GAE's lambda", 0.0, 1.0))
    ent_coef: float = field(default=0.01, metadata=bounded("entropy bonus", 0.0, 1.0))
    net_arch: tuple[int, ...] = field(default=(256, 256), metadata=bounded(
        "hidden layers of the policy and of the (separate) value network", 1, 65536, many=True))

    def model_arguments(self) -> dict[str, Any]:
        """The keyword arguments of ``MaskablePPO(...)``."""
        arguments = {name: value for name, value in asdict(self).items() if name != "net_arch"}
        return {**arguments, "policy_kwargs": {"net_arch": list(self.net_arch)}}


DEFAULT_STEPS = 100_000


def make_env(table: GameConfig = DEFAULT_TABLE) -> Monitor:
    """The learner's view of `table`: a random seat each hand, random players in the other seats."""
    return Monitor(SingleAgentEnv(opponents="random", num_players=table))


def train(steps: int, seed: int, settings: PPOSettings = PPOSettings(), table: GameConfig = DEFAULT_TABLE
          ) -> MaskablePPO:
    """MaskablePPO for `steps` env steps at `table`, seeded for repeatable runs."""
    model = MaskablePPO("MlpPolicy", make_env(table), seed=seed, device="cpu", verbose=0, **settings.model_arguments())
    model.learn(total_timesteps=steps, callback=ProgressLine())
    return model


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    return parse_run(argv, __doc__.split("\n")[0], DEFAULT_STEPS, Path("runs/sb3_maskable_ppo/model.zip"),
                     PPOSettings)[1]


def main(argv: Sequence[str] | None = None) -> SavedRun:
    """Train, save, load the saved file back as a policy, and rate it."""
    args = parse_args(argv)
    started = time.perf_counter()
    model = train(args.steps, args.seed, args.settings, args.table)
    train_seconds = time.perf_counter() - started
    args.out.parent.mkdir(parents=True, exist_ok=True)
    model.save(args.out)
    print(f"trained {args.steps:,} steps in {train_seconds:.0f} s; saved {args.out}", flush=True)
    agent = make_policy("maskable_ppo", args.table, checkpoint=str(args.out))  # what `maskable_ppo@FILE` loads
    rating = rate(agent, args.eval_hands, args.rating_seed, table=args.table, bench_mode=args.bench)
    return SavedRun(args.out, args.steps, train_seconds, rating)


if __name__ == "__main__":
    torch.set_num_threads(1)  # small networks: one thread is faster than several on a shared machine
    main()
