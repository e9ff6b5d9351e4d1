"""The hand-crafted policies: registry, legal play everywhere, and each scoring rule on written positions.

Positions are built with :meth:`HandState.from_position` (absolute lines: line s is seat
s's line, line n the dummy; tiles listed nowhere are out of play) and shown to a policy
exactly as the env would: the observation vector from :class:`Observer` and the legal mask.
"""

from __future__ import annotations

import numpy as np
import pytest

import dominoes_env
from baselines import make_policy, policy_names, policy_parameters
from baselines.harness.play import play_game
from baselines.policies.handcrafted import PersistentLinePolicy
from dominoes_env.core import HandState, Observer, make_config

HANDCRAFTED = ("random", "greedy", "stupid", "double", "best_line", "persistent_line")
TWO_SIX = make_config(2, 6)


def tile(config, a: int, b: int) -> int:
    return config.tiles.index(a, b)


def action(hand: HandState, line: int, a: int, b: int) -> int:
    """The action of the player to move that puts (a|b) on absolute line `line`."""
    n = hand.config.num_players
    relative = n if line == n else (line - hand.current_player) % n
    return relative * hand.config.num_tiles + tile(hand.config, a, b)


def seen_by_mover(hand: HandState) -> tuple[np.ndarray, np.ndarray]:
    """What the env hands the player to move: its observation vector and the legal mask."""
    return Observer(hand.config).encode(hand.state, hand.current_player), hand.legal_mask()


def position(config, hands, engine=6, current=0, lines=None, markers=()) -> HandState:
    return HandState.from_position(config, [[tile(config, a, b) for a, b in seat] for seat in hands], engine,
                                   current_player=current, lines={k: [tile(config, a, b) for a, b in v]
                                                                  for k, v in (lines or {}).items()},
                                   markers=markers)


def choose(name: str, hand: HandState, **params) -> int:
    policy = make_policy(name, hand.config.num_players, hand.config.highest_double, seed=0, **params)
    return policy.act(*seen_by_mover(hand))


# ----------------------------------------------------------------------------- registry
def test_registry_lists_the_six_with_the_reference_defaults():
    assert set(HANDCRAFTED) <= set(policy_names())
    assert policy_parameters("best_line") == {"max_line_length": 12, "in_line_discount": 0.9,
                                              "off_line_discount": 0.7}
    assert policy_parameters("persistent_line") == policy_parameters("best_line")
    assert policy_parameters("greedy") == {}
    assert make_policy("best_line", max_line_length=6).max_line_length == 6


def test_unknown_names_and_parameters_are_clear_errors():
    with pytest.raises(ValueError, match="unknown policy 'greedyy'.*persistent_line"):
        make_policy("greedyy")
    with pytest.raises(ValueError, match="no parameter.*line_temperature.*max_line_length=12"):
        make_policy("best_line", line_temperature=1.0)
    with pytest.raises(ValueError, match="has no parameter"):
        make_policy("greedy", max_line_length=3)
    with pytest.raises(ValueError, match=r"in_line_discount must be a finite number in \(0, 1\], got 2.0"):
        make_policy("persistent_line", in_line_discount=2.0)


# ----------------------------------------------------------------------------- legal play
class LegalityChecker:
    """Wraps a policy and fails on any action outside the mask it was given."""

    def __init__(self, policy) -> None:
        self.policy, self.decisions = policy, 0

    def reset(self) -> None:
        self.policy.reset()

    def act(self, observation, action_mask) -> int:
        chosen = self.policy.act(observation, action_mask)
        assert isinstance(chosen, int) and action_mask[chosen] == 1, (self.policy, chosen)
        self.decisions += 1
        return chosen


@pytest.mark.parametrize("num_players, highest, games, hands_per_game", [
    (2, 6, 30, 2), (3, 9, 12, 1), (4, 9, 30, 2), (6, 12, 8, 1), (8, 18, 2, 1), (5, 15, 2, 1)])
def test_every_policy_plays_only_legal_moves(num_players, highest, games, hands_per_game):
    env = dominoes_env.raw_env(num_players, highest, num_hands=hands_per_game)
    decisions = dict.fromkeys(HANDCRAFTED, 0)
    for game in range(games):
        # every policy in every seat over the games, mixed tables
        names = [HANDCRAFTED[(game + seat) % len(HANDCRAFTED)] for seat in range(num_players)]
        players = [LegalityChecker(make_policy(name, num_players, highest, seed=game)) for name in names]
        play_game(env, players, seed=game)
        for name, player in zip(names, players):
            decisions[name] += player.decisions
    assert all(count > 0 for count in decisions.values())


@pytest.mark.slow
def test_line_policies_play_two_players_double_eighteen():
    """The largest hands the env deals (95 tiles): slow for the chain search, but legal and finished."""
    env = dominoes_env.raw_env(2, 18)
    players = [LegalityChecker(make_policy(name, 2, 18, seed=0)) for name in ("best_line", "persistent_line")]
    play_game(env, players, seed=0)


# ----------------------------------------------------------------------------- simple scores
def test_greedy_plays_the_heaviest_and_stupid_the_lightest():
    # Seat 0 may play on its own line (open 6) and on seat 1's line (marker up, open 3).
    hand = position(TWO_SIX, [[(2, 6), (5, 6), (3, 4), (0, 3)], [(1, 1)]], lines={1: [(3, 6)]}, markers=[1])
    assert choose("greedy", hand) == action(hand, 0, 5, 6)
    assert choose("stupid", hand) == action(hand, 1, 0, 3)


def test_ties_go_to_the_lowest_action_index_so_the_own_line_first():
    # (3|6) fits both the own line (6) and seat 1's line (3, marker up): greedy puts it on its own line.
    hand = position(TWO_SIX, [[(3, 6), (0, 1)], [(1, 1)]], lines={1: [(4, 6), (3, 4)]}, markers=[1])
    assert np.count_nonzero(seen_by_mover(hand)[1]) == 2
    for name in ("greedy", "stupid", "double"):
        assert choose(name, hand) == action(hand, 0, 3, 6)


def test_double_plays_a_double_first():
    hand = position(TWO_SIX, [[(5, 6), (3, 3), (1, 2)], [(1, 1)]], lines={1: [(3, 6)]}, markers=[1])
    assert choose("greedy", hand) == action(hand, 0, 5, 6)
    assert choose("double", hand) == action(hand, 1, 3, 3)


def test_a_forced_pass_is_played():
    hand = position(TWO_SIX, [[(0, 1)], [(1, 6)]])
    for name in HANDCRAFTED:
        assert choose(name, hand) == TWO_SIX.pass_action


def test_random_is_uniform_over_legal_pairs_and_seeded():
    # Four legal pairs: (3|6) on two lines, (5|6) and (2|6) on the own line.
    hand = position(TWO_SIX, [[(3, 6), (5, 6), (2, 6), (0, 1)], [(1, 1)]], lines={1: [(4, 6), (3, 4)]},
                    markers=[1])
    observation, mask = seen_by_mover(hand)
    policy = make_policy("random", 2, 6, seed=5)
    picks = [policy.act(observation, mask) for _ in range(4000)]
    legal = np.flatnonzero(mask)
    counts = np.array([picks.count(a) for a in legal])
    assert counts.sum() == 4000 and len(legal) == 4
    assert np.all(np.abs(counts / 4000 - 0.25) < 0.03)
    again = make_policy("random", 2, 6, seed=5)
    assert [again.act(observation, mask) for _ in range(4000)] == picks


# ----------------------------------------------------------------------------- best_line
# Seat 0's hand: (5|6) is the heaviest tile, but the chain (1|6) (1|4) (3|4) (2|3) from the
# own line's 6 is worth 7 + .9*5 + .81*7 + .729*5 - .7**3 * 11 = 17.04 > 11.
CHAIN_HAND = [(1, 6), (1, 4), (3, 4), (2, 3), (5, 6)]


def test_best_line_plays_the_first_tile_of_its_best_chain():
    hand = position(TWO_SIX, [CHAIN_HAND, [(0, 0)]])
    assert choose("greedy", hand) == action(hand, 0, 5, 6)
    assert choose("best_line", hand) == action(hand, 0, 1, 6)
    scores = make_policy("best_line", 2, 6).move_scores(*seen_by_mover(hand))
    assert scores[action(hand, 0, 1, 6)] == pytest.approx(7 + .9 * 5 + .81 * 7 + .729 * 5 - .7 ** 3 * 11)
    assert scores[action(hand, 0, 5, 6)] == 11
    # Cut to one tile, the best chain is (5|6) alone, worth 11 - 24 = -13 (against 7 - 28 for
    # (1|6)); the chain's head scores the chain's value, not its pips (as in the reference),
    # so (1|6) with its 7 pips is played.
    policy = make_policy("best_line", 2, 6, max_line_length=1)
    assert policy.move_scores(*seen_by_mover(hand))[action(hand, 0, 5, 6)] == pytest.approx(-13)
    assert choose("best_line", hand, max_line_length=1) == action(hand, 0, 1, 6)


def test_best_line_always_plays_a_double_first():
    # (0|0) fits seat 1's line (open 0, marker up): it beats the chain's 17.04.
    hand = position(TWO_SIX, [CHAIN_HAND + [(0, 0)], [(1, 1)]], lines={1: [(0, 6)]}, markers=[1])
    assert choose("best_line", hand) == action(hand, 1, 0, 0)
    assert choose("persistent_line", hand) == action(hand, 1, 0, 0)


def test_a_chain_led_by_a_double_keeps_the_double_score():
    # Best chain (3|3),(3|4),(4|6) from the own line's 3, worth 6 + 7 + .9*10 - .7*4 = 19.2. Its
    # head is a double, so it keeps +infinity (the reference overwrote that with the chain's value
    # and then played (2|2) on seat 1's line);
    # the two doubles tie and the own line, the lower action index, wins.
    hand = position(TWO_SIX, [[(3, 3), (3, 4), (4, 6), (2, 2)], [(1, 1)]], engine=5,
                    lines={0: [(3, 5)], 1: [(2, 5)]}, markers=[1])
    for name in ("best_line", "persistent_line"):
        assert choose(name, hand) == action(hand, 0, 3, 3)


# ----------------------------------------------------------------------------- persistent_line
class CountingSearches(PersistentLinePolicy):
    """persistent_line that counts its chain searches."""

    def __init__(self, config) -> None:
        super().__init__(config.num_players, config.highest_double, seed=0)
        self.searches = 0

    def search(self, hand, open_value):
        self.searches += 1
        return super().search(hand, open_value)


def play(hand: HandState, policy=None, move=None):
    """Let `policy` choose for the player to move (or play `move`), apply it, and return it as
    (absolute line, tile name) or "pass"."""
    chosen = policy.act(*seen_by_mover(hand)) if policy is not None else move
    config = hand.config
    if chosen == config.pass_action:
        described = "pass"
    else:
        relative, played = divmod(chosen, config.num_tiles)
        n = config.num_players
        line = n if relative == n else (hand.current_player + relative) % n
        described = (line, config.tiles.name(played))
    hand.apply(chosen)
    return described


def chain_names(policy) -> list[str]:
    return [TWO_SIX.tiles.name(t) for t in policy.chain]


def test_persistent_line_keeps_its_chain_and_drops_it_after_its_last_tile():
    hand = position(TWO_SIX, [[(5, 6), (4, 5), (3, 4), (0, 1)], [(0, 6), (0, 2), (2, 3), (1, 3)]])
    policy = CountingSearches(TWO_SIX)
    assert play(hand, policy) == (0, "(5|6)")
    assert chain_names(policy) == ["(4|5)", "(3|4)"] and policy.searches == 1
    play(hand, move=action(hand, 1, 0, 6))  # seat 1 on its own line
    # the kept chain is re-valued for the current hand, with turns counted from now
    scores = policy.move_scores(*seen_by_mover(hand))
    assert scores[action(hand, 0, 4, 5)] == pytest.approx(9 + .9 * 7 - .7 * 1)
    assert play(hand, policy) == (0, "(4|5)")
    assert chain_names(policy) == ["(3|4)"] and policy.searches == 1
    play(hand, move=action(hand, 1, 0, 2))
    assert play(hand, policy) == (0, "(3|4)")
    assert policy.chain == () and policy.searches == 1  # its last tile is played: dropped
    play(hand, move=action(hand, 1, 2, 3))
    assert play(hand, policy) == "pass"  # (0|1) fits nowhere; a new search found nothing
    assert policy.searches == 2


def test_persistent_line_drops_its_chain_when_it_plays_another_tile_on_its_line():
    # Best chain (1|6),(0|1), worth 7.9 - .7 * 29 = -12.4; (5|6) alone is worth 11 - 26 = -15,
    # but as a move it scores its 11 pips, more than the chain's -12.4.
    hand = position(TWO_SIX, [[(5, 6), (1, 6), (0, 1), (3, 4), (2, 4), (2, 3)], [(0, 0)]])
    policy = CountingSearches(TWO_SIX)
    assert play(hand, policy) == (0, "(5|6)")
    assert policy.chain == () and policy.searches == 1
    assert play(hand, move=TWO_SIX.pass_action) == "pass"  # seat 1 cannot play
    play(hand, policy)
    assert policy.searches == 2


@pytest.mark.parametrize("seat_1_line, chain_tile", [([], (1, 6)), ([(0, 6)], (0, 1))])
def test_persistent_line_drops_its_chain_when_it_plays_a_chain_tile_elsewhere(seat_1_line, chain_tile):
    # Best chain (1|6),(0|1), worth 7.9 - .7 * 18 = -4.7. Seat 1's marker is up: with its line
    # open at 6 the head (1|6) scores 7 there; open at 0, the tail (0|1) scores 1 there.
    hand = position(TWO_SIX, [[(1, 6), (0, 1), (3, 4), (2, 4), (2, 3)], [(5, 5)]], lines={1: seat_1_line},
                    markers=[1])
    policy = CountingSearches(TWO_SIX)
    assert play(hand, policy) == (1, f"({chain_tile[0]}|{chain_tile[1]})")
    assert policy.chain == () and policy.searches == 1


@pytest.mark.parametrize("seat_1_plays_on_my_line", [True, False])
def test_persistent_line_drops_its_chain_when_someone_plays_on_its_line(seat_1_plays_on_my_line):
    # Both markers up. Chain (1|6),(0|1) is worth 7.9 - .7 * 14 = -1.9, so seat 0 first plays
    # (4|5) on seat 1's line (9 pips): a tile outside the chain, elsewhere, so it keeps the chain.
    hand = position(TWO_SIX, [[(1, 6), (0, 1), (4, 5), (2, 3)], [(2, 6), (0, 5)]], lines={1: [(4, 6)]},
                    markers=[0, 1])
    policy = CountingSearches(TWO_SIX)
    assert play(hand, policy) == (1, "(4|5)")
    assert chain_names(policy) == ["(1|6)", "(0|1)"] and policy.searches == 1
    if seat_1_plays_on_my_line:
        play(hand, move=action(hand, 0, 2, 6))  # seat 1 puts (2|6) on seat 0's line
        play(hand, policy)
        assert policy.searches == 2 and chain_names(policy) == ["(2|3)"]  # searched again from 2
    else:
        play(hand, move=action(hand, 1, 0, 5))  # seat 1 plays on its own line
        assert play(hand, policy) == (0, "(1|6)")  # the kept chain, re-valued at 4.4
        assert chain_names(policy) == ["(0|1)"] and policy.searches == 1


def test_persistent_line_forgets_its_chain_at_reset():
    hand = position(TWO_SIX, [[(5, 6), (4, 5), (3, 4), (0, 1)], [(0, 6)]])
    policy = CountingSearches(TWO_SIX)
    play(hand, policy)
    assert policy.chain
    policy.reset()
    assert policy.chain == ()


def test_persistent_line_without_reset_does_not_keep_a_chain_from_another_hand():
    first = position(TWO_SIX, [[(5, 6), (4, 5), (3, 4), (0, 1)], [(0, 6)]])
    policy = CountingSearches(TWO_SIX)
    play(first, policy)
    assert chain_names(policy) == ["(4|5)", "(3|4)"]
    # A new hand (engine 4) without reset(): (4|5) and (3|4) are dealt again and the own line
    # again holds one tile, but it is open at 6, where the old chain does not start.
    second = position(TWO_SIX, [[(4, 5), (3, 4), (0, 2)], [(1, 1)]], engine=4, lines={0: [(4, 6)]})
    assert play(second, policy) == "pass"
    assert policy.searches == 2 and policy.chain == ()


def test_play_game_refuses_an_env_that_penalizes_instead_of_raising():
    from baselines.harness.play import play_game

    env = dominoes_env.raw_env(4, 9, illegal_action="penalize")
    with pytest.raises(ValueError, match="illegal_action='raise'"):
        play_game(env, [make_policy("random", seed=seat) for seat in range(4)], seed=0)


def test_a_label_shows_a_checkpoint_path_as_written():
    """A Path is shown as the user wrote it, never as PosixPath('...')."""
    from pathlib import Path

    import dominoes_env
    from baselines import linear_sarsa

    shipped = linear_sarsa.shipped_weights(dominoes_env.make_config(4, 9))
    assert make_policy("linear_sarsa", checkpoint=Path(shipped)).label == f"linear_sarsa@{shipped}"
    assert make_policy("linear_sarsa", checkpoint=str(shipped)).label == f"linear_sarsa@{shipped}"
