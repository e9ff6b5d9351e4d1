"""The batched single-agent env as Stable-Baselines3's ``VecEnv``.

SB3's on-policy learners collect from a ``VecEnv``; wrapping single envs in a
``DummyVecEnv`` steps them one by one in Python. :class:`SB3VecEnv` hands SB3 a
:class:`~dominoes_env.SingleAgentVectorEnv` instead: all games stepped at once on the
batched engine, the opponents choosing for all their games at once. Needs the ``sb3`` extra.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from dominoes_env.single_agent_vector import SingleAgentVectorEnv


class SB3VecEnv(VecEnv):
    """A :class:`~dominoes_env.SingleAgentVectorEnv` as Stable-Baselines3's ``VecEnv``.

    SB3's conventions are met: ``step_wait`` returns float32 rewards, ``dones``, and one info
    dict per game, where a finished game's last observation is ``terminal_observation`` (it
    was dealt anew in the same step) beside its results (``game_scores``, or
    ``illegal_action``, ``penalty`` and ``reason``); ``env_method("action_masks")`` gives each
    game's legal moves, which is how MaskablePPO asks for them. ``seed(s)`` seeds the next
    reset. Every game plays the same env, so ``get_attr`` gives the one value per game and
    ``set_attr`` sets it for all.

        env = SB3VecEnv(SingleAgentVectorEnv(256, opponents="random"))
        model = MaskablePPO("MlpPolicy", env, n_steps=64).learn(100_000)
    """

    def __init__(self, env: SingleAgentVectorEnv) -> None:
        if not isinstance(env, SingleAgentVectorEnv):
            raise ValueError(f"SB3VecEnv wraps a dominoes_env.SingleAgentVectorEnv, got {env!r}")
        self.env = env
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self._actions: np.ndarray | None = None

    def reset(self) -> Any:
        seed = self._seeds[0] if self._seeds else None
        self._reset_seeds()
        observations, infos = self.env.reset(seed=seed)
        self.reset_infos = self._listed(infos)
        return observations

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self) -> Any:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async(actions)")
        observations, rewards, terminations, truncations, infos = self.env.step(self._actions)
        self._actions = None
        return observations, rewards.astype(np.float32), terminations | truncations, self._listed(infos)

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self.env, attr_name)] * len(list(self._get_indices(indices)))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        chosen = list(self._get_indices(indices))
        if method_name == "action_masks":  # per game, from the batch's one mask array
            masks = self.env.action_masks()
            return [masks[i] for i in chosen]
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result] * len(chosen)

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(list(self._get_indices(indices)))

    def _listed(self, infos: dict[str, Any]) -> list[dict[str, Any]]:
        """Gymnasium's dict of arrays (with ``_key`` masks) as SB3's list of dicts, one per game."""
        listed: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for key, values in infos.items():
            if key.startswith("_") or key in ("final_obs", "final_info", "action_mask"):
                continue
            for game in np.flatnonzero(infos["_" + key]).tolist():
                listed[game][key] = values[game]
        if "final_obs" in infos:
            for game in np.flatnonzero(infos["_final_obs"]).tolist():
                listed[game]["terminal_observation"] = infos["final_obs"][game]
                listed[game]["TimeLimit.truncated"] = False
            for key, values in infos["final_info"].items():
                if not key.startswith("_"):
                    for game in np.flatnonzero(infos["final_info"]["_" + key]).tolist():
                        listed[game][key] = values[game]
        return listed
