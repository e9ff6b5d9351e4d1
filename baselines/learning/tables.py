"""Many training tables side by side on the batched engine: how the learners play their hands fast.

The tables are the games of one :class:`~dominoes_env.vector.VectorDominoes` (one hand per
game, each dealt with a random engine). The learner holds one random seat at each table
(every seat in self-play); the other seats are opponent policies, and those of each kind
choose for all their tables at once (:class:`~dominoes_env.players.BatchPlayers`). A learner
loop (:func:`play_learning_hands`, the one every learner plugs into) alternates
:meth:`Tables.play_opponents`, which moves the opponents until a learner is to move at every
table, with the learner's batched move at every table (:meth:`Tables.play`); each hand that
ends is recorded and its learners are told their final pips (:meth:`Tables.finish`). The
learner only ever reads what the env would show it: its observation, encoded by the engine's
shared kernel. Evaluations do not come here: they go
through the shared harness (:func:`baselines.harness.evaluate.evaluate`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from baselines.learning.options import SELF_PLAY
from baselines.policies.policy import explore_per_run, first_minimum_per_run
from dominoes_env.core.config import GameConfig
from dominoes_env.players import BatchPlayers
from dominoes_env.vector import HandEnds, VectorDominoes


@dataclass
class HandRecord:
    """One finished hand: every seat's pips and which seats the learner held."""

    scores: np.ndarray
    learner_seats: tuple[int, ...]


class Tables:
    """`count` tables playing `hands` training hands between them.

    Each table's learner holds one random seat (every seat in self-play, ``opponent ==
    "self"``, each its own learner slot: the seat number; otherwise slot 0); the other seats
    are `opponent` policies ("a+b" alternates the kinds over the tables), each seat of each
    table its own player where a policy keeps things within a hand. When a hand ends, each of
    its learners is told its final pips, ``end_hand(table, slot, pips)``, and ``on_hand(record)``
    is called.
    """

    def __init__(self, game: GameConfig, count: int, opponent: str, hands: int, rng: np.random.Generator,
                 end_hand: Callable[[int, int, float], None] | None = None,
                 on_hand: Callable[[HandRecord], None] | None = None) -> None:
        self.game, self.rng = game, rng
        self.end_hand, self.on_hand = end_hand, on_hand
        self.records: list[HandRecord] = []  #: the hands finished so far, in the order they ended
        self.num_players = n = game.num_players
        self.count = count
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
        highest = self.game.highest_double
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

    def slots(self, seats: np.ndarray) -> np.ndarray:
        """The learner slot of each seat that moves: the seat in self-play, else 0 (one learner a table)."""
        return seats if self.self_play else np.zeros_like(seats)

    def play(self, tables: np.ndarray, actions: np.ndarray) -> None:
        """Play the learners' moves at `tables` (then :meth:`finish` the hands they end)."""
        _, ends = self.engine.play(tables, actions)
        self.finish(ends)

    def finish(self, ends: HandEnds) -> None:
        """Record the hands that just ended and tell their learners; their tables are dealt the next
        hands while hands are left to deal, and are idle after that."""
        for table, scores in zip(ends.games.tolist(), ends.scores):
            record = HandRecord(scores.copy(), self.learner_seats(table))
            self.records.append(record)
            if self.end_hand is not None:
                for seat in record.learner_seats:
                    self.end_hand(table, seat if self.self_play else 0, float(scores[seat]))
            if self.on_hand is not None:
                self.on_hand(record)
        self.active[ends.games] = False
        more = ends.games[:max(min(self.to_deal, ends.games.shape[0]), 0)]
        if more.size:
            self.deal(more)

    def play_opponents(self) -> None:
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
            self.play(tables, actions)

    def play_draws(self, playing: np.ndarray, observations: np.ndarray, masks: np.ndarray, seats: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Play the learners' forced draws (boneyard rule: the tile drawn is unknown, so a draw has no
        after-state to learn from) and return the tables, observations, masks and seats left to choose."""
        draw = self.game.draw_action
        if draw is None or not masks[:, draw].any():
            return playing, observations, masks, seats
        drawing = masks[:, draw] == 1
        self.play(playing[drawing], np.full(int(drawing.sum()), draw, dtype=np.int64))
        return playing[~drawing], observations[~drawing], masks[~drawing], seats[~drawing]


class TableLearner(Protocol):
    """What a learner plugs into :func:`play_learning_hands`."""

    def round_start(self, hands_done: int) -> None:
        """The opponents have moved; `hands_done` hands are finished (a step size may follow it)."""

    def choose(self, tables: np.ndarray, slots: np.ndarray, observations: np.ndarray, masks: np.ndarray,
               seats: np.ndarray) -> np.ndarray:
        """The learner's action at each of `tables` (its `slots`, in `seats`), learning from it as it likes."""

    def done(self) -> None:
        """Every hand is played (learning still pending is applied)."""


def play_learning_hands(tables: Tables, learner: TableLearner, forced_draws: bool = True) -> list[HandRecord]:
    """The one loop of every learner: the opponents move until the learner is to move at every
    table (:meth:`Tables.play_opponents`), then the learner chooses at all of them at once and the
    moves are played; until every hand is played. With `forced_draws` the loop plays the learner's
    draws itself (boneyard rule: the drawn tile is unknown, so a draw has no after-state to learn
    from); otherwise the learner's `choose` gets them. Returns the finished hands."""
    while True:
        tables.play_opponents()
        learner.round_start(len(tables.records))
        playing = np.flatnonzero(tables.active)
        if playing.size == 0:
            learner.done()
            return tables.records
        observations, masks, seats = tables.engine.observe(playing)
        if forced_draws:
            playing, observations, masks, seats = tables.play_draws(playing, observations, masks, seats)
            if playing.size == 0:
                continue
        tables.play(playing, learner.choose(playing, tables.slots(seats), observations, masks, seats))


@dataclass(frozen=True)
class ValuedChoice:
    """Every legal move of every table (`rows` index the tables, `actions` the moves; each table's
    moves consecutive, ascending), their `values`, and `chosen`: the entry each table plays."""

    rows: np.ndarray
    actions: np.ndarray
    values: np.ndarray
    chosen: np.ndarray

    @property
    def chosen_actions(self) -> np.ndarray:
        return self.actions[self.chosen]


def choose_by_value(masks: np.ndarray, value_moves: Callable[[np.ndarray, np.ndarray], np.ndarray],
                    rng: np.random.Generator, epsilon: float) -> ValuedChoice:
    """A learner's choice at many tables: value every legal move (``value_moves(rows, actions)``,
    lower is better; forced moves too, since a learner learns from them), take the first lowest
    of each table (the shared tie-break), and with probability `epsilon` a uniformly random legal
    move instead (:func:`~baselines.policies.policy.explore_per_run`)."""
    rows, actions = np.nonzero(masks)
    counts = np.bincount(rows, minlength=masks.shape[0])
    values = value_moves(rows, actions)
    chosen = first_minimum_per_run(values, counts)
    if epsilon:
        explore, picked = explore_per_run(counts, rng, epsilon)
        chosen[explore] = picked
    return ValuedChoice(rows, actions, values, chosen)
