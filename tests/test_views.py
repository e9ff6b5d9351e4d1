"""The single-agent (Gymnasium) and parallel (PettingZoo) views of the game."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import parallel_api_test

import dominoes_env
from baselines import make_policy
from dominoes_env import IllegalActionError, SingleAgentEnv, make_config
from dominoes_env.core.rewards import hand_rewards


def _play(env, rng, episodes=1, seed=None):
    """Random legal play; yields (observation, reward, terminated, info) of every step."""
    observation, info = env.reset(seed=seed)
    for _ in range(episodes):
        while True:
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            observation, reward, terminated, truncated, info = env.step(action)
            assert not truncated
            yield observation, reward, terminated, info
            if terminated:
                break
        observation, info = env.reset()


# --------------------------------------------------------------------------- single-agent view
@pytest.mark.parametrize("kwargs", [{}, {"num_players": 3, "highest_double": 6, "opponents": "greedy"},
                                    {"observation": "dict", "num_hands": 3, "reward": "rank"}])
def test_single_agent_view_passes_gymnasiums_and_sb3s_checkers(kwargs):
    env = SingleAgentEnv(**kwargs)
    check_env(env)  # it sends unmasked random actions: the illegal ones end the hand with a penalty
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    sb3_checker.check_env(SingleAgentEnv(**kwargs), warn=False)


def test_registered_with_gymnasium():
    env = gymnasium.make(dominoes_env.GYMNASIUM_ID, opponents="double", num_players=3, highest_double=6)
    observation, info = env.reset(seed=0)
    assert observation.shape == env.observation_space.shape and env.action_space.n == 4 * 28 + 1
    assert info["action_mask"].any()


@pytest.mark.parametrize("reward", ["score", "zero_sum", "rank"])
def test_the_learner_is_paid_its_hands_whoever_ends_them(reward):
    env = SingleAgentEnv(opponents="random", num_hands=3, reward=reward)
    rng = np.random.default_rng(1)
    for episode in range(20):
        total, finished, scores = 0.0, [], []
        for _, step_reward, _, info in _play(env, rng, seed=episode):
            total += step_reward
            if "hand_scores" in info:
                scores.append(info["hand_scores"])
                finished.append(hand_rewards(np.array(info["hand_scores"]), reward)[info["seat"]])
                assert step_reward == pytest.approx(finished[-1])
        assert len(finished) == 3 and total == pytest.approx(sum(finished))
        assert info["game_scores"] == np.sum(scores, axis=0).tolist()


def test_rewards_land_on_the_step_after_which_an_opponent_ended_the_hand():
    env = SingleAgentEnv(opponents="greedy", seat=0)
    rng = np.random.default_rng(5)
    ended_by_opponent = 0
    for episode in range(40):
        for _, step_reward, terminated, info in _play(env, rng, seed=episode):
            if terminated and info["went_out"] not in (None, 0):
                ended_by_opponent += 1
                assert step_reward == -info["hand_scores"][0] != 0
    assert ended_by_opponent > 5


def test_the_seat_is_random_per_episode_unless_fixed():
    seats = {SingleAgentEnv().reset(seed=s)[1]["seat"] for s in range(30)}
    assert seats == {0, 1, 2, 3}
    assert {SingleAgentEnv(seat=2).reset(seed=s)[1]["seat"] for s in range(10)} == {2}
    assert SingleAgentEnv().reset(seed=0, options={"seat": 1})[1]["seat"] == 1


def test_same_seed_same_episode_with_seeded_opponents():
    def run(seed):
        env = SingleAgentEnv(opponents=("random", "best_line", "td_lambda"))
        rng = np.random.default_rng(0)
        return [(obs.tobytes(), r) for obs, r, _, _ in _play(env, rng, seed=seed)]

    assert run(4) == run(4) and run(4) != run(5)


def test_opponents_by_name_object_or_a_callable_per_episode():
    chosen = []

    def curriculum(rng):
        names = ["random"] * 3 if len(chosen) < 2 else ["greedy", "double", "greedy"]
        chosen.append(names)
        return names

    env = SingleAgentEnv(opponents=curriculum)
    for seed in range(3):
        env.reset(seed=seed)
    assert len(chosen) == 3 and [p.label for p in env.players if p is not None] in (
        ["greedy", "double", "greedy"], ["double", "greedy", "greedy"], ["greedy", "greedy", "double"])
    frozen = make_policy("persistent_line", 4, 9, seed=0)
    env = SingleAgentEnv(opponents=[frozen, "random", "best_line(max_line_length=6)"])
    env.reset(seed=0)
    assert frozen in env.players
    assert sorted(p.label for p in env.players if p is not None) == [
        "best_line(max_line_length=6)", "persistent_line", "random"]


@pytest.mark.parametrize("opponents, message", [
    (("random", "random"), "4 players need 3 opponents, got 2"),
    ("nosuch", "unknown policy 'nosuch'"),
    (("random", "random", 42), "cannot seat 42"),
    (("random", "random", "random:2"), "each entry is one opponent"),
    ((make_policy("greedy", 3, 9), "random", "random"), "built for 3 players"),
    (3, "opponents must be a policy spec"),
])
def test_bad_opponents_are_refused_when_the_env_is_made(opponents, message):
    with pytest.raises(ValueError, match=message):
        SingleAgentEnv(opponents=opponents)


@pytest.mark.parametrize("kwargs, message", [
    ({"seat": 4}, "seat must be an integer from 0 to 3"), ({"reward": "win"}, "reward='win'"),
    ({"observation": "image"}, "observation='image'"), ({"illegal_action": "ignore"}, "illegal_action='ignore'"),
    ({"num_hands": 0}, "num_hands must be an integer from 1"), ({"num_players": 9}, "num_players must be"),
])
def test_bad_arguments_are_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SingleAgentEnv(**kwargs)


@pytest.mark.parametrize("reward, num_hands", [("score", 1), ("zero_sum", 2), ("rank", 3)])
def test_an_illegal_action_ends_the_episode_with_a_penalty_worse_than_any_legal_outcome(reward, num_hands):
    env = SingleAgentEnv(reward=reward, num_hands=num_hands)
    env.reset(seed=2)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    observation, penalty, terminated, truncated, info = env.step(illegal)
    worst = (-1.0 if reward == "rank" else -make_config(4, 9).max_hand_pips) * num_hands
    assert terminated and not truncated and penalty < worst
    assert info["illegal_action"] == illegal and info["penalty"] == penalty and "not legal" in info["reason"]
    assert not env.action_masks().any()
    with pytest.raises(IllegalActionError, match="episode is over"):
        env.step(0)


def test_raise_mode_and_actions_outside_the_space_change_nothing():
    env = SingleAgentEnv(illegal_action="raise")
    observation, _ = env.reset(seed=3)
    state = env.game.hand.state.copy()
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    for bad in (illegal, -1, env.action_space.n, 1.5, "3", None):
        with pytest.raises(IllegalActionError):
            env.step(bad)
        assert np.array_equal(env.game.hand.state, state)
    penalizing = SingleAgentEnv()
    penalizing.reset(seed=3)
    for bad in (-1, penalizing.action_space.n, 2.0):  # not actions at all: refused even when penalizing
        with pytest.raises(IllegalActionError, match="not an action of this env"):
            penalizing.step(bad)


def test_masks_follow_the_game_and_the_dict_observation():
    env = SingleAgentEnv(observation="dict", opponents="random")
    observation, info = env.reset(seed=6)
    rng = np.random.default_rng(6)
    while True:
        mask = env.action_masks()
        assert mask.dtype == bool and mask.any()
        assert np.array_equal(mask, observation["action_mask"].astype(bool))
        assert np.array_equal(mask, info["action_mask"].astype(bool))
        assert np.array_equal(np.flatnonzero(mask), env.game.hand.legal_actions())
        observation, _, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated:
            break
    assert not env.action_masks().any()


def test_render_shows_the_table_and_the_learner():
    env = SingleAgentEnv(render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "Hand 1/1" in text and f"learner: player_{env.seat}" in text


# --------------------------------------------------------------------------- parallel view
@pytest.mark.parametrize("players, highest, hands", [(4, 9, 1), (2, 6, 3), (6, 12, 1)])
def test_parallel_view_passes_pettingzoos_parallel_api_test(players, highest, hands):
    parallel_api_test(dominoes_env.parallel_env(players, highest, hands), num_cycles=2000)


def test_parallel_view_plays_the_aec_game_exactly():
    parallel = dominoes_env.parallel_env(4, 9, 2)
    aec = dominoes_env.raw_env(4, 9, 2)
    observations, _ = parallel.reset(seed=8)
    aec.reset(seed=8)
    rng = np.random.default_rng(8)
    paid = dict.fromkeys(parallel.possible_agents, 0.0)
    while parallel.agents:
        mover = parallel.agent_to_move
        assert mover == aec.agent_selection
        for agent in parallel.agents:
            np.testing.assert_array_equal(observations[agent]["observation"], aec.observe(agent)["observation"])
            assert observations[agent]["action_mask"].any() == (agent == mover)
        action = int(rng.choice(np.flatnonzero(observations[mover]["action_mask"])))
        others = {agent: 0 for agent in parallel.agents}  # ignored: only the mover's action is played
        observations, rewards, terminations, _, infos = parallel.step({**others, mover: action})
        aec.step(action)
        for agent, reward in rewards.items():
            assert reward == aec.rewards[agent]
            paid[agent] += reward
    assert paid == {agent: -float(sum(h[seat] for h in aec.game.hand_scores))
                    for seat, agent in enumerate(aec.possible_agents)}
    with pytest.raises(ValueError, match="episode is over"):
        parallel.step({})


def test_parallel_step_needs_the_movers_action():
    env = dominoes_env.parallel_env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=f"one for {env.agent_to_move}"):
        env.step({agent: 0 for agent in env.agents if agent != env.agent_to_move})
