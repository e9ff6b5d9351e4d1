"""Many training tables side by side on the batched engine: how the learners play their hands fast.

The tables are the games of one :class:`~dominoes_env.vector.VectorDominoes` (one hand per
game, each dealt with a random engine). The learner holds one random seat at each table
(every seat in self-play); the other seats are opponent policies, and those of each kind
choose for all their tables at once (:class:`~dominoes_env.players.BatchPlayers`). A learner
loop (``td_lambda.play_hands``, ``linear_sarsa.play_hands``) alternates :meth:`Tables.play_opponents`,
which moves the opponents until a learner is to move at every table, with its own batched
move at every table (:meth:`Tables.play`); each hand that ends is recorded and its learners
are told their final pips (:meth:`Tables.finish`). The learner only ever reads what the env would show it: its
observation, encoded by the engine's shared kernel. Evaluations do not come here: they go
through the shared harness (:func:`baselines.harness.evaluate.evaluate`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from baselines.learning.options import SELF_PLAY
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
