"""The TD learner at many tables side by side (:class:`~baselines.learning.tables.Tables`, the
shared training tables on the batched engine).

Each round, the opponents move (:meth:`Tables.play_opponents`) until a learner is to move
at every table; then the learners move at every table together: the after-states of every
legal move at every table are valued in one batched forward pass. Evaluations do not come
here: they go through the shared harness (:func:`baselines.harness.evaluate.evaluate`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from baselines.learning.tables import HandRecord, Tables, choose_by_value, play_learning_hands
from baselines.td_lambda.config import TDLambdaConfig
from baselines.td_lambda.features import BasicFeatures
from baselines.td_lambda.policy import ValueFunction, predicted_final_pips
from dominoes_env.core.afterstate import afterstates


class Learning(Protocol):
    """The learner's side of play (the learner's eligibility traces; a Protocol, so that this
    module, which the learner imports, imports nothing back)."""

    def step(self, tables: np.ndarray, slots: np.ndarray, next_values: np.ndarray, terminal: np.ndarray,
             next_features: np.ndarray) -> None: ...

    def end_hand(self, table: int, slot: int, final_pips: float) -> None: ...

    def flush(self) -> None: ...

__all__ = ["HandRecord", "Tables", "play_hands"]


def play_hands(network: ValueFunction, features: BasicFeatures, opponent: str, hands: int, config: TDLambdaConfig,
               rng: np.random.Generator, traces: Learning | None = None,
               on_hand: Callable[[HandRecord], None] | None = None) -> list[HandRecord]:
    """Play `hands` freshly dealt hands on ``config.parallel_hands`` tables side by side.

    The learner (greedy on after-state values, epsilon-greedy when learning) moves in its
    seats with one batched forward pass per round over the after-states of every legal
    move at every table; the other seats are `opponent` policies (:class:`Tables`), or
    the learner too in self-play (``opponent == "self"``). With `traces` given it learns
    with TD(lambda) as it plays. The loop is the learners' shared one
    (:func:`~baselines.learning.tables.play_learning_hands`).

    Raises:
        FloatingPointError: learning made the network's values NaN (it diverged; raised where
            the moves are chosen, :func:`~baselines.policies.policy.first_minimum_per_run`).
    """
    tables = Tables(config.game, config.parallel_hands, opponent, hands, rng,
                    end_hand=None if traces is None else traces.end_hand, on_hand=on_hand)
    learner = _AfterStateLearner(network, features, config, rng, traces)
    return play_learning_hands(tables, learner)


class _AfterStateLearner:
    """TD(lambda)'s side of the shared loop: values the after-state of every legal move in one
    forward pass, and feeds the chosen ones to the traces."""

    def __init__(self, network: ValueFunction, features: BasicFeatures, config: TDLambdaConfig,
                 rng: np.random.Generator, traces: Learning | None) -> None:
        self.network, self.features, self.game, self.rng, self.traces = network, features, config.game, rng, traces
        self.epsilon = config.epsilon if traces is not None else 0.0

    def round_start(self, hands_done: int) -> None:
        pass

    def choose(self, tables: np.ndarray, slots: np.ndarray, observations: np.ndarray, masks: np.ndarray,
               seats: np.ndarray) -> np.ndarray:
        valued: dict[str, np.ndarray] = {}

        def value_moves(rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
            vectors, valued["ends_hand"] = afterstates(observations, actions, self.game, rows=rows)
            valued["inputs"] = self.features(vectors)  # once: the chosen rows feed the traces too
            return predicted_final_pips(self.network, self.features, vectors, valued["ends_hand"], valued["inputs"])

        choice = choose_by_value(masks, value_moves, self.rng, self.epsilon)
        if self.traces is not None:
            chosen = choice.chosen
            self.traces.step(tables, slots, choice.values[chosen], valued["ends_hand"][chosen],
                             valued["inputs"][chosen])
        return choice.chosen_actions

    def done(self) -> None:
        if self.traces is not None:
            self.traces.flush()  # the last hands' final deltas have no later step to ride on
