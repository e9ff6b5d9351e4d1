"""A learner's files: where the trained ones ship, and writing them so that a reader never sees half of one."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

from dominoes_env import files
from dominoes_env.core.config import GameConfig, describe_table, make_config, table_arguments

#: The trained weights shipped in the package, ``POLICY_TABLE.EXTENSION`` (package data), where
#: TABLE is :func:`table_tag`'s, e.g. ``td_lambda_4p_d9.safetensors``,
#: ``td_lambda_6p_d12_mexican_train.safetensors``.
SHIPPED_DIRECTORY = Path(__file__).resolve().parent.parent / "checkpoints"
_TAGGED = re.compile(r"(\d+)p_d(\d+)(?:_(mexican_train))?$")


def table_tag(config: GameConfig) -> str | None:
    """The table's part of a shipped file's name: ``4p_d9`` for the rule book's game,
    ``6p_d12_mexican_train`` for the Mexican Train rules; None for rules no file is named for."""
    size = f"{config.num_players}p_d{config.highest_double}"
    return {"rule_book": size, "mexican_train": f"{size}_mexican_train"}.get(config.rule_set or "")


def shipped_tables(policy: str, extension: str) -> list[GameConfig]:
    """The tables a trained file of `policy` ships for: the rule book's first, then by size."""
    tables = []
    for path in sorted(SHIPPED_DIRECTORY.glob(f"{policy}_*.{extension}")):
        found = _TAGGED.match(path.name[len(policy) + 1:-len(extension) - 1])
        if found:
            tables.append(make_config(int(found[1]), int(found[2]), rules=found[3] or "rule_book"))
    return sorted(tables, key=lambda table: (not table.is_default, table.highest_double, table.num_players))


def shipped_file(policy: str, extension: str, config: GameConfig, what: str, learner: str,
                 argument: str = "checkpoint") -> Path:
    """The trained `what` (e.g. "checkpoint") shipped for `policy` at a table; `argument`: the
    keyword that takes a file of one's own instead, named in the error.

    Raises:
        ValueError: none ships for this table; the message lists the tables that have one and
            gives the command that trains the missing one.
    """
    tag = table_tag(config)
    path = SHIPPED_DIRECTORY / f"{policy}_{tag}.{extension}"
    if tag is None or not path.is_file():
        tables = "; ".join(describe_table(table) for table in shipped_tables(policy, extension)) or "none"
        raise ValueError(f"no {policy} {what} ships for {describe_table(config)} (it ships for: {tables}); train "
                         f"one with `dominoes train {learner}{table_arguments(config)}` and pass {argument}=PATH")
    return path


def file_version(checkpoint: str | os.PathLike[str] | None, shipped: Callable[[], Path],
                 what: str, limit: int | None = None) -> tuple[str, int, int]:
    """(resolved path, modification time, size) of the file `checkpoint` (default: ``shipped()``):
    the key under which a learned policy caches what it loaded, so that the league's fresh
    policies for every game read each version of a file once.

    Raises:
        ValueError: no such file, not a regular file (a FIFO, a device, a directory: said
            so, with `what` the file is, e.g. "td_lambda checkpoint"), larger than `limit`
            bytes, or none ships.
    """
    path = (shipped() if checkpoint is None else Path(checkpoint)).resolve()
    try:
        files.check_regular_file(path, limit)
    except (OSError, files.FileRefused) as error:
        raise ValueError(f"{what} {str(path)!r} {files.why_unreadable(error)}") from None
    stat = path.stat()
    return str(path), stat.st_mtime_ns, stat.st_size


Held = TypeVar("Held", bound="HasConfig")
Acting = TypeVar("Acting")


class HasConfig(Protocol):
    """Trained weights in memory: they carry the configuration of the run that trained them."""

    @property
    def config(self) -> HasTable: ...


def weights_for_table(checkpoint: object, table: GameConfig, *, held: type[Held], held_name: str, file_kind: str,
                      shipped: Callable[[GameConfig], Path], read: Callable[[str, int, int, GameConfig], Acting],
                      adopt: Callable[[Held], Acting]) -> Acting:
    """What a learned policy acts with, from its `checkpoint` argument: weights in memory (of type
    `held`, trained for `table`) through `adopt`; a file path, or None for the file that ships for
    `table`, through ``read(path, mtime, size, table)`` (:func:`file_version`'s key, so a policy
    caches each version of a file once).

    Raises:
        ValueError: weights trained for another table (``"{held_name} were trained for ..."``), a
            file missing or refused (named as `file_kind`), none ships, or another type.
    """
    if isinstance(checkpoint, held):
        trained_for = checkpoint.config.game
        if trained_for != table:
            raise ValueError(f"{held_name} were trained for {describe_table(trained_for)}, not {describe_table(table)}")
        return adopt(checkpoint)
    if checkpoint is None or isinstance(checkpoint, (str, os.PathLike)):
        return read(*file_version(checkpoint, lambda: shipped(table), file_kind), table)
    learner = held_name.split()[0]  # "PPOWeights" names its learner, "Checkpoint" does not
    named = held.__name__
    if not named.lower().startswith(learner.replace("_", "")):
        named = f"{learner} {named}"
    raise ValueError(f"checkpoint must be a file path or {named}, got {checkpoint!r}")


def read_info(metadata: dict[str, str], refused: Callable[[str], ValueError]) -> dict[str, Any]:
    """The ``info`` entry of a weights file's metadata (what run wrote it) as a dict; `refused(reason)`
    makes the one-line error that names the file."""
    try:
        info = json.loads(metadata.get("info", "{}"))
    except (TypeError, ValueError, RecursionError) as error:
        raise refused(f"has an unreadable 'info' entry: {error}") from None
    if not isinstance(info, dict):
        raise refused(f"has an 'info' entry that is not a JSON object: {info!r}")
    return info


class HasTable(Protocol):
    """A learner's configuration: the table it learns, among its fields."""

    @property
    def game(self) -> GameConfig: ...


Trained = TypeVar("Trained", bound=HasTable)


def read_config(metadata: dict[str, str], from_json: Callable[[str], Trained], expected: GameConfig | None,
                refused: Callable[[str], ValueError]) -> Trained:
    """The configuration in a weights file's ``config`` entry, read by `from_json`, after checking that
    it was trained for the `expected` table (None: any); `refused(reason)` makes the one-line error."""
    try:
        config = from_json(metadata["config"])
    except (KeyError, TypeError, ValueError, RecursionError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise refused(f"has an unreadable configuration: {reason}") from None
    if expected is not None and config.game != expected:
        raise refused(f"was trained for {describe_table(config.game)}, not {describe_table(expected)}")
    return config


@contextmanager
def opened_safetensors(path: Any, what: str, max_bytes: int) -> Iterator[tuple[Any, Callable[[str], ValueError]]]:
    """A learner's safetensors file opened for reading in numpy, with `refused(reason)`, the one-line
    ValueError that names it (``"{what} '{path}' {reason}"``): what every reader of weights checks
    before its own checks (a path, a regular file of at most `max_bytes`, since safetensors maps the
    file: no FIFO, no device) and the read errors, as refusals of the file."""
    from safetensors import SafetensorError, safe_open  # the learned players' extra, read when first needed

    if not isinstance(path, (str, os.PathLike)):
        # ValueError, as for every other refusal here: callers catch one exception type.
        raise ValueError(f"{what} must be a file path, got {path!r}")
    name = str(path)

    def refused(reason: str) -> ValueError:
        return ValueError(f"{what} {name!r} {reason}")

    try:
        files.check_regular_file(path, max_bytes)
    except (OSError, files.FileRefused) as error:
        raise refused(files.why_unreadable(error)) from None
    try:
        with safe_open(name, framework="np") as handle:
            yield handle, refused
    except SafetensorError as error:
        raise refused(f"is damaged or not a safetensors file: {error}") from None
    except OSError as error:
        raise refused(f"cannot be read: {error.strerror or error}") from None


def ships(shipped: Callable[[GameConfig], Path], config: GameConfig) -> bool:
    """Whether `shipped` finds a trained file for this game (what a learned policy's
    ``plays_by_default`` answers)."""
    try:
        shipped(config)
    except ValueError:
        return False
    return True


def write_atomically(path: Path, data: bytes) -> Path:
    """Write `data` whole (:func:`dominoes_env.files.write_atomically`), creating the directory: a
    league loading weights while a run saves them reads the old file or the new one, never a mix.

    Raises:
        FileRefused: `path` exists and is not a regular file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    return files.write_atomically(path, data)
