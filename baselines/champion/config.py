"""Everything that defines the champion's training run, declared once (``dominoes train champion``).

The run is expert iteration: generations of self-play in which every seat is the champion
searching with the current network, then a few passes of gradient steps on what the
searches and the hands taught. :class:`ChampionConfig` holds the fields every learner shares
(the table, the seed, the periodic evaluation: :class:`~baselines.learning.config.LearnerConfig`)
and the champion's own. Each field carries its command-line option and is checked on
construction. The network's shape is td_lambda's (:class:`~baselines.td_lambda.TDLambdaConfig`),
so a shipped td_lambda checkpoint can start a run and the champion's file is read by the
same, checked loader.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from baselines.learning import options
from baselines.learning.config import CURRICULUM, EVAL_OPPONENTS, HANDS, LearnerConfig
from baselines.learning.options import SELF_PLAY, bounded, option
from baselines.td_lambda.config import HIDDEN, VARIANT, TDLambdaConfig


def _integer_option(flag: str, help: str, low: int, high: int) -> dict[str, Any]:
    return bounded(help, low, high, flag=flag)


def _real_option(flag: str, help: str, low: float, high: float) -> dict[str, Any]:
    return bounded(help, float(low), float(high), flag=flag)


@dataclass(frozen=True)
class ChampionConfig(LearnerConfig):
    """The champion's training run (stored in its weights file's metadata).

    Checked on construction as every :class:`~baselines.learning.config.LearnerConfig` is.
    """

    hands: int = field(default=2_000, metadata=HANDS)
    """Self-play hands to learn from (each generation plays `generation_hands` of them)."""
    curriculum: tuple[tuple[str, float], ...] = field(default=((SELF_PLAY, 1.0),), metadata=CURRICULUM)
    """Self-play only (the champion learns from its own searches): kept for the shared options."""
    parallel_hands: int = field(default=8, metadata=bounded(
        "hands of one self-play task, played side by side on the batched engine", 1, 256, flag="--parallel-hands"))
    """Hands one self-play task plays side by side on the batched engine (a task runs on one worker)."""
    eval_every: int = field(default=1_000, metadata=option(
        "--eval-every", "hands between evaluations (0: only at the end)", options.hands, options.number))
    """Hands of self-play between evaluations (rounded up to whole generations)."""
    eval_hands: int = field(default=200, metadata=option(
        "--eval-hands", "hands per evaluation and opponent (at least --players)", options.eval_hands, options.number))
    """Hands per evaluation and opponent (the search is slow: keep it modest)."""
    eval_opponents: tuple[str, ...] = field(default=("td_lambda",), metadata=EVAL_OPPONENTS)
    """Opponents of the periodic evaluation, three copies each (with the training search's budget)."""
    variant: str = field(default="line", metadata=VARIANT)
    """The value network's input (td_lambda's variants)."""
    hidden_sizes: tuple[int, ...] = field(default=(128, 64), metadata=HIDDEN)
    """The value network's hidden widths (td_lambda's shipped shape by default, so its weights can start a run)."""
    generation_hands: int = field(default=200, metadata=_integer_option(
        "--generation-hands", "self-play hands per generation", 1, 100_000))
    """Self-play hands between two rounds of training."""
    simulations: int = field(default=64, metadata=_integer_option(
        "--simulations", "search simulations per decision in self-play", 1, 10_000))
    """The search's budget in self-play (the shipped player searches more)."""
    worlds: int = field(default=16, metadata=_integer_option(
        "--worlds", "sampled deals of the hidden tiles per decision", 1, 4096))
    """Sampled deals of the hidden tiles per decision."""
    exploration: float = field(default=1.5, metadata=_real_option("--exploration", "PUCT's constant", 0.0, 100.0))
    """PUCT's exploration constant."""
    temperature: float = field(default=2.0, metadata=_real_option(
        "--temperature", "of the prior's softmax over after-state values, in pips", 0.01, 100.0))
    """Temperature (pips) of the softmax that turns after-state values into the prior, and the
    policy the visit counts are trained into."""
    sampled_moves: int = field(default=2, metadata=_integer_option(
        "--sampled-moves", "each seat's first decisions of a hand played in proportion to visits", 0, 100))
    """Each seat's first decisions with a choice in a hand are drawn in proportion to the visit
    counts (exploration); later ones take the most visited move."""
    learning_rate: float = field(default=1e-4, metadata=_real_option("--learning-rate", "Adam's step size", 1e-7, 1.0))
    """Adam's step size."""
    policy_weight: float = field(default=1.0, metadata=_real_option(
        "--policy-weight", "weight of the visit-count loss against the value loss", 0.0, 1000.0))
    """Weight of the cross-entropy to the visit counts against the squared error of the values (pips squared)."""
    epochs: int = field(default=2, metadata=_integer_option("--epochs", "passes over the replay buffer per generation",
                                                            1, 100))
    """Passes over the replay buffer after each generation."""
    batch_size: int = field(default=256, metadata=_integer_option("--batch-size", "decisions per gradient step",
                                                                  1, 65_536))
    """Decisions per gradient step."""
    replay_generations: int = field(default=4, metadata=_integer_option(
        "--replay-generations", "generations of self-play kept in the replay buffer", 1, 1000))
    """The latest generations whose decisions are trained on."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.curriculum != ((SELF_PLAY, 1.0),):
            raise ValueError("the champion learns in self-play only: leave --curriculum out")

    def network_config(self) -> TDLambdaConfig:
        """The network's description in td_lambda's terms (what its checkpoint file records)."""
        return TDLambdaConfig(game=self.game, variant=self.variant, hidden_sizes=self.hidden_sizes,
                              curriculum=((SELF_PLAY, 1.0),), parallel_hands=1, eval_opponents=self.eval_opponents)

    @property
    def generations(self) -> int:
        """Generations of the run: `hands` in generations of `generation_hands` (the last may be shorter)."""
        return -(-self.hands // self.generation_hands)
