"""The chain search of best_line/persistent_line: values by hand, and exactness against brute force.

The brute force below is written independently of :mod:`baselines.policies.chain_search`: it lists
every maximal chain (one that cannot be extended, or has max_line_length tiles) by plain
recursion, values each with the formula of docs/baselines.md as written there (with the decided
exponent 0 for a leading double, and exponent 1 for the empty chain), and takes the
highest value, the lexicographically smallest tile sequence among equals.
"""

from __future__ import annotations

import numpy as np
import pytest

from baselines.policies.chain_search import Chain, best_chain, chain_value
from dominoes_env.core import tile_set


def t(highest: int, a: int, b: int) -> int:
    return tile_set(highest).index(a, b)


def brute_force(hand: list[int], open_value: int, highest: int, max_line_length: int,
                in_line_discount: float = 0.9, off_line_discount: float = 0.7) -> tuple[tuple[int, ...], float]:
    tiles = tile_set(highest)
    ends = {tile: (int(tiles.low[tile]), int(tiles.high[tile])) for tile in hand}
    hand_pips = sum(a + b for a, b in ends.values())

    def value(chain: tuple[int, ...]) -> float:
        in_line, non_doubles, chain_pips, turn = 0.0, 0, 0, 1
        for tile in chain:
            a, b = ends[tile]
            if a != b:
                non_doubles += 1
            turn = max(non_doubles - 1, 0)
            in_line += in_line_discount ** turn * (a + b)
            chain_pips += a + b
        return in_line - off_line_discount ** turn * (hand_pips - chain_pips)

    chains: list[tuple[int, ...]] = []

    def extend(chain: tuple[int, ...], end: int) -> None:
        fitting = [tile for tile in hand if tile not in chain and end in ends[tile]]
        if len(chain) == max_line_length or not fitting:
            chains.append(chain)
            return
        for tile in fitting:
            a, b = ends[tile]
            extend(chain + (tile,), a + b - end)

    extend((), open_value)
    best = max(value(chain) for chain in chains)
    return min(chain for chain in chains if value(chain) == best), best


def test_best_chain_and_its_value_by_hand():
    # Open value 6; hand (1|6) (1|4) (3|4) (2|3) (5|6): the long chain 6-1-4-3-2 beats (5|6) alone.
    hand = [t(6, 1, 6), t(6, 1, 4), t(6, 3, 4), t(6, 2, 3), t(6, 5, 6)]
    chain = best_chain(hand, 6, highest_double=6)
    assert chain.tiles == (t(6, 1, 6), t(6, 1, 4), t(6, 3, 4), t(6, 2, 3))
    # turns 0, 1, 2, 3; (5|6) stays off-line at the last turn's discount
    expected = 7 + 0.9 * 5 + 0.81 * 7 + 0.729 * 5 - 0.7 ** 3 * 11
    assert chain.value == pytest.approx(expected)


def test_doubles_share_the_turn_of_the_tile_before_and_a_leading_double_counts_as_turn_zero():
    # (3|3) then (3|4): both in turn 0 (decided: a leading double has exponent 0, not -1).
    assert best_chain([t(6, 3, 3), t(6, 3, 4)], 3, 6).value == pytest.approx(6 + 7)
    # (3|5), (5|5), (5|6): the double shares turn 0 with (3|5); (5|6) is turn 1.
    chain = best_chain([t(6, 3, 5), t(6, 5, 5), t(6, 5, 6)], 3, 6)
    assert chain.tiles == (t(6, 3, 5), t(6, 5, 5), t(6, 5, 6))
    assert chain.value == pytest.approx(8 + 10 + 0.9 * 11)


def test_empty_chain_when_nothing_fits_uses_exponent_one():
    hand = [t(9, 1, 2), t(9, 3, 4)]
    assert best_chain(hand, 9, 9) == Chain((), -0.7 * 10)


def test_max_line_length_cuts_chains():
    hand = [t(6, 1, 6), t(6, 1, 4), t(6, 3, 4), t(6, 2, 3), t(6, 5, 6)]
    chain = best_chain(hand, 6, 6, max_line_length=2)
    assert chain.tiles == (t(6, 1, 6), t(6, 1, 4))
    assert chain.value == pytest.approx(7 + 0.9 * 5 - 0.7 * (7 + 5 + 11))


def test_equal_values_go_to_the_smallest_tile_sequence():
    # (0|2) alone and (0|0),(0|2) are both worth 2 - 30 = -28 (both in turn 0, the rest at
    # discount 1); (0|0) has the smaller index, so the chain with the double wins.
    hand = [t(6, 0, 0), t(6, 0, 1), t(6, 0, 2), t(6, 4, 5), t(6, 4, 6), t(6, 5, 5)]
    chain = best_chain(hand, 0, 6, max_line_length=2)
    assert chain.tiles == (t(6, 0, 0), t(6, 0, 2))
    assert chain.value == -28.0


def test_parameters_change_the_choice():
    # With a steep in-line discount the heavy single tile beats the long light chain.
    hand = [t(6, 1, 6), t(6, 0, 1), t(6, 0, 2), t(6, 2, 2), t(6, 5, 6)]
    assert best_chain(hand, 6, 6).tiles[0] == t(6, 1, 6)
    assert best_chain(hand, 6, 6, in_line_discount=0.1, off_line_discount=1.0).tiles == (t(6, 5, 6),)


@pytest.mark.parametrize("highest, hand_sizes, cases", [(6, (1, 12), 300), (9, (8, 16), 150), (12, (10, 18), 60)])
def test_matches_brute_force_on_random_hands(highest, hand_sizes, cases):
    rng = np.random.default_rng(highest)
    tiles = tile_set(highest)
    for _ in range(cases):
        size = int(rng.integers(hand_sizes[0], hand_sizes[1] + 1))
        hand = sorted(rng.choice(tiles.num_tiles, size=size, replace=False).tolist())
        open_value = int(rng.integers(highest + 1))
        length = int(rng.choice([1, 2, 3, 5, 12]))
        expected_tiles, expected_value = brute_force(hand, open_value, highest, length)
        found = best_chain(hand, open_value, highest, max_line_length=length)
        assert (found.tiles, found.value) == (expected_tiles, expected_value), (hand, open_value, length)


def test_matches_brute_force_with_other_discounts():
    rng = np.random.default_rng(7)
    for _ in range(60):
        hand = sorted(rng.choice(28, size=int(rng.integers(3, 10)), replace=False).tolist())
        d_in, d_off = float(rng.uniform(0.05, 1.0)), float(rng.uniform(0.05, 1.0))
        open_value = int(rng.integers(7))
        expected = brute_force(hand, open_value, 6, 12, d_in, d_off)
        found = best_chain(hand, open_value, 6, in_line_discount=d_in, off_line_discount=d_off)
        assert (found.tiles, found.value) == expected


def test_chain_value_of_a_kept_chain():
    hand = [t(6, 1, 4), t(6, 3, 4), t(6, 2, 3), t(6, 5, 6)]
    assert chain_value([t(6, 1, 4), t(6, 3, 4)], hand, 6) == pytest.approx(5 + 0.9 * 7 - 0.7 * 16)
    assert chain_value([], hand, 6) == pytest.approx(-0.7 * 28)
    with pytest.raises(ValueError, match="not in the hand"):
        chain_value([t(6, 0, 0)], hand, 6)


MAX_LENGTH_MESSAGE = r"max_line_length must be an integer from 1 to \d+ \(at most the \d+ tiles of the set\)"


@pytest.mark.parametrize("kwargs, message", [
    ({"in_line_discount": 0.0}, "in_line_discount must be a finite number in \\(0, 1\\], got 0.0"),
    ({"off_line_discount": 1.5}, "off_line_discount must be a finite number in \\(0, 1\\], got 1.5"),
    ({"off_line_discount": float("nan")}, "off_line_discount must be a finite number in \\(0, 1\\], got nan"),
    ({"in_line_discount": "0.9"}, "in_line_discount must be a finite number"),
    ({"max_line_length": 0}, MAX_LENGTH_MESSAGE),
    ({"max_line_length": 10**12}, MAX_LENGTH_MESSAGE),
    ({"max_line_length": 6.0}, "max_line_length must be an integer"),
])
def test_bad_parameters_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        best_chain([0, 1], 0, 6, **kwargs)


def test_bad_hands_are_refused():
    with pytest.raises(ValueError, match="tile indices 0..27"):
        best_chain([3, 28], 0, 6)
    with pytest.raises(ValueError, match="open_value must be 0..6"):
        best_chain([3], 7, 6)


def test_the_search_budget_binds_only_on_long_hands_and_keeps_a_real_chain():
    """Hands of a 4-player double-nine deal are searched exactly within the budget; a 45-tile hand
    (2 players, double-twelve) may need more, and then gets a connected, maximal chain worth at
    most the exact one, found within the budget."""
    from baselines.policies.chain_search import (
        IN_LINE_DISCOUNT,
        MAX_LINE_LENGTH,
        MAX_SEARCH_NODES,
        OFF_LINE_DISCOUNT,
        discount_powers,
        search_chain,
    )

    rng = np.random.default_rng(5)
    nine, twelve = tile_set(9), tile_set(12)
    for _ in range(300):
        hand = sorted(rng.choice(nine.num_tiles, size=14, replace=False).tolist())
        open_value = int(rng.integers(10))
        assert best_chain(hand, open_value, 9) == best_chain(hand, open_value, 9, max_nodes=None)
    bound = 0
    out = np.empty(MAX_LINE_LENGTH, dtype=np.int64)
    powers = discount_powers(IN_LINE_DISCOUNT, MAX_LINE_LENGTH), discount_powers(OFF_LINE_DISCOUNT, MAX_LINE_LENGTH)
    for _ in range(40):
        hand = np.sort(rng.choice(twelve.num_tiles, size=45, replace=False))
        open_value = int(rng.integers(13))
        exact = best_chain(hand.tolist(), open_value, 12, max_nodes=None)
        kept = best_chain(hand.tolist(), open_value, 12)
        assert kept.value <= exact.value and len(kept.tiles) >= 1
        here = open_value
        for tile in kept.tiles:  # connected, from the open value
            ends = (int(twelve.low[tile]), int(twelve.high[tile]))
            assert here in ends
            here = ends[1] if ends[0] == here else ends[0]
        assert kept.value == pytest.approx(chain_value(kept.tiles, hand.tolist(), 12))
        _, _, nodes = search_chain(hand, np.int64(open_value), twelve.low, twelve.high, *powers,
                                   np.int64(MAX_LINE_LENGTH), out, np.int64(MAX_SEARCH_NODES))
        assert nodes <= MAX_SEARCH_NODES + 1
        bound += kept != exact
    assert bound > 0  # the budget did bind on some of these hands
