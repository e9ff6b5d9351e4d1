"""Acting: the ``linear_sarsa`` policy, in numpy (a weighted sum of features per legal move).

To move, the player lists its legal moves, computes their features
(:class:`~baselines.linear_sarsa.features.MoveFeatures`), and plays the move of highest
Q(s, a) = w . f(s, a), the first (lowest action) among equals: the shared tie-break. A move
that ends the hand needs no estimate: its value is exactly the hand's reward, minus the pips
the mover still holds (so going out is always taken). It keeps nothing between moves, so one
object chooses for many games at once (:meth:`LinearSarsaPolicy.act_batch`).
"""

from __future__ import annotations

import os
from functools import lru_cache

import numpy as np

from baselines.learning.files import ships, weights_for_table
from baselines.linear_sarsa.features import MoveFeatures, Moves
from baselines.linear_sarsa.weights import Weights, load_weights, shipped_weights
from baselines.policies.policy import BatchPolicy, SeedLike, choose_in_batch, first_minimum_per_run
from baselines.policies.registry import register_policy
from dominoes_env.core.config import GameConfig


def move_values(w: np.ndarray, moves: Moves) -> np.ndarray:
    """Q of each move: w . f, or, for a move that ends the hand, its reward exactly (minus the pips left)."""
    values = moves.features @ w
    values[moves.ends_hand] = -moves.pips_left[moves.ends_hand]
    return values


def best_per_run(values: np.ndarray, run_lengths: np.ndarray) -> np.ndarray:
    """Index of the first highest value of each run of consecutive entries (one run per game)."""
    return first_minimum_per_run(-values, run_lengths)


@lru_cache(maxsize=16)
def _load_for_acting(resolved: str, modified_ns: int, size: int, table: GameConfig) -> Weights:
    """Load once per file version: the league makes fresh policies for every game."""
    return load_weights(resolved, expected=table)


@register_policy("linear_sarsa")
class LinearSarsaPolicy(BatchPolicy):
    """Plays the legal move of highest Q(s, a) = w . f(s, a).

    Args:
        checkpoint: a weights file written by ``dominoes train sarsa``, or
            :class:`~baselines.linear_sarsa.weights.Weights` in memory (the trainer evaluates
            its current weights this way); default: the shipped weights (4 players,
            double-nine, rule book).

    Raises:
        ValueError: weights that are missing, damaged, or trained for another game.
    """

    def __init__(self, num_players: int | GameConfig = 4, highest_double: int = 9, seed: SeedLike = None,
                 checkpoint: str | os.PathLike[str] | Weights | None = None) -> None:
        super().__init__(num_players, highest_double, seed)
        self.weights = weights_for_table(checkpoint, self.config, held=Weights, held_name="linear_sarsa weights",
                                         file_kind="linear_sarsa weights", shipped=shipped_weights,
                                         read=_load_for_acting, adopt=lambda weights: weights)
        self.features = MoveFeatures(self.config)

    @classmethod
    def plays_by_default(cls, config: GameConfig) -> bool:
        """The default league seats linear_sarsa where trained weights ship (4 players, double-nine, rule book)."""
        return ships(shipped_weights, config)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(observation[None], action_mask[None])[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """:meth:`act` for k games, with the features of every legal move of every game computed at once."""
        return choose_in_batch(action_masks, lambda rows, actions: -move_values(
            self.weights.w, self.features(observations, rows, actions)))
