"""Many tables side by side on the batched engine: how the learner plays its training hands fast.

The tables are the games of one :class:`~dominoes_env.vector.VectorDominoes` (one hand per
game, each dealt with a random engine). Each round, first the other seats move wherever an
opponent is to move, round after round until a learner is to move (or the hand is over) at
every table; the opponents of each kind choose for all their tables at once
(:class:`~dominoes_env.players.BatchPlayers`). Then the learners move at every table
together: the after-states of every legal move at every table are valued in one batched
forward pass. The learner only ever reads what the env would show it: its observation,
encoded by the engine's shared kernel. Evaluations do not come here: they go through the
shared harness (:func:`baselines.evaluate.evaluate`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from baselines.td_lambda.config import SELF_PLAY, TDLambdaConfig
from baselines.td_lambda.features import BasicFeatures
from baselines.td_lambda.policy import ValueFunction, first_minimum_per_run, predicted_final_pips
from dominoes_env.core.afterstate import afterstates
from dominoes_env.players import BatchPlayers
from dominoes_env.vector import HandEnds, VectorDominoes

if TYPE_CHECKING:
    from baselines.td_lambda.learner import Traces


@dataclass
class HandRecord:
    """One finished hand: every seat's pips and which seats the learner held."""

    scores: np.ndarray
    learner_seats: tuple[int, ...]


class Tables:
    """`config.parallel_hands` tables playing `hands` training hands between them.

    Each table's learner holds one random seat (every seat in self-play, each its own trace
    slot: the seat number); the other seats are `opponent` policies ("a+b" alternates the
    kinds over the tables), each seat of each table its own player where a policy keeps
    things within a hand.
    """

    def __init__(self, config: TDLambdaConfig, opponent: str, hands: int, rng: np.random.Generator) -> None:
        game = config.game
        self.config, self.rng = config, rng
        self.num_players = n = game.num_players
        self.count = config.parallel_hands
        self.self_play = opponent == SELF_PLAY
        self.engine = VectorDominoes(self.count, game, seed=int(rng.integers(2**63)))
        self.engine.reset()
        self.learner = np.zeros((self.count, n), dtype=np.bool_)  # the learner's seats at each table
        kinds = [] if self.self_play else opponent.split("+")
        self.kind_of_table = np.arange(self.count) % max(len(kinds), 1)
        self.opponents = [BatchPlayers.build(kind, game, self.count * n, rng) for kind in kinds]
        self.to_deal = hands
        self.active = np.zeros(self.count, dtype=np.bool_)
        self.deal(np.arange(min(self.count, hands)))

    def deal(self, tables: np.ndarray) -> None:
        """A fresh hand, with a random engine, and the learner's seats, at each of `tables`."""
        highest = self.config.game.highest_double
        self.engine.new_games(tables, np.asarray(self.rng.integers(highest + 1, size=tables.shape[0])))
        self.learner[tables] = self.self_play
        if not self.self_play:
            self.learner[tables, self.rng.integers(self.num_players, size=tables.shape[0])] = True
        slots = (tables[:, None] * self.num_players + np.arange(self.num_players)).reshape(-1)
        for players in self.opponents:
            players.new_hand(slots)
        self.active[tables] = True
        self.to_deal -= tables.shape[0]

    def learner_seats(self, table: int) -> tuple[int, ...]:
        return tuple(np.flatnonzero(self.learner[table]).tolist())

    def play_opponents(self, finish: Callable[[HandEnds], None]) -> None:
        """Opponents move, round after round, until a learner is to move at every active table."""
        n = self.num_players
        while True:
            tables = np.flatnonzero(self.active)
            movers = self.engine.players_to_move(tables)
            waiting = ~self.learner[tables, movers]
            tables, movers = tables[waiting], movers[waiting]
            if tables.size == 0:
                return
            observations, masks, _ = self.engine.observe(tables)
            actions = np.empty(tables.shape[0], dtype=np.int64)
            kinds = self.kind_of_table[tables]
            for kind, players in enumerate(self.opponents):
                chosen = np.flatnonzero(kinds == kind)
                actions[chosen] = players.act(tables[chosen] * n + movers[chosen], observations[chosen],
                                              masks[chosen])
            _, ends = self.engine.play(tables, actions)
            finish(ends)


def play_hands(network: ValueFunction, features: BasicFeatures, opponent: str, hands: int, config: TDLambdaConfig,
               rng: np.random.Generator, traces: Traces | None = None,
               on_hand: Callable[[HandRecord], None] | None = None) -> list[HandRecord]:
    """Play `hands` freshly dealt hands on ``config.parallel_hands`` tables side by side.

    The learner (greedy on after-state values, epsilon-greedy when learning) moves in its
    seats with one batched forward pass per round over the after-states of every legal
    move at every table; the other seats are `opponent` policies (:class:`Tables`), or
    the learner too in self-play (``opponent == "self"``). With `traces` given it learns
    with TD(lambda) as it plays.
    """
    tables = Tables(config, opponent, hands, rng)
    engine, game = tables.engine, config.game
    records: list[HandRecord] = []
    epsilon = config.epsilon if traces is not None else 0.0
    draw = game.draw_action

    def finish(ends: HandEnds) -> None:
        """Record the hands that ended, end their learners' traces, and deal the next hands."""
        for table, scores in zip(ends.games.tolist(), ends.scores):
            seats = tables.learner_seats(table)
            record = HandRecord(scores.copy(), seats)
            records.append(record)
            if traces is not None:
                for seat in seats:
                    traces.end_hand(table, seat if tables.self_play else 0, float(scores[seat]))
            if on_hand is not None:
                on_hand(record)
        tables.active[ends.games] = False
        more = ends.games[:max(min(tables.to_deal, ends.games.shape[0]), 0)]
        if more.size:
            tables.deal(more)

    while True:
        tables.play_opponents(finish)
        playing = np.flatnonzero(tables.active)
        if playing.size == 0:
            if traces is not None:
                traces.flush()  # the last hands' final deltas have no later step to ride on
            return records
        observations, masks, seats = engine.observe(playing)
        if draw is not None and masks[:, draw].any():  # forced, and the tile drawn unknown: no after-state to learn
            drawing = masks[:, draw] == 1
            _, ends = engine.play(playing[drawing], np.full(int(drawing.sum()), draw, dtype=np.int64))
            finish(ends)
            playing, observations, masks, seats = (playing[~drawing], observations[~drawing], masks[~drawing],
                                                   seats[~drawing])
            if playing.size == 0:
                continue
        rows, legal = np.nonzero(masks)  # every legal move of every table, by table
        counts = np.bincount(rows, minlength=playing.shape[0])
        vectors, ends_hand = afterstates(observations, legal, game, rows=rows)
        values = predicted_final_pips(network, features, vectors, ends_hand)
        chosen = first_minimum_per_run(values, counts)
        if epsilon:
            explore = rng.random(playing.shape[0]) < epsilon
            starts = np.cumsum(counts) - counts
            chosen[explore] = starts[explore] + (rng.random(int(explore.sum())) * counts[explore]).astype(np.int64)
        if traces is not None:
            slots = seats if tables.self_play else np.zeros_like(seats)
            traces.step(playing, slots, values[chosen], ends_hand[chosen], features(vectors[chosen]))
        _, ends = engine.play(playing, legal[chosen])
        finish(ends)
