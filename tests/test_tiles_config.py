"""Tiles and table sizes: the canonical numbering of RULES.md and which games exist."""

import itertools

import numpy as np
import pytest

from dominoes_env.core import make_config, tile_set

SET_SIZES = {6: 28, 9: 55, 12: 91, 15: 136, 18: 190}


def enumerate_set(highest: int) -> list[tuple[int, int]]:
    """The set listed the way RULES.md words it: every (a|b), 0 <= a <= b <= N, lexicographic."""
    return sorted((a, b) for a, b in itertools.product(range(highest + 1), repeat=2) if a <= b)


@pytest.mark.parametrize("highest, num_tiles", sorted(SET_SIZES.items()))
def test_set_size_matches_rule_book(highest, num_tiles):
    tiles = tile_set(highest)
    assert tiles.num_tiles == num_tiles == (highest + 1) * (highest + 2) // 2
    assert len(enumerate_set(highest)) == num_tiles


@pytest.mark.parametrize("highest", sorted(SET_SIZES))
def test_canonical_index_matches_enumeration(highest):
    tiles = tile_set(highest)
    for expected_index, (a, b) in enumerate(enumerate_set(highest)):
        assert tiles.index(a, b) == expected_index
        assert tiles.index(b, a) == expected_index, "the order of the ends must not matter"
        assert tiles.ends(expected_index) == (a, b)
        assert tiles.pips[expected_index] == a + b
        assert bool(tiles.is_double[expected_index]) == (a == b)
        assert tiles.name(expected_index) == f"({a}|{b})"


@pytest.mark.parametrize("highest", sorted(SET_SIZES))
def test_landmark_indices(highest):
    tiles = tile_set(highest)
    assert tiles.index(0, 0) == 0
    assert tiles.index(0, highest) == highest
    assert tiles.index(1, 1) == highest + 1
    assert tiles.index(highest, highest) == tiles.num_tiles - 1
    assert [tiles.double(v) for v in range(highest + 1)] == [tiles.index(v, v) for v in range(highest + 1)]


@pytest.mark.parametrize("highest", sorted(SET_SIZES))
def test_tiles_with_value_lists_every_tile_touching_a_value(highest):
    tiles = tile_set(highest)
    pairs = enumerate_set(highest)
    for value in range(highest + 1):
        expected = [i for i, (a, b) in enumerate(pairs) if value in (a, b)]
        assert tiles.tiles_with_value[value].tolist() == expected


def test_tile_tables_are_read_only():
    tiles = tile_set(9)
    with pytest.raises(ValueError):
        tiles.pips[0] = 5


@pytest.mark.parametrize("bad", [(-1, 0), (0, 7), (7, 7)])
def test_index_refuses_tiles_outside_the_set(bad):
    with pytest.raises(ValueError, match="double-6"):
        tile_set(6).index(*bad)


@pytest.mark.parametrize("players, highest", list(itertools.product(range(2, 9), range(6, 19))))
def test_every_supported_table_size_is_accepted(players, highest):
    config = make_config(players, highest)
    t = (highest + 1) * (highest + 2) // 2
    assert (config.num_players, config.highest_double, config.num_tiles) == (players, highest, t)
    assert config.num_lines == players + 1
    assert config.pass_action == (players + 1) * t
    assert config.num_actions == (players + 1) * t + 1
    assert config.max_hand_size == -(-t // players)
    # Rule: every player gets at least one tile besides the engine.
    assert t // players - 1 >= 1


@pytest.mark.parametrize("players", [-1, 0, 1, 9, 20])
def test_player_count_out_of_range_is_refused(players):
    with pytest.raises(ValueError, match=rf"num_players must be an integer from 2 to 8 .*, got {players}$"):
        make_config(players, 9)


@pytest.mark.parametrize("highest", [-1, 0, 5, 19, 30])
def test_set_size_out_of_range_is_refused(highest):
    message = rf"highest_double must be an integer from 6 to 18 .*double-6 to double-18.*, got {highest}$"
    with pytest.raises(ValueError, match=message):
        make_config(4, highest)


@pytest.mark.parametrize("players, highest", [(4.0, 9), ("4", 9), (None, 9), (True, 9),
                                              (4, 9.0), (4, "9"), (4, None), (4, False), (4, 9.5)])
def test_non_integer_sizes_are_refused(players, highest):
    name = "num_players" if type(players) is not int else "highest_double"
    with pytest.raises(ValueError, match=rf"{name} must be an integer"):
        make_config(players, highest)


def test_numpy_integers_are_accepted():
    config = make_config(np.int64(3), np.int32(12))
    assert (config.num_players, config.highest_double) == (3, 12)
    assert type(config.num_players) is int
