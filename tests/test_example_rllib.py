"""examples/rllib_ppo.py end to end with a small budget, and the MultiAgentEnv adapter it defines.

RLlib pins its own gymnasium, so these run only in RLlib's virtual environment (``pytest -m rllib``,
see .ci/run); the main environment deselects them by their marker. RLlib is imported only inside
the tests, so any environment collects this file.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import check_bench_scorecard

import dominoes_env

pytestmark = [pytest.mark.slow, pytest.mark.rllib]

def adapter():
    """The package's RLlib adapter (imported here: RLlib is only in the RLlib venv)."""
    from baselines.adapters import rllib

    return rllib


@pytest.fixture
def example(import_example):
    return import_example("rllib_ppo")


def test_the_adapter_observes_only_the_mover_and_pays_every_seat_its_hand(example):
    env = adapter().DominoesMultiAgentEnv({"num_players": 4, "highest_double": 9})
    rng = np.random.default_rng(0)
    for seed in range(20):
        observations, _ = env.reset(seed=seed)
        earned = dict.fromkeys(env.agents, 0.0)
        while True:
            (mover,) = observations  # one observation: the agent to move
            assert env.observation_spaces[mover].contains(observations[mover])  # float32, "observations"
            legal = np.flatnonzero(observations[mover]["action_mask"])
            assert legal.size >= 1
            observations, rewards, terminateds, truncateds, _ = env.step({mover: int(rng.choice(legal))})
            for agent, reward in rewards.items():
                earned[agent] += reward
            assert not truncateds["__all__"]
            if terminateds["__all__"]:
                break
        assert set(observations) == set(env.agents)  # every seat's last observation, nothing left to play
        assert not any(observation["action_mask"].any() for observation in observations.values())
        scores = env.game.infos["player_0"]["hand_scores"]
        assert [earned[agent] for agent in env.agents] == [-float(pips) for pips in scores]


def test_the_env_config_carries_the_table_of_the_options(example):
    table = example.parse_args(["--players", "3", "--highest", "12", "--rules", "mexican_train"]).table
    assert table == dominoes_env.make_config(3, 12, boneyard=True, cover_doubles=True)
    env = adapter().DominoesMultiAgentEnv(adapter().env_config(table))  # what RLlib hands the adapter
    assert env.game.config == table and env.agents == ["player_0", "player_1", "player_2"]
    observations, _ = env.reset(seed=0)
    (mover,) = observations
    assert env.observation_spaces[mover].contains(observations[mover])
    assert adapter().env_config(example.parse_args([]).table) == {  # the default table, as before
        "num_players": 4, "highest_double": 9, "boneyard": False, "cover_doubles": False,
        "first_player": "engine_holder"}


def test_an_illegal_action_raises_the_envs_error(example):
    env = adapter().DominoesMultiAgentEnv({"num_players": 4, "highest_double": 9})
    observations, _ = env.reset(seed=0)
    (mover,) = observations
    illegal = int(np.flatnonzero(observations[mover]["action_mask"] == 0)[0])
    with pytest.raises(dominoes_env.IllegalActionError):
        env.step({mover: illegal})


def test_one_training_iteration_and_its_agent_plays_only_legal_moves(example):
    result = example.main(["--iterations", "1", "--batch-size", "400", "--eval-hands", "48", "--seed", "0",
                           "--bench", "quick"])
    (log,) = result.iterations
    assert log.env_steps >= 400 and log.episodes >= 1
    assert all(math.isfinite(x) for x in (log.policy_loss, log.vf_loss, log.entropy, log.mean_pips))
    assert log.entropy > 0  # the masked distribution is spread over legal moves, not collapsed or empty
    # FunctionPolicy refuses an action outside the mask, so every hand of the rating was legal play
    for table in (result.rating.against_random, result.rating.against_baselines):
        assert table[result.label].hands == 48
    assert math.isfinite(result.rating.gain.gain)
    check_bench_scorecard(result.rating.scorecard)  # it ends with its dominoes-bench headline


def test_the_default_budget_learns_to_beat_random_players(example):
    """The example's own budget (5 x 2,000 steps): the agent holds at least 2 pips a hand fewer than a
    random player in the same seats and deals. Measured: +4.78 ± 1.06 at seed 0 over these 400 hands
    (RLlib's runs are not repeatable to the digit: +3.70 and +4.75 over 2,000 hands in two runs of the
    same command); an untrained network is within about ±1.4 of 0."""
    result = example.main(["--eval-hands", "400", "--seed", "0", "--bench", "off"])
    assert result.rating.gain.gain >= 2.0
