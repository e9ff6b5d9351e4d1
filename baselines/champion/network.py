"""The champion's network in numpy: what the search asks of it (:class:`NetworkGuide`).

One value network V (the architecture and file format of ``td_lambda``: an after-state
observation in, the observer's predicted final pips out) answers both questions of the
search:

- a position's value for every seat: V of each seat's own observation of the position;
- the mover's prior over its legal moves: a softmax of minus V over their after-states,
  at a temperature, so a move the network thinks leaves fewer pips is tried first.

A policy head of its own would need a second set of outputs per action; the after-state
softmax gives one for free, in the action space the table already has, and training the
search's visit counts into it (expert iteration) trains the same weights the values come
from.
"""

from __future__ import annotations

import numpy as np

from baselines.td_lambda.features import BasicFeatures
from baselines.td_lambda.policy import ValueFunction, predicted_final_pips
from dominoes_env.core import batch
from dominoes_env.core.afterstate import afterstates_unchecked
from dominoes_env.core.config import GameConfig
from dominoes_env.core.observation import observation_layout


def softmax_of_pips(pips: np.ndarray, temperature: float) -> np.ndarray:
    """exp(-pips / temperature), normalised: fewer predicted pips, more weight."""
    logits = -(pips - pips.min()) / temperature
    weights = np.exp(logits)
    return weights / weights.sum()


class NetworkGuide:
    """V over engine states, as each seat sees them (numpy only)."""

    def __init__(self, config: GameConfig, value: ValueFunction, features: BasicFeatures,
                 temperature: float = 2.0) -> None:
        self.config, self.value, self.features, self.temperature = config, value, features, temperature
        n = config.num_players
        fields = observation_layout(config)
        tiles = config.tiles
        self._fixed = (fields.offsets, config.highest_double, config.max_hand_size, 0, tiles.tiles_with_value)
        self._observations = np.empty((n, fields.size), dtype=np.int8)
        self._masks = np.empty((n, config.num_actions), dtype=np.int8)
        self._players = np.empty(n, dtype=np.int64)
        self._scores = np.zeros((1, n), dtype=np.int64)
        self._rows = np.zeros(n, dtype=np.int64)
        self._seats = np.arange(n, dtype=np.int64)

    def _observe(self, state: np.ndarray, viewers: np.ndarray) -> np.ndarray:
        k = viewers.shape[0]
        batch.observe_rows(state[None], self._scores, *self._fixed, self._rows[:k], viewers, False,
                           self._observations, self._masks, self._players, 0, k)
        return self._observations[:k]

    def seat_pips(self, state: np.ndarray) -> np.ndarray:
        observations = self._observe(state, self._seats)
        return self.value.predict(self.features(observations)).astype(np.float64)

    def move_priors(self, state: np.ndarray, actions: np.ndarray) -> np.ndarray:
        observation = self._observe(state, np.array([-1], dtype=np.int64))
        vectors, ends_hand = afterstates_unchecked(observation, actions, self.config)
        pips = predicted_final_pips(self.value, self.features, vectors, ends_hand).astype(np.float64)
        return softmax_of_pips(pips, self.temperature)
