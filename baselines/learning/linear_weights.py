"""The file of a linear learner's weights: a small readable JSON object, validated fully when read back.

::

    {
      "format": "dominoes-linear-sarsa/1",
      "config": {"alpha": 0.05, "num_players": 4, ...},   # the learner's configuration of the run
      "weights": {"bias": -0.76, "tile_pips": -0.32, ...}, # one per feature, in the features' order
      "info": {"hands_trained": 40000, "seconds": 81.0}    # what the run recorded about itself
    }

Both linear learners write this file (:mod:`baselines.linear_sarsa`, :mod:`baselines.lookahead`):
each subclasses :class:`LinearWeights` with its own :class:`LinearFormat`. The keys of
``weights`` are the feature names; a file written for other features (another version of
the package) is refused rather than read with its numbers in the wrong places. Numbers are
written as Python's shortest exact form, so a file read back holds exactly the weights that
were saved.

Reading trusts nothing in the file: its size is bounded before it is read, then the format,
the configuration (every field within its bounds), the table it was trained for, the
feature names and each weight (a finite number) are checked. Every refusal is one
ValueError naming the file and what is wrong.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np

from baselines.learning.config import LearnerConfig
from baselines.learning.files import shipped_file, write_atomically
from dominoes_env import files
from dominoes_env.core.config import GameConfig, describe_table

MAX_FILE_BYTES = 2**20  #: a weights file is a few KB; anything larger than this is not one
#: The largest weight a file may hold. The features are scaled to a few units at most (a few
#: hundred on the largest table, 8 players double-18), so a value w . f stays far inside the
#: float64 range (about 1e308) for every legal move; trained weights are within +-10. A file
#: with 1e308 would pass a finiteness check and then overflow in the middle of a game.
MAX_WEIGHT = 1e6
_KEYS = ("format", "config", "weights", "info")


@dataclass(frozen=True)
class LinearFormat:
    """What one linear learner's weights file is.

    Attributes:
        name: the format written in the file, with its version ("dominoes-linear-sarsa/1").
        policy: the policy's name (in messages, and the shipped file's name).
        learner: the ``dominoes train`` sub-command that writes it.
        features: the feature names, in the weights' order.
        config_class: the learner's configuration class.
    """

    name: str
    policy: str
    learner: str
    features: tuple[str, ...]
    config_class: type[LearnerConfig]

    def problem(self, w: Any) -> str | None:
        """What is wrong with `w` as the weights of the features, or None."""
        if not isinstance(w, np.ndarray) or w.dtype != np.float64:
            return f"weights must be a float64 numpy array, got {getattr(w, 'dtype', type(w).__name__)}"
        if w.shape != (len(self.features),):
            return f"holds {w.shape} weights where the features need ({len(self.features)},)"
        if not np.isfinite(w).all():
            return f"{int(np.count_nonzero(~np.isfinite(w)))} of its {len(self.features)} weights are not finite"
        if np.abs(w).max(initial=0.0) > MAX_WEIGHT:
            return (f"{int(np.count_nonzero(np.abs(w) > MAX_WEIGHT))} of its weights exceed {MAX_WEIGHT:g} in "
                    f"magnitude, the most a weight can be")
        return None

    def shipped(self, config: GameConfig) -> Path:
        """The weights shipped with the package for a game (4 players, double-nine, the rule book's only).

        Raises:
            ValueError: none ship for this game.
        """
        return shipped_file(self.policy, "json", config, "weights file", self.learner)


@dataclass(frozen=True, eq=False)
class LinearWeights:
    """A linear learner's weights with the configuration that trained them; checked on construction.

    Each learner subclasses it and sets ``format`` (its features, its learner, its file format).

    Attributes:
        w: float64, one weight per feature, in the format's order.
        config: the training configuration (the table, the rules, the run's settings).
        info: what the run recorded about itself (JSON-compatible).

    Raises:
        ValueError: weights of another length, or not finite.
    """

    format: ClassVar[LinearFormat]
    w: np.ndarray
    config: LearnerConfig
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        problem = self.format.problem(self.w)
        if problem:
            raise ValueError(f"{self.format.policy} weights: {problem}")

    def __repr__(self) -> str:  # short: it appears in policy labels
        return f"Weights({describe_table(self.config.game)}, {self.info.get('hands_trained', '?')} hands)"

    def by_name(self) -> dict[str, float]:
        """{feature name: weight}, in the features' order."""
        return dict(zip(self.format.features, self.w.tolist()))


Weights = TypeVar("Weights", bound=LinearWeights)


def save_linear_weights(path: str | os.PathLike[str], weights: LinearWeights) -> Path:
    """Write `weights` as JSON (written next to `path` and renamed over it: a reader never sees half a file).

    Raises:
        ValueError: an `info` that is not JSON.
    """
    path = Path(path)
    content = {"format": weights.format.name, "config": weights.config.to_dict(), "weights": weights.by_name(),
               "info": weights.info}
    try:
        text = json.dumps(content, indent=2, allow_nan=False) + "\n"
    except (TypeError, ValueError) as error:
        raise ValueError(f"cannot save {weights.format.policy} weights {str(path)!r}: info is not JSON: "
                         f"{error}") from None
    return write_atomically(path, text.encode("utf-8"))


def load_linear_weights(path: str | os.PathLike[str], kind: type[Weights],
                        expected: GameConfig | None = None) -> Weights:
    """Read a file written by :func:`save_linear_weights` as weights of `kind` (its format).

    Args:
        path: the file.
        kind: the learner's weights class (the format the file must be in).
        expected: the game it must have been trained for (table size and table rules; None: any).

    Raises:
        ValueError: the file is missing, too large, not JSON, not a weights file of this format,
            written for other features, made for another game than `expected`, or a value in it
            fails a check.
    """
    form = kind.format
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"a {form.policy} weights file must be a file path, got {path!r}")
    name = str(path)

    def refused(what: str) -> ValueError:
        return ValueError(f"{form.policy} weights {name!r} {what}")

    content = _read_json(Path(path), refused)
    if not isinstance(content, dict) or content.get("format") != form.name:
        found = content.get("format") if isinstance(content, dict) else type(content).__name__
        raise refused(f"is not a {form.policy} weights file (format {found!r}, expected {form.name!r})")
    if sorted(content) != sorted(_KEYS):
        raise refused(f"must hold exactly the keys {list(_KEYS)}, got {sorted(content)}")
    try:
        config = form.config_class.from_dict(content["config"])
    except (TypeError, ValueError, RecursionError) as error:
        raise refused(f"has an unreadable configuration: {error}") from None
    if expected is not None and config.game != expected:
        raise refused(f"was trained for {describe_table(config.game)}, not {describe_table(expected)}")
    if not isinstance(content["info"], dict):
        raise refused(f"has an 'info' entry that is not a JSON object: {content['info']!r}")
    return kind(_read_weights(content["weights"], form, refused), config, content["info"])


def _read_json(path: Path, refused: Any) -> Any:
    """The file's JSON content, after checking that it is a regular file of a sensible size."""
    try:
        return json.loads(files.read_regular_file(path, MAX_FILE_BYTES).decode("utf-8"))
    except (OSError, files.FileRefused) as error:
        raise refused(files.why_unreadable(error)) from None
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise refused(f"is damaged or not JSON: {error}") from None


def _read_weights(values: Any, form: LinearFormat, refused: Any) -> np.ndarray:
    """One finite number per feature, keyed by the feature names in order."""
    features = form.features
    if not isinstance(values, dict):
        raise refused(f"has 'weights' that are not a JSON object of feature: weight, got {type(values).__name__}")
    if tuple(values) != features:
        missing, extra = sorted(set(features) - set(values)), sorted(set(values) - set(features))
        what = f"lacks {missing}" if missing else ""
        what += (" and " if missing and extra else "") + (f"has unknown {extra}" if extra else "")
        raise refused(f"was written for other features ({what or 'in another order'}); this version computes "
                      f"{list(features)}: train again with `dominoes train {form.learner}`")
    bad = [key for key, value in values.items()
           if isinstance(value, bool) or not isinstance(value, (int, float)) or not abs(value) <= MAX_WEIGHT]
    if bad:  # abs() of any JSON number is exact (10**400 too); NaN fails the comparison
        raise refused(f"has weights that are not finite numbers within +-{MAX_WEIGHT:g}: {bad}")
    return np.array([float(values[key]) for key in features], dtype=np.float64)
