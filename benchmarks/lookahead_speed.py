"""Milliseconds per decision of the lookahead policy, for each setting that ships (the
default must decide in at most 20 ms, median).

Fixed seeds, 4 players, double-nine: the lookahead plays one seat against three
persistent_line players, seats rotated over the hands; every decision with more than one
legal move is timed (wall clock around ``act``, compiled code loaded before timing):

    python benchmarks/lookahead_speed.py [--hands 40] [--specs "lookahead" "lookahead(samples=32)"]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import dominoes_env
from baselines.policies.registry import build, make_policy
from baselines.policies.specs import parse
from dominoes_env import make_config
from dominoes_env.core.config import GameConfig

SETTINGS = ("lookahead", "lookahead(samples=32)", "lookahead(depth=2)", "lookahead(evaluation='td_lambda')",
            "lookahead(evaluation='td_lambda', samples=32, depth=2)")


def decision_times(spec_text: str, hands: int, config: GameConfig | None = None) -> np.ndarray:
    """Seconds of each decision with a choice, over `hands` hands at `config` (default: 4
    players, double-nine), the other seats persistent_line, the timed seat rotated."""
    spec, _ = parse(spec_text)
    config = config if config is not None else make_config(4, 9)
    env = dominoes_env.raw_env(config)
    n = config.num_players
    times = []
    for hand in range(hands):
        env.reset(seed=hand)
        seat = hand % n
        looker = build(spec, config, seed=hand)
        others = [make_policy("persistent_line", config, seed=hand * n + k) for k in range(n)]
        for agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            mover = env.possible_agents.index(agent)
            if mover == seat:
                start = time.perf_counter()
                action = looker.act(observation["observation"], observation["action_mask"])
                if observation["action_mask"].sum() > 1:
                    times.append(time.perf_counter() - start)
            else:
                action = others[mover].act(observation["observation"], observation["action_mask"])
            env.step(action)
    return np.array(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=40, help="hands per setting (default 40)")
    parser.add_argument("--specs", nargs="+", default=list(SETTINGS), help="the settings to time")
    args = parser.parse_args()
    print("lookahead, 4 players, double-nine, against 3 persistent_line; decisions with a choice")
    for spec in args.specs:
        decision_times(spec, 2)  # compile and load before timing
        times = decision_times(spec, args.hands) * 1e3
        print(f"{spec:55s} median {np.median(times):6.2f} ms   90th percentile {np.percentile(times, 90):6.2f} ms   "
              f"({times.size} decisions)")


if __name__ == "__main__":
    main()
