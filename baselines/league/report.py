"""The ratings table, printed and written as Markdown and CSV, and the plot beside them."""

from __future__ import annotations

import csv
import io
import math
import os
from pathlib import Path

from baselines.league.ratings import ELO_K, ELO_START, ELO_TAIL_FRACTION, LeagueRatings
from dominoes_env import files

COLUMNS = ("policy", "elo", "elo_sd", "mu", "sigma", "ordinal", "mean_pips", "won", "games", "hands")
_FORMATS = {"elo": "{:.0f}", "elo_sd": "{:.0f}", "mu": "{:.2f}", "sigma": "{:.2f}", "ordinal": "{:.2f}",
            "mean_pips": "{:.2f}", "won": "{:.3f}"}
_HEADINGS = {"elo": "ELO", "elo_sd": "ELO sd", "mu": "mu", "sigma": "sigma", "ordinal": "ordinal",
             "mean_pips": "mean pips", "won": "won", "games": "games", "hands": "hands", "policy": "policy"}


def table_cells(ratings: LeagueRatings) -> list[list[str]]:
    """The table as text cells, one row per policy, best ELO first."""
    return [[_format(column, getattr(row, column)) for column in COLUMNS] for row in ratings.rows]


def text_table(ratings: LeagueRatings) -> str:
    """An aligned plain-text table for the terminal."""
    headings = [_HEADINGS[column] for column in COLUMNS]
    rows = [headings, *table_cells(ratings)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown_table(ratings: LeagueRatings, command: str | None = None) -> str:
    """ratings.md: what was played (and the command that plays it), the table, and what the
    columns mean."""
    spec = ratings.spec
    right = [i > 0 for i in range(len(COLUMNS))]
    header = "| " + " | ".join(_HEADINGS[c] for c in COLUMNS) + " |"
    rule = "|" + "|".join("---:" if r else "---" for r in right) + "|"
    body = ["| " + " | ".join(cells) + " |" for cells in table_cells(ratings)]
    return "\n".join([
        "# League ratings", "",
        f"{ratings.games} games: {spec.describe()}.", "",
        *([f"Command: `{command}`", ""] if command else []),
        header, rule, *body, "",
        f"- ELO: the original project's multiplayer ELO (adjacent players in each game's ranking, "
        f"k = {ELO_K:g}, start {ELO_START:g}), mean over a policy's copies, averaged over the last "
        f"{ELO_TAIL_FRACTION:.0%} of the games; ELO sd: the spread between its copies.",
        "- mu, sigma, ordinal: OpenSkill Plackett-Luce (ties as ties), mean over copies; ordinal = mu - 3 sigma.",
        "- mean pips: pips left per hand (lower is better); won: share of hands won (went out, or lowest "
        "when blocked); games, hands: played by all copies together.",
        "",
        *head_to_head_table(ratings),
        *entries_table(ratings),
    ])


def entries_table(ratings: LeagueRatings) -> list[str]:
    """Markdown lines: every copy's own ratings (copies of one policy should agree)."""
    columns = ("policy", "elo", "mu", "sigma", "mean_pips", "won", "games")
    lines = ["## Copies", "", "Each league entry's own ratings.", "",
             "| entry | " + " | ".join(_HEADINGS[c] for c in columns[1:]) + " |",
             "|---|" + "---:|" * (len(columns) - 1)]
    for row in ratings.entry_rows:
        lines.append("| " + " | ".join(_format(c, getattr(row, c)) for c in columns) + " |")
    return [*lines, ""]


def head_to_head_table(ratings: LeagueRatings) -> list[str]:
    """Markdown lines: how often the row policy beat the column policy at the same table."""
    order = [ratings.policies.index(row.policy) for row in ratings.rows]
    labels = [ratings.policies[i] for i in order]
    lines = ["## Head to head", "",
             "Share of games in which the row policy's game score was lower than the column policy's, "
             "over the games where copies of both sat at the same table (a tie counts half).", "",
             "| | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels)]
    for a in order:
        cells = ["" if a == b else _share(ratings.head_to_head[a, b]) for b in order]
        lines.append(f"| {ratings.policies[a]} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _share(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.1%}"


def csv_table(ratings: LeagueRatings) -> str:
    """ratings.csv: the same rows with full precision."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in ratings.rows:
        writer.writerow([getattr(row, column) for column in COLUMNS])
    return buffer.getvalue()


def write_report(ratings: LeagueRatings, out_dir: str | os.PathLike, command: str | None = None) -> list[Path]:
    """Write ratings.md, ratings.csv and ratings.png into `out_dir`; return their paths."""
    from baselines.league.plot import plot_ratings

    out = Path(out_dir)
    paths = [out / "ratings.md", out / "ratings.csv", out / "ratings.png"]
    files.write_atomically(paths[0], markdown_table(ratings, command).encode("utf-8"))
    files.write_atomically(paths[1], csv_table(ratings).encode("utf-8"))
    plot_ratings(ratings, paths[2])
    return paths


def _format(column: str, value: object) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "-"
    return _FORMATS.get(column, "{}").format(value)
