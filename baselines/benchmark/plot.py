"""scorecard.png: the agent's rating beside the frozen reference pool, and its normalised scores per cell."""

from __future__ import annotations

import io
import math
import os
from pathlib import Path
from typing import Any

from baselines.benchmark.suite import Suite
from dominoes_env import files


def plot_scorecard(scorecard: Any, suite: Suite, path: str | os.PathLike) -> Path:
    """Two panels: the pool's ratings and the agent's (with its 95% interval), and the agent's
    normalised score in each cell (0: random, 100: the best shipped player there). `scorecard` is a
    :class:`~baselines.benchmark.scorecard.Scorecard` (typed loosely: that module imports this one)."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(13, 6))
    pool = sorted(suite.reference.pool.items(), key=lambda item: item[1])
    names = [name for name, _ in pool]
    values = [value for _, value in pool]
    errors = [0.0] * len(pool)
    colours = ["C0"] * len(pool)
    if scorecard.rating is not None:
        names.append(f"{scorecard.agent} (agent)")
        values.append(scorecard.rating.value)
        errors.append(0.0 if math.isinf(scorecard.rating.ci95) else scorecard.rating.ci95)
        colours.append("C3")
    left.barh(range(len(names)), values, xerr=errors, color=colours)
    left.set_yticks(range(len(names)), names)
    left.set_xlabel(f"ELO on the dominoes-bench {suite.version} scale (random = 1000)")
    left.set_title("Rating beside the frozen reference pool")
    cells = [cell for cell in scorecard.cells if cell["normalised"] is not None]
    right.barh(range(len(cells)), [cell["normalised"] for cell in cells], color="C3")
    right.set_yticks(range(len(cells)), [f"{cell['table']} / {cell['line_up']}" for cell in cells], fontsize=7)
    right.axvline(0, color="grey", linewidth=0.8)
    right.axvline(100, color="grey", linewidth=0.8, linestyle="--")
    right.set_xlabel("normalised score (0 = random, 100 = best shipped player)")
    right.set_title("Per table and line-up")
    figure.suptitle(scorecard.headline())
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90, metadata={"Software": None})
    plt.close(figure)
    return files.write_atomically(path, buffer.getvalue())
