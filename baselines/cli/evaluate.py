"""``dominoes evaluate``: the evaluation harness (:mod:`baselines.harness.evaluate`) from the command line."""

from __future__ import annotations

import argparse
import sys

from baselines.command_line import options
from baselines.harness.evaluate import MAX_HANDS, evaluate
from dominoes_env.core import validation
from dominoes_env.core.config import MAX_HANDS_PER_GAME, GameConfig, describe_table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = ("Every deal is played under all seat rotations. With more policies than seats each deal "
                     "seats a fair draw of them. Example: dominoes evaluate persistent_line best_line double "
                     "greedy random stupid --hands 12000")
    parser.add_argument("policies", nargs="+", metavar="POLICY",
                        help="NAME, NAME:COPIES, 'NAME(KEY=VALUE,...)' or NAME@CHECKPOINT; at least one per seat "
                             "(more are rotated through the seats)")
    parser.add_argument("--hands", type=validation.integer_argument, default=4000,
                        help=f"hands to play at least (1-{MAX_HANDS}, default 4000)")
    options.add_seed_option(parser, "the deals and the policies")
    options.add_table_options(parser)
    parser.add_argument("--hands-per-game", type=validation.integer_argument, default=1,
                        help=f"hands per game (1-{MAX_HANDS_PER_GAME}, default 1; N+1 plays full games with "
                             "engines N..0)")
    bar = parser.add_mutually_exclusive_group()
    bar.add_argument("--progress", dest="progress", action="store_const", const=True, default=None,
                     help="show a progress bar even when the output is not a terminal")
    bar.add_argument("--no-progress", dest="progress", action="store_const", const=False,
                     help="do not show a progress bar (default: shown on a terminal only, so piped logs "
                          "get no carriage-return frames)")


def run(args: argparse.Namespace) -> int:
    try:
        config, seed = options.table(args), options.seed(args)
        hands = options.count("--hands", args.hands, 1, MAX_HANDS)
        hands_per_game = options.count("--hands-per-game", args.hands_per_game, 1, MAX_HANDS_PER_GAME)
        result = evaluate(args.policies, hands, seed=seed, num_players=config, hands_per_game=hands_per_game,
                          progress=sys.stderr.isatty() if args.progress is None else args.progress,
                          announce=lambda total: _announce(total, config))
    except ValueError as error:
        print(f"dominoes evaluate: error: {error}", file=sys.stderr)
        return 2
    print(result.table())
    return 0


def _announce(hands: int, config: GameConfig) -> None:
    """Said on stderr before the first hand, whatever the output is: a long match whose output
    goes to a file is not silent."""
    print(f"dominoes evaluate: {hands:,} hands of {describe_table(config)} (every deal under all seat rotations); "
          f"the table is printed when they are played", file=sys.stderr, flush=True)
