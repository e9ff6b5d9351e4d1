"""A learner's files: where the trained ones ship, and writing them so that a reader never sees half of one."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def shipped_file(policy: str, extension: str, config: GameConfig, what: str, learner: str) -> Path:
    """The trained `what` (e.g. "checkpoint") shipped for `policy` at a table.

    Raises:
        ValueError: none ships for this table; the message lists the tables that have one and
            gives the command that trains the missing one.
    """
    tag = table_tag(config)
    path = SHIPPED_DIRECTORY / f"{policy}_{tag}.{extension}"
    if tag is None or not path.is_file():
        tables = "; ".join(describe_table(table) for table in shipped_tables(policy, extension)) or "none"
        raise ValueError(f"no {policy} {what} ships for {describe_table(config)} (it ships for: {tables}); train "
                         f"one with `dominoes train {learner}{table_arguments(config)}` and pass checkpoint=PATH")
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
