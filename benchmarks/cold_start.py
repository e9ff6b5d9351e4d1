"""The first run on a new machine: wall-clock seconds of a command on a cold numba cache and a warm one.

    python benchmarks/cold_start.py [--repeats 2] [--games 20]
    python benchmarks/cold_start.py --against DIR [--repeats 4] [--commands league]

numba compiles the rules engine and the policies on first use and keeps the machine code in
a disk cache. A fresh ``NUMBA_CACHE_DIR`` stands for a new machine (cold); the same directory
again for every later run (warm). Timed, each in a fresh process: ``dominoes league --games
GAMES`` (the default league's policies, two workers), ``dominoes demo`` (one game printed), and
``import dominoes_env`` followed by one hand of random play. Printed: seconds cold and warm,
the extra a cold cache costs, and the cold run as a ratio to the warm one.

Each command runs the code of the checkout that holds this script (from its directory, first
on ``PYTHONPATH``). ``--against DIR`` compares code: DIR is another checkout of the package (a
``git worktree`` of an older commit, say), run the same way. Each repeat
runs both checkouts, cold then warm, in alternating order, so that a change of the machine's
speed falls on both alike; each run's seconds are printed, then one table row per checkout.
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

ROOT = Path(__file__).resolve().parent.parent  # the checkout that holds this script
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


def timed(command: list[str], cache: str, out: Path, checkout: Path) -> float:
    """Seconds of `command` in a fresh process with numba's cache at `cache` (a league starts afresh),
    running `checkout`'s code (from its directory, first on PYTHONPATH)."""
    subprocess.run(["rm", "-rf", str(out)], check=True)
    path = os.pathsep.join(filter(None, [str(checkout), os.environ.get("PYTHONPATH")]))
    environment = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": path}
    started = time.perf_counter()
    subprocess.run(command, env=environment, cwd=checkout, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="cold and warm runs of each command (default 2)")
    parser.add_argument("--games", type=int, default=20, help="games of the league (default 20)")
    parser.add_argument("--commands", nargs="+", choices=("league", "demo", "hand"), default=["league", "demo", "hand"],
                        help="which commands to time (default all)")
    parser.add_argument("--against", metavar="DIR", default=None,
                        help="also time another checkout of the package, alternating with this one")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    if args.against is not None and not (Path(args.against) / "dominoes_env" / "__init__.py").is_file():
        parser.error(f"--against must be a checkout of the package (with dominoes_env/__init__.py), "
                     f"got {args.against!r}")
    if args.against is not None and Path(args.against).resolve() == ROOT:
        parser.error(f"--against must be another checkout than this one, got {args.against!r}")
    checkouts = [ROOT] if args.against is None else [ROOT, Path(args.against).resolve()]
    label = {checkout: str(checkout) for checkout in checkouts} | {ROOT: "this checkout"}
    header = "| command | cold | warm | cold - warm | cold / warm |\n|---|---:|---:|---:|---:|"
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "league-out"
        print(f"{os.cpu_count()} cores; seconds, median of {args.repeats} (each run in a fresh process)")
        if args.against is None:
            print(header)
        rows = []
        for key in args.commands:
            name, command = commands(args.games, out)[key]
            cold: dict[Path, list[float]] = {checkout: [] for checkout in checkouts}
            warm: dict[Path, list[float]] = {checkout: [] for checkout in checkouts}
            for repeat in range(args.repeats):
                for checkout in checkouts if repeat % 2 == 0 else checkouts[::-1]:
                    cache = tempfile.mkdtemp(dir=scratch)
                    cold[checkout].append(timed(command, cache, out, checkout))
                    warm[checkout].append(timed(command, cache, out, checkout))
                    if args.against is not None:
                        print(f"  {name}, {label[checkout]}: cold {cold[checkout][-1]:.1f}, "
                              f"warm {warm[checkout][-1]:.1f}", flush=True)
            for checkout in checkouts:
                c, w = statistics.median(cold[checkout]), statistics.median(warm[checkout])
                shown = f"`{name}` ({label[checkout]})" if args.against else f"`{name}`"
                rows.append(f"| {shown} | {c:.1f} | {w:.1f} | {c - w:.1f} | {c / w:.1f}x |")
                if args.against is None:
                    print(rows[-1], flush=True)
        if args.against is not None:
            print(header + "\n" + "\n".join(rows))


if __name__ == "__main__":
    main()
