"""Adapters between the project and other libraries: a trained model as a
:class:`~baselines.policies.policy.Policy` (so a user's agent plays in ``dominoes evaluate`` and the
league beside the shipped baselines), and the batched env as a library's env.

- :class:`FunctionPolicy`: any ``predict(observation, action_mask) -> action`` function.
- :mod:`baselines.adapters.sb3`: sb3-contrib's MaskablePPO (the ``maskable_ppo`` policy,
  ``maskable_ppo@model.zip`` on the command line; needs the ``sb3`` extra).
- :mod:`baselines.adapters.sb3_vec_env`: :class:`~dominoes_env.SingleAgentVectorEnv` as
  Stable-Baselines3's ``VecEnv`` (``sb3`` extra).
- :mod:`baselines.adapters.rllib`: the AEC env as RLlib's ``MultiAgentEnv`` (RLlib, in its own venv).
- :mod:`baselines.adapters.tianshou`: the single-agent env as Tianshou's Q-learning reads it
  (gymnasium only).
- :mod:`baselines.adapters.torchrl`: the batched engine as a TorchRL multi-agent ``EnvBase``
  (every seat of B games per step; needs torchrl).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from baselines.policies.policy import Policy, SeedLike
from dominoes_env.core import validation
from dominoes_env.core.config import GameConfig
from dominoes_env.core.observation import one_hand_part

Predict = Callable[[np.ndarray, np.ndarray], Any]


class FunctionPolicy(Policy):
    """A policy that asks a function for each move: ``predict(observation, action_mask) -> action``.

    Use it for a model of any library in a few lines, e.g. for Tianshou or TorchRL::

        policy = FunctionPolicy(4, 9, predict=lambda obs, mask: my_model.best_action(obs, mask),
                                label="my_model")
        evaluate([policy, "random", "random", "random"], num_hands=2000)

    The action it returns is checked against the mask (an illegal answer is a ValueError
    naming the label, never silently replaced). With ``one_hand=True`` the function is given the
    one-hand part of each observation: a model trained on one-hand games (the env's default)
    then plays games of several hands too (the league's and ``dominoes bench``'s 10-hand games),
    without seeing the scores.
    """

    def __init__(self, num_players: int | GameConfig = 4, highest_double: int = 9, seed: SeedLike = None,
                 predict: Predict | None = None, label: str = "function", one_hand: bool = False) -> None:
        super().__init__(num_players, highest_double, seed)
        if not callable(predict):
            raise ValueError(f"FunctionPolicy needs predict=callable(observation, action_mask) -> action, "
                             f"got {predict!r}")
        if not isinstance(label, str) or not label:
            raise ValueError(f"label must be a non-empty string, got {label!r}")
        self.predict = predict
        self._label = label
        self.one_hand = validation.flag("one_hand", one_hand)

    @property
    def label(self) -> str:
        return self._label

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        if self.one_hand:
            observation = one_hand_part(self.config, observation)
        action = int(np.asarray(self.predict(observation, action_mask)).reshape(()))
        if not 0 <= action < action_mask.shape[0] or not action_mask[action]:
            raise ValueError(f"policy {self._label!r} chose action {action}, which its mask does not allow")
        return action
