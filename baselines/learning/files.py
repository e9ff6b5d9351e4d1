"""A learner's files: where the trained ones ship, and writing them so that a reader never sees half of one."""

from __future__ import annotations

import os
from pathlib import Path

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


def write_atomically(path: Path, data: bytes) -> Path:
    """Write `data` to a file next to `path`, then rename it over `path` (an atomic replacement on
    one file system): a league loading weights while a run saves them reads the old file or the
    new one, never a mix. Permissions come from the umask, like any file the user writes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        partial.write_bytes(data)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path
