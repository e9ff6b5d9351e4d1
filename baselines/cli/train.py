"""``dominoes train LEARNER``: train a learning policy from the command line.

    dominoes train td-lambda --hands 200000 --out runs/td
    dominoes train sarsa --hands 40000 --out runs/sarsa
    dominoes train lookahead --hands 12000 --out runs/lookahead
    dominoes train champion --hands 4800 --out runs/champion
    dominoes train ppo --steps 20000000 --out runs/ppo
    dominoes train dmc --steps 20000000 --out runs/dmc
    dominoes train dagger --features best_chain --hidden 256,256 --steps 3000000 --out runs/dagger
    dominoes train beliefs --positions 1000000 --out runs/beliefs
    dominoes train bc --dataset dominoes/td_lambda-4p-d9-v0 --out runs/bc

This module only dispatches: each learner owns its entry, a module of its package
(:data:`LEARNERS`) with ``add_arguments(parser)`` and ``run(args) -> int``. The learners on the
shared loop build theirs from one description (:mod:`baselines.command_line.learner`), and
write what :mod:`baselines.learning.recorder` says (weights, ``log.csv``,
``learning_curve.png``, ``resume.json``); ppo, bc and beliefs have options of their own, and
write their ``log.csv`` and ``learning_curve.png`` with the same recorder pieces. Every learner
takes ``--out`` and ``--init``, and every one resumes a killed run when the same command is run
again: td-lambda, sarsa and lookahead from their last round of evaluations, champion from its
last finished generation, ppo, dmc and dagger from their last segment, bc and beliefs from their last finished
epoch (ppo, dmc, dagger, bc and beliefs keep their state in ``resume.pt``). A learner's heavy dependencies
(torch) are imported only when its run starts.
"""

from __future__ import annotations

import argparse
import importlib

#: ``dominoes train NAME``: the module that owns the entry (its ``HELP`` is the line ``--help`` shows).
LEARNERS: dict[str, str] = {
    "td-lambda": "baselines.td_lambda.cli",
    "sarsa": "baselines.linear_sarsa.cli",
    "lookahead": "baselines.lookahead.cli",
    "champion": "baselines.champion.cli",
    "ppo": "baselines.ppo.cli",
    "dmc": "baselines.ppo.cli.dmc",
    "dagger": "baselines.ppo.cli.dagger",
    "beliefs": "baselines.inference.cli",
    "bc": "baselines.imitation.cli",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One sub-command per learner, whose options its own module declares."""
    learners = parser.add_subparsers(dest="learner", metavar="LEARNER", required=True, help=", ".join(LEARNERS))
    for name, path in LEARNERS.items():
        module = importlib.import_module(path)
        sub = learners.add_parser(name, help=module.HELP, description=f"dominoes train {name}: {module.HELP}")
        module.add_arguments(sub)


def run(args: argparse.Namespace) -> int:
    return int(importlib.import_module(LEARNERS[args.learner]).run(args))
