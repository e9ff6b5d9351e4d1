"""Acting: the ``ppo`` player, in numpy (torch is never imported to play).

It reads a weights file written by ``dominoes train ppo`` (:mod:`baselines.ppo.weights`),
runs the network on the one-hand part of the observation (so it plays games of any length, as
the shipped players do): the logits of the action head, masked, or the score of every legal
move's after-state (:mod:`baselines.ppo.heads`); it plays the most probable legal move, or, with
``sample=True``, draws one from the policy's distribution.

Weights that read the hand's history (``history="passes"``, :mod:`baselines.ppo.history`) are
played by ``ppo_history``: the same network, with the facts it keeps through each hand, so one
object plays one game (it has no ``act_batch``); ``ppo`` refuses them in one line.
"""

from __future__ import annotations

import os
from functools import lru_cache

import numpy as np

from baselines.learning.files import ships, weights_for_table
from baselines.policies.policy import BatchPolicy, Policy, SeedLike
from baselines.policies.registry import register_policy
from baselines.ppo.features import NetworkInputs
from baselines.ppo.history import PassFacts
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
        self.network = _network(checkpoint, self.config)
        if self.network.config.history != "none":
            raise ValueError(f"these ppo weights read the hand's history (history={self.network.config.history!r}): "
                             f"play them with ppo_history (ppo_history@FILE)")
        self.inputs = NetworkInputs(self.config, self.network.config.features)

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
        return network_logits(self.network, self.config, observations, action_masks, self.inputs)

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


def _network(checkpoint: str | os.PathLike[str] | PPOWeights | None, config: GameConfig) -> PPOWeights:
    return weights_for_table(checkpoint, config, held=PPOWeights, held_name="ppo weights", file_kind="ppo weights",
                             shipped=shipped_weights, read=_load_for_acting, adopt=lambda weights: weights)


def network_logits(network: PPOWeights, config: GameConfig, observations: np.ndarray, action_masks: np.ndarray,
                   inputs: NetworkInputs, facts: np.ndarray | None = None) -> np.ndarray:
    """(K, A) logits of every action: the action head's, or each legal move's after-state score
    (a row with one legal move: 0 there); `inputs`: the network's input of a vector (the player's, made
    once: :mod:`baselines.ppo.features`); `facts`: each row's history feature, where the network reads one."""
    if network.config.policy_head == "actions":
        return network.policy(inputs(observations))
    logits = np.zeros(action_masks.shape, dtype=np.float32)
    choosing = np.flatnonzero(action_masks.astype(bool).sum(axis=1) > 1)
    within, actions = np.nonzero(action_masks[choosing])
    if actions.size:
        rows = choosing[within]
        vectors = inputs(afterstates(observations, actions, config, rows=rows)[0])
        if facts is not None:
            vectors = np.concatenate([vectors, facts[rows]], axis=1)
        logits[rows, actions] = network.policy(vectors)[:, 0]
    return logits


@register_policy("ppo_history")
class PPOHistoryPolicy(Policy):
    """A ppo network that reads the hand's history (``dominoes train dmc --history passes``): the most
    probable legal move, from the observation and the facts this object keeps through the hand.

    Args:
        checkpoint: a weights file (or :class:`~baselines.ppo.weights.PPOWeights`) with a history
            feature; none ships, so one must be given.

    Raises:
        ValueError: no checkpoint, weights without a history feature (``ppo`` plays those), or
            weights that are missing, damaged or trained for another table.
    """

    def __init__(self, num_players: int | GameConfig = 4, highest_double: int = 9, seed: SeedLike = None,
                 checkpoint: str | os.PathLike[str] | PPOWeights | None = None) -> None:
        super().__init__(num_players, highest_double, seed)
        if checkpoint is None:
            raise ValueError("ppo_history needs checkpoint=FILE: no weights with a history feature ship (train "
                             "some with `dominoes train dmc --history passes`)")
        self.network = _network(checkpoint, self.config)
        if self.network.config.history == "none":
            raise ValueError("these ppo weights read no history (history='none'): play them with ppo (ppo@FILE)")
        self.facts = PassFacts(self.config, games=1)
        self.inputs = NetworkInputs(self.config, self.network.config.features)
        self._seat = np.zeros(1, dtype=np.int64)

    def reset(self) -> None:
        self.facts.reset()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        observations = one_hand_part(self.config, np.asarray(observation)[None])
        facts = self.facts.observe(observations, self._seat, self._seat)  # every observation, forced moves too
        mask = np.asarray(action_mask)[None]
        logits = network_logits(self.network, self.config, observations, mask, self.inputs, facts)
        return int(np.where(mask.astype(bool), logits, -np.inf).argmax(axis=1)[0])
