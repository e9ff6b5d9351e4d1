"""Running a league: resume from the results file, hand out the missing games, record them.

Backends only decide where :func:`~baselines.league.games.play_games` runs:

- ``local``: this process (one worker) or a multiprocessing pool (several);
- ``ray``: Ray tasks, on a cluster (``ray.init(address=...)``) or a local instance. On a
  cluster every node needs this package installed (or a Ray ``runtime_env`` that installs
  it), and checkpoint paths given as NAME@CHECKPOINT must exist on every node. An already
  initialised Ray session is used as it is.

Every backend returns chunks in game order and the runner writes them in that order, so
the results file is byte-for-byte the same whatever the backend, the number of workers or
the interruptions. A game a worker finished while an earlier one was still running is
played again after a kill; it is deterministic, so nothing changes but the time spent.
With a record directory, each game's record (every move; see :mod:`dominoes_env.records`)
is written there, atomically, before its results line: every game in the results file has
its record, even after a killed run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import closing
from pathlib import Path

from baselines.harness.parallel import BACKENDS, MAX_WORKERS, default_workers, ordered_map
from baselines.league.games import PlayedGame, play_games
from baselines.league.results import GameRecord, open_results, results_path
from baselines.league.spec import MAX_GAMES, LeagueError, LeagueSpec
from baselines.policies.registry import importable_current_directory
from dominoes_env import files
from dominoes_env.core import validation
from dominoes_env.records import write_record

MAX_CHUNK = 16  # games per task: large enough to hide the hand-out cost, small enough to balance

ChunkSource = Generator[list[PlayedGame], None, None]


def run_league(spec: LeagueSpec, games: int, out_dir: str | os.PathLike, backend: str = "local",
               workers: int | None = None, ray_address: str | None = None,
               on_game: Callable[[GameRecord], None] | None = None,
               record_dir: str | os.PathLike | None = None) -> tuple[GameRecord, ...]:
    """Play games 0..games-1 of `spec` into ``out_dir/results.jsonl``, skipping recorded ones.

    Args:
        spec: the league.
        games: how many games the league should hold when done.
        out_dir: where the results file lives (created if needed).
        backend: "local" or "ray".
        workers: processes (local) or Ray CPUs of a local instance; default: all cores.
        ray_address: a Ray cluster to join (backend "ray"); None starts a local instance.
        on_game: called after each game is recorded (progress display).
        record_dir: if given, each game played is also written there as a game record,
            ``game_00000012.json`` for game 12 (games recorded before are not played again).

    Returns:
        Every recorded game of the league, in game order.

    Raises:
        LeagueError: bad arguments, an unwritable directory, or a results file of another league.
    """
    try:
        games = validation.integer("the number of games", games, 1, MAX_GAMES)
        backend = validation.choice("backend", backend, BACKENDS)
        workers = validation.integer("the number of workers", default_workers() if workers is None else workers,
                                     1, MAX_WORKERS)
    except ValueError as error:
        raise LeagueError(str(error)) from None
    records = None if record_dir is None else record_directory(record_dir)
    recorded, writer = open_results(out_dir, spec)
    done = {record.game for record in recorded}
    missing = [game for game in range(games) if game not in done]
    played: list[GameRecord] = []
    search_path = (importable_current_directory(),)  # where the parent resolved import-path policies
    source = _chunk_source(backend, spec, _chunks(missing, workers), workers, ray_address, search_path,
                           records is not None)
    with writer, closing(source):  # closing stops the workers at once if recording fails or is interrupted
        for chunk in _reported(source):
            for game in chunk:
                if records is not None and game.record is not None:
                    write_record(game.record, game_record_path(records, game.result.game))
                writer.append(game.result)
                played.append(game.result)
                if on_game is not None:
                    on_game(game.result)
    return tuple(sorted((*recorded, *played), key=lambda record: record.game))


def game_record_path(record_dir: str | os.PathLike, game: int) -> Path:
    """Where ``run_league(..., record_dir=...)`` writes the record of game number `game`."""
    return Path(record_dir) / f"game_{game:08d}.json"


def record_directory(record_dir: str | os.PathLike) -> Path:
    """`record_dir`, created if needed; LeagueError if game records cannot be written there (checked
    with a file created and removed in it: :func:`dominoes_env.files.check_output_directory`)."""
    try:
        return files.check_output_directory("--record-games", record_dir)
    except files.FileRefused as error:
        raise LeagueError(str(error)) from None


def _reported(source: ChunkSource) -> Iterator[list[PlayedGame]]:
    """The chunks of `source`; a worker's failure (Ray wraps it with its traceback) becomes one
    LeagueError line. Every game recorded before it stays in the file."""
    while True:
        try:
            chunk = next(source)
        except StopIteration:
            return
        except LeagueError:
            raise
        except Exception as error:
            cause = getattr(error, "cause", None) or error
            if isinstance(cause, LeagueError):
                raise LeagueError(str(cause)) from error
            first = str(cause).strip().splitlines()[0] if str(cause).strip() else ""
            raise LeagueError(f"a league worker failed: {type(cause).__name__}: {first}") from error
        yield chunk


def count_recorded(out_dir: str | os.PathLike) -> int:
    """Complete game lines in the results file of `out_dir` (0 when there is none yet).

    A quick count for progress displays; :func:`run_league` does the checking.
    """
    path = results_path(out_dir)
    if not path.is_file():
        return 0
    with open(path, "rb") as handle:
        return max(0, sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b"")) - 1)


def _chunks(games: Sequence[int], workers: int) -> list[list[int]]:
    size = max(1, min(MAX_CHUNK, len(games) // (4 * workers)))
    return [list(games[i:i + size]) for i in range(0, len(games), size)]


def _chunk_source(backend: str, spec: LeagueSpec, chunks: list[list[int]], workers: int,
                  ray_address: str | None, search_path: tuple[str, ...], record_games: bool) -> ChunkSource:
    tasks = [(spec, chunk, search_path, record_games) for chunk in chunks]
    yield from ordered_map(_play_chunk, tasks, backend, workers, ray_address,
                           lambda: LeagueError("the ray backend needs Ray: pip install 'dominoes-env[ray]'"))


def _play_chunk(task: tuple[LeagueSpec, list[int], tuple[str, ...], bool]) -> list[PlayedGame]:
    spec, games, search_path, record_games = task
    return play_games(spec, games, search_path, record_games)
