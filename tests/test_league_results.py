"""The schedule and the results file: reproducible plans, resumable and damage-aware storage."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from baselines.league.results import GameRecord, ResultsError, open_results, read_results, results_path
from baselines.league.schedule import plan_game
from baselines.league.spec import (
    LeagueError,
    LeagueSpec,
    default_policies,
    make_spec,
    parse_policy_arguments,
)
from baselines.policies.specs import PolicySpec
from dominoes_env import make_config

SPEC = LeagueSpec(((PolicySpec("random"), 3), (PolicySpec("greedy"), 2)), make_config(3, 6), 2, 11)


def fake_record(spec: LeagueSpec, game: int) -> GameRecord:
    """A record that matches the schedule (scores are made up: only the storage is tested)."""
    plan = plan_game(spec, game)
    hand_scores = tuple(tuple((game + hand + seat) % 7 for seat in range(spec.num_players))
                        for hand in range(spec.hands_per_game))
    return GameRecord(game, plan.deal_seed, plan.seats, tuple(spec.entries[e].label for e in plan.seats),
                      hand_scores, tuple(map(sum, zip(*hand_scores))), (None,) * spec.hands_per_game)


def write_games(out_dir, spec: LeagueSpec, games) -> None:
    recorded, writer = open_results(out_dir, spec)
    with writer:
        for game in games:
            writer.append(fake_record(spec, game))


# ------------------------------------------------------------------ schedule
def test_a_plan_depends_only_on_the_league_and_the_game_index():
    assert plan_game(SPEC, 7) == plan_game(SPEC, 7)
    other_seed = LeagueSpec(SPEC.policies, make_config(3, 6), 2, 12)
    assert [plan_game(SPEC, g).deal_seed for g in range(0, 30, 3)] != \
           [plan_game(other_seed, g).deal_seed for g in range(0, 30, 3)]


def test_a_round_rotates_one_table_over_the_same_deals():
    players = SPEC.num_players
    for round_start in (0, 3, 27):
        plans = [plan_game(SPEC, round_start + r) for r in range(players)]
        assert len({plan.deal_seed for plan in plans}) == 1
        table = plans[0].seats
        assert len(set(table)) == players  # distinct entries at a table
        for r, plan in enumerate(plans):
            assert plan.seats == table[r:] + table[:r]
            assert dict(zip(plan.seats, plan.policy_seeds)) == dict(zip(table, plans[0].policy_seeds))
        # Every entry sits in every seat once over the round.
        for entry in table:
            assert sorted(plan.seats.index(entry) for plan in plans) == list(range(players))


def test_tables_are_drawn_from_the_whole_league():
    seen = {entry for game in range(0, 300, SPEC.num_players) for entry in plan_game(SPEC, game).seats}
    assert seen == set(range(len(SPEC.entries)))


# ------------------------------------------------------------------ the results file
def test_records_round_trip_in_game_order(tmp_path):
    write_games(tmp_path, SPEC, range(5))
    contents = read_results(results_path(tmp_path))
    assert contents.spec == SPEC
    assert contents.records == tuple(fake_record(SPEC, g) for g in range(5))
    assert not contents.unfinished_tail
    lines = results_path(tmp_path).read_text().splitlines()
    assert json.loads(lines[0])["league"]["policies"] == [["random", 3], ["greedy", 2]]
    assert set(json.loads(lines[1])) == {"game", "seed", "seats", "policies", "hand_scores", "totals", "went_out"}


def test_an_unfinished_last_line_is_skipped_when_reading_and_cut_when_resuming(tmp_path):
    write_games(tmp_path, SPEC, range(4))
    path = results_path(tmp_path)
    complete = path.read_bytes()
    path.write_bytes(complete + fake_record(SPEC, 4).to_line()[:25])  # killed mid-write
    contents = read_results(path)
    assert contents.unfinished_tail and [r.game for r in contents.records] == [0, 1, 2, 3]
    recorded, writer = open_results(tmp_path, SPEC)
    writer.close()
    assert len(recorded) == 4 and path.read_bytes() == complete


@pytest.mark.parametrize("damage", ["not json", '{"game": 1}', "[1, 2]", ""])
def test_a_damaged_line_in_the_middle_is_an_error_naming_the_file_and_line(tmp_path, damage):
    write_games(tmp_path, SPEC, range(4))
    path = results_path(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[3] = damage.encode() + b"\n"
    path.write_bytes(b"".join(lines))
    before = path.read_bytes()
    with pytest.raises(ResultsError, match=rf"{path.name}, line 4: not a valid game record"):
        read_results(path)
    with pytest.raises(ResultsError, match="line 4"):
        open_results(tmp_path, SPEC)
    assert path.read_bytes() == before  # nothing recorded is lost


def test_a_damaged_complete_last_line_is_an_error_not_a_kill(tmp_path):
    write_games(tmp_path, SPEC, range(3))
    path = results_path(tmp_path)
    with open(path, "ab") as handle:
        handle.write(b'{"game": 3, "seed"\n')
    with pytest.raises(ResultsError, match="line 5"):
        read_results(path)


def test_a_game_recorded_twice_is_an_error(tmp_path):
    write_games(tmp_path, SPEC, [0, 1, 2])
    with open(results_path(tmp_path), "ab") as handle:
        handle.write(fake_record(SPEC, 1).to_line())
    with pytest.raises(ResultsError, match=r"line 5: game 1 is recorded twice \(also on line 3\)"):
        read_results(results_path(tmp_path))


def test_a_results_file_of_another_league_is_refused_unchanged(tmp_path):
    write_games(tmp_path, SPEC, range(3))
    before = results_path(tmp_path).read_bytes()
    table = make_config(3, 6)
    for other in (LeagueSpec(SPEC.policies, table, 2, 12), LeagueSpec(SPEC.policies, table, 3, 11),
                  LeagueSpec(((PolicySpec("random"), 5),), table, 2, 11)):
        with pytest.raises(ResultsError, match="holds a different league"):
            open_results(tmp_path, other)
    assert results_path(tmp_path).read_bytes() == before


def test_a_record_the_schedule_does_not_play_is_refused(tmp_path):
    write_games(tmp_path, SPEC, range(2))
    forged = fake_record(SPEC, 2)
    forged = GameRecord(forged.game, forged.seed + 1, forged.seats, forged.policies, forged.hand_scores,
                        forged.totals, forged.went_out)
    with open(results_path(tmp_path), "ab") as handle:
        handle.write(forged.to_line())
    with pytest.raises(ResultsError, match="line 4: .*another league"):
        read_results(results_path(tmp_path))


def _record_line(game: int, **changes) -> bytes:
    data = json.loads(fake_record(SPEC, game).to_line())
    data.update(changes)
    return (json.dumps(data) + "\n").encode()


def _hands(*hands):
    return [list(hand) for hand in hands]


@pytest.mark.parametrize("line, message", [
    # went_out names a seat that does not exist (a one-bit change of 3 into 7)
    (_record_line(2, went_out=[7, None]), "went_out 7 is not a seat"),
    (_record_line(2, went_out=[-1, None]), "went_out -1 is not a seat"),
    (_record_line(2, went_out=[True, None]), "expected an integer"),
    # a seat that went out holds no tile
    (_record_line(2, hand_scores=_hands([0, 5, 6], [1, 2, 3]), totals=[1, 7, 9], went_out=[1, None]),
     "seat 1 went out but holds 5 pips"),
    (_record_line(2, hand_scores=_hands([-4, 5, 6], [1, 2, 3]), totals=[-3, 7, 9]), "outside 0..168"),
    (_record_line(2, hand_scores=_hands([999, 5, 6], [1, 2, 3]), totals=[1000, 7, 9]), "outside 0..168"),
    (_record_line(2, totals=[0, 0, 0]), "not the sums of the hand scores"),
    (_record_line(2, went_out=[None]), "one entry per hand"),
    (b"[" * 100_000 + b"]" * 100_000 + b"\n", "not a valid game record"),  # nested beyond the parser's depth
    (b"[1, 2]\n", "a game record is a JSON object"),
    (b'{"game": 2}\n', "missing field"),
])
def test_every_field_of_a_record_is_checked_against_the_game(tmp_path, line, message):
    write_games(tmp_path, SPEC, range(2))
    with open(results_path(tmp_path), "ab") as handle:
        handle.write(line)
    before = results_path(tmp_path).read_bytes()
    with pytest.raises(ResultsError, match=f"line 4: .*{message}"):
        read_results(results_path(tmp_path))
    with pytest.raises(ResultsError, match="line 4"):  # resuming refuses it too, and changes nothing
        open_results(tmp_path, SPEC)
    assert results_path(tmp_path).read_bytes() == before


def test_a_results_path_that_is_a_directory_is_a_clear_error(tmp_path):
    results_path(tmp_path).mkdir(parents=True)
    with pytest.raises(ResultsError, match="is a directory, not a regular file"):
        read_results(results_path(tmp_path))
    with pytest.raises(ResultsError, match="results.jsonl in it is a directory"):
        open_results(tmp_path, SPEC)


def test_a_version_one_file_written_before_the_rename_is_still_read(tmp_path):
    write_games(tmp_path, SPEC, range(3))
    path = results_path(tmp_path)
    header, *games = path.read_bytes().split(b"\n", 1)
    old = json.loads(header)
    old["version"] = 1
    old["league"]["highest_dominoe"] = old["league"].pop("highest_double")
    path.write_bytes(json.dumps(old).encode() + b"\n" + games[0])
    contents = read_results(path)
    assert contents.spec == SPEC and len(contents.records) == 3


def test_a_missing_results_file_is_a_clear_error(tmp_path):
    with pytest.raises(ResultsError, match="no results file"):
        read_results(results_path(tmp_path))


def test_an_unwritable_directory_is_a_clear_error(tmp_path):
    """A directory nobody may write: chmod for ordinary users; for root (CI), a path under /proc."""
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    target = Path("/proc/dominoes-league") if os.geteuid() == 0 else locked / "league"
    try:
        with pytest.raises(ResultsError, match="^--out .*(dominoes-league|locked/league): cannot be created: .*; "
                                               "choose a writable directory with --out$"):
            open_results(target, SPEC)
    finally:
        locked.chmod(0o700)


def test_a_path_that_is_a_file_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(ResultsError, match="--out .*file: is a regular file, not a directory"):
        open_results(blocker, SPEC)


# ------------------------------------------------------------------ league arguments
def test_policy_arguments_parse_names_parameters_copies_and_checkpoints():
    parsed = parse_policy_arguments(["greedy", "random:2", "td_lambda@runs/a:b.pt:3", "best_line(max_line_length=6):2"])
    assert parsed == ((PolicySpec("greedy"), 4), (PolicySpec("random"), 2),
                      (PolicySpec.of("td_lambda", {"checkpoint": "runs/a:b.pt"}), 3),
                      (PolicySpec.of("best_line", {"max_line_length": 6}), 2))


def test_a_league_takes_policy_parameters_as_evaluate_does():
    spec = make_spec(parse_policy_arguments(["best_line(max_line_length=6):2", "random:2"]), 4, 9)
    assert spec.policy_labels == ("best_line(max_line_length=6)", "random")
    again = LeagueSpec.from_json(json.loads(json.dumps(spec.to_json())))
    assert again == spec  # the header round-trips through the label grammar


@pytest.mark.parametrize("argument, message", [
    ("random:0", "from 1 to 1000, got 0"), ("random:-2", "from 1 to 1000, got -2"), ("ran dom", "cannot read policy"),
    ("random:x", "cannot read policy"), ("random:100000000000", "from 1 to 1000"),
    ("random(seed=3)", "seed cannot be set per policy"),
])
def test_bad_policy_arguments_are_clear_errors(argument, message):
    with pytest.raises(LeagueError, match=message):
        parse_policy_arguments([argument])


def test_a_policy_listed_twice_is_refused():
    with pytest.raises(LeagueError, match="more than once"):
        parse_policy_arguments(["random:2", "random:3"])


def test_an_unknown_policy_name_lists_the_known_ones():
    with pytest.raises(LeagueError, match=r"'no_such_policy'.*known policies: .*greedy"):
        make_spec(parse_policy_arguments(["no_such_policy:4", "random:4"]), 4, 9)


def test_a_league_smaller_than_a_table_is_refused():
    with pytest.raises(LeagueError, match="4 seats need at least 4 league entries"):
        make_spec(parse_policy_arguments(["random:3"]), 4, 9)


def test_bad_table_sizes_and_hands_are_refused():
    with pytest.raises(LeagueError, match="num_players must be an integer from 2 to 8.*got 9"):
        make_spec(parse_policy_arguments(["random:9"]), 9, 9)
    with pytest.raises(LeagueError, match="hands per game"):
        make_spec(parse_policy_arguments(["random:4"]), 4, 9, hands_per_game=0)
    with pytest.raises(LeagueError, match="hands per game must be an integer from 1 to 1000"):
        make_spec(parse_policy_arguments(["random:4"]), 4, 9, hands_per_game=10**9)
    with pytest.raises(LeagueError, match="at most 1000 entries"):
        make_spec(parse_policy_arguments(["random:1000", "greedy:1000"]), 4, 9)


def test_the_default_league_is_the_original_one_plus_the_learned_players():
    names = [spec.name for spec, copies in default_policies(4, 9)]
    assert names == ["persistent_line", "double", "greedy", "random", "stupid", "td_lambda", "linear_sarsa",
                     "lookahead", "ppo", "champion"]
    assert default_policies(4, 9)[-1][0].label == "champion(simulations=32)"  # its fast setting
    assert all(copies == 4 for _, copies in default_policies(4, 9))
    # where no trained player ships (other tables), the league is the hand-crafted one
    assert [spec.name for spec, _ in default_policies(3, 12)] == names[:5]


def test_a_default_league_whose_td_player_fails_to_load_stops_loudly(monkeypatch):
    from baselines.policies.registry import policy_class

    cls = policy_class("td_lambda")

    def broken(*args, **kwargs):
        raise ValueError("td_lambda checkpoint 'x.safetensors' is damaged")

    monkeypatch.setattr(cls, "__init__", broken)
    with pytest.raises(LeagueError, match="td_lambda.*damaged"):
        default_policies(4, 9)


def test_a_second_run_on_the_same_directory_is_refused_and_changes_nothing(tmp_path):
    write_games(tmp_path, SPEC, range(2))
    before = results_path(tmp_path).read_bytes()
    records, writer = open_results(tmp_path, SPEC)
    try:
        with pytest.raises(ResultsError, match="another league run is writing"):
            open_results(tmp_path, SPEC)
    finally:
        writer.close()
    assert results_path(tmp_path).read_bytes() == before
    records, writer = open_results(tmp_path, SPEC)  # free again once the first run closed
    writer.close()
    assert len(records) == 2
