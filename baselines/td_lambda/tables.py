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

from baselines.learning.tables import HandRecord, Tables
from baselines.policies.policy import first_minimum_per_run, random_per_run
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
    with TD(lambda) as it plays.

    Raises:
        FloatingPointError: learning made the network's values NaN (it diverged; raised where
            the moves are chosen, :func:`~baselines.policies.policy.first_minimum_per_run`).
    """
    tables = Tables(config.game, config.parallel_hands, opponent, hands, rng,
                    end_hand=None if traces is None else traces.end_hand, on_hand=on_hand)
    engine, game = tables.engine, config.game
    epsilon = config.epsilon if traces is not None else 0.0
    while True:
        tables.play_opponents()
        playing = np.flatnonzero(tables.active)
        if playing.size == 0:
            if traces is not None:
                traces.flush()  # the last hands' final deltas have no later step to ride on
            return tables.records
        observations, masks, seats = engine.observe(playing)
        playing, observations, masks, seats = tables.play_draws(playing, observations, masks, seats)
        if playing.size == 0:
            continue
        rows, legal = np.nonzero(masks)  # every legal move of every table, by table
        counts = np.bincount(rows, minlength=playing.shape[0])
        vectors, ends_hand = afterstates(observations, legal, game, rows=rows)
        inputs = features(vectors)  # once: the chosen rows feed the traces too
        values = predicted_final_pips(network, features, vectors, ends_hand, inputs)
        chosen = first_minimum_per_run(values, counts)
        if epsilon:
            explore = rng.random(playing.shape[0]) < epsilon
            chosen[explore] = random_per_run(counts, explore, rng)
        if traces is not None:
            traces.step(playing, tables.slots(seats), values[chosen], ends_hand[chosen], inputs[chosen])
        tables.play(playing, legal[chosen])
