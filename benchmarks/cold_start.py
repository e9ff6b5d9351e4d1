"""The first run on a new machine: wall-clock seconds of a command on a cold numba cache and a warm one.

    python benchmarks/cold_start.py [--repeats 2] [--games 20]

numba compiles the rules engine and the policies on first use and keeps the machine code in
a disk cache. A fresh ``NUMBA_CACHE_DIR`` stands for a new machine (cold); the same directory
again for every later run (warm). Timed, each in a fresh process: ``dominoes league --games
GAMES`` (the default league's policies, two workers), ``dominoes demo`` (one game printed), and
``import dominoes_env`` followed by one hand of random play. Printed: seconds cold and warm,
the extra a cold cache costs, and the cold run as a ratio to the warm one.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ONE_HAND = ("import numpy as np, dominoes_env; env = dominoes_env.env(); env.reset(seed=0)\n"
            "for agent in env.agent_iter():\n"
            "    observation, _, terminated, truncated, _ = env.last()\n"
            "    env.step(None if terminated or truncated else int(np.flatnonzero(observation['action_mask'])[0]))")


def commands(games: int, out: Path) -> dict[str, tuple[str, list[str]]]:
    """Each command's name on the command line (``--commands``), its label and its arguments."""
    dominoes = [sys.executable, "-m", "baselines.cli"]
    return {"league": (f"dominoes league --games {games}",
                       [*dominoes, "league", "--games", str(games), "--out", str(out)]),
            "demo": ("dominoes demo", [*dominoes, "demo"]),
            "hand": ("import + one hand of the AEC env", [sys.executable, "-c", ONE_HAND])}


def timed(command: list[str], cache: str, out: Path) -> float:
    """Seconds of `command` in a fresh process with numba's cache at `cache` (a league starts afresh)."""
    subprocess.run(["rm", "-rf", str(out)], check=True)
    environment = {**os.environ, "NUMBA_CACHE_DIR": cache}
    started = time.perf_counter()
    subprocess.run(command, env=environment, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="cold and warm runs of each command (default 2)")
    parser.add_argument("--games", type=int, default=20, help="games of the league (default 20)")
    parser.add_argument("--commands", nargs="+", choices=("league", "demo", "hand"), default=["league", "demo", "hand"],
                        help="which commands to time (default all)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "league-out"
        print(f"{os.cpu_count()} cores; seconds, median of {args.repeats} (each run in a fresh process)")
        print("| command | cold | warm | cold - warm | cold / warm |\n|---|---:|---:|---:|---:|")
        for key in args.commands:
            name, command = commands(args.games, out)[key]
            cold, warm = [], []
            for _ in range(args.repeats):
                cache = tempfile.mkdtemp(dir=scratch)
                cold.append(timed(command, cache, out))
                warm.append(timed(command, cache, out))
            c, w = statistics.median(cold), statistics.median(warm)
            print(f"| `{name}` | {c:.1f} | {w:.1f} | {c - w:.1f} | {c / w:.1f}x |", flush=True)


if __name__ == "__main__":
    main()
