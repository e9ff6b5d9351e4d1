"""How the baselines rank under each table rule set: one league per rule set and set size.

For 4 players with the double-nine and double-twelve sets, plays the default league's
hand-crafted policies (4 copies each of persistent_line, double, greedy, random, stupid;
full games of N+1 hands) under every combination of the table rules, with the same seed,
and prints (or writes, with --write) a Markdown report: each policy's ELO and mean pips per
hand under each rule set.

    python benchmarks/table_rule_leagues.py --games 1000 --write docs/table_rules.md
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from pathlib import Path

from baselines.league import rate, run_league
from baselines.league.spec import DEFAULT_POLICIES, make_spec, parse_policy_arguments

RULE_SETS = [dict(boneyard=b, cover_doubles=c, first_player=f)
             for b, c, f in itertools.product([False, True], [False, True], ["engine_holder", "left_of_engine"])]


def rule_name(rules: dict) -> str:
    parts = (["boneyard"] if rules["boneyard"] else []) + (["cover"] if rules["cover_doubles"] else []) + \
        (["left of engine"] if rules["first_player"] == "left_of_engine" else [])
    return " + ".join(parts) or "rule book"


def league_table(highest: int, games: int, seed: int, workers: int | None) -> tuple[list[str], dict]:
    """{rule set name: {policy: (elo, mean pips, won)}} for one set size."""
    results: dict[str, dict[str, tuple[float, float, float]]] = {}
    for rules in RULE_SETS:
        spec = make_spec(parse_policy_arguments(DEFAULT_POLICIES), 4, highest, None, seed, **rules)
        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            records = run_league(spec, games, out, workers=workers)
            ratings = rate(spec, records)
            print(f"  double-{highest}, {rule_name(rules)}: {games} games in {time.perf_counter() - start:.0f} s",
                  flush=True)
        results[rule_name(rules)] = {row.policy: (row.elo, row.mean_pips, row.won) for row in ratings.rows}
    order = sorted(DEFAULT_POLICIES, key=lambda policy: -results["rule book"][policy][0])
    return order, results


def markdown(highest: int, games: int, order: list[str], results: dict) -> str:
    names = list(results)
    lines = [f"### 4 players, double-{highest}: {games} games of {highest + 1} hands per rule set", "",
             "ELO (mean pips per hand) of each policy; the rank under each rule set in brackets.", "",
             "| policy | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    ranks = {name: sorted(results[name], key=lambda policy: -results[name][policy][0]) for name in names}
    for policy in order:
        cells = [f"{results[name][policy][0]:.0f} ({results[name][policy][1]:.2f}) "
                 f"[{ranks[name].index(policy) + 1}]" for name in names]
        lines.append(f"| {policy} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=1000, help="games per league (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every league (default 0)")
    parser.add_argument("--workers", type=int, default=None, help="league workers (default: all cores)")
    parser.add_argument("--write", type=Path, default=None, help="write the report to this Markdown file")
    args = parser.parse_args()
    sections = []
    for highest in (9, 12):
        order, results = league_table(highest, args.games, args.seed, args.workers)
        sections.append(markdown(highest, args.games, order, results))
    report = "\n\n".join(sections)
    print("\n" + report)
    if args.write is not None:
        header = args.write.read_text().split("<!-- results -->")[0] if args.write.exists() else ""
        args.write.write_text(header + "<!-- results -->\n\n" + report + "\n")
        print(f"\nwrote {args.write}")


if __name__ == "__main__":
    main()
