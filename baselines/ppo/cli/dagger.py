"""``dominoes train dagger``: DAgger (:mod:`baselines.ppo.dagger`) on ppo's network, from the command line.

    dominoes train dagger --features best_chain --hidden 256,256 --steps 3000000 --out runs/dagger
    dominoes evaluate ppo@runs/dagger/ppo.safetensors td_lambda:3 --hands 2000

It is PPO's run with DAgger's trainer: the same table options, the PPO fields DAgger reads (the
network, the rollout's size, the learning rate and its schedule, the passes over each rollout,
the evaluations), ``--teacher``, and the same files in ``--out`` (the weights are a ppo file,
played by ``ppo@FILE``). With ``--features best_chain`` it trained the shipped ``ppo`` from random
weights in 3M steps (docs/dagger.md); ``--init`` starts from other weights of the same network
(a clone: ``baselines/checkpoints/ppo_clone_4p_d9.safetensors`` with ``--hidden 256,256``). Run
the same command again after a kill and it resumes; another learner's directory is never resumed
by this command.
"""

from __future__ import annotations

import argparse
import functools

from baselines.command_line.learner import require_torch
from baselines.ppo import cli as ppo_cli
from baselines.ppo.teachers import DEFAULT_TEACHER, make_teacher

#: One line for ``dominoes train --help``.
HELP = "DAgger: ppo's network plays, a teacher (td_lambda) labels its positions (needs torch)"

#: The fields of :class:`~baselines.ppo.config.PPOConfig` that DAgger reads (PPO's clipping, entropy,
#: GAE, value weight, discount, reward and pool of opponents mean nothing to it, so they are not options here).
FIELDS = ("steps", "seed", "num_envs", "rollout_steps", "hidden", "activation", "policy_head", "learning_rate",
          "anneal", "epochs", "minibatches", "max_grad_norm", "hands_per_game", "eval_every", "eval_hands",
          "eval_opponents", "features")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    ppo_cli.add_arguments(parser, FIELDS, out="runs/dagger")
    parser.add_argument("--teacher", default=DEFAULT_TEACHER, metavar="PLAYER",
                        help="the player whose moves are learned, at the learner's positions: one that keeps nothing "
                             "between moves and acts on many games at once (default %(default)s)")


def run(args: argparse.Namespace) -> int:
    config = ppo_cli.config_from_arguments(args, FIELDS)
    make_teacher(args.teacher, config.game)  # refused before torch is imported or anything is written
    require_torch()
    from baselines.ppo.dagger import DAggerTrainer

    extra = () if args.teacher == DEFAULT_TEACHER else ("--teacher", args.teacher)
    return ppo_cli.train_from_arguments(args, config, "dagger",
                                        functools.partial(DAggerTrainer, teacher=args.teacher), extra)
