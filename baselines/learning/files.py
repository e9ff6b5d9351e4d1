"""A learner's files: where the trained ones ship, and writing them so that a reader never sees half of one."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from dominoes_env import files
from dominoes_env.core.config import GameConfig, describe_table

#: The trained weights shipped in the package, ``POLICY_4p_d9.EXTENSION`` (package data).
SHIPPED_DIRECTORY = Path(__file__).resolve().parent.parent / "checkpoints"


def shipped_file(policy: str, extension: str, config: GameConfig, what: str, learner: str) -> Path:
    """The trained `what` (e.g. "checkpoint") shipped for `policy` at a game: 4 players, double-nine,
    the rule book's game only.

    Raises:
        ValueError: none ships for this game; the message says how to train one (``dominoes train LEARNER``).
    """
    path = SHIPPED_DIRECTORY / f"{policy}_{config.num_players}p_d{config.highest_double}.{extension}"
    if not path.is_file() or not config.is_default:
        raise ValueError(f"no {policy} {what} ships for {describe_table(config)} (only 4 players, double-nine, "
                         f"rule book); train one with `dominoes train {learner}` and pass checkpoint=PATH")
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
