"""The results file: the league's only data. Ratings, tables and plots are computed from it.

``results.jsonl`` holds one JSON object per line. The first line is the header: the
league's :class:`~baselines.league.spec.LeagueSpec`. Each further line is one finished
game (:class:`GameRecord`), written in game order as one ``write`` and flushed to the
operating system at once, so a killed run keeps every game it wrote (see
:class:`ResultsWriter` for fsync).

Damage is handled this way:

- The last line without its newline is an unfinished write from a killed run: reading
  skips it (and says so), and a resumed run cuts it off and plays that game again. Games
  are deterministic, so the replay gives the same record.
- Any other line that is not a valid record (bad JSON, wrong fields, a game the league's
  schedule does not produce, a game recorded twice) is an error naming the file and the
  line. Nothing is rewritten: every recorded game stays on disk.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from baselines.league.schedule import plan_game
from baselines.league.spec import MAX_GAMES, LeagueError, LeagueSpec
from dominoes_env import files
from dominoes_env.core import validation
from dominoes_env.core.state import engine_value_for_hand

fcntl: Any
try:
    import fcntl
except ImportError:  # Windows has no POSIX file locks
    fcntl = None

RESULTS_NAME = "results.jsonl"
REPORT_NAMES = ("ratings.md", "ratings.csv", "ratings.png")  #: written beside it by the report
#: The longest line read: a game of 1,000 hands at 8 seats is about 50 KB.
MAX_LINE_BYTES = 2**20
FORMAT = "dominoes-league-results"
FORMAT_VERSION = 2  # 2: the header says highest_double (0.2.0); version 1 files are still read
READABLE_VERSIONS = (1, 2)


class ResultsError(LeagueError):
    """A results file that cannot be read or does not belong to the league asked for."""


@dataclass(frozen=True)
class GameRecord:
    """One finished game. Lists are by seat; ``hand_scores[h][seat]`` is pips left after hand h.

    Attributes:
        game: the game index in the league's schedule.
        seed: the seed the deals came from.
        seats: the league entry in each seat.
        policies: the policy label in each seat.
        hand_scores: pips left per hand and seat (lower is better).
        totals: game score per seat (the sum over hands).
        went_out: per hand, the seat that went out, or None if the hand was blocked.
    """

    game: int
    seed: int
    seats: tuple[int, ...]
    policies: tuple[str, ...]
    hand_scores: tuple[tuple[int, ...], ...]
    totals: tuple[int, ...]
    went_out: tuple[int | None, ...]

    def to_line(self) -> bytes:
        data = {"game": self.game, "seed": self.seed, "seats": list(self.seats), "policies": list(self.policies),
                "hand_scores": [list(h) for h in self.hand_scores], "totals": list(self.totals),
                "went_out": list(self.went_out)}
        return (json.dumps(data, separators=(",", ":")) + "\n").encode()

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameRecord:
        return cls(
            game=_int(data["game"]), seed=_int(data["seed"]),
            seats=tuple(_int(s) for s in data["seats"]), policies=tuple(str(p) for p in data["policies"]),
            hand_scores=tuple(tuple(_int(x) for x in hand) for hand in data["hand_scores"]),
            totals=tuple(_int(t) for t in data["totals"]),
            went_out=tuple(None if w is None else _int(w) for w in data["went_out"]),
        )


@dataclass(frozen=True)
class ResultsContents:
    """What a results file holds: its league, its games by index, and whether an
    unfinished last line (from a killed run) was skipped."""

    spec: LeagueSpec | None
    records: tuple[GameRecord, ...]
    unfinished_tail: bool
    complete_size: int  # bytes up to the end of the last complete line


def results_path(out_dir: str | os.PathLike) -> Path:
    return Path(out_dir) / RESULTS_NAME


def check_out_directory(out_dir: str | os.PathLike) -> Path:
    """The league's ``--out``, created if needed, refused (before any game) if it takes no new file
    or if the results file or a report file in it is anything but a regular file.

    Raises:
        FileRefused: naming --out, the directory and what is wrong.
    """
    return files.check_output_directory("--out", out_dir, (RESULTS_NAME, *REPORT_NAMES))


def read_results(path: str | os.PathLike) -> ResultsContents:
    """Read and check a results file; records come back sorted by game index.

    Raises:
        ResultsError: a missing file, or a line that is not a valid header or record
            (the message names the file and the line).
    """
    path = Path(path)
    try:
        handle = files.open_regular_file(path)
    except FileNotFoundError:
        raise ResultsError(f"{path}: no results file here (run a league with --out first)") from None
    except files.FileRefused as error:
        raise ResultsError(f"{path} {error}; a league's results file is written by dominoes league --out DIR") from None
    except OSError as error:
        raise ResultsError(f"{path}: cannot read the results file: {error.strerror or error}") from None
    with handle:
        lines, complete_size, unfinished = _complete_lines(path, handle)
    if not lines:
        return ResultsContents(None, (), unfinished, complete_size)
    spec = _parse_header(path, lines[0])
    records: dict[int, tuple[int, GameRecord]] = {}
    for number, line in enumerate(lines[1:], start=2):
        record = _parse_record(path, number, line, spec)
        if record.game in records:
            raise ResultsError(f"{path}, line {number}: game {record.game} is recorded twice "
                               f"(also on line {records[record.game][0]})")
        records[record.game] = (number, record)
    ordered = tuple(records[game][1] for game in sorted(records))
    return ResultsContents(spec, ordered, unfinished, complete_size)


def _complete_lines(path: Path, handle: IO[bytes]) -> tuple[list[bytes], int, bool]:
    """The file's complete lines (without their newlines), the bytes they take, and whether an
    unfinished last line follows. Read line by line, each at most MAX_LINE_BYTES, and at most
    one header and MAX_GAMES games: a file that is not a league's never fills the memory.

    Raises:
        ResultsError: a line too long, or more lines than a league can hold.
    """
    lines: list[bytes] = []
    complete_size = 0
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line.endswith(b"\n"):
            if len(line) > MAX_LINE_BYTES:
                raise ResultsError(f"{path}, line {len(lines) + 1}: longer than {MAX_LINE_BYTES:,} bytes; not a "
                                   f"league results file")
            return lines, complete_size, bool(line)
        if len(lines) > MAX_GAMES:
            raise ResultsError(f"{path}: more than {MAX_GAMES:,} games; not a league results file")
        lines.append(line[:-1])
        complete_size += len(line)


def header_line(spec: LeagueSpec) -> bytes:
    return (json.dumps({"format": FORMAT, "version": FORMAT_VERSION, "league": spec.to_json()},
                       separators=(",", ":")) + "\n").encode()


class ResultsWriter:
    """Appends records to a results file.

    Each record is flushed to the operating system as it is written, so a killed run
    keeps every game it wrote. ``fsync`` (which only matters if the machine itself goes
    down) runs at most every FSYNC_INTERVAL seconds and on close: on a busy disk one
    fsync per game cost a quarter of a one-worker run. A game lost that way is replayed,
    identically, on resume.
    """

    FSYNC_INTERVAL = 1.0

    def __init__(self, path: Path) -> None:
        self.path = path
        try:  # only a regular file: a FIFO, a device or a link in its place is refused, not followed
            self._file = files.open_for_writing(path, append=True)
        except (files.FileRefused, OSError) as error:
            raise ResultsError(f"cannot write results to {str(path)!r}: {getattr(error, 'strerror', None) or error}"
                               ) from None
        self._last_sync = time.monotonic()
        self._lock()

    def _lock(self) -> None:
        """Hold an exclusive lock on the file while writing: two runs on one directory would
        both append the same games and leave a file that can no longer be resumed."""
        if fcntl is None:  # no POSIX locks (Windows): one run per directory is the user's care
            return
        try:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._file.close()
            raise ResultsError(f"another league run is writing {self.path}; wait for it to finish "
                               f"or choose another --out directory") from None

    def append(self, record: GameRecord) -> None:
        self._write(record.to_line())

    def write_header(self, spec: LeagueSpec) -> None:
        self._write(header_line(spec))
        self._sync()

    def _write(self, line: bytes) -> None:
        self._file.write(line)
        self._file.flush()
        if time.monotonic() - self._last_sync >= self.FSYNC_INTERVAL:
            self._sync()

    def _sync(self) -> None:
        os.fsync(self._file.fileno())
        self._last_sync = time.monotonic()

    def close(self) -> None:
        if not self._file.closed:
            self._sync()
            self._file.close()

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_results(out_dir: str | os.PathLike, spec: LeagueSpec) -> tuple[tuple[GameRecord, ...], ResultsWriter]:
    """Open (or start) the results file of `spec` in `out_dir` for appending.

    A new or empty file gets the header. An existing one must belong to the same league;
    its unfinished last line, if any, is cut off. Returns the games already recorded and
    the writer.

    Raises:
        ResultsError: the directory is not writable, or the file belongs to another league
            or is damaged (nothing is changed then).
    """
    path = results_path(out_dir)
    try:
        check_out_directory(out_dir)
    except files.FileRefused as error:
        raise ResultsError(f"{error}; choose a writable directory with --out") from None
    writer = ResultsWriter(path)  # locks the file before anything is read or cut
    try:
        contents = read_results(path)
        if contents.spec is not None and contents.spec != spec:
            raise ResultsError(f"{path} holds a different league ({contents.spec.describe()}) than the one asked "
                               f"for ({spec.describe()}); use another --out directory, or the same options to resume")
    except ResultsError:
        writer.close()
        raise
    if contents.unfinished_tail:
        os.truncate(path, contents.complete_size)
    if contents.spec is None:
        writer.write_header(spec)
    return contents.records, writer


def _parse_header(path: Path, line: bytes) -> LeagueSpec:
    try:
        data = json.loads(line)
        if data.get("format") != FORMAT:
            raise ValueError(f"not a league results header (format {data.get('format')!r})")
        if data.get("version") not in READABLE_VERSIONS:
            raise ValueError(f"format version {data.get('version')!r}; this program reads versions "
                             f"{list(READABLE_VERSIONS)}")
        return LeagueSpec.from_json(data["league"])
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
        raise ResultsError(f"{path}, line 1: not a valid league header: {validation.reason(error)}") from None


def _parse_record(path: Path, number: int, line: bytes, spec: LeagueSpec) -> GameRecord:
    try:
        data = json.loads(line)
        if not isinstance(data, dict):
            raise ValueError("a game record is a JSON object")
        record = GameRecord.from_json(data)
        _check_record(record, spec)
        return record
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
        raise ResultsError(f"{path}, line {number}: not a valid game record: {validation.reason(error)}") from None


def _check_record(record: GameRecord, spec: LeagueSpec) -> None:
    """A record must be the game the league's schedule plays, with scores of the right shape."""
    plan = plan_game(spec, record.game)
    if record.seed != plan.deal_seed or record.seats != plan.seats:
        raise ValueError(f"game {record.game} has seed/seats {record.seed}/{list(record.seats)}, but this league "
                         f"plays it with {plan.deal_seed}/{list(plan.seats)} (a file from another league?)")
    labels = tuple(spec.entries[entry].label for entry in plan.seats)
    if record.policies != labels:
        raise ValueError(f"game {record.game} names policies {list(record.policies)}, expected {list(labels)}")
    shape = (spec.hands_per_game, spec.num_players)
    if len(record.hand_scores) != shape[0] or any(len(hand) != shape[1] for hand in record.hand_scores):
        raise ValueError(f"game {record.game}: hand_scores must be {shape[0]} hands x {shape[1]} seats")
    config = spec.game
    most = config.total_pips
    if any(not 0 <= score <= most for hand in record.hand_scores for score in hand):
        raise ValueError(f"game {record.game}: a hand score is outside 0..{most}, the pips of the set")
    if record.totals != _column_sums(record.hand_scores):
        raise ValueError(f"game {record.game}: totals {list(record.totals)} are not the sums of the hand scores")
    if len(record.went_out) != shape[0]:
        raise ValueError(f"game {record.game}: went_out must give one entry per hand ({shape[0]})")
    engines = [engine_value_for_hand(config, hand) for hand in range(shape[0])]
    for hand, (scores, seat) in enumerate(zip(record.hand_scores, record.went_out)):
        if seat is None:
            _check_blocked(record.game, hand, scores, engines[hand])
            continue
        if not 0 <= seat < spec.num_players:
            raise ValueError(f"game {record.game}, hand {hand}: went_out {seat} is not a seat "
                             f"(0..{spec.num_players - 1}, or null for a blocked hand)")
        if scores[seat] != 0:
            raise ValueError(f"game {record.game}, hand {hand}: seat {seat} went out but holds {scores[seat]} pips")


def _check_blocked(game: int, hand: int, scores: Sequence[int], engine: int) -> None:
    """What a blocked hand's scores must show: every seat still holds a tile, and the one tile worth 0
    pips is (0|0) (rule 10: holding only (0|0) scores 0 without going out), so at most one seat scores
    0, and none in the hand whose engine is (0|0) itself. A hand whose seat went out, written as
    blocked, shows here unless only that seat scored 0 outside the last engine's hand."""
    zeros = sum(score == 0 for score in scores)
    if zeros > 1 or (zeros and engine == 0):
        why = "and the engine is (0|0)" if engine == 0 else "one seat at most"
        raise ValueError(f"game {game}, hand {hand}: went_out is null (blocked) but {zeros} seat(s) hold 0 pips; in a "
                         f"blocked hand only the holder of (0|0) can, {why}")


def _column_sums(rows: Sequence[Sequence[int]]) -> tuple[int, ...]:
    return tuple(int(sum(column)) for column in zip(*rows))


def _int(value: Any) -> int:
    """A JSON integer (the package's one notion of an integer; true and 3.0 are not)."""
    number = validation.as_integer(value)
    if number is None:
        raise ValueError(f"expected an integer, got {value!r}")
    return number
