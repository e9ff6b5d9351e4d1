"""Throughput of the engine and the environment under masked random play (the README's figures).

Fixed seeds, 4 players, double-nine, one process. Prints units and ratios against
PettingZoo's connect_four_v3 measured in the same run (absolute times on shared machines
are noisy; ratios within one run are not):

    python benchmarks/env_throughput.py [--seconds 3] [--rules]

``--rules`` also measures the bare env under each table rule (boneyard, cover doubles,
both), as a ratio to the rule book's game in the same run.

Targets: wrapped env >= 1.5x connect_four_v3 steps/s; bare env >= 60k steps/s;
observe() <= 10 us; raw engine >= 300k decisions/s.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import dominoes_env
from dominoes_env.core import HandState, make_config, rules

CONFIG = make_config(4, 9)


def engine_python(seconds: float) -> tuple[float, float]:
    """Decisions/s and hands/s through the engine's Python API (HandState)."""
    rng = np.random.default_rng(0)
    decisions = hands = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        hand = HandState.deal(CONFIG, hands, rng)
        while not hand.is_over:
            legal = hand.legal_actions()
            hand.apply(legal[int(rng.random() * legal.shape[0])])
            decisions += 1
        hands += 1
    elapsed = time.perf_counter() - start
    return decisions / elapsed, hands / elapsed


def engine_compiled(seconds: float) -> tuple[float, float]:
    """Decisions/s and hands/s of the compiled self-play loop over dealt hands."""
    rng = np.random.default_rng(0)
    tiles = CONFIG.tiles
    batch = 2000
    decisions = hands = 0
    elapsed = 0.0
    while elapsed < seconds:
        states = np.stack([HandState.deal(CONFIG, k, rng).state for k in range(batch)])
        uniforms = rng.random(1 << 16)
        start = time.perf_counter()
        decisions += rules.play_random_hands(states, tiles.low, tiles.high, tiles.tiles_with_value, uniforms)
        elapsed += time.perf_counter() - start
        hands += batch
    return decisions / elapsed, hands / elapsed


def aec_steps(env, seconds: float) -> float:
    """Steps/s of masked random play through an AEC env (observation and mask built every step)."""
    rng = np.random.default_rng(0)
    steps, episode = 0, 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=episode)
        episode += 1
        for _ in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                action = None
            else:
                legal = observation["action_mask"].nonzero()[0]
                action = int(legal[int(rng.random() * legal.shape[0])])
            env.step(action)
            steps += 1
    return steps / (time.perf_counter() - start)


def observe_microseconds(repeats: int = 200_000) -> float:
    env = dominoes_env.raw_env(4, 9)
    env.reset(seed=0)
    agent = env.agent_selection
    start = time.perf_counter()
    for _ in range(repeats):
        env.observe(agent)
    return (time.perf_counter() - start) / repeats * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement (default 3)")
    parser.add_argument("--rules", action="store_true", help="also the bare env under each table rule")
    args = parser.parse_args()
    from pettingzoo.classic import connect_four_v3

    # Warm up the compiled code so compilation is not timed.
    engine_python(0.2), engine_compiled(0.1), aec_steps(dominoes_env.env(), 0.2)

    connect_four = aec_steps(connect_four_v3.env(), args.seconds)
    wrapped = aec_steps(dominoes_env.env(4, 9), args.seconds)
    bare = aec_steps(dominoes_env.raw_env(4, 9), args.seconds)
    observe_us = observe_microseconds()
    py_decisions, py_hands = engine_python(args.seconds)
    c_decisions, c_hands = engine_compiled(args.seconds)

    print("4 players, double-nine, masked random play, one process")
    print(f"{'connect_four_v3 (anchor)':34s} {connect_four:12,.0f} steps/s")
    print(f"{'dominoes env() (wrapped)':34s} {wrapped:12,.0f} steps/s  {wrapped / connect_four:5.2f}x connect_four "
          f"(target >= 1.5x)")
    print(f"{'dominoes raw_env() (bare)':34s} {bare:12,.0f} steps/s  {bare / connect_four:5.2f}x connect_four "
          f"(target >= 60,000 steps/s)")
    print(f"{'observe() one agent':34s} {observe_us:12.2f} us       (target <= 10 us)")
    print(f"{'engine, Python API':34s} {py_decisions:12,.0f} decisions/s {py_hands:9,.0f} hands/s "
          f"(target >= 300,000 decisions/s)")
    print(f"{'engine, compiled self-play loop':34s} {c_decisions:12,.0f} decisions/s {c_hands:9,.0f} hands/s")
    print(f"ratios: engine Python API / original (~21k decisions/s): {py_decisions / 21_000:.1f}x; "
          f"compiled loop / original: {c_decisions / 21_000:.0f}x")
    if args.rules:
        table_rule_costs(args.seconds)


RULE_SETS = {"rule book": {}, "boneyard": {"boneyard": True}, "cover doubles": {"cover_doubles": True},
             "boneyard + cover doubles": {"boneyard": True, "cover_doubles": True}}


def table_rule_costs(seconds: float) -> None:
    """Steps/s and time per step of the bare env under each table rule, against the rule book's
    game measured in the same run (a table rule changes the game, so steps per hand differ
    too: the time per step is the cost of the option)."""
    for options in RULE_SETS.values():
        aec_steps(dominoes_env.raw_env(4, 9, **options), 0.2)  # compile each path before timing
    rates = {name: aec_steps(dominoes_env.raw_env(4, 9, **options), seconds) for name, options in RULE_SETS.items()}
    base = rates["rule book"]
    print("\nthe bare env under the table rules (4 players, double-nine, masked random play):")
    for name, rate in rates.items():
        print(f"{name:34s} {rate:12,.0f} steps/s  {1e6 / rate:6.2f} us per step = {base / rate:5.2f}x the rule "
              f"book's time per step")


if __name__ == "__main__":
    main()
