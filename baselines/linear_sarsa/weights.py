"""The weights file: the linear learners' small readable JSON file
(:mod:`baselines.learning.linear_weights`, which reads it back fully validated), in the
format ``dominoes-linear-sarsa/1``::

    {
      "format": "dominoes-linear-sarsa/1",
      "config": {"alpha": 0.05, "num_players": 4, ...},   # the LinearSarsaConfig of the run
      "weights": {"bias": -0.76, "tile_pips": -0.32, ...}, # one per feature, in FEATURES order
      "info": {"hands_trained": 40000, "seconds": 81.0}    # what the run recorded about itself
    }
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from baselines.learning.files import SHIPPED_DIRECTORY
from baselines.learning.linear_weights import (
    MAX_FILE_BYTES,
    LinearFormat,
    LinearWeights,
    load_linear_weights,
    save_linear_weights,
)
from baselines.linear_sarsa.config import LinearSarsaConfig
from baselines.linear_sarsa.features import FEATURES
from dominoes_env.core.config import GameConfig

WEIGHTS_FORMAT = "dominoes-linear-sarsa/1"
SHIPPED_WEIGHTS = SHIPPED_DIRECTORY
__all__ = ["MAX_FILE_BYTES", "SHIPPED_WEIGHTS", "WEIGHTS_FORMAT", "Weights", "load_weights", "save_weights",
           "shipped_weights"]


@dataclass(frozen=True, eq=False)
class Weights(LinearWeights):
    """The weights w of Q(s, a) = w . f(s, a) (one per feature of :data:`FEATURES`) with the
    configuration that trained them; checked on construction."""

    format = LinearFormat(WEIGHTS_FORMAT, "linear_sarsa", "sarsa", FEATURES, LinearSarsaConfig)


def save_weights(path: str | os.PathLike[str], weights: Weights) -> Path:
    """Write `weights` as JSON (written next to `path` and renamed over it: a reader never sees half a file).

    Raises:
        ValueError: an `info` that is not JSON.
    """
    return save_linear_weights(path, weights)


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
    return load_linear_weights(path, Weights, expected)


def shipped_weights(config: GameConfig) -> Path:
    """The weights shipped with the package for a game (4 players, double-nine, the rule book's only).

    Raises:
        ValueError: none ship for this game.
    """
    return Weights.format.shipped(config)
