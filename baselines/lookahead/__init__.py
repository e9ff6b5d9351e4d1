"""The look-ahead player of docs/baselines.md: sampled worlds played forward, scored by a learned evaluation."""

from baselines.lookahead.policy import LookaheadPolicy

__all__ = ["LookaheadPolicy"]
