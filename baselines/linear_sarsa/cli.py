"""``dominoes train sarsa``: linear SARSA over hand-made move features, numpy only; the options are
:class:`~baselines.linear_sarsa.config.LinearSarsaConfig`'s fields
(:mod:`baselines.command_line.learner`).

    dominoes train sarsa --hands 40000 --out runs/sarsa
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from baselines.command_line.learner import add_learner_arguments, run_learner, train_linear
from baselines.learning.recorder import LOG_COLUMNS, Learner, RunRecorder
from baselines.linear_sarsa.config import LinearSarsaConfig

#: One line for ``dominoes train --help``.
HELP = "linear SARSA over hand-made move features (numpy only)"


def train(config: Any, args: argparse.Namespace, recorder: RunRecorder) -> str:
    """A JSON weights file."""
    from baselines import linear_sarsa

    def learn(config: Any, log: Any, initial: Any, resume: Any) -> linear_sarsa.Weights:
        return linear_sarsa.Weights(linear_sarsa.train(config, log, None if initial is None else initial.w, resume),
                                    config)

    return train_linear(config, args, recorder, linear_sarsa.Weights, learn)


LEARNER = Learner("linear_sarsa", LinearSarsaConfig, train,
                  (*LOG_COLUMNS, "td_error", "alpha", "hands_per_s", "elapsed_s"), Path("runs/linear_sarsa"),
                  "linear_sarsa.json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_learner_arguments(parser, LEARNER)


def run(args: argparse.Namespace) -> int:
    return run_learner(args, LEARNER)
