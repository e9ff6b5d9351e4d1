"""The evaluation harness: seat rotation over the same deals, the statistics, specs, and the command line."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from baselines import evaluate, make_policy
from baselines.cli import main as dominoes
from baselines.harness.evaluate import MAX_HANDS
from baselines.harness.seating import deals_needed, fair_tables, rotate
from baselines.harness.statistics import t_quantile_975
from baselines.policies.handcrafted import BestLinePolicy, GreedyPolicy
from baselines.policies.specs import PolicySpec, parse

FOUR = ["greedy", "random", "double", "stupid"]


@pytest.fixture(scope="module")
def four() -> object:
    return evaluate(FOUR, num_hands=80, seed=3)


def test_same_seed_same_result_and_another_seed_other_deals(four):
    again = evaluate(FOUR, num_hands=80, seed=3)
    assert np.array_equal(again.scores, four.scores) and again.policies == four.policies
    other = evaluate(FOUR, num_hands=80, seed=4)
    assert not np.array_equal(other.scores, four.scores)


def test_each_policy_sits_in_each_seat_equally_often(four):
    assert four.num_hands == 80
    for policy in four.policies:
        assert policy.seat_hands == (20, 20, 20, 20) and policy.hands == 80
    # every hand seats all four, and each deal is played under the 4 rotations of the table
    orders = set()
    for deal in np.unique(four.deal):
        seating = four.seating[four.deal == deal]
        assert [list(rotate(seating[0], r)) for r in range(4)] == seating.tolist()
        orders.add(tuple(np.roll(seating[0], -seating[0].tolist().index(0))))
    assert len(orders) > 1  # who sits after whom changes from deal to deal


def test_rotations_replay_the_same_deal():
    # Four deterministic, identical players: a rotation cannot change anything at the table.
    result = evaluate(["greedy"] * 4, num_hands=40, seed=0)
    assert len(result.policies) == 1 and result.policies[0].hands == 160
    for deal in np.unique(result.deal):
        scores = result.scores[result.deal == deal]
        assert (scores == scores[0]).all()
    assert len({tuple(result.scores[result.deal == d][0]) for d in np.unique(result.deal)}) > 1


def test_more_policies_than_seats_take_turns_evenly():
    names = ["persistent_line", "best_line", "double", "greedy", "random", "stupid"]
    result = evaluate(names, num_hands=50, seed=1)
    # 13 deals needed, rounded up to 15 so that each of the 6 sits at 10 of the tables
    assert result.num_hands == 60
    for policy in result.policies:
        assert policy.hands == 40 and policy.seat_hands == (10, 10, 10, 10)
    assert all(len(set(row)) == 4 for row in result.seating)


def test_statistics_agree_with_a_direct_count(four):
    n = four.num_players
    for index, policy in enumerate(four.policies):
        pips, won, went = [], 0.0, 0
        for scores, seating, out in zip(four.scores, four.seating, four.went_out):
            for seat in range(n):
                if seating[seat] != index:
                    continue
                pips.append(scores[seat])
                if out >= 0:
                    won += out == seat
                    went += out == seat
                elif scores[seat] == scores.min():
                    won += 1 / list(scores).count(scores.min())
        assert policy.mean_pips == pytest.approx(np.mean(pips))
        assert policy.won == pytest.approx(won / len(pips)) and policy.went_out == pytest.approx(went / len(pips))
        assert 0 < policy.ci95 < 10
    # the hand's winner credits add up to one per hand
    assert sum(p.won * p.hands for p in four.policies) == pytest.approx(four.num_hands)


def test_head_to_head_is_a_share_of_shared_hands(four):
    a, b = four.labels.index("greedy"), four.labels.index("stupid")
    rows = [(s[list(seat).index(a)], s[list(seat).index(b)]) for s, seat in zip(four.scores, four.seating)]
    lower = sum(x < y for x, y in rows) / len(rows)
    ties = sum(x == y for x, y in rows) / len(rows)
    assert four.head_to_head[a, b] == pytest.approx(lower)
    assert four.head_to_head[a, b] + four.head_to_head[b, a] + four.head_to_head_ties[a, b] == pytest.approx(1)
    assert four.head_to_head_ties[a, b] == pytest.approx(ties)
    assert math.isnan(four.head_to_head[a, a])


def test_policies_given_by_name_params_factory_or_object():
    specs = [("best_line", {"max_line_length": 6}), GreedyPolicy, make_policy("double", 4, 9, seed=0),
             parse("random")[0], "stupid:2"]
    result = evaluate(specs, num_hands=8, seed=0)
    assert result.labels == ("best_line(max_line_length=6)", "greedy", "double", "random", "stupid")
    assert "| best_line(max_line_length=6) |" in result.table()
    assert result["stupid"].hands == 2 * result["random"].hands  # a spec text with copies


class MyGreedy(GreedyPolicy):
    """A user's subclass: never confused with the registered greedy."""


class MyRandom(GreedyPolicy):
    pass


def test_different_policies_are_never_merged_into_one_row():
    # Two unregistered classes, and two differently built objects of one class, are four rows.
    entries = [MyGreedy(), MyRandom(), BestLinePolicy(4, 9, 0, 6), BestLinePolicy(max_line_length=8), "greedy"]
    result = evaluate(entries, num_hands=10, seed=0)
    assert result.labels == (f"{__name__}.MyGreedy", f"{__name__}.MyRandom", "best_line(max_line_length=6)",
                             "best_line(max_line_length=8)", "greedy")
    # Built the same way in Python and on the command line, a policy has one label.
    assert make_policy("best_line", max_line_length=6).label == parse("best_line(max_line_length=6)")[0].label


@pytest.mark.parametrize("specs, message", [
    (["greedy", "random"], "4 seats need at least 4 policies"),
    (["greedy", "random", "double", "nonsense"], "unknown policy 'nonsense'"),
    ([("greedy", {"depth": 3}), "random", "double", "stupid"], "has no parameter"),
    ([make_policy("greedy", 3, 9), "random", "double", "stupid"], "built for 3 players"),
    ([42, "random", "double", "stupid"], "cannot evaluate 42"),
    (["random(seed=5)", "random", "double", "stupid"], "seed cannot be set per policy"),
    (["random:100000000000"], "copies .* from 1 to 1000"),
    (["best_line(max_line_length=10**12)", "random:3"], "max_line_length"),
    (["best_line(max_line_length=1000000000000)", "random:3"], "max_line_length must be an integer from 1 to 55"),
])
def test_bad_policies_are_clear_errors(specs, message):
    with pytest.raises(ValueError, match=message):
        evaluate(specs, num_hands=4)


def test_one_policy_object_cannot_take_two_seats():
    player = make_policy("greedy")
    with pytest.raises(ValueError, match="listed twice"):
        evaluate([player, player, "random", "double"], num_hands=4)


def test_policy_arguments_of_the_command_line():
    assert parse("random:3") == (PolicySpec("random"), 3)
    assert parse("best_line(max_line_length=6, in_line_discount=0.8)") == (
        PolicySpec.of("best_line", {"max_line_length": 6, "in_line_discount": 0.8}), 1)
    assert parse("td_lambda@ckpt/a.safetensors:2") == (
        PolicySpec.of("td_lambda", {"checkpoint": "ckpt/a.safetensors"}), 2)
    assert parse("td_lambda(checkpoint=runs/a.safetensors)")[0].label == "td_lambda@runs/a.safetensors"
    assert parse("td_lambda(epsilon=x)")[0].kwargs == {"epsilon": "x"}  # a bare word is a string
    for bad in ("random:0", "best_line(6)", "two words", "random:x", "random(seed=1)", "a(checkpoint=c)@d"):
        with pytest.raises(ValueError):
            parse(bad)


def test_hand_counts_are_bounded():
    for hands in (0, MAX_HANDS + 1, 10**15, 2.5, True):
        with pytest.raises(ValueError, match="num_hands must be an integer from 1 to"):
            evaluate(FOUR, num_hands=hands)
    with pytest.raises(ValueError, match="hands_per_game must be an integer from 1 to 1000"):
        evaluate(FOUR, num_hands=4, hands_per_game=10**9)
    assert evaluate(FOUR, num_hands=np.int64(8), hands_per_game=np.int64(2)).num_hands == 8


def test_command_line_prints_the_table(capsys):
    assert dominoes(["evaluate", "greedy", "random:2", "double", "--hands", "8", "--players", "4",
                     "--seed", "2", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "4 players, double-9, 8 hands" in printed and "| random | 16 |" in printed  # two copies
    assert dominoes(["evaluate", "greedy", "--hands", "8"]) == 2
    assert "need at least 4 policies" in capsys.readouterr().err


@pytest.mark.parametrize("arguments, message", [
    (["random(seed=5)", "random:3"], "seed cannot be set per policy"),
    (["td_lambda(epsilon=x)", "random:3"], "epsilon must be a finite number"),
    (["random:100000000000"], "copies .* from 1 to 1000"),
    (["best_line(max_line_length=1000000000000)", "random:3"], "max_line_length must be an integer"),
    (["random:4", "--hands", "0"], "--hands must be an integer from 1 to"),
    (["random:4", "--hands", str(10**15)], "--hands must be an integer from 1 to"),
    (["random:4", "--players", "9"], "--players must be an integer from 2 to 8"),
    (["random:4", "--highest", "19"], "--highest must be an integer from 6 to 18"),
    (["random:4", "--seed", "-1"], "--seed must be an integer from 0"),
    (["random:4", "--hands-per-game", "0"], "--hands-per-game must be an integer from 1 to 1000"),
    (["nosuch:4"], "unknown policy 'nosuch'"),
])
def test_bad_command_lines_are_one_line_errors(capsys, arguments, message):
    assert dominoes(["evaluate", *arguments, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dominoes evaluate: error: ") and err.count("\n") == 1
    assert re.search(message, err), err


def test_several_hands_per_game_play_whole_games(capsys):
    result = evaluate(["greedy", "random", "double", "stupid"], num_hands=30, seed=1, hands_per_game=3)
    assert result.num_hands == 36 and result.hands_per_game == 3  # 3 deals x 4 rotations x 3 hands
    # the hands of one game have the engines N, N-1, N-2: their scores differ from hand to hand
    first_game = result.scores[:3]
    assert not (first_game == first_game[0]).all()
    assert dominoes(["evaluate", "greedy", "random", "double", "stupid", "--hands", "24", "--hands-per-game", "3",
                     "--no-progress"]) == 0
    assert "games of 3 hands x 4 seat rotations" in capsys.readouterr().out


def test_confidence_intervals_use_students_t_per_deal():
    """The interval is recomputed here independently: per-deal means, then t with deals - 1 dof."""
    scipy_stats = pytest.importorskip("scipy.stats")
    for hands in (8, 12, 40):  # 2, 3 and 10 deals: few deals, where t differs from the normal
        result = evaluate(FOUR, num_hands=hands, seed=5)
        deals = np.unique(result.deal)
        for index, policy in enumerate(result.policies):
            mine = result.seating == index
            per_deal = [result.scores[result.deal == d][mine[result.deal == d]].mean() for d in deals]
            low, high = scipy_stats.t.interval(0.95, len(per_deal) - 1, loc=np.mean(per_deal),
                                               scale=scipy_stats.sem(per_deal))
            assert policy.ci95 == pytest.approx((high - low) / 2, rel=1e-9)
    for dof in (1, 2, 3, 7, 30, 500, 1000, 1001, 50_000):
        assert t_quantile_975(dof) == pytest.approx(scipy_stats.t.ppf(0.975, dof), rel=1e-10)


@pytest.mark.parametrize("entries, seats", [(5, 4), (7, 3), (9, 8), (6, 2)])
def test_tables_drawn_from_more_entries_are_fair_and_never_seat_one_twice(entries, seats):
    deals = deals_needed(200, entries, seats, 1)
    tables = fair_tables(entries, seats, deals, np.random.default_rng(0))
    assert all(len(set(row)) == seats for row in tables)
    assert np.all(np.bincount(tables.ravel(), minlength=entries) == deals * seats // entries)


def test_paired_difference_over_shared_hands(four):
    mean, spread, hands = four.difference("greedy", "stupid")
    a, b = four.labels.index("greedy"), four.labels.index("stupid")
    gaps = [s[list(seat).index(a)] - s[list(seat).index(b)] for s, seat in zip(four.scores, four.seating)]
    assert hands == four.num_hands and mean == pytest.approx(np.mean(gaps)) and 0 < spread < 10
    assert four.difference("stupid", "greedy")[0] == pytest.approx(-mean)
    with pytest.raises(ValueError):
        four.difference("greedy", "nobody")


def test_an_illegal_move_names_the_policy_not_only_the_seat():
    """Seats rotate, so "player_1" alone does not say which spec cheated."""
    from baselines.policies.policy import Policy

    class Cheat(Policy):
        def act(self, observation, action_mask):
            return int(np.flatnonzero(action_mask == 0)[0])

    with pytest.raises(ValueError, match=r"^test_evaluate\.[\w.<>]*Cheat \(seat player_\d\) made an illegal move: "):
        evaluate([Cheat, "random", "random", "random"], num_hands=4, seed=0)


def test_the_progress_bar_shows_on_a_terminal_only_unless_asked(monkeypatch, capsys):
    """Piped logs get no carriage-return frames; --progress asks for the bar anyway."""
    import baselines.cli.evaluate as command

    shown = []
    monkeypatch.setattr(command, "evaluate", lambda *args, **kwargs: shown.append(kwargs["progress"]) or
                        evaluate(["random"] * 4, num_hands=4, seed=0))
    for isatty, flags, wanted in [(False, [], False), (True, [], True), (False, ["--progress"], True),
                                  (True, ["--no-progress"], False)]:
        monkeypatch.setattr("sys.stderr.isatty", lambda isatty=isatty: isatty)
        assert dominoes(["evaluate", "random:4", "--hands", "4", *flags]) == 0
        assert shown.pop() is wanted
    capsys.readouterr()


def test_a_difference_that_rounds_to_zero_has_no_minus_sign():
    """A player against copies of itself differs by nothing: "+0.00", never "-0.00" (a scorecard showed it)."""
    from baselines.harness.statistics import signed

    assert [signed(x) for x in (-0.0, -1e-9, -0.004, 0.004, 1.25, -0.4)] == ["+0.00"] * 4 + ["+1.25", "-0.40"]


def test_the_command_says_what_it_plays_before_the_first_hand_whatever_its_output(capsys):
    """A match of minutes whose table goes to a file is not silent: the hands it plays are said
    on stderr once the policies are checked (a refused command says only its error)."""
    from baselines.cli import main as dominoes

    assert dominoes(["evaluate", "random", "greedy:3", "--hands", "8", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ("dominoes evaluate: 8 hands of 4 players, double-9 (every deal under all seat "
                            "rotations); the table is printed when they are played\n")
    assert captured.out.startswith("4 players, double-9, 8 hands")
