"""A picture of the table as ``render_mode="rgb_array"`` draws it (the README's image).

Shipped players (persistent_line, double, greedy, random, in turn around the table) play a
seeded game through the AEC env at the table of ``--players``, ``--highest`` and ``--rules``
(4 players, double-nine and the rule book by default, as the ``dominoes`` commands take them);
after `--moves` moves of the game, the frame ``env.render()`` returns is saved as a PNG. Needs
the ``image`` extra (pillow).

    python examples/table_image.py --seed 8 --hands 3 --moves 72 --out docs/images/table.png
    python examples/table_image.py --players 6 --highest 12 --rules mexican_train --out mexican_train.png
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import dominoes_env
from baselines import make_policy
from baselines.command_line.options import add_table_options
from baselines.command_line.options import table as read_table
from dominoes_env import GameConfig, make_config
from dominoes_env.image import save_png

PLAYERS = ("persistent_line", "double", "greedy", "random")  # seated in turn: seat k plays PLAYERS[k % 4]
DEFAULT_TABLE = make_config(4, 9)


def table_image(seed: int, hands: int, moves: int, render_hands: str | int = "mover",
                table: GameConfig = DEFAULT_TABLE):
    """The (H, W, 3) frame after `moves` moves of a seeded `hands`-hand game at `table` (or at its end)."""
    env = dominoes_env.env(table, num_hands=hands, render_mode="rgb_array", render_hands=render_hands)
    env.reset(seed=seed)
    policies = {f"player_{seat}": make_policy(PLAYERS[seat % len(PLAYERS)], table, seed=seed + seat)
                for seat in range(table.num_players)}
    for _ in range(moves):
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation:
            break
        env.step(policies[env.agent_selection].act(observation["observation"], observation["action_mask"]))
    return env.render()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_table_options(parser)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--hands", type=int, default=3, help="hands in the game")
    parser.add_argument("--moves", type=int, default=72, help="moves played before the picture is taken")
    parser.add_argument("--render-hands", default="mover", help="whose tiles are shown: mover, all, or a seat")
    parser.add_argument("--out", default="table.png")
    args = parser.parse_args(argv)
    try:
        table = read_table(args)
    except ValueError as error:
        parser.error(str(error))
    hands_shown = int(args.render_hands) if args.render_hands.isdigit() else args.render_hands
    frame = table_image(args.seed, args.hands, args.moves, hands_shown, table)
    save_png(frame, args.out)
    print(f"wrote {args.out} ({frame.shape[1]} x {frame.shape[0]} pixels)")


if __name__ == "__main__":
    main()
