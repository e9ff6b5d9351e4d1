"""The game as a PettingZoo ParallelEnv, for libraries that only speak the parallel API.

Dominoes is turn-based: at every step exactly one agent moves (the one whose action mask
is not all zeros). A step takes a dict of actions for the live agents; only the action of
the agent to move is played, the others' are ignored (so a library may send every agent an
action sampled under its mask, as PettingZoo's ``parallel_api_test`` does). Every step
returns every live agent's observation (with its mask), reward, termination and info.
When the game ends all agents terminate in that step and ``agents`` becomes empty.

It wraps the AEC env (:class:`dominoes_env.env.DominoesEnv`), so the rules, rewards,
observations and the handling of illegal actions are exactly the AEC env's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from dominoes_env.core.config import GameConfig
from dominoes_env.env import DominoesEnv


class DominoesParallelEnv(ParallelEnv):
    """The parallel view of :class:`~dominoes_env.env.DominoesEnv` (same arguments)."""

    metadata = DominoesEnv.metadata

    def __init__(self, num_players: int | GameConfig = 4, highest_double: int = 9, num_hands: int = 1,
                 render_mode: str | None = None, **options: Any) -> None:
        """:class:`~dominoes_env.DominoesEnv`'s arguments (the table rules as keywords, or a GameConfig)."""
        self.aec = DominoesEnv(num_players, highest_double, num_hands, render_mode, **options)
        self.possible_agents = list(self.aec.possible_agents)
        self.agents: list[str] = []
        self.render_mode = render_mode

    def observation_space(self, agent: str) -> spaces.Space:
        return self.aec.observation_space(agent)

    def action_space(self, agent: str) -> spaces.Space:
        return self.aec.action_space(agent)

    @property
    def agent_to_move(self) -> str | None:
        """The agent whose action the next step plays (None once the game is over)."""
        return self.aec.agent_selection if self.agents else None

    def reset(self, seed: int | None = None, options: dict | None = None
              ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """Start an episode (the AEC env's ``reset``, with its ``options``)."""
        self.aec.reset(seed=seed, options=options)
        self.agents = list(self.aec.agents)
        return self._observations(), {agent: {} for agent in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Any], dict[str, float], dict[str, bool],
                                                     dict[str, bool], dict[str, dict[str, Any]]]:
        """Play the action of the agent to move; the others' actions are ignored."""
        if not self.agents:
            raise ValueError("step() refused: the episode is over (or not started); call reset()")
        mover = self.aec.agent_selection
        if not isinstance(actions, dict) or mover not in actions:
            raise ValueError(f"step() needs a dict of actions holding one for {mover}, the agent to move "
                             f"(its action mask is the only one not all zeros); got {actions!r}")
        self.aec.step(actions[mover])
        agents = self.agents
        rewards = {agent: float(self.aec.rewards[agent]) for agent in agents}
        terminations = {agent: bool(self.aec.terminations[agent]) for agent in agents}
        truncations = {agent: False for agent in agents}
        hand_ended = self.aec.hand_ended is not None
        infos = {agent: dict(self.aec.infos[agent]) if hand_ended or terminations[agent] else {} for agent in agents}
        observations = self._observations()
        if all(terminations.values()):
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return observations, rewards, terminations, truncations, infos

    def _observations(self) -> dict[str, dict[str, np.ndarray]]:
        return {agent: self.aec.observe(agent) for agent in self.agents}

    def render(self) -> str | np.ndarray | None:
        """The AEC env's render(): text ("ansi"), printed ("human"), or a picture ("rgb_array")."""
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()

    def state(self) -> np.ndarray:
        """The whole state of the hand being played (every hand visible): the engine's array."""
        return self.aec.state()


def parallel_env(num_players: int | GameConfig = 4, highest_double: int = 9, num_hands: int = 1,
                 render_mode: str | None = None, **options: Any) -> DominoesParallelEnv:
    """The game as a PettingZoo ParallelEnv (one agent moves per step; see the module docstring)."""
    return DominoesParallelEnv(num_players, highest_double, num_hands, render_mode, **options)
