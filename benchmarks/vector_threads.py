"""Two threads against one for the batched engine, on free cores and under load, per threading setup.

    python benchmarks/vector_threads.py [--seconds 4] [--batch 4096] [--threads 2]
    python benchmarks/vector_threads.py --against DIR [--rounds 4] [--seconds 2]

``VectorDominoes(B, threads=2)`` runs its compiled loops on numba's threading layer. The OpenMP
layer's threads spin while they wait for work, which is fast on free cores and ruinous on a busy
machine (a spinning thread holds a core another process needs, and the step waits for the
slowest thread), so the package asks OpenMP for short spins, then sleep, unless told otherwise
(:func:`dominoes_env.core.batch.prefer_short_spins`). For each setup (that default, passive
waiting, OpenMP spinning, numba's own workqueue layer) this runs B = 4096 games of 4 players,
double-nine, random legal moves, with one thread and with two: first with the cores free, then
with one busy process per core beside it. Where the threads soon sleep (the default, passive
waiting), one process steps both batches in turns of a few steps, so that the load falls on both
alike: separate runs of one thread and two had differed by up to 20% under load from the load's
changes alone, enough to make two threads look slower than one. The other setups run each in its
own process, since their waiting threads may spin and would slow the one-thread turns beside
them. Printed: decisions/s and the ratio of two threads to one (``--threads N``: N threads, on a
machine with N cores or more).

``--against DIR`` compares code instead: DIR is another checkout of the package (a ``git
worktree`` of an older commit, say), measured with the default setup (one thread and two in
turns in one process) in rounds alternating with this checkout, free cores then busy ones in
each round, so that a change of the machine's speed during the run falls on both alike.
Printed: each measurement, then each code's ratios and their median.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from dominoes_env.core.batch import THREADING_CHOICES

#: each setup's environment, and whether one thread and two run in one process, in turns (only
#: where waiting threads soon sleep: a spinning thread would slow the one-thread turns beside it)
SETUPS = {"the default (omp, short spins)": ({}, True),
          "omp, passive waiting (OMP_WAIT_POLICY=PASSIVE)": ({"OMP_WAIT_POLICY": "PASSIVE"}, True),
          "omp, spinning (OMP_WAIT_POLICY=ACTIVE)": ({"OMP_WAIT_POLICY": "ACTIVE"}, False),
          "workqueue (NUMBA_THREADING_LAYER)": ({"NUMBA_THREADING_LAYER": "workqueue"}, False)}
TURN_STEPS = 20  # steps of one batch before the other batch's turn
PROBE = """
import sys, time, numpy as np
from dominoes_env.vector import VectorDominoes, random_legal_actions
batch, seconds = int(sys.argv[1]), float(sys.argv[2])
counts = [int(count) for count in sys.argv[3].split(",")]
turn = int(sys.argv[4])

class Run:  # one batch on its thread count, and its time and steps so far
    def __init__(self, threads):
        self.threads, self.rng = threads, np.random.default_rng(0)
        self.vec = VectorDominoes(batch, 4, 9, seed=0, threads=threads)
        self.obs, _ = self.vec.reset()
        self.seconds, self.steps = 0.0, 0

    def play(self, steps):
        start = time.perf_counter()
        for _ in range(steps):
            self.obs, *_ = self.vec.step(random_legal_actions(self.obs["action_mask"], self.rng, self.threads))
        return time.perf_counter() - start

runs = [Run(threads) for threads in counts]
for run in runs:
    run.play(20)  # outside the timings
while sum(run.seconds for run in runs) < seconds:
    for run in runs:
        run.seconds += run.play(turn); run.steps += turn
print(" ".join(str(run.steps * batch / run.seconds) for run in runs))
"""


def decisions(setup: dict[str, str], batch: int, counts: tuple[int, ...], seconds: float,
              code: str | None = None) -> list[float]:
    """Decisions/s of a batch on each of `counts` threads, in one fresh process, the batches
    stepping in turns of TURN_STEPS steps for `seconds` in all (so that a change of the machine's
    load falls on each alike), with `setup` in its environment, importing the package from the
    checkout `code` (default: wherever Python finds it from here)."""
    environment = {key: value for key, value in os.environ.items() if key not in THREADING_CHOICES}
    if code is not None:  # first on the path: PYTHONPATH, and the working directory of `python -c`
        environment["PYTHONPATH"] = code
    run = subprocess.run([sys.executable, "-c", PROBE, str(batch), str(seconds), ",".join(map(str, counts)),
                          str(TURN_STEPS)],
                         env={**environment, **setup}, capture_output=True, text=True, check=True, cwd=code)
    return [float(value) for value in run.stdout.split()[-len(counts):]]


def one_and_many(setup: dict[str, str], paired: bool, batch: int, seconds: float, threads: int,
                 code: str | None = None) -> tuple[float, float]:
    """Decisions/s on one thread and on `threads`, `seconds` each: in one process, in turns, where
    `paired`, else in two processes one after the other."""
    if paired:
        one, many = decisions(setup, batch, (1, threads), 2 * seconds, code)
        return one, many
    return decisions(setup, batch, (1,), seconds, code)[0], decisions(setup, batch, (threads,), seconds, code)[0]


def busy_cores() -> list[subprocess.Popen]:
    """One busy process per core."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]


def compare(other: str, rounds: int, batch: int, seconds: float, threads: int) -> None:
    """`threads` threads / one for the checkout `other` and this one, in alternating rounds."""
    here = str(Path(__file__).resolve().parent.parent)
    codes = {"other": str(Path(other).resolve()), "this": here}
    for code in codes.values():  # compile (or load) and start the threads first, outside the timings
        decisions({}, batch, (1, threads), 1.0, code)
    ratios: dict[tuple[str, str], list[float]] = {(name, load): [] for name in codes for load in ("free", "busy")}
    print(f"B = {batch}; {other} (other) against {here} (this); decisions/s (M): one thread, {threads}, "
          f"{threads} / one")
    for round_ in range(rounds):
        for load in ("free", "busy"):
            hogs = busy_cores() if load == "busy" else []
            try:
                for name, code in codes.items():
                    one, many = one_and_many({}, True, batch, seconds, threads, code)
                    ratios[(name, load)].append(many / one)
                    print(f"round {round_} {load} {name}: {one / 1e6:.2f} {many / 1e6:.2f} {many / one:.2f}x",
                          flush=True)
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
    parser.add_argument("--threads", type=int, default=2, help="threads measured against one (default 2)")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    if not 2 <= args.threads <= cores:
        parser.error(f"--threads must be from 2 to this machine's {cores} cores, got {args.threads}")
    n = args.threads
    if args.against is not None:
        compare(args.against, args.rounds, args.batch, args.seconds, n)
        return
    decisions({}, args.batch, (1, n), 1.0)  # compile (or load) every kernel and start the threads, outside the timings
    print(f"B = {args.batch}, 4 players, double-nine, random legal moves; decisions/s (M), {n} threads / one")
    print(f"| setup | cores | 1 thread | {n} threads | {n} / 1 |\n|---|---|---:|---:|---:|")
    for load in ("free", "busy"):
        hogs = [] if load == "free" else busy_cores()
        try:
            for name, (setup, paired) in SETUPS.items():
                one, many = one_and_many(setup, paired, args.batch, args.seconds, n)
                print(f"| {name} | {load} | {one / 1e6:.2f} | {many / 1e6:.2f} | {many / one:.2f}x |", flush=True)
        finally:
            for hog in hogs:
                hog.kill()


if __name__ == "__main__":
    main()
