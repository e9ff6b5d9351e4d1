"""What ppo's network may read beside the observation that it computes from nothing but the
observation itself: a hand-made feature, as td_lambda reads one.

td_lambda's edge over ppo is its input (docs/ppo.md): beside the position it reads the best chain
of its own hand from its own line's open end (the exact branch-and-bound search of
:mod:`baselines.policies.chain_search`), a quantity a small network finds hard to compute from the
hand's bits. With ``features="best_chain"`` ppo's network reads the same numbers
(:meth:`~baselines.td_lambda.features.LineFeatures.chain_numbers`: 2 x tiles + 5 of them) after
every vector it is given: each legal move's after-state, and the observation its value head reads.
"none", the default, is the observation alone, as every file written before the option reads.

Unlike the history feature (:mod:`baselines.ppo.history`) these numbers are a function of one
vector, so every trainer and player computes them where the vectors are made
(:class:`NetworkInputs`), and a player that reads them keeps nothing between moves.
"""

from __future__ import annotations

import numpy as np

from baselines.td_lambda.features import LineFeatures
from dominoes_env.core.config import GameConfig

#: What the network reads besides the observation ("none": nothing).
FEATURES = ("none", "best_chain")


def features_size(config: GameConfig, features: str) -> int:
    """Inputs the feature adds to each vector: 2 x tiles + 5 for "best_chain", 0 for "none"."""
    return 0 if features == "none" else 2 * config.num_tiles + 5


class NetworkInputs:
    """The network's input of a batch of (K, D) int8 observation vectors: the vectors themselves
    ("none"), or float32 rows of the vector followed by its best-chain numbers."""

    def __init__(self, config: GameConfig, features: str) -> None:
        self.features = features
        self.chains = LineFeatures(config) if features == "best_chain" else None

    def __call__(self, vectors: np.ndarray) -> np.ndarray:
        if self.chains is None:
            return vectors
        return np.concatenate([vectors.astype(np.float32), self.chains.chain_numbers(vectors)], axis=1)
