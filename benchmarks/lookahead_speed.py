"""Milliseconds per decision of the lookahead policy, for each setting that ships (the
default must decide in at most 20 ms, median).

Fixed seeds, 4 players, double-nine: the lookahead plays one seat against three
persistent_line players, seats rotated over the hands; every decision with more than one
legal move is timed (wall clock around ``act``, compiled code loaded before timing):

    python benchmarks/lookahead_speed.py [--hands 40] [--specs "lookahead" "lookahead(samples=32)"]
"""

from __future__ import annotations

import argparse

import numpy as np

from baselines.harness.timing import decision_times

SETTINGS = ("lookahead", "lookahead(samples=32)", "lookahead(depth=2)", "lookahead(evaluation='td_lambda')",
            "lookahead(evaluation='td_lambda', samples=32, depth=2)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=40, help="hands per setting (default 40)")
    parser.add_argument("--specs", nargs="+", default=list(SETTINGS), help="the settings to time")
    args = parser.parse_args()
    print("lookahead, 4 players, double-nine, against 3 persistent_line; decisions with a choice")
    for spec in args.specs:
        decision_times(spec, 2)  # compile and load before timing
        times = decision_times(spec, args.hands) * 1e3
        print(f"{spec:55s} median {np.median(times):6.2f} ms   90th percentile {np.percentile(times, 90):6.2f} ms   "
              f"({times.size} decisions)")


if __name__ == "__main__":
    main()
