"""Milliseconds per frame of the table's picture (``render_mode="rgb_array"``), and of the text.

Every position of seeded random games is drawn by a :class:`dominoes_env.image.TablePainter`
(the hand of the player to move, as ``env.render()`` draws it, and every hand, as replays
do), after one warm-up pass that draws each tile once (the painter caches what it draws).
Each figure is the median and the 99th percentile over the positions of the best of
`--repeats` passes, timed by this process's CPU time (the code is single-threaded; on a
shared machine CPU time is far less disturbed than wall-clock time). ``env.render()`` adds
the env's own bookkeeping to the painter's time, and the first frame of a new painter pays
for drawing its tiles (printed as "cold").

    python benchmarks/render_speed.py [--games 4] [--repeats 3] [--configs 4x9 2x6 8x18b]

A config is PLAYERSxHIGHEST, with "b" for the boneyard rule and "c" for covered doubles.
"""

from __future__ import annotations

import argparse
import re
import time

import numpy as np

import dominoes_env
from dominoes_env.core import HandState, make_config
from dominoes_env.core.config import GameConfig, describe_table
from dominoes_env.core.render import render_table
from dominoes_env.image import TablePainter


def positions(config: GameConfig, games: int) -> list[HandState]:
    """Every position of `games` seeded random one-hand games."""
    env = dominoes_env.raw_env(config)
    rng = np.random.default_rng(0)
    seen = []
    for seed in range(games):
        env.reset(seed=seed)
        seen.append(env.game.hand.copy())
        while not env.game.hand.is_over:
            mask = env.observe(env.agent_selection)["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
            seen.append(env.game.hand.copy())
    return seen


def milliseconds(draw, hands: list[HandState], repeats: int) -> np.ndarray:
    """CPU milliseconds of `draw(hand)` for each hand: the fastest of `repeats` passes, hand by hand."""
    best = np.full(len(hands), np.inf)
    for _ in range(repeats):
        for k, hand in enumerate(hands):
            start = time.process_time()
            draw(hand)
            best[k] = min(best[k], time.process_time() - start)
    return best * 1000


def cold_milliseconds(config: GameConfig, hand: HandState) -> float:
    """A new painter's first frame, its tiles not yet drawn (other painters' caches cleared)."""
    from dominoes_env import image

    for cached in (image._tile, image._station, image._open_value, image._mark, image._text):
        cached.cache_clear()
    start = time.process_time()
    TablePainter(config).draw(hand)
    return (time.process_time() - start) * 1000


def env_render_milliseconds(config: GameConfig, repeats: int) -> float:
    """Median CPU milliseconds of ``env.render()`` in rgb_array mode over one random hand."""
    env = dominoes_env.raw_env(config, render_mode="rgb_array")
    env.reset(seed=0)
    rng = np.random.default_rng(1)
    times = []
    while not env.game.hand.is_over:
        env.render()
        start = time.process_time()
        for _ in range(repeats):
            env.render()
        times.append((time.process_time() - start) / repeats)
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    return float(np.median(times)) * 1000


def parse_config(text: str) -> GameConfig:
    match = re.fullmatch(r"(\d+)x(\d+)([bc]*)", text)
    if match is None:
        raise SystemExit(f"a config is PLAYERSxHIGHEST[b][c], e.g. 4x9 or 8x18b; got {text!r}")
    players, highest, rules = int(match[1]), int(match[2]), match[3]
    return make_config(players, highest, boneyard="b" in rules, cover_doubles="c" in rules)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--configs", nargs="+", default=["4x9", "2x6", "8x18b"])
    args = parser.parse_args()
    print("| table | picture (W x H) | hands shown | ms per frame: median | p99 | cold first frame | "
          "env.render() | text (ms) |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for config in map(parse_config, args.configs):
        hands = positions(config, args.games)
        cold = cold_milliseconds(config, hands[len(hands) // 2])
        through_env = env_render_milliseconds(config, args.repeats)
        text = np.median(milliseconds(render_table, hands, args.repeats))
        for shown in ("mover", "all"):
            painter = TablePainter(config, show_hands=shown)
            for hand in hands:
                painter.draw(hand)  # every tile drawn once: the steady state a game reaches
            times = milliseconds(painter.draw, hands, args.repeats)
            width, height = painter.size
            print(f"| {describe_table(config)} | {width} x {height} | {shown} | {np.median(times):.2f} | "
                  f"{np.percentile(times, 99):.2f} | {cold:.0f} | {through_env:.2f} | {text:.2f} |")
    print(f"\n({len(hands)} positions of {args.games} seeded random games per table; CPU time, best of "
          f"{args.repeats}; env.render() and cold: the mover's hand)")


if __name__ == "__main__":
    main()
