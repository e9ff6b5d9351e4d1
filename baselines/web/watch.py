"""Watching records: the records of a directory (``dominoes serve --records DIR``, e.g. a league's
``--record-games`` output) or uploaded, as frames to step through, one hand at a time.

Each frame is a position of the record with every hand's tiles (the page shows the mover's, or
all of them at a toggle), the move that led to it, and for the move the mover's legal
alternatives with td_lambda's predicted pips left after each (where weights ship for the table).

Only files inside the directory are read: a name must be one that :meth:`RecordLibrary.names`
lists, which holds regular ``.json`` files found below the directory without following a link.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from baselines.advice import Hints
from baselines.web.table import table_data
from dominoes_env.core import actions, validation
from dominoes_env.core.observation import Observer
from dominoes_env.records import (
    RecordedGame,
    RecordError,
    loads_within_budget,
    parse_record,
    read_record,
    replay,
)

MAX_LISTED = 5000  #: records listed from a directory
#: The largest record taken as an upload: a whole game (one hand more than the double's value)
#: at the largest tables (8 players, 2 players, double-18) is 0.3-0.4 MB, a 20-hand game of the
#: play page less, so this takes games of about 200 hands there. Longer records are watched
#: from the --records directory, whose files may be up to the 32 MiB of any record.
MAX_UPLOAD_BYTES = 4 * 2**20


class RecordLibrary:
    """The ``.json`` files below `root` (links are not followed, in or out)."""

    def __init__(self, root: str | os.PathLike[str] | None) -> None:
        self.root = None if root is None else Path(root).resolve()

    def names(self) -> list[str]:
        """Paths relative to the root, sorted, at most :data:`MAX_LISTED`."""
        if self.root is None:
            return []
        found = []
        for directory, subdirectories, filenames in os.walk(self.root, followlinks=False):
            subdirectories.sort()
            for filename in sorted(filenames):
                path = Path(directory, filename)
                if filename.endswith(".json") and not path.is_symlink() and path.is_file():
                    found.append(path.relative_to(self.root).as_posix())
                    if len(found) >= MAX_LISTED:
                        return found
        return found

    def read(self, name: str) -> RecordedGame:
        """The record `name` (as :meth:`names` lists it), checked.

        Raises:
            KeyError: no such record in the directory (a name outside it included).
            RecordError: the file is not a valid record (one line).
        """
        if self.root is None or not isinstance(name, str) or name not in set(self.names()):
            raise KeyError(name)
        return read_record(self.root / name)


def parse_upload(body: bytes) -> RecordedGame:
    """A record uploaded as JSON text, parsed within a record's budget (:func:`loads_within_budget`).

    Raises:
        RecordError: over :data:`MAX_UPLOAD_BYTES` or the budget, not JSON, or not a valid record (one line).
    """
    if len(body) > MAX_UPLOAD_BYTES:
        raise RecordError(f"the upload is more than the {MAX_UPLOAD_BYTES:,} bytes an uploaded record may be")
    if not body.isascii():  # records are written in ASCII; other text costs more memory a byte parsed
        raise RecordError("the upload is not JSON of a record: a record is ASCII text (non-ASCII characters are "
                          "written as \\u escapes)")
    try:
        data = loads_within_budget(body)
    except (ValueError, RecursionError, MemoryError) as error:  # not UTF-8 or JSON, over budget, a number too long
        raise RecordError(f"the upload is not JSON of a record: {validation.reason(error)}") from None
    return parse_record(data, "upload")


def summary(recorded: RecordedGame) -> dict[str, Any]:
    """What the watch page shows before any frame: the table, who sat where, the hands."""
    config = recorded.config
    labels = list(recorded.players or [f"player_{seat}" for seat in range(config.num_players)])
    return {"players": config.num_players, "highest_double": config.highest_double, "labels": labels,
            "num_hands": recorded.num_hands, "hands": len(recorded.hands), "moves": recorded.num_moves}


def hand_frames(recorded: RecordedGame, hand_number: int, hints: Hints | None = None) -> list[dict[str, Any]]:
    """Every position of hand `hand_number` of the record (the deal, then after each move), each
    with the move that led to it and that move's alternatives.

    Raises:
        IndexError: no such hand in the record.
    """
    if not 0 <= hand_number < len(recorded.hands):
        raise IndexError(hand_number)
    config = recorded.config
    n = config.num_players
    labels = list(recorded.players or [f"player_{seat}" for seat in range(n)])
    observer = Observer(config, recorded.num_hands)
    frames: list[dict[str, Any]] = []
    before = None
    for position in replay(recorded):
        if position.hand_number < hand_number:
            continue
        if position.hand_number > hand_number:
            break
        move = None
        if position.move is not None and before is not None:
            move = {"seat": position.move.seat, "action": position.move.action, "text": position.move.text,
                    "label": labels[position.move.seat],
                    "alternatives": _alternatives(before, position.move.seat, observer, hints,
                                                  np.asarray(position.game_scores))}
        frames.append({"table": table_data(position.hand, shown=list(range(n)), labels=labels,
                                           game_scores=list(position.game_scores), hand_index=position.hand_index,
                                           num_hands=recorded.num_hands), "move": move,
                       "move_number": position.move_number})
        before = position.hand
    return frames


def _alternatives(hand: Any, seat: int, observer: Observer, hints: Hints | None,
                  game_scores: np.ndarray) -> list[dict[str, Any]]:
    """The mover's legal moves at `hand`, with td_lambda's predicted pips left after each."""
    mask = hand.legal_mask()
    legal = np.flatnonzero(mask).tolist()
    predicted = None
    if hints is not None:
        predicted = hints.predicted_pips(observer.encode(hand.state, seat, game_scores), mask)
    return [{"action": action, "text": actions.describe(hand.config, action, seat),
             "predicted_pips": None if predicted is None else round(float(predicted[k]), 2)}
            for k, action in enumerate(legal)]


__all__ = ["RecordError", "RecordLibrary", "hand_frames", "parse_upload", "summary"]
