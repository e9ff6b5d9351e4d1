"""The scorecard: what ``dominoes bench`` writes (JSON, Markdown, a plot), and reading it back.

``scorecard.json`` (format ``dominoes-bench-scorecard/1``) holds, at the top level:

- ``suite``: the suite version it was measured on; ``package_version``: the dominoes-env that made it;
  ``agent``: the agent's spec;
- ``rating``: the headline, ``{"value", "ci95", "games"}``: the anchored ELO
  (:mod:`baselines.benchmark.rating`) with the half-width of its 95% interval;
- ``normalised``: the mean of the cells' normalised scores;
- ``skipped``: the suite's tables the agent could not play (weights for another table);
- ``cells``: one object per table and line-up: ``table``, ``line_up``, ``opponents``, ``hands``,
  ``games``, ``agent_pips`` and ``opponent_pips`` (mean pips per hand), ``difference`` (the
  first minus the second over the same hands) and its ``ci95``, ``hands_won``, ``games_won``,
  ``normalised``, and ``per_deal`` (the difference per deal, so two scorecards of one suite
  compare deal by deal).

The normalised score of a cell reads like Atari's human-normalised score:
``100 * (random - agent) / (random - best)``, where ``agent`` is the agent's paired difference
there, ``random`` that of a random player in the same seats on the same deals, and ``best``
that of the best shipped player there (both frozen in the suite): 0 plays like random, 100 like
the best shipped player, above 100 better than it.

The file is written with sorted keys and rounded numbers and holds no time, so the same agent
and suite give the same file byte for byte. :func:`read_scorecard` checks every field.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from baselines.benchmark.rating import Rating, anchored_rating
from baselines.benchmark.run import CellResult
from baselines.benchmark.suite import Suite, cell_name, read_checked
from baselines.harness.statistics import ci95_half_width, signed
from dominoes_env import files
from dominoes_env.core.config import describe_table

FORMAT = "dominoes-bench-scorecard/1"
MAX_SCORECARD_BYTES = 64 << 20
CELL_KEYS = ("table", "line_up", "opponents", "hands", "games", "agent_pips", "opponent_pips", "difference", "ci95",
             "hands_won", "games_won", "normalised", "per_deal")


class ScorecardError(ValueError):
    """A scorecard file that cannot be read (one line says what is wrong)."""


@dataclass(frozen=True)
class Scorecard:
    """A scorecard in memory (see the module docstring for the fields)."""

    suite: str
    package_version: str
    agent: str
    rating: Rating | None
    normalised: float | None
    cells: tuple[dict[str, Any], ...]
    skipped: tuple[str, ...] = ()  # the suite's tables the agent cannot play (a checkpoint of another table)

    def to_dict(self) -> dict[str, Any]:
        rating = None if self.rating is None else {"value": _round(self.rating.value), "ci95": _round(self.rating.ci95),
                                                    "games": self.rating.games}
        return {"format": FORMAT, "suite": self.suite, "package_version": self.package_version, "agent": self.agent,
                "rating": rating, "normalised": None if self.normalised is None else _round(self.normalised),
                "cells": list(self.cells), "skipped": list(self.skipped)}

    def headline(self) -> str:
        rating = "no rating (the suite is not calibrated)" if self.rating is None else \
            f"rating {self.rating} (95% interval)"
        normalised = "" if self.normalised is None else f", normalised score {self.normalised:.0f}"
        # An agent of one table is rated on that table's cells only: say so, so that its rating is not
        # read as one over the whole suite.
        only = f", at {', '.join(dict.fromkeys(cell['table'] for cell in self.cells))} only" if self.skipped else ""
        return f"{self.agent} on dominoes-bench {self.suite}: {rating}{normalised}{only}"


def _round(value: float) -> float:
    return value if math.isinf(value) else round(float(value), 4)


def normalised_to(card: Scorecard, top: Scorecard, suite: Suite) -> float | None:
    """`card`'s normalised score with `top`'s results in place of the best shipped player's: per
    cell both played, ``100 * (random - card) / (random - top)`` (random: the suite's frozen
    reference), averaged. The leaderboard scales every player this way to the oracle, which sees
    every hand: 100 is all a player could take with the hidden tiles shown. None where no cell
    is shared (or the suite has no random reference)."""
    top_differences = {f"{cell['table']}/{cell['line_up']}": cell["difference"] for cell in top.cells}
    scores = []
    for cell in card.cells:
        name = f"{cell['table']}/{cell['line_up']}"
        random = suite.reference.random.get(name) if suite.reference.random else None
        if random is None or name not in top_differences or random - top_differences[name] <= 1e-9:
            continue
        scores.append(100.0 * (random - cell["difference"]) / (random - top_differences[name]))
    return float(np.mean(scores)) if scores else None


def make_scorecard(suite: Suite, agent: str, results: list[CellResult]) -> Scorecard:
    """The scorecard of `results` (the agent's cells of `suite`)."""
    from dominoes_env import __version__

    by_cell = {result.cell: result for result in results}
    cells = []
    scores = []
    for table, line_up in suite.cells():
        name = cell_name(table, line_up)
        if name not in by_cell:
            continue
        result = by_cell[name]
        normalised = None
        if suite.reference.random and name in suite.reference.random:
            random, best = suite.reference.random[name], suite.reference.best[name][1]
            if random - best > 1e-9:
                normalised = 100.0 * (random - result.difference) / (random - best)
                scores.append(normalised)
        cells.append({"table": table.name, "line_up": line_up.name, "opponents": line_up.seats(table.config),
                      "hands": result.hands, "games": result.games, "agent_pips": _round(result.agent_pips),
                      "opponent_pips": _round(result.opponent_pips), "difference": _round(result.difference),
                      "ci95": _round(result.ci95), "hands_won": _round(result.hands_won),
                      "games_won": _round(result.games_won),
                      "normalised": None if normalised is None else _round(normalised),
                      "per_deal": [_round(value) for value in result.per_deal]})
    rating = None
    if suite.reference.calibrated:
        try:
            rating = anchored_rating([o for result in results for o in result.outcomes], suite.reference.pool)
        except ValueError:
            rating = None
    played = {cell["table"] for cell in cells}
    return Scorecard(suite.version, __version__, agent, rating, float(np.mean(scores)) if scores else None,
                     tuple(cells), tuple(table.name for table in suite.tables if table.name not in played))


def write_scorecard(scorecard: Scorecard, suite: Suite, out_dir: str | os.PathLike) -> list[Path]:
    """``scorecard.json`` and ``scorecard.md`` (and ``scorecard.png`` when matplotlib is installed)."""
    directory = Path(out_dir)
    written = [files.write_atomically(directory / "scorecard.json",
                                      (json.dumps(scorecard.to_dict(), sort_keys=True, indent=1) + "\n").encode()),
               files.write_atomically(directory / "scorecard.md", markdown(scorecard, suite).encode())]
    try:
        from baselines.benchmark.plot import plot_scorecard
    except ImportError:
        return written
    written.append(plot_scorecard(scorecard, suite, directory / "scorecard.png"))
    return written


def markdown(scorecard: Scorecard, suite: Suite) -> str:
    """The scorecard as Markdown: the headline, then one table per table of the suite."""
    lines = [f"# {scorecard.agent} on dominoes-bench {scorecard.suite}", "",
             f"{scorecard.headline()}.", "",
             f"Made by dominoes-env {scorecard.package_version}. Pips per hand left (lower is better); the "
             f"difference is the agent's minus its opponents' over the same hands, with its 95% interval; "
             f"normalised: 0 = a random player's result on the same deals, 100 = the best shipped player's.", ""]
    if scorecard.skipped:
        lines += [f"Not played (the agent cannot play these tables): {', '.join(scorecard.skipped)}.", ""]
    tables = {table.name: table for table in suite.tables}
    for name in dict.fromkeys(cell["table"] for cell in scorecard.cells):
        lines += [f"## {describe_table(tables[name].config)}" if name in tables else f"## {name}", "",
                  "| line-up | hands | agent | opponents | difference | hands won | games won | normalised |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for cell in scorecard.cells:
            if cell["table"] != name:
                continue
            normalised = "" if cell["normalised"] is None else f"{cell['normalised']:.0f}"
            lines.append(f"| {cell['line_up']} | {cell['hands']} | {cell['agent_pips']:.2f} | "
                         f"{cell['opponent_pips']:.2f} | {signed(cell['difference'])} ± {cell['ci95']:.2f} | "
                         f"{100 * cell['hands_won']:.1f}% | {100 * cell['games_won']:.1f}% | {normalised} |")
        lines.append("")
    return "\n".join(lines)


def read_scorecard(path: str | os.PathLike) -> Scorecard:
    """A scorecard file, every field checked.

    Raises:
        ScorecardError: the file is missing, not JSON, not a scorecard, or a field is damaged.
    """
    return read_checked(path, MAX_SCORECARD_BYTES, _scorecard_from_dict, ScorecardError, "scorecard", "is damaged")


def _scorecard_from_dict(content: Any) -> Scorecard:
    if not isinstance(content, dict) or content.get("format") != FORMAT:
        raise ValueError(f"format must be {FORMAT!r}")
    for key in ("suite", "package_version", "agent"):
        if not isinstance(content[key], str):
            raise ValueError(f"{key} must be a string")
    rating = content["rating"]
    if rating is not None:
        rating = Rating(_number("rating.value", rating["value"]), _number("rating.ci95", rating["ci95"], True),
                        int(rating["games"]))
    normalised = content["normalised"]
    if normalised is not None:
        normalised = _number("normalised", normalised)
    cells = content["cells"]
    if not isinstance(cells, list):
        raise ValueError("cells must be a list")
    for cell in cells:
        if not isinstance(cell, dict) or set(cell) != set(CELL_KEYS):
            raise ValueError(f"each cell must have exactly the fields {list(CELL_KEYS)}")
        for key in ("agent_pips", "opponent_pips", "difference", "ci95", "hands_won", "games_won"):
            _number(f"{cell.get('line_up')}.{key}", cell[key])
        if not (isinstance(cell["per_deal"], list) and all(isinstance(v, (int, float)) for v in cell["per_deal"])):
            raise ValueError("per_deal must be a list of numbers")
    skipped = content["skipped"]
    if not (isinstance(skipped, list) and all(isinstance(name, str) for name in skipped)):
        raise ValueError("skipped must be a list of table names")
    return Scorecard(content["suite"], content["package_version"], content["agent"], rating, normalised, tuple(cells),
                     tuple(skipped))


def _number(what: str, value: Any, infinite: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or \
            (math.isinf(value) and not infinite):
        raise ValueError(f"{what} must be a number, got {value!r}")
    return float(value)


def compare(scorecards: list[Scorecard]) -> str:
    """Scorecards side by side (Markdown): the headlines, then each cell's difference per scorecard and,
    where two scorecards of one suite version played the same deals, the paired difference of the
    later ones from the first, with its 95% interval."""
    first = scorecards[0]
    lines = ["| agent | suite | rating | normalised |", "|---|---|---:|---:|"]
    for card in scorecards:
        rating = "" if card.rating is None else str(card.rating)
        normalised = "" if card.normalised is None else f"{card.normalised:.0f}"
        lines.append(f"| {card.agent} | {card.suite} | {rating} | {normalised} |")
    header = "| table | line-up | " + " | ".join(card.agent for card in scorecards) + " | " + \
        " | ".join(f"{card.agent} - {first.agent}" for card in scorecards[1:]) + " |"
    lines += ["", header, "|---|---|" + "---:|" * (2 * len(scorecards) - 1)]
    keyed = [{(cell["table"], cell["line_up"]): cell for cell in card.cells} for card in scorecards]
    for key in dict.fromkeys(key for cells in keyed for key in cells):
        values = [signed(cells[key]['difference']) if key in cells else "" for cells in keyed]
        paired = []
        for card, cells in zip(scorecards[1:], keyed[1:]):
            base = keyed[0].get(key)
            if key in cells and base is not None and card.suite == first.suite and \
                    len(cells[key]["per_deal"]) == len(base["per_deal"]):
                gaps = np.array(cells[key]["per_deal"]) - np.array(base["per_deal"])
                paired.append(f"{signed(gaps.mean())} ± {ci95_half_width(gaps):.2f}")
            else:
                paired.append("")
        lines.append(f"| {key[0]} | {key[1]} | " + " | ".join(values + paired) + " |")
    return "\n".join(lines)
