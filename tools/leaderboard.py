"""The leaderboard page: every shipped player's scorecard on a suite version, best rating first.

Each player is benched like any agent (``baselines.benchmark.bench``), its cells kept under --out, so
a second run only reads them back:

    python tools/leaderboard.py [--suite v1] [--workers 2] [--out runs/bench-leaderboard] [--extra ppo champion]
                                [--ceiling oracle|none] [--update-docs]

The page is written to ``OUT/leaderboard.md``; ``--update-docs`` also writes docs/leaderboard.md
(the checkout's page changes only when asked: ``--suite v1 --workers 2 --update-docs`` wrote it).
Every argument and player, and every cells file a bench would resume from, is checked before the
first player is benched: a bad one is one line (exit status 2), not a traceback hours into the run.

The suite's frozen pool, then the shipped players outside it (``--extra``, :data:`EXTRA_PLAYERS` by
default): those are benched at the suite's tables where they ship weights, and their row says which.
Then the ceiling (:data:`CEILING`, the oracle: the champion's search shown every hand), benched the
same way: every row is also normalised to it (0 = random, 100 = the oracle), which says how much of
what hidden information leaves a player has taken; ``--ceiling none`` leaves that column out.
The slow players' cells (the champion's and the oracle's benches take about 14 core-hours each) are
committed under ``benchmarks/results/bench-VERSION/PLAYER/``: a player whose --out directory holds
no cells starts from those (copied, then read back like any resumed bench); delete the copy under
--out, or pass --no-committed, to play them again.
Each row gives the player's median milliseconds a decision at the suite's first table, timed by
:func:`baselines.harness.timing.decision_times` on the machine that runs the command (the
cells are kept; the times are measured again at every run).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from baselines.benchmark import bench, load_suite
from baselines.benchmark.run import CELLS_FILE, OUT_FILES, playable_tables, read_cells
from baselines.benchmark.scorecard import Scorecard, normalised_to
from baselines.benchmark.suite import LATEST, Suite, suite_path
from baselines.cli import OneLineParser
from baselines.command_line import options
from baselines.harness.parallel import MAX_WORKERS
from baselines.harness.timing import decision_times
from dominoes_env import files
from dominoes_env.core import validation

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "leaderboard.md"
#: Where the cells of the players too slow to bench at every run are committed, one folder a suite version.
COMMITTED = ROOT / "benchmarks" / "results"
COMMAND = "python tools/leaderboard.py --suite {version} --workers 2 --update-docs"
#: Shipped players that joined after the suite's pool was frozen: benched too, their row marked.
EXTRA_PLAYERS = ("ppo", "champion")
#: The calibration player every row is also normalised to (it sees every hand: a row, not a rank).
CEILING = "oracle"
#: Hands each player is timed over (after one warm-up hand) for its milliseconds a decision.
TIMED_HANDS = 20
#: The page's name under --out (and docs/leaderboard.md with --update-docs).
PAGE_NAME = "leaderboard.md"


def start_from_committed(player: str, version: str, out: Path, committed: Path = COMMITTED) -> bool:
    """Copy `player`'s committed cells of suite `version` into ``out/player`` when that holds none.

    Why: the champion's bench is 33 cells of ~25 core-minutes; regenerating the page should not
    cost that each time, and the committed cells are the run the page's figures come from. The
    bench checks the file's header (format, suite, agent) when it reads it back, so a copy made
    for another agent or suite is refused there, not silently used. Returns whether it copied.
    """
    source = committed_cells(player, version, committed)
    target = out / player / CELLS_FILE
    if target.exists() or not source.is_file():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    files.write_atomically(target, source.read_bytes())
    return True


def committed_cells(player: str, version: str, committed: Path = COMMITTED) -> Path:
    """Where `player`'s committed cells of suite `version` are (if they are)."""
    return committed / f"bench-{version}" / player / CELLS_FILE


@dataclass(frozen=True)
class Plan:
    """What a run benches, every part checked (:func:`checked_plan`)."""

    suite: Suite
    players: tuple[str, ...]  # the pool, the extra players, then the ceiling
    ceiling: str | None
    workers: int


def checked_plan(args: argparse.Namespace) -> Plan:
    """The run the arguments ask for, checked before any player is benched: the suite, the
    workers, every player at the suite's tables (the registry builds each, as the bench would),
    every cells file a bench would resume from (the player's under --out, else its committed
    one), then --out and the player folders in it (all checked, then created: a refused run leaves
    nothing behind). Why all first: the champion's and the oracle's benches take hours, and a bad
    last argument must not wait for them.

    Raises:
        ValueError: one line naming the argument or file and what is allowed.
    """
    suite = load_suite(args.suite)  # an unknown version: SuiteError listing the shipped ones
    workers = options.count("--workers", args.workers, 1, MAX_WORKERS)
    ceiling = None if args.ceiling == "none" else args.ceiling
    named = {player: f"suite {suite.version}'s pool player" for player in suite.pool}
    named.update({player: "--extra" for player in args.extra if player not in named})
    if ceiling is not None and ceiling not in named:
        named[ceiling] = "--ceiling"
    for player, option in named.items():
        try:
            playable_tables(suite, player)
        except ValueError as error:
            raise ValueError(f"{option} {player}: {error}") from None
    for player in named:
        resumed = args.out / player / CELLS_FILE
        if not resumed.exists() and not args.no_committed:
            resumed = committed_cells(player, suite.version, COMMITTED)
        read_cells(resumed, suite, player)  # a damaged file: the file and its line, read only
    folders = [(args.out, (PAGE_NAME,)), *((args.out / player, OUT_FILES) for player in named)]
    for folder, names in folders:
        check_folder("--out", folder, names)
    for folder, names in folders:
        files.check_output_directory("--out", folder, names)
    return Plan(suite, tuple(named), ceiling, workers)


def check_folder(option: str, path: Path, names: tuple[str, ...]) -> None:
    """What :func:`files.check_output_directory` refuses, without creating the folder: a path that
    is not a directory, or under which one cannot be made (the nearest existing folder above it
    must be a directory that takes a new file), a folder that takes no new file, one of `names`
    in it that is not a regular file. Why: that check creates the folder, and the leaderboard
    checks every folder before it creates any, so that a refused run leaves nothing under --out.

    Raises:
        files.FileRefused: ``OPTION PATH: why``.
    """
    try:
        if path.is_dir():  # a link to a directory is one
            files.prove_writable(path)
            for name in names:
                try:
                    files.refuse_to_replace(path / name)
                except files.FileRefused as error:
                    raise files.FileRefused(f"{name} in it {error}") from None
            return
        if os.path.lexists(path):
            raise files.FileRefused(f"is {files.existing_kind(path)}, not a directory")
        above = next(parent for parent in path.parents if os.path.lexists(parent))  # "." or "/" at the latest
        if not above.is_dir():
            raise files.FileRefused(f"cannot be created: {str(above)!r} is {files.existing_kind(above)}, "
                                    "not a directory")
        files.prove_writable(above)
    except files.FileRefused as error:
        raise files.FileRefused(f"{option} {os.fspath(path)}: {error}") from None


def main(argv: list[str] | None = None) -> int:
    """The command: exit status 0, or 2 with one line on stderr for bad input."""
    parser = OneLineParser(prog="tools/leaderboard.py", description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default=LATEST, help=f"the suite version (default {LATEST})")
    parser.add_argument("--workers", type=validation.integer_argument, default=2,
                        help=f"worker processes a bench (1-{MAX_WORKERS}; default 2)")
    parser.add_argument("--out", type=Path, default=Path("runs/bench-leaderboard"),
                        help=f"a directory: each player's bench in OUT/PLAYER, the page in OUT/{PAGE_NAME}")
    parser.add_argument("--extra", nargs="*", default=list(EXTRA_PLAYERS),
                        help="shipped players outside the frozen pool to bench too "
                             f"(default {' '.join(EXTRA_PLAYERS)})")
    parser.add_argument("--ceiling", default=CEILING,
                        help=f"the player every row is also normalised to (default {CEILING}; none: no such column)")
    parser.add_argument("--no-committed", action="store_true",
                        help="play every cell again, even a player's committed under benchmarks/results/")
    parser.add_argument("--update-docs", action="store_true",
                        help="also write the page to docs/leaderboard.md (the checkout's page; not by default)")
    args = parser.parse_args(argv)
    try:
        plan = checked_plan(args)
        cards, seconds = bench_all(plan, args)
        lines = page(plan, args, cards, *decision_milliseconds(plan.suite, cards))
        for target in [args.out / PAGE_NAME, *([PAGE] if args.update_docs else [])]:
            files.write_atomically(target, ("\n".join(lines) + "\n").encode())
    except (ValueError, OSError) as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    print({player: round(value) for player, value in seconds.items()})
    return 0


def bench_all(plan: Plan, args: argparse.Namespace) -> tuple[list[Scorecard], dict[str, float]]:
    """Every player's scorecard (best rating first) and the seconds its bench took."""
    cards, seconds = [], {}
    for player in plan.players:
        start = time.time()
        if not args.no_committed and start_from_committed(player, plan.suite.version, args.out, COMMITTED):
            print(f"{player}: starting from the committed cells in "
                  f"{committed_cells(player, plan.suite.version, COMMITTED)}")
        cards.append(bench(player, plan.suite, out=args.out / player, workers=plan.workers))
        seconds[player] = time.time() - start
    cards.sort(key=lambda card: -(card.rating.value if card.rating else 0.0))
    return cards, seconds


def decision_milliseconds(suite: Suite, cards: list[Scorecard]) -> tuple[dict[str, float], str]:
    """Each benched player's median milliseconds a decision at the suite's first table, and the
    machine they were timed on (its cores and load average before and after: a time says little
    without how busy the machine was)."""
    timed_at = suite.tables[0].config
    milliseconds = {}
    before = os.getloadavg()[0]
    for card in cards:
        decision_times(card.agent, 1, timed_at)  # compiles and loads: not timed
        milliseconds[card.agent] = 1e3 * float(np.median(decision_times(card.agent, TIMED_HANDS, timed_at)))
    machine = f"{os.cpu_count()} cores, load average {before:.1f} before the timings and {os.getloadavg()[0]:.1f} after"
    return milliseconds, machine


def page(plan: Plan, args: argparse.Namespace, cards: list[Scorecard], milliseconds: dict[str, float],
         machine: str) -> list[str]:
    """The page's lines: the command, what the columns mean, a row a player."""
    suite, ceiling = plan.suite, plan.ceiling
    top = next((card for card in cards if card.agent == ceiling), None)
    command = COMMAND.format(version=suite.version) + ("" if args.ceiling == CEILING else f" --ceiling {args.ceiling}")
    tables = [table.name for table in suite.tables]
    lines = [f"# Leaderboard: dominoes-bench {suite.version}", "",
             f"Every shipped player benched on suite {suite.version} (`{suite_path(suite.version).name}`; "
             "[the protocol](bench.md)), regenerated by", "", f"    {command}", "",
             "The rating is the anchored ELO (random = 1000) with its 95% interval; the pool's own frozen rating "
             "is beside it. Normalised: 0 = random, 100 = the best shipped player of each line-up, averaged over "
             "the line-ups." + (f" Of the {ceiling}: the same with the {ceiling}'s results in place of the best "
                                f"player's (0 = random, 100 = the {ceiling}; the oracle sees every hand: "
                                "[the champion's page](champion.md#the-oracle-what-the-hidden-tiles-cost)); "
                                "its row is a ceiling, not a rank." if top else "")
             + " Per table: the mean paired difference in pips per hand over its line-ups (negative: "
             "the player leaves fewer pips than its opponents). Milliseconds a decision: the median of its "
             f"decisions with a choice at {tables[0]} ({TIMED_HANDS} hands against persistent_line, "
             f"{time.strftime('%Y-%m-%d')}, on the machine that ran the command: "
             f"{machine}; compare ratios, not machines).", "",
             "| player | rating | frozen | normalised | " + (f"of the {ceiling} | " if top else "")
             + "ms a decision | " + " | ".join(tables) + " |",
             "|---|---:|---:|---:|" + ("---:|" if top else "") + "---:|" + "---:|" * len(tables)]
    for card in cards:
        by_table = []
        for table in tables:
            cells = [cell["difference"] for cell in card.cells if cell["table"] == table]
            by_table.append(f"{sum(cells) / len(cells):+.2f}" if cells else "")
        rating = str(card.rating) if card.rating else ""
        frozen = f"{suite.reference.pool.get(card.agent, float('nan')):.0f}"
        normalised = "" if card.normalised is None else f"{card.normalised:.0f}"
        outside = card.agent not in suite.reference.pool
        name = f"{card.agent} (not in the pool)" if outside else card.agent
        if card is top:
            name = f"{card.agent} (sees every hand: the ceiling)"
        of_top = normalised_to(card, top, suite) if top else None
        ceiling_column = ("" if of_top is None else f"{of_top:.0f}") + " | " if top else ""
        frozen = "" if outside else frozen
        ms = milliseconds[card.agent]
        timed = f"{ms:.3f}" if ms < 1 else f"{ms:.1f}" if ms < 10 else f"{ms:.0f}"
        lines.append(f"| {name} | {rating} | {frozen} | {normalised} | {ceiling_column}{timed} | "
                     + " | ".join(by_table) + " |")
    committed = [] if args.no_committed else sorted(
        path.parent.name for path in (COMMITTED / f"bench-{suite.version}").glob(f"*/{CELLS_FILE}"))
    return lines + ["", "Each player's full scorecard (every line-up, hands and games won) is in "
                    f"`{args.out}/PLAYER/scorecard.md` after the command."
                    + (f" The cells of {', '.join(committed)} are committed in "
                       f"`benchmarks/results/bench-{suite.version}/` (their benches take hours: the command starts "
                       "from them; `--no-committed` plays them again)." if committed else "")]


if __name__ == "__main__":
    sys.exit(main())
