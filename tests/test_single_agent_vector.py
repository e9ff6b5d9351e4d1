"""The single-agent vector env: the same game as SingleAgentEnv, game by game, and Gymnasium's vector conventions."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import DictInfoToList, RecordEpisodeStatistics
from test_invariants import RULE_IDS, RULE_SETS

import dominoes_env
from baselines.policies.policy import Policy
from dominoes_env import IllegalActionError, SingleAgentEnv, SingleAgentVectorEnv
from dominoes_env.vector import random_legal_actions


def follow(opponents, num_envs: int, steps: int, seed: int, num_players: int = 4, highest_double: int = 9,
           num_hands: int = 1, reward: str = "score", **rules) -> dict:
    """Drive the vector env with random legal learner moves; beside each game keep a SingleAgentEnv
    put at the same position (and seat) at the start of every learner turn that follows a dealt
    hand, and assert both show the same observations, masks and rewards, and end together."""
    vec = SingleAgentVectorEnv(num_envs, opponents, num_players, highest_double, num_hands=num_hands, reward=reward,
                               **rules)
    observations, infos = vec.reset(seed=seed)
    scalars = [SingleAgentEnv(opponents, num_players, highest_double, num_hands=num_hands, reward=reward, **rules)
               for _ in range(num_envs)]

    def resync(game: int) -> None:
        options = vec.engine.reset_options(game)
        options["seat"] = int(vec.seats[game])
        seen, _ = scalars[game].reset(seed=0, options=options)
        np.testing.assert_array_equal(seen, observations[game])

    for game in range(num_envs):
        resync(game)
    rng = np.random.default_rng(seed)
    counted = {"episodes": 0, "hands": 0}
    for _ in range(steps):
        for game, scalar in enumerate(scalars):
            np.testing.assert_array_equal(scalar.action_masks(), vec.action_masks()[game])
        actions = random_legal_actions(infos["action_mask"], rng)
        observations, rewards, terminations, truncations, infos = vec.step(actions)
        assert not truncations.any()
        for game, scalar in enumerate(scalars):
            seen, reward, terminated, _, info = scalar.step(int(actions[game]))
            assert reward == pytest.approx(rewards[game]), (game, info)
            assert terminated == terminations[game]
            hand_ended = "_hand_scores" in infos and infos["_hand_scores"][game]
            assert hand_ended == ("hand_scores" in info)
            if hand_ended:
                counted["hands"] += 1
                assert infos["hand_scores"][game].tolist() == info["hand_scores"]
                assert infos["game_scores"][game].tolist() == info["game_scores"]
                assert infos["went_out"][game] == (-1 if info["went_out"] is None else info["went_out"])
            if terminated:
                counted["episodes"] += 1
                assert infos["_final_obs"][game] and infos["_final_info"][game]
                np.testing.assert_array_equal(infos["final_obs"][game], seen)
                assert infos["final_info"]["game_scores"][game].tolist() == info["game_scores"]
                assert infos["final_info"]["seat"][game] == info["seat"]
            if hand_ended:  # the scalar env dealt its own next hand: put it on the batch's
                resync(game)
            else:
                np.testing.assert_array_equal(seen, observations[game])
            assert terminated or info["seat"] == infos["seat"][game]
    return counted


@pytest.mark.parametrize("opponents", ["greedy", "double", ("greedy", "best_line", "stupid")],
                         ids=["batch", "batch-double", "mixed-per-game"])
def test_each_game_plays_exactly_as_the_single_agent_env(opponents):
    counted = follow(opponents, 12, 120, seed=3)
    assert counted["episodes"] > 12


@pytest.mark.parametrize("players, highest, num_hands, reward", [(2, 6, 1, "zero_sum"), (3, 12, 2, "rank"),
                                                                 (6, 12, 1, "score")])
def test_other_tables_and_reward_modes(players, highest, num_hands, reward):
    counted = follow("double", 8, 150, seed=players, num_players=players, highest_double=highest,
                     num_hands=num_hands, reward=reward)
    assert counted["hands"] > 8


@pytest.mark.parametrize("rules", RULE_SETS, ids=RULE_IDS)
def test_under_every_table_rule(rules):
    counted = follow(("greedy", "best_line", "double"), 8, 100, seed=7, **rules)
    assert counted["episodes"] > 4


def test_td_lambda_acts_on_a_batch_as_it_acts_alone_up_to_float_rounding():
    """The batched forward pass may round differently from one decision's: a different move only
    between two whose predicted values are equal to float precision."""
    from baselines.policies.registry import make_policy
    from baselines.td_lambda.policy import predicted_final_pips
    from dominoes_env.core.afterstate import afterstate

    vec = SingleAgentVectorEnv(64, "td_lambda")  # td_lambda opponents, on the batch
    observations, infos = vec.reset(seed=1)
    player = make_policy("td_lambda", 4, 9)
    rng = np.random.default_rng(1)
    compared = 0
    for _ in range(20):
        batch = player.act_batch(observations, infos["action_mask"])
        for game in range(64):
            alone = player.act(observations[game], infos["action_mask"][game])
            compared += 1
            if alone != batch[game]:
                vectors = np.stack([afterstate(observations[game], a, 4, 9) for a in (alone, batch[game])])
                values = predicted_final_pips(player.value, player.features, vectors, np.zeros(2, dtype=bool))
                assert values[0] == pytest.approx(values[1], rel=1e-5)
        observations, _, _, _, infos = vec.step(random_legal_actions(infos["action_mask"], rng))
    assert compared == 1280


class HandMemory(Policy):
    """A per-hand policy (no act_batch): it checks it is reset at the start of each of its hands."""

    def __init__(self, num_players=4, highest_double=9, seed=None):
        super().__init__(num_players, highest_double, seed)
        self.resets = 0
        self.last_hand_size = None

    def reset(self) -> None:
        self.resets += 1
        self.last_hand_size = None

    def act(self, observation, action_mask):
        held = int(observation[:self.config.num_tiles].sum())
        assert self.last_hand_size is None or held <= self.last_hand_size, "not reset between hands"
        self.last_hand_size = held
        return int(np.flatnonzero(action_mask)[0])


def test_policies_without_act_batch_get_a_copy_per_game_reset_every_hand():
    vec = SingleAgentVectorEnv(5, "test_single_agent_vector.HandMemory", num_hands=3)
    observations, infos = vec.reset(seed=0)
    copies = vec.opponents.players[0].copies
    assert copies is not None and len({id(copy) for copy in copies}) == 5
    rng = np.random.default_rng(0)
    hands = 0
    for _ in range(150):
        observations, rewards, terminations, _, infos = vec.step(random_legal_actions(infos["action_mask"], rng))
        hands += int(infos.get("_hand_scores", np.zeros(5)).sum())
    assert hands > 5
    assert all(copy.resets >= 2 for copy in copies)


def test_same_seed_same_games_and_a_new_seed_others():
    def run(seed):
        vec = SingleAgentVectorEnv(16, "random")
        observations, infos = vec.reset(seed=seed)
        seen, rng = [observations], np.random.default_rng(0)
        for _ in range(40):
            observations, rewards, *_ = vec.step(random_legal_actions(vec.action_masks(), rng))
            seen += [observations, rewards]
        return seen

    first, again, other = run(5), run(5), run(6)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other))


def test_gymnasium_vector_conventions():
    vec = gymnasium.make_vec(dominoes_env.GYMNASIUM_ID, num_envs=8, opponents="greedy")
    assert isinstance(vec, SingleAgentVectorEnv)
    assert vec.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert vec.single_action_space == gymnasium.spaces.Discrete(276)
    assert vec.action_space == gymnasium.spaces.MultiDiscrete([276] * 8)
    observations, infos = vec.reset(seed=0)
    assert observations in vec.observation_space and observations.dtype == np.int8
    assert all(key.startswith("_") or "_" + key in infos for key in infos)
    kept = observations.copy()
    rng = np.random.default_rng(0)
    for _ in range(30):
        before = observations
        observations, rewards, terminations, truncations, infos = vec.step(random_legal_actions(vec.action_masks(),
                                                                                               rng))
        assert observations in vec.observation_space
        assert rewards.shape == terminations.shape == truncations.shape == (8,) and rewards.dtype == np.float64
        assert not np.shares_memory(before, observations)
        assert all(key.startswith("_") or "_" + key in infos for key in infos)
        if terminations.any():
            for game in np.flatnonzero(terminations):
                assert infos["final_obs"][game] in vec.single_observation_space
    np.testing.assert_array_equal(kept, vec.reset(seed=0)[0])  # the returned arrays were not reused
    dict_view = SingleAgentVectorEnv(4, observation="dict")
    observations, _ = dict_view.reset(seed=1)
    assert observations in dict_view.observation_space
    np.testing.assert_array_equal(observations["action_mask"].astype(bool), dict_view.action_masks())


def test_gymnasium_vector_wrappers_run_on_it():
    vec = RecordEpisodeStatistics(SingleAgentVectorEnv(6, "double"))
    listed = DictInfoToList(vec)
    observations, infos = listed.reset(seed=2)
    assert isinstance(infos, list) and len(infos) == 6 and "seat" in infos[0]
    rng = np.random.default_rng(0)
    episodes = []
    for _ in range(200):
        observations, rewards, terminations, truncations, infos = listed.step(
            random_legal_actions(vec.env.action_masks(), rng))
        episodes += [info["episode"] for info, done in zip(infos, terminations) if done]
    assert episodes and all(episode["r"] <= 0 for episode in episodes)


def test_random_actions_of_the_space_are_penalized_and_the_game_goes_on():
    vec = SingleAgentVectorEnv(32, "random")
    vec.reset(seed=0)
    vec.action_space.seed(0)
    worst = -(vec.config.max_hand_pips + 1)
    for _ in range(5):
        observations, rewards, terminations, _, infos = vec.step(vec.action_space.sample())
        penalized = infos["final_info"]["_illegal_action"]
        assert terminations[penalized].all() and (rewards[penalized] <= worst).all()
        assert all("is not legal" in reason for reason in infos["final_info"]["reason"][penalized])
        assert vec.action_masks().any(axis=1).all()  # the penalized games were dealt anew


def test_refusals_are_one_line_and_change_nothing():
    vec = SingleAgentVectorEnv(4, "greedy", illegal_action="raise")
    with pytest.raises(IllegalActionError, match="call reset"):
        vec.step(np.zeros(4, dtype=np.int64))
    observations, infos = vec.reset(seed=0)
    states = vec.engine.states.copy()
    legal = np.array([np.flatnonzero(row)[0] for row in infos["action_mask"]])
    bad = legal.copy()
    bad[2] = vec.config.pass_action
    for actions, message in [(legal[:3], r"an array of 4 actions"), (legal.astype(float), "must be integers"),
                             (np.where(np.arange(4) == 1, 999, legal), r"not actions of this env .*game 1: 999"),
                             (bad, r"1 of the 4 actions refused, nothing changed: game 2 \(seat \d\): action 275")]:
        with pytest.raises(IllegalActionError, match=message):
            vec.step(actions)
        assert np.array_equal(vec.engine.states, states)
    vec.step(legal)


@pytest.mark.parametrize("kwargs, message", [
    ({"opponents": "nobody"}, "nobody"), ({"opponents": ("random",)}, "4 players need 3 opponents"),
    ({"opponents": lambda rng: ["random"] * 2}, "4 players need 3 opponents, got 2"),
    ({"opponents": lambda rng: ["random", "random", object()]}, "cannot seat"),
    ({"opponents": (object(), "random", "random")}, "cannot seat"),
    ({"num_envs": 200_000, "opponents": "best_line"}, "at most 100000 games"),
    ({"num_envs": 0}, "num_envs must be"), ({"seat": 4}, "seat must be"), ({"observation": "pixels"}, "observation"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SingleAgentVectorEnv(**kwargs)
    with pytest.raises(ValueError, match="one integer"):
        SingleAgentVectorEnv(2).reset(seed=[1, 2])
