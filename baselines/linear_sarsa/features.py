"""The features f(s, a) of a move: what Q(s, a) = w . f(s, a) is a weighted sum of (numpy, numba).

Each feature is a number of about unit size, read from the mover's observation and from the
after-state of the move (:func:`dominoes_env.core.afterstate.afterstates`: the observation
right after the move, built by the rules' own kernels). One compiled pass computes every
move's features: a decision weighs a handful of moves, and numpy's per-call overhead on such
small arrays cost five times the work. The pass reads each field of the observation layout
by name, at its slot of the layout's offsets (``offsets[HAND]``, ``offsets[OPEN_VALUES]``:
:data:`dominoes_env.core.observation.SLOTS`), as the engine's own encoder does. Chains come
from :mod:`baselines.policies.chain_search` (the exact best chain, reference discounts). Sizes are
scaled by the table (N, the largest hand M, the players), so the same names mean the same
thing at every table size; the weights learned for one table are still refused at another
(the file records the table).

=====================  ==========================================================================
name                   value
=====================  ==========================================================================
bias                   1
tile_pips              pips of the tile played / 2N (0 for a pass)
is_double              the tile is a double (it gives another move)
on_own_line            the tile goes on my own line
on_other_line          the tile goes on another player's line (its marker is up)
on_dummy               the tile goes on the dummy line
is_pass                the move is a pass (legal only when nothing else is)
pips_left              pips left in my hand afterwards / (N M)
tiles_left             tiles left in my hand afterwards / M
chain_value            value of the best chain still playable from my line afterwards / (N M)
chain_tiles            tiles of that chain / M
off_chain_pips         pips of my hand left off that chain / (N M)
doubles_left_pips      pips of the doubles left in my hand / (N M) (they fit one value only)
playable_tiles         tiles of my hand that fit a line open to me afterwards / M
my_marker_up           my marker is up afterwards (my line is open to everyone)
feeds_others           the line I played on is open to others afterwards, times the share of
                       the tiles I cannot see that fit its new open value
opens_dummy            the move opens the dummy line (it starts the last unstarted line)
markers_up             share of the other players whose marker is up
opponent_near_out      1 / (fewest tiles an opponent holds): how close someone is to going out
pips_left_near_out     pips_left x opponent_near_out: pips held matter most when the hand may end
=====================  ==========================================================================

A move that ends the hand (going out, or blocking it) needs no estimate: its value is the
pips the mover still holds, exactly (the learner and the policy use that, see
:mod:`~baselines.linear_sarsa.policy`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from baselines.policies.chain_search import (
    IN_LINE_DISCOUNT,
    MAX_LINE_LENGTH,
    OFF_LINE_DISCOUNT,
    discount_powers,
    search_best_chain,
)
from dominoes_env.core.afterstate import afterstates
from dominoes_env.core.compiled import kernel
from dominoes_env.core.config import GameConfig
from dominoes_env.core.observation import (
    DUMMY_OPEN,
    HAND,
    HAND_NUMBER,
    HAND_SIZES,
    MARKERS,
    OPEN_VALUES,
    PLAYED,
    index_of_one,
    observation_layout,
)
from dominoes_env.core.rules import double_index

FEATURES: tuple[str, ...] = (
    "bias", "tile_pips", "is_double", "on_own_line", "on_other_line", "on_dummy", "is_pass",
    "pips_left", "tiles_left", "chain_value", "chain_tiles", "off_chain_pips", "doubles_left_pips",
    "playable_tiles", "my_marker_up", "feeds_others", "opens_dummy", "markers_up", "opponent_near_out",
    "pips_left_near_out",
)
(BIAS, TILE_PIPS, IS_DOUBLE, ON_OWN_LINE, ON_OTHER_LINE, ON_DUMMY, IS_PASS,
 PIPS_LEFT, TILES_LEFT, CHAIN_VALUE, CHAIN_TILES, OFF_CHAIN_PIPS, DOUBLES_LEFT_PIPS,
 PLAYABLE_TILES, MY_MARKER_UP, FEEDS_OTHERS, OPENS_DUMMY, MARKERS_UP, OPPONENT_NEAR_OUT,
 PIPS_LEFT_NEAR_OUT) = range(len(FEATURES))  # the column of each feature


class Moves(NamedTuple):
    """Moves of many observations, each with its features.

    Attributes:
        features: (K, len(FEATURES)) float64, columns in the order of :data:`FEATURES`.
        ends_hand: (K,) whether the move ends the hand.
        pips_left: (K,) pips the mover holds after the move (its score if the move ends the hand).
    """

    features: np.ndarray
    ends_hand: np.ndarray
    pips_left: np.ndarray


class MoveFeatures:
    """f(s, a) for the moves of one table size and its table rules."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.offsets = observation_layout(config).offsets  # a multi-hand game only appends the scores
        # the set's own (read-only int16) arrays: the chain search then runs the machine code
        # the planners compiled, not a second copy for other argument types
        self.low, self.high = config.tiles.low, config.tiles.high
        self.in_pow = discount_powers(IN_LINE_DISCOUNT, MAX_LINE_LENGTH)
        self.off_pow = discount_powers(OFF_LINE_DISCOUNT, MAX_LINE_LENGTH)

    @property
    def size(self) -> int:
        return len(FEATURES)

    def __call__(self, observations: np.ndarray, rows: np.ndarray, actions: np.ndarray) -> Moves:
        """The moves ``actions[k]`` of ``observations[rows[k]]`` (legal, never a draw: the tile drawn is
        unknown, so a draw has no after-state; it is always the only legal move)."""
        after, ends_hand = afterstates(observations, actions, self.config, rows=rows)
        features = np.zeros((actions.shape[0], len(FEATURES)))
        pips_left = np.empty(actions.shape[0])
        c = self.config
        _write_features(np.ascontiguousarray(observations, dtype=np.int8), np.asarray(rows, dtype=np.int64),
                        np.asarray(actions, dtype=np.int64), after, self.offsets, c.num_players, c.highest_double,
                        c.max_hand_size, self.low, self.high, self.in_pow, self.off_pow, features, pips_left)
        return Moves(features, ends_hand, pips_left)


@kernel
def _write_features(observations: Any, rows: Any, actions: Any, after: Any, offsets: Any, n: int, highest: int,
                    max_hand: int, low: Any, high: Any, in_pow: Any, off_pow: Any, out: Any, pips_left: Any) -> None:
    """Row k of `out` (zeroed): the features of move ``actions[k]`` of ``observations[rows[k]]``,
    whose after-state is ``after[k]``; ``pips_left[k]``: the pips the mover holds afterwards."""
    positions = np.empty(MAX_LINE_LENGTH, dtype=np.int64)
    for k in range(actions.shape[0]):
        before, row = observations[rows[k]], out[k]
        _move_columns(actions[k], n, low.shape[0], highest, low, high, row)
        pips_left[k] = _hand_columns(after[k], offsets, highest, max_hand, low, high, in_pow, off_pow, positions,
                                     row)
        _line_columns(before, after[k], actions[k], offsets, n, highest, max_hand, low, high, row)
        _opponent_columns(before, offsets, n, max_hand, row)


@kernel(inline="always")
def _move_columns(action: int, n: int, t: int, highest: int, low: Any, high: Any, row: Any) -> None:
    """What the move is: the tile (none for a pass) and the line it goes on."""
    row[BIAS] = 1.0
    if action >= (n + 1) * t:
        row[IS_PASS] = 1.0
        return
    tile, line = action % t, action // t
    row[TILE_PIPS] = (low[tile] + high[tile]) / (2.0 * highest)
    row[IS_DOUBLE] = low[tile] == high[tile]
    row[ON_OWN_LINE] = line == 0
    row[ON_OTHER_LINE] = 0 < line < n
    row[ON_DUMMY] = line == n


@kernel(inline="always")
def _hand_columns(after: Any, offsets: Any, highest: int, max_hand: int, low: Any, high: Any, in_pow: Any,
                  off_pow: Any, positions: Any, row: Any) -> float:
    """My hand after the move and the best chain it can still lay on my own line; returns its pips."""
    t = low.shape[0]
    hand = np.empty(t, dtype=np.int64)
    held = pips = double_pips = 0
    for tile in range(t):
        if after[offsets[HAND] + tile]:
            hand[held] = tile
            held += 1
            pips += low[tile] + high[tile]
            if low[tile] == high[tile]:
                double_pips += low[tile] + high[tile]
    own_open = _open_value(after, offsets, 0, highest + 1)  # line 0: mine
    value, length = search_best_chain(hand[:held], np.int64(own_open), low, high, in_pow, off_pow,
                                      np.int64(MAX_LINE_LENGTH), positions)  # int64s: the planners' signature
    chain_pips = 0
    for i in range(length):
        chain_pips += low[hand[positions[i]]] + high[hand[positions[i]]]
    scale = float(highest * max_hand)
    row[PIPS_LEFT] = pips / scale
    row[TILES_LEFT] = held / max_hand
    row[CHAIN_VALUE] = value / scale
    row[CHAIN_TILES] = length / max_hand
    row[OFF_CHAIN_PIPS] = (pips - chain_pips) / scale
    row[DOUBLES_LEFT_PIPS] = double_pips / scale
    return float(pips)


@kernel(inline="always")
def _line_columns(before: Any, after: Any, action: int, offsets: Any, n: int, highest: int, max_hand: int,
                  low: Any, high: Any, row: Any) -> None:
    """Which lines are open to me, and to the others, after the move."""
    t, v = low.shape[0], highest + 1
    fits = np.zeros(v, dtype=np.bool_)  # values of the lines open to me: mine, marker-up lines, the open dummy
    for line in range(n + 1):
        if line == 0 or (line < n and after[offsets[MARKERS] + line]) or (line == n and after[offsets[DUMMY_OPEN]]):
            fits[_open_value(after, offsets, line, v)] = True
    playable = 0
    for tile in range(t):
        if after[offsets[HAND] + tile] and (fits[low[tile]] or fits[high[tile]]):
            playable += 1
    row[PLAYABLE_TILES] = playable / max_hand
    row[MY_MARKER_UP] = after[offsets[MARKERS]]
    row[OPENS_DUMMY] = after[offsets[DUMMY_OPEN]] == 1 and before[offsets[DUMMY_OPEN]] == 0
    line = action // t
    if line > n or not (line == n or after[offsets[MARKERS] + line]):  # a pass, or a line closed to the others
        return
    value = _open_value(after, offsets, line, v)
    engine = double_index(index_of_one(before, offsets[HAND_NUMBER], v), highest)
    unseen = 0  # tiles I cannot see (not mine, not on the table, not the engine) that fit the new open value
    for tile in range(t):
        if (low[tile] == value or high[tile] == value) and tile != engine and not before[offsets[HAND] + tile] \
                and not _on_table(before, offsets, n, t, tile):
            unseen += 1
    row[FEEDS_OTHERS] = unseen / v


@kernel(inline="always")
def _opponent_columns(before: Any, offsets: Any, n: int, max_hand: int, row: Any) -> None:
    """How many others' lines are open, and how close the others are to going out."""
    up = 0
    fewest = max_hand
    for seat in range(1, n):
        up += before[offsets[MARKERS] + seat]
        held = 0
        for j in range(max_hand):
            held += before[offsets[HAND_SIZES] + seat * max_hand + j]
        fewest = min(fewest, held)
    row[MARKERS_UP] = up / (n - 1)
    row[OPPONENT_NEAR_OUT] = 1.0 / max(fewest, 1)
    row[PIPS_LEFT_NEAR_OUT] = row[PIPS_LEFT] * row[OPPONENT_NEAR_OUT]


@kernel(inline="always")
def _open_value(vector: Any, offsets: Any, line: int, v: int) -> int:
    return index_of_one(vector, offsets[OPEN_VALUES] + line * v, v)


@kernel(inline="always")
def _on_table(vector: Any, offsets: Any, n: int, t: int, tile: int) -> bool:
    for line in range(n + 1):
        if vector[offsets[PLAYED] + line * t + tile]:
            return True
    return False
