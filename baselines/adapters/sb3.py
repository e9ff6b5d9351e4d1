"""sb3-contrib's MaskablePPO as a policy: ``maskable_ppo@model.zip`` in ``dominoes evaluate`` and the league.

A model trained on :class:`dominoes_env.SingleAgentEnv` or
:class:`dominoes_env.SingleAgentVectorEnv` (through :mod:`baselines.adapters.sb3_vec_env`),
flat or dict observations, plays through its own ``predict`` with the action mask,
deterministically by default; as an opponent in the vector env it chooses for all its games
in one ``predict``. A model trained on one-hand games (the env's default) plays games of several
hands too (``dominoes bench``, the league's 10-hand games) on the one-hand part of each
observation, without the scores, as the shipped players do. The model file is loaded once per
file version (the league makes fresh policies for every game). Needs ``pip install 'dominoes-env[sb3]'``.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from baselines.learning.files import file_version
from baselines.policies.policy import BatchPolicy, SeedLike
from baselines.policies.registry import register_policy
from dominoes_env.core import validation
from dominoes_env.core.config import GameConfig
from dominoes_env.core.observation import observation_layout, one_hand_part

#: The largest model file read: an SB3 zip of this env's small networks is a few MB.
MAX_MODEL_BYTES = 2**30


@lru_cache(maxsize=8)
def _load(resolved: str, modified_ns: int, size: int) -> Any:
    from sb3_contrib import MaskablePPO

    try:
        return MaskablePPO.load(resolved, device="cpu")
    except Exception as error:  # a zip that is not a MaskablePPO model, a damaged file, ...
        raise ValueError(f"maskable_ppo model {resolved!r} cannot be loaded: {type(error).__name__}: "
                         f"{error}") from None


@register_policy("maskable_ppo")
class MaskablePPOPolicy(BatchPolicy):
    """Plays a trained sb3-contrib MaskablePPO model.

    Args:
        checkpoint: the model file written by ``model.save(...)`` (a .zip).
        model: a MaskablePPO model in memory instead (e.g. right after training).
        deterministic: take the most likely legal action (default) or sample one.
    """

    def __init__(self, num_players: int | GameConfig = 4, highest_double: int = 9, seed: SeedLike = None,
                 checkpoint: str | os.PathLike[str] | None = None, model: Any = None,
                 deterministic: bool = True) -> None:
        super().__init__(num_players, highest_double, seed)
        self.deterministic = validation.flag("deterministic", deterministic)
        if (checkpoint is None) == (model is None):
            raise ValueError("maskable_ppo needs exactly one of checkpoint=PATH (maskable_ppo@model.zip) or "
                             "model=a MaskablePPO model")
        if model is None:
            path = Path(checkpoint).expanduser()  # type: ignore[arg-type]
            model = _load(*file_version(path, lambda: path, "maskable_ppo model", MAX_MODEL_BYTES))
        self.model = model
        self._dict_observation, self._model_size = _check_spaces(model, self.config)
        self._one_hand = self._model_size == observation_layout(self.config).size

    def _fit(self, observations: np.ndarray) -> np.ndarray:
        """The observations as the model reads them: the one-hand part for a one-hand model."""
        if observations.shape[-1] == self._model_size:
            return observations
        if self._one_hand:
            return one_hand_part(self.config, observations)
        raise ValueError(f"this MaskablePPO model reads observations of {self._model_size} values (a game of a "
                         f"fixed number of hands), the game gives {observations.shape[-1]}: play it in games of "
                         f"the length it was trained on")

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        observation = self._fit(observation)
        seen: Any = {"observation": observation, "action_mask": action_mask} if self._dict_observation else observation
        action, _ = self.model.predict(seen, action_masks=action_mask.astype(bool), deterministic=self.deterministic)
        return int(np.asarray(action).reshape(()))

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        observations = self._fit(observations)
        seen: Any = {"observation": observations, "action_mask": action_masks} if self._dict_observation \
            else observations
        actions, _ = self.model.predict(seen, action_masks=action_masks.astype(bool),
                                        deterministic=self.deterministic)
        return np.asarray(actions, dtype=np.int64).reshape(observations.shape[0])


def _check_spaces(model: Any, config: GameConfig) -> tuple[bool, int]:
    """Refuse a model trained for another table; return whether it reads dict observations, and
    the length of the observation vector it reads."""
    size = observation_layout(config).size
    space, actions = model.observation_space, model.action_space
    vector = space["observation"] if hasattr(space, "spaces") and "observation" in space.spaces else space
    shape = getattr(vector, "shape", None)
    if shape is None or len(shape) != 1 or getattr(actions, "n", None) != config.num_actions or shape[0] < size:
        raise ValueError(f"this MaskablePPO model reads observations {shape} and {getattr(actions, 'n', '?')} "
                         f"actions; {config.num_players} players, double-{config.highest_double} has "
                         f"observations ({size},) (one-hand games) and {config.num_actions} actions")
    return vector is not space, int(shape[0])
