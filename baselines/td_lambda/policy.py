"""Acting: the ``td_lambda`` policy, in numpy (torch is never imported to play).

The player keeps a network V(s) that predicts its own pips at the end of the hand (lower
is better). To move, it builds the after-state of every legal move with
:func:`dominoes_env.core.afterstate.legal_afterstates` (what it would observe right after
the move, computed from its own observation) and plays the move whose after-state has the
lowest V. A move that ends the hand needs no prediction: its value is the pips the mover
still holds, exactly.
"""

from __future__ import annotations

import os
from contextlib import nullcontext
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from baselines.harness.threads import one_blas_thread
from baselines.learning.files import ships, weights_for_table
from baselines.policies.policy import BatchPolicy, SeedLike, choose_in_batch
from baselines.policies.registry import register_policy
from baselines.td_lambda.architecture import LAYER_NORM_EPS, Architecture
from baselines.td_lambda.checkpoint import (
    Checkpoint,
    load_checkpoint,
    shipped_checkpoint,
)
from baselines.td_lambda.config import TDLambdaConfig
from baselines.td_lambda.features import BasicFeatures, make_features
from dominoes_env.core import validation
from dominoes_env.core.afterstate import afterstates, legal_afterstates
from dominoes_env.core.compiled import kernel
from dominoes_env.core.config import GameConfig


class ValueFunction(Protocol):
    """V over a batch of feature rows: the numpy pass here, or the trainer's torch network."""

    def predict(self, features: np.ndarray) -> np.ndarray: ...


#: batches this large run on one BLAS thread (a look-ahead's sampled positions, act_batch): on a
#: busy machine a BLAS thread pool waits for its slowest thread, several times as long as one
#: thread for batches of a few dozen rows; below 16 rows the switch costs more than it saves
ONE_THREAD_ROWS = 16


class NumpyValue:
    """The value network's forward pass in numpy, for acting.

    A decision evaluates a handful of after-states; at that size torch's per-operation
    overhead dominates, and plain numpy on the same weights is about three times faster
    (and needs no torch at all). Same results as the trainer's
    :meth:`~baselines.td_lambda.network.ValueNetwork.predict`, to float rounding.
    """

    def __init__(self, theta: np.ndarray, architecture: Architecture) -> None:
        p = architecture.unflatten(theta)
        self.hidden = [(np.ascontiguousarray(p[f"w{i}"].T), p[f"b{i}"].copy(), p[f"ln_w{i}"].copy(),
                        p[f"ln_b{i}"].copy()) for i in range(len(architecture.hidden_sizes))]
        self.w_out, self.b_out = np.ascontiguousarray(p["w_out"].T), p["b_out"].copy()

    def predict(self, features: np.ndarray) -> np.ndarray:
        """(K, input_size) float32 -> (K,) predicted final pips.

        Batches of :data:`ONE_THREAD_ROWS` rows or more run on one BLAS thread (see
        :mod:`baselines.harness.threads`); a typical single decision's handful of rows does not pay the
        switch (a few microseconds of a decision of about 46 us, benchmarks/td_lambda_speed.py).
        """
        x = features
        with one_blas_thread() if features.shape[0] >= ONE_THREAD_ROWS else nullcontext():
            for weight, bias, norm_weight, norm_bias in self.hidden:
                x = x @ weight
                _relu_layer_norm(x, bias, norm_weight, norm_bias)
            return (x @ self.w_out + self.b_out)[..., 0]


@kernel
def _relu_layer_norm(y: Any, bias: Any, norm_weight: Any, norm_bias: Any) -> None:
    """The rest of a hidden block after its matrix product, in place: + bias -> ReLU -> LayerNorm."""
    width = y.shape[1]
    for k in range(y.shape[0]):
        mean = np.float32(0.0)
        for j in range(width):
            y[k, j] = max(y[k, j] + bias[j], np.float32(0.0))
            mean += y[k, j]
        mean /= width
        variance = np.float32(0.0)
        for j in range(width):
            y[k, j] -= mean
            variance += y[k, j] * y[k, j]
        scale = np.float32(1.0) / np.sqrt(variance / width + np.float32(LAYER_NORM_EPS))
        for j in range(width):
            y[k, j] = y[k, j] * scale * norm_weight[j] + norm_bias[j]


def predicted_final_pips(value: ValueFunction, features: BasicFeatures, vectors: np.ndarray,
                         ends_hand: np.ndarray, inputs: np.ndarray | None = None) -> np.ndarray:
    """V of each after-state; a hand-ending after-state is worth exactly the pips the mover still holds.

    `inputs`: ``features(vectors)`` when the caller already has them (the trainer keeps them
    for its traces).
    """
    values = value.predict(features(vectors) if inputs is None else inputs)
    if ends_hand.any():
        values[ends_hand] = features.own_pips(vectors[ends_hand])
    return values


@lru_cache(maxsize=16)
def _load_for_acting(resolved: str, modified_ns: int, size: int, table: GameConfig
                     ) -> tuple[NumpyValue, TDLambdaConfig, BasicFeatures]:
    """Load once per file version: the league makes fresh policies for every game."""
    checkpoint = load_checkpoint(resolved, expected=table)
    return _acting_parts(checkpoint)


def _acting_parts(checkpoint: Checkpoint) -> tuple[NumpyValue, TDLambdaConfig, BasicFeatures]:
    config = checkpoint.config
    return NumpyValue(checkpoint.theta, config.architecture), config, make_features(config)


@register_policy("td_lambda")
class TDLambdaPolicy(BatchPolicy):
    """Plays the legal move whose after-state has the lowest predicted final pips.

    Args:
        checkpoint: a file written by ``dominoes train td-lambda``, or a
            :class:`~baselines.td_lambda.checkpoint.Checkpoint` in memory (the trainer
            evaluates its current weights this way); default: the shipped checkpoint
            (4 players, double-nine).
        epsilon: probability of a uniformly random legal move instead (0: greedy).

    Raises:
        ValueError: a bad epsilon, a checkpoint that is missing, damaged or made for
            another table.
    """

    def __init__(self, num_players: int | GameConfig = 4, highest_double: int = 9, seed: SeedLike = None,
                 checkpoint: str | os.PathLike[str] | Checkpoint | None = None, epsilon: float = 0.0) -> None:
        super().__init__(num_players, highest_double, seed)
        self.epsilon = validation.real("epsilon", epsilon, 0.0, 1.0, allowed="a probability")
        parts = weights_for_table(checkpoint, self.config, held=Checkpoint, held_name="td_lambda weights",
                                  file_kind="td_lambda checkpoint", shipped=shipped_checkpoint, read=_load_for_acting,
                                  adopt=_acting_parts)
        self.value, self.training_config, self.features = parts

    @classmethod
    def plays_by_default(cls, config: GameConfig) -> bool:
        """The default league seats td_lambda where a trained player ships (4 players, double-nine)."""
        return ships(shipped_checkpoint, config)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        if int(action_mask.sum()) == 1:  # a forced move (or a draw, which has no after-state)
            return int(np.flatnonzero(action_mask)[0])
        actions, vectors, ends_hand = legal_afterstates(observation, action_mask, self.config)
        if actions.shape[0] == 1:
            return int(actions[0])
        if self.epsilon and self.rng.random() < self.epsilon:
            return int(actions[self.rng.integers(actions.shape[0])])
        return int(actions[np.argmin(predicted_final_pips(self.value, self.features, vectors, ends_hand))])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """:meth:`act` for k games with one forward pass over every legal move's after-state
        (the same choices, to float rounding of the batched product)."""
        def values(rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
            return predicted_final_pips(self.value, self.features, *afterstates(observations, actions, self.config,
                                                                                rows=rows))

        return choose_in_batch(action_masks, values, self.rng, self.epsilon)
