"""``dominoes league``: run a league of policies, or re-rate a finished one, and print the table.

With no arguments it runs the default league (4 copies each of persistent_line, double,
greedy, random and stupid, plus learned policies that ship a checkpoint for the table; see
:mod:`baselines.league.spec`) for DEFAULT_GAMES full games of 4 players double-nine into
./league-out, on all cores. Running the same command again with the same --out resumes
(or only re-rates when every game is recorded).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import threading
import time
from typing import Any

from baselines.command_line import options
from baselines.harness.parallel import MAX_WORKERS, add_parallel_options, start_method
from baselines.harness.warmup import warm_up
from baselines.league.ratings import rate
from baselines.league.report import text_table, write_report
from baselines.league.results import GameRecord, check_out_directory, read_results, results_path
from baselines.league.runner import MAX_GAMES, count_recorded, game_record_path, record_directory, run_league
from baselines.league.spec import (
    DEFAULT_COPIES,
    DEFAULT_POLICIES,
    OPTIONAL_DEFAULT_POLICIES,
    LeagueError,
    LeagueSpec,
    default_policies,
    make_spec,
    parse_policy_arguments,
)
from dominoes_env.core import validation
from dominoes_env.core.config import MAX_HANDS_PER_GAME, table_arguments
from dominoes_env.files import FileRefused

DEFAULT_GAMES = 2000
COMPILING = "compiling the rules engine and the policies (first run only; cached for the next runs) ..."
DEFAULT_OUT = "league-out"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policies", nargs="+", metavar="POLICY",
                        help="policy specs, each NAME[(KEY=VALUE,...)][@CHECKPOINT][:COPIES] (copies default to "
                             f"{DEFAULT_COPIES}), e.g. persistent_line:4 'best_line(max_line_length=6):2'. "
                             f"Default: {' '.join(DEFAULT_POLICIES)}, {DEFAULT_COPIES} copies each, plus "
                             f"{' '.join(OPTIONAL_DEFAULT_POLICIES)} where it ships a trained player for the table")
    options.add_table_options(parser)
    parser.add_argument("--games", type=validation.integer_argument, default=DEFAULT_GAMES,
                        help=f"games the league should hold when done (1-{MAX_GAMES}, default {DEFAULT_GAMES})")
    parser.add_argument("--hands-per-game", type=validation.integer_argument, default=None,
                        help=f"hands per game (1-{MAX_HANDS_PER_GAME}; default N+1, a full game with engines N "
                             "down to 0)")
    options.add_seed_option(parser, "the tables, deals and policies")
    parser.add_argument("--out", default=DEFAULT_OUT,
                        help=f"directory for results.jsonl, ratings.md/.csv/.png (default ./{DEFAULT_OUT}); "
                             "an existing results file of the same league is resumed")
    add_parallel_options(parser)
    parser.add_argument("--record-games", metavar="DIR", default=None,
                        help="also write every game played as a game record (every move) into DIR, "
                             "game_00000012.json for game 12; see dominoes replay")
    parser.add_argument("--rate-only", metavar="DIR", default=None,
                        help="play nothing: recompute the table and plots from DIR/results.jsonl")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    try:
        _require_extras()
        out_dir = args.rate_only if args.rate_only is not None else _play(args)
        return _report(out_dir, played=args.rate_only is None)
    except LeagueError as error:
        print(f"dominoes league: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\ndominoes league: interrupted; every finished game is in {results_path(args.out)}; "
              f"run the same command again to resume", file=sys.stderr)
        return 130


def _require_extras() -> None:
    """The league's tables and plots need the ``league`` extra; say so before any game is played."""
    import importlib.util

    missing = [name for name in ("openskill", "matplotlib", "tqdm") if importlib.util.find_spec(name) is None]
    if missing:
        raise LeagueError(f"the league needs {', '.join(missing)}: pip install 'dominoes-env[league]'")


def _play(args: argparse.Namespace) -> str:
    try:
        config, seed = options.table(args), options.seed(args)
        games = options.count("--games", args.games, 1, MAX_GAMES)
        workers = None if args.workers is None else options.count("--workers", args.workers, 1, MAX_WORKERS)
        hands_per_game = (None if args.hands_per_game is None
                          else options.count("--hands-per-game", args.hands_per_game, 1, MAX_HANDS_PER_GAME))
    except ValueError as error:
        raise LeagueError(str(error)) from None
    if args.policies is None:
        policies = default_policies(config)
    else:
        policies = parse_policy_arguments(args.policies)
    spec = make_spec(policies, config, hands_per_game=hands_per_game, seed=seed)
    if args.record_games is not None:  # both refused before the compiling and the games, not after
        record_directory(args.record_games)
    try:
        check_out_directory(args.out)
    except FileRefused as error:
        raise LeagueError(str(error)) from None
    print(f"league: {spec.describe()}")
    warm_up([policy for policy, _ in spec.policies], spec.game, announce=lambda: print(COMPILING, flush=True),
            start_method=start_method())
    done = count_recorded(args.out)
    print(_opening(games, done, spec.hands_per_game, results_path(args.out), args.backend), flush=True)
    bar: Any = None  # made at the first finished game: its rate and ETA never count the workers' start
    played = 0
    importer: threading.Thread | None = None

    def record_played(record: GameRecord) -> None:
        nonlocal played, importer, bar
        if importer is None:  # the workers are all started by now: a thread cannot disturb their fork
            importer = _import_plotting_in_background()
        if bar is None:
            bar = _progress_bar(games, done + played, disabled=args.no_progress)
        played += 1
        bar.update(1)

    start = time.perf_counter()
    try:
        records = run_league(spec, games, args.out, args.backend, workers, args.ray_address, on_game=record_played,
                             record_dir=args.record_games)
    finally:
        if bar is not None:
            bar.close()
        if importer is not None:  # done by now, unless the run failed: it ends before the interpreter does
            importer.join(timeout=5.0)
    if args.record_games is not None:
        unrecorded = sum(not game_record_path(args.record_games, record.game).is_file() for record in records)
        if unrecorded:
            print(f"note: {unrecorded} games played before --record-games have no game record in "
                  f"{args.record_games}", file=sys.stderr)
    seconds = time.perf_counter() - start
    if played:
        hands = played * spec.hands_per_game
        print(f"played {played} games ({hands} hands) in {seconds:.1f} s: {played / seconds:.1f} games/s, "
              f"{hands / seconds:.0f} hands/s")
    return args.out


def _opening(games: int, done: int, hands: int, results: Any, backend: str) -> str:
    """What the league is about to do, said before it does it: how many games, resumed from where,
    and how to ask for fewer."""
    if done >= games:
        return f"{results} holds {done} games already, the {games} asked for: nothing to play (--games N for more)"
    resuming = f"resuming: {done} of the {games} games are in {results} already; " if done else ""
    first_look = f"; --games {max(1, games // 10)} for a first look" if games - done > 100 else ""
    return (f"{resuming}playing {games - done} games of {hands} hands into {results} ({backend} backend; the "
            f"progress bar and the time left start with the first finished games{first_look})")


def _import_plotting_in_background() -> threading.Thread:
    """Import the report's plotting library in a thread while the workers play the games: the
    0.3 s it takes then overlaps their work instead of following it."""
    from baselines.league.plot import import_plotting

    thread = threading.Thread(target=import_plotting, name="import-plotting", daemon=True)
    thread.start()
    return thread


def _progress_bar(total: int, done: int, disabled: bool):
    from tqdm import tqdm

    tqdm.monitor_interval = 0  # no monitor thread: the worker processes are forked after the bar starts
    return tqdm(total=total, initial=min(done, total), unit="game", dynamic_ncols=True,
                disable=disabled, smoothing=0.1)


def _report(out_dir: str, played: bool) -> int:
    """Rate the results in `out_dir`, print the table and write the report; `played`: this run
    wrote results (``--rate-only`` only reads them, and says so)."""
    contents = read_results(results_path(out_dir))
    if contents.spec is None or not contents.records:
        raise LeagueError(f"{results_path(out_dir)} holds no finished game yet")
    if contents.unfinished_tail:
        print(f"note: {results_path(out_dir)} ends with an unfinished line (a killed run); it was skipped",
              file=sys.stderr)
    ratings = rate(contents.spec, contents.records)
    print(f"\n{ratings.games} games: {contents.spec.describe()}\n")
    print(text_table(ratings))
    try:
        paths = write_report(ratings, out_dir, command_line(contents.spec, ratings.games))
    except (OSError, FileRefused) as error:  # a report file that is a device, a FIFO, a link: refused, not replaced
        raise LeagueError(f"cannot write the ratings into {out_dir!r}: {error}") from None
    written = [results_path(out_dir), *paths] if played else paths
    print("\nwrote " + ", ".join(map(str, written)) + ("" if played else f" (from {results_path(out_dir)})"))
    return 0


def command_line(spec: LeagueSpec, games: int) -> str:
    """The ``dominoes league`` command that plays `games` games of `spec` (written into ratings.md)."""
    policies = " ".join(shlex.quote(f"{policy.label}:{copies}") for policy, copies in spec.policies)
    rules = table_arguments(spec.game, size=False)
    return (f"dominoes league --policies {policies} --players {spec.num_players} --highest {spec.highest_double} "
            f"--hands-per-game {spec.hands_per_game} --games {games} --seed {spec.seed}{rules}")
