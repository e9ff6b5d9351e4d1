"""How long a player takes to decide: the wall clock around ``act`` at its decisions with a choice.

One home for the figure the speed benchmarks and the leaderboard print: fixed seeds, the
player in one seat against persistent_line in the others, the seat rotated over the hands,
every decision with more than one legal move timed. A calibration player that sees every hand
is shown the deal before each move (outside the clock), as :func:`~baselines.harness.play.play_game`
shows it.
"""

from __future__ import annotations

import time

import numpy as np

import dominoes_env
from baselines.policies.policy import SeesEveryHand
from baselines.policies.registry import build, make_policy
from baselines.policies.specs import parse
from dominoes_env import make_config
from dominoes_env.core.config import GameConfig


def decision_times(spec_text: str, hands: int, config: GameConfig | None = None) -> np.ndarray:
    """Seconds of each decision with a choice, over `hands` hands at `config` (default: 4
    players, double-nine), the other seats persistent_line, the timed seat rotated. The first
    call of a player pays for compiling and loading: time a warm-up before the figure."""
    spec, _ = parse(spec_text)
    config = config if config is not None else make_config(4, 9)
    env = dominoes_env.raw_env(config)
    n = config.num_players
    times = []
    for hand in range(hands):
        env.reset(seed=hand)
        seat = hand % n
        timed = build(spec, config, seed=hand)
        others = [make_policy("persistent_line", config, seed=hand * n + k) for k in range(n)]
        for agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            mover = env.possible_agents.index(agent)
            if mover == seat:
                if isinstance(timed, SeesEveryHand):
                    timed.show(env.state())
                start = time.perf_counter()
                action = timed.act(observation["observation"], observation["action_mask"])
                if observation["action_mask"].sum() > 1:
                    times.append(time.perf_counter() - start)
            else:
                action = others[mover].act(observation["observation"], observation["action_mask"])
            env.step(action)
    return np.array(times)
