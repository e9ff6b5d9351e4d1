"""Self-play with a CleanRL-style masked PPO on ``gymnasium.make_vec``: one file, plain torch, an
opponent pool of shipped players and frozen past selves; rated against the shipped players.

    python examples/cleanrl_selfplay.py --seed 0                                # 2,000,000 steps
    python examples/cleanrl_selfplay.py --steps 32768 --snapshot-every 8192 --eval-hands 400   # a smoke run

Needs torch (the ``torch`` or ``examples`` extra). The loop is CleanRL's PPO, written out:

- ``gymnasium.make_vec("dominoes_env/Dominoes-v0", num_envs=B, opponents=pool.opponents(n))``:
  B games on the batched engine, one learning seat in each; every new game draws its other
  seats from the pool, and reports how the learner fared against each member it met.
- Rollouts of ``--rollout-steps`` steps in every game; masked logits (illegal moves get
  probability 0) from the env's ``action_masks()``; GAE with gamma 1 (a hand pays once, at its
  end) and lambda 0.95. The env deals a finished game anew in the same step (Gymnasium's
  same-step autoreset), so a step with ``terminated`` bootstraps nothing.
- :class:`FrozenAgent`: every ``--snapshot-every`` steps a deep copy of the actor joins the pool
  (greedy over legal moves, ``act_batch`` so it plays all its games at once). Sampling is
  prioritised (AlphaStar's PFSP) by default: the members the learner beats least are met most.
- The end: the actor saved (a torch state dict with the table), loaded back as a
  ``FunctionPolicy`` and rated (``examples/rating.py``), then the agent at a table of three
  td_lambda, its pips minus theirs.
"""

from __future__ import annotations

import argparse
import copy
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import gymnasium
import numpy as np
import torch
from rating import DEFAULT_TABLE, SelfPlayRun, margin_against, rate
from settings_cli import add_run_options, add_self_play_options, check_run_options, read_self_play_options
from torch import nn

import dominoes_env  # noqa: F401  (registers the env ids)
from baselines import OpponentPool
from baselines.adapters import FunctionPolicy
from baselines.command_line.options import count
from dominoes_env import GameConfig, make_config
from dominoes_env.core.config import describe_table

DEFAULT_STEPS = 2_000_000
HIDDEN = 256
LEARNING_RATE, EPOCHS, MINIBATCHES = 2.5e-4, 4, 4
GAMMA, LAMBDA = 1.0, 0.95
CLIP, ENTROPY, VALUE, MAX_GRAD_NORM = 0.2, 0.01, 0.5, 0.5
REWARD_SCALE = 0.1  # minus the pips left, -100..0, to about -10..0 for the critic


def mlp(inputs: int, outputs: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(inputs, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, HIDDEN), nn.Tanh(),
                         nn.Linear(HIDDEN, outputs))


class Agent(nn.Module):
    """An actor (logits over every action) and a critic over the observation vector."""

    def __init__(self, observation_size: int, num_actions: int) -> None:
        super().__init__()
        self.actor, self.critic = mlp(observation_size, num_actions), mlp(observation_size, 1)

    def masked_logits(self, observations: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
        return self.actor(observations).masked_fill(~masks, -1e9)

    def act(self, observations: torch.Tensor, masks: torch.Tensor, actions: torch.Tensor | None = None
            ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Sampled (or given) actions, their log-probabilities, the entropy and the value."""
        distribution = torch.distributions.Categorical(logits=self.masked_logits(observations, masks))
        if actions is None:
            actions = distribution.sample()
        return actions, distribution.log_prob(actions), distribution.entropy(), self.critic(observations).squeeze(-1)


class FrozenAgent:
    """A past actor as a pool member: a deep copy (training goes on without it), greedy over legal moves."""

    def __init__(self, actor: nn.Module, label: str) -> None:
        self.actor, self.label = copy.deepcopy(actor), label

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits = self.actor(torch.as_tensor(observations, dtype=torch.float32))
        return logits.masked_fill(~torch.as_tensor(action_masks, dtype=torch.bool), -math.inf).argmax(-1).numpy()


@dataclass
class Rollout:
    """One rollout: T steps in each of B games."""

    observations: torch.Tensor  # [T, B, D] float32
    masks: torch.Tensor  # [T, B, A] bool
    actions: torch.Tensor  # [T, B]
    log_probs: torch.Tensor
    rewards: torch.Tensor
    ended: torch.Tensor  # the game ended at this step (float)
    values: torch.Tensor


def collect(envs: gymnasium.vector.VectorEnv, agent: Agent, observation: np.ndarray, steps: int,
            finished: list[float]) -> tuple[Rollout, np.ndarray]:
    """`steps` steps in every game with the current policy; the finished games' returns go to `finished`."""
    columns: dict[str, list[torch.Tensor]] = {name: [] for name in Rollout.__dataclass_fields__}
    for _ in range(steps):
        observations = torch.as_tensor(observation, dtype=torch.float32)
        masks = torch.as_tensor(envs.action_masks())
        with torch.no_grad():
            actions, log_probs, _, values = agent.act(observations, masks)
        observation, rewards, terminated, truncated, _ = envs.step(actions.numpy())
        ended = terminated | truncated
        finished += rewards[ended].tolist()
        for name, value in (("observations", observations), ("masks", masks), ("actions", actions),
                            ("log_probs", log_probs), ("rewards", torch.as_tensor(rewards * REWARD_SCALE)),
                            ("ended", torch.as_tensor(ended, dtype=torch.float32)), ("values", values)):
            columns[name].append(value)
    return Rollout(**{name: torch.stack(values) for name, values in columns.items()}), observation


def advantages(rollout: Rollout, last_values: torch.Tensor) -> torch.Tensor:
    """GAE: a step that ended its game bootstraps nothing (the next observation is a new game's)."""
    steps = rollout.rewards.shape[0]
    result = torch.zeros_like(rollout.rewards)
    running = torch.zeros_like(last_values)
    for t in reversed(range(steps)):
        following = last_values if t == steps - 1 else rollout.values[t + 1]
        going_on = 1.0 - rollout.ended[t]
        delta = rollout.rewards[t] + GAMMA * following * going_on - rollout.values[t]
        running = delta + GAMMA * LAMBDA * going_on * running
        result[t] = running
    return result


def update(agent: Agent, optimiser: torch.optim.Optimizer, rollout: Rollout, advantage: torch.Tensor) -> float:
    """PPO's clipped objective over the rollout, a few epochs of minibatches; the last loss."""
    flat = {name: getattr(rollout, name).flatten(0, 1) for name in ("observations", "masks", "actions", "log_probs",
                                                                     "values")}
    flat_advantage = advantage.flatten()
    returns = flat_advantage + flat["values"]
    size = flat_advantage.shape[0]
    loss = torch.zeros(())
    for _ in range(EPOCHS):
        for rows in torch.randperm(size).chunk(MINIBATCHES):
            _, log_probs, entropy, values = agent.act(flat["observations"][rows], flat["masks"][rows],
                                                      flat["actions"][rows])
            ratio = (log_probs - flat["log_probs"][rows]).exp()
            gain = flat_advantage[rows]
            gain = (gain - gain.mean()) / (gain.std() + 1e-8)
            policy_loss = -torch.min(ratio * gain, ratio.clamp(1 - CLIP, 1 + CLIP) * gain).mean()
            value_loss = 0.5 * (values - returns[rows]).pow(2).mean()
            loss = policy_loss + VALUE * value_loss - ENTROPY * entropy.mean()
            optimiser.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), MAX_GRAD_NORM)
            optimiser.step()
    return float(loss.detach())


def train(pool: OpponentPool, steps: int, seed: int, games: int, rollout_steps: int, snapshot_every: int,
          table: GameConfig = DEFAULT_TABLE) -> Agent:
    """PPO against opponents drawn from `pool`, a frozen copy of the actor added every `snapshot_every` steps."""
    torch.manual_seed(seed)
    envs = gymnasium.make_vec("dominoes_env/Dominoes-v0", num_envs=games, opponents=pool.opponents(table.num_players),
                              num_players=table)
    agent = Agent(envs.single_observation_space.shape[0], int(envs.single_action_space.n))
    optimiser = torch.optim.Adam(agent.parameters(), lr=LEARNING_RATE, eps=1e-5)
    observation, _ = envs.reset(seed=seed)
    done_steps, last_snapshot, generation, finished = 0, 0, 0, []
    started = time.perf_counter()
    while done_steps < steps:
        rollout, observation = collect(envs, agent, observation, rollout_steps, finished)
        done_steps += rollout_steps * games
        with torch.no_grad():
            last_values = agent.critic(torch.as_tensor(observation, dtype=torch.float32)).squeeze(-1)
        loss = update(agent, optimiser, rollout, advantages(rollout, last_values))
        if done_steps - last_snapshot >= snapshot_every:
            generation += 1
            last_snapshot = done_steps
            pool.add(FrozenAgent(agent.actor, f"generation {generation}"), name=f"generation {generation}",
                     freeze=lambda member: member)  # FrozenAgent copied the actor already
        recent = finished[-200:]
        elapsed = time.perf_counter() - started
        print(f"{done_steps:,} steps: mean return of the last {len(recent)} games "
              f"{np.mean(recent) if recent else math.nan:.2f}, loss {loss:+.3f} "
              f"({done_steps / elapsed:,.0f} steps/s, {elapsed:.0f} s)", flush=True)
    return agent


def save(agent: Agent, table: GameConfig, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"actor": agent.actor.state_dict(), "table": table.options()}, path)


def load(path: Path) -> FunctionPolicy:
    """The saved actor as a policy of the harness: greedy over legal moves, at the table it learned."""
    try:
        saved = torch.load(path, weights_only=True)  # tensors and plain values only: no code runs
        table = make_config(**saved["table"])
        actor = mlp(dominoes_env.SingleAgentEnv(num_players=table).observation_space.shape[0], table.num_actions)
        actor.load_state_dict(saved["actor"])
    except Exception as error:  # a damaged or foreign file, whatever torch makes of it: one line
        reason = (str(error).splitlines() or [type(error).__name__])[0]
        raise ValueError(f"{path} is not an agent saved by cleanrl_selfplay.py: {reason}") from None
    frozen = FrozenAgent(actor, "cleanrl_selfplay")
    return FunctionPolicy(table, predict=lambda observation, mask: int(frozen.act_batch(observation[None],
                                                                                        mask[None])[0]),
                          label=f"cleanrl_selfplay({path.name})", one_hand=True)  # 10-hand games too


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_run_options(parser, DEFAULT_STEPS, Path("runs/cleanrl_selfplay/agent.pt"))
    parser.add_argument("--rollout-steps", type=int, default=64, help="steps per game in each rollout (default 64)")
    add_self_play_options(parser)
    args = parser.parse_args(argv)
    check_run_options(parser, args)
    read_self_play_options(parser, args)
    try:
        count("--rollout-steps", args.rollout_steps, 2, 100_000)
    except ValueError as error:
        parser.error(str(error))
    return args


def main(argv: Sequence[str] | None = None) -> SelfPlayRun:
    """Train against the pool, save the actor, load it back, and rate it."""
    args = parse_args(argv)
    train_seconds = 0.0
    if not args.rate_only:
        started = time.perf_counter()
        agent = train(args.pool, args.steps, args.seed, args.games, args.rollout_steps, args.snapshot_every,
                      args.table)
        train_seconds = time.perf_counter() - started
        save(agent, args.table, args.out)
        record = ", ".join(f"{name} {wins / games:.0%} of {games}"
                           for name, (wins, games) in args.pool.record().items() if games)
        print(f"trained {args.steps:,} steps on {args.games} games at {describe_table(args.table)} in "
              f"{train_seconds:.0f} s; saved {args.out}\nthe learner's wins against each member: {record}", flush=True)
    elif not args.out.is_file():
        raise SystemExit(f"cleanrl_selfplay.py: error: --rate-only: no agent saved at {args.out}")
    try:
        policy = load(args.out)
    except ValueError as error:
        raise SystemExit(f"cleanrl_selfplay.py: error: --out: {error}") from None
    rating = rate(policy, args.eval_hands, args.rating_seed, table=args.table, bench_mode=args.bench)
    margin = margin_against(policy, "td_lambda", args.eval_hands, args.rating_seed, args.table)
    return SelfPlayRun(args.out, args.pool, args.steps, train_seconds, rating, margin)


if __name__ == "__main__":
    torch.set_num_threads(1)  # small networks: one thread is faster than several on a shared machine
    main()
