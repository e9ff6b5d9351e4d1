"""Iterations of OpenSpiel's outcome-sampling MCCFR on the game in a fixed time, Python and C++.

docs/integrations/openspiel.md lists outcome-sampling MCCFR as an algorithm that runs on the game
and says how fast: an iteration samples one deal and one line of play, so the count in a fixed
time is the figure a user planning a run needs. Each solver runs alone for ``--seconds`` at each
table (4 players double-nine: the shipped table; 2 players double-six: the smallest), from a fixed
seed; the machine's load average is printed beside the counts, since the machine may be shared:

    python benchmarks/openspiel_mccfr.py [--seconds 15] [--tables 2x6 4x9]

It needs OpenSpiel (``pip install -e ".[openspiel]"``); without it, it says so in one line.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

import numpy as np

TABLES = {"2x6": {"players": 2, "highest_double": 6}, "4x9": {"players": 4, "highest_double": 9}}


def iterations_in(seconds: float, step: Callable[[], object]) -> int:
    """How many times `step` ran before `seconds` of wall time passed (one call at least)."""
    done = 0
    end = time.perf_counter() + seconds
    while True:
        step()
        done += 1
        if time.perf_counter() >= end:
            return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0, help="wall time of each solver, each table (default 15)")
    parser.add_argument("--tables", nargs="+", default=list(TABLES), choices=list(TABLES),
                        help="players x highest double (default: both)")
    args = parser.parse_args()
    if not 0 < args.seconds <= 3600:
        parser.error(f"--seconds must be in (0, 3600], got {args.seconds}")
    try:
        import pyspiel
        from open_spiel.python.algorithms import outcome_sampling_mccfr
    except ImportError:
        sys.exit('OpenSpiel is not installed: pip install -e ".[openspiel]", then run this again')
    import dominoes_env.openspiel as twin  # registers the game with OpenSpiel

    print(f"outcome-sampling MCCFR, {args.seconds:g} s a solver; load average before: "
          f"{', '.join(f'{load:.2f}' for load in os.getloadavg())}")
    print("| table | Python iterations | C++ iterations |")
    print("|---|---:|---:|")
    for name in args.tables:
        game = pyspiel.load_game(twin.SHORT_NAME, TABLES[name])
        np.random.seed(0)  # the Python solver draws from numpy's global generator
        python_solver = outcome_sampling_mccfr.OutcomeSamplingSolver(game)
        native_solver = pyspiel.OutcomeSamplingMCCFRSolver(game, seed=0)
        python_count = iterations_in(args.seconds, python_solver.iteration)
        native_count = iterations_in(args.seconds, native_solver.run_iteration)
        print(f"| {TABLES[name]['players']} players, double-{TABLES[name]['highest_double']} | {python_count:,} | "
              f"{native_count:,} |")
    print(f"load average after: {', '.join(f'{load:.2f}' for load in os.getloadavg())}")


if __name__ == "__main__":
    main()
