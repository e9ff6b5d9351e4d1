"""Behaviour cloning, cloning then PPO, and PPO from scratch on one plot (docs/imitation.md).

    python benchmarks/imitation_curves.py --opponent td_lambda --title "4 players, double-9" \
        --curve "cloning" dataset:524 runs/bc/log.csv \
        --curve "cloning, then PPO self-play" cloning runs/bc_ppo/log.csv \
        --curve "PPO from scratch" none baselines/checkpoints/ppo_selfplay_4p_d9.stage1.log.csv \
            baselines/checkpoints/ppo_selfplay_4p_d9.stage2.log.csv \
        --out docs/images/imitation_4p_d9.png

Each ``--curve LABEL START LOG [LOG ...]`` is one run of one or more stages (their ``log.csv``
files, in order, each stage's steps and seconds counted on from the previous one's last
evaluation). START says where it begins: ``none`` (from random weights), ``dataset:SECONDS`` (a
``dominoes train bc`` log, whose wall time starts with the seconds that playing its dataset took,
from ``dominoes dataset``'s last line), or another curve's LABEL (it goes on from that curve's
last point, as ``dominoes train ppo --init`` goes on from a clone).

A point is the margin in pips a hand (the player's pips minus its opponents' copies', on PPO's
held-out evaluation deals, seats rotated, with its 95% interval) against `--opponent`, against
two axes:

- **steps**: decisions learned from. For cloning, the rows of its epochs (a row is one of the
  teacher's decisions, as a learner step is one of the network's);
- **wall time**: the seconds the logs record (and the dataset's, for a clone).

It prints the points as a table, so the figure's numbers can be read without the picture.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from baselines.learning.recorder import pyplot, save_curve


def _evaluations(path: Path, opponent: str) -> list[tuple[float, float, float, float]]:
    """(steps, seconds, margin, interval) of every evaluation row against `opponent` (a clone's log
    counts its steps in rows, a PPO log in learner steps)."""
    with open(path, newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row["kind"] == "eval" and row["opponent"] == opponent]
    return [(float(row.get("rows") or row["steps"]), float(row["elapsed_s"]), float(row["margin"]),
             float(row["margin_ci95"] or 0)) for row in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--curve", nargs="+", action="append", required=True, metavar="LABEL START LOG",
                        help="a run: its label, where it starts (none, dataset:SECONDS or a curve's label), its logs")
    parser.add_argument("--opponent", default="td_lambda")
    parser.add_argument("--title", default="", help="the table, after the heading")
    parser.add_argument("--heading", default="imitation then RL against PPO from scratch", help="the figure's heading")
    parser.add_argument("--out", type=Path, required=True, help="the PNG to write")
    args = parser.parse_args()

    curves: dict[str, list[tuple[float, float, float, float]]] = {}
    for label, begin, *logs in args.curve:
        if begin == "none":
            start = (0.0, 0.0)
        elif begin.startswith("dataset:"):
            start = (0.0, float(begin.split(":", 1)[1]))
        else:
            start = curves[begin][-1][:2]
        curves[label] = _stages([Path(log) for log in logs], args.opponent, start)
    plt = pyplot()
    from matplotlib.ticker import NullFormatter

    figure, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for label, points in curves.items():
        print(f"{label}:")
        for steps, seconds, margin, spread in points:
            print(f"  {steps / 1e6:9.2f}M steps {seconds / 60:7.1f} min  {margin:+6.2f} ± {spread:.2f}")
        for axis, index, scale in ((axes[0], 0, 1e6), (axes[1], 1, 3600)):
            axis.errorbar([point[index] / scale for point in points], [point[2] for point in points],
                          yerr=[point[3] for point in points], marker="o", markersize=3, capsize=2, label=label)
    for axis, label in ((axes[0], "steps (millions of decisions learned from)"), (axes[1], "wall time (hours)")):
        axis.axhline(0.0, color="grey", linewidth=0.8)
        axis.set_xscale("log")
        axis.xaxis.set_minor_formatter(NullFormatter())  # labels on the decades only: minor ones overlap
        axis.set_xlabel(label)
        axis.grid(alpha=0.3)
    axes[0].set_ylabel(f"pips a hand minus {args.opponent}'s (lower is better)")
    axes[0].legend(fontsize=8)
    figure.suptitle(f"{args.heading}{': ' + args.title if args.title else ''}")
    figure.tight_layout()
    save_curve(figure, args.out, dpi=100)
    print(f"wrote {args.out}")


def _stages(paths: list[Path], opponent: str, start: tuple[float, float]) -> list[tuple[float, float, float, float]]:
    """The evaluations of consecutive PPO stages, each stage's steps and seconds counted on from the last."""
    points: list[tuple[float, float, float, float]] = []
    steps_before, seconds_before = start
    for path in paths:
        stage = _evaluations(path, opponent)
        points += [(steps + steps_before, seconds + seconds_before, margin, spread)
                   for steps, seconds, margin, spread in stage]
        if stage:
            steps_before, seconds_before = points[-1][:2]
    return points


if __name__ == "__main__":
    main()
