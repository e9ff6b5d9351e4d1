"""A picture of the table as ``render_mode="rgb_array"`` draws it (the README's image).

Four shipped players (persistent_line, double, greedy, random) play a seeded game through
the AEC env; after `--moves` moves of the game, the frame ``env.render()`` returns is saved
as a PNG. Needs the ``image`` extra (pillow).

    python examples/table_image.py --seed 8 --hands 3 --moves 72 --out docs/images/table.png
"""

from __future__ import annotations

import argparse

import dominoes_env
from baselines import make_policy
from dominoes_env.image import save_png

PLAYERS = ("persistent_line", "double", "greedy", "random")


def table_image(seed: int, hands: int, moves: int, render_hands: str = "mover"):
    """The (H, W, 3) frame after `moves` moves of a seeded `hands`-hand game (or at its end)."""
    env = dominoes_env.env(4, 9, hands, render_mode="rgb_array", render_hands=render_hands)
    env.reset(seed=seed)
    policies = {f"player_{seat}": make_policy(name, 4, 9, seed=seed + seat) for seat, name in enumerate(PLAYERS)}
    for _ in range(moves):
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation:
            break
        env.step(policies[env.agent_selection].act(observation["observation"], observation["action_mask"]))
    return env.render()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--hands", type=int, default=3, help="hands in the game")
    parser.add_argument("--moves", type=int, default=72, help="moves played before the picture is taken")
    parser.add_argument("--render-hands", default="mover", help="whose tiles are shown: mover, all, or a seat")
    parser.add_argument("--out", default="table.png")
    args = parser.parse_args()
    hands_shown = int(args.render_hands) if args.render_hands.isdigit() else args.render_hands
    frame = table_image(args.seed, args.hands, args.moves, hands_shown)
    save_png(frame, args.out)
    print(f"wrote {args.out} ({frame.shape[1]} x {frame.shape[0]} pixels)")


if __name__ == "__main__":
    main()
