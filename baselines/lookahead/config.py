"""Everything that defines the look-ahead's training run, declared once.

:class:`LookaheadConfig` holds the fields every learner shares (the table, the curriculum,
the tables side by side, the seed, the evaluation: :class:`~baselines.learning.config.LearnerConfig`)
and the look-ahead's own: the step size of its evaluation's regression and its decay, the
exploration, and the search it plays with while it learns. Every field carries its
``dominoes train lookahead`` option and is checked on construction; the configuration is
stored in every weights file.

The curriculum follows the look-ahead design of docs/baselines.md: first against a baseline,
then against its own previous version (``"previous"``: the weights as they stood when that stage began), then in
self-play.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from baselines.learning import options
from baselines.learning.config import (
    ALPHA_FLOOR,
    ALPHA_HALF_LIFE,
    CURRICULUM,
    EPSILON,
    EVAL_OPPONENTS,
    HANDS,
    TABLES,
    DecayingStepConfig,
)
from baselines.learning.options import SELF_PLAY, option
from dominoes_env.core import validation

PREVIOUS = "previous"  #: the curriculum's name for the learner's own weights as a stage began


def _samples(name: str, value: Any) -> int:
    return validation.integer(name, value, 1, 256)


def _depth(name: str, value: Any) -> int:
    return validation.integer(name, value, 0, 8)


@dataclass(frozen=True)
class LookaheadConfig(DecayingStepConfig):
    """The look-ahead's training run (stored with its weights).

    Checked on construction as every :class:`~baselines.learning.config.LearnerConfig` is.
    """

    hands: int = field(default=12_000, metadata=HANDS)
    """Hands to learn from, over all curriculum stages (at most 10**9)."""
    curriculum: tuple[tuple[str, float], ...] = field(
        default=(("double", 0.3), (PREVIOUS, 0.3), ("self", 0.4)), metadata=CURRICULUM)
    """Stages in order (the design's: a baseline, its previous self, self-play): (opponents, share
    of `hands`). Opponents: a policy name, "previous" (the look-ahead with the weights as the
    stage began), "self", or names joined by "+"."""
    parallel_hands: int = field(default=16, metadata=TABLES)
    """Tables played side by side; the look-ahead decides at each in turn (its search is per
    decision), and each round's regression steps are averaged into one."""
    eval_opponents: tuple[str, ...] = field(default=("double", "persistent_line"), metadata=EVAL_OPPONENTS)
    """Fixed opponents of the periodic evaluation (the shared harness)."""
    alpha_half_life: int = field(default=4_000, metadata=ALPHA_HALF_LIFE)
    """Hands over which the step size of the evaluation's regression (w <- w + alpha * mean((final
    pips - w . f) * f) over the after-states of the learner's moves in the hands that ended) halves."""
    alpha_floor: float = field(default=1e-3, metadata=ALPHA_FLOOR)
    """The step size never decays below this."""
    epsilon: float = field(default=0.05, metadata=EPSILON)
    """Probability of a uniformly random legal move while learning (the design explored with 1% to
    50%); the policy itself never explores."""
    train_samples: int = field(default=4, metadata=option(
        "--train-samples", "sampled worlds per decision while learning (1-256)", _samples, options.number))
    """Worlds the learner samples per decision while it learns: fewer than when it plays, for speed."""
    train_depth: int = field(default=1, metadata=option(
        "--train-depth", "the search's depth while learning (0-8)", _depth, options.number))
    """The search's depth (the player's own later moves) while it learns."""

    SPECIAL_STAGES: ClassVar[tuple[str, ...]] = (SELF_PLAY, PREVIOUS)
