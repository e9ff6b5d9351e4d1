"""``dominoes train td-lambda``: the after-state value network by TD(lambda); the options are
:class:`~baselines.td_lambda.config.TDLambdaConfig`'s fields
(:mod:`baselines.command_line.learner`).

    dominoes train td-lambda --hands 200000 --out runs/td
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from baselines.command_line.learner import (
    add_learner_arguments,
    initial_weights,
    refuse_other_shape,
    require_torch,
    run_learner,
)
from baselines.learning.recorder import LOG_COLUMNS, Learner, RunRecorder
from baselines.td_lambda.config import TDLambdaConfig

LATEST = "latest.safetensors"  #: the weights of the last round of evaluations
#: One line for ``dominoes train --help``.
HELP = "TD(lambda) after-state value network (needs torch)"


def train(config: Any, args: argparse.Namespace, recorder: RunRecorder) -> str:
    """A safetensors checkpoint; torch is needed from here on. A directory holding a killed run of
    the same settings goes on from its last round of evaluations."""
    require_torch()
    from baselines import td_lambda

    point = recorder.resume_point(LATEST)
    initial = (td_lambda.load_checkpoint(point.weights, expected=config.game) if point is not None
               else initial_weights(args, lambda path: td_lambda.load_checkpoint(path, expected=config.game)))
    refuse_other_shape(initial, initial is None or (initial.config.hidden_sizes, initial.config.variant)
                       == (config.hidden_sizes, config.variant))
    recorder.start(lambda path, network, info: td_lambda.save_checkpoint(path, network, config, info), LATEST,
                   resume=point)
    network = None if initial is None else td_lambda.build_network(config, initial.theta)  # torch from here on
    network = recorder.run(lambda log: td_lambda.train(config, log, network=network, resume=point))
    final = td_lambda.save_checkpoint(recorder.out / recorder.learner.weights_name, network, config,
                                      {**recorder.info(), "initialized_from": str(args.init_checkpoint or "")})
    return f"checkpoint {final}" + (f" (resumed after {point.done} hands)" if point is not None else "")


LEARNER = Learner("td_lambda", TDLambdaConfig, train,
                  (*LOG_COLUMNS, "td_error", "hands_per_s", "elapsed_s"), Path("runs/td_lambda"),
                  "td_lambda.safetensors")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_learner_arguments(parser, LEARNER)


def run(args: argparse.Namespace) -> int:
    return run_learner(args, LEARNER)
