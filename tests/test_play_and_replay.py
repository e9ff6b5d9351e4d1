"""``dominoes play`` driven by scripted input (bad input, hints, leaving), ``dominoes replay`` in the
terminal and as pictures, and the league's game records."""

from __future__ import annotations

import io
import json
import re

import pytest

from baselines.advice import hints as advice
from baselines.cli import main as dominoes
from baselines.cli import play as human
from baselines.league import make_spec, parse_policy_arguments, read_results, run_league
from baselines.league.results import results_path
from baselines.league.runner import game_record_path
from baselines.policies.specs import PolicySpec
from dominoes_env import make_config
from dominoes_env.records import read_record, replay


def script(*lines: str, then: str | None = "1"):
    """A read_line that answers `lines`, then `then` for ever (None: the input ends)."""
    answers = iter(lines)
    asked: list[str] = []

    def read_line(prompt: str) -> str:
        asked.append(prompt)
        try:
            return next(answers)
        except StopIteration:
            if then is None:
                raise EOFError from None
            return then

    read_line.asked = asked  # type: ignore[attr-defined]
    return read_line


def play(read_line, tmp_path, players=3, highest=6, hands=1, opponents="random", seat=0, seed=0):
    out = io.StringIO()
    config = make_config(players, highest)
    finished = human.play_in_terminal(config, hands, seed, seat, [PolicySpec(opponents)] * (players - 1),
                                      read_line=read_line, out=out, record=str(tmp_path / "game.json"))
    return finished, out.getvalue()


def test_a_scripted_game_with_bad_input_completes_its_hands(tmp_path):
    read_line = script("", "x", "0", "99", "-1", "1.5", "h", "hint", "HELP", "2")
    finished, out = play(read_line, tmp_path, hands=2)
    assert finished
    for bad in ("''", "'x'", "'0'", "'99'", "'-1'", "'1.5'", "'help'"):
        assert f"{bad} is not a move: type a number from 1 to" in out
    assert out.count("Hint:") == 2 and "persistent_line would play" in out
    assert "Hand 1 over (" in out and out.count("=== Hand ") == 2
    assert "Game over. Game scores (pips left, lower wins):" in out and re.search(r"You finished \d(st|nd|rd) ", out)
    record = read_record(tmp_path / "game.json")
    assert record.finished and record.players == ("you", "random", "random")
    assert re.search(r"You play \(\d+\|\d+\) on (the dummy line|player_\d's line)", out)  # the one notation


def test_the_person_sees_only_their_own_tiles_until_the_hand_ends(tmp_path):
    finished, out = play(script(), tmp_path, seat=1)
    during = out[:out.index("Hand 1 over (")]
    assert "player_1 holds" in during or "To move: player_1, holding" in during
    assert "player_0 holds" not in during and "player_2 holds" not in during
    assert "To move: player_0, holding" not in during and "To move: player_2, holding" not in during
    assert "player_0 holds" in out[out.index("Hand 1 over ("):]  # every hand is shown at the end


@pytest.mark.parametrize("leave", [("q",), ("1", "quit"), ()], ids=["q", "quit", "end of input"])
def test_leaving_is_clean_and_keeps_the_moves_played(tmp_path, leave):
    finished, out = play(script(*leave, then=None), tmp_path, hands=2, players=4, highest=9)
    assert not finished and "You left the game after" in out and "No hand was finished." in out
    record = read_record(tmp_path / "game.json")
    assert not record.finished and record.hands[-1].scores is None
    assert f"after {record.num_moves} moves" in out


def test_hints_show_td_lambdas_predicted_pips_for_every_move(tmp_path):
    pytest.importorskip("safetensors")
    out = io.StringIO()
    config = make_config(4, 9)
    read_line = script("h", "q")
    human.play_in_terminal(config, 1, 1, 0, [PolicySpec("greedy")] * 3, read_line=read_line, out=out)  # 4 moves
    text = out.getvalue()
    hint = text[text.index("Hint:"):]
    moves = int(re.findall(r"(\d+)\) \S+ on ", text[:text.index("Hint:")])[-1])
    assert "td_lambda would play" in hint and "persistent_line would play" in hint
    predicted = re.findall(r"^ +(\d+)\) .+? +(\d+\.\d)$", hint, flags=re.M)
    assert [int(k) for k, _ in predicted] == list(range(1, moves + 1))


def test_the_tile_count_shows_what_each_opponent_most_likely_holds():
    out = io.StringIO()
    config = make_config(4, 9)
    human.play_in_terminal(config, 1, 1, 0, [PolicySpec("greedy")] * 3, read_line=script("c", "q"), out=out)
    text = out.getvalue()
    count = text[text.index("Tile count:"):].splitlines()
    places = count[1:4]
    assert [line.split(" (")[0].strip() for line in places] == [f"player {k} after you" for k in (1, 2, 3)]
    for line in places:  # each opponent's tiles, then its 5 likeliest, with probabilities, likeliest first
        assert 1 <= int(re.findall(r"\((\d+) tiles\)", line)[0]) <= config.max_hand_size
        held = [int(p) for p in re.findall(r"\(\d+\|\d+\) (\d+)%", line)]
        assert len(held) == 5 and all(0 < p <= 100 for p in held) and held == sorted(held, reverse=True)


def test_the_default_opponent_is_the_strongest_that_loads():
    pytest.importorskip("safetensors")
    assert advice.default_opponent(make_config(4, 9)).name == "champion"
    assert advice.default_opponent(make_config(3, 6)).name == "persistent_line"  # no network for this table


def test_without_the_learned_players_library_the_default_opponent_is_persistent_line(monkeypatch):
    """td_lambda reads its weights with safetensors (the league extra); without it, play falls back."""
    registered = advice.policy_class

    def without_safetensors(name: str):
        if name in ("champion", "td_lambda"):
            raise ValueError(f"policy {name!r} needs safetensors: pip install -e '.[league]'")
        return registered(name)

    monkeypatch.setattr(advice, "policy_class", without_safetensors)
    assert advice.default_opponent(make_config(4, 9)).name == "persistent_line"


def test_the_command_plays_with_input_from_the_terminal(tmp_path, monkeypatch, capsys):
    answers = iter(["h", "1"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers, "1"))
    record = tmp_path / "played.json"
    assert dominoes(["play", "--players", "2", "--highest", "6", "--opponents", "greedy", "--seed", "5",
                     "--record", str(record), "--colour", "always"]) == 0
    out = capsys.readouterr().out
    assert "\033[1m" in out and "Game over." in out and read_record(record).finished


def test_ctrl_c_keeps_the_record_and_exits_with_130(tmp_path, monkeypatch, capsys):
    answers = iter(["1"])

    def typed(prompt=""):
        answer = next(answers, None)
        if answer is None:
            raise KeyboardInterrupt
        return answer

    monkeypatch.setattr("builtins.input", typed)
    record = tmp_path / "interrupted.json"
    assert dominoes(["play", "--opponents", "random", "--seed", "2", "--record", str(record)]) == 130
    captured = capsys.readouterr()
    assert "dominoes play: interrupted" in captured.err
    # the prompt's line is ended before anything else is said
    assert captured.out.endswith(f"\n\nThe game is recorded in {record} (dominoes replay {record}).\n")
    assert read_record(record).hands[0].moves  # the moves played until then


def test_with_one_legal_move_the_refusal_says_so(tmp_path):
    """Asked again after a bad answer when one move is possible: not "a number from 1 to 1"."""
    from baselines.cli.play import Person

    said: list[str] = []

    class View:
        def say(self, text: str) -> None:
            said.append(text)

    person = Person.__new__(Person)
    person.view, person.read_line = View(), script("x", then="1")
    assert person._choose(["9|9 on my line"], None, None) == 1  # no hint asked: nothing read from them
    assert said == ["'x' is not a move: type 1 (or Enter: the only move), h for a hint, c for the tile count, "
                    "or q to quit"]


@pytest.mark.parametrize("arguments, message", [
    (["--opponents", "random", "random"], "--opponents: 4 players need 3 opponents, got 2"),
    (["--opponents", "nobody"], "--opponents: 'nobody' cannot play 4 players, double-9: unknown policy 'nobody'"),
    (["--seat", "4"], "--seat must be an integer from 0 to 3, got 4"),
    (["--hands", "0"], "--hands must be an integer from 1 to 1000, got 0"),
    (["--players", "9"], "--players must be an integer from 2 to 8, got 9"),
    (["--record", "/nonexistent/game.json"],
     "--record /nonexistent/game.json: the directory '/nonexistent' does not exist"),
])
def test_play_refuses_bad_options_in_one_line(capsys, arguments, message):
    assert dominoes(["play", *arguments]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dominoes play: error: {message}") and err.count("\n") == 1


# --------------------------------------------------------------------------- replay
@pytest.fixture
def record_file(tmp_path):
    play(script(), tmp_path, hands=2)
    return tmp_path / "game.json"


def test_replay_steps_forward_and_back_in_the_terminal(record_file, monkeypatch, capsys):
    answers = iter(["", "n", "x", "p", "p", "p", "q"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert dominoes(["replay", str(record_file)]) == 0
    out = capsys.readouterr().out
    total = len(list(replay(read_record(record_file))))
    shown = re.findall(rf"^\[(\d+)/{total}\] ", out, flags=re.M)
    assert shown == ["1", "2", "3", "2", "1"]  # x asks again, p at the first position says so
    assert "type Enter (or n) for the next position" in out and "(this is the first position)" in out
    assert "player_0 holds" in out and "player_2 holds" in out  # a spectator sees every hand


def test_replay_ends_cleanly_at_the_end_of_the_input(record_file, monkeypatch, capsys):
    def no_more(prompt=""):
        raise EOFError

    monkeypatch.setattr("builtins.input", no_more)
    assert dominoes(["replay", str(record_file)]) == 0


def test_replay_writes_one_picture_per_move_and_per_deal(tmp_path, capsys):
    image = pytest.importorskip("PIL.Image")
    play(script(), tmp_path, players=2)
    record_file = tmp_path / "game.json"
    recorded = read_record(record_file)
    frames = recorded.num_moves + len(recorded.hands)
    gif, png_dir = tmp_path / "game.gif", tmp_path / "frames"
    assert dominoes(["replay", str(record_file), "--gif", str(gif), "--png-dir", str(png_dir), "--fps", "5"]) == 0
    assert f"({frames} frames, " in capsys.readouterr().out
    with image.open(gif) as animation:
        assert animation.n_frames == frames and animation.info["duration"] == 200
    pngs = sorted(png_dir.iterdir())
    assert len(pngs) == frames
    with image.open(pngs[0]) as first:
        assert first.size == animation.size


def test_replay_refuses_a_damaged_record_in_one_line(record_file, capsys):
    data = json.loads(record_file.read_text())
    data["hands"][0]["moves"][4]["seat"] = (data["hands"][0]["moves"][4]["seat"] + 1) % 3
    record_file.write_text(json.dumps(data))
    assert dominoes(["replay", str(record_file)]) == 2
    err = capsys.readouterr().err
    assert re.fullmatch(rf"dominoes replay: error: record {re.escape(str(record_file))}: hand 1, move 5 \(seat \d, "
                        rf"action \d+\): it is seat \d's turn, not seat \d's\n", err), err
    assert dominoes(["replay", str(record_file), "--fps", "0"]) == 2
    assert "--fps must be a finite number in [0.1, 50]" in capsys.readouterr().err


def test_replay_refuses_outputs_it_cannot_write_before_drawing(record_file, tmp_path, capsys, monkeypatch):
    drawn = []
    monkeypatch.setattr("baselines.cli.replay.read_record", lambda path: drawn.append(path))  # must not be reached
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    for arguments, message in ((["--gif", str(tmp_path / "missing" / "x.gif")], "--gif "),
                               (["--png-dir", str(a_file)], f"--png-dir {a_file}: is a regular file, not a directory")):
        assert dominoes(["replay", str(record_file), *arguments]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"dominoes replay: error: {message}") and err.count("\n") == 1
    assert drawn == []

# --------------------------------------------------------------------------- the league's records
LEAGUE = make_spec(parse_policy_arguments(["random:2", "greedy:2"]), 3, 6, 2, seed=4)


@pytest.mark.parametrize("workers", [1, 2])
def test_the_league_writes_a_record_per_game_that_matches_its_results(tmp_path, workers):
    run_league(LEAGUE, 6, tmp_path / "out", workers=workers, record_dir=tmp_path / "records")
    results = read_results(results_path(tmp_path / "out")).records
    assert sorted(p.name for p in (tmp_path / "records").iterdir()) == [f"game_{g:08d}.json" for g in range(6)]
    for result in results:
        record = read_record(game_record_path(tmp_path / "records", result.game))
        assert record.finished and record.seed == result.seed and record.players == result.policies
        assert record.game_scores == result.totals


def test_a_resumed_league_records_only_the_games_it_plays(tmp_path, capsys):
    out, records = tmp_path / "out", tmp_path / "records"
    run_league(LEAGUE, 3, out, workers=1)
    assert dominoes(["league", "--policies", "random:2", "greedy:2", "--players", "3", "--highest", "6",
                     "--hands-per-game", "2", "--seed", "4", "--games", "6", "--out", str(out), "--no-progress",
                     "--workers", "1", "--record-games", str(records)]) == 0
    assert "note: 3 games played before --record-games have no game record" in capsys.readouterr().err
    assert sorted(p.name for p in records.iterdir()) == [f"game_{g:08d}.json" for g in range(3, 6)]


def test_a_league_refuses_a_record_directory_it_cannot_write_before_it_starts(tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    assert dominoes(["league", "--policies", "random:4", "--games", "2", "--out", str(tmp_path / "out"),
                     "--record-games", str(blocker)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"dominoes league: error: --record-games {blocker}") and \
        captured.err.count("\n") == 1
    assert "league:" not in captured.out and not (tmp_path / "out").exists()  # nothing compiled or played

@pytest.mark.slow
def test_the_ray_backend_writes_the_same_records(tmp_path):
    ray = pytest.importorskip("ray")
    run_league(LEAGUE, 6, tmp_path / "local", workers=1, record_dir=tmp_path / "local_records")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        run_league(LEAGUE, 6, tmp_path / "ray", backend="ray", record_dir=tmp_path / "ray_records")
    finally:
        ray.shutdown()
    for game in range(6):
        local = game_record_path(tmp_path / "local_records", game).read_bytes()
        assert game_record_path(tmp_path / "ray_records", game).read_bytes() == local
