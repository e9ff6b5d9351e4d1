"""The bench's headline rating: an ELO on a scale fixed by a frozen reference pool.

The outcome of one game between the agent and one opponent at its table is 1 when the agent
ended the game with fewer pips, 0.5 on a tie and 0 otherwise; a game against three opponents
gives three outcomes. Under the ELO model the agent beats an opponent rated R_o with
probability ``1 / (1 + 10 ** ((R_o - R) / 400))``. :func:`anchored_rating` finds the R that
makes the agent's outcomes most likely with every opponent's rating held at its frozen value
(the suite's reference pool), so a rating means the same in every run, on every machine and
in every paper that uses the same suite version. Its 95% interval comes from the curvature of
the likelihood with the outcomes of one game counted together (a sandwich estimate: the three
outcomes of a game share its deal, so they are not independent).

:func:`pool_ratings` makes the frozen scale itself: every pool player's outcomes against the
others, fitted jointly (Bradley-Terry in ELO units), with random anchored at 1000.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

ELO_SCALE = 400.0
ANCHOR = ("random", 1000.0)
_K = math.log(10.0) / ELO_SCALE


@dataclass(frozen=True)
class Outcome:
    """The outcomes of one game against one opponent kind: `score` summed over its seats (1 a win,
    0.5 a tie) out of `count` comparisons; `game` groups the comparisons of one game."""

    opponent: str
    game: str
    score: float
    count: int


@dataclass(frozen=True)
class Rating:
    """A rating on the suite's scale with the half-width of its 95% interval."""

    value: float
    ci95: float
    games: int

    def __str__(self) -> str:
        return f"{self.value:.0f} ± {self.ci95:.0f}"


def anchored_rating(outcomes: Sequence[Outcome], pool: Mapping[str, float]) -> Rating:
    """The rating whose predictions best match `outcomes` against opponents rated as in `pool`.

    Outcomes against players outside the pool are left out. With no outcome left the rating is
    undefined (ValueError); an agent that won or lost every comparison is placed 400 points
    beyond its strongest (weakest) opponent, with an infinite interval.
    """
    used = [outcome for outcome in outcomes if outcome.opponent in pool]
    if not used:
        raise ValueError("no game against a player of the reference pool")
    ratings = np.array([pool[outcome.opponent] for outcome in used])
    scores = np.array([outcome.score for outcome in used])
    counts = np.array([outcome.count for outcome in used], dtype=np.float64)
    games = len({outcome.game for outcome in used})
    if scores.sum() <= 0 or scores.sum() >= counts.sum():
        value = ratings.max() + ELO_SCALE if scores.sum() > 0 else ratings.min() - ELO_SCALE
        return Rating(float(value), math.inf, games)
    value = float(np.average(ratings, weights=counts))
    for _ in range(100):  # Newton's method on a concave log-likelihood
        expected = 1.0 / (1.0 + 10.0 ** ((ratings - value) / ELO_SCALE))
        gradient = _K * float((scores - counts * expected).sum())
        curvature = _K * _K * float((counts * expected * (1 - expected)).sum())
        step = gradient / curvature
        value += max(-200.0, min(200.0, step))
        if abs(step) < 1e-9:
            break
    expected = 1.0 / (1.0 + 10.0 ** ((ratings - value) / ELO_SCALE))
    information = _K * _K * float((counts * expected * (1 - expected)).sum())
    by_game: dict[str, float] = {}
    for outcome, residual in zip(used, scores - counts * expected):
        by_game[outcome.game] = by_game.get(outcome.game, 0.0) + _K * float(residual)
    variance = sum(value * value for value in by_game.values()) / information ** 2
    return Rating(value, 1.959964 * math.sqrt(variance), games)


def pool_ratings(results: Mapping[str, Iterable[Outcome]], anchor: tuple[str, float] = ANCHOR) -> dict[str, float]:
    """The frozen scale: ratings of the pool players such that each one's anchored rating against
    the others (:func:`anchored_rating` of its own outcomes, `results[player]`) is its rating, with
    `anchor`'s player held at its value.

    A joint fit of every pair's games (Bradley-Terry) would count a game of X against three Ys
    and one of Y against three Xs alike; the bench only ever rates an agent from its own seat,
    so the scale is made the same way: benched against the frozen pool on the full suite, every
    reference player gets back its frozen rating. Found by iterating every player's anchored fit
    to a fixed point (the equations only fix the ratings up to a constant, so each step shifts
    them to put the anchor at its value).

    Raises:
        ValueError: the anchor is not among the players.
    """
    players = sorted(results)
    if anchor[0] not in players:
        raise ValueError(f"the anchor {anchor[0]!r} is not in the pool {players}")
    outcomes = {player: list(found) for player, found in results.items()}
    ratings = dict.fromkeys(players, anchor[1])
    for _ in range(5000):
        updated = {player: anchored_rating(outcomes[player], ratings).value for player in players}
        shift = anchor[1] - updated[anchor[0]]  # the scale is only fixed up to a constant: pin the anchor
        updated = {player: value + shift for player, value in updated.items()}
        moved = max(abs(updated[player] - ratings[player]) for player in players)
        ratings = updated
        if moved < 1e-7:
            break
    return {name: round(float(ratings[name]), 1) for name in players}
