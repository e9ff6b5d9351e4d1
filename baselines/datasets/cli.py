"""``dominoes dataset``: an offline dataset of a player's games, in Farama Minari's format.

Everything is checked before the first hand (the table, the counts, the players, Minari, the id
and its folder); a run stopped by Ctrl-C, SIGTERM or SIGHUP keeps the hands it saved, and the
same command resumes it (:mod:`baselines.datasets.writer`).
"""

from __future__ import annotations

import argparse
import sys

from baselines.command_line import options
from baselines.command_line.signals import signals_stop
from baselines.datasets.plan import MAX_HANDS, make_plan
from baselines.datasets.writer import write
from dominoes_env.core import validation


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = ("Each seat's hand is an episode of the single-agent view (dominoes_env.SingleAgentEnv): "
                     "its observations, moves, rewards and action masks. The dataset goes to "
                     "MINARI_DATASETS_PATH (else ~/.minari/datasets); read it with minari.load_dataset(ID). "
                     "Example: dominoes dataset td_lambda --hands 1000 --dataset-id dominoes/td_lambda-4p-d9-v0")
    parser.add_argument("player", metavar="PLAYER",
                        help="the player, as a policy spec: NAME, 'NAME(KEY=VALUE,...)' or NAME@CHECKPOINT "
                             "(e.g. td_lambda, champion, greedy)")
    parser.add_argument("--dataset-id", required=True, metavar="ID",
                        help="the dataset's id in Minari's grammar, [NAMESPACE/]NAME-vVERSION "
                             "(e.g. dominoes/td_lambda-4p-d9-v0)")
    parser.add_argument("--hands", type=validation.integer_argument, default=1000,
                        help=f"hands to play (1-{MAX_HANDS:,}, default 1000); each gives one episode per seat "
                             f"the player holds")
    options.add_seed_option(parser, "the deals and the players")
    options.add_table_options(parser)
    parser.add_argument("--opponents", nargs="+", metavar="POLICY",
                        help="the other seats' players (one spec fills every other seat, else one per seat); the "
                             "player then takes each seat in turn and only its episodes are kept. Default: the "
                             "player in every seat, every seat's episodes kept")
    parser.add_argument("--replace", action="store_true",
                        help="write the dataset again if the id exists (only a dataset this command wrote), and "
                             "start again rather than resume an unfinished run")


def run(args: argparse.Namespace) -> int:
    try:
        config, seed = options.table(args), options.seed(args)
        hands = options.count("--hands", args.hands, 1, MAX_HANDS)
        plan = make_plan(config, args.player, args.opponents, hands, seed)
        with signals_stop():  # a kill keeps the saved hands, as Ctrl-C does
            written = write(plan, args.dataset_id, replace=args.replace, progress=sys.stderr.isatty(),
                            announce=lambda text: print(f"dominoes dataset: {text}", file=sys.stderr, flush=True))
    except ValueError as error:
        print(f"dominoes dataset: error: {error}", file=sys.stderr)
        return 2
    left_out = f" ({written.left_out} seat-hands without a move left out)" if written.left_out else ""
    print(f"wrote {written.dataset_id}: {written.episodes:,} episodes of {plan.describe()}{left_out}, "
          f"{written.size_bytes / 1e6:.1f} MB in {written.path}, {written.seconds:.1f} s; "
          f"read it with minari.load_dataset({written.dataset_id!r})")
    return 0
