"""dominoes-bench: the suite file, the cells and the scorecard, the anchored rating, resuming, the command."""

from __future__ import annotations

import json

import numpy as np
import pytest

from baselines.benchmark import bench, load_suite, read_scorecard
from baselines.benchmark.rating import Outcome, anchored_rating, pool_ratings
from baselines.benchmark.run import CELLS_FILE, run_cells
from baselines.benchmark.scorecard import ScorecardError, make_scorecard
from baselines.benchmark.suite import SuiteError, cell_name, suite_from_dict
from baselines.cli import main as dominoes
from baselines.harness.evaluate import evaluate
from baselines.policies.registry import make_policy


def tiny_suite(games: int = 2) -> dict:
    """A suite small enough for the default test run: 3 players, double-six, three line-ups."""
    return {"format": "dominoes-bench-suite/1", "version": "test", "games": games, "hands_per_game": 3,
            "pool": ["random", "greedy"],
            "tables": [{"name": "3p_d6", "num_players": 3, "highest_double": 6, "rules": "rule_book",
                        "line_ups": [{"name": "random", "opponents": ["random"], "seed": 11},
                                     {"name": "greedy", "opponents": ["greedy"], "seed": 12},
                                     {"name": "mixed", "opponents": ["greedy", "random"], "seed": 13}]},
                       {"name": "3p_d6_mexican_train", "num_players": 3, "highest_double": 6,
                        "rules": "mexican_train",
                        "line_ups": [{"name": "random", "opponents": ["random"], "seed": 21}]}],
            "reference": {"pool": {}, "random": {}, "best": {}, "weights": {}}}


def test_the_shipped_suite_loads_and_round_trips():
    suite = load_suite("v1")
    assert suite.version == "v1" and len(suite.cells()) == 33
    assert suite_from_dict(json.loads(json.dumps(suite.to_dict()))) == suite
    assert {table.config.num_players for table in suite.tables} == {4, 6}
    assert {table.config.rule_set for table in suite.tables} == {"rule_book", "mexican_train"}


@pytest.mark.parametrize("change, message", [
    (lambda s: s.update(format="x"), "format must be"),
    (lambda s: s.update(games=1), "games must be an integer from 2"),
    (lambda s: s["tables"][0].update(rules="chicken_foot"), "rules='chicken_foot' is not supported"),
    (lambda s: s["tables"][0].update(num_players=9), "num_players must be an integer from 2 to 8"),
    (lambda s: s["tables"][0]["line_ups"].append(dict(s["tables"][0]["line_ups"][0])), "names a line-up twice"),
    (lambda s: s["reference"].update(pool={"random": 1000}), "exactly the pool's players"),
    (lambda s: s["reference"].update(random={"3p_d6/random": 1.0}), "exactly the suite's cells"),
    (lambda s: s.pop("tables"), "'tables'"),
])
def test_a_damaged_suite_is_refused_with_one_line(tmp_path, change, message):
    content = tiny_suite()
    change(content)
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(content))
    with pytest.raises(SuiteError, match=message) as refused:
        load_suite(path)
    assert "\n" not in str(refused.value)
    with pytest.raises(SuiteError, match="no benchmark suite 'v0'; the suites are"):
        load_suite("v0")


def test_the_scorecard_agrees_with_evaluate_on_the_same_deals():
    suite = suite_from_dict(tiny_suite())
    card = bench("greedy", suite)
    cell = next(cell for cell in card.cells if cell["line_up"] == "random" and cell["table"] == "3p_d6")
    table, line_up = suite.cells()[0]
    result = evaluate(["greedy", "random", "random"], num_hands=suite.hands(table), seed=line_up.seed,
                      num_players=3, highest_double=6, hands_per_game=3)
    mean, half, hands = result.difference("greedy", "random")
    assert cell["hands"] == hands == 2 * 3 * 3
    assert cell["difference"] == pytest.approx(mean, abs=1e-4) and cell["ci95"] == pytest.approx(half, abs=1e-4)
    assert cell["agent_pips"] == pytest.approx(result["greedy"].mean_pips, abs=1e-4)
    assert cell["hands_won"] == pytest.approx(result["greedy"].won, abs=1e-4)
    totals = result.scores.reshape(-1, 3, 3).sum(axis=1)  # per game (3 hands), per seat
    seats = result.seating.reshape(-1, 3, 3)[:, 0]
    mine = totals[seats == 0]
    lowest = totals.min(axis=1)
    shares = np.where(mine == lowest, 1 / (totals == lowest[:, None]).sum(axis=1), 0)
    assert cell["games_won"] == pytest.approx(shares.mean(), abs=1e-4)
    assert card.skipped == () and len(card.cells) == 4 and card.rating is None  # not calibrated


def test_a_shipped_player_benched_against_its_own_copies_is_even():
    card = bench("greedy", suite_from_dict(tiny_suite()))
    even = next(cell for cell in card.cells if cell["line_up"] == "greedy" and cell["table"] == "3p_d6")
    assert even["difference"] == pytest.approx(0, abs=1e-9)  # every seat plays the same policy


def test_resumed_and_parallel_runs_write_the_same_files(tmp_path):
    suite = suite_from_dict(tiny_suite())
    bench("greedy", suite, out=tmp_path / "whole")
    whole = {name: (tmp_path / "whole" / name).read_bytes() for name in (CELLS_FILE, "scorecard.json")}
    bench("greedy", suite, out=tmp_path / "cut")
    cells = (tmp_path / "cut" / CELLS_FILE).read_text().split("\n")
    (tmp_path / "cut" / CELLS_FILE).write_text("\n".join(cells[:2]) + "\n" + cells[2][:30])  # killed mid-line
    (tmp_path / "cut" / "scorecard.json").unlink()
    bench("greedy", suite, out=tmp_path / "cut")
    bench("greedy", suite, out=tmp_path / "parallel", workers=2)
    for run in ("cut", "parallel"):
        assert {name: (tmp_path / run / name).read_bytes() for name in whole} == whole
    assert read_scorecard(tmp_path / "whole" / "scorecard.json") == make_scorecard(
        suite, "greedy", run_cells(suite, "greedy", tmp_path / "whole"))


def test_another_agents_cells_are_not_mixed_in(tmp_path):
    suite = suite_from_dict(tiny_suite())
    bench("greedy", suite, out=tmp_path)
    with pytest.raises(ValueError, match="holds another bench"):
        bench("random", suite, out=tmp_path)


def greedy_at(num_players, highest_double, seed):
    """A factory agent without a label (module level: the same name in every process)."""
    return make_policy("greedy", num_players, highest_double, seed=seed)


def test_a_factory_without_a_label_resumes_its_own_cells(tmp_path):
    """Its cells file names it by import path, the same in every process, so a second run
    resumes (a repr with a memory address would have refused it as another bench)."""
    suite = suite_from_dict(tiny_suite())
    first = bench(greedy_at, suite, out=tmp_path)
    assert first.agent.endswith("test_bench.greedy_at")  # no memory address
    cells = (tmp_path / CELLS_FILE).read_bytes()
    assert bench(greedy_at, suite, out=tmp_path) == first
    assert (tmp_path / CELLS_FILE).read_bytes() == cells


def test_an_unknown_backend_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(ValueError, match=r"backend='rya' is not supported; choose one of \['local', 'ray'\]"):
        bench("greedy", suite_from_dict(tiny_suite()), out=tmp_path / "b", backend="rya")
    assert not (tmp_path / "b").exists()


def test_a_policy_plays_only_the_tables_of_its_size_and_rules():
    card = bench(make_policy("greedy", 3, 6, seed=0), suite_from_dict(tiny_suite()))
    assert card.skipped == ("3p_d6_mexican_train",) and {cell["table"] for cell in card.cells} == {"3p_d6"}


def test_the_anchored_rating_recovers_a_known_strength():
    rng = np.random.default_rng(0)
    pool = {"weak": 900.0, "even": 1200.0, "strong": 1500.0}
    truth = 1250.0
    outcomes = []
    for game in range(3000):
        opponent = list(pool)[game % 3]
        p = 1 / (1 + 10 ** ((pool[opponent] - truth) / 400))
        outcomes.append(Outcome(opponent, str(game), float(rng.random() < p), 1))
    rating = anchored_rating(outcomes, pool)
    assert abs(rating.value - truth) < rating.ci95 < 40
    assert anchored_rating([Outcome("weak", "0", 1.0, 1)], pool).ci95 == float("inf")
    with pytest.raises(ValueError, match="no game against a player of the reference pool"):
        anchored_rating([Outcome("stranger", "0", 1.0, 1)], pool)


def test_pool_ratings_recover_known_strengths_with_random_at_1000():
    rng = np.random.default_rng(1)
    truth = {"random": 1000.0, "middle": 1300.0, "top": 1700.0}
    results: dict[str, list[Outcome]] = {name: [] for name in truth}
    for game in range(30000):
        a, b = rng.choice(list(truth), 2, replace=False)
        p = 1 / (1 + 10 ** ((truth[b] - truth[a]) / 400))
        results[a].append(Outcome(b, str(game), float(rng.random() < p), 1))
    fitted = pool_ratings(results)
    assert fitted["random"] == 1000.0
    assert all(abs(fitted[name] - truth[name]) < 40 for name in truth)


def test_the_command_benches_compares_and_refuses_in_one_line(tmp_path, capsys, monkeypatch):
    import baselines.benchmark.cli as cli

    monkeypatch.setattr(cli, "load_suite", lambda version: suite_from_dict(tiny_suite()) if version == "test"
                        else load_suite(version))
    small = ["--suite", "test", "--no-progress", "--workers", "1"]
    assert dominoes(["bench", "greedy", "--out", str(tmp_path / "a"), *small]) == 0
    assert "greedy on dominoes-bench test" in capsys.readouterr().out
    assert dominoes(["bench", "random", "--out", str(tmp_path / "b"), *small]) == 0
    capsys.readouterr()
    assert dominoes(["bench", "--compare", str(tmp_path / "a" / "scorecard.json"),
                     str(tmp_path / "b" / "scorecard.json")]) == 0
    table = capsys.readouterr().out
    assert "| random - greedy |" in table and "| 3p_d6 | random |" in table
    damaged = tmp_path / "damaged.json"
    content = json.loads((tmp_path / "a" / "scorecard.json").read_text())
    content["cells"][0]["difference"] = "lots"
    damaged.write_text(json.dumps(content))
    for arguments in (["--compare", str(damaged)], ["nosuch"], ["greedy:2"], [],
                      ["greedy", "--compare", str(damaged)], ["greedy", "--suite", "v0", "--out", str(tmp_path / "c")]):
        assert dominoes(["bench", *arguments]) == 2, arguments
        err = capsys.readouterr().err
        assert err.startswith("dominoes bench: error: ") and err.count("\n") == 1, err
    with pytest.raises(ScorecardError, match="is damaged: .*difference must be a number"):
        read_scorecard(damaged)


@pytest.mark.slow
def test_the_ray_backend_writes_the_same_scorecard(tmp_path):
    ray = pytest.importorskip("ray")
    suite = suite_from_dict(tiny_suite())
    bench("greedy", suite, out=tmp_path / "local")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        bench("greedy", suite, out=tmp_path / "ray", backend="ray", workers=2)
    finally:
        ray.shutdown()
    for name in (CELLS_FILE, "scorecard.json"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()


# The whole suite costs 3-8 minutes a player here: three players across the scale (the anchor, a
# hand-crafted one, a learned one) keep it checked; as opponents every pool player plays in each.
SCALE_CHECKED = ("random", "persistent_line", "td_lambda")


@pytest.mark.slow
@pytest.mark.parametrize("player", SCALE_CHECKED)
def test_reference_players_benched_against_the_frozen_pool_land_within_their_interval(player):
    """The whole suite for one reference player (the same deals the calibration played) gives an
    anchored rating within its 95% interval of its frozen value: the scale has not moved (a change
    to a player's code that changes its moves would move it)."""
    suite = load_suite("v1")
    card = bench(player, suite, workers=2)
    frozen = suite.reference.pool[player]
    assert abs(card.rating.value - frozen) <= card.rating.ci95, (player, card.rating, frozen)
    if player == "random":  # the anchor's cells are the suite's frozen per-cell references
        assert_random_cells_equal_the_frozen_references(suite, card)


#: The pool player whose moves changed after v1 was calibrated (docs/bench.md: the sampler's plain
#: shuffle draws its worlds from another stream); a cell that seats it is not replayed exactly.
MOVED_SINCE_CALIBRATION = "lookahead"


def assert_random_cells_equal_the_frozen_references(suite, card):
    """Every cell without the moved player gives random exactly its frozen difference (the same
    deals, the same moves); the cells that seat it differ (else the docs' account is stale)."""
    seated = {cell_name(table, line_up): MOVED_SINCE_CALIBRATION in line_up.opponents
              for table, line_up in suite.cells()}
    now = {f"{cell['table']}/{cell['line_up']}": cell["difference"] for cell in card.cells}
    assert set(now) == set(seated) == set(suite.reference.random)
    # the scorecard keeps 4 decimals, the suite 6: equal means within the scorecard's rounding
    same = {cell for cell in now if abs(now[cell] - suite.reference.random[cell]) < 1e-4}
    assert same == {cell for cell, moved in seated.items() if not moved}, sorted(set(now) - same)


def test_a_ray_address_nothing_answers_at_is_one_line_at_once(tmp_path, capsys):
    """Ray retries a silent address for minutes; the bench says so at once, in one line."""
    pytest.importorskip("ray")
    import socket
    with socket.socket() as probe:  # a port nothing listens on (bound, then let go)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert dominoes(["bench", "greedy", "--quick", "--backend", "ray", "--ray-address", f"127.0.0.1:{port}",
                     "--out", str(tmp_path / "bench"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dominoes bench: error: no Ray cluster answers at 127.0.0.1:{port} ") and \
        err.count("\n") == 1 and f"ray start --head --port {port}" in err, err


def test_normalised_to_a_ceiling_puts_random_at_0_and_the_ceiling_at_100():
    """The leaderboard's column of the oracle: a player's normalised score with another player's
    results as 100, per cell both played, against the suite's frozen random references."""
    from dataclasses import replace

    from baselines.benchmark.scorecard import normalised_to
    suite = suite_from_dict(tiny_suite())
    random, greedy, double = bench("random", suite), bench("greedy", suite), bench("double", suite)
    frozen = {f"{cell['table']}/{cell['line_up']}": cell["difference"] for cell in random.cells}
    # one cell where greedy did no better than random's reference: it cannot be a ceiling there
    worse = next(iter(frozen))
    frozen[worse] = next(c["difference"] for c in greedy.cells if f"{c['table']}/{c['line_up']}" == worse) - 1.0
    suite = replace(suite, reference=replace(suite.reference, random=frozen))
    shared = [c for c in greedy.cells if f"{c['table']}/{c['line_up']}" != worse]
    assert len(shared) == 3 and all(frozen[f"{c['table']}/{c['line_up']}"] > c["difference"] for c in shared)
    assert normalised_to(greedy, greedy, suite) == pytest.approx(100.0)
    expected = np.mean([100 * (frozen[f"{g['table']}/{g['line_up']}"] - d["difference"])
                        / (frozen[f"{g['table']}/{g['line_up']}"] - g["difference"])
                        for g, d in zip(greedy.cells, double.cells) if g in shared])
    assert normalised_to(double, greedy, suite) == pytest.approx(expected)
    assert normalised_to(random, greedy, suite) == pytest.approx(0.0)
    assert normalised_to(greedy, random, replace(suite, reference=replace(suite.reference, random={}))) is None


def test_the_leaderboard_starts_a_player_from_its_committed_cells_and_never_overwrites_its_own(tmp_path,
                                                                                              monkeypatch):
    """tools/leaderboard.py copies a slow player's committed cells into its --out folder once; a
    folder that already holds cells keeps them; a player with none committed is benched afresh;
    the committed champion cells of v1 read back as the full bench (no cell played again)."""
    from conftest import ROOT
    monkeypatch.syspath_prepend(str(ROOT / "tools"))
    from leaderboard import COMMITTED, start_from_committed
    suite = suite_from_dict(tiny_suite())
    committed, out = tmp_path / "committed", tmp_path / "out"
    bench("greedy", suite, out=committed / "bench-test" / "greedy")
    source = committed / "bench-test" / "greedy" / CELLS_FILE
    assert start_from_committed("greedy", "test", out, committed) is True
    assert (out / "greedy" / CELLS_FILE).read_bytes() == source.read_bytes()
    (out / "greedy" / CELLS_FILE).write_text("mine\n")
    assert start_from_committed("greedy", "test", out, committed) is False
    assert (out / "greedy" / CELLS_FILE).read_text() == "mine\n"
    assert start_from_committed("random", "test", out, committed) is False and not (out / "random").exists()
    from baselines.benchmark.run import read_cells
    assert start_from_committed("champion", "v1", tmp_path / "v1", COMMITTED) is True
    done = read_cells(tmp_path / "v1" / "champion" / CELLS_FILE, load_suite("v1"), "champion")
    assert sorted(done) == sorted(cell_name(table, line_up) for table, line_up in load_suite("v1").cells())
