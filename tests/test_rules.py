"""One scenario per rule of RULES.md, each from a literal position.

Positions are built with :meth:`HandState.from_position`: lines are absolute (line s is
seat s's line, line n the dummy) and tiles listed nowhere are out of play. Moves are
written as (egocentric line, (a, b)) pairs, or "pass", so that the expected legal sets
below read like the rule book rather than like action numbers.
"""

from __future__ import annotations

import numpy as np
import pytest

from dominoes_env.core import Game, HandState, IllegalActionError, deal_hands, engine_value_for_hand, make_config

THREE_SIX = make_config(3, 6)  # T = 28, dummy = egocentric line 3, pass = 112
TWO_SIX = make_config(2, 6)  # dummy = egocentric line 2, pass = 84


def tile(config, a: int, b: int) -> int:
    return config.tiles.index(a, b)


def tiles(config, *pairs: tuple[int, int]) -> list[int]:
    return [tile(config, a, b) for a, b in pairs]


def action(config, rel_line: int, a: int, b: int) -> int:
    return rel_line * config.num_tiles + tile(config, a, b)


def moves(hand: HandState) -> set:
    """The legal set of the player to move as {(egocentric line, (low, high))} | {"pass"}."""
    config = hand.config
    result = set()
    for a in hand.legal_actions().tolist():
        if a == config.pass_action:
            result.add("pass")
        else:
            result.add((a // config.num_tiles, config.tiles.ends(a % config.num_tiles)))
    return result


def play(hand: HandState, rel_line: int, a: int, b: int) -> None:
    hand.apply(action(hand.config, rel_line, a, b))


def play_pass(hand: HandState) -> None:
    hand.apply(hand.config.pass_action)


def position(config, hands, engine=6, current=0, lines=None, markers=(), passed_last=()):
    """from_position with hands and lines written as (a, b) pairs."""
    return HandState.from_position(
        config,
        [tiles(config, *h) for h in hands],
        engine,
        current_player=current,
        lines={line: tiles(config, *t) for line, t in (lines or {}).items()},
        markers=markers,
        passed_last=passed_last,
    )


def assert_mask_matches(hand: HandState) -> None:
    mask = hand.legal_mask()
    assert mask.dtype == np.int8
    assert np.flatnonzero(mask).tolist() == hand.legal_actions().tolist()


# --------------------------------------------------------------------------- rule 1: engine


@pytest.mark.parametrize("highest, hand_index, engine", [
    (9, 0, 9), (9, 1, 8), (9, 9, 0), (9, 10, 9), (9, 11, 8), (9, 25, 4),
    (6, 0, 6), (6, 6, 0), (6, 7, 6), (12, 3, 9), (18, 19, 18), (18, 38, 18),
])
def test_rule1_engine_counts_down_from_n_and_wraps(highest, hand_index, engine):
    assert engine_value_for_hand(make_config(2, highest), hand_index) == engine


def test_rule1_and_11_game_plays_engines_n_down_and_adds_hand_scores():
    config = make_config(3, 6)
    game = Game(config, num_hands=9, rng=np.random.default_rng(5))
    engines, rng = [], np.random.default_rng(0)
    while not game.is_over:
        engines.append(game.hand.engine_value)
        index = game.hand_index
        while game.hand_index == index and not game.is_over:
            legal = game.hand.legal_actions()
            game.apply(int(legal[rng.integers(len(legal))]))
    assert engines == [6, 5, 4, 3, 2, 1, 0, 6, 5]
    assert len(game.hand_scores) == 9
    assert game.totals.tolist() == np.sum(game.hand_scores, axis=0).tolist()


# --------------------------------------------------------------------------- rules 2-4: deal


def expected_dealt_sizes(config, hand_index: int) -> list[int]:
    n, t = config.num_players, config.num_tiles
    extra = {(hand_index + i) % n for i in range(t % n)}
    return [t // n + (seat in extra) for seat in range(n)]


@pytest.mark.parametrize("players, highest", [(2, 6), (3, 6), (4, 9), (6, 12), (8, 12), (5, 15), (8, 18), (7, 18)])
def test_rule2_deal_sizes_and_extra_tiles_rotate(players, highest):
    config = make_config(players, highest)
    for hand_index in range(2 * players + 1):
        expected = expected_dealt_sizes(config, hand_index)
        dealt = deal_hands(config, hand_index, np.random.default_rng(hand_index))
        assert [len(h) for h in dealt] == expected
        assert sorted(t for h in dealt for t in h) == list(range(config.num_tiles))
        hand = HandState.deal(config, hand_index, np.random.default_rng(hand_index))
        engine = config.tiles.double(engine_value_for_hand(config, hand_index))
        holder = next(seat for seat, h in enumerate(dealt) if engine in h)
        sizes = list(expected)
        sizes[holder] -= 1
        assert hand.hand_sizes.tolist() == sizes
        # deal() and deal_hands() draw identically from the generator (rule 2 has one shuffle).
        assert [hand.hand(s) for s in range(players)] == [[t for t in h if t != engine] for h in dealt]


def test_rule2_extra_tiles_go_to_seats_k_onwards():
    config = make_config(4, 9)  # T = 55: 13 each, 3 extra tiles
    sizes = {k: [len(h) for h in deal_hands(config, k, np.random.default_rng(0))] for k in range(5)}
    assert sizes[0] == [14, 14, 14, 13]
    assert sizes[1] == [13, 14, 14, 14]
    assert sizes[2] == [14, 13, 14, 14]
    assert sizes[3] == [14, 14, 13, 14]
    assert sizes[4] == sizes[0]


def test_rule2_deal_is_a_function_of_the_generator_only():
    config = make_config(4, 9)
    first = HandState.deal(config, 0, np.random.default_rng(123))
    np.random.seed(1)
    again = HandState.deal(config, 0, np.random.default_rng(123))
    other = HandState.deal(config, 0, np.random.default_rng(124))
    assert first == again
    assert first != other


def test_rule2_shuffle_is_uniform():
    """Every tile lands in every seat with probability size/T, and pairs are not tied together.

    Chi-square over 6,000 seeded deals of 3 players, double-6 (28 tiles: 10, 9, 9 in hand 0);
    the thresholds are far in the tail (p < 1e-6) so only a biased shuffle fails.
    """
    config = make_config(3, 6)
    deals = 6000
    rng = np.random.default_rng(2024)
    seat_of = np.empty((deals, config.num_tiles), dtype=np.int64)
    for i in range(deals):
        for seat, held in enumerate(deal_hands(config, 0, rng)):
            seat_of[i, held] = seat
    sizes = np.array(expected_dealt_sizes(config, 0))
    expected = deals * sizes / config.num_tiles
    for t in range(config.num_tiles):
        observed = np.bincount(seat_of[:, t], minlength=3)
        chi2 = ((observed - expected) ** 2 / expected).sum()
        assert chi2 < 30, f"tile {t}: seats {observed.tolist()} vs expected {expected.tolist()}"
    # Neighbouring indices share a seat as often as any other pair: P = sum s(s-1) / (T(T-1)).
    same = (seat_of[:, :-1] == seat_of[:, 1:]).mean(axis=0)
    p_same = (sizes * (sizes - 1)).sum() / (config.num_tiles * (config.num_tiles - 1))
    spread = np.sqrt(p_same * (1 - p_same) / deals)
    assert np.all(np.abs(same - p_same) < 6 * spread)


def test_rules2_to_4_engine_leaves_its_holder_who_moves_first():
    config = THREE_SIX
    engine = tile(config, 4, 4)
    dealt = [tiles(config, (0, 0), (0, 1)), [], []]
    rest = [t for t in range(config.num_tiles) if t not in dealt[0]]
    dealt[1], dealt[2] = rest[:13], rest[13:]
    assert engine in dealt[2]
    hand = HandState.from_deal(config, dealt, engine_value=4)
    assert hand.current_player == 2
    assert engine not in hand.hand(2)
    assert hand.hand_sizes.tolist() == [2, 13, 12]
    assert hand.owner[engine] < 0 and hand.line_of[engine] == -1
    # Rule 3: every line, the dummy included, starts at the engine's value.
    assert hand.open_values.tolist() == [4, 4, 4, 4]
    assert not hand.line_started.any() and not hand.dummy_open and not hand.marker_up.any()


def test_rule4_from_deal_refuses_an_incomplete_deal():
    config = TWO_SIX
    with pytest.raises(ValueError, match="exactly once"):
        HandState.from_deal(config, [list(range(14)), list(range(13, 27))], engine_value=6)


# --------------------------------------------------------------------------- rule 5: legal moves


def test_rule5_own_line_only_while_other_markers_are_down():
    hand = position(THREE_SIX, [[(2, 6), (1, 3)], [(5, 6)], [(0, 1)]])
    assert moves(hand) == {(0, (2, 6))}
    assert_mask_matches(hand)


@pytest.mark.parametrize("marked_seat, rel_line", [(1, 1), (2, 2)])
def test_rule5_another_line_while_its_marker_is_up(marked_seat, rel_line):
    hand = position(THREE_SIX, [[(2, 6), (1, 3)], [(5, 6)], [(0, 1)]], markers=[marked_seat])
    # Rule 5, last point: the same tile legal in two places is two moves.
    assert moves(hand) == {(0, (2, 6)), (rel_line, (2, 6))}
    assert_mask_matches(hand)


def test_rule5_lines_are_egocentric_for_the_player_to_move():
    # Seat 1 to move; seat 0's marker is up: seat 0 is two places after seat 1 in a 3-seat game.
    hand = position(THREE_SIX, [[(0, 1)], [(2, 6), (1, 3)], [(5, 6)]], current=1, markers=[0])
    assert moves(hand) == {(0, (2, 6)), (2, (2, 6))}
    play(hand, 2, 2, 6)
    assert hand.line(0) == tiles(THREE_SIX, (2, 6)) and hand.open_values[0] == 2


def test_rule5_own_marker_does_not_open_own_line_to_others():
    hand = position(THREE_SIX, [[(2, 6)], [(5, 6)], [(0, 1)]], markers=[0])
    assert moves(hand) == {(0, (2, 6))}


def test_rule5_dummy_closed_until_every_seat_line_is_started():
    hands = [[(1, 6), (2, 4)], [(0, 0)], [(5, 5)]]
    closed = position(THREE_SIX, hands, lines={0: [(6, 2)], 1: [(6, 3)]})
    assert not closed.dummy_open
    # (1|6) matches the dummy's value 6 (and seat 2's unstarted line, whose marker is down).
    assert moves(closed) == {(0, (2, 4))}
    opened = position(THREE_SIX, hands, lines={0: [(6, 2)], 1: [(6, 3)], 2: [(6, 5)]})
    assert opened.dummy_open
    assert moves(opened) == {(0, (2, 4)), (3, (1, 6))}
    assert_mask_matches(opened)


def test_rule5_dummy_opens_with_the_first_tile_on_the_last_line_and_stays_open():
    config = THREE_SIX
    hand = position(config, [[(1, 6), (2, 4), (0, 5)], [(6, 3), (3, 5), (1, 1)], [(0, 0), (4, 5)]],
                    lines={0: [(6, 2)], 1: [(6, 0)]}, markers=[2])
    assert not hand.dummy_open
    play(hand, 2, 1, 6)  # seat 0 starts seat 2's line (marker up)
    assert hand.line_started.tolist() == [1, 1, 1] and hand.dummy_open
    assert hand.current_player == 1
    # Seat 1: (1|1) on seat 2's line (marker up, open 1), (3|6) on the dummy (egocentric line n = 3).
    assert moves(hand) == {(1, (1, 1)), (3, (3, 6))}
    play(hand, 3, 3, 6)  # seat 1 on the dummy
    assert hand.open_values[3] == 3 and hand.line(3) == tiles(config, (3, 6))
    for _ in range(4):
        assert hand.dummy_open
        legal = hand.legal_actions()
        hand.apply(int(legal[0]))
        if hand.is_over:
            break
    assert hand.dummy_open


def test_rule5_tile_fits_by_either_end_and_its_other_end_becomes_open():
    config = THREE_SIX
    low_end = position(config, [[(2, 5), (0, 0)], [(1, 1)], [(3, 3)]], lines={0: [(6, 2)]})
    assert moves(low_end) == {(0, (2, 5))}
    play(low_end, 0, 2, 5)
    assert low_end.open_values[0] == 5
    high_end = position(config, [[(2, 5), (0, 0)], [(1, 1)], [(3, 3)]], lines={0: [(6, 5)]})
    assert moves(high_end) == {(0, (2, 5))}
    play(high_end, 0, 2, 5)
    assert high_end.open_values[0] == 2
    assert high_end.line(0) == tiles(config, (5, 6), (2, 5))


def test_rule5_one_tile_fitting_two_lines_by_different_ends():
    config = THREE_SIX
    hand = position(config, [[(2, 4), (0, 0)], [(1, 1)], [(3, 3)]],
                    lines={0: [(6, 2)], 1: [(6, 4)]}, markers=[1])
    assert moves(hand) == {(0, (2, 4)), (1, (2, 4))}
    on_line_1 = hand.copy()
    play(on_line_1, 1, 2, 4)
    assert on_line_1.open_values.tolist()[:2] == [2, 2]
    play(hand, 0, 2, 4)
    assert hand.open_values.tolist()[:2] == [4, 4]


def test_rule5_tile_not_in_hand_or_not_fitting_is_refused_and_nothing_changes():
    config = THREE_SIX
    hand = position(config, [[(2, 6), (1, 3)], [(5, 6)], [(0, 1)]])
    before = hand.state.copy()
    for bad in [action(config, 0, 1, 3), action(config, 0, 5, 6), action(config, 1, 2, 6),
                action(config, 3, 2, 6), config.pass_action]:
        assert not hand.is_legal(bad)
        with pytest.raises(IllegalActionError):
            hand.apply(bad)
        assert np.array_equal(hand.state, before)


# --------------------------------------------------------------------------- rules 6-7: pass, marker


def test_rule6_pass_only_when_nothing_else_is_legal():
    config = THREE_SIX
    stuck = position(config, [[(0, 1), (2, 3)], [(5, 6)], [(4, 6)]])
    assert moves(stuck) == {"pass"}
    assert_mask_matches(stuck)
    can_play = position(config, [[(0, 1), (2, 6)], [(5, 6)], [(4, 6)]])
    assert "pass" not in moves(can_play)
    with pytest.raises(IllegalActionError, match="pass"):
        can_play.apply(config.pass_action)


def test_rule6_and_7_pass_raises_marker_and_hands_the_turn_on():
    config = THREE_SIX
    hand = position(config, [[(0, 1), (2, 3)], [(5, 6)], [(4, 6)]], current=0)
    play_pass(hand)
    assert hand.marker_up.tolist() == [1, 0, 0]
    assert hand.passed_last.tolist() == [1, 0, 0]
    assert hand.current_player == 1 and not hand.is_over
    assert hand.hand_sizes.tolist() == [2, 1, 1]
    # Seat 1 may now play on seat 0's line (egocentric line 2 for seat 1).
    assert moves(hand) == {(0, (5, 6)), (2, (5, 6))}


def test_rule6_pass_with_marker_already_up_keeps_it_up():
    hand = position(THREE_SIX, [[(0, 1), (2, 3)], [(5, 6)], [(4, 6)]], markers=[0], passed_last=[0])
    play_pass(hand)
    assert hand.marker_up[0] == 1 and hand.passed_last[0] == 1


def test_rule7_non_double_on_own_line_lowers_the_marker():
    hand = position(THREE_SIX, [[(2, 6), (0, 1)], [(5, 6)], [(4, 6)]], markers=[0], passed_last=[0])
    play(hand, 0, 2, 6)
    assert hand.marker_up.tolist() == [0, 0, 0]
    assert hand.passed_last[0] == 0


def test_rule7_double_on_own_line_leaves_the_marker_up():
    hand = position(THREE_SIX, [[(2, 2), (0, 1)], [(5, 6)], [(4, 6)]], lines={0: [(6, 2)]}, markers=[0])
    play(hand, 0, 2, 2)
    assert hand.marker_up[0] == 1


def test_rule7_tiles_elsewhere_leave_both_markers_as_they_are():
    config = THREE_SIX
    hand = position(config, [[(2, 6), (3, 6), (0, 0)], [(5, 6)], [(4, 6)]], markers=[0, 1])
    play(hand, 1, 2, 6)  # seat 0 on seat 1's line: neither seat 0's nor seat 1's marker moves
    assert hand.marker_up.tolist() == [1, 1, 0]


def test_rule7_tile_on_the_dummy_leaves_the_marker_up():
    config = THREE_SIX
    hand = position(config, [[(6, 4), (0, 0)], [(5, 5)], [(1, 1)]],
                    lines={0: [(6, 1)], 1: [(6, 0)], 2: [(6, 2)]}, markers=[0])
    assert moves(hand) == {(3, (4, 6))}
    play(hand, 3, 4, 6)
    assert hand.marker_up[0] == 1 and hand.open_values[3] == 4


def test_rule7_opponent_playing_on_my_line_does_not_lower_my_marker():
    config = THREE_SIX
    hand = position(config, [[(0, 0)], [(2, 6), (1, 1)], [(5, 5)]], current=1, markers=[0])
    play(hand, 2, 2, 6)  # seat 1 plays a non-double on seat 0's line
    assert hand.marker_up[0] == 1 and hand.open_values[0] == 2


# --------------------------------------------------------------------------- rule 8: doubles


@pytest.mark.parametrize("where, rel_line, lines, markers", [
    ("own line", 0, {0: [(6, 2)]}, []),
    ("another line", 1, {1: [(6, 2)]}, [1]),
    ("dummy", 3, {0: [(6, 0)], 1: [(6, 1)], 2: [(6, 3)], 3: [(6, 2)]}, []),
])
def test_rule8_any_double_anywhere_gives_another_move(where, rel_line, lines, markers):
    config = THREE_SIX
    hand = position(config, [[(2, 2), (2, 5), (4, 5)], [(5, 5)], [(1, 4)]], lines=lines, markers=markers)
    play(hand, rel_line, 2, 2)
    assert hand.current_player == 0, where
    assert not hand.is_over
    # No obligation to cover the double: (2|5) on the double is one choice among the legal moves.
    assert (rel_line, (2, 5)) in moves(hand)


def test_rule8_no_obligation_to_cover_the_double():
    config = THREE_SIX
    hand = position(config, [[(2, 2), (6, 4), (0, 0)], [(5, 5)], [(1, 4)]], lines={0: [(6, 2)]}, markers=[1])
    play(hand, 0, 2, 2)
    # The only legal move of the extra turn is elsewhere: (6|4) on seat 1's line.
    assert moves(hand) == {(1, (4, 6))}
    play(hand, 1, 4, 6)
    assert hand.current_player == 1


def test_rule8_extra_move_may_be_a_pass():
    config = THREE_SIX
    hand = position(config, [[(4, 4), (0, 1)], [(5, 6)], [(2, 3)]], lines={0: [(6, 4)]})
    play(hand, 0, 4, 4)
    assert hand.current_player == 0
    assert moves(hand) == {"pass"}
    play_pass(hand)
    assert hand.marker_up.tolist() == [1, 0, 0]
    assert hand.current_player == 1


def test_rule8_two_doubles_in_a_row_then_a_non_double_ends_the_turn():
    config = THREE_SIX
    hand = position(config, [[(4, 4), (3, 3), (3, 4), (0, 0)], [(5, 6)], [(2, 5)]], lines={0: [(6, 4)], 1: [(6, 3)]},
                    markers=[1])
    play(hand, 0, 4, 4)
    play(hand, 1, 3, 3)
    assert hand.current_player == 0
    assert moves(hand) == {(0, (3, 4)), (1, (3, 4))}
    play(hand, 0, 3, 4)
    assert hand.current_player == 1


# --------------------------------------------------------------------------- rule 9: end of the hand


def test_rule9_going_out_ends_the_hand_at_once():
    config = THREE_SIX
    hand = position(config, [[(3, 6)], [(5, 6), (1, 2)], [(4, 6)]])
    play(hand, 0, 3, 6)
    assert hand.is_over and hand.went_out == 0
    assert hand.scores().tolist() == [0, 14, 10]
    assert hand.legal_actions().tolist() == []
    assert not hand.legal_mask().any()
    with pytest.raises(IllegalActionError, match="over"):
        hand.apply(action(config, 0, 5, 6))


def test_rule9_going_out_with_a_double_ends_the_hand_without_an_extra_move():
    config = THREE_SIX
    hand = position(config, [[(2, 2)], [(5, 6), (1, 2)], [(4, 6)]], lines={0: [(6, 2)]})
    play(hand, 0, 2, 2)
    assert hand.is_over and hand.went_out == 0
    assert hand.scores().tolist() == [0, 14, 10]


def test_rule9_going_out_on_another_line():
    config = THREE_SIX
    hand = position(config, [[(0, 0)], [(5, 6)], [(4, 6)]], current=1, markers=[2])
    play(hand, 1, 5, 6)
    assert hand.is_over and hand.went_out == 1
    assert hand.scores().tolist() == [0, 0, 10]


def test_rule9_blocked_as_soon_as_no_tile_fits_any_line():
    config = TWO_SIX
    hand = position(config, [[(0, 3), (5, 5)], [(4, 4)]], lines={0: [(6, 0)], 1: [(6, 1)]})
    assert hand.dummy_open and not hand.is_over
    play(hand, 0, 0, 3)  # open values now 3, 1 and the dummy 6: neither (5|5) nor (4|4) fits
    assert hand.is_over and hand.went_out is None
    assert hand.scores().tolist() == [10, 8]
    assert not hand.legal_mask().any()


def test_rule9_a_tile_fitting_only_the_open_dummy_keeps_the_hand_going():
    config = TWO_SIX
    hand = position(config, [[(0, 3), (5, 5)], [(6, 2), (4, 4)]], lines={0: [(6, 0)], 1: [(6, 1)]})
    play(hand, 0, 0, 3)
    assert not hand.is_over
    assert moves(hand) == {(2, (2, 6))}
    play(hand, 2, 2, 6)
    assert hand.is_over and hand.went_out is None
    assert hand.scores().tolist() == [10, 8]


def test_rule9_not_blocked_while_a_tile_fits_a_line_whose_marker_is_down():
    """Markers count as up for the blocked test, and the dummy's value h is always also the value
    of a seat line that is not started yet (that is why the dummy is closed), so a tile matching
    only the closed dummy cannot exist. Here (6|4) fits only seat 2's unstarted line, marker down:
    the hand goes on through three forced passes until that marker is up, and ends the moment
    the last playable tile is played."""
    config = THREE_SIX
    hand = position(config, [[(0, 3), (5, 5)], [(6, 4), (2, 5)], [(2, 2)]], lines={0: [(6, 0)], 1: [(6, 1)]})
    play(hand, 0, 0, 3)
    assert not hand.is_over and not hand.dummy_open
    assert hand.open_values.tolist() == [3, 1, 6, 6]
    for seat in (1, 2, 0):
        assert hand.current_player == seat
        assert moves(hand) == {"pass"}
        play_pass(hand)
        assert not hand.is_over
    assert hand.marker_up.tolist() == [1, 1, 1]
    assert moves(hand) == {(1, (4, 6))}
    play(hand, 1, 4, 6)
    assert hand.dummy_open
    assert hand.is_over and hand.went_out is None
    assert hand.scores().tolist() == [10, 7, 4]


def test_rule9_a_position_built_blocked_is_over():
    hand = position(TWO_SIX, [[(5, 5)], [(4, 4)]], lines={0: [(6, 0)], 1: [(6, 1)]})
    assert hand.is_over and hand.went_out is None


# --------------------------------------------------------------------------- rule 10: score


def test_rule10_scores_are_the_pips_left():
    config = THREE_SIX
    hand = position(config, [[(3, 6), (4, 5), (1, 1)], [(5, 6), (2, 4), (0, 3)], [(0, 0), (6, 4)]])
    assert hand.scores().tolist() == [9 + 9 + 2, 11 + 6 + 3, 0 + 10]


def test_rule10_holding_only_double_blank_scores_zero_but_did_not_go_out():
    config = TWO_SIX
    hand = position(config, [[(1, 3), (5, 5)], [(0, 0)]], lines={0: [(6, 1)], 1: [(6, 2)]})
    play(hand, 0, 1, 3)
    assert hand.is_over and hand.went_out is None
    assert hand.scores().tolist() == [10, 0]


# --------------------------------------------------------------------------- perft


def perft(hand: HandState, depth: int) -> int:
    """Number of move sequences of length `depth` (passes included) from `hand`."""
    if depth == 0 or hand.is_over:
        return 1
    total = 0
    for a in hand.legal_actions().tolist():
        child = hand.copy()
        child.apply(a)
        total += perft(child, depth - 1) if depth > 1 else 1
    return total


def test_perft_markers_decide_where_replies_go():
    """Seats 0 and 1 have their markers up. Seat 0: (6|2) or (6|4) on its own line or seat 1's
    (4 moves). After a non-double on its own line seat 0's marker drops, so seat 1 has only
    (6|0) on its own line; after a tile on seat 1's line seat 1 has one tile for its own line
    and (6|0) on seat 0's line: 1 + 1 + 2 + 2 = 6."""
    hand = position(THREE_SIX, [[(2, 6), (4, 6), (2, 2), (1, 3)], [(0, 6), (2, 3), (4, 4)], [(5, 5), (1, 6)]],
                    markers=[0, 1])
    assert moves(hand) == {(0, (2, 6)), (0, (4, 6)), (1, (2, 6)), (1, (4, 6))}
    assert [perft(hand, d) for d in (1, 2)] == [4, 6]


def test_perft_doubles_and_the_dummy():
    """Two players, engine (3|3), both lines started so the dummy is open at 3; seat 1's marker
    is up. Depth 1: (5|5) own, (1|2) on seat 1's line, (3|4) on the dummy = 3.
    Depth 2: after (5|5) seat 0 again has 2; after (1|2) seat 1 has (2|4) own = 1; after (3|4)
    seat 1 has (1|1) own and (2|4) on the dummy = 2; total 5.
    Depth 3: 3 + 2 + 4 = 9 (worked out move by move in the test's comments)."""
    config = TWO_SIX
    hand = position(config, [[(5, 5), (3, 4), (1, 2), (0, 6)], [(5, 6), (1, 1), (2, 4)]], engine=3,
                    lines={0: [(3, 5)], 1: [(3, 1)]}, markers=[1])
    assert hand.dummy_open and hand.open_values.tolist() == [5, 1, 3]
    assert moves(hand) == {(0, (5, 5)), (1, (1, 2)), (2, (3, 4))}
    # Depth 3, branch by branch:
    #   (5|5): (1|2) on line 1 -> seat 1 has (2|4) own: 1; (3|4) on dummy -> (1|1) own, (2|4) dummy: 2.
    #   (1|2) on line 1 -> (2|4) own lowers seat 1's marker -> seat 0: (5|5) own, (3|4) dummy: 2.
    #   (3|4) on dummy -> (1|1) own then seat 1 again: (2|4) dummy: 1;
    #                     (2|4) on dummy (marker stays up) -> seat 0: (5|5), (1|2) line 1, (1|2) dummy: 3.
    assert [perft(hand, d) for d in (1, 2, 3)] == [3, 5, 9]


# --------------------------------------------------------------------------- position validation


def test_from_position_refuses_an_inconsistent_position():
    config = THREE_SIX
    with pytest.raises(ValueError, match="appears twice"):
        position(config, [[(2, 6)], [(2, 6)], [(0, 1)]])
    with pytest.raises(ValueError, match="engine"):
        position(config, [[(6, 6)], [(2, 6)], [(0, 1)]])
    with pytest.raises(ValueError, match="does not fit line 0"):
        position(config, [[(2, 6)], [(5, 6)], [(0, 1)]], lines={0: [(1, 2)]})
    with pytest.raises(ValueError, match="dummy line cannot hold tiles"):
        position(config, [[(2, 6)], [(5, 6)], [(0, 1)]], lines={0: [(6, 3)], 3: [(6, 4)]})
    with pytest.raises(ValueError, match="current_player"):
        position(config, [[(2, 6)], [(5, 6)], [(0, 1)]], current=3)


@pytest.mark.parametrize("options", [{"markers": [5]}, {"markers": [-1]}, {"passed_last": [3]},
                                     {"current": 1.5}])
def test_from_position_refuses_bad_seats(options):
    with pytest.raises(ValueError, match="seat"):
        position(THREE_SIX, [[(2, 6)], [(5, 6)], [(0, 1)]], **options)


@pytest.mark.parametrize("players, highest", [(2, 6), (4, 9), (8, 18)])
def test_named_views_match_the_compiled_state_split(players, highest):
    """HandState's numpy views and the compiled rules read the same slices of the state array."""
    from dominoes_env.core import rules

    hand = HandState.deal(make_config(players, highest), 0, np.random.default_rng(players))
    names = ["owner", "line_of", "play_order", "open_values", "line_started", "marker_up", "passed_last", "hand_sizes"]
    for name, compiled in zip(names, rules.split_state(hand.state)):
        view = getattr(hand, name)
        assert np.shares_memory(view, hand.state)
        assert view.__array_interface__["data"][0] == compiled.__array_interface__["data"][0], name
        assert view.shape == compiled.shape, name


def test_a_deal_must_hold_every_tile_once_and_a_real_engine():
    config = make_config(2, 6)
    full = [list(range(0, 14)), list(range(14, 28))]
    with pytest.raises(ValueError, match="each of the 28 tiles"):
        HandState.from_deal(config, [full[0], full[1][:-1] + [28]], engine_value=6)
    with pytest.raises(ValueError, match="engine_value"):
        HandState.from_deal(config, full, engine_value=7)


def test_a_position_cannot_give_a_seat_more_tiles_than_a_deal_can():
    config = make_config(4, 6)  # 28 tiles: at most 7 per seat
    with pytest.raises(ValueError, match="at most 7"):
        HandState.from_position(config, [list(range(8)), [], [], []], engine_value=6)
