"""Self-play: opponents drawn from a pool of players and frozen past versions of a learner.

- :mod:`~baselines.selfplay.pool`: :class:`~baselines.selfplay.pool.OpponentPool`, the members,
  the sampling rules, the learner's results against each member, saving and loading.
"""

from baselines.selfplay.pool import SAMPLING, OpponentPool

__all__ = ["SAMPLING", "OpponentPool"]
