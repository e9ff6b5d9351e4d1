"""dominoes-env: Mexican-Train-style dominoes as a PettingZoo AEC environment.

    >>> import dominoes_env
    >>> env = dominoes_env.env(num_players=4, highest_double=9)
    >>> env.reset(seed=0)
    >>> observation, reward, termination, truncation, info = env.last()
    >>> observation["action_mask"].shape
    (276,)
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

from dominoes_env.core import GameConfig, HandState, IllegalActionError, actions, make_config
from dominoes_env.core.afterstate import afterstate
from dominoes_env.core.config import config_of
from dominoes_env.core.observation import decode_fields
from dominoes_env.core.observation import layout_table as _layout_table
from dominoes_env.env import DominoesEnv, env, raw_env
from dominoes_env.parallel import DominoesParallelEnv, parallel_env
from dominoes_env.records import RecordError, RecordGames, read_record, write_record
from dominoes_env.single_agent import SingleAgentEnv
from dominoes_env.single_agent_vector import SingleAgentVectorEnv
from dominoes_env.vector import VectorDominoes


def _installed_version() -> str:
    """The version pyproject.toml gives, as installed; a source tree that is not installed says so."""
    try:
        return importlib.metadata.version("dominoes-env")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


__version__ = _installed_version()  #: the one version: the installed distribution's (pyproject.toml)
ENV_ID = "dominoes/dominoes-v1"  #: PettingZoo's registry (AEC)
GYMNASIUM_ID = "dominoes_env/Dominoes-v0"  #: Gymnasium's registry: the single-agent view (and its vector env)


def decode_observation(observation: Any, num_players: int | GameConfig, highest_double: int = 9) -> dict[str, Any]:
    """A readable view of an observation vector (or the env's observation dict).

    Everything is egocentric: index 0 is the observer, index k the seat k places after it,
    and for lines the dummy line comes last. Keys: ``hand`` (sorted tile indices),
    ``played`` (sorted tile indices on the table), ``played_on_line`` (n+1 tuples),
    ``open_values`` (n+1 ints), ``markers``, ``lines_started``, ``passed_last`` (n bools),
    ``dummy_open`` (bool), ``hand_sizes`` (n ints), ``current_player`` (0 = me),
    ``turns_until`` (n ints), ``hand_number`` (h of the engine), ``scores`` (n ints in a
    multi-hand game, else None). A GameConfig in place of `num_players` decodes a table with
    table rules, adding ``boneyard_size`` and ``drew`` (boneyard rule) and
    ``double_to_cover`` (egocentric line or None; cover rule).
    """
    return decode_fields(config_of(num_players, highest_double), observation)


def describe_action(action: int, num_players: int | GameConfig = 4, highest_double: int = 9,
                    seat: int | None = None) -> str:
    """A readable move: ``"(3|7) on own line"``, ``"(9|2) on line +2"`` (``"on player_2's line"``
    when the mover's `seat` is given), ``"(4|4) on the dummy line"`` or ``"pass"``."""
    return actions.describe(config_of(num_players, highest_double), action, seat)


def layout_table(num_players: int | GameConfig = 4, highest_double: int = 9, num_hands: int = 1) -> str:
    """The observation layout for a table size as a Markdown index table."""
    return _layout_table(config_of(num_players, highest_double), num_hands)


def _register() -> None:
    """Register the AEC env with PettingZoo (>= 1.27 has a registry) and the single-agent
    view with Gymnasium (``gymnasium.make("dominoes_env/Dominoes-v0", opponents=...)``; its
    batched vector env is ``gymnasium.make_vec`` of the same id)."""
    import gymnasium

    if GYMNASIUM_ID not in gymnasium.registry:
        gymnasium.register(id=GYMNASIUM_ID, entry_point="dominoes_env.single_agent:SingleAgentEnv",
                           vector_entry_point="dominoes_env.single_agent_vector:SingleAgentVectorEnv")
    try:
        from pettingzoo import aec_registry, register
    except ImportError:
        return
    if ENV_ID not in aec_registry:
        register("aec", ENV_ID, entry_point="dominoes_env.env:env")


_register()

__all__ = [
    "DominoesEnv", "DominoesParallelEnv", "ENV_ID", "GYMNASIUM_ID", "GameConfig", "HandState", "IllegalActionError",
    "RecordError", "RecordGames", "SingleAgentEnv", "SingleAgentVectorEnv", "VectorDominoes", "afterstate",
    "decode_observation", "describe_action", "parallel_env", "env", "layout_table", "make_config", "raw_env",
    "read_record", "write_record",
]
