"""Everything that defines a TD(lambda) learner and its training run, declared once.

:class:`TDLambdaConfig` is the one source of the defaults, the bounds and the command line:
the fields every learner shares (the table, the curriculum, the tables side by side, the
seed, the evaluation: :class:`~baselines.learning.config.LearnerConfig`) and the learner's
own (the input variant, the network, lambda, the step sizes, exploration). Every field
carries its ``dominoes train td-lambda`` option in its metadata, so ``baselines/td_lambda/cli.py``
derives its options from the dataclass instead of declaring them again, and every field is
checked on construction, bounded so that no value (typed on the command line or read back
from a checkpoint) can ask for an absurd allocation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from baselines.learning import options
from baselines.learning.config import LearnerConfig
from baselines.learning.options import SELF_PLAY, option, parse_curriculum
from baselines.td_lambda.architecture import Architecture
from baselines.td_lambda.features import VARIANTS, input_size
from dominoes_env.core import validation

__all__ = ["SELF_PLAY", "TDLambdaConfig", "parse_curriculum"]

MAX_WIDTH = 4096  #: widest hidden block
MAX_LAYERS = 8  #: most hidden blocks
#: The eligibility traces hold one float32 per weight for every learner at every table.
MAX_TRACE_BYTES = 2**31


def _optional_number(text: str) -> Any:
    return None if text.strip().lower() in ("", "none") else options.number(text)


def _widths(text: str) -> tuple[Any, ...]:
    return tuple(options.number(part.strip()) for part in text.split(","))


def _show_optional(value: Any) -> str:
    return "alpha / players" if value is None else str(value)


def _show_widths(value: tuple[int, ...]) -> str:
    return ",".join(map(str, value))


def _variant(name: str, value: Any) -> str:
    return validation.choice(name, value, VARIANTS)


def _hidden_sizes(name: str, value: Any) -> tuple[int, ...]:
    if not isinstance(value, (tuple, list)) or not 1 <= len(value) <= MAX_LAYERS:
        raise ValueError(f"{name} must list 1 to {MAX_LAYERS} hidden widths, got {value!r}")
    return tuple(validation.integer(f"{name} (each width)", width, 1, MAX_WIDTH) for width in value)


def _optional_step_size(name: str, value: Any) -> float | None:
    return None if value is None else options.step_size(name, value)


#: The network's options, shared with the champion's configuration (its network is this one)
VARIANT = option("--variant", "input features: basic, or line (basic + best-chain features)", _variant, str.strip)
HIDDEN = option("--hidden", f"hidden layer widths, comma-separated (1-{MAX_LAYERS} layers of 1-{MAX_WIDTH})",
                _hidden_sizes, _widths, _show_widths)


@dataclass(frozen=True)
class TDLambdaConfig(LearnerConfig):
    """Everything that defines a learner and its training run (stored in every checkpoint).

    Checked on construction as every :class:`~baselines.learning.config.LearnerConfig` is.
    """

    variant: str = field(default="basic", metadata=VARIANT)
    """Input features of V: "basic" (the reference's basic input) or "line" (basic + best-chain features)."""
    hidden_sizes: tuple[int, ...] = field(default=(128, 64), metadata=HIDDEN)
    """Widths of the hidden blocks (Linear -> ReLU -> LayerNorm); the reference used (1000, 500, 500).
    At most 8 blocks of at most 4096."""
    td_lambda: float = field(default=0.5, metadata=option(
        "--lambda", "trace decay lambda, in [0, 1]", options.probability, options.number))
    """Trace decay lambda in [0, 1]."""
    alpha: float = field(default=3e-5, metadata=option(
        "--alpha", "step size, in (0, 1]", options.step_size, options.number))
    """Step size of theta <- theta + alpha * delta * z, in (0, 1]. Every learner's update is
    applied, so one round moves theta by up to parallel_hands updates at once: too many tables
    for a given alpha diverges (128 did at alpha 3e-5)."""
    self_play_alpha: float | None = field(default=None, metadata=option(
        "--self-play-alpha", "step size in self-play stages, in (0, 1]", _optional_step_size, _optional_number,
        _show_optional))
    """Step size in self-play stages; None: alpha / num_players. Every seat of a self-play table
    learns, so a hand brings n times the updates; at the full alpha self-play diverged in our
    runs (line variant: alpha 3e-5 with 64 tables diverged within 1,000 hands, 1e-5 did not)."""
    epsilon: float = field(default=0.0, metadata=option(
        "--epsilon", "random-move probability while learning, in [0, 1]", options.probability, options.number))
    """Probability of a uniformly random legal move while learning (0: purely greedy)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        trace_bytes = self.parallel_hands * self.learners_per_table() * self.architecture.num_weights * 4
        if trace_bytes > MAX_TRACE_BYTES:
            raise ValueError(
                f"the eligibility traces would need {trace_bytes / 2**30:.1f} GiB (parallel_hands="
                f"{self.parallel_hands} x {self.learners_per_table()} learners per table x "
                f"{self.architecture.num_weights} weights x 4 bytes), more than {MAX_TRACE_BYTES / 2**30:.0f} GiB: "
                f"play fewer tables or use a smaller network")

    @property
    def architecture(self) -> Architecture:
        """The network's shape: its input size (from the variant and the table) and hidden widths."""
        return Architecture(input_size(self.game, self.variant), self.hidden_sizes)

    @classmethod
    def from_dict(cls, values: Any) -> TDLambdaConfig:
        """As :meth:`LearnerConfig.from_dict`, also for checkpoints written before 0.2.0."""
        if isinstance(values, dict) and "highest_dominoe" in values:  # checkpoints written before 0.2.0
            values = {**values, "highest_double": values["highest_dominoe"]}
            del values["highest_dominoe"]
        return super().from_dict(values)
