"""Acting: the ``ppo`` player, in numpy (torch is never imported to play).

It reads a weights file written by ``dominoes train ppo`` (:mod:`baselines.ppo.weights`),
runs the network on the one-hand part of the observation (so it plays games of any length, as
the shipped players do): the logits of the action head, masked, or the score of every legal
move's after-state (:mod:`baselines.ppo.heads`); it plays the most probable legal move, or, with
``sample=True``, draws one from the policy's distribution.
"""

from __future__ import annotations

import os
from functools import lru_cache

import numpy as np

from baselines.learning.files import ships, weights_for_table
from baselines.policies.policy import BatchPolicy, SeedLike
from baselines.policies.registry import register_policy
from baselines.ppo.weights import MASKED_LOGIT, PPOWeights, load_weights, shipped_weights
from dominoes_env.core import validation
from dominoes_env.core.afterstate import afterstates
from dominoes_env.core.config import GameConfig
from dominoes_env.core.observation import one_hand_part


@lru_cache(maxsize=16)
def _load_for_acting(resolved: str, modified_ns: int, size: int, table: GameConfig) -> PPOWeights:
    """Load once per file version: the league makes fresh policies for every game."""
    return load_weights(resolved, expected=table)


def masked_probabilities(logits: np.ndarray, action_masks: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """The policy's distribution over each row's legal actions (softmax of the masked logits / temperature)."""
    masked = np.where(action_masks.astype(bool), logits / temperature, MASKED_LOGIT)
    masked -= masked.max(axis=1, keepdims=True)
    weights = np.exp(masked)
    return weights / weights.sum(axis=1, keepdims=True)


@register_policy("ppo")
class PPOPolicy(BatchPolicy):
    """The policy network of a PPO run: the most probable legal move (or a sampled one).

    Args:
        checkpoint: a file written by ``dominoes train ppo``, or :class:`~baselines.ppo.weights.PPOWeights`
            in memory (the trainer evaluates its current weights this way); default: the
            weights shipped for the table.
        sample: draw each move from the policy's distribution instead of playing the most probable.
        temperature: with `sample`, the logits are divided by this (below 1: sharper).

    Raises:
        ValueError: weights that are missing, damaged or trained for another table, or a bad parameter.
    """

    def __init__(self, num_players: int | GameConfig = 4, highest_double: int = 9, seed: SeedLike = None,
                 checkpoint: str | os.PathLike[str] | PPOWeights | None = None, sample: bool = False,
                 temperature: float = 1.0) -> None:
        super().__init__(num_players, highest_double, seed)
        self.sample = validation.flag("sample", sample)
        self.temperature = validation.real("temperature", temperature, 1e-3, 1e3)
        self.network = weights_for_table(checkpoint, self.config, held=PPOWeights, held_name="ppo weights",
                                         file_kind="ppo weights", shipped=shipped_weights, read=_load_for_acting,
                                         adopt=lambda weights: weights)

    @classmethod
    def plays_by_default(cls, config: GameConfig) -> bool:
        """Seated by default where weights ship for the table."""
        return ships(shipped_weights, config)

    def probabilities(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """(K, A) the policy's probability of every action in each row (0 for the illegal ones)."""
        observations, action_masks = np.atleast_2d(observations), np.atleast_2d(action_masks)
        return masked_probabilities(self._logits(one_hand_part(self.config, observations), action_masks),
                                    action_masks, self.temperature if self.sample else 1.0)

    def _logits(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """(K, A) logits of every action: the action head's, or each legal move's after-state score
        (a row with one legal move: 0 there)."""
        if self.network.config.policy_head == "actions":
            return self.network.policy(observations)
        logits = np.zeros(action_masks.shape, dtype=np.float32)
        choosing = np.flatnonzero(action_masks.astype(bool).sum(axis=1) > 1)
        within, actions = np.nonzero(action_masks[choosing])
        if actions.size:
            rows = choosing[within]
            vectors, _ = afterstates(observations, actions, self.config, rows=rows)
            logits[rows, actions] = self.network.policy(vectors)[:, 0]
        return logits

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(observation[None], action_mask[None])[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        observations = one_hand_part(self.config, observations)
        logits = self._logits(observations, action_masks)
        if not self.sample:
            return np.where(action_masks.astype(bool), logits, -np.inf).argmax(axis=1)
        probabilities = masked_probabilities(logits, action_masks, self.temperature)
        cumulative = probabilities.cumsum(axis=1)
        draws = (1.0 - self.rng.random((cumulative.shape[0], 1))) * cumulative[:, -1:]  # in (0, total]: a legal one
        chosen = (cumulative < draws).sum(axis=1)
        return np.minimum(chosen, action_masks.shape[1] - 1)
