"""dominoes-bench: a fixed, versioned suite and a scorecard with a rating on a fixed scale.

``bench(agent)`` plays the agent (a spec the league takes, a factory or a Policy) through every
table and line-up of a suite version (:mod:`baselines.benchmark.suite`) and returns its
:class:`~baselines.benchmark.scorecard.Scorecard`; ``dominoes bench SPEC`` does the same from the
command line and writes the scorecard. docs/bench.md describes the protocol.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from baselines.benchmark.run import BenchError, CellResult, agent_label, run_cells
from baselines.benchmark.scorecard import Scorecard, ScorecardError, make_scorecard, read_scorecard, write_scorecard
from baselines.benchmark.suite import LATEST, Suite, SuiteError, load_suite, quick_suite

__all__ = ["BenchError", "Scorecard", "ScorecardError", "Suite", "SuiteError", "bench", "load_suite",
           "read_scorecard"]


def bench(agent: Any, suite: str | Suite = LATEST, out: str | os.PathLike | None = None, workers: int = 1,
          backend: str = "local", quick: bool = False, on_cell: Callable[[CellResult], None] | None = None,
          ray_address: str | None = None) -> Scorecard:
    """The scorecard of `agent` on `suite` (a version such as "v1", or a loaded Suite).

    Args:
        agent: a policy spec text (``"td_lambda"``, ``"maskable_ppo@model.zip"``, an import path),
            a factory ``(num_players, highest_double, seed) -> Policy``, or a Policy (played only
            at the suite's tables of its own size and rules).
        out: a directory to keep the cells in (resumable) and write the scorecard into.
        workers: worker processes or Ray CPUs (spec texts only).
        backend: "local" (worker processes) or "ray" (Ray tasks); spec texts only.
        quick: two games per line-up (``dominoes bench --quick``): the headline in about a minute.
        on_cell: called with each cell's result as it finishes (a progress bar).
        ray_address: a Ray cluster to join with backend "ray" (None: a local instance).

    Raises:
        BenchError, SuiteError, ValueError: a bad agent, suite or output directory (one line).
    """
    loaded = suite if isinstance(suite, Suite) else load_suite(suite)
    if quick:
        loaded = quick_suite(loaded)
    results = run_cells(loaded, agent, out, workers=workers, backend=backend, ray_address=ray_address,
                        on_cell=on_cell)
    scorecard = make_scorecard(loaded, agent_label(agent), results)
    if out is not None:
        write_scorecard(scorecard, loaded, out)
    return scorecard
