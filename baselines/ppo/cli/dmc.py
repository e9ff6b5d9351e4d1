"""``dominoes train dmc``: Deep Monte-Carlo (:mod:`baselines.ppo.dmc`) on ppo's network, from the command line.

    dominoes train dmc --steps 20000000 --out runs/dmc
    dominoes evaluate ppo@runs/dmc/ppo.safetensors td_lambda:3 --hands 2000

It is PPO's run with DMC's trainer: the same table options, the PPO fields DMC reads (the
network, the rollout's size, the learning rate and its schedule, the passes over each batch, the
reward, the evaluations), ``--epsilon``, and the same files in ``--out`` (the weights are a ppo
file, played by ``ppo@FILE``). Run the same command again after a kill and it resumes; a DMC run's
directory is never resumed by ``dominoes train ppo``, nor a PPO run's by this command.
"""

from __future__ import annotations

import argparse
import functools

from baselines.ppo import cli as ppo_cli
from dominoes_env.core import validation

#: One line for ``dominoes train --help``.
HELP = "Deep Monte-Carlo (DouZero's method) in self-play on ppo's network (needs torch)"

#: The fields of :class:`~baselines.ppo.config.PPOConfig` that DMC reads (PPO's clipping, entropy,
#: GAE, value weight, discount and pool of opponents mean nothing to it, so they are not options here).
FIELDS = ("steps", "seed", "num_envs", "rollout_steps", "hidden", "activation", "learning_rate", "anneal", "epochs",
          "minibatches", "max_grad_norm", "reward", "reward_scale", "hands_per_game", "eval_every", "eval_hands",
          "eval_opponents", "history", "features")

#: DouZero's exploration, and what `benchmarks/dmc_vs_ppo.py` measured with (docs/ppo.md).
DEFAULT_EPSILON = 0.01


def _epsilon(text: str) -> float:
    """``--epsilon``: a share in [0, 1] (argparse says what was wrong in one line)."""
    try:
        return validation.real("share", float(text), 0.0, 1.0, allowed="a share in [0, 1]")
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a share in [0, 1], got {text!r}") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    ppo_cli.add_arguments(parser, FIELDS, out="runs/dmc")
    parser.add_argument("--epsilon", type=_epsilon, default=DEFAULT_EPSILON, metavar="SHARE",
                        help="the share of decisions with a choice played at random while learning "
                             "(default %(default)s, DouZero's)")


def run(args: argparse.Namespace) -> int:
    from baselines.ppo.dmc import DMCTrainer

    config = ppo_cli.config_from_arguments(args, FIELDS)
    extra = () if args.epsilon == DEFAULT_EPSILON else ("--epsilon", repr(args.epsilon))
    return ppo_cli.train_from_arguments(args, config, "dmc", functools.partial(DMCTrainer, epsilon=args.epsilon),
                                        extra)
