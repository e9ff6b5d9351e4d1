"""Two threads against one for the batched engine, on free cores and under load, per threading setup.

    python benchmarks/vector_threads.py [--seconds 4] [--batch 4096]
    python benchmarks/vector_threads.py --against DIR [--rounds 4] [--seconds 2]

``VectorDominoes(B, threads=2)`` runs its compiled loops on numba's threading layer. The OpenMP
layer's threads spin while they wait for work, which is fast on free cores and ruinous on a busy
machine (a spinning thread holds a core another process needs, and the step waits for the
slowest thread), so the package asks OpenMP for passive waiting unless told otherwise
(:func:`dominoes_env.core.batch.prefer_passive_waiting`). For each setup (that default, OpenMP
spinning, numba's own workqueue layer) this runs B = 4096 games of 4 players, double-nine, random legal
moves, in a fresh process with one thread and with two: first with the cores free, then with one
busy process per core beside it. Printed: decisions/s and the ratio of two threads to one.

``--against DIR`` compares code instead: DIR is another checkout of the package (a ``git
worktree`` of an older commit, say), measured with the default setup in rounds alternating with
this checkout, free cores then busy ones in each round, so that a change of the machine's speed
during the run falls on both alike. Printed: each measurement, then each code's ratios and their
median.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

SETUPS = {"the default (omp, passive waiting)": {},
          "omp, spinning (OMP_WAIT_POLICY=ACTIVE)": {"OMP_WAIT_POLICY": "ACTIVE"},
          "workqueue (NUMBA_THREADING_LAYER)": {"NUMBA_THREADING_LAYER": "workqueue"}}
PROBE = """
import sys, time, numpy as np
from dominoes_env.vector import VectorDominoes, random_legal_actions
batch, threads, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
vec = VectorDominoes(batch, 4, 9, seed=0, threads=threads)
obs, _ = vec.reset(); rng = np.random.default_rng(0)
for _ in range(20):
    obs, *_ = vec.step(random_legal_actions(obs["action_mask"], rng, threads))
start, steps = time.perf_counter(), 0
while time.perf_counter() - start < seconds:
    obs, *_ = vec.step(random_legal_actions(obs["action_mask"], rng, threads)); steps += 1
print(steps * batch / (time.perf_counter() - start))
"""


def decisions(setup: dict[str, str], batch: int, threads: int, seconds: float, code: str | None = None) -> float:
    """Decisions/s of the probe in a fresh process with `setup` in its environment, importing the
    package from the checkout `code` (default: wherever Python finds it from here)."""
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("NUMBA_THREADING_LAYER", "OMP_WAIT_POLICY")}
    if code is not None:  # first on the path: PYTHONPATH, and the working directory of `python -c`
        environment["PYTHONPATH"] = code
    run = subprocess.run([sys.executable, "-c", PROBE, str(batch), str(threads), str(seconds)],
                         env={**environment, **setup}, capture_output=True, text=True, check=True, cwd=code)
    return float(run.stdout.split()[-1])


def busy_cores() -> list[subprocess.Popen]:
    """One busy process per core."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]


def compare(other: str, rounds: int, batch: int, seconds: float) -> None:
    """Two threads / one for the checkout `other` and this one, in alternating rounds."""
    here = str(Path(__file__).resolve().parent.parent)
    codes = {"other": str(Path(other).resolve()), "this": here}
    for code in codes.values():  # compile (or load) first, outside the timings
        for threads in (1, 2):
            decisions({}, 512, threads, 0.1, code)
    ratios: dict[tuple[str, str], list[float]] = {(name, load): [] for name in codes for load in ("free", "busy")}
    print(f"B = {batch}; {other} (other) against {here} (this); decisions/s (M): one thread, two, two / one")
    for round_ in range(rounds):
        for load in ("free", "busy"):
            hogs = busy_cores() if load == "busy" else []
            try:
                for name, code in codes.items():
                    one, two = (decisions({}, batch, threads, seconds, code) for threads in (1, 2))
                    ratios[(name, load)].append(two / one)
                    print(f"round {round_} {load} {name}: {one / 1e6:.2f} {two / 1e6:.2f} {two / one:.2f}x", flush=True)
            finally:
                for hog in hogs:
                    hog.kill()
    for (name, load), values in ratios.items():
        print(f"{name} {load}: {', '.join(f'{value:.2f}x' for value in values)}; median "
              f"{statistics.median(values):.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="seconds per measurement (default 4)")
    parser.add_argument("--batch", type=int, default=4096, help="games stepped at once (default 4096)")
    parser.add_argument("--against", metavar="DIR", default=None,
                        help="another checkout of the package: compare it with this one in alternating rounds")
    parser.add_argument("--rounds", type=int, default=4, help="rounds of --against (default 4)")
    args = parser.parse_args()
    if args.against is not None:
        compare(args.against, args.rounds, args.batch, args.seconds)
        return
    for threads in (1, 2):  # compile (or load from numba's cache) every kernel first, outside the timings
        decisions({}, 512, threads, 0.1)
    print(f"B = {args.batch}, 4 players, double-nine, random legal moves; decisions/s (M), two threads / one")
    print("| setup | cores | 1 thread | 2 threads | 2 / 1 |\n|---|---|---:|---:|---:|")
    for load in ("free", "busy"):
        hogs = [] if load == "free" else busy_cores()
        try:
            for name, setup in SETUPS.items():
                one, two = (decisions(setup, args.batch, threads, args.seconds) for threads in (1, 2))
                print(f"| {name} | {load} | {one / 1e6:.2f} | {two / 1e6:.2f} | {two / one:.2f}x |", flush=True)
        finally:
            for hog in hogs:
                hog.kill()


if __name__ == "__main__":
    main()
