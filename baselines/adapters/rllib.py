"""The AEC env as an RLlib ``MultiAgentEnv``: ``DominoesMultiAgentEnv(env_config(table))``.

RLlib needs what the AEC env does not give as it is: only the agent to move is observed (RLlib
computes an action for every agent handed an observation); ``{"observations", "action_mask"}``
in float32, the layout of RLlib's action-masking module; every seat's reward of every step (a
hand pays every seat in the step that ends it). Importing this module imports RLlib
(``pip install "ray[rllib]"``, which pins its own gymnasium: see docs/integrations/rllib.md).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv as _MultiAgentEnv

import dominoes_env
from dominoes_env.core.config import GameConfig

#: RLlib's base class, untyped here: its signatures differ between RLlib versions (agent ids are
#: Hashable in some), and this adapter is typed by its own annotations.
MultiAgentEnv: Any = _MultiAgentEnv


def env_config(table: GameConfig) -> dict[str, Any]:
    """`table` as the keyword arguments of ``dominoes_env.raw_env`` (RLlib's ``env_config`` is a dict)."""
    return table.options()


class DominoesMultiAgentEnv(MultiAgentEnv):
    """The AEC env as an RLlib MultiAgentEnv: the agent to move is the only one observed.

    ``config`` holds the env's keyword arguments (``num_players``, ``highest_double`` and the table
    rules: :func:`env_config`). Observations are ``{"observations": float32 vector,
    "action_mask": float32 mask}``. When the game ends every seat gets its last observation (an
    all-zeros mask) and ``terminateds["__all__"]`` is True. An illegal action still raises the
    env's ``IllegalActionError``: nothing here hides or repairs it.
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.game: Any = dominoes_env.raw_env(**(config or {}))
        self.agents = self.possible_agents = list(self.game.possible_agents)
        spaces: Any = self.game.observation_space(self.agents[0])
        space = gym.spaces.Dict({
            "observations": gym.spaces.Box(0.0, 1.0, spaces["observation"].shape, np.float32),
            "action_mask": gym.spaces.Box(0.0, 1.0, spaces["action_mask"].shape, np.float32),
        })
        self.observation_spaces = dict.fromkeys(self.agents, space)
        self.action_spaces = {agent: self.game.action_space(agent) for agent in self.agents}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        self.game.reset(seed=seed, options=options)
        mover = self.game.agent_selection
        return {mover: self._observe(mover)}, {}

    def step(self, action_dict: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        self.game.step(action_dict[self.game.agent_selection])
        rewards = dict(self.game.rewards)  # every seat's reward of this step (non-zero only when a hand ends)
        if all(self.game.terminations.values()):
            observations = {agent: self._observe(agent) for agent in self.agents}
            return observations, rewards, {"__all__": True}, {"__all__": False}, {}
        mover = self.game.agent_selection
        return {mover: self._observe(mover)}, rewards, {"__all__": False}, {"__all__": False}, {}

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        observation = self.game.observe(agent)
        return {"observations": observation["observation"].astype(np.float32),
                "action_mask": observation["action_mask"].astype(np.float32)}
