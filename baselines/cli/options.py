"""Command-line options every ``dominoes`` subcommand shares, declared and checked once.

The table (``--players``, ``--highest``), the seed and the counts are validated here with
the names the user typed, so ``dominoes demo --players 9`` says ``--players must be an
integer from 2 to 8, got 9`` whatever the subcommand.
"""

from __future__ import annotations

import argparse

from dominoes_env.core import validation
from dominoes_env.core.config import (
    FIRST_PLAYERS,
    MAX_HIGHEST,
    MAX_PLAYERS,
    MIN_HIGHEST,
    MIN_PLAYERS,
    RULE_SETS,
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
    parser.add_argument("--boneyard", action="store_true", default=None,
                        help="table rule: deal part of the set, keep the rest face down; a player who cannot "
                             "play draws one tile")
    parser.add_argument("--cover-doubles", action="store_true", default=None,
                        help="table rule: a double must be covered before any other move")
    parser.add_argument("--first-player", choices=FIRST_PLAYERS, default=None,
                        help="who moves first: the engine's holder (default) or the player after it")


def add_seed_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--seed", type=validation.integer_argument, default=0, help=f"seed of {what} (default 0)")


def table(args: argparse.Namespace) -> GameConfig:
    """The table the options ask for, or a ValueError naming the option."""
    validation.integer("--players", args.players, MIN_PLAYERS, MAX_PLAYERS)
    validation.integer("--highest", args.highest, MIN_HIGHEST, MAX_HIGHEST)
    return make_config(args.players, args.highest, rules=args.rules, boneyard=args.boneyard,
                       cover_doubles=args.cover_doubles, first_player=args.first_player)


def seed(args: argparse.Namespace) -> int:
    value = validation.seed("--seed", args.seed)
    assert value is not None
    return value


def count(option: str, value: object, minimum: int, maximum: int) -> int:
    """A bounded count given on the command line, e.g. ``count("--games", args.games, 1, MAX_GAMES)``."""
    return validation.integer(option, value, minimum, maximum)
