"""Hands per second of each hand-crafted policy, one copy in every seat, through the bare env.

Fixed seeds, one process, the shared game loop (:func:`baselines.harness.play.play_game`), so the
figures include the env's observation and mask for every decision. Each figure is the
best of `--repeats` runs over the same hands, timed by this process's CPU time (the code
is single-threaded, and on a shared machine CPU time is far less disturbed by other users
than wall-clock time, which is printed beside it). Also times the chain search alone on
freshly dealt hands. The
target: four persistent_line players on double-nine play at least 350 hands/s, 20x the
reference implementation's ~17 hands/s on the same machine.

    python benchmarks/baselines_speed.py [--hands 400] [--repeats 3] [--configs 4x9 4x12]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import dominoes_env
from baselines.harness.play import play_game
from baselines.policies.chain_search import best_chain
from baselines.policies.registry import make_policy
from dominoes_env.core import HandState, make_config

POLICIES = ("random", "greedy", "stupid", "double", "best_line", "persistent_line")
REFERENCE_PERSISTENT_LINE_HANDS_PER_S = 17.0  # the original, 4 players, double-nine, this machine
TARGET_PERSISTENT_LINE_HANDS_PER_S = 350.0


def hands_per_second(name: str, num_players: int, highest: int, hands: int, repeats: int) -> tuple[float, float]:
    """Hands/s (by CPU time, by wall time) of `num_players` copies of `name` playing `hands`
    single-hand games with seeds 0..hands-1; the best of `repeats` runs."""
    env = dominoes_env.raw_env(num_players, highest)
    policies = [make_policy(name, num_players, highest, seed=seat) for seat in range(num_players)]
    play_game(env, policies, seed=10**6)  # load compiled code before timing
    best_cpu = best_wall = float("inf")
    for _ in range(repeats):
        cpu, wall = time.process_time(), time.perf_counter()
        for seed in range(hands):
            play_game(env, policies, seed=seed)
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
    return hands / best_cpu, hands / best_wall


def chain_search_microseconds(num_players: int, highest: int, count: int = 2000) -> tuple[float, float]:
    """Median and 99th percentile time (microseconds) of one exact search (max_line_length 12, through
    the public :func:`best_chain`) on a freshly dealt hand and a random open value."""
    config = make_config(num_players, highest)
    rng = np.random.default_rng(0)
    positions = []
    for k in range(count):
        hand = HandState.deal(config, 0, rng)
        positions.append((hand.hand(k % num_players), int(rng.integers(highest + 1))))
    best_chain(*positions[0], highest)
    times = []
    for tiles, open_value in positions:
        start = time.perf_counter()
        best_chain(tiles, open_value, highest)
        times.append(time.perf_counter() - start)
    return float(np.median(times) * 1e6), float(np.percentile(times, 99) * 1e6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=400, help="hands per policy on double-nine (default 400); "
                                                                "a quarter of that on larger sets")
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure, the best is kept (default 3)")
    parser.add_argument("--configs", nargs="+", default=["4x9", "4x12"], help="PLAYERSxHIGHEST (default 4x9 4x12)")
    args = parser.parse_args()
    for text in args.configs:
        num_players, highest = (int(part) for part in text.split("x"))
        hands = args.hands if highest <= 9 else max(args.hands // 4, 10)
        median_us, tail_us = chain_search_microseconds(num_players, highest, 400 if highest <= 9 else 100)
        print(f"\n{num_players} players, double-{highest}: {hands} hands per policy, one copy in every seat, "
              f"best of {args.repeats} runs")
        print(f"  chain search alone (dealt hand, max_line_length 12): {median_us:.0f} us median, "
              f"{tail_us:.0f} us 99th percentile")
        for name in POLICIES:
            rate, wall_rate = hands_per_second(name, num_players, highest, hands, args.repeats)
            line = f"  {name:16s} {rate:8.0f} hands/s  (wall clock {wall_rate:.0f})"
            if name == "persistent_line" and (num_players, highest) == (4, 9):
                ratio = rate / REFERENCE_PERSISTENT_LINE_HANDS_PER_S
                verdict = "meets" if rate >= TARGET_PERSISTENT_LINE_HANDS_PER_S else "MISSES"
                line += (f"  = {ratio:.0f}x the reference's ~{REFERENCE_PERSISTENT_LINE_HANDS_PER_S:.0f} hands/s "
                         f"({verdict} the {TARGET_PERSISTENT_LINE_HANDS_PER_S:.0f} hands/s target)")
            print(line, flush=True)


if __name__ == "__main__":
    main()
