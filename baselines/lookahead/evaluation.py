"""What the look-ahead thinks of a position: predicted pips left at the end of the hand (lower is better).

Two evaluations, both of positions seen by seat 0 (the player, in a sampled world's frame):

- :class:`LinearEvaluation`: ``weights . features`` (:mod:`baselines.lookahead.features`),
  the weights learned by ``dominoes train lookahead``;
- :class:`TDValueEvaluation`: the shipped TD(lambda) player's value network (numpy, no
  torch) on the player's observation of the position.

A finished hand is never evaluated: the search scores it with the pips the player holds.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from baselines.lookahead.features import CHAIN_DEPTH, NUM_FEATURES, features_of_states
from baselines.policies.chain_search import IN_LINE_DISCOUNT, OFF_LINE_DISCOUNT, discount_powers
from dominoes_env.core import batch
from dominoes_env.core.config import GameConfig
from dominoes_env.core.observation import observation_layout


class Evaluation(Protocol):
    """Predicted final pips of seat 0 in each of k engine states."""

    def values(self, states: np.ndarray) -> np.ndarray: ...


class LinearEvaluation:
    """``weights . features(state)`` for seat 0."""

    def __init__(self, config: GameConfig, weights: np.ndarray) -> None:
        if weights.shape != (NUM_FEATURES,):
            raise ValueError(f"the linear evaluation has {NUM_FEATURES} weights, got {weights.shape}")
        self.config, self.weights = config, np.asarray(weights, dtype=np.float64)
        tiles = config.tiles
        self._low, self._high = tiles.low, tiles.high
        self._in_pow = discount_powers(IN_LINE_DISCOUNT, CHAIN_DEPTH)
        self._off_pow = discount_powers(OFF_LINE_DISCOUNT, CHAIN_DEPTH)

    def features(self, states: np.ndarray, seat: int = 0) -> np.ndarray:
        return features_of_states(states, seat, self._low, self._high, self._in_pow, self._off_pow)

    def values(self, states: np.ndarray) -> np.ndarray:
        return self.features(states) @ self.weights


class TDValueEvaluation:
    """The shipped TD(lambda) value network on seat 0's observation of each state."""

    def __init__(self, config: GameConfig) -> None:
        from baselines.td_lambda.policy import TDLambdaPolicy  # loads the shipped checkpoint (numpy only)

        player = TDLambdaPolicy(config)
        self.config, self.network, self.features = config, player.value, player.features
        fields = observation_layout(config)
        tiles = config.tiles
        self._size, self._actions = fields.size, config.num_actions
        self._fixed = (fields.offsets, config.highest_double, config.max_hand_size, 0, tiles.tiles_with_value)

    def values(self, states: np.ndarray) -> np.ndarray:
        k = states.shape[0]
        observations = np.empty((k, self._size), dtype=np.int8)
        masks = np.empty((k, self._actions), dtype=np.int8)
        rows = np.arange(k, dtype=np.int64)
        batch.observe_rows(states, np.zeros((k, self.config.num_players), dtype=np.int64), *self._fixed, rows,
                           np.zeros(k, dtype=np.int64), False, observations, masks, np.empty(k, dtype=np.int64), 0, k)
        return self.network.predict(self.features(observations)).astype(np.float64)
