"""The linear evaluation's weights file (placeholder until the shared linear-weights file lands)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dominoes_env.core.config import GameConfig, describe_table

SHIPPED_WEIGHTS = Path(__file__).resolve().parent.parent / "checkpoints"


@dataclass(frozen=True, eq=False)
class LookaheadWeights:
    game: GameConfig
    weights: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)


def shipped_weights(config: GameConfig) -> Path:
    path = SHIPPED_WEIGHTS / f"lookahead_{config.num_players}p_d{config.highest_double}.json"
    if not path.is_file() or not config.is_default:
        raise ValueError(f"no lookahead weights ship for {describe_table(config)}")
    return path


def load_weights(path: str | os.PathLike[str]) -> LookaheadWeights:
    raise ValueError(f"lookahead weights {str(path)!r}: not readable yet")
