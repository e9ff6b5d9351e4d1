"""``dominoes train champion``: the champion's network by expert iteration (search in self-play); the
options are :class:`~baselines.champion.config.ChampionConfig`'s fields and the workers'
(:mod:`baselines.command_line.learner`).

    dominoes train champion --hands 4800 --out runs/champion
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from baselines.champion.config import ChampionConfig
from baselines.command_line import options
from baselines.command_line.learner import (
    add_learner_arguments,
    initial_weights,
    refuse_other_shape,
    require_torch,
    run_learner,
)
from baselines.learning.recorder import LOG_COLUMNS, Learner, RunRecorder

#: One line for ``dominoes train --help``.
HELP = "the champion's network by expert iteration: search in self-play (needs torch)"


def train(config: Any, args: argparse.Namespace, recorder: RunRecorder) -> str:
    """A safetensors checkpoint in td_lambda's format; torch is needed from here on. A directory
    holding an unfinished run of the same configuration is resumed after its last finished
    generation."""
    require_torch()
    from baselines import td_lambda
    from baselines.champion import trainer
    from baselines.harness.parallel import MAX_WORKERS, default_workers

    workers = default_workers() if args.workers is None else options.count("--workers", args.workers, 1, MAX_WORKERS)
    network = config.network_config()
    initial = initial_weights(args, lambda path: td_lambda.load_checkpoint(path, expected=config.game))
    refuse_other_shape(initial, initial is None or initial.config.architecture == network.architecture)
    resumed = trainer.read_progress(recorder.out, config)  # refuses a directory holding another run
    recorder.start(lambda path, theta, info: td_lambda.save_checkpoint(path, theta, network, info),
                   trainer.LATEST, resume=resumed > 0)
    recipe = {"champion": config.to_dict(), "initialized_from": str(args.init_checkpoint or "")}
    theta = recorder.run(lambda log: trainer.train(
        config, recorder.out, log, initial, trainer.Parallelism(args.backend, workers, args.ray_address),
        lambda path, weights, info: td_lambda.save_checkpoint(path, weights, network, {**info, **recipe})))
    final = td_lambda.save_checkpoint(recorder.out / recorder.learner.weights_name, theta, network,
                                      {**recorder.info(), **recipe})
    return f"checkpoint {final}" + (f" (resumed after {resumed} generations)" if resumed else "")


LEARNER = Learner("champion", ChampionConfig, train,
                  (*LOG_COLUMNS, "value_loss", "policy_loss", "hands_per_s", "elapsed_s"),
                  Path("runs/champion"), "champion.safetensors", parallel=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_learner_arguments(parser, LEARNER)


def run(args: argparse.Namespace) -> int:
    return run_learner(args, LEARNER)
