"""Players of dominoes_env and everything that runs them; this module is the package's face.

    >>> import baselines
    >>> policy = baselines.make_policy("greedy", num_players=4, highest_double=9, seed=0)
    >>> "persistent_line" in baselines.policy_names()
    True

Nothing here imports torch: learned policies register themselves only when their module
(and its optional extra) is imported.

The floor plan: :mod:`baselines.policies` (the interface, names and specs, the hand-crafted
players), :mod:`baselines.harness` (the game loop and the evaluation), :mod:`baselines.cli`
(the ``dominoes`` command), :mod:`baselines.league`, :mod:`baselines.benchmark` (the fixed suite
and scorecard of ``dominoes bench``), :mod:`baselines.learning` (what the
learners share) and one package per learner (:mod:`baselines.td_lambda`,
:mod:`baselines.linear_sarsa`, :mod:`baselines.lookahead`, :mod:`baselines.champion`: the search
player and its expert-iteration trainer, :mod:`baselines.ppo`: PPO self-play on the batched engine),
:mod:`baselines.openspiel` (OpenSpiel's bots as players), :mod:`baselines.adapters`
(RL libraries' models as policies, the env as RLlib's and Tianshou's), :mod:`baselines.advice`
(the default opponent and the hints a person at the table gets), :mod:`baselines.web`
(``dominoes serve``), :mod:`baselines.selfplay` (the opponent pool), and the shipped weights in ``checkpoints/``.
Their layer order (who may import whom) is written in CONTRIBUTING.md and checked by the tests.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from baselines.benchmark import bench
    from baselines.harness.evaluate import evaluate
    from baselines.policies.policy import Policy
    from baselines.policies.registry import make_policy, policy_names, policy_parameters, register_policy
    from baselines.selfplay import OpponentPool

#: Public names and their modules, imported on first use: ``dominoes`` (whose entry point lives in
#: this package) starts without loading the engine, so Ctrl-C during its start-up is one line.
_PUBLIC = {"OpponentPool": "baselines.selfplay", "Policy": "baselines.policies.policy",
           "bench": "baselines.benchmark",
           "evaluate": "baselines.harness.evaluate",
           "make_policy": "baselines.policies.registry", "policy_names": "baselines.policies.registry",
           "policy_parameters": "baselines.policies.registry",
           "register_policy": "baselines.policies.registry"}

__all__ = ["OpponentPool", "Policy", "bench", "evaluate", "make_policy", "policy_names", "policy_parameters",
           "register_policy"]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'baselines' has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
