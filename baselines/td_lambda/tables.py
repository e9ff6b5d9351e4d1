"""Many tables side by side: how the learner plays its training hands fast.

The learner's decisions at every table are gathered each round and valued in one batched
forward pass; the other seats are ordinary policies acting on their own observations.
The tables' :class:`~dominoes_env.core.HandState` objects are driven here directly (not
through the PettingZoo env) for speed, with the env's observation encoder, so the learner
only ever reads what the env would show it. Evaluations do not come here: they go through
the shared harness (:func:`baselines.evaluate.evaluate`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from baselines.policy import Policy
from baselines.registry import make_policy
from baselines.td_lambda.config import SELF_PLAY, TDLambdaConfig
from baselines.td_lambda.features import BasicFeatures
from baselines.td_lambda.policy import ValueFunction, predicted_final_pips
from dominoes_env.core import HandState, rules
from dominoes_env.core.afterstate import afterstates
from dominoes_env.core.observation import Observer

if TYPE_CHECKING:
    from baselines.td_lambda.learner import Traces


@dataclass
class HandRecord:
    """One finished hand: every seat's pips and which seats the learner held."""

    scores: np.ndarray
    learner_seats: tuple[int, ...]


@dataclass
class Table:
    """One table of the batch: its hand, which seats the learner plays, the other seats' policies."""

    hand: HandState | None = None
    learner_slot: dict[int, int] = field(default_factory=dict)  # seat -> trace slot
    opponents: dict[int, Policy] = field(default_factory=dict)


HandSource = Iterator[tuple[HandState, tuple[int, ...]]]


def training_hands(config: TDLambdaConfig, count: int, rng: np.random.Generator, self_play: bool) -> HandSource:
    """`count` freshly dealt hands (any engine, seat order of the deal), the learner in one random seat or all."""
    game = config.game
    for _ in range(count):
        hand = HandState.deal(game, int(rng.integers(game.highest_double + 1)), rng)
        yield hand, tuple(range(game.num_players)) if self_play else (int(rng.integers(game.num_players)),)


def play_hands(network: ValueFunction, features: BasicFeatures, opponent: str, hands: HandSource,
               config: TDLambdaConfig, rng: np.random.Generator, traces: Traces | None = None,
               on_hand: Callable[[HandRecord], None] | None = None) -> list[HandRecord]:
    """Play every hand `hands` yields on ``config.parallel_hands`` tables side by side.

    The learner (greedy on after-state values, epsilon-greedy when learning) moves in its
    seats with one batched forward pass per round over the after-states of every legal
    move at every table; the other seats are `opponent` policies (fresh per table, reset
    each hand; "a+b" alternates the kinds over the tables) acting on their own
    observations. With `traces` given it learns with TD(lambda) as it plays.
    """
    game = config.game
    n = game.num_players
    observer = Observer(game)
    tables = [Table() for _ in range(config.parallel_hands)]
    opponent_seed = int(rng.integers(2**63))
    records: list[HandRecord] = []
    epsilon = config.epsilon if traces is not None else 0.0
    buffer = np.empty(game.num_actions, dtype=np.int64)
    mask = np.empty(game.num_actions, dtype=np.int8)
    observations = np.zeros((len(tables), observer.size), dtype=np.int8)
    tiles_with_value = game.tiles.tiles_with_value
    draw = game.draw_action

    def deal(index: int, table: Table) -> bool:
        nxt = next(hands, None)
        if nxt is None:
            table.hand = None
            return False
        table.hand, seats = nxt
        table.learner_slot = {seat: slot for slot, seat in enumerate(seats)}
        if opponent != SELF_PLAY and not table.opponents:
            names = opponent.split("+")
            table.opponents = {seat: make_policy(names[index % len(names)], game,
                                                 seed=np.random.default_rng([opponent_seed, index, seat]))
                               for seat in range(n)}
        for policy in table.opponents.values():
            policy.reset()
        return True

    def finish(index: int, hand: HandState, table: Table) -> None:
        scores = hand.scores()
        record = HandRecord(scores, tuple(table.learner_slot))
        records.append(record)
        if traces is not None:
            for seat, slot in table.learner_slot.items():
                traces.end_hand(index, slot, float(scores[seat]))
        if on_hand is not None:
            on_hand(record)

    for index, table in enumerate(tables):
        deal(index, table)
    while True:
        movers: list[tuple[int, int, HandState]] = []  # (table, seat, hand) of every learner to move
        for index, table in enumerate(tables):
            while table.hand is not None:
                hand = table.hand
                if hand.is_over:
                    finish(index, hand, table)
                    deal(index, table)
                    continue
                seat = hand.current_player
                if seat in table.learner_slot:
                    if draw is not None and rules.fill_legal_actions(hand.state, tiles_with_value, buffer) == 1 \
                            and buffer[0] == draw:
                        hand.apply_unchecked(draw)  # forced, and the tile drawn unknown: no after-state to learn
                        continue
                    movers.append((index, seat, hand))
                    break
                hand.legal_mask(out=mask)
                hand.apply(table.opponents[seat].act(observer.encode(hand.state, seat), mask))
        if not movers:
            if traces is not None:
                traces.flush()  # the last hands' final deltas have no later step to ride on
            return records
        counts = np.empty(len(movers), dtype=np.int64)
        actions = []
        for i, (_, seat, hand) in enumerate(movers):
            observer.encode(hand.state, seat, out=observations[i])
            counts[i] = rules.fill_legal_actions(hand.state, tiles_with_value, buffer)
            actions.append(buffer[:counts[i]].copy())
        flat_actions = np.concatenate(actions)
        rows = np.repeat(np.arange(len(movers)), counts)
        vectors, ends_hand = afterstates(observations[:len(movers)], flat_actions, game, rows=rows)
        values = predicted_final_pips(network, features, vectors, ends_hand)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        chosen = np.array([start + (rng.integers(count) if epsilon and rng.random() < epsilon
                                    else int(np.argmin(values[start:start + count])))
                           for start, count in zip(starts, counts)], dtype=np.int64)
        if traces is not None:
            table_index = np.array([index for index, _, _ in movers], dtype=np.int64)
            slot = np.array([tables[index].learner_slot[seat] for index, seat, _ in movers], dtype=np.int64)
            traces.step(table_index, slot, values[chosen], ends_hand[chosen], features(vectors[chosen]))
        for (_, _, hand), pick in zip(movers, chosen):
            hand.apply_unchecked(int(flat_actions[pick]))
