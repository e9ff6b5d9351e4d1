"""Ratings as a function of the recorded games: the original's multiplayer ELO, and OpenSkill.

Both rate each league entry (each copy of a policy) game by game in game order; a policy's
figure is the mean over its copies, as the original project reported it.

- **Multiplayer ELO** (the original project's): after each game every pair of players
  adjacent in the final ranking (lower game score is better) plays a virtual two-player
  game won by the better one: ``E = 1 / (1 + 10 ** ((R_worse - R_better) / 400))``,
  ``u = k * (S - E)`` with ``S = 1`` (``0.5`` for equal scores, a draw), ``R_better += u``,
  ``R_worse -= u``. All pairs use the ratings from before the game, so the ends of the
  ranking get one update and the middle players two. k = 32, start 1500. Equal scores
  are ordered by seat to form the pairs (the pair itself is a draw either way). The
  reported ``elo`` is the mean over copies, averaged over the last quarter of the games
  (the original reported "the mean of its copies' ratings over the last part of the run").
- **OpenSkill** (Plackett-Luce, package ``openskill``): each game is a free-for-all with
  ranks given by game scores, equal scores tie. ``mu``, ``sigma`` and ``ordinal``
  (``mu - 3 sigma``) are means over copies of the final ratings.

Alongside: ``mean_pips`` (pips left per hand), ``won`` (share of hands won: went out, or
lowest when the hand was blocked, a tie for lowest shared equally) and games played.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from baselines.harness.outcomes import hand_win_shares
from baselines.league.results import GameRecord
from baselines.league.spec import LeagueSpec

ELO_K = 32.0
ELO_START = 1500.0
ELO_TAIL_FRACTION = 0.25  # the reported ELO averages the last quarter of the run


@dataclass(frozen=True)
class PolicyRating:
    """One row of the ratings table (one policy, all its copies)."""

    policy: str
    elo: float
    elo_sd: float  # spread of the copies' ELO (identical players: the rating's noise)
    mu: float
    sigma: float
    ordinal: float
    mean_pips: float
    won: float
    games: int
    hands: int


@dataclass(frozen=True)
class LeagueRatings:
    """Ratings of a league after its recorded games.

    Attributes:
        spec: the league.
        rows: one per policy, best ELO first.
        entry_rows: one per league entry (``name#k``), in league order; ``elo_sd`` is 0.
        policies: policy labels in league order (the columns of the histories).
        elo_history: (games + 1, policies): mean ELO of each policy's copies, before the
            first game and after each game.
        mu_history, sigma_history: the same for OpenSkill's mu and sigma.
        head_to_head: (policies, policies): ``[a, b]`` is the share of games that copies
            of a and b played at one table in which a's game score was lower (a tie counts
            half); NaN where they never met. Copies of one policy are not compared.
        met: (policies, policies): how many such pairings there were.
    """

    spec: LeagueSpec
    rows: tuple[PolicyRating, ...]
    entry_rows: tuple[PolicyRating, ...]
    policies: tuple[str, ...]
    elo_history: np.ndarray
    mu_history: np.ndarray
    sigma_history: np.ndarray
    head_to_head: np.ndarray
    met: np.ndarray

    @property
    def games(self) -> int:
        return self.elo_history.shape[0] - 1


def finishing_order(totals: Sequence[int]) -> list[int]:
    """Seats from best (lowest score) to worst; equal scores keep seat order."""
    return sorted(range(len(totals)), key=lambda seat: (totals[seat], seat))


def elo_changes(ratings: Sequence[float] | np.ndarray, totals: Sequence[int], k: float = ELO_K) -> np.ndarray:
    """Rating change of each seat after one game (the original's adjacent-pairs rule).

    Args:
        ratings: each seat's rating before the game.
        totals: each seat's game score (lower is better).
        k: the ELO step.
    """
    changes = np.zeros(len(totals))
    order = finishing_order(totals)
    for better, worse in zip(order, order[1:]):
        expected = 1.0 / (1.0 + 10.0 ** ((ratings[worse] - ratings[better]) / 400.0))
        score = 0.5 if totals[better] == totals[worse] else 1.0
        update = k * (score - expected)
        changes[better] += update
        changes[worse] -= update
    return changes


def elo_history(num_entries: int, records: Sequence[GameRecord], k: float = ELO_K,
                start: float = ELO_START) -> np.ndarray:
    """Each entry's ELO before the first game and after each game: (games + 1, entries)."""
    history = np.empty((len(records) + 1, num_entries))
    ratings = np.full(num_entries, start)
    history[0] = ratings
    for row, record in enumerate(records, start=1):
        seats = list(record.seats)
        ratings[seats] += elo_changes(ratings[seats], record.totals, k)
        history[row] = ratings
    return history


def openskill_history(num_entries: int, records: Sequence[GameRecord]) -> tuple[np.ndarray, np.ndarray]:
    """Each entry's OpenSkill (Plackett-Luce) mu and sigma before and after each game."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating() for _ in range(num_entries)]
    mu = np.empty((len(records) + 1, num_entries))
    sigma = np.empty_like(mu)
    mu[0] = [r.mu for r in ratings]
    sigma[0] = [r.sigma for r in ratings]
    for row, record in enumerate(records, start=1):
        teams = model.rate([[ratings[entry]] for entry in record.seats], ranks=[float(t) for t in record.totals])
        for entry, (rating,) in zip(record.seats, teams):
            ratings[entry] = rating
        mu[row] = mu[row - 1]
        sigma[row] = sigma[row - 1]
        mu[row, list(record.seats)] = [ratings[entry].mu for entry in record.seats]
        sigma[row, list(record.seats)] = [ratings[entry].sigma for entry in record.seats]
    return mu, sigma


def hand_wins(record: GameRecord) -> np.ndarray:
    """Share of each hand won by each seat: (hands, seats), each row summing to 1."""
    return hand_win_shares(np.asarray(record.hand_scores), record.went_out)


def rate(spec: LeagueSpec, records: Sequence[GameRecord], k: float = ELO_K, start: float = ELO_START) -> LeagueRatings:
    """Rate the recorded games of `spec` (in game order) and build the tables."""
    records = sorted(records, key=lambda record: record.game)
    entries = spec.entries
    policies = spec.policy_labels
    copies_of = [np.flatnonzero([ref.label == label for ref in entries]) for label in policies]
    elo = elo_history(len(entries), records, k, start)
    mu, sigma = openskill_history(len(entries), records)
    totals = _EntryTotals(
        tail_elo=elo[-max(1, round(len(records) * ELO_TAIL_FRACTION)):].mean(axis=0),
        mu=mu[-1], sigma=sigma[-1], **_play_totals(len(entries), records),
    )
    rows = sorted((totals.row(label, copies) for label, copies in zip(policies, copies_of)), key=lambda r: -r.elo)
    entry_rows = tuple(totals.row(label, np.array([i])) for i, label in enumerate(spec.entry_labels))
    head_to_head, met = _head_to_head(policies, records)
    return LeagueRatings(
        spec=spec, rows=tuple(rows), entry_rows=entry_rows, policies=policies,
        elo_history=_by_policy(elo, copies_of), mu_history=_by_policy(mu, copies_of),
        sigma_history=_by_policy(sigma, copies_of), head_to_head=head_to_head, met=met,
    )


@dataclass(frozen=True)
class _EntryTotals:
    """Per league entry: reported ELO, final OpenSkill rating, and what it played."""

    tail_elo: np.ndarray
    mu: np.ndarray
    sigma: np.ndarray
    pips: np.ndarray
    won: np.ndarray
    games: np.ndarray
    hands: np.ndarray

    def row(self, label: str, copies: np.ndarray) -> PolicyRating:
        """The table row of a set of entries (all copies of a policy, or one entry)."""
        mu, sigma, hands = self.mu[copies].mean(), self.sigma[copies].mean(), int(self.hands[copies].sum())
        return PolicyRating(
            policy=label, elo=float(self.tail_elo[copies].mean()), elo_sd=float(self.tail_elo[copies].std()),
            mu=float(mu), sigma=float(sigma), ordinal=float(mu - 3 * sigma),
            mean_pips=float(self.pips[copies].sum() / hands) if hands else float("nan"),
            won=float(self.won[copies].sum() / hands) if hands else float("nan"),
            games=int(self.games[copies].sum()), hands=hands,
        )


def _head_to_head(policies: Sequence[str], records: Sequence[GameRecord]) -> tuple[np.ndarray, np.ndarray]:
    index = {label: i for i, label in enumerate(policies)}
    score, met = np.zeros((len(policies), len(policies))), np.zeros((len(policies), len(policies)))
    for record in records:
        for seat_a, label_a in enumerate(record.policies):
            for seat_b, label_b in enumerate(record.policies):
                a, b = index[label_a], index[label_b]
                if a != b:
                    met[a, b] += 1
                    score[a, b] += _pair_score(record.totals[seat_a], record.totals[seat_b])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(met > 0, score / np.maximum(met, 1), np.nan), met


def _pair_score(mine: int, theirs: int) -> float:
    return 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0


def _play_totals(num_entries: int, records: Sequence[GameRecord]) -> dict[str, np.ndarray]:
    """Per entry: pips left over all hands, hands won (shares), games and hands played."""
    pips, won, games, hands = (np.zeros(num_entries) for _ in range(4))
    for record in records:
        seats = list(record.seats)
        pips[seats] += record.totals
        won[seats] += hand_wins(record).sum(axis=0)
        games[seats] += 1
        hands[seats] += len(record.hand_scores)
    return {"pips": pips, "won": won, "games": games, "hands": hands}


def _by_policy(history: np.ndarray, copies_of: Sequence[np.ndarray]) -> np.ndarray:
    return np.stack([history[:, copies].mean(axis=1) for copies in copies_of], axis=1)
