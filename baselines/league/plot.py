"""ratings.png: each policy's rating over the games, and the final ratings with their uncertainty."""

from __future__ import annotations

import io
import os
from typing import Any

import numpy as np

from baselines.league.ratings import LeagueRatings
from dominoes_env import files


def import_plotting() -> Any:
    """matplotlib's pyplot on the Agg backend (files only: no display needed, safe in worker
    processes and CI). Importing it takes about 0.3 s, which a league spends while its workers
    play (:mod:`baselines.league.cli`), not after."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_ratings(ratings: LeagueRatings, path: str | os.PathLike) -> None:
    """Four panels: ELO and OpenSkill mu (band: ±1 sigma) over the games, and the final
    ratings as bars: ELO ± the spread between copies, OpenSkill mu ± 3 sigma."""
    plt = import_plotting()
    figure, axes = plt.subplots(2, 2, figsize=(13, 9))
    colors = {label: f"C{i}" for i, label in enumerate(ratings.policies)}
    _histories(axes[0, 0], axes[0, 1], ratings, colors)
    rows = ratings.rows
    _bars(axes[1, 0], rows, [row.elo for row in rows], [row.elo_sd for row in rows], colors,
          "Final ELO (± spread between copies)", "ELO")
    _bars(axes[1, 1], rows, [row.mu for row in rows], [3 * row.sigma for row in rows], colors,
          "Final OpenSkill mu (± 3 sigma)", "mu")
    spec = ratings.spec
    figure.suptitle(f"League of {ratings.games} games: {spec.num_players} players, double-{spec.highest_double}, "
                    f"{spec.hands_per_game} hands per game")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    files.write_atomically(path, buffer.getvalue())  # whole, and only over a regular file
    plt.close(figure)


def _histories(elo_axis, mu_axis, ratings: LeagueRatings, colors: dict[str, str]) -> None:
    games = np.arange(ratings.games + 1)
    for column, label in enumerate(ratings.policies):
        elo_axis.plot(games, ratings.elo_history[:, column], color=colors[label], label=label, linewidth=1)
        mu, sigma = ratings.mu_history[:, column], ratings.sigma_history[:, column]
        mu_axis.plot(games, mu, color=colors[label], label=label, linewidth=1)
        mu_axis.fill_between(games, mu - sigma, mu + sigma, color=colors[label], alpha=0.15, linewidth=0)
    elo_axis.set(title="Multiplayer ELO over games (mean of copies)", xlabel="games", ylabel="ELO")
    mu_axis.set(title="OpenSkill mu over games (band: ±1 sigma)", xlabel="games", ylabel="mu")
    elo_axis.legend(fontsize="small")


def _bars(axis, rows, values: list[float], errors: list[float], colors: dict[str, str], title: str,
          label: str) -> None:
    positions = np.arange(len(rows))
    axis.bar(positions, values, yerr=errors, capsize=5, color=[colors[row.policy] for row in rows])
    axis.set_xticks(positions, [row.policy for row in rows], rotation=15, ha="right")
    low = min(v - e for v, e in zip(values, errors))
    high = max(v + e for v, e in zip(values, errors))
    margin = 0.1 * (high - low) or 1.0
    axis.set_ylim(low - margin, high + margin)
    axis.set(title=title, ylabel=label)
