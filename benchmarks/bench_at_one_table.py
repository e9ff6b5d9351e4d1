"""The shipped players benched the way an agent of one table is: at one table of the suite only.

A trained agent of one table (the library examples' agents, 4 players, double-nine) plays only
that table's cells of dominoes-bench, and its headline says so ("at 4p_d9 only"). Its rating is
on the frozen pool's scale, but over other cells than the leaderboard's, which cover every table:
a player can be stronger at one table than over all of them. This prints the shipped players'
ratings over the same cells, so that such an agent's headline has a scale beside it.

    python benchmarks/bench_at_one_table.py [--table 4p_d9] [--players random greedy ...] [--quick]
"""

from __future__ import annotations

import argparse
import time

from baselines.benchmark import bench, load_suite
from baselines.policies.registry import make_policy

PLAYERS = ("random", "greedy", "double", "persistent_line", "linear_sarsa", "td_lambda", "lookahead")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--table", default="4p_d9", help="the suite's table (default 4p_d9)")
    parser.add_argument("--players", nargs="+", default=list(PLAYERS), help="shipped players to bench")
    parser.add_argument("--quick", action="store_true", help="the quick suite (two games per line-up)")
    args = parser.parse_args()
    suite = load_suite("v1")
    tables = {table.name: table for table in suite.tables}
    if args.table not in tables:
        parser.error(f"--table must be one of {', '.join(tables)}, got {args.table!r}")
    print(f"| player | rating at {args.table} only | normalised | seconds |\n|---|---:|---:|---:|")
    for name in args.players:
        started = time.perf_counter()
        card = bench(make_policy(name, tables[args.table].config), suite=suite, quick=args.quick)
        normalised = "" if card.normalised is None else f"{card.normalised:.0f}"
        print(f"| {name} | {card.rating} | {normalised} | {time.perf_counter() - started:.0f} |", flush=True)


if __name__ == "__main__":
    main()
