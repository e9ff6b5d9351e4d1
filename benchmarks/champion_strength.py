"""How many pips a hand a player leaves fewer than its opponents: the champion's strength table.

Each match is the shared harness (``dominoes evaluate``: every deal under all seat rotations,
seeds fixed), split over worker processes that each evaluate their own seeds (seed, seed+1, ...);
the paired difference (the player's mean pips in a deal minus its opponents', over the deal's
rotations) is pooled over all deals, with its 95% interval. Negative: the player leaves fewer.

    python benchmarks/champion_strength.py --hands 2000                      # one vs three of each
    python benchmarks/champion_strength.py --hands 2000 --copies 2           # two vs two (head to head)
    python benchmarks/champion_strength.py --players 6 --highest 12 --rules mexican_train \\
        --opponents persistent_line td_lambda linear_sarsa lookahead        # one vs five
    python benchmarks/champion_strength.py --player "lookahead(evaluation='td_lambda')" --opponents td_lambda
    python benchmarks/champion_strength.py --player "champion@NEW" --compare "champion@OLD" --opponents lookahead

``--compare SPEC`` plays SPEC on the same deals and seeds as well, and prints the difference
between the two, deal by deal (the player's figure minus SPEC's, with its interval): tighter
than comparing the two intervals, since both sat at the same deals.

A long match on a small machine: ``--shares N`` splits each match into N shares (seeds seed ..
seed+N-1, hands/N each; default: one per worker) and ``--record FILE`` appends each finished
share to FILE (JSON lines); the same command run again reads the finished shares back and plays
only the others, so a match killed with its session resumes where it stopped, with the same
figures as one uninterrupted run:

    nice python benchmarks/champion_strength.py --players 4 --highest 12 --rules mexican_train \
        --opponents lookahead --hands 2000 --seed 920 --shares 20 --record runs/4p_mt.jsonl

``--pool FILE [FILE ...]`` plays nothing: it prints the figure of the shares that record files
hold, each match's deals pooled over the files (two runs on different seeds read as one match):

    python benchmarks/champion_strength.py --pool runs/4p_mt_920.jsonl runs/4p_mt_1000.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

DEFAULT_OPPONENTS = ("td_lambda", "lookahead", "linear_sarsa", "persistent_line")


def paired_differences(task: tuple[str, str, int, int, int, int, int, str | None]) -> np.ndarray:
    """Per deal: the player's mean pips minus its opponents' (one worker's share of a match)."""
    player, opponent, copies, hands, seed, players, highest, rules = task
    from baselines.harness.evaluate import evaluate
    from dominoes_env import make_config

    config = make_config(players, highest, **({"rules": rules} if rules else {}))
    result = evaluate([f"{player}:{copies}", f"{opponent}:{players - copies}"], hands, seed=seed, num_players=config)
    first, second = result.labels
    mine = result.per_deal_means(first)
    theirs = result.per_deal_means(second)
    return mine - theirs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--player", default="champion")
    parser.add_argument("--opponents", nargs="+", default=list(DEFAULT_OPPONENTS))
    parser.add_argument("--copies", type=int, default=1, help="seats the player takes (default 1)")
    parser.add_argument("--hands", type=int, default=2000, help="hands per match, at least (default 2000)")
    parser.add_argument("--seed", type=int, default=100, help="seed of the first worker (default 100)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--highest", type=int, default=9)
    parser.add_argument("--rules", default=None)
    parser.add_argument("--compare", default=None, metavar="SPEC",
                        help="another player to run on the same deals; prints the paired difference")
    parser.add_argument("--shares", type=int, default=None,
                        help="shares of each match, seeds seed.. seed+shares-1 (default: one per worker)")
    parser.add_argument("--record", type=Path, default=None, metavar="FILE",
                        help="append each finished share to FILE (JSON lines) and read finished ones back")
    parser.add_argument("--pool", type=Path, nargs="+", default=None, metavar="FILE",
                        help="print the figure of the shares these record files hold, pooled; play nothing")
    args = parser.parse_args()
    if args.pool:
        try:
            _print_pooled(args.pool)
        except ValueError as error:
            parser.error(str(error))
        return
    args.shares = args.shares or args.workers
    if args.shares < 1 or args.workers < 1:
        parser.error("--shares and --workers must be 1 or more")
    same = _same_as_an_opponent(args.player, args.compare, args.opponents)
    if same:
        parser.error(f"{same} is also an opponent: a match against copies of itself has nothing to pair (its "
                     f"difference is 0 by symmetry); name another --player, --compare or --opponents")
    print(f"{args.player} x{args.copies} against {args.players - args.copies} of each opponent, {args.players} "
          f"players, double-{args.highest}{' ' + args.rules if args.rules else ''}; {args.hands} hands, seeds "
          f"{args.seed}..{args.seed + args.shares - 1}")
    compared = f" | {args.compare} | {args.player} minus it, deal by deal" if args.compare else ""
    print(f"| opponents | hands | pips a hand vs opponents (95%){compared} | seconds |")
    print("|---|---:|---:|" + ("---:|---:|" if args.compare else "") + "---:|")
    with ProcessPoolExecutor(args.workers) as pool:
        for opponent in args.opponents:
            start = time.perf_counter()
            deals = _match(pool, args.player, opponent, args)
            cells = f"{_mean_and_interval(deals)}"
            if args.compare:
                other = _match(pool, args.compare, opponent, args)
                cells += f" | {_mean_and_interval(other)} | {_mean_and_interval(deals - other)}"
            print(f"| {args.players - args.copies}x {opponent} | {deals.shape[0] * args.players} | {cells} | "
                  f"{time.perf_counter() - start:.0f} |", flush=True)


def _same_as_an_opponent(player: str, compare: str | None, opponents: list[str]) -> str | None:
    """The first of `player` and `compare` that is one of `opponents` as a policy (the same label, however
    it was typed), checked before any hand is played: the match could not tell its seats apart."""
    from baselines.policies import specs

    def label(text: str) -> str:
        try:
            return specs.parse(text)[0].label
        except ValueError:
            return text  # a spec the match itself will refuse, with its own message
    theirs = {label(opponent) for opponent in opponents}
    return next((text for text in (player, compare) if text is not None and label(text) in theirs), None)


def _match(pool: ProcessPoolExecutor, player: str, opponent: str, args: argparse.Namespace) -> np.ndarray:
    """Per deal, `player`'s paired difference against `opponent`, over every share's seeds in order
    (the shares `--record` holds already are read back, not played)."""
    share = -(-args.hands // args.shares)
    tasks = [(player, opponent, args.copies, share, args.seed + k, args.players, args.highest, args.rules)
             for k in range(args.shares)]
    done = _recorded(args.record)
    missing = [task for task in tasks if json.dumps(task) not in done]
    for task, deals in zip(missing, pool.map(paired_differences, missing)):
        done[json.dumps(task)] = deals
        if args.record is not None:
            args.record.parent.mkdir(parents=True, exist_ok=True)
            cut_short = args.record.is_file() and not args.record.read_bytes().endswith(b"\n") \
                and args.record.stat().st_size > 0  # a write a kill cut short: the next one starts a line
            with args.record.open("a") as file:
                file.write(("\n" if cut_short else "") + json.dumps({"task": task, "deals": deals.tolist()}) + "\n")
    return np.concatenate([done[json.dumps(task)] for task in tasks])


def _recorded(path: Path | None) -> dict[str, np.ndarray]:
    """The shares a record file holds, by their task (its last line may be a write cut short: skipped)."""
    if path is None or not path.is_file():
        return {}
    found = {}
    for line in path.read_text().splitlines():
        try:
            entry = json.loads(line)
            found[json.dumps(entry["task"])] = np.asarray(entry["deals"], dtype=np.float64)
        except (ValueError, KeyError, TypeError):
            continue
    return found


def _print_pooled(paths: list[Path]) -> None:
    """One row per match (player, opponent, copies, table) with its deals from every file's shares.

    Raises:
        ValueError: a file that is missing or holds no share, or two different shares of one match on
            the same seed (their deals overlap: pooling them would count those deals twice).
    """
    matches: dict[tuple, dict[int, tuple[str, np.ndarray]]] = {}
    for path in paths:
        shares = _recorded(path)
        if not shares:
            raise ValueError(f"--pool: {path} is not a record file with finished shares (write one with --record)")
        for key, deals in shares.items():
            player, opponent, copies, _, seed, players, highest, rules = json.loads(key)
            match = matches.setdefault((player, opponent, copies, players, highest, rules), {})
            if seed in match and match[seed][0] != key:
                raise ValueError(f"--pool: two different shares of {player} against {opponent} on seed {seed} "
                                 f"(their deals overlap); pool runs on different seeds")
            match[seed] = (key, deals)
    print("| player | opponents | table | seeds | hands | pips a hand vs opponents (95%) |")
    print("|---|---|---|---|---:|---:|")
    for (player, opponent, copies, players, highest, rules), match in matches.items():
        deals = np.concatenate([match[seed][1] for seed in sorted(match)])
        table = f"{players} players, double-{highest}{', ' + rules if rules else ''}"
        print(f"| {player} x{copies} | {players - copies}x {opponent} | {table} | {_seed_ranges(sorted(match))} | "
              f"{deals.shape[0] * players} | {_mean_and_interval(deals)} |")


def _seed_ranges(seeds: list[int]) -> str:
    """[920, 921, 922, 1000, 1001] -> '920-922, 1000-1001'."""
    runs: list[list[int]] = []
    for seed in seeds:
        if runs and seed == runs[-1][1] + 1:
            runs[-1][1] = seed
        else:
            runs.append([seed, seed])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def _mean_and_interval(deals: np.ndarray) -> str:
    return f"{deals.mean():+.2f} ± {1.96 * deals.std(ddof=1) / np.sqrt(deals.shape[0]):.2f}"


if __name__ == "__main__":
    main()
