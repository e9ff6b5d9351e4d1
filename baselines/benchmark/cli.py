"""``dominoes bench``: rate one agent on a fixed suite, or put scorecards side by side.

    dominoes bench SPEC [--suite v1] [--out DIR] [--workers N] [--backend local|ray] [--quick]
    dominoes bench --compare A/scorecard.json B/scorecard.json ...
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from baselines.benchmark import bench
from baselines.benchmark.run import CELLS_FILE, OUT_FILES, BenchError, playable_tables
from baselines.benchmark.scorecard import ScorecardError, compare, read_scorecard
from baselines.benchmark.suite import LATEST, SuiteError, load_suite, quick_suite, versions
from baselines.command_line import options
from baselines.harness.parallel import MAX_WORKERS, add_parallel_options, default_workers


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", nargs="?", metavar="SPEC",
                        help="the agent: any policy spec the league takes (a name with parameters, NAME@CHECKPOINT, "
                             "an import path, an entry point, maskable_ppo@model.zip)")
    parser.add_argument("--suite", default=LATEST,
                        help=f"the suite version ({', '.join(versions())}; default {LATEST})")
    parser.add_argument("--out", default=None,
                        help="directory for cells.jsonl and scorecard.json/.md/.png (default runs/bench/SPEC); an "
                             "unfinished bench of the same agent and suite there is resumed")
    add_parallel_options(parser)
    parser.add_argument("--quick", action="store_true",
                        help="two games per line-up instead of the suite's: the headline in about a minute, with a "
                             "wider interval (for development; its scorecard names the quick suite)")
    parser.add_argument("--compare", nargs="+", metavar="SCORECARD",
                        help="put these scorecard.json files side by side instead of benching")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    try:
        if args.compare:
            if args.spec is not None:
                raise BenchError("give a SPEC to bench, or --compare scorecards, not both")
            print(compare([read_scorecard(path) for path in args.compare]))
            return 0
        if args.spec is None:
            raise BenchError("give the agent to bench (e.g. dominoes bench td_lambda), or --compare A.json B.json")
        return _bench(args)
    except (BenchError, SuiteError, ScorecardError) as error:
        print(f"dominoes bench: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ndominoes bench: interrupted; every finished cell is kept: run the same command again to resume",
              file=sys.stderr)
        return 130


def _bench(args: argparse.Namespace) -> int:
    suite = load_suite(args.suite)
    if args.quick:
        suite = quick_suite(suite)
    workers = default_workers() if args.workers is None else options.count("--workers", args.workers, 1, MAX_WORKERS)
    out = Path(args.out) if args.out is not None else Path("runs") / "bench" / _directory_name(args.spec, suite.version)
    playable = playable_tables(suite, args.spec)  # a bad spec is one line before anything starts
    bar = None if args.no_progress else _progress_bar(sum(table.name in playable for table, _ in suite.cells()))
    start = time.time()
    try:
        scorecard = bench(args.spec, suite, out, workers=workers, backend=args.backend, ray_address=args.ray_address,
                          on_cell=None if bar is None else lambda _: bar.update())
    finally:
        if bar is not None:
            bar.close()
    written = [out / name for name in OUT_FILES if name != CELLS_FILE and (out / name).is_file()]
    print(scorecard.headline())
    print(f"{len(scorecard.cells)} cells in {time.time() - start:.0f} s; wrote {', '.join(map(str, written))}")
    return 0


def _directory_name(spec: str, version: str) -> str:
    """A directory name for a spec: its characters outside [A-Za-z0-9_.-] replaced."""
    return f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', spec).strip('_')[:80] or 'agent'}-{version}"


def _progress_bar(total: int):
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    tqdm.monitor_interval = 0  # no monitor thread: the worker processes are forked after the bar starts
    return tqdm(total=total, unit="cell", dynamic_ncols=True, file=sys.stderr)
