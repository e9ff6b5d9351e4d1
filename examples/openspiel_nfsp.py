"""Neural Fictitious Self-Play from OpenSpiel on the game through pyspiel: one NFSP agent per seat,
trained on ``python_dominoes_env``, the average policy saved, loaded back and rated.

    python examples/openspiel_nfsp.py --seed 0                         # 200,000 steps at 4 players, double-nine
    python examples/openspiel_nfsp.py --steps 4000 --players 2 --highest 6 --eval-hands 40 --bench off  # a smoke run

Needs torch, OpenSpiel and dm-tree (the ``openspiel`` and ``examples`` extras). Why NFSP: it is
OpenSpiel's learner for imperfect-information games with many players and an observation too
large for tables, and its average policy approaches a Nash equilibrium in two-player zero-sum
games; CFR and its kin need the whole game tree, which only the smallest tables here would give
(none of them is small: a 2-player double-six deal alone has C(28,7) x C(21,7) outcomes).

- ``rl_environment.Environment(game)``: OpenSpiel's loop over the game's states, chance sampled;
  the information state is the env's observation (``dominoes_env.openspiel``); every seat's
  reward is minus its pips when the hand ends.
- Each seat's ``nfsp.NFSP`` agent mixes its best response (DQN) and its average policy (a
  classifier of its best response's moves) with OpenSpiel's anticipatory parameter.
- The end: the average policy of seat 0's agent (the seats learn alike) saved as a torch state
  dict with the table, loaded back as a ``FunctionPolicy`` (its most probable legal move) and
  rated by ``examples/rating.py``, as every library example ends.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyspiel
import torch
from open_spiel.python import rl_environment
from open_spiel.python.pytorch import dqn, nfsp
from rating import SavedRun, rate
from settings_cli import parse_run

from baselines.adapters import FunctionPolicy
from baselines.learning.options import bounded
from dominoes_env import GameConfig, make_config
from dominoes_env.core.config import describe_table
from dominoes_env.openspiel import game_parameters  # registers python_dominoes_env too

DEFAULT_STEPS = 200_000


@dataclass(frozen=True)
class Settings:
    """NFSP's settings (OpenSpiel's names)."""

    hidden: tuple[int, ...] = field(default=(128, 128), metadata=bounded("hidden layer widths", 1, 4096, many=True))
    reservoir_buffer_capacity: int = field(default=200_000, metadata=bounded("average policy's memory", 100, 10**7))
    replay_buffer_capacity: int = field(default=200_000, metadata=bounded("best response's memory", 100, 10**7))
    anticipatory_param: float = field(default=0.1, metadata=bounded("share of episodes played by the best response",
                                                                    0.0, 1.0))
    batch_size: int = field(default=128, metadata=bounded("minibatch", 1, 100_000))
    rl_learning_rate: float = field(default=0.001, metadata=bounded("the best response's step size", 1e-6, 1.0))
    sl_learning_rate: float = field(default=0.001, metadata=bounded("the average policy's step size", 1e-6, 1.0))
    epsilon_decay_share: float = field(default=0.5, metadata=bounded(
        "share of the run over which the best response's exploration falls from 1 to 0.05", 1e-6, 1.0))
    """OpenSpiel's DQN decays its epsilon over 10**6 steps by default, longer than a run here: the best
    response then plays at random all along, and so does the average policy that learns from it."""
    min_buffer_size_to_learn: int = field(default=1000, metadata=bounded("samples before learning", 1, 10**7))
    learn_every: int = field(default=64, metadata=bounded("steps between learning steps", 1, 100_000))


def game_of(table: GameConfig) -> pyspiel.Game:
    return pyspiel.load_game("python_dominoes_env", game_parameters(table))


def train(table: GameConfig, steps: int, seed: int, settings: Settings) -> list[nfsp.NFSP]:
    """NFSP agents, one per seat, trained for `steps` of the game's decisions."""
    torch.manual_seed(seed)
    np.random.seed(seed)  # OpenSpiel's agents draw their modes and moves from numpy's global generator
    env = rl_environment.Environment(game_of(table), seed=seed)
    size = env.observation_spec()["info_state"][0]
    actions = env.action_spec()["num_actions"]
    agents = [nfsp.NFSP(seat, size, actions, list(settings.hidden), settings.reservoir_buffer_capacity,
                        settings.anticipatory_param, batch_size=settings.batch_size,
                        rl_learning_rate=settings.rl_learning_rate, sl_learning_rate=settings.sl_learning_rate,
                        min_buffer_size_to_learn=settings.min_buffer_size_to_learn, learn_every=settings.learn_every,
                        replay_buffer_capacity=settings.replay_buffer_capacity, seed=seed + seat, optimizer_str="adam",
                        epsilon_end=0.05, epsilon_decay_duration=max(1, int(settings.epsilon_decay_share * steps)))
              for seat in range(table.num_players)]
    done, episodes, started = 0, 0, time.perf_counter()
    returns: list[float] = []
    while done < steps:
        time_step = env.reset()
        while not time_step.last():
            seat = time_step.observations["current_player"]
            time_step = env.step([agents[seat].step(time_step).action])
            done += 1
        for agent in agents:  # every agent sees the hand's end
            agent.step(time_step)
        episodes += 1
        returns.append(time_step.rewards[0])
        if episodes % 500 == 0:
            print(f"{done:,} steps, {episodes:,} hands: seat 0's mean return over the last 500 "
                  f"{np.mean(returns[-500:]):.2f} ({done / (time.perf_counter() - started):,.0f} steps/s)", flush=True)
    return agents


def save(agent: nfsp.NFSP, table: GameConfig, settings: Settings, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"average_policy": agent._avg_network.state_dict(), "table": table.options(),
                "hidden": list(settings.hidden)}, path)


def load(path: Path) -> FunctionPolicy:
    """The saved average policy as a policy of the harness: its most probable legal move."""
    try:
        saved = torch.load(path, weights_only=True)  # tensors and plain values only: no code runs
        table = make_config(**saved["table"])
        size = game_of(table).observation_tensor_size()
        network = dqn.MLP(size, list(saved["hidden"]), table.num_actions)
        network.load_state_dict(saved["average_policy"])
    except Exception as error:  # a damaged or foreign file, whatever torch makes of it: one line
        reason = (str(error).splitlines() or [type(error).__name__])[0]
        raise ValueError(f"{path} is not an average policy saved by openspiel_nfsp.py: {reason}") from None

    def predict(observation: np.ndarray, mask: np.ndarray) -> int:
        with torch.no_grad():
            logits = network(torch.as_tensor(observation, dtype=torch.float32)[None])[0].numpy()
        return int(np.where(mask.astype(bool), logits, -np.inf).argmax())

    return FunctionPolicy(table, predict=predict, label=f"openspiel_nfsp({path.name})", one_hand=True)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    return parse_run(argv, __doc__.split("\n")[0], DEFAULT_STEPS, Path("runs/openspiel_nfsp/average_policy.pt"),
                     Settings)[1]


def main(argv: Sequence[str] | None = None) -> SavedRun:
    """Train, save seat 0's average policy, load it back and rate it."""
    args = parse_args(argv)
    started = time.perf_counter()
    agents = train(args.table, args.steps, args.seed, args.settings)
    seconds = time.perf_counter() - started
    save(agents[0], args.table, args.settings, args.out)
    print(f"trained {args.steps:,} steps at {describe_table(args.table)} in {seconds:.0f} s; saved {args.out}",
          flush=True)
    policy = load(args.out)
    rating = rate(policy, args.eval_hands, args.rating_seed, table=args.table, bench_mode=args.bench)
    return SavedRun(args.out, args.steps, seconds, rating)


if __name__ == "__main__":
    torch.set_num_threads(1)  # small networks: one thread is faster than several on a shared machine
    main()
