"""Everything that defines a linear SARSA learner and its training run, declared once.

:class:`LinearSarsaConfig` is the one source of the defaults, the bounds and the command
line: the fields every learner shares (the table, the curriculum, the tables side by side,
the seed, the evaluation: :class:`~baselines.learning.config.LearnerConfig`), the step size
with its decay to a floor and exploration, shared with the look-ahead's learner
(:class:`~baselines.learning.config.DecayingStepConfig`), and SARSA's own discount. Every field carries
its ``dominoes train sarsa`` option and is checked on construction; the configuration is
stored in every weights file (:mod:`~baselines.linear_sarsa.weights`).

The defaults of the seed (docs/baselines.md: a linear SARSA agent designed for Splendor) are kept where
they carry over: gamma 0.9, a step size that decays towards a floor of 1e-4,
epsilon-greedy exploration while training only (the seed followed its greedy candidate 90%
of the time: epsilon 0.1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from baselines.learning import options
from baselines.learning.config import CURRICULUM, EVAL_EVERY, EVAL_OPPONENTS, HANDS, TABLES, DecayingStepConfig
from baselines.learning.options import SELF_PLAY, option


@dataclass(frozen=True)
class LinearSarsaConfig(DecayingStepConfig):
    """Everything that defines a linear SARSA learner and its training run (stored with its weights).

    Checked on construction as every :class:`~baselines.learning.config.LearnerConfig` is.
    """

    # The shared fields whose defaults differ here (their meaning: LearnerConfig's docstrings).
    hands: int = field(default=100_000, metadata=HANDS)
    """The learner levels off at about 100,000 hands (200,000 did no better)."""
    curriculum: tuple[tuple[str, float], ...] = field(
        default=(("random", 0.1), ("double", 0.2), ("persistent_line", 0.4), (SELF_PLAY, 0.3)), metadata=CURRICULUM)
    """Self-play last: it helped against greedy and double (docs/linear_sarsa.md)."""
    parallel_hands: int = field(default=64, metadata=TABLES)
    """Each round's SARSA updates, one per learner that moved or whose hand ended, are averaged
    into one step of the weights (a minibatch), so alpha means the same whatever the number of
    tables."""
    eval_every: int = field(default=20_000, metadata=EVAL_EVERY)
    """Five evaluations in a default run."""
    eval_opponents: tuple[str, ...] = field(default=("greedy", "double", "persistent_line"),
                                            metadata=EVAL_OPPONENTS)
    """The bar set for it (greedy, double) and the best hand-crafted player."""
    # SARSA's own fields.
    gamma: float = field(default=0.9, metadata=option(
        "--gamma", "discount per own move, in [0, 1]", options.probability, options.number))
    """Discount per move of the learner: Q(s, a) estimates the hand's reward (minus the pips
    left) discounted by gamma for every later move of its own. Below 1 it values the same
    pips less the later the hand ends. 0.9 is the seed's; the shipped weights were trained
    with 1 (no discount: the pips left are the score, whenever the hand ends), which played
    better in every comparison we ran (docs/linear_sarsa.md)."""
    # The step size and exploration (DecayingStepConfig's fields) keep their defaults: the seed's
    # floor of 1e-4 and epsilon of 0.1, alpha 0.05 halving every 20,000 hands.
