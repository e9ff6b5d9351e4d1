"""The library examples' command line: the options every example shares (the table, budget, seeds, output,
rating), and options derived from an example's settings dataclass by the package's one generator
(:mod:`baselines.learning.options`, which ``dominoes train`` uses too), so the defaults live in one place.

Each field becomes ``--field-name`` (a tuple of ints takes several values: ``--net-arch 64 64``),
with its help text and bounds from the field's metadata::

    @dataclass(frozen=True)
    class Settings:
        batch_size: int = field(default=256, metadata=bounded("minibatch size", 2, 1_000_000))

Every value is checked on the way in; a bad one is a one-line argparse error naming the option.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from rating import BENCH_CHOICES

from baselines import OpponentPool
from baselines.command_line.options import add_table_options, count, table
from baselines.learning.options import add_dataclass_options, read_dataclass_options
from baselines.selfplay.pool import SAMPLING
from dominoes_env import SingleAgentVectorEnv

Settings = TypeVar("Settings")

MAX_STEPS = 100_000_000
MAX_EVAL_HANDS = 1_000_000
SEED_LIMIT = 2**32  # the libraries seed NumPy's legacy (global) generator, which takes 32-bit seeds


def add_run_options(parser: argparse.ArgumentParser, default_steps: int, default_out: Path) -> None:
    """The table and the rating (:func:`add_table_and_rating_options`), ``--steps`` and ``--out``."""
    add_table_and_rating_options(parser)
    parser.add_argument("--steps", type=int, default=default_steps,
                        help=f"env steps of training (the learner's decisions; default {default_steps:,})")
    parser.add_argument("--out", type=Path, default=default_out,
                        help=f"where to save the trained model (default {default_out})")


def add_table_and_rating_options(parser: argparse.ArgumentParser) -> None:
    """What every example takes, whatever its budget is counted in: the table (``--players``,
    ``--highest``, ``--rules`` and the table rules, as the ``dominoes`` commands take them),
    ``--seed``, ``--rating-seed``, ``--eval-hands`` and ``--bench`` (how the example ends: with the
    trained agent's dominoes-bench headline)."""
    add_table_options(parser)
    parser.add_argument("--seed", type=int, default=0, help="seeds training and the rating's deals (default 0)")
    parser.add_argument("--rating-seed", type=int, default=None,
                        help="seeds the rating's deals instead (default: --seed), to compare training seeds "
                             "on the same deals")
    parser.add_argument("--eval-hands", type=int, default=2000,
                        help="hands of each rating table (default 2000: 500 deals x 4 seat rotations "
                             "at 4 players)")
    parser.add_argument("--bench", choices=BENCH_CHOICES, default="full",
                        help="end with the agent's dominoes-bench rating: the whole suite at its table (full, "
                             "the default), the quick setting, or off")


def check_run_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Check :func:`add_run_options`' options (a bad one exits with the parser's one-line error), as
    :func:`check_table_and_rating_options` does, and ``--steps``."""
    check_table_and_rating_options(parser, args)
    try:
        count("--steps", args.steps, 1, MAX_STEPS)
    except ValueError as error:
        parser.error(str(error))


def check_table_and_rating_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Check the table and the rating's options (a bad one exits with the parser's one-line error); set
    ``table`` (the :class:`~dominoes_env.core.config.GameConfig` the example trains and rates on) and
    fill in ``rating_seed``."""
    try:
        args.table = table(args)
        count("--seed", args.seed, 0, SEED_LIMIT - 1)
        if args.rating_seed is None:
            args.rating_seed = args.seed
        count("--rating-seed", args.rating_seed, 0, SEED_LIMIT - 1)
        count("--eval-hands", args.eval_hands, 4, MAX_EVAL_HANDS)
    except ValueError as error:
        parser.error(str(error))


def parse_run(argv: Sequence[str] | None, description: str, default_steps: int, default_out: Path,
              settings: type[Settings], more: Callable[[argparse.ArgumentParser], None] | None = None,
              ) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    """The command line of an example whose knobs are a settings dataclass: :func:`add_run_options`,
    one option per field, and what `more` adds; checked, with ``args.settings`` set. The parser
    comes back too, for the example's own checks of what `more` added."""
    parser = argparse.ArgumentParser(description=description)
    add_run_options(parser, default_steps, default_out)
    add_options(parser, settings)
    if more is not None:
        more(parser)
    args = parser.parse_args(argv)
    check_run_options(parser, args)
    args.settings = read_options(parser, args, settings)
    return parser, args


def add_options(parser: argparse.ArgumentParser, settings: type[Any]) -> None:
    """One option per field of the dataclass `settings` (the package's one generator)."""
    add_dataclass_options(parser, settings)


def read_options(parser: argparse.ArgumentParser, args: argparse.Namespace, settings: type[Settings]) -> Settings:
    """The settings the options ask for; a value out of bounds exits with the parser's one-line error."""
    try:
        return settings(**read_dataclass_options(args, settings))
    except ValueError as error:
        parser.error(str(error))


#: The self-play examples' first pool: the shipped players from weakest to td_lambda.
SELF_PLAY_MEMBERS = ("random", "greedy", "persistent_line", "td_lambda")


def add_self_play_options(parser: argparse.ArgumentParser) -> None:
    """The self-play examples' options: ``--games``, ``--members``, ``--sampling``, ``--snapshot-every``
    and ``--rate-only``."""
    parser.add_argument("--games", type=int, default=64, help="games stepped at once (default 64)")
    parser.add_argument("--members", nargs="+", default=list(SELF_PLAY_MEMBERS),
                        help=f"the pool's first members, policy specs (default: {' '.join(SELF_PLAY_MEMBERS)})")
    parser.add_argument("--sampling", choices=SAMPLING, default="prioritised",
                        help="how members are drawn (default prioritised)")
    parser.add_argument("--snapshot-every", type=int, default=200_000,
                        help="steps between two snapshots added to the pool (default 200000)")
    parser.add_argument("--rate-only", action="store_true",
                        help="train nothing: rate the agent saved at --out (a run's rating again, or at other seeds)")


def read_self_play_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Check them (after :func:`check_run_options`) and set ``pool``: a member that cannot play at
    the table exits with the parser's one-line error, before any training."""
    try:
        count("--games", args.games, 1, 100_000)
        count("--snapshot-every", args.snapshot_every, 1, 10**9)
        args.pool = OpponentPool(args.members, sampling=args.sampling, seed=args.seed)
        SingleAgentVectorEnv(1, args.pool.opponents(args.table.num_players), args.table)  # each member plays here
    except ValueError as error:
        parser.error(str(error))

