"""Policies that play dominoes_env, their registry, and the evaluation harness.

    >>> import baselines
    >>> policy = baselines.make_policy("greedy", num_players=4, highest_double=9, seed=0)
    >>> "persistent_line" in baselines.policy_names()
    True

Nothing here imports torch: learned policies register themselves only when their module
(and its optional extra) is imported.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from baselines.evaluate import evaluate
    from baselines.policy import Policy
    from baselines.registry import make_policy, policy_names, policy_parameters, register_policy

#: Public names and their modules, imported on first use: ``dominoes`` (whose entry point lives in
#: this package) starts without loading the engine, so Ctrl-C during its start-up is one line.
_PUBLIC = {"Policy": "baselines.policy", "evaluate": "baselines.evaluate", "make_policy": "baselines.registry",
           "policy_names": "baselines.registry", "policy_parameters": "baselines.registry",
           "register_policy": "baselines.registry"}

__all__ = ["Policy", "evaluate", "make_policy", "policy_names", "policy_parameters", "register_policy"]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'baselines' has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
