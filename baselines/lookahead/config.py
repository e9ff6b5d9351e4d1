"""Everything that defines the look-ahead's training run, declared once.

:class:`LookaheadConfig` holds the fields every learner shares (the table, the curriculum,
the tables side by side, the seed, the evaluation: :class:`~baselines.learning.config.LearnerConfig`)
and the look-ahead's own: the step size of its evaluation's regression and its decay, the
exploration, and the search it plays with while it learns. Every field carries its
``dominoes train lookahead`` option and is checked on construction; the configuration is
stored in every weights file.

The curriculum follows seed 004: first against a baseline, then against its own previous
version (``"previous"``: the weights as they stood when that stage began), then in
self-play.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from baselines.learning import options
from baselines.learning.config import CURRICULUM, EVAL_OPPONENTS, HANDS, TABLES, LearnerConfig
from baselines.learning.options import SELF_PLAY, option
from dominoes_env.core import validation

PREVIOUS = "previous"  #: the curriculum's name for the learner's own weights as a stage began


def _samples(name: str, value: Any) -> int:
    return validation.integer(name, value, 1, 256)


def _depth(name: str, value: Any) -> int:
    return validation.integer(name, value, 0, 8)


def _half_life(name: str, value: Any) -> int:
    return validation.integer(name, value, 1, options.MAX_HANDS)


@dataclass(frozen=True)
class LookaheadConfig(LearnerConfig):
    """The look-ahead's training run (stored with its weights).

    Raises:
        ValueError: on construction, for any value out of bounds (the message names the
            field, the value and what is allowed).
    """

    hands: int = field(default=12_000, metadata=HANDS)
    """Hands to learn from, over all curriculum stages (at most 10**9)."""
    curriculum: tuple[tuple[str, float], ...] = field(
        default=(("double", 0.3), (PREVIOUS, 0.3), ("self", 0.4)), metadata=CURRICULUM)
    """Stages in order (seed 004's: a baseline, its previous self, self-play): (opponents, share
    of `hands`). Opponents: a policy name, "previous" (the look-ahead with the weights as the
    stage began), "self", or names joined by "+"."""
    parallel_hands: int = field(default=16, metadata=TABLES)
    """Tables played side by side; the look-ahead decides at each in turn (its search is per
    decision), and each round's regression steps are averaged into one."""
    eval_opponents: tuple[str, ...] = field(default=("double", "persistent_line"), metadata=EVAL_OPPONENTS)
    """Fixed opponents of the periodic evaluation (the shared harness)."""
    alpha: float = field(default=0.05, metadata=option(
        "--alpha", "initial step size of the evaluation's regression, in (0, 1]", options.step_size,
        options.number))
    """Initial step size of w <- w + alpha * mean((final pips - w . f) * f) over the after-states of
    the learner's moves in the hands that ended (the features are about unit size)."""
    alpha_half_life: int = field(default=4_000, metadata=option(
        "--alpha-half-life", f"hands over which the step size halves (1-{options.MAX_HANDS:,})",
        _half_life, options.number))
    """Hands over which the step size halves."""
    alpha_floor: float = field(default=1e-3, metadata=option(
        "--alpha-floor", "smallest step size, in (0, --alpha]", options.step_size, options.number))
    """The step size never decays below this."""
    epsilon: float = field(default=0.05, metadata=option(
        "--epsilon", "random-move probability while learning, in [0, 1]", options.probability, options.number))
    """Probability of a uniformly random legal move while learning (seed 004 explored with 1% to
    50%); the policy itself never explores."""
    train_samples: int = field(default=4, metadata=option(
        "--train-samples", "sampled worlds per decision while learning (1-256)", _samples, options.number))
    """Worlds the learner samples per decision while it learns: fewer than when it plays, for speed."""
    train_depth: int = field(default=1, metadata=option(
        "--train-depth", "the search's depth while learning (0-8)", _depth, options.number))
    """The search's depth (the player's own later moves) while it learns."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.alpha_floor > self.alpha:
            raise ValueError(f"alpha_floor must be at most alpha ({self.alpha}), got {self.alpha_floor}")

    SPECIAL_STAGES: ClassVar[tuple[str, ...]] = (SELF_PLAY, PREVIOUS)

    def step_size(self, hands_done: int) -> float:
        """The step size after `hands_done` hands: halves every `alpha_half_life` hands, down to `alpha_floor`."""
        return max(self.alpha_floor, self.alpha * 0.5 ** (hands_done / self.alpha_half_life))
