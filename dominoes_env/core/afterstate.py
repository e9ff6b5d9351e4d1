"""After-states: what a player observes right after its own move, from its observation alone.

A value learner that picks moves by the value of the position they lead to needs, for
every legal move, the observation it would have right after playing it and before
anyone else moves. Everything that move changes is visible to the mover, so the
after-state is a pure function of the mover's observation vector and the action (the
engine is never consulted). :func:`afterstate` does one move; :func:`afterstates` does
any batch of (observation, action) pairs in one compiled loop, and
:func:`legal_afterstates` every legal move of one observation, which is what a policy
needs at each decision.

What changes (rules 5-9 of the rule book):

- a tile: it leaves ``hand`` and appears in ``played`` on its line; that line's open
  value becomes the tile's other end; the mover's ``hand_sizes`` row drops by one and its
  ``passed_last`` bit clears; a seat line becomes started, and the dummy line opens when
  every seat line is started; a non-double on the mover's own line lowers its marker
  (a double, or a tile elsewhere, leaves it);
- a pass: the mover's marker and ``passed_last`` bit go up;
- the turn (``whose_turn``, ``turns_until``): after a double the mover moves again, so
  they stay; after a pass or a non-double they move on by one seat;
- ``hand_number`` and ``scores`` never change within a hand.

When the move ends the hand (the mover plays its last tile, or the hand becomes blocked)
the after-state is the final position as the engine leaves it: the turn does not move on
(the engine stops there), exactly what a one-hand environment shows after that move.
Whether the hand is blocked depends on the other players' tiles, but it can still be
decided from the observation: every tile is dealt (there is no boneyard), so the tiles
neither in the mover's hand, nor on the table, nor the engine are exactly the tiles the
others hold. A multi-hand environment shows the next hand's deal after a hand-ending move
instead; no function of the observation can know that deal, so the after-state stays the
finished hand's final position, and :func:`afterstates` says which moves end the hand.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit

from dominoes_env.core import observation as layout
from dominoes_env.core.config import GameConfig, make_config
from dominoes_env.core.deprecation import renamed_keyword


@njit(cache=True)
def _count_ones(vector, start, length):
    total = 0
    for i in range(start, start + length):
        total += vector[i]
    return total


@njit(cache=True)
def _index_of_one(vector, start, length):
    for i in range(length):
        if vector[start + i] == 1:
            return i
    return -1


@njit(cache=True)
def _advance_turn(out, offsets, n):
    """Move the turn on by one seat: the one-hot `whose_turn` and every `turns_until` row."""
    current = (_index_of_one(out, offsets[layout.WHOSE_TURN], n) + 1) % n
    for seat in range(n):
        out[offsets[layout.WHOSE_TURN] + seat] = 1 if seat == current else 0
        row = offsets[layout.TURNS_UNTIL] + seat * n
        for j in range(n):
            out[row + j] = 0
        out[row + (seat - current) % n] = 1


@njit(cache=True)
def _is_blocked(out, offsets, n, t, v, low, high, doubles):
    """Rule 9 on an after-state: no tile still held by anyone fits a seat line or the open dummy.

    The held tiles are those not on the table and not the engine (every tile is dealt).
    """
    engine = doubles[_index_of_one(out, offsets[layout.HAND_NUMBER], v)]
    dummy_open = out[offsets[layout.DUMMY_OPEN]] == 1
    for tile in range(t):
        if tile == engine:
            continue
        on_table = False
        for line in range(n + 1):
            if out[offsets[layout.PLAYED] + line * t + tile] == 1:
                on_table = True
        if on_table:
            continue
        for line in range(n + 1 if dummy_open else n):
            value = _index_of_one(out, offsets[layout.OPEN_VALUES] + line * v, v)
            if low[tile] == value or high[tile] == value:
                return False
    return True


@njit(cache=True)
def _write_afterstate(observation, action, offsets, n, t, v, max_hand, low, high, doubles, out):
    """Write the after-state of `action` into `out` (a copy of `observation`); return whether the hand ends."""
    out[:] = observation
    if action == (n + 1) * t:  # a pass: the marker goes up and the turn moves on
        out[offsets[layout.MARKERS]] = 1
        out[offsets[layout.PASSED_LAST]] = 1
        _advance_turn(out, offsets, n)
        return False
    line = action // t
    tile = action % t
    out[offsets[layout.HAND] + tile] = 0
    out[offsets[layout.PLAYED] + line * t + tile] = 1
    row = offsets[layout.OPEN_VALUES] + line * v
    old_value = _index_of_one(out, row, v)
    out[row + old_value] = 0
    out[row + low[tile] + high[tile] - old_value] = 1
    out[offsets[layout.PASSED_LAST]] = 0
    size = _count_ones(out, offsets[layout.HAND_SIZES], max_hand)
    out[offsets[layout.HAND_SIZES] + size - 1] = 0
    if line < n:
        out[offsets[layout.LINES_STARTED] + line] = 1
        if _count_ones(out, offsets[layout.LINES_STARTED], n) == n:
            out[offsets[layout.DUMMY_OPEN]] = 1
    is_double = low[tile] == high[tile]
    if line == 0 and not is_double:
        out[offsets[layout.MARKERS]] = 0
    ends_hand = _count_ones(out, offsets[layout.HAND], t) == 0 or _is_blocked(out, offsets, n, t, v, low, high, doubles)
    if not is_double and not ends_hand:
        _advance_turn(out, offsets, n)
    return ends_hand


@njit(cache=True)
def _write_afterstates(observations, rows, actions, offsets, n, t, v, max_hand, low, high, doubles, out, ends_hand):
    for k in range(actions.shape[0]):
        ends_hand[k] = _write_afterstate(observations[rows[k]], actions[k], offsets, n, t, v, max_hand,
                                         low, high, doubles, out[k])


class _Layout:
    """The constant arrays the compiled kernel needs for one table size."""

    def __init__(self, config: GameConfig) -> None:
        fields = layout.observation_fields(config, 1)
        self.config = config
        self.offsets = np.array([f.offset for f in fields], dtype=np.int64)
        self.base_size = sum(f.size for f in fields)
        tiles = config.tiles
        self.low = tiles.low.astype(np.int64)
        self.high = tiles.high.astype(np.int64)
        self.doubles = np.array([tiles.double(value) for value in range(config.highest_double + 1)], dtype=np.int64)

    def check_size(self, size: int) -> None:
        """Refuse a vector length this table size cannot produce (scores add n x bits)."""
        n = self.config.num_players
        extra = size - self.base_size
        if extra < 0 or extra % n:
            raise ValueError(
                f"an observation of {n} players, double-{self.config.highest_double} has {self.base_size} "
                f"entries (plus {n} x score bits in a multi-hand game), got {size}"
            )

    def run(self, observations: np.ndarray, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c = self.config
        out = np.empty((actions.shape[0], observations.shape[1]), dtype=np.int8)
        ends_hand = np.empty(actions.shape[0], dtype=np.bool_)
        _write_afterstates(observations, rows, actions, self.offsets, c.num_players, c.num_tiles,
                           c.highest_double + 1, c.max_hand_size, self.low, self.high, self.doubles,
                           out, ends_hand)
        return out, ends_hand


@lru_cache(maxsize=None)
def _layout_for(num_players: int, highest_double: int) -> _Layout:
    return _Layout(make_config(num_players, highest_double))


@renamed_keyword
def afterstates(observations: np.ndarray, actions: np.ndarray, num_players: int, highest_double: int,
                rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """After-states of many (observation, action) pairs in one compiled pass.

    The caller guarantees each action is legal for its observation's player (take them
    from the action mask) and that it is that player's turn; nothing is checked here
    beyond shapes, because this is the learner's inner loop. Use :func:`afterstate` for a
    checked single move.

    Args:
        observations: (B, D) observation vectors, or one (D,) vector.
        actions: (K,) actions.
        num_players, highest_double: the table size.
        rows: (K,) index of each action's observation; default: ``arange(K)`` for a
            (B, D) batch (one action per observation) or all zeros for a single vector.

    Returns:
        (K, D) int8 after-state vectors, and a (K,) bool array telling which moves end the
        hand (see the module docstring for what the after-state is then).
    """
    table = _layout_for(num_players, highest_double)
    observations = np.ascontiguousarray(np.atleast_2d(observations), dtype=np.int8)
    actions = np.ascontiguousarray(actions, dtype=np.int64).reshape(-1)
    table.check_size(observations.shape[1])
    if rows is None:
        rows = np.zeros(actions.shape[0], dtype=np.int64) if observations.shape[0] == 1 else np.arange(actions.shape[0])
    rows = np.ascontiguousarray(rows, dtype=np.int64).reshape(-1)
    if rows.shape != actions.shape or (rows.size and not 0 <= rows.min() <= rows.max() < observations.shape[0]):
        raise ValueError(f"rows must give, for each of the {actions.shape[0]} actions, an index "
                         f"into the {observations.shape[0]} observations")
    return table.run(observations, rows, actions)


@renamed_keyword
def legal_afterstates(observation: np.ndarray, action_mask: np.ndarray, num_players: int,
                      highest_double: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every legal action of one observation with its after-state: (actions, vectors, ends_hand)."""
    actions = np.flatnonzero(action_mask)
    vectors, ends_hand = afterstates(observation, actions, num_players, highest_double)
    return actions, vectors, ends_hand


@renamed_keyword
def afterstate(observation: np.ndarray, action: int, num_players: int, highest_double: int) -> np.ndarray:
    """The observation vector the mover would see right after playing `action`.

    Computed only from the mover's own observation vector (a one-hand or multi-hand
    layout) and the action; see the module docstring for every field that changes and
    for moves that end the hand.

    Raises:
        ValueError: the vector does not fit the table size, it is not the observer's turn,
            or the action is not legal in the observed position.
    """
    table = _layout_for(num_players, highest_double)
    vector = np.asarray(observation)
    if vector.ndim != 1:
        raise ValueError(f"expected one observation vector (1-D), got shape {vector.shape}")
    table.check_size(vector.shape[0])
    legal = legal_actions_of(vector, num_players, highest_double)
    if vector[table.offsets[layout.WHOSE_TURN]] != 1:
        raise ValueError("the observation is not its player's turn to move (whose_turn[0] is 0)")
    if isinstance(action, bool) or int(action) != action or int(action) not in set(legal.tolist()):
        raise ValueError(f"action {action!r} is not legal in this observation; legal actions: {legal.tolist()}")
    return afterstates(vector, np.array([int(action)]), num_players, highest_double)[0][0].astype(vector.dtype)


@renamed_keyword
def legal_actions_of(observation: np.ndarray, num_players: int, highest_double: int) -> np.ndarray:
    """The legal actions of the observer (rule 5-6), read from its observation vector, ascending."""
    config = make_config(num_players, highest_double)
    fields = {f.name: np.asarray(observation)[f.slice].reshape(f.shape) for f in layout.observation_fields(config, 1)}
    n, t = config.num_players, config.num_tiles
    hand = np.flatnonzero(fields["hand"])
    low, high = config.tiles.low[hand], config.tiles.high[hand]
    open_lines = [0] + [k for k in range(1, n) if fields["markers"][k]] + ([n] if fields["dummy_open"][0] else [])
    actions = [line * t + tile
               for line in open_lines
               for tile, a, b in zip(hand, low, high)
               if int(np.argmax(fields["open_values"][line])) in (a, b)]
    return np.array(sorted(actions) or [config.pass_action], dtype=np.int64)
