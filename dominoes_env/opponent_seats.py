"""Who sits in the other seats of each game of a batch: fixed opponents, or a draw per game.

The single-agent views take opponents in two forms (:data:`~dominoes_env.single_agent.Opponents`):
fixed (one opponent for each seat after the learner, the same in every game) or a callable
``opponents(rng)`` asked for a fresh set at every new game: curricula, and self-play against
a pool of past versions (``baselines.OpponentPool.opponents``). :class:`OpponentSeats` seats
either kind in B games of the batched engine. Each distinct opponent is built once, as
:class:`~dominoes_env.players.BatchPlayers` over all B games, and each round it is asked only
for the games where it was drawn, so a pool of ten members costs ten batched calls a round,
not B.

A callable that also has ``report_game(drawn, seat, game_scores)`` is told how each game it
seated ended (:func:`report_game`): what it returned for that game, the learner's seat and
the game's pips by seat (``None`` when the learner's illegal action ended it). A pool uses
this to keep the learner's record against each member without the training loop's help.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dominoes_env.core.config import GameConfig
from dominoes_env.players import BatchPlayers

#: Most distinct opponents built at once; one that no game holds is forgotten to make room,
#: so a callable that returns new objects at every game does not fill the memory.
MAX_SEATED = 256


def report_game(opponents: Any, drawn: Any, seat: int, game_scores: np.ndarray | None) -> None:
    """Tell a per-game opponents callable how a game it seated ended, if it asks
    (``report_game`` method); every view calls this one function, so the hook means one thing."""
    hook = getattr(opponents, "report_game", None)
    if callable(hook) and drawn is not None:
        hook(drawn, seat, None if game_scores is None else np.asarray(game_scores).copy())


class OpponentSeats:
    """The opponents of B games: which opponent sits k seats after the learner in each game,
    each distinct one built once for the whole batch.

    Args:
        opponents: a list of n - 1 fixed opponents, or a callable ``opponents(rng) -> sequence``
            drawn at every new game.
        listed: turns what the callable returns into a list of opponents (the views' reading
            of a spec string such as ``"random:3"``).
        config: the table.
        num_games: B.
    """

    def __init__(self, opponents: Sequence[Any] | Callable[[np.random.Generator], Any],
                 listed: Callable[[Any], list[Any]], config: GameConfig, num_games: int) -> None:
        self.source = opponents if callable(opponents) else None
        self.fixed = None if self.source is not None else list(opponents)  # type: ignore[arg-type]
        self.listed, self.config, self.num_games = listed, config, num_games
        others = config.num_players - 1
        self.seated = np.zeros((num_games, others), dtype=np.int64)  # index into self.players
        self.drawn: list[Any] = [None] * num_games  # what the callable returned for each game
        self.players: list[BatchPlayers] = []
        self.built_from: list[Any] = []  # held, so that the ids of the index stay unique
        self.index: dict[Any, int] = {}  # a spec text, or an object's id -> its players

    # ------------------------------------------------------------------ building
    def rebuild(self, rng: np.random.Generator) -> None:
        """Forget every built player (a seeded reset builds them again from its generator);
        fixed opponents are built and seated now, so a bad one is refused at once."""
        self.players, self.built_from, self.index = [], [], {}
        if self.fixed is not None:
            self._check_count(self.fixed)
            for offset, opponent in enumerate(self.fixed):
                self.seated[:, offset] = self._enrol(opponent, offset, rng)

    def check_draw(self) -> None:
        """Ask a callable once, with a generator of its own, and build what it returns, so that
        one returning the wrong count or something that cannot play is refused when the env is
        made, not in the middle of a step."""
        if self.source is not None:
            rng = np.random.default_rng(0)
            opponents = self.listed(self.source(rng))
            self._check_count(opponents)
            for opponent in opponents:  # one game is enough to know it plays (the batch is built at reset)
                BatchPlayers.build(opponent, self.config, 1, rng)

    def seat(self, games: np.ndarray, rng: np.random.Generator) -> None:
        """New games start in `games`: with a callable, draw each one's opponents."""
        if self.source is None:
            return
        for game in games.tolist():
            drawn = self.source(rng)
            opponents = self.listed(drawn)
            self._check_count(opponents)
            before = self.seated[game].copy()
            self.seated[game] = -1  # this game's old draw no longer holds its players
            try:
                for offset, opponent in enumerate(opponents):
                    self.seated[game, offset] = self._enrol(opponent, offset, rng)
            except ValueError:
                self.seated[game] = before
                raise
            self.drawn[game] = drawn

    def _check_count(self, opponents: Sequence[Any]) -> None:
        n = self.config.num_players
        if len(opponents) != n - 1:
            raise ValueError(f"{n} players need {n - 1} opponents, got {len(opponents)}")

    def _enrol(self, opponent: Any, offset: int, rng: np.random.Generator) -> int:
        """The index of `opponent`'s players at `offset`, built for the whole batch the first time
        it sits there (one per offset: a game with a member in two seats needs two copies of it)."""
        key = _key(opponent, offset)
        if key in self.index:
            return self.index[key]
        built = BatchPlayers.build(opponent, self.config, self.num_games, rng)
        if len(self.players) < MAX_SEATED:
            self.players.append(built)
            self.built_from.append((opponent, offset))
            index = len(self.players) - 1
        else:
            held = set(np.unique(self.seated).tolist())
            index = next((k for k in range(MAX_SEATED) if k not in held), -1)
            if index < 0:
                raise ValueError(f"more than {MAX_SEATED} distinct opponents are seated at once; draw from fewer "
                                 f"(return the same objects, or spec texts, rather than new ones)")
            del self.index[_key(*self.built_from[index])]
            self.players[index], self.built_from[index] = built, (opponent, offset)
        self.index[key] = index
        return index

    # ------------------------------------------------------------------ playing
    def act(self, offset: int, games: np.ndarray, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The moves of the opponents `offset` seats after the learner in `games` (each to move)."""
        seated = self.seated[games, offset - 1]
        first = seated[0]
        if (seated == first).all():  # fixed opponents, or one member everywhere: one call
            return self.players[first].act(games, observations, masks)
        actions = np.empty(games.shape[0], dtype=np.int64)
        for index in np.unique(seated).tolist():
            rows = np.flatnonzero(seated == index)
            actions[rows] = self.players[index].act(games[rows], observations[rows], masks[rows])
        return actions

    def new_hand(self, games: np.ndarray) -> None:
        """A hand starts in `games`: every seated copy forgets the last one."""
        for offset in range(self.seated.shape[1]):
            seated = self.seated[games, offset]
            for index in np.unique(seated).tolist():
                self.players[index].new_hand(games[seated == index])

    def game_over(self, games: np.ndarray, seats: np.ndarray, game_scores: np.ndarray | None) -> None:
        """Report the games that ended (pips by seat, one row each; None: illegal actions) to the callable."""
        if self.source is None:
            return
        for k, game in enumerate(games.tolist()):
            report_game(self.source, self.drawn[game], int(seats[k]), None if game_scores is None else game_scores[k])


def _key(opponent: Any, offset: int) -> tuple[Any, ...]:
    """What names one built player: a spec by its text, an object by its identity, and the seat offset."""
    return (offset, opponent) if isinstance(opponent, str) else (offset, "object", id(opponent))
