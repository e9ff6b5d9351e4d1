"""Masked PPO with TorchRL on the AEC env (every seat shares one network, self-play), rated against the baselines.

    python examples/torchrl_ppo.py --seed 0                              # 10 x 1,024 steps, then the rating
    python examples/torchrl_ppo.py --iterations 2 --frames-per-batch 256 --eval-hands 48   # a smoke run
    python examples/torchrl_ppo.py --players 3 --highest 12 --rules mexican_train   # another table
    python examples/torchrl_ppo.py --env batched --games 64 --frames-per-batch 8192 --iterations 50   # batched

Needs the ``examples`` extra (torchrl). It trains and rates at the table of ``--players``,
``--highest`` and ``--rules`` (4 players, double-nine and the rule book by default). How the
pieces fit, and why each is there:

- ``PettingZooWrapper(raw_env, use_mask=True, group_map={"players": [...]})``: TorchRL drives the
  turn-based AEC env itself, one move per step. ``use_mask=True`` is compulsory for AEC envs: it
  adds ``("players", "mask")``, True only for the agent to move. All seats sit in one group, so
  one network sees the seats' egocentric observations stacked ``[players, D]``; the wrapper plays
  only the mover's action.
- The env's ``action_mask`` becomes ``("players", "action_mask")`` (bool). For the agents not to
  move the wrapper replaces our all-zeros mask with all ones, so a masked distribution is always
  well defined; their sampled actions are never played, and the update below drops them.
- Rewards: the wrapper reads ``env.rewards`` after every step for every agent, so each seat's
  hand reward appears in the step that ends the hand, usually a step where another seat moved.
  GAE therefore runs over every step for every seat (each has an observation at every step),
  and only the steps where a seat moved are used to train (``mask``).
- ``--env batched``: :class:`baselines.adapters.torchrl.TorchRLVectorEnv`, the batched engine as a
  TorchRL env of batch size ``[games]`` with the same keys (each step plays one move in every game),
  so everything below runs unchanged on a rollout of shape ``[games, steps]``. Its random actions
  obey the mask by themselves, so it needs no ``ActionMask``.
- Transforms: ``ActionMask`` comes first. The wrapper writes each step's legal set into its own
  action spec, but a ``TransformedEnv`` samples random actions (``rand_action``, used by
  ``check_env_specs`` and random collectors) from its own copy of that spec; without
  ``ActionMask`` those actions ignore the mask and the env raises ``IllegalActionError``.
  ``DTypeCastTransform``: the observation is an int8 vector; the networks take float32.
  ``RewardScaling``: minus the pips left (-100..0) divided by 10, so the critic's targets are small.
- The rating (``examples/rating.py``, shared by the library examples): the greedy trained agent,
  wrapped by ``FunctionPolicy``, against random players in the other seats beside a random player
  in the same seats and deals, then a table with the shipped baselines (persistent_line, double,
  greedy), at the table it trained on.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from rating import DEFAULT_TABLE, LoggedRun, rate
from settings_cli import add_table_and_rating_options, check_table_and_rating_options
from tensordict import TensorDict
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.envs import ActionMask, Compose, DTypeCastTransform, RewardScaling, TransformedEnv
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import check_env_specs
from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

import dominoes_env
from baselines.adapters import FunctionPolicy
from baselines.adapters.torchrl import TorchRLVectorEnv
from baselines.command_line.options import count
from dominoes_env import GameConfig

GROUP = "players"  # the one TorchRL group holding every seat
OBSERVATION = (GROUP, "observation", "observation")  # the env's vector (the wrapper moves the mask out)
ACTION_MASK = (GROUP, "action_mask")
MOVER = (GROUP, "mask")  # True for the agent to move at this step
REWARD_SCALE = 0.1

#: PPO's settings. A hand is about 14 decisions per seat with one reward at the end, so
#: nothing is discounted; the entropy bonus keeps the policy from settling early.
HIDDEN = 256  # units in each of the two hidden layers of the actor and of the critic
LEARNING_RATE = 3e-4
EPOCHS = 4  # passes over each batch
MINIBATCH = 256  # decisions per gradient step
GAMMA, LAMBDA = 1.0, 0.95
CLIP_EPSILON, ENTROPY_COEFF, MAX_GRAD_NORM = 0.2, 0.01, 1.0

MAX_ITERATIONS, MAX_FRAMES_PER_BATCH = 100_000, 1_000_000


def make_env(seed: int, table: GameConfig = DEFAULT_TABLE, games: int | None = None) -> TransformedEnv:
    """The env at `table` as a TorchRL env: one group of seats, float32 observations, scaled rewards.
    The AEC env one move at a time, or with `games` the batched engine, one move in each game."""
    if games is None:
        seats = [f"player_{seat}" for seat in range(table.num_players)]
        base = PettingZooWrapper(dominoes_env.raw_env(table), use_mask=True,
                                 group_map={GROUP: seats}, categorical_actions=True, seed=seed)
        masking = [ActionMask(action_key=(GROUP, "action"), mask_key=ACTION_MASK)]  # random actions obey the mask
    else:
        base, masking = TorchRLVectorEnv(games, table, seed=seed), []
    return TransformedEnv(base, Compose(
        *masking,
        DTypeCastTransform(torch.int8, torch.float32, in_keys=[OBSERVATION]),
        RewardScaling(loc=0.0, scale=REWARD_SCALE, in_keys=[(GROUP, "reward")]),
    ))


def make_modules(env: TransformedEnv) -> tuple[ProbabilisticActor, ValueOperator, nn.Module]:
    """The masked categorical actor, the critic, and the bare logits network (for the rating)."""
    observation_size = env.observation_spec[OBSERVATION].shape[-1]
    num_actions = env.full_action_spec[GROUP, "action"].space.n
    logits_net = MLP(in_features=observation_size, out_features=num_actions, num_cells=[HIDDEN, HIDDEN])
    actor = ProbabilisticActor(
        TensorDictModule(logits_net, in_keys=[OBSERVATION], out_keys=[(GROUP, "logits")]),
        in_keys={"logits": (GROUP, "logits"), "mask": ACTION_MASK},
        out_keys=[(GROUP, "action")],
        distribution_class=MaskedCategorical,  # illegal moves get probability 0
        return_log_prob=True,
        log_prob_key=(GROUP, "action_log_prob"),
    )
    critic = ValueOperator(MLP(in_features=observation_size, out_features=1, num_cells=[HIDDEN, HIDDEN]),
                           in_keys=[OBSERVATION], out_keys=[(GROUP, "state_value")])
    return actor, critic, logits_net


def make_loss(actor: ProbabilisticActor, critic: ValueOperator) -> ClipPPOLoss:
    """ClipPPOLoss and its GAE, on the group's nested keys."""
    loss = ClipPPOLoss(actor, critic, clip_epsilon=CLIP_EPSILON, entropy_coeff=ENTROPY_COEFF,
                       normalize_advantage=True)
    loss.make_value_estimator(GAE, gamma=GAMMA, lmbda=LAMBDA, value_network=critic)
    loss.set_keys(  # after make_value_estimator: set_keys passes the keys on to the estimator too
        action=(GROUP, "action"), sample_log_prob=(GROUP, "action_log_prob"), value=(GROUP, "state_value"),
        advantage=(GROUP, "advantage"), value_target=(GROUP, "value_target"), reward=(GROUP, "reward"),
        done=(GROUP, "done"), terminated=(GROUP, "terminated"))
    return loss


def decisions_played(batch: TensorDict) -> TensorDict:
    """The (step, seat) pairs where that seat moved: the only actions the env played."""
    played = batch[GROUP][batch[MOVER]]
    return TensorDict({GROUP: played}, batch_size=played.batch_size)


def greedy_predict(logits_net: nn.Module) -> Callable[[np.ndarray, np.ndarray], int]:
    """predict(observation, action_mask) -> the most probable legal action, for FunctionPolicy."""
    def predict(observation: np.ndarray, action_mask: np.ndarray) -> int:
        with torch.no_grad():
            logits = logits_net(torch.as_tensor(observation, dtype=torch.float32))
        logits[torch.as_tensor(action_mask) == 0] = -math.inf
        return int(logits.argmax())
    return predict


@dataclass(frozen=True)
class IterationLog:
    """What one collect-and-update iteration measured."""

    frames: int  # env steps collected
    hands: int  # hands finished in the batch
    mean_pips: float  # mean pips left per seat in those hands (self-play); nan when none finished
    loss_objective: float
    loss_critic: float
    loss_entropy: float
    seconds: float  # since training started


def train(env: TransformedEnv, iterations: int, frames_per_batch: int) -> tuple[list[IterationLog], nn.Module]:
    """Collect `frames_per_batch` steps with the current policy, then a few epochs of PPO on them."""
    actor, critic, logits_net = make_modules(env)
    loss = make_loss(actor, critic)
    optimiser = torch.optim.Adam(loss.parameters(), lr=LEARNING_RATE)
    collector = Collector(env, actor, frames_per_batch=frames_per_batch, total_frames=frames_per_batch * iterations,
                          auto_register_policy_transforms=False)  # not recurrent: the env needs nothing added
    logs = []
    started = time.perf_counter()
    for batch in collector:
        with torch.no_grad():  # GAE over every step and every seat (see the module docstring)
            loss.value_estimator(batch, params=loss.critic_network_params,
                                 target_params=loss.target_critic_network_params)
        decisions = decisions_played(batch)
        terms = []
        for _ in range(EPOCHS):
            for minibatch in decisions[torch.randperm(decisions.shape[0])].split(MINIBATCH):
                out = loss(minibatch)
                total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
                optimiser.zero_grad()
                total.backward()
                nn.utils.clip_grad_norm_(loss.parameters(), MAX_GRAD_NORM)
                optimiser.step()
                terms.append([out[key].item() for key in ("loss_objective", "loss_critic", "loss_entropy")])
        collector.update_policy_weights_()
        logs.append(_log(batch, np.mean(terms, axis=0), time.perf_counter() - started))
        print(_log_line(len(logs), logs[-1]), flush=True)
    collector.shutdown()
    return logs, logits_net


def _log(batch: TensorDict, losses: np.ndarray, seconds: float) -> IterationLog:
    ended = batch["next", "done"].squeeze(-1)
    pips = -batch["next", GROUP, "reward"][ended] / REWARD_SCALE  # [hands, seats, 1]
    return IterationLog(frames=batch.numel(), hands=int(ended.sum()),
                        mean_pips=float(pips.mean()) if ended.any() else math.nan,
                        loss_objective=float(losses[0]), loss_critic=float(losses[1]),
                        loss_entropy=float(losses[2]), seconds=seconds)


def _log_line(iteration: int, log: IterationLog) -> str:
    return (f"iteration {iteration}: {log.frames} steps, {log.hands} hands, self-play mean pips {log.mean_pips:.2f}; "
            f"losses: objective {log.loss_objective:+.4f}, critic {log.loss_critic:.4f}, "
            f"entropy {log.loss_entropy:+.4f} ({log.seconds:.0f} s)")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_table_and_rating_options(parser)  # the table as the dominoes commands take it, --seed, --eval-hands ...
    parser.add_argument("--iterations", type=int, default=10, help="collect-and-update iterations (default 10)")
    parser.add_argument("--frames-per-batch", type=int, default=1024,
                        help="moves collected per iteration, over all games (default 1024: about 18 hands)")
    parser.add_argument("--env", choices=("aec", "batched"), default="aec",
                        help="aec: PettingZooWrapper over the AEC env, one move a step (default); batched: "
                             "TorchRLVectorEnv, one move in each of --games games a step")
    parser.add_argument("--games", type=int, default=64, help="games stepped at once with --env batched (default 64)")
    args = parser.parse_args(argv)
    check_table_and_rating_options(parser, args)
    try:
        count("--iterations", args.iterations, 1, MAX_ITERATIONS)
        count("--frames-per-batch", args.frames_per_batch, 1, MAX_FRAMES_PER_BATCH)
        count("--games", args.games, 1, MAX_FRAMES_PER_BATCH)
        if args.env == "batched" and args.frames_per_batch % args.games:
            raise ValueError(f"--frames-per-batch ({args.frames_per_batch}) must be a multiple of --games "
                             f"({args.games}) with --env batched: each step makes one move in every game")
    except ValueError as error:
        parser.error(str(error))
    return args


def main(argv: Sequence[str] | None = None) -> LoggedRun:
    """Check the env's specs, train, then rate the greedy trained agent."""
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    env = make_env(args.seed, args.table, args.games if args.env == "batched" else None)
    check_env_specs(env, seed=args.seed)  # raises if a reset or a step breaks the declared specs
    print("check_env_specs: passed", flush=True)
    logs, logits_net = train(env, args.iterations, args.frames_per_batch)
    label = f"torchrl_ppo({sum(log.frames for log in logs)} steps)"
    agent = FunctionPolicy(args.table, predict=greedy_predict(logits_net), label=label, one_hand=True)
    return LoggedRun(tuple(logs), label, rate(agent, args.eval_hands, args.rating_seed, table=args.table,
                                                   bench_mode=args.bench))


if __name__ == "__main__":
    torch.set_num_threads(1)  # small networks: one thread is faster than several on a shared machine
    main()
