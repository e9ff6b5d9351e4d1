"""One hand of the game: dealing, a hand-built position, legal actions, playing a move.

:class:`HandState` is the Python face of the flat state array of
:mod:`dominoes_env.core.rules`: it validates, names things, and delegates the rules to the
compiled functions there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache

import numpy as np

from dominoes_env.core import actions, rules, validation
from dominoes_env.core.config import GameConfig, describe_table
from dominoes_env.core.errors import IllegalActionError
from dominoes_env.core.validation import as_integer, integer


def engine_value_for_hand(config: GameConfig, hand_index: int) -> int:
    """Rule 1: hand k of a game uses the engine (h|h) with h = N - k, wrapping after 0."""
    return int(rules.engine_value(hand_index, config.highest_double))


def deal_hands(config: GameConfig, hand_index: int, rng: np.random.Generator) -> list[list[int]]:
    """Rule 2: shuffle the set and deal it; each seat's tiles, ascending (engine included).

    It is :meth:`HandState.deal` (the same draw from `rng`), read back as hands: with a
    boneyard, the hands after the engine was drawn.
    """
    return HandState.deal(config, hand_index, rng).starting_deal()[0]


@cache
def _view_bounds(num_players: int, num_tiles: int) -> tuple[tuple[int, int], ...]:
    """(start, stop) of each named view, in the order of :func:`rules.split_state`.

    Computed once per table size: slicing from Python is far cheaper than calling the
    compiled split_state, and the two are checked against each other in the tests.
    """
    sizes = [num_tiles] * 3 + [num_players + 1] + [num_players] * 4 + [num_tiles]
    bounds, start = [], rules.HEADER_SIZE
    for size in sizes:
        bounds.append((start, start + size))
        start += size
    return tuple(bounds)


def _seat(config: GameConfig, seat: object, what: str) -> int:
    """`seat` as a seat number, or a ValueError naming `what` and the seats that exist."""
    value = as_integer(seat)
    if value is None or not 0 <= value < config.num_players:
        raise ValueError(f"{what}: {seat!r} is not a seat; seats are 0..{config.num_players - 1}")
    return value


class HandState:
    """The full (omniscient) state of one hand.

    Build it with :meth:`from_deal` (the normal start of a hand) or :meth:`from_position`
    (any literal position, for tests and analysis). Lines are absolute here: line s is
    seat s's line and line n the dummy; the action encoding is egocentric to the player
    to move, as in the environment.
    """

    __slots__ = ("config", "state", "_tiles", "_buffer", "_num_actions")

    def __init__(self, config: GameConfig, state: np.ndarray) -> None:
        self.config = config
        self.state = state
        self._tiles = config.tiles
        self._num_actions = config.num_actions
        self._buffer = np.empty(config.num_actions, dtype=np.int64)

    # ----------------------------------------------------------------- construction
    @classmethod
    def _empty(cls, config: GameConfig, engine_value: int) -> HandState:
        n, t = config.num_players, config.num_tiles
        state = np.zeros(rules.state_size(n, t), dtype=np.int16)
        state[rules.NUM_PLAYERS] = n
        state[rules.NUM_TILES] = t
        state[rules.WENT_OUT] = -1
        state[rules.ENGINE_VALUE] = engine_value
        state[rules.RULES] = config.rule_flags
        state[rules.ENGINE_HOLDER] = -1  # not known for a position built by hand
        state[rules.DOUBLE_LINE] = -1
        hand = cls(config, state)
        hand.owner[:] = rules.OUT_OF_PLAY
        hand.line_of[:] = -1
        hand.play_order[:] = -1
        hand.open_values[:] = engine_value
        return hand

    @classmethod
    def from_deal(cls, config: GameConfig, hands: Sequence[Iterable[int]], engine_value: int,
                  boneyard: Iterable[int] = ()) -> HandState:
        """Start a hand from a deal: the engine leaves its holder's hand; its holder (or, by the
        ``first_player`` rule, the next seat) moves first (rules 1-4).

        `hands` and `boneyard` (tiles face down, in the order they will be drawn; only with
        the boneyard rule) must hold every tile of the set exactly once, the engine in a hand.
        """
        n, t = config.num_players, config.num_tiles
        if len(hands) != n:
            raise ValueError(f"hands must list {n} seats, got {len(hands)}")
        dealt = [np.asarray(list(tiles), dtype=np.int64) for tiles in hands]
        pile = np.asarray(list(boneyard), dtype=np.int64)
        if pile.size and not config.boneyard:
            raise ValueError("a boneyard needs the boneyard rule (make_config(..., boneyard=True))")
        every = np.concatenate([*dealt, pile])
        if every.size != t or np.any(np.sort(every) != np.arange(t)):
            raise ValueError(f"a deal must hold each of the {t} tiles (indices 0..{t - 1}) exactly once")
        _check_boneyard_size(config, pile.shape[0])
        engine_value = integer("engine_value", engine_value, 0, config.highest_double)
        if config.tiles.double(engine_value) in set(pile.tolist()):
            raise ValueError("the engine must be in a hand (with a boneyard, the players draw until one holds it)")
        owner = np.empty(t, dtype=np.int16)
        for seat, tiles in enumerate(dealt):
            owner[tiles] = seat
        owner[pile] = rules.IN_BONEYARD
        hand = cls(config, np.empty(rules.state_size(n, t), dtype=np.int16))
        rules.start_hand(hand.state, n, t, engine_value, config.tiles.double(engine_value), config.rule_flags, owner,
                         pile.astype(np.int16), pile.shape[0])
        return hand

    def _lay_boneyard(self, draw_order: np.ndarray) -> None:
        """The pile holds the boneyard with the next tile to draw last (drawing pops the end)."""
        count = draw_order.shape[0]
        self.pile[:count] = draw_order[::-1]
        self.state[rules.PILE_COUNT] = count

    @classmethod
    def deal(cls, config: GameConfig, hand_index: int, rng: np.random.Generator) -> HandState:
        """Deal hand number `hand_index` of a game from the seeded generator `rng` (rules 1-4,
        and the boneyard rule)."""
        engine_value = engine_value_for_hand(config, hand_index)
        hand = cls(config, np.empty(rules.state_size(config.num_players, config.num_tiles), dtype=np.int16))
        rules.deal_hand(hand.state, rng.permutation(config.num_tiles).astype(np.int16), config.num_players,
                        hand_index, engine_value, config.tiles.double(engine_value), config.rule_flags,
                        config.deal_size, np.empty(2 * config.num_tiles, dtype=np.int16))
        return hand

    @classmethod
    def from_position(
        cls,
        config: GameConfig,
        hands: Sequence[Iterable[int]],
        engine_value: int,
        current_player: int = 0,
        lines: Mapping[int, Sequence[int]] | None = None,
        markers: Iterable[int] = (),
        passed_last: Iterable[int] = (),
        boneyard: Iterable[int] = (),
        drew: bool = False,
        double_to_cover: int | None = None,
    ) -> HandState:
        """Build any position from explicit hands and lines.

        Args:
            config: the table size.
            hands: tile indices each seat holds (the engine must not be among them).
            engine_value: h; every line starts from the engine (h|h).
            current_player: the seat to move.
            lines: absolute line (seat, or n for the dummy) -> tiles played on it, in order;
                each must chain from h. Playing on the dummy requires every seat's line started.
            markers: seats whose marker is up.
            passed_last: seats whose latest action was a pass.
            boneyard: tiles face down, the next one to draw first (boneyard rule only).
            drew: the player to move has drawn this turn (boneyard rule only).
            double_to_cover: the line whose last tile is a double waiting to be covered
                (cover rule only).

        Tiles listed nowhere are out of play (not in any hand, not on the table): this keeps
        hand-written positions short. Raises ValueError for an inconsistent position.
        """
        n = config.num_players
        if len(hands) != n:
            raise ValueError(f"hands must list {n} seats, got {len(hands)}")
        current_player = _seat(config, current_player, "current_player")
        markers = [_seat(config, seat, "markers") for seat in markers]
        passed_last = [_seat(config, seat, "passed_last") for seat in passed_last]
        engine_value = integer("engine_value", engine_value, 0, config.highest_double)
        hand = cls._empty(config, engine_value)
        engine = config.tiles.double(engine_value)
        seen = {engine}
        for seat, tiles in enumerate(hands):
            for tile in tiles:
                hand._claim(tile, seen)
                hand.owner[tile] = seat
            hand.hand_sizes[seat] = int(np.sum(hand.owner == seat))
            if hand.hand_sizes[seat] > config.max_hand_size:
                raise ValueError(f"seat {seat} holds {hand.hand_sizes[seat]} tiles; a deal gives at most "
                                 f"{config.max_hand_size} in this game")
        for line, tiles in sorted((lines or {}).items()):
            hand._lay_line(line, tiles, seen)
        for seat in markers:
            hand.marker_up[seat] = 1
        for seat in passed_last:
            hand.passed_last[seat] = 1
        hand._lay_table_rule_state(list(boneyard), drew, double_to_cover, seen)
        hand.state[rules.CURRENT_PLAYER] = current_player
        hand._finish_if_over()
        return hand

    def _lay_table_rule_state(self, boneyard: list[int], drew: bool, double_to_cover: int | None,
                              seen: set[int]) -> None:
        config = self.config
        if (boneyard or drew) and not config.boneyard:
            raise ValueError("a boneyard (or a draw) needs the boneyard rule (make_config(..., boneyard=True))")
        _check_boneyard_size(config, len(boneyard))
        for tile in boneyard:
            self._claim(tile, seen)
            self.owner[tile] = rules.IN_BONEYARD
        self._lay_boneyard(np.asarray(boneyard, dtype=np.int64))
        self.state[rules.DREW] = int(validation.flag("drew", drew))
        if double_to_cover is None:
            return
        if not config.cover_doubles:
            raise ValueError("a double to cover needs the cover rule (make_config(..., cover_doubles=True))")
        line = integer("double_to_cover", double_to_cover, 0, config.num_players)
        played = self.line(line)
        if not played or not self._tiles.is_double[played[-1]]:
            raise ValueError(f"double_to_cover={line}: line {line} does not end in a double")
        self.state[rules.DOUBLE_LINE] = line

    def _claim(self, tile: int, seen: set[int]) -> None:
        if not 0 <= tile < self.config.num_tiles:
            raise ValueError(f"tile index {tile} is outside 0..{self.config.num_tiles - 1}")
        if tile in seen:
            raise ValueError(f"tile {self._tiles.name(tile)} (index {tile}) appears twice (or is the engine)")
        seen.add(tile)

    def _lay_line(self, line: int, tiles: Sequence[int], seen: set[int]) -> None:
        n = self.config.num_players
        if not 0 <= line <= n:
            raise ValueError(f"line {line} is not a seat line 0..{n - 1} or the dummy line {n}")
        if line == n and tiles and not np.all(self.line_started == 1):
            raise ValueError("the dummy line cannot hold tiles before every seat's line is started")
        for tile in tiles:
            self._claim(tile, seen)
            low, high = self._tiles.ends(tile)
            value = int(self.open_values[line])
            if value not in (low, high):
                raise ValueError(f"{self._tiles.name(tile)} does not fit line {line}, whose open value is {value}")
            self.open_values[line] = low + high - value
            self.owner[tile] = rules.ON_TABLE
            self.line_of[tile] = line
            self.play_order[tile] = self.state[rules.TILES_PLAYED]
            self.state[rules.TILES_PLAYED] += 1
        if tiles and line < n:
            self.line_started[line] = 1
            if np.all(self.line_started == 1):
                self.state[rules.DUMMY_OPEN] = 1

    def _finish_if_over(self) -> None:
        if np.any(self.hand_sizes == 0):
            self.state[rules.HAND_OVER] = 1
        elif rules.is_blocked(self.state, self._tiles.tiles_with_value):
            self.state[rules.HAND_OVER] = 1

    def starting_deal(self) -> tuple[list[list[int]], list[int]]:
        """The deal this hand started from, for :meth:`from_deal`: each seat's tiles ascending (the
        engine with its holder) and the boneyard in draw order.

        Raises:
            ValueError: a move has been played, or the position was built by hand
                (:meth:`from_position`), so no deal is known.
        """
        holder = int(self.state[rules.ENGINE_HOLDER])
        if holder < 0 or self.num_moves:
            raise ValueError("only a hand dealt (deal, from_deal) with no move played yet has a known deal")
        engine = self._tiles.double(self.engine_value)
        seats = range(self.config.num_players)
        return [sorted(self.hand(seat) + ([engine] if seat == holder else [])) for seat in seats], self.boneyard

    def copy(self) -> HandState:
        """An independent copy (one array copy)."""
        return HandState(self.config, self.state.copy())

    # ----------------------------------------------------------------- named views
    def _view(self, index: int) -> np.ndarray:
        start, stop = _view_bounds(self.config.num_players, self.config.num_tiles)[index]
        return self.state[start:stop]

    owner = property(lambda self: self._view(0), doc="Seat holding each tile, ON_TABLE (-1) or OUT_OF_PLAY (-2).")
    line_of = property(lambda self: self._view(1), doc="Absolute line of each played tile, -1 otherwise.")
    play_order = property(lambda self: self._view(2), doc="Order in which tiles were played, -1 if not.")
    open_values = property(lambda self: self._view(3), doc="Open value of each seat's line, then the dummy.")
    line_started = property(lambda self: self._view(4), doc="1 once a seat's line holds a tile.")
    marker_up = property(lambda self: self._view(5), doc="1 while a seat's marker is up.")
    passed_last = property(lambda self: self._view(6), doc="1 if a seat's latest action was a pass.")
    hand_sizes = property(lambda self: self._view(7), doc="Number of tiles each seat holds.")
    pile = property(lambda self: self._view(8), doc="The boneyard's slots; the face-down tiles are "
                                                   "pile[:PILE_COUNT], the next to draw last.")

    @property
    def boneyard(self) -> list[int]:
        """The tiles face down, the next one to draw first (empty without the boneyard rule)."""
        return self.pile[:self.state[rules.PILE_COUNT]][::-1].tolist()

    @property
    def drew(self) -> bool:
        """Whether the player to move has drawn this turn (it may then only play that tile, or pass)."""
        return bool(self.state[rules.DREW])

    @property
    def double_to_cover(self) -> int | None:
        """The absolute line whose double must be covered before any other move (cover rule), or None."""
        line = int(self.state[rules.DOUBLE_LINE])
        return None if line < 0 else line

    @property
    def current_player(self) -> int:
        return int(self.state[rules.CURRENT_PLAYER])

    @property
    def engine_value(self) -> int:
        return int(self.state[rules.ENGINE_VALUE])

    @property
    def dummy_open(self) -> bool:
        return bool(self.state[rules.DUMMY_OPEN])

    @property
    def is_over(self) -> bool:
        return bool(self.state[rules.HAND_OVER])

    @property
    def went_out(self) -> int | None:
        """The seat that played its last tile, or None (hand going on, or blocked)."""
        seat = int(self.state[rules.WENT_OUT])
        return None if seat < 0 else seat

    @property
    def num_moves(self) -> int:
        return int(self.state[rules.MOVES])

    def hand(self, seat: int) -> list[int]:
        """Tiles `seat` holds, ascending."""
        return np.flatnonzero(self.owner == seat).tolist()

    def line(self, line: int) -> list[int]:
        """Tiles on an absolute line, in the order they were played."""
        tiles = np.flatnonzero(self.line_of == line)
        return tiles[np.argsort(self.play_order[tiles])].tolist()

    # ----------------------------------------------------------------- rules
    def legal_actions(self) -> np.ndarray:
        """Legal actions of the player to move, ascending (empty once the hand is over)."""
        if self.state[rules.HAND_OVER]:
            return np.empty(0, dtype=np.int64)
        count = rules.fill_legal_actions(self.state, self._tiles.tiles_with_value, self._buffer)
        return self._buffer[:count].copy()

    def legal_mask(self, out: np.ndarray | None = None) -> np.ndarray:
        """int8 mask over all actions (all zeros once the hand is over); written into `out` if given."""
        mask = np.empty(self.config.num_actions, dtype=np.int8) if out is None else out
        rules.fill_legal_mask(self.state, self._tiles.tiles_with_value, mask)
        return mask

    def is_legal(self, action: object) -> bool:
        value = as_integer(action)
        if value is None or not 0 <= value < self._num_actions:
            return False
        return bool(rules.is_legal(self.state, self._tiles.low, self._tiles.high, value))

    def apply(self, action: object) -> None:
        """Play `action` for the player to move.

        Raises:
            IllegalActionError: the action is not an integer, out of range, or not legal
                here; the state is left exactly as it was.
        """
        value = as_integer(action)
        tiles = self._tiles
        legal = value is not None and 0 <= value < self._num_actions
        if not (legal and rules.apply_if_legal(self.state, tiles.low, tiles.high, tiles.tiles_with_value, value)):
            raise IllegalActionError(self.describe_illegal(action))

    def apply_unchecked(self, action: int) -> None:
        """Play an action the caller has already checked against :meth:`legal_mask`.

        The environment validates every action against the mask it hands out, so it skips
        the second check; anything else should call :meth:`apply`.
        """
        tiles = self._tiles
        rules.apply_action(self.state, tiles.low, tiles.high, tiles.tiles_with_value, action)

    def describe_illegal(self, action: object) -> str:
        """Why `action` is refused, with the legal actions listed."""
        if self.is_over:
            return f"action {action!r} refused: the hand is over"
        legal = self.legal_actions().tolist()
        value = as_integer(action)
        if value is None:
            reason = f"action {action!r} is not an integer"
        elif not 0 <= value < self.config.num_actions:
            reason = f"action {value} is out of range 0..{self.config.num_actions - 1}"
        else:
            reason = f"action {value} ({self.describe_action(value)}) is not legal for seat {self.current_player}"
        named = ", ".join(f"{a} {self.describe_action(a)}" for a in legal)
        return f"{reason}; legal actions: [{named}]"

    def describe_action(self, action: int) -> str:
        """Readable form of an action for the player to move, e.g. '(3|7) on own line'."""
        return actions.describe(self.config, action)

    def scores(self) -> np.ndarray:
        """Rule 10: pips each seat still holds (final once the hand is over)."""
        out = np.zeros(self.config.num_players, dtype=np.int64)
        rules.hand_scores(self.state, self._tiles.low, self._tiles.high, out)
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HandState) and self.config == other.config and np.array_equal(self.state, other.state)

    def __repr__(self) -> str:
        return (f"HandState(players={self.config.num_players}, highest={self.config.highest_double}, "
                f"engine={self.engine_value}, to_move={self.current_player}, over={self.is_over})")


def _check_boneyard_size(config: GameConfig, count: int) -> None:
    """A boneyard only shrinks after the deal: more tiles than the deal leaves face down is no
    position of this game (and would not fit the observation's boneyard field)."""
    if count > config.boneyard_at_deal:
        raise ValueError(f"a boneyard of {count} tiles; the deal leaves at most {config.boneyard_at_deal} face down "
                         f"in {describe_table(config)}")
