"""The single-agent env as Tianshou's Q-learning reads it: ``TianshouMask(SingleAgentEnv(...))``.

Tianshou's discrete Q-learning policies mask actions with a boolean ``mask`` beside ``obs`` in a
dict observation, and its vector envs stack every step's ``info`` into arrays, which needs the
same keys at every step; the env's infos change keys when a hand ends (and hold None). The
wrapper renames and casts the observation and keeps ``info`` to ``{"seat"}``. Only gymnasium is
needed to build it (Tianshou itself is the user's).
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium
import numpy as np


class TianshouMask(gymnasium.ObservationWrapper):
    """``{"observation", "action_mask"}`` -> ``{"obs", "mask"}`` (bool); ``info`` kept to ``{"seat"}``.

    Wraps a :class:`dominoes_env.SingleAgentEnv` made with ``observation="dict"``.
    """

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        space = env.observation_space
        if not isinstance(space, gymnasium.spaces.Dict) or set(space.spaces) != {"observation", "action_mask"}:
            raise ValueError("TianshouMask wraps SingleAgentEnv(..., observation='dict'), whose observations are "
                             f"{{'observation', 'action_mask'}}; got {space}")
        vector, mask = space["observation"], space["action_mask"]
        # MultiBinary wants a shape of plain ints (gymnasium refuses numpy integers in some versions)
        self.observation_space = gymnasium.spaces.Dict({
            "obs": vector, "mask": gymnasium.spaces.MultiBinary([int(size) for size in mask.shape or ()])})

    def observation(self, observation: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"obs": observation["observation"], "mask": observation["action_mask"].astype(bool)}

    def reset(self, **kwargs: Any) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        observation, info = super().reset(**kwargs)
        return observation, {"seat": info["seat"]}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = super().step(action)
        return observation, reward, terminated, truncated, {"seat": info["seat"]}
