"""``dominoes demo``: a seeded game between random players (one hand by default), rendered as text."""

from __future__ import annotations

import argparse

import numpy as np

import dominoes_env
from baselines.command_line import options
from baselines.harness.play import HandWatcher
from dominoes_env.core import validation
from dominoes_env.core.config import MAX_HANDS_PER_GAME
from dominoes_env.core.render import render_table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_table_options(parser)
    parser.add_argument("--hands", type=validation.integer_argument, default=1,
                        help=f"hands in the game (1-{MAX_HANDS_PER_GAME}, default 1; N+1 plays engines N down to 0)")
    options.add_seed_option(parser, "the deals and of the players")


def run(args: argparse.Namespace) -> int:
    config, seed = options.table(args), options.seed(args)
    hands = options.count("--hands", args.hands, 1, MAX_HANDS_PER_GAME)
    env = dominoes_env.env(config, num_hands=hands, render_mode="ansi")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    watcher = HandWatcher()
    print(env.render())
    for agent in env.agent_iter():
        observation, _, termination, truncation, info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        seat = env.possible_agents.index(agent)
        move = dominoes_env.describe_action(action, config, seat=seat)
        print(f"\n{agent} {_said(move)}")
        core = env.unwrapped
        hand, hand_index, scores_before = core.game.hand, core.game.hand_index, core.game.scores_before_hand.copy()
        env.step(action)
        finished = watcher.finished(env.infos[agent])
        if finished is not None:  # the final board, every hand open, before the next deal replaces it
            shown = scores_before if hands > 1 else None
            print("\n" + render_table(hand, hand_index, hands, shown, "all"))  # it tells the hand's end, once
        if not env.terminations[agent]:
            print(env.render())
    print("\nGame scores (pips left over the game, lower is better): "
          + ", ".join(f"player_{s} {p}" for s, p in enumerate(info["game_scores"])))
    return 0


def _said(move: str) -> str:
    """A move as the demo tells it: "passes", "draws", or "plays (3|7) on player_0's line"."""
    return {"pass": "passes (no tile fits: marker up)", "draw": "draws (no tile fits)"}.get(move, f"plays {move}")
