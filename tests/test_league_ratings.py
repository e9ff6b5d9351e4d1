"""Ratings on synthetic results: ELO by hand, OpenSkill ties, dominance, identical copies."""

from __future__ import annotations

import numpy as np
import pytest

from baselines.league.ratings import elo_changes, elo_history, hand_wins, openskill_history, rate
from baselines.league.results import GameRecord
from baselines.league.spec import LeagueSpec
from baselines.policies.specs import PolicySpec
from dominoes_env import make_config


def expected(r_better: float, r_worse: float) -> float:
    return 1 / (1 + 10 ** ((r_worse - r_better) / 400))


def record(game: int, seats, totals, policies=None, went_out=None) -> GameRecord:
    """A one-hand game whose hand score is the total."""
    return GameRecord(game=game, seed=0, seats=tuple(seats), policies=tuple(policies or ["p"] * len(seats)),
                      hand_scores=(tuple(totals),), totals=tuple(totals),
                      went_out=(went_out,))


def spec_of(*policies: tuple[str, int], players: int = 4) -> LeagueSpec:
    return LeagueSpec(tuple((PolicySpec(name), copies) for name, copies in policies), make_config(players, 9), 1, 0)


def synthetic_league(spec: LeagueSpec, games: int, score_of, seed: int = 0) -> list[GameRecord]:
    """Games between random tables of `spec`'s entries; score_of(label, rng) draws a game score."""
    rng = np.random.default_rng(seed)
    entries = spec.entries
    records = []
    for game in range(games):
        seats = rng.choice(len(entries), spec.num_players, replace=False)
        labels = [entries[e].label for e in seats]
        totals = [int(score_of(label, rng)) for label in labels]
        lowest = [s for s, t in enumerate(totals) if t == min(totals)]
        records.append(record(game, seats, totals, labels, lowest[0] if len(lowest) == 1 else None))
    return records


def test_elo_update_of_a_three_player_game_matches_a_hand_computation():
    # Seat 2 wins (10), seat 0 second (20), seat 1 last (35); ratings before the game:
    ratings = [1600.0, 1450.0, 1500.0]
    u_top = 32 * (1 - expected(1500, 1600))   # seat 2 beats seat 0
    u_bottom = 32 * (1 - expected(1600, 1450))  # seat 0 beats seat 1, with pre-game ratings
    changes = elo_changes(ratings, [20, 35, 10])
    assert changes == pytest.approx([-u_top + u_bottom, -u_bottom, u_top])
    assert u_top == pytest.approx(20.4820, abs=1e-3)  # 32 * (1 - 1 / (1 + 10 ** 0.25))
    assert u_bottom == pytest.approx(9.4917, abs=1e-3)  # 32 * (1 - 1 / (1 + 10 ** -0.375))


def test_elo_uses_pre_game_ratings_for_every_pair_and_conserves_the_total():
    ratings = [1500.0, 1500.0, 1500.0, 1500.0]
    changes = elo_changes(ratings, [3, 1, 2, 4])
    # Equal ratings: every adjacent pair moves 16; the middle players gain and lose 16.
    assert changes == pytest.approx([-16 + 16, 16, -16 + 16, -16])
    assert changes.sum() == pytest.approx(0)


def test_equal_scores_are_a_draw_in_elo():
    assert elo_changes([1500.0, 1500.0], [7, 7]) == pytest.approx([0, 0])
    draw = elo_changes([1700.0, 1500.0], [7, 7])
    assert draw[0] == pytest.approx(32 * (0.5 - expected(1700, 1500)))  # the favourite loses points
    assert draw[0] < 0 < draw[1]
    # Seat order does not matter for a drawn pair.
    assert elo_changes([1500.0, 1700.0], [7, 7]) == pytest.approx(draw[::-1])


def test_ties_are_ties_in_openskill():
    records = [record(0, [0, 1, 2, 3], [5, 5, 5, 5]), record(1, [0, 1, 2, 3], [1, 9, 9, 20])]
    mu, sigma = openskill_history(4, records)
    assert mu[1] == pytest.approx([25.0] * 4)  # a four-way tie teaches no order
    assert sigma[1, 0] < sigma[0, 0]  # but it is information
    assert mu[2, 1] == pytest.approx(mu[2, 2]) and sigma[2, 1] == pytest.approx(sigma[2, 2])
    assert mu[2, 0] > mu[2, 1] > mu[2, 3]


def test_a_dominant_policy_rises_and_weak_ones_fall():
    spec = spec_of(("strong", 3), ("medium", 3), ("weak", 3))
    means = {"strong": 40, "medium": 80, "weak": 120}
    records = synthetic_league(spec, 600, lambda label, rng: rng.normal(means[label], 25))
    ratings = rate(spec, records)
    assert [row.policy for row in ratings.rows] == ["strong", "medium", "weak"]
    elo = {row.policy: row.elo for row in ratings.rows}
    assert elo["strong"] > 1600 > 1400 > elo["weak"]
    rows = {row.policy: row for row in ratings.rows}
    assert rows["strong"].mu > rows["medium"].mu > rows["weak"].mu
    assert rows["strong"].ordinal > rows["medium"].ordinal > rows["weak"].ordinal
    assert ratings.elo_history[-1, 0] > ratings.elo_history[0, 0] == 1500


def test_identical_policies_stay_together():
    spec = spec_of(("twin_a", 4), ("twin_b", 4), ("weak", 4))
    means = {"twin_a": 50, "twin_b": 50, "weak": 90}
    ratings = rate(spec, synthetic_league(spec, 1500, lambda label, rng: rng.normal(means[label], 30), seed=1))
    rows = {row.policy: row for row in ratings.rows}
    assert abs(rows["twin_a"].elo - rows["twin_b"].elo) < 40
    assert rows["twin_a"].elo - rows["weak"].elo > 150
    assert abs(rows["twin_a"].mu - rows["twin_b"].mu) < 2 * (rows["twin_a"].sigma + rows["twin_b"].sigma)


def test_mean_pips_share_won_and_games_are_counted_per_policy():
    spec = spec_of(("a", 1), ("b", 1), players=2)
    game = GameRecord(game=0, seed=0, seats=(1, 0), policies=("b", "a"),
                      hand_scores=((0, 12), (5, 5), (3, 0)), totals=(8, 17), went_out=(0, None, 1))
    rows = {row.policy: row for row in rate(spec, [game]).rows}
    # b sat in seat 0: pips 0 + 5 + 3 over 3 hands; won hand 0 and half of the blocked tie.
    assert rows["b"].mean_pips == pytest.approx(8 / 3) and rows["a"].mean_pips == pytest.approx(17 / 3)
    assert rows["b"].won == pytest.approx(1.5 / 3) and rows["a"].won == pytest.approx(1.5 / 3)
    assert rows["a"].games == rows["b"].games == 1 and rows["a"].hands == 3


def test_going_out_wins_the_hand_even_against_a_zero_pip_hand():
    # Seat 1 holds only (0|0): zero pips but it did not go out.
    game = GameRecord(0, 0, (0, 1), ("a", "b"), ((0, 0),), (0, 0), (0,))
    assert hand_wins(game).tolist() == [[1.0, 0.0]]


def test_elo_history_only_moves_the_players_at_the_table():
    history = elo_history(6, [record(0, [4, 1, 5, 0], [1, 2, 3, 4])])
    assert history[1, [2, 3]].tolist() == [1500, 1500]
    assert history[1, 4] > 1500 > history[1, 0]


def test_head_to_head_counts_games_at_the_same_table_with_ties_as_half():
    spec = spec_of(("a", 2), ("b", 1), ("c", 1), players=3)
    records = [
        GameRecord(0, 0, (0, 1, 2), ("a", "a", "b"), ((5, 9, 7),), (5, 9, 7), (None,)),
        GameRecord(1, 0, (3, 2, 0), ("c", "b", "a"), ((4, 4, 1),), (4, 4, 1), (None,)),
    ]
    ratings = rate(spec, records)
    a, b, c = (ratings.policies.index(p) for p in "abc")
    # a vs b: game 0 has two copies of a against b (one wins, one loses), game 1 a wins.
    assert ratings.met[a, b] == 3 and ratings.head_to_head[a, b] == pytest.approx(2 / 3)
    assert ratings.head_to_head[b, a] == pytest.approx(1 / 3)
    assert ratings.head_to_head[b, c] == pytest.approx(0.5) and ratings.met[b, c] == 1  # a tie
    assert np.isnan(ratings.head_to_head[a, a])


def test_a_policy_row_aggregates_its_copies_as_their_mean():
    spec = spec_of(("a", 3), ("b", 2), players=3)
    records = synthetic_league(spec, 200, lambda label, rng: rng.normal(50 if label == "a" else 60, 20), seed=2)
    ratings = rate(spec, records)
    assert [row.policy for row in ratings.entry_rows] == ["a#0", "a#1", "a#2", "b#0", "b#1"]
    for row in ratings.rows:
        copies = [entry for entry in ratings.entry_rows if entry.policy.startswith(row.policy + "#")]
        assert row.elo == pytest.approx(np.mean([c.elo for c in copies]))
        assert row.mu == pytest.approx(np.mean([c.mu for c in copies]))
        assert row.sigma == pytest.approx(np.mean([c.sigma for c in copies]))
        assert row.games == sum(c.games for c in copies)
