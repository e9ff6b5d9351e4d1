"""Command-line options every ``dominoes`` subcommand shares, declared and checked once.

The table (``--players``, ``--highest``), the seed and the counts are validated here with
the names the user typed, so ``dominoes demo --players 9`` says ``--players must be an
integer from 2 to 8, got 9`` whatever the subcommand.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dominoes_env.core import validation
from dominoes_env.core.config import (
    MAX_HIGHEST,
    MAX_PLAYERS,
    MIN_HIGHEST,
    MIN_PLAYERS,
    RULE_SETS,
    TABLE_RULES,
    GameConfig,
    make_config,
)


def add_table_options(parser: argparse.ArgumentParser) -> None:
    """``--players``, ``--highest`` and the table rules (``--rules`` names a preset, e.g.
    ``mexican_train``; ``--boneyard``, ``--cover-doubles``, ``--first-player`` set one option;
    the rule book's game by default, see docs/RULES.md)."""
    parser.add_argument("--players", type=validation.integer_argument, default=4,
                        help=f"number of players ({MIN_PLAYERS}-{MAX_PLAYERS}, default 4)")
    parser.add_argument("--highest", type=validation.integer_argument, default=9,
                        help=f"highest pip value N of the double-N set ({MIN_HIGHEST}-{MAX_HIGHEST}, default 9)")
    parser.add_argument("--rules", choices=sorted(RULE_SETS), default=None,
                        help="a named rule set: mexican_train (a boneyard and covered doubles, the game most "
                             "people play with --highest 12) or rule_book (the default)")
    for rule in TABLE_RULES:  # one option each, as dominoes_env.core.config declares them
        if rule.is_switch:
            parser.add_argument(rule.option, action="store_true", default=None, help=f"table rule: {rule.help}")
        else:
            parser.add_argument(rule.option, choices=rule.values, default=None, help=f"table rule: {rule.help}")


class _Renamed(argparse.Action):
    """An option's old name: it still works, and says once on stderr what replaced it."""

    def __init__(self, option_strings: list[str], dest: str, new: str = "", **kwargs: Any) -> None:
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(f"note: {option_string} is now {self.new} (the old name still works)", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_renamed(parser: argparse.ArgumentParser, new: str, old: str, **kwargs: Any) -> None:
    """Option `new`, and `old` (hidden from --help) as an alias that says it was renamed: one
    vocabulary across the learners (``--out``, ``--init``) without breaking a recorded command."""
    parser.add_argument(new, **kwargs)
    hidden = {key: value for key, value in kwargs.items() if key in ("dest", "type", "metavar")}
    parser.add_argument(old, action=_Renamed, new=new, help=argparse.SUPPRESS, **hidden)


def add_torch_run_options(parser: argparse.ArgumentParser, out: str, init_help: str, progress_help: str) -> None:
    """What a torch learner outside the shared loop takes after its own options (``dominoes train bc``
    and ``beliefs``): ``--torch-threads`` (1 by default, the fastest on a busy 2-core machine),
    ``--init FILE`` (`init_help`), ``--no-progress`` and ``--out`` (default `out`)."""
    parser.add_argument("--torch-threads", type=validation.integer_argument, default=1,
                        help="torch's threads (default 1: fastest on a busy 2-core machine)")
    parser.add_argument("--init", metavar="FILE", default=None, help=init_help)
    parser.add_argument("--no-progress", action="store_true", help=progress_help)
    parser.add_argument("--out", default=out, help="where the weights, log.csv and learning_curve.png go "
                                                   "(default %(default)s)")


def add_seed_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--seed", type=validation.integer_argument, default=0, help=f"seed of {what} (default 0)")


def table(args: argparse.Namespace) -> GameConfig:
    """The table the options ask for, or a ValueError naming the option."""
    validation.integer("--players", args.players, MIN_PLAYERS, MAX_PLAYERS)
    validation.integer("--highest", args.highest, MIN_HIGHEST, MAX_HIGHEST)
    given = {rule.name: getattr(args, rule.name) for rule in TABLE_RULES}
    return make_config(args.players, args.highest, rules=args.rules, **given)


def seed(args: argparse.Namespace) -> int:
    value = validation.seed("--seed", args.seed)
    assert value is not None
    return value


def count(option: str, value: object, minimum: int, maximum: int) -> int:
    """A bounded count given on the command line, e.g. ``count("--games", args.games, 1, MAX_GAMES)``."""
    return validation.integer(option, value, minimum, maximum)
