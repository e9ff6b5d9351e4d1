"""The chain ("line") search of the best_line and persistent_line policies, exact within a budget.

A *chain* is a sequence of tiles from the player's hand that it could lay one after
another on its own line, starting from that line's open value: each tile has an end equal
to the current open value and its other end becomes the next one (a double keeps the
value). This module finds the chain of highest value, exactly as an exhaustive
enumeration up to ``max_line_length`` tiles would, but with a compiled branch-and-bound
search instead of listing every chain.

Value of a chain L = (t1, ..., tk) held in a hand H (docs/baselines.md, with the decided fixes):

- ``turn_i = max(0, (number of non-doubles among t1..ti) - 1)``: a double does not use up
  a turn (it gives another move), and a double played before any non-double is played in
  the current turn, exponent 0 (the reference computed -1 there, which rewarded a leading
  double with ``1 / in_line_discount``; docs/baselines.md decided 0).
- in-line value ``= sum_i in_line_discount ** turn_i * pips(t_i)``;
- off-line value ``= off_line_discount ** turn_k * (pips of the tiles of H not in L)``,
  with exponent 1 for the empty chain;
- value = in-line value - off-line value.

Candidates and ties, as in the reference (whose ``np.argmax`` over its depth-first list
picked the first maximum): the candidates are the *maximal* chains, those that cannot be
extended (no unused hand tile fits their last open value) or have ``max_line_length``
tiles. The empty chain is the answer only when no tile fits the open value. Among chains
of equal value the lexicographically smallest sequence of tile indices wins. (With
discounts in (0, 1] a chain's value never drops when it is extended, so the best maximal
chain is also the best of all non-empty chains.)

Search: depth-first over the hand's tiles with the current open value as the only
position, heaviest fitting tile first (so the first chain reached is the greedy one and
good chains come early), pruned by an admissible upper bound on the value of every
maximal chain below a node (see :func:`_upper_bound`). A subtree is cut only when its
bound is below the best value found so far, never when it could tie it, and ties are
settled by comparing tile sequences; so the answer is exactly the exhaustive one.

The budget: a search enters at most :data:`MAX_SEARCH_NODES` nodes, then keeps the best chain
found so far. On hands of up to 14 tiles (4 players, double-nine; every table's usual hands)
it never binds in the measurements of ``benchmarks/chain_search_bound.py``, so the answer is
the exact one; on the long hands of 2 players with a double-twelve set (up to 45 tiles) the
exact search may enter a million nodes, and the budget keeps a decision within a few times
the cost of one at 4 players, double-nine, at the price of a slightly worse chain in the few
hands where it binds (docs/baselines.md, "The chain search's bound", has the figures).
``best_chain(..., max_nodes=None)`` is the exact search whatever it costs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from dominoes_env.core import validation
from dominoes_env.core.compiled import kernel
from dominoes_env.core.tiles import tile_set

#: Reference defaults (docs/baselines.md).
IN_LINE_DISCOUNT = 0.9
OFF_LINE_DISCOUNT = 0.7
MAX_LINE_LENGTH = 12
#: The search's budget: nodes entered per search (docs/baselines.md, "The chain search's bound").
#: Hands of up to 14 tiles (4 players, double-nine) never need more than a few thousand; a
#: 45-tile hand (2 players, double-twelve) may need a million, and then gets the best chain
#: found within the budget.
MAX_SEARCH_NODES = 4096


@dataclass(frozen=True)
class Chain:
    """A chain of tiles (canonical indices, in the order they would be played) and its value."""

    tiles: tuple[int, ...]
    value: float


def discount_powers(discount: float, max_line_length: int) -> np.ndarray:
    """``discount ** j`` for j = 0 .. max_line_length + 1 (read-only, float64).

    Computed with Python's ``**`` so that a value summed from these tables equals the
    same sum written out by hand, to the last bit.
    """
    return _discount_powers(float(discount), int(max_line_length))


@lru_cache(maxsize=64)
def _discount_powers(discount: float, max_line_length: int) -> np.ndarray:
    # cached, so shared, and never written; writable all the same, as every table the kernels
    # take (a read-only one would compile each kernel a second time: see dominoes_env.core.tiles)
    return np.array([discount ** j for j in range(max_line_length + 2)], dtype=np.float64)


def check_parameters(in_line_discount: float, off_line_discount: float, max_line_length: int,
                     num_tiles: int) -> tuple[float, float, int]:
    """The parameters as (float, float, int), or a ValueError saying what is allowed.

    The search is exact for discounts in (0, 1]; a chain is never longer than the set has
    tiles, so `max_line_length` is bounded by `num_tiles` (a larger bound would only
    allocate).
    """
    return (validation.real("in_line_discount", in_line_discount, 0.0, 1.0, above_minimum=True),
            validation.real("off_line_discount", off_line_discount, 0.0, 1.0, above_minimum=True),
            validation.integer("max_line_length", max_line_length, 1, num_tiles, f"at most the {num_tiles} tiles "
                               "of the set"))


def best_chain(hand: Iterable[int], open_value: int, highest_double: int,
               in_line_discount: float = IN_LINE_DISCOUNT, off_line_discount: float = OFF_LINE_DISCOUNT,
               max_line_length: int = MAX_LINE_LENGTH, max_nodes: int | None = MAX_SEARCH_NODES) -> Chain:
    """The best chain the hand can lay on a line whose open value is `open_value`.

    Args:
        hand: canonical tile indices held (any order, no repeats).
        open_value: the open value of the player's own line.
        highest_double: N of the double-N set (gives each tile's ends and pips).
        in_line_discount, off_line_discount: the discounts of the chain value, in (0, 1].
        max_line_length: longest chain considered.
        max_nodes: the search's budget (:data:`MAX_SEARCH_NODES`, the policies'); None: none, the
            exact best chain whatever it costs.

    Returns:
        The best maximal chain and its value; the empty chain (value
        ``-off_line_discount * pips(hand)``) when no tile fits `open_value`.
    """
    tiles = tile_set(highest_double)
    in_line_discount, off_line_discount, max_line_length = check_parameters(
        in_line_discount, off_line_discount, max_line_length, tiles.num_tiles)
    hand_array = _hand_array(hand, tiles.num_tiles)
    if not 0 <= open_value <= highest_double:
        raise ValueError(f"open_value must be 0..{highest_double}, got {open_value}")
    budget = 0 if max_nodes is None else validation.integer("max_nodes", max_nodes, 1, 2**62)
    out = np.empty(max_line_length, dtype=np.int64)
    value, length, _ = search_chain(hand_array, open_value, tiles.low, tiles.high,
                                 discount_powers(in_line_discount, max_line_length),
                                 discount_powers(off_line_discount, max_line_length),
                                 max_line_length, out, budget)
    return Chain(tuple(int(hand_array[i]) for i in out[:length]), float(value))


def chain_value(chain: Sequence[int], hand: Iterable[int], highest_double: int,
                in_line_discount: float = IN_LINE_DISCOUNT, off_line_discount: float = OFF_LINE_DISCOUNT) -> float:
    """The value of a given chain for a hand (the chain's tiles must be in the hand).

    Does not check that the tiles connect: persistent_line re-values the chain it keeps.
    """
    tiles = tile_set(highest_double)
    hand_array = _hand_array(hand, tiles.num_tiles)
    chain_array = np.asarray(list(chain), dtype=np.int64)
    missing = set(chain_array.tolist()) - set(hand_array.tolist())
    if missing:
        raise ValueError(f"chain tiles {sorted(missing)} are not in the hand {hand_array.tolist()}")
    length = max(len(chain_array), 1)
    return float(value_of_chain(chain_array, hand_array, tiles.low, tiles.high,
                                discount_powers(in_line_discount, length),
                                discount_powers(off_line_discount, length)))


def _hand_array(hand: Iterable[int], num_tiles: int) -> np.ndarray:
    array = np.unique(np.asarray(list(hand), dtype=np.int64))
    if array.size and not 0 <= array[0] <= array[-1] < num_tiles:
        raise ValueError(f"hand tiles must be tile indices 0..{num_tiles - 1}, got {array.tolist()}")
    return array


# --------------------------------------------------------------------------- compiled core
@kernel(inline="always")
def turn_of(non_doubles):
    """Turn exponent of a chain tile: non-doubles among the tiles up to it, minus one, at least 0.

    A double does not use up a turn (it gives another move), and a double before any
    non-double is played in the current turn (exponent 0).
    """
    return max(non_doubles - 1, 0)


@kernel(inline="always")
def chain_value_of_parts(length, in_line, chain_pips, non_doubles, total, off_pow):
    """The chain value formula, the one place it is written: in-line value minus the pips left
    off the chain, discounted by the chain's last turn (exponent 1 for the empty chain)."""
    exponent = 1 if length == 0 else turn_of(non_doubles)
    return in_line - off_pow[exponent] * (total - chain_pips)


@kernel
def walk_chain(chain, low, high, in_pow, weighted_pips):
    """Lay `chain` (tile indices, play order) tile by tile: return (in-line value, chain pips,
    non-doubles) and write each tile's discounted pips ``in_pow[turn] * pips`` into `weighted_pips`."""
    in_line = 0.0
    chain_pips = 0
    non_doubles = 0
    for i in range(chain.shape[0]):
        tile = chain[i]
        pips = low[tile] + high[tile]
        if low[tile] != high[tile]:
            non_doubles += 1
        weighted_pips[i] = in_pow[turn_of(non_doubles)] * pips
        in_line += weighted_pips[i]
        chain_pips += pips
    return in_line, chain_pips, non_doubles


@kernel
def value_of_chain(chain, hand, low, high, in_pow, off_pow):
    """Value of `chain` (tile indices, play order) held in `hand` (tile indices), as above."""
    total = np.int64(0)  # not the literal 0: a literal would compile the callee twice
    for tile in hand:
        total += low[tile] + high[tile]
    return value_in_hand_of(chain, total, low, high, in_pow, off_pow)


@kernel
def value_in_hand_of(chain, total, low, high, in_pow, off_pow):
    """Value of `chain` held in a hand whose tiles add up to `total` pips."""
    weighted_pips = np.empty(chain.shape[0], dtype=np.float64)
    in_line, chain_pips, non_doubles = walk_chain(chain, low, high, in_pow, weighted_pips)
    return chain_value_of_parts(chain.shape[0], in_line, chain_pips, non_doubles, total, off_pow)


@kernel(inline="always")
def _upper_bound(length, in_line, chain_pips, non_doubles, total, doubles_left, by_pips, pips, used,
                 max_length, in_pow, off_pow):
    """An upper bound on the value of every maximal chain extending the current one.

    A chain extended by m more tiles gains at most the m heaviest unused tiles, the j-th
    of them discounted by the earliest turn it could be played in (at most `doubles_left`
    of the added tiles are doubles, which do not advance the turn), and keeps off-line at
    least the rest of the hand discounted by the latest turn its last tile could take
    (all added tiles non-doubles). Both are monotone in the right direction for discounts
    in (0, 1], so the maximum over m bounds every extension.
    """
    remaining = total - chain_pips
    bound = -np.inf
    added = 0
    gained = 0.0
    removed = 0
    limit = max_length - length
    for index in by_pips:
        if used[index]:
            continue
        added += 1
        earliest = turn_of(max(non_doubles, non_doubles + added - doubles_left))
        gained += in_pow[earliest] * pips[index]
        removed += pips[index]
        latest = turn_of(non_doubles + added)
        candidate = in_line + gained - off_pow[latest] * (remaining - removed)
        if candidate > bound:
            bound = candidate
        if added == limit:
            break
    return bound


@kernel(inline="always")
def _precedes(sequence, best_sequence, length, best_length):
    """Whether a chain comes before the best one in tile index order (neither is a prefix of the other)."""
    for k in range(min(length, best_length)):
        if sequence[k] != best_sequence[k]:
            return sequence[k] < best_sequence[k]
    return length < best_length


@kernel(inline="always")
def _heaviest_first(pips):
    """Positions ordered by decreasing pips, equal pips in position order (a stable insertion
    sort: hands are short, and it compiles far faster than numba's argsort)."""
    order = np.empty(pips.shape[0], dtype=np.int64)  # not np.arange: its overload compiles slowly
    for i in range(order.shape[0]):
        order[i] = i
    for i in range(1, order.shape[0]):
        current = order[i]
        j = i - 1
        while j >= 0 and pips[order[j]] < pips[current]:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = current
    return order


@kernel(inline="always")
def _hand_graph(hand, open_value, low, high):
    """The hand as a graph on pip values: each tile an edge (a double a loop) between its ends.

    Returns per tile position in `hand`: pips and is_double; per value: the positions of the
    tiles with that end, heaviest first (ties in ascending tile index), and their count; and
    all positions heaviest first.
    """
    size = hand.shape[0]
    num_values = open_value + 1
    for tile in hand:
        num_values = max(num_values, high[tile] + 1)
    pips = np.empty(size, dtype=np.int64)
    is_double = np.empty(size, dtype=np.bool_)
    for index in range(size):
        pips[index] = low[hand[index]] + high[hand[index]]
        is_double[index] = low[hand[index]] == high[hand[index]]
    by_pips = _heaviest_first(pips)
    adjacency = np.empty((num_values, max(size, 1)), dtype=np.int64)
    degree = np.zeros(num_values, dtype=np.int64)
    for index in by_pips:
        a, b = low[hand[index]], high[hand[index]]
        adjacency[a, degree[a]] = index
        degree[a] += 1
        if b != a:
            adjacency[b, degree[b]] = index
            degree[b] += 1
    return pips, is_double, adjacency, degree, by_pips


@kernel(inline="always")
def _can_extend(here, adjacency, degree, used):
    for j in range(degree[here]):
        if not used[adjacency[here, j]]:
            return True
    return False


@kernel(inline="always")
def search_best_chain(hand, open_value, low, high, in_pow, off_pow, max_line_length, out):
    """The best chain of `hand` (ascending tile indices) from `open_value`, within
    :data:`MAX_SEARCH_NODES` nodes: what the learners' features use.

    Writes the chain as positions in `hand` into `out` and returns (value, length).
    `in_pow`/`off_pow` are :func:`discount_powers` tables for at least max_line_length.
    Inlined into the kernels that call it; Python calls :func:`search_chain` with the budget, as
    the policies do (this would otherwise be compiled as one more entry point, with a copy of
    the search).
    """
    value, length, _ = search_chain(hand, open_value, low, high, in_pow, off_pow, max_line_length, out,
                                    np.int64(MAX_SEARCH_NODES))  # int64 as from Python: one compiled search
    return value, length


@kernel
def search_chain(hand, open_value, low, high, in_pow, off_pow, max_line_length, out, max_nodes):
    """:func:`search_best_chain` with a node budget of `max_nodes` (0: none, the exact search).

    The search is an explicit-stack depth-first search; level k of the stack holds the
    chain of k tiles ending in ``value_at[k]``. Once it has entered `max_nodes` nodes it stops
    and returns the best chain found so far (at least the first, greedy one).

    Returns:
        (value, length, nodes entered): more than `max_nodes` nodes means the budget bound.
    """
    pips, is_double, adjacency, degree, by_pips = _hand_graph(hand, open_value, low, high)
    total = doubles = 0  # loops, not .sum(): numba compiles an overload per array type for that
    for i in range(pips.shape[0]):
        total += pips[i]
        doubles += is_double[i]
    used = np.zeros(hand.shape[0], dtype=np.bool_)
    max_length = min(max_line_length, hand.shape[0])
    slack = 1e-9 * (total + 1.0)  # float rounding: never prune a subtree that could tie the best

    value_at = np.empty(max_length + 1, dtype=np.int64)  # open value after k tiles
    cursor = np.empty(max_length + 1, dtype=np.int64)  # next adjacency entry to try; -1: node not entered
    in_line = np.empty(max_length + 1, dtype=np.float64)
    chain_pips = np.empty(max_length + 1, dtype=np.int64)
    non_doubles = np.empty(max_length + 1, dtype=np.int64)
    sequence = np.empty(max_length + 1, dtype=np.int64)
    best = -np.inf
    best_length = np.int64(0)  # np.int64, not literals: the callees are compiled once, for int64
    value_at[0], cursor[0], in_line[0], chain_pips[0], non_doubles[0] = open_value, -1, 0.0, 0, 0
    depth = np.int64(0)
    nodes = 0
    while depth >= 0:
        here = value_at[depth]
        if cursor[depth] < 0:  # entering a node: a leaf is scored, an inner node bounded
            cursor[depth] = 0
            nodes += 1
            if max_nodes > 0 and nodes > max_nodes and best_length > 0:
                break  # the budget is spent: keep the best chain found so far
            if depth == max_length or not _can_extend(here, adjacency, degree, used):
                value = chain_value_of_parts(depth, in_line[depth], chain_pips[depth], non_doubles[depth], total,
                                             off_pow)
                if value > best or (value == best and _precedes(sequence, out, depth, best_length)):
                    best = value
                    best_length = depth
                    for k in range(depth):  # element by element: an array slice copy drags a large
                        out[k] = sequence[k]  # error-formatting routine into the compile
                cursor[depth] = degree[here]
            else:
                doubles_left = doubles - (depth - non_doubles[depth])
                bound = _upper_bound(depth, in_line[depth], chain_pips[depth], non_doubles[depth], total,
                                     doubles_left, by_pips, pips, used, max_length, in_pow, off_pow)
                if bound + slack < best:
                    cursor[depth] = degree[here]
        while cursor[depth] < degree[here] and used[adjacency[here, cursor[depth]]]:
            cursor[depth] += 1
        if cursor[depth] == degree[here]:  # done here: back up and give the tile back
            depth -= 1
            if depth >= 0:
                used[sequence[depth]] = False
            continue
        index = adjacency[here, cursor[depth]]
        cursor[depth] += 1
        used[index] = True
        sequence[depth] = index
        counted = non_doubles[depth] + (0 if is_double[index] else 1)
        in_line[depth + 1] = in_line[depth] + in_pow[turn_of(counted)] * pips[index]
        chain_pips[depth + 1] = chain_pips[depth] + pips[index]
        non_doubles[depth + 1] = counted
        value_at[depth + 1] = pips[index] - here
        cursor[depth + 1] = -1
        depth += 1
    return best, best_length, nodes
