"""The weights file: a small readable JSON object, validated fully when read back.

::

    {
      "format": "dominoes-linear-sarsa/1",
      "config": {"alpha": 0.05, "num_players": 4, ...},   # the LinearSarsaConfig of the run
      "weights": {"bias": -0.76, "tile_pips": -0.32, ...}, # one per feature, in FEATURES order
      "info": {"hands_trained": 40000, "seconds": 81.0}    # what the run recorded about itself
    }

The keys of ``weights`` are the feature names (:data:`~baselines.linear_sarsa.features.FEATURES`);
a file written for other features (another version of the package) is refused rather than
read with its numbers in the wrong places. Numbers are written as Python's shortest exact
form, so a file read back holds exactly the weights that were saved.

Reading trusts nothing in the file: its size is bounded before it is read, then the format,
the configuration (every field within its bounds), the table it was trained for, the
feature names and each weight (a finite number) are checked. Every refusal is one
ValueError naming the file and what is wrong.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from baselines.learning.files import SHIPPED_DIRECTORY, shipped_file, write_atomically
from baselines.linear_sarsa.config import LinearSarsaConfig
from baselines.linear_sarsa.features import FEATURES
from dominoes_env.core.config import GameConfig, describe_table

WEIGHTS_FORMAT = "dominoes-linear-sarsa/1"
MAX_FILE_BYTES = 2**20  #: a weights file is about 2 KB; anything larger than this is not one
SHIPPED_WEIGHTS = SHIPPED_DIRECTORY
_KEYS = ("format", "config", "weights", "info")


@dataclass(frozen=True, eq=False)
class Weights:
    """The weights w of Q(s, a) = w . f(s, a) with the configuration that trained them; checked on construction.

    Attributes:
        w: float64, one weight per feature of :data:`FEATURES`, in that order.
        config: the training configuration (the table, the rules, the run's settings).
        info: what the run recorded about itself (JSON-compatible).

    Raises:
        ValueError: weights of another length, or not finite.
    """

    w: np.ndarray
    config: LinearSarsaConfig
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        problem = weights_problem(self.w)
        if problem:
            raise ValueError(f"linear_sarsa weights: {problem}")

    def __repr__(self) -> str:  # short: it appears in policy labels
        return f"Weights({describe_table(self.config.game)}, {self.info.get('hands_trained', '?')} hands)"

    def by_name(self) -> dict[str, float]:
        """{feature name: weight}, in the order of :data:`FEATURES`."""
        return dict(zip(FEATURES, self.w.tolist()))


def weights_problem(w: Any) -> str | None:
    """What is wrong with `w` as the weights of the features, or None."""
    if not isinstance(w, np.ndarray) or w.dtype != np.float64:
        return f"weights must be a float64 numpy array, got {getattr(w, 'dtype', type(w).__name__)}"
    if w.shape != (len(FEATURES),):
        return f"holds {w.shape} weights where the features need ({len(FEATURES)},)"
    if not np.isfinite(w).all():
        return f"{int(np.count_nonzero(~np.isfinite(w)))} of its {len(FEATURES)} weights are not finite"
    return None


def save_weights(path: str | os.PathLike[str], weights: Weights) -> Path:
    """Write `weights` as JSON (written next to `path` and renamed over it: a reader never sees half a file).

    Raises:
        ValueError: an `info` that is not JSON.
    """
    path = Path(path)
    content = {"format": WEIGHTS_FORMAT, "config": asdict(weights.config), "weights": weights.by_name(),
               "info": weights.info}
    try:
        text = json.dumps(content, indent=2, allow_nan=False) + "\n"
    except (TypeError, ValueError) as error:
        raise ValueError(f"cannot save linear_sarsa weights {str(path)!r}: info is not JSON: {error}") from None
    return write_atomically(path, text.encode("utf-8"))


def load_weights(path: str | os.PathLike[str], expected: GameConfig | None = None) -> Weights:
    """Read a file written by :func:`save_weights`.

    Args:
        path: the file.
        expected: the game it must have been trained for (table size and table rules; None: any).

    Raises:
        ValueError: the file is missing, too large, not JSON, not a linear_sarsa weights
            file, written for other features, made for another game than `expected`, or a
            value in it fails a check.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"a linear_sarsa weights file must be a file path, got {path!r}")
    name = str(path)

    def refused(what: str) -> ValueError:
        return ValueError(f"linear_sarsa weights {name!r} {what}")

    content = _read_json(Path(path), refused)
    if not isinstance(content, dict) or content.get("format") != WEIGHTS_FORMAT:
        found = content.get("format") if isinstance(content, dict) else type(content).__name__
        raise refused(f"is not a linear_sarsa weights file (format {found!r}, expected {WEIGHTS_FORMAT!r})")
    if sorted(content) != sorted(_KEYS):
        raise refused(f"must hold exactly the keys {list(_KEYS)}, got {sorted(content)}")
    try:
        config = LinearSarsaConfig.from_dict(content["config"])
    except (TypeError, ValueError, RecursionError) as error:
        raise refused(f"has an unreadable configuration: {error}") from None
    if expected is not None and config.game != expected:
        raise refused(f"was trained for {describe_table(config.game)}, not {describe_table(expected)}")
    if not isinstance(content["info"], dict):
        raise refused(f"has an 'info' entry that is not a JSON object: {content['info']!r}")
    return Weights(_read_weights(content["weights"], refused), config, content["info"])


def _read_json(path: Path, refused: Any) -> Any:
    """The file's JSON content, after checking that it is a file of a sensible size."""
    if not path.is_file():
        raise refused("does not exist" if not path.exists() else "is not a file")
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise refused(f"is {size:,} bytes, more than a weights file can be ({MAX_FILE_BYTES:,})")
        return json.loads(path.read_bytes().decode("utf-8"))
    except OSError as error:
        raise refused(f"cannot be read: {error.strerror or error}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise refused(f"is damaged or not JSON: {error}") from None


def _read_weights(values: Any, refused: Any) -> np.ndarray:
    """One finite number per feature, keyed by the feature names in order."""
    if not isinstance(values, dict):
        raise refused(f"has 'weights' that are not a JSON object of feature: weight, got {type(values).__name__}")
    if tuple(values) != FEATURES:
        missing, extra = sorted(set(FEATURES) - set(values)), sorted(set(values) - set(FEATURES))
        what = f"lacks {missing}" if missing else ""
        what += (" and " if missing and extra else "") + (f"has unknown {extra}" if extra else "")
        raise refused(f"was written for other features ({what or 'in another order'}); this version computes "
                      f"{list(FEATURES)}: train again with `dominoes train sarsa`")
    bad = [key for key, value in values.items()
           if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)]
    if bad:
        raise refused(f"has weights that are not finite numbers: {bad}")
    return np.array([float(values[key]) for key in FEATURES], dtype=np.float64)


def shipped_weights(config: GameConfig) -> Path:
    """The weights shipped with the package for a game (4 players, double-nine, the rule book's only).

    Raises:
        ValueError: none ship for this game.
    """
    return shipped_file("linear_sarsa", "json", config, "weights file", "sarsa")
