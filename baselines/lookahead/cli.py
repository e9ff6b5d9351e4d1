"""``dominoes train lookahead``: the look-ahead's linear evaluation, learned in stages, numpy only;
the options are :class:`~baselines.lookahead.config.LookaheadConfig`'s fields
(:mod:`baselines.command_line.learner`).

    dominoes train lookahead --hands 12000 --out runs/lookahead
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from baselines.command_line.learner import add_learner_arguments, run_learner, train_linear
from baselines.learning.recorder import LOG_COLUMNS, Learner, RunRecorder
from baselines.lookahead.config import LookaheadConfig

#: One line for ``dominoes train --help``.
HELP = "the look-ahead's linear evaluation, learned in stages (numpy only)"


def train(config: Any, args: argparse.Namespace, recorder: RunRecorder) -> str:
    """A JSON weights file."""
    from baselines.lookahead import learner, weights

    return train_linear(config, args, recorder, weights.LookaheadWeights, learner.train)


LEARNER = Learner("lookahead", LookaheadConfig,
                  train, (*LOG_COLUMNS, "fit_error", "alpha", "hands_per_s", "elapsed_s"), Path("runs/lookahead"),
                  "lookahead.json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_learner_arguments(parser, LEARNER)


def run(args: argparse.Namespace) -> int:
    return run_learner(args, LEARNER)
