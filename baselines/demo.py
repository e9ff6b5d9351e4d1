"""``dominoes demo``: one seeded hand between random players, rendered as text."""

from __future__ import annotations

import argparse

import numpy as np

import dominoes_env


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--players", type=int, default=4, help="number of players (2-8, default 4)")
    parser.add_argument("--highest", type=int, default=9, help="highest pip value N of the double-N set (6-18, default 9)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deal and of the players (default 0)")


def run(args: argparse.Namespace) -> int:
    env = dominoes_env.env(args.players, args.highest, render_mode="ansi")
    env.reset(seed=args.seed)
    rng = np.random.default_rng(args.seed)
    print(env.render())
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        action = int(rng.choice(legal))
        print(f"\n{agent} plays {env.unwrapped.game.hand.describe_action(action)}")
        env.step(action)
        print(env.render())
    scores = env.unwrapped.game.hand_scores[-1]
    print("\nFinal scores (pips left, lower is better): "
          + ", ".join(f"player_{seat} {int(p)}" for seat, p in enumerate(scores)))
    return 0
