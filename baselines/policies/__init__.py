"""The players: the policy interface, the registry of names, the spec grammar, and the
hand-crafted players.

- :mod:`~baselines.policies.policy`: :class:`Policy` (``act``; ``act_batch`` for a
  :class:`~baselines.policies.policy.BatchPolicy`), and the batched choosing helpers every player and learner shares.
- :mod:`~baselines.policies.specs`: a policy written as text (``best_line(max_line_length=6)@FILE:3``),
  plain data.
- :mod:`~baselines.policies.registry`: names, import paths and installed packages' entry
  points to classes; builds a spec for a table (``build``, ``check``); serves the env's names.
- :mod:`~baselines.policies.handcrafted`, :mod:`~baselines.policies.chain_search`: random,
  greedy, stupid, double, best_line, persistent_line and the exact chain search
  (docs/baselines.md).

The learned players live in their own packages (:mod:`baselines.td_lambda`,
:mod:`baselines.linear_sarsa`, :mod:`baselines.lookahead`), the library adapters in
:mod:`baselines.adapters`.
"""
