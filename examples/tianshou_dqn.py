"""Tianshou 2.0's DQN on the single-agent view against random players, rated against the baselines.

    python examples/tianshou_dqn.py --seed 0                     # 20,000 steps, then 2,000 hands of rating
    python examples/tianshou_dqn.py --steps 5000 --eval-hands 400    # a smoke run
    python examples/tianshou_dqn.py --players 3 --highest 12 --rules mexican_train   # another table
    python examples/tianshou_dqn.py --opponents self             # self-play: its own network in the other seats

Needs the ``examples`` extra (tianshou). It trains and rates at the table of ``--players``,
``--highest`` and ``--rules`` (4 players, double-nine and the rule book by default); the saved
file records that table. How the pieces fit, and why each is there:

- ``SingleAgentEnv(observation="dict")``, not Tianshou's PettingZoo path: Tianshou's
  ``PettingZooEnv`` stores one transition per step, for the agent that moved, and stops at the
  first termination, so the end-of-hand reward lands on the transition of whichever seat moved
  last (another seat's, in about 75% of seat-hands). The single-agent view pays the learner,
  at its own step, everything it earned until its next move, whoever ended the hand.
- :class:`TianshouMask`: Tianshou's Q-learning policies mask actions through an observation
  with ``obs`` and ``mask`` entries (``batch.obs.mask``, True = legal): the argmax, the
  epsilon-greedy exploration and Double DQN's choice of the next action all respect it. Our
  dict observation is ``{"observation": int8 vector, "action_mask": int8}``; the wrapper renames
  the keys and makes the mask boolean. It also keeps ``info`` to a fixed set of keys: Tianshou
  stacks the infos of its vector envs into arrays, and ours gains keys when a hand ends
  (``went_out`` is None for a blocked hand), which a stacked array cannot hold.
- ``--opponents self``: self-play that credits every seat its own reward. The other seats play
  the Q-network being trained (:class:`LearnerAsOpponent`, greedy, the live weights), and only
  the learner's seat stores transitions, so each reward is the learner's own; Tianshou's
  ``MultiAgentPolicyManager`` path would store every seat's end-of-hand reward on the last mover's
  transition instead.
- Rewards are minus the pips left (about -15 per hand, down to -100): scaled by 0.1 for the
  Q-network's regression (``REWARD_SCALE``); the ranking of moves is unchanged.
- Tianshou draws exploration and replay samples from NumPy's global generator, so the example
  seeds it (and torch's) for repeatable runs.
- :class:`TianshouDQNPolicy`: the saved Q-network, greedy over legal moves, as a
  ``baselines.Policy`` named by its import path, so that ``dominoes evaluate`` and the league
  can build it afresh in their workers (``baselines.adapters.FunctionPolicy`` wraps a model in
  memory, for one process). The rating (``examples/rating.py``) plays it as the command line
  makes it, at the table it was trained on.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import torch
from rating import SavedRun, rate
from settings_cli import parse_run
from tianshou.algorithm import DQN
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Batch, Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

from baselines import Policy, make_policy
from baselines.adapters.tianshou import TianshouMask
from baselines.learning.options import bounded
from baselines.policies.policy import SeedLike
from dominoes_env import SingleAgentEnv, make_config
from dominoes_env.core.config import GameConfig, describe_table
from dominoes_env.core.observation import one_hand_part

TABLE = make_config(4, 9)  # the table the Q-network learns by default: 4 players, double-nine, no table rules
REWARD_SCALE = 0.1
POLICY_NAME = "tianshou_dqn.TianshouDQNPolicy"  # the import path of the policy class below
DEFAULT_STEPS = 20_000
SELF = "self"  # --opponents self: the learner's own network in the other seats


@dataclass(frozen=True)
class Settings:
    """DQN's settings (each one is a command-line option: ``--learning-rate 1e-3``).

    Tuned for a few minutes of training; docs/integrations/tianshou.md lists what was tried.
    """

    hidden_sizes: tuple[int, ...] = field(default=(256, 256), metadata=bounded("the Q-network's hidden layers",
                                                                               1, 65536, many=True))
    learning_rate: float = field(default=3e-4, metadata=bounded("Adam's learning rate", 1e-7, 1.0))
    gamma: float = field(default=1.0, metadata=bounded("discount (1: one reward per hand, nothing to discount)",
                                                       0.0, 1.0))
    n_step: int = field(default=3, metadata=bounded("n-step returns: carry the end-of-hand reward back faster",
                                                   1, 100))
    target_update_freq: int = field(default=320, metadata=bounded("gradient steps between target-network copies",
                                                                 0, 10**6))
    batch_size: int = field(default=64, metadata=bounded("transitions per gradient step", 1, 10**6))
    buffer_size: int = field(default=20_000, metadata=bounded("replay buffer (transitions, all envs)", 100, 10**7))
    epsilon: float = field(default=0.1, metadata=bounded("share of random legal moves while collecting", 0.0, 1.0))
    train_envs: int = field(default=8, metadata=bounded("envs collecting side by side", 1, 256))
    steps_per_collect: int = field(default=16, metadata=bounded("env steps between two updates", 1, 10**6))
    updates_per_step: float = field(default=0.125, metadata=bounded("gradient steps per env step collected",
                                                                   0.001, 100.0))


def make_env(table: GameConfig = TABLE, opponents: Any = "random") -> gymnasium.Env:
    """The learner's view of `table` (a random seat each hand; random opponents unless told), as Tianshou reads it."""
    env = TianshouMask(SingleAgentEnv(opponents=opponents, num_players=table, observation="dict"))
    return gymnasium.wrappers.TransformReward(env, lambda reward: REWARD_SCALE * reward)


def greedy_move(policy: DiscreteQLearningPolicy, observation: np.ndarray, action_mask: np.ndarray) -> int:
    """The legal move of highest Q-value. Tianshou's policy takes a batch whose ``obs`` holds the
    vector and its mask, as its collector builds it; here a batch of one."""
    batch = Batch(obs=Batch(obs=observation[None], mask=action_mask[None].astype(bool)), info=None)
    with torch.no_grad():
        return int(policy(batch).act[0])


class LearnerAsOpponent(Policy):
    """The Q-network being trained, greedy, in the other seats: self-play through the single-agent
    view. It holds the live policy (no copy), so every update reaches the opponents at once, and
    each seat's reward is still its own: only the learner's seat stores transitions."""

    def __init__(self, table: GameConfig, policy: DiscreteQLearningPolicy) -> None:
        super().__init__(table)
        self.policy = policy

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return greedy_move(self.policy, observation, action_mask)


def make_q_policy(settings: Settings, table: GameConfig = TABLE) -> DiscreteQLearningPolicy:
    """The Q-network (an MLP over the int8 vector, one output per action) and its masked greedy policy."""
    env = make_env(table)
    net = Net(state_shape=env.observation_space["obs"].shape, action_shape=int(env.action_space.n),
              hidden_sizes=settings.hidden_sizes)
    return DiscreteQLearningPolicy(model=net, action_space=env.action_space)


def train(steps: int, seed: int, settings: Settings = Settings(), table: GameConfig = TABLE,
          opponents: str = "random") -> DiscreteQLearningPolicy:
    """Double DQN with n-step returns for `steps` env steps at `table` against `opponents` (a spec,
    or ``"self"``: :class:`LearnerAsOpponent` in every other seat); returns the trained policy.

    A first batch of ``batch_size x train_envs`` steps fills the replay buffer before the
    first update, as Tianshou's own examples do; it is not counted in `steps`.
    """
    np.random.seed(seed)  # Tianshou's exploration and replay sampling use NumPy's global generator
    torch.manual_seed(seed)
    policy = make_q_policy(settings, table)
    seated: Any = [LearnerAsOpponent(table, policy)] * (table.num_players - 1) if opponents == SELF else opponents
    envs = DummyVectorEnv([partial(make_env, table, seated) for _ in range(settings.train_envs)])  # in this process
    envs.seed(seed)
    policy.set_eps_training(settings.epsilon)
    algorithm = DQN(policy=policy, optim=AdamOptimizerFactory(lr=settings.learning_rate), gamma=settings.gamma,
                    n_step_return_horizon=settings.n_step, target_update_freq=settings.target_update_freq)
    collector = Collector(algorithm, envs, VectorReplayBuffer(settings.buffer_size, len(envs)), exploration_noise=True)
    collector.reset()
    collector.collect(n_step=settings.batch_size * settings.train_envs)  # a first batch to sample from
    algorithm.run_training(OffPolicyTrainerParams(
        training_collector=collector, max_epochs=1, epoch_num_steps=steps,
        collection_step_num_env_steps=settings.steps_per_collect,
        update_step_num_gradient_steps_per_sample=settings.updates_per_step, batch_size=settings.batch_size,
        test_collector=None, verbose=False, show_progress=False))
    return policy


def save(policy: DiscreteQLearningPolicy, settings: Settings, path: Path, table: GameConfig = TABLE) -> None:
    """The Q-network's weights, the shape that holds them and the table it learned, in one file
    (``torch.load`` reads it back)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"hidden_sizes": settings.hidden_sizes, "table": table.options(), "model": policy.model.state_dict()},
               path)


def load(path: Path) -> DiscreteQLearningPolicy:
    """A policy saved by :func:`save`, ready to act (evaluation mode, no exploration)."""
    return load_with_table(path)[0]


def load_with_table(path: Path) -> tuple[DiscreteQLearningPolicy, GameConfig]:
    """A policy saved by :func:`save` and the table it learned (4 players, double-nine in a file
    that names none)."""
    saved = torch.load(path, weights_only=True)  # tensors and plain values only: no code runs
    table = make_config(**saved["table"]) if "table" in saved else TABLE
    policy = make_q_policy(Settings(hidden_sizes=tuple(saved["hidden_sizes"])), table)
    policy.model.load_state_dict(saved["model"])
    policy.eval()
    return policy, table


class TianshouDQNPolicy(Policy):
    """A saved Q-network as a policy of every command, named by its import path::

        PYTHONPATH=examples dominoes evaluate tianshou_dqn.TianshouDQNPolicy@runs/tianshou_dqn/q_network.pt random:3

    It plays the legal move of highest Q-value. Tianshou's ``compute_action`` takes one array
    observation, not a dict, so the batch of one observation and its mask is built here, as
    the collector builds it. The file is read once per version (the league makes a fresh
    policy for every game). The file records the table the network learned, and the policy
    refuses any other (a network trained with ``--players 3 --highest 12 --rules mexican_train``
    plays with ``random:2`` and those options).
    """

    def __init__(self, num_players: int | GameConfig = 4, highest_double: int = 9, seed: SeedLike = None,
                 checkpoint: str | None = None) -> None:
        super().__init__(num_players, highest_double, seed)
        path = Path(checkpoint).expanduser().resolve() if checkpoint is not None else None
        if path is None or not path.is_file():
            raise ValueError(f"{POLICY_NAME} needs checkpoint=a file saved by examples/tianshou_dqn.py, "
                             f"got {checkpoint!r}")
        self.policy, table = _load_cached(str(path), path.stat().st_mtime_ns)
        if self.config != table:
            raise ValueError(f"the Q-network was trained for {describe_table(table)}, "
                             f"not {describe_table(self.config)}")

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        # games of several hands: the network sees the one-hand part, without the scores
        return greedy_move(self.policy, one_hand_part(self.config, observation), action_mask)


@lru_cache(maxsize=4)
def _load_cached(path: str, modified_ns: int) -> tuple[DiscreteQLearningPolicy, GameConfig]:
    return load_with_table(Path(path))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    def add_opponents(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--opponents", default="random",
                            help=f"the other seats: a policy spec for each (default random), or {SELF!r}: the "
                                 f"Q-network being trained, greedy (self-play)")

    parser, args = parse_run(argv, __doc__.split("\n")[0], DEFAULT_STEPS, Path("runs/tianshou_dqn/q_network.pt"),
                             Settings, add_opponents)
    if args.opponents != SELF:
        try:
            SingleAgentEnv(args.opponents, args.table)  # a bad spec: one line before any training
        except ValueError as error:
            parser.error(f"--opponents: {error}")
    return args


def main(argv: Sequence[str] | None = None) -> SavedRun:
    """Train, save, load the saved file back, and rate the greedy Q-network."""
    args = parse_args(argv)
    started = time.perf_counter()
    policy = train(args.steps, args.seed, args.settings, args.table, args.opponents)
    train_seconds = time.perf_counter() - started
    save(policy, args.settings, args.out, args.table)
    print(f"trained {args.steps:,} steps in {train_seconds:.0f} s; saved {args.out}", flush=True)
    agent = make_policy(POLICY_NAME, args.table, checkpoint=str(args.out))  # as the command line makes it
    rating = rate(agent, args.eval_hands, args.rating_seed, table=args.table, bench_mode=args.bench)
    return SavedRun(args.out, args.steps, train_seconds, rating)


if __name__ == "__main__":
    torch.set_num_threads(1)  # small networks: one thread is faster than several on a shared machine
    main()
