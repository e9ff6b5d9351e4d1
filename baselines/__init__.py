"""Policies that play dominoes_env, their registry, and the evaluation harness.

    >>> import baselines
    >>> policy = baselines.make_policy("greedy", num_players=4, highest_double=9, seed=0)
    >>> "persistent_line" in baselines.policy_names()
    True

Nothing here imports torch: learned policies register themselves only when their module
(and its optional extra) is imported.
"""

from baselines.evaluate import evaluate
from baselines.policy import Policy
from baselines.registry import make_policy, policy_names, policy_parameters, register_policy

__all__ = ["Policy", "evaluate", "make_policy", "policy_names", "policy_parameters", "register_policy"]
