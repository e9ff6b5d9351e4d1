"""After-states computed from the mover's observation against what the environment shows."""

from __future__ import annotations

import numpy as np
import pytest

import dominoes_env
from dominoes_env.core import make_config
from dominoes_env.core.afterstate import legal_actions_of, legal_afterstates
from dominoes_env.core.observation import observation_fields

CONFIGURATIONS = [  # (players, highest, hands per game, games)
    (4, 9, 1, 40),
    (3, 12, 1, 10),
    (5, 9, 3, 8),
    (8, 15, 2, 3),
]


def _random_games(num_players, highest, num_hands, games):
    """Yield (observation, action, mask, observation after, hand ended, hand before) for every move."""
    env = dominoes_env.raw_env(num_players, highest, num_hands)
    rng = np.random.default_rng(1234)
    for game_seed in range(games):
        env.reset(seed=game_seed)
        while not env.game.is_over:
            agent = env.agent_selection
            seat = env.possible_agents.index(agent)
            observed = env.observe(agent)
            action = int(rng.choice(np.flatnonzero(observed["action_mask"])))
            hand = env.game.hand
            scores_before = env.game.scores_before_hand.copy()
            env.step(action)
            # The finished hand's final position, as a one-hand env would show it.
            after = env.observer.encode(hand.state, seat, scores_before)
            yield observed["observation"], action, observed["action_mask"], after, hand.is_over


def _check_against_env(num_players, highest, num_hands, games):
    """Assert afterstate == the env's observation after every move; return how many moves blocked the hand."""
    fields = {f.name: f for f in observation_fields(make_config(num_players, highest))}
    moves = went_out = blocked = moved_again = 0
    for observation, action, _, after, hand_over in _random_games(num_players, highest, num_hands, games):
        computed = dominoes_env.afterstate(observation, action, num_players, highest)
        np.testing.assert_array_equal(computed, after)
        moves += 1
        holds_tiles = after[fields["hand"].slice].any()
        went_out += hand_over and not holds_tiles
        blocked += hand_over and holds_tiles
        moved_again += not hand_over and after[fields["whose_turn"].offset] == 1
    # Every rule that changes the turn or ends the hand was exercised.
    assert moves > 500 and went_out > 0 and moved_again > 0
    return blocked


@pytest.mark.parametrize("num_players,highest,num_hands,games", CONFIGURATIONS)
def test_afterstate_equals_what_the_env_shows_after_the_move(num_players, highest, num_hands, games):
    _check_against_env(num_players, highest, num_hands, games)


def test_blocking_moves_are_exact_too():
    assert _check_against_env(2, 6, 1, 150) > 0


@pytest.mark.parametrize("num_players,highest,num_hands,games", [(4, 9, 1, 30), (5, 9, 3, 12)])
def test_batched_afterstates_match_single_ones_and_flag_the_hand_end(num_players, highest, num_hands, games):
    for observation, action, mask, after, hand_over in _random_games(num_players, highest, num_hands, games // 3):
        actions, vectors, ends_hand = legal_afterstates(observation, mask, num_players, highest)
        row = int(np.flatnonzero(actions == action)[0])
        np.testing.assert_array_equal(vectors[row], after)
        assert ends_hand[row] == hand_over
        for k, other in enumerate(actions):
            np.testing.assert_array_equal(vectors[k], dominoes_env.afterstate(observation, other, num_players, highest))


def test_legal_actions_read_from_the_observation_equal_the_mask():
    for observation, _, mask, _, _ in _random_games(4, 9, 1, 20):
        np.testing.assert_array_equal(legal_actions_of(observation, 4, 9), np.flatnonzero(mask))


def test_refuses_an_illegal_action_or_a_foreign_turn():
    env = dominoes_env.raw_env(4, 9)
    env.reset(seed=3)
    mover = env.agent_selection
    observation = env.observe(mover)["observation"]
    illegal = int(np.flatnonzero(env.observe(mover)["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="not legal"):
        dominoes_env.afterstate(observation, illegal, 4, 9)
    other = next(a for a in env.possible_agents if a != mover)
    with pytest.raises(ValueError, match="turn"):
        dominoes_env.afterstate(env.observe(other)["observation"], 0, 4, 9)
    with pytest.raises(ValueError, match="entries"):
        dominoes_env.afterstate(observation[:-1], 0, 4, 9)


def test_does_not_mutate_its_input():
    env = dominoes_env.raw_env(4, 9)
    env.reset(seed=5)
    observed = env.observe(env.agent_selection)
    before = observed["observation"].copy()
    legal_afterstates(observed["observation"], observed["action_mask"], 4, 9)
    np.testing.assert_array_equal(observed["observation"], before)
