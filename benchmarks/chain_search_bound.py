"""What the chain search's budget costs and changes, at every table with shipped weights.

For each table, four persistent_line players play `--hands` seeded hands through the env. The
script times every decision of theirs (``act``, CPU time of this process; the policy's own cost,
without the env's), keeps every chain search they ran, and runs each search again with the
budget (:data:`~baselines.policies.chain_search.MAX_SEARCH_NODES`) and without it (the exact
search). It prints, per table: the mean cost of a decision and its ratio to the anchor (4
players, double-nine, the rule book, measured first in the same process), the mean cost of
one search with and without the budget, and the share of searches in which the budget bound
and in which it changed the chain chosen.

    python benchmarks/chain_search_bound.py [--hands 200]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import dominoes_env
from baselines.harness.play import play_game
from baselines.policies.chain_search import (
    IN_LINE_DISCOUNT,
    MAX_LINE_LENGTH,
    MAX_SEARCH_NODES,
    OFF_LINE_DISCOUNT,
    discount_powers,
    search_chain,
)
from baselines.policies.registry import make_policy
from dominoes_env.core.config import GameConfig, describe_table, make_config

TABLES = [make_config(4, 9), make_config(2, 12), *(make_config(n, 12, rules="mexican_train") for n in (2, 4, 6, 8))]


def play_and_record(config: GameConfig, hands: int) -> tuple[float, list[tuple[np.ndarray, int]]]:
    """(mean CPU seconds per persistent_line decision, every search it ran) over `hands` hands."""
    searches: list[tuple[np.ndarray, int]] = []
    spent, decisions = 0.0, 0
    policies = [make_policy("persistent_line", config, seed=seat) for seat in range(config.num_players)]
    for policy in policies:
        search, act = policy.search, policy.act

        def recorded(hand: np.ndarray, open_value: int, search=search) -> tuple[np.ndarray, float]:
            searches.append((hand.copy(), int(open_value)))
            return search(hand, open_value)

        def timed(observation: np.ndarray, mask: np.ndarray, act=act) -> int:
            nonlocal spent, decisions
            start = time.process_time()
            action = act(observation, mask)
            spent += time.process_time() - start
            decisions += 1
            return action

        policy.search, policy.act = recorded, timed  # type: ignore[method-assign]
    env = dominoes_env.raw_env(config)
    play_game(env, policies, seed=10**6)  # compile before timing
    spent, decisions = 0.0, 0
    searches.clear()
    for seed in range(hands):
        play_game(env, policies, seed=seed)
    return spent / decisions, searches


def replay(config: GameConfig, searches: list[tuple[np.ndarray, int]],
           budget: int) -> tuple[float, list[tuple[float, int]]]:
    """(mean CPU seconds per search, (the chosen chain's value, nodes entered) per search) with
    `budget` nodes (0: exact)."""
    tiles = config.tiles
    in_pow = discount_powers(IN_LINE_DISCOUNT, MAX_LINE_LENGTH)
    off_pow = discount_powers(OFF_LINE_DISCOUNT, MAX_LINE_LENGTH)
    out = np.empty(MAX_LINE_LENGTH, dtype=np.int64)
    values = []
    start = time.process_time()
    for hand, open_value in searches:
        value, _, nodes = search_chain(hand, np.int64(open_value), tiles.low, tiles.high, in_pow, off_pow,
                                       np.int64(MAX_LINE_LENGTH), out, np.int64(budget))
        values.append((value, nodes))
    return (time.process_time() - start) / max(len(searches), 1), values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=200, help="hands per table (default 200)")
    args = parser.parse_args()
    print(f"persistent_line in every seat, {args.hands} hands per table (seeds 0..{args.hands - 1}); "
          f"budget {MAX_SEARCH_NODES} nodes per search; CPU time")
    print("| table | per decision | vs anchor | searches | per search (budget) | per search (exact) "
          "| budget bound | chain changed |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    anchor = None
    for config in TABLES:
        per_decision, searches = play_and_record(config, args.hands)
        replay(config, searches[:1], 0)  # compile before timing
        anchor = anchor or per_decision
        bounded, bounded_values = replay(config, searches, MAX_SEARCH_NODES)
        exact, exact_values = replay(config, searches, 0)
        changed = sum(a[0] != b[0] for a, b in zip(bounded_values, exact_values))
        bound = sum(nodes > MAX_SEARCH_NODES for _, nodes in exact_values)
        count = max(len(searches), 1)
        print(f"| {describe_table(config)} | {per_decision * 1e6:.1f} us | {per_decision / anchor:.2f}x "
              f"| {len(searches)} | {bounded * 1e6:.1f} us | {exact * 1e6:.1f} us | {100 * bound / count:.2f}% "
              f"| {100 * changed / count:.2f}% |", flush=True)


if __name__ == "__main__":
    main()
