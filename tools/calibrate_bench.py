"""Freeze the references of a benchmark suite version: bench every player of its pool, then write
the pool's ratings (random = 1000), and per cell a random player's and the best shipped player's
result, into the suite file, with the checksums of the shipped weights the pool played with.

Run once when a suite version is made (it benches every pool player: about half an hour with two
workers for v1), never after: changing a reference makes a new version.

    python tools/calibrate_bench.py [--suite v1] [--workers 2] [--out runs/bench-calibration]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from baselines.benchmark import bench, load_suite
from baselines.benchmark.rating import pool_ratings
from baselines.benchmark.run import run_cells
from baselines.benchmark.suite import LATEST, suite_path, weights_fingerprint
from dominoes_env import files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default=LATEST)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("runs/bench-calibration"))
    args = parser.parse_args()
    suite = load_suite(args.suite)
    if suite.reference.calibrated:
        raise SystemExit(f"suite {suite.version} is calibrated already: a new reference makes a new version")
    results = {}
    for player in suite.pool:
        print(f"benching {player} ...", flush=True)
        results[player] = run_cells(suite, player, args.out / player, workers=args.workers)
        bench(player, suite, out=args.out / player)  # its (uncalibrated) scorecard, from the cells above
    ratings = pool_ratings({player: [o for cell in cells for o in cell.outcomes] for player, cells in results.items()})
    random = {cell.cell: cell.difference for cell in results["random"]}
    best = {}
    for name in random:
        scores = {player: next(c.difference for c in cells if c.cell == name) for player, cells in results.items()}
        leader = min(sorted(scores), key=lambda player: scores[player])
        best[name] = [leader, scores[leader]]
    content = json.loads(suite_path(suite.version).read_text())
    content["reference"] = {"pool": ratings, "random": random, "best": best, "weights": weights_fingerprint(suite)}
    files.write_atomically(suite_path(suite.version), (json.dumps(content, indent=1) + "\n").encode())
    load_suite(suite.version)  # it reads back
    print(json.dumps(ratings, indent=1))


if __name__ == "__main__":
    main()
