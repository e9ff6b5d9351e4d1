"""The look-ahead evaluation's weights file: the linear learners' JSON file
(:mod:`baselines.learning.linear_weights`), in the format ``dominoes-lookahead/1``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from baselines.learning.linear_weights import LinearFormat, LinearWeights, load_linear_weights, save_linear_weights
from baselines.lookahead.config import LookaheadConfig
from baselines.lookahead.features import FEATURE_NAMES
from dominoes_env.core.config import GameConfig


@dataclass(frozen=True, eq=False)
class LookaheadWeights(LinearWeights):
    """The evaluation's weights w (V = w . f, one per feature) with the configuration that trained them."""

    format = LinearFormat("dominoes-lookahead/1", "lookahead", "lookahead", FEATURE_NAMES, LookaheadConfig)


def save_weights(path: str | os.PathLike[str], weights: LookaheadWeights) -> Path:
    """Write the weights as readable JSON (atomically)."""
    return save_linear_weights(path, weights)


def load_weights(path: str | os.PathLike[str], expected: GameConfig | None = None) -> LookaheadWeights:
    """Read and check a weights file (one-line ValueError naming the file when it is not right)."""
    return load_linear_weights(path, LookaheadWeights, expected)


def shipped_weights(config: GameConfig) -> Path:
    """The weights shipped for a game (4 players, double-nine, the rule book's only), or a ValueError."""
    return LookaheadWeights.format.shipped(config)
