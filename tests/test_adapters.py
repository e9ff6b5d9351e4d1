"""The adapters the package ships for other libraries that need no library to test: Tianshou's
observation wrapper (gymnasium only). RLlib's adapter is tested in its own venv
(tests/test_example_rllib.py)."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from baselines.adapters.tianshou import TianshouMask
from dominoes_env import SingleAgentEnv, make_config


@pytest.mark.parametrize("table", [make_config(4, 9), make_config(3, 12, rules="mexican_train")])
def test_tianshous_wrapper_renames_the_observation_and_keeps_one_info_key(table):
    env = TianshouMask(SingleAgentEnv(opponents="random", num_players=table, observation="dict"))
    space = env.observation_space
    assert set(space.spaces) == {"obs", "mask"} and space["mask"].shape == (table.num_actions,)
    assert all(type(size) is int for size in space["mask"].shape)  # plain ints: gymnasium's MultiBinary needs them
    observation, info = env.reset(seed=0)
    hands = 0
    for _ in range(400):
        assert space.contains(observation) and observation["mask"].dtype == bool and set(info) == {"seat"}
        assert np.array_equal(observation["mask"], env.unwrapped.action_masks().astype(bool))
        observation, reward, terminated, truncated, info = env.step(int(np.flatnonzero(observation["mask"])[0]))
        assert set(info) == {"seat"}  # Tianshou stacks infos: the same keys at every step
        if terminated or truncated:
            hands += 1
            observation, info = env.reset()
    assert hands >= 3


def test_tianshous_wrapper_refuses_an_env_without_the_dict_observation():
    with pytest.raises(ValueError, match="wraps SingleAgentEnv\\(..., observation='dict'\\)"):
        TianshouMask(SingleAgentEnv(opponents="random"))
    with pytest.raises(ValueError, match="wraps SingleAgentEnv"):
        TianshouMask(gymnasium.make("CartPole-v1"))
