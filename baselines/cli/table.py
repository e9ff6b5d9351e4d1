"""``dominoes table``: what a table is, before anyone plays at it.

A user choosing a table for an experiment (``--players 6 --highest 12 --boneyard
--cover-doubles``) wants its numbers: the set, the deal, what lies face down, how long a full
game is, and what an agent sees and does there (the observation's and the action space's
sizes). They follow from the rules alone (:class:`~dominoes_env.GameConfig`), so this command
computes them without dealing a hand; each line says where it comes from.
"""

from __future__ import annotations

import argparse

from baselines.command_line import options
from dominoes_env.core.config import GameConfig, describe_table
from dominoes_env.core.observation import observation_layout

FIRST_MOVER = {"engine_holder": "the engine holder", "left_of_engine": "the player after the engine holder"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_table_options(parser)


def run(args: argparse.Namespace) -> int:
    print(describe(options.table(args)))
    return 0


def describe(config: GameConfig) -> str:
    """The table's numbers as lines of text."""
    n, t = config.num_players, config.num_tiles
    if config.boneyard:
        deal = (f"deal: {config.deal_size} tiles to each seat; {config.boneyard_at_deal} face down in the boneyard "
                f"(drawn one at a time by a player who cannot play)")
    else:
        extra = t % n
        deal = f"deal: every tile, {t // n} to each seat" + (f", one more to {extra} of them in turn" if extra else "")
    one_hand, full_game = (observation_layout(config, hands).size for hands in (1, config.default_num_hands))
    moves = f"{t} tiles x {config.num_lines} lines, pass" + (", draw" if config.boneyard else "")
    return "\n".join([
        describe_table(config) + (" (the rule book's game)" if config.is_default else ""),
        f"set: double-{config.highest_double}, {t} tiles, {config.total_pips} pips in all",
        deal,
        f"a full game: {config.default_num_hands} hands, engines ({config.highest_double}|{config.highest_double}) "
        f"down to (0|0); the lowest total wins",
        f"first to move: {FIRST_MOVER[config.first_player]}",
        f"observation: {one_hand} values in a one-hand game, {full_game} in a full game (the scores so far); "
        f"actions: {config.num_actions} ({moves})",
    ])
