"""Milliseconds per decision of the champion at its default and fast settings (the default must
decide in at most 50 ms, median, the fast one in at most 5 ms), with td_lambda and lookahead
timed in the same run as anchors (the machine's speed varies from day to day: compare ratios).

Fixed seeds, 4 players, double-nine unless the table options say otherwise: each setting plays
one seat against persistent_line players, seats rotated over the hands; every decision with more
than one legal move is timed (wall clock around ``act``, after a warm-up that compiles and loads
everything):

    python benchmarks/champion_speed.py [--hands 40]
    python benchmarks/champion_speed.py --players 6 --highest 12 --rules mexican_train --specs champion
"""

from __future__ import annotations

import argparse

import numpy as np

from baselines.harness.timing import decision_times
from dominoes_env import make_config
from dominoes_env.core.config import describe_table

SETTINGS = ("td_lambda", "lookahead", "champion", "champion(simulations=32)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=40, help="hands per setting (default 40)")
    parser.add_argument("--specs", nargs="+", default=list(SETTINGS), help="the settings to time")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--highest", type=int, default=9)
    parser.add_argument("--rules", default=None, help="a named rule set (mexican_train)")
    args = parser.parse_args()
    config = make_config(args.players, args.highest, **({"rules": args.rules} if args.rules else {}))
    print(f"{describe_table(config)}, against {args.players - 1} persistent_line; decisions with a choice")
    anchor = None
    for spec in args.specs:
        decision_times(spec, 2, config)
        times = decision_times(spec, args.hands, config) * 1e3
        median = float(np.median(times))
        anchor = anchor or median
        print(f"{spec:28s} median {median:7.2f} ms   90th percentile {np.percentile(times, 90):7.2f} ms   "
              f"{median / anchor:6.1f}x {args.specs[0]}   ({times.size} decisions)")


if __name__ == "__main__":
    main()
