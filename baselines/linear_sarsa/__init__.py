"""Linear SARSA (after a linear SARSA agent designed for Splendor, docs/baselines.md):
Q(s, a) = w . f(s, a) over a few features of the move that matter in this game, learned
on-policy. Numpy and numba only; a small package whose parts a reader finds by name:

- :mod:`~baselines.linear_sarsa.config`: :class:`LinearSarsaConfig`, the one source of defaults,
  bounds and ``dominoes train sarsa`` options;
- :mod:`~baselines.linear_sarsa.features`: f(s, a), from the observation and the move's after-state;
- :mod:`~baselines.linear_sarsa.weights`: the weights file (readable JSON, validated on load);
- :mod:`~baselines.linear_sarsa.policy`: the ``linear_sarsa`` policy;
- :mod:`~baselines.linear_sarsa.learner`: the SARSA update and the training loop.
"""

from __future__ import annotations

from baselines.linear_sarsa.config import LinearSarsaConfig
from baselines.linear_sarsa.features import FEATURES, MoveFeatures, Moves
from baselines.linear_sarsa.learner import Sarsa, evaluate_weights, play_hands, train
from baselines.linear_sarsa.policy import LinearSarsaPolicy, move_values
from baselines.linear_sarsa.weights import (
    SHIPPED_WEIGHTS,
    WEIGHTS_FORMAT,
    Weights,
    load_weights,
    save_weights,
    shipped_weights,
)

__all__ = [
    "FEATURES",
    "SHIPPED_WEIGHTS",
    "WEIGHTS_FORMAT",
    "LinearSarsaConfig",
    "LinearSarsaPolicy",
    "MoveFeatures",
    "Moves",
    "Sarsa",
    "Weights",
    "evaluate_weights",
    "load_weights",
    "move_values",
    "play_hands",
    "save_weights",
    "shipped_weights",
    "train",
]
