"""Running leagues: resuming after an interruption or a kill, workers, Ray, the command line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from baselines.cli import main as dominoes
from baselines.league.ratings import rate
from baselines.league.results import read_results, results_path
from baselines.league.runner import run_league
from baselines.league.spec import LeagueError, make_spec, parse_policy_arguments
from baselines.policies.policy import Policy
from baselines.policies.registry import policy_names, register_policy


@register_policy("league_test_heaviest")
class HeaviestTile(Policy):
    """Plays its heaviest legal tile: a strong stand-in, defined here so the tests do not
    depend on the speed or the details of the shipped policies."""

    def __init__(self, num_players: int = 4, highest_double: int = 9, seed=None) -> None:
        super().__init__(num_players, highest_double, seed)
        self.pips = np.tile(self.config.tiles.pips, self.config.num_lines)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask[:-1])
        return int(legal[np.argmax(self.pips[legal])]) if legal.size else action_mask.shape[0] - 1


@register_policy("league_test_random")
class RandomTile(Policy):
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        return int(legal[self.rng.integers(legal.size)])


TEST_LEAGUE = parse_policy_arguments(["league_test_heaviest:3", "league_test_random:3"])
SPEC = make_spec(TEST_LEAGUE, num_players=3, highest_double=6, hands_per_game=3, seed=5)
GAMES = 24


class Interrupt(Exception):
    pass


def stop_after(games: int):
    count = 0

    def on_game(record) -> None:
        nonlocal count
        count += 1
        if count == games:
            raise Interrupt

    return on_game


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted one-worker run: the file every other run must reproduce."""
    out = tmp_path_factory.mktemp("reference")
    run_league(SPEC, GAMES, out, workers=1)
    return results_path(out).read_bytes()


def test_several_workers_give_the_same_file_as_one(tmp_path, reference):
    run_league(SPEC, GAMES, tmp_path, workers=3)
    assert results_path(tmp_path).read_bytes() == reference


@pytest.mark.parametrize("workers", [1, 2])
def test_an_interrupted_run_resumes_to_the_same_results_and_ratings(tmp_path, reference, workers):
    with pytest.raises(Interrupt):
        run_league(SPEC, GAMES, tmp_path, workers=workers, on_game=stop_after(7))
    assert [r.game for r in read_results(results_path(tmp_path)).records] == list(range(7))
    played = []
    records = run_league(SPEC, GAMES, tmp_path, workers=workers, on_game=played.append)
    assert [r.game for r in played] == list(range(7, GAMES))  # nothing played twice
    assert results_path(tmp_path).read_bytes() == reference
    reference_records = read_results_bytes(tmp_path, reference)
    assert rate(SPEC, records).rows == rate(SPEC, reference_records).rows


def read_results_bytes(tmp_path, data: bytes):
    copy = tmp_path / "copy"
    copy.mkdir()
    results_path(copy).write_bytes(data)
    return read_results(results_path(copy)).records


def test_a_run_truncated_mid_line_resumes_to_the_same_file(tmp_path, reference):
    lines = reference.splitlines(keepends=True)
    results_path(tmp_path).write_bytes(b"".join(lines[:10]) + lines[10][:30])  # killed while writing game 9
    played = []
    run_league(SPEC, GAMES, tmp_path, workers=1, on_game=played.append)
    assert played[0].game == 9
    assert results_path(tmp_path).read_bytes() == reference


def test_more_games_extend_a_finished_league(tmp_path, reference):
    run_league(SPEC, 10, tmp_path, workers=1)
    run_league(SPEC, GAMES, tmp_path, workers=2)
    assert results_path(tmp_path).read_bytes() == reference


@pytest.mark.parametrize("games", [0, -3, 10**11, 2.5])
def test_zero_negative_or_huge_game_counts_are_refused(tmp_path, games):
    with pytest.raises(LeagueError, match="number of games must be an integer from 1 to 10000000"):
        run_league(SPEC, games, tmp_path)
    assert not results_path(tmp_path).exists()


# ------------------------------------------------------------------ the command line
TINY = ["--policies", "random:2", "greedy:2", "--players", "3", "--highest", "6", "--hands-per-game", "2",
        "--games", "12", "--seed", "3", "--no-progress"]


def run_tiny_league(out_dir) -> None:
    """What ``dominoes league *TINY`` records, without drawing the plot."""
    run_league(make_spec(parse_policy_arguments(["random:2", "greedy:2"]), 3, 6, 2, seed=3), 12, out_dir)


def test_the_command_line_runs_a_tiny_league_and_rate_only_recomputes_it(tmp_path, capsys):
    assert {"random", "greedy"} <= set(policy_names())
    assert dominoes(["league", *TINY, "--out", str(tmp_path), "--workers", "2"]) == 0
    printed = capsys.readouterr().out
    files = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert set(files) == {"results.jsonl", "ratings.md", "ratings.csv", "ratings.png"}
    assert files["ratings.png"].startswith(b"\x89PNG")
    header = files["ratings.csv"].decode().splitlines()[0].split(",")
    assert header[:1] == ["policy"] and {"elo", "mu", "sigma", "ordinal", "mean_pips", "won", "games"} <= set(header)
    assert len(files["ratings.csv"].decode().splitlines()) == 3
    assert "| policy |" in files["ratings.md"].decode() and "greedy" in printed and "random" in printed
    assert len(read_results(results_path(tmp_path)).records) == 12
    run_tiny_league(tmp_path / "api")
    assert (tmp_path / "api" / "results.jsonl").read_bytes() == files["results.jsonl"]

    for name in ("ratings.md", "ratings.csv", "ratings.png"):
        (tmp_path / name).unlink()
    assert f"wrote {results_path(tmp_path)}, " in printed  # the run wrote it
    assert dominoes(["league", "--rate-only", str(tmp_path)]) == 0
    rated = capsys.readouterr().out
    assert printed_table(rated) == printed_table(printed)
    assert f"wrote {tmp_path / 'ratings.md'}, " in rated and f"(from {results_path(tmp_path)})" in rated
    assert f"wrote {results_path(tmp_path)}" not in rated  # --rate-only only reads it
    assert (tmp_path / "ratings.md").read_bytes() == files["ratings.md"]
    assert (tmp_path / "ratings.csv").read_bytes() == files["ratings.csv"]
    assert (tmp_path / "ratings.png").exists()


def printed_table(output: str) -> str:
    start = output.index("\npolicy ")
    return output[start:output.index("\n\n", start)]


def test_the_plotting_library_is_imported_in_a_thread_once_the_games_start(tmp_path, monkeypatch):
    """The report's matplotlib import (0.3 s) overlaps the workers' games: a thread starts it when
    the first game comes back, once; the report then asks for it again (already imported)."""
    import threading

    from baselines.league import plot

    callers = []
    real = plot.import_plotting

    def recording():
        callers.append(threading.current_thread().name)
        return real()

    monkeypatch.setattr(plot, "import_plotting", recording)
    assert dominoes(["league", *TINY, "--out", str(tmp_path), "--workers", "2"]) == 0
    assert sorted(callers) == ["MainThread", "import-plotting"]
    assert (tmp_path / "ratings.png").read_bytes().startswith(b"\x89PNG")
    assert dominoes(["league", "--rate-only", str(tmp_path)]) == 0  # no games played: no thread
    assert sorted(callers) == ["MainThread", "MainThread", "import-plotting"]


@pytest.mark.parametrize("arguments, message", [
    (["--policies", "no_such_policy:4", "random:4"], "unknown policy 'no_such_policy'; known policies"),
    (["--games", "0"], "--games must be an integer from 1 to 10000000, got 0"),
    (["--games", "-5"], "--games must be an integer from 1 to 10000000, got -5"),
    (["--games", str(10**11)], "--games must be an integer from 1 to 10000000"),
    (["--policies", "random:2"], "need at least 4 league entries"),
    (["--policies", "random:100000000000"], "copies of 'random:100000000000' must be an integer from 1 to 1000"),
    (["--policies", "best_line(max_line_length=1000000000000):4"], "max_line_length must be an integer from 1 to 55"),
    (["--policies", "random(seed=5):4"], "seed cannot be set per policy"),
    (["--policies", "td_lambda(epsilon=x):4"], "epsilon must be a finite number"),
    (["--workers", "0"], "--workers must be an integer from 1 to 1024, got 0"),
    (["--hands-per-game", "0"], "--hands-per-game must be an integer from 1 to 1000, got 0"),
    (["--hands-per-game", str(10**15)], "--hands-per-game must be an integer from 1 to 1000"),
    (["--players", "9"], "--players must be an integer from 2 to 8, got 9"),
    (["--highest", "19"], "--highest must be an integer from 6 to 18, got 19"),
    (["--seed", "-1"], "--seed must be an integer from 0"),
])
def test_bad_command_lines_are_clear_errors(tmp_path, capsys, arguments, message):
    assert dominoes(["league", *arguments, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("dominoes league: error: ") and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_an_unwritable_output_directory_is_a_clear_error(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert dominoes(["league", *TINY, "--out", str(blocker / "league")]) == 2
    assert "--out " in (err := capsys.readouterr().err) and "league: cannot be created: Not a directory" in err


def test_a_corrupted_results_file_stops_the_command_and_keeps_every_game(tmp_path, capsys):
    run_tiny_league(tmp_path)
    path = results_path(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[5] = lines[5][:20] + b"###" + lines[5][20:]
    path.write_bytes(b"".join(lines))
    damaged = path.read_bytes()
    capsys.readouterr()
    assert dominoes(["league", *TINY, "--games", "20", "--out", str(tmp_path)]) == 2
    assert f"{path}, line 6: not a valid game record" in capsys.readouterr().err
    assert dominoes(["league", "--rate-only", str(tmp_path)]) == 2
    assert path.read_bytes() == damaged


def test_another_league_in_the_output_directory_is_refused(tmp_path, capsys):
    run_tiny_league(tmp_path)
    before = results_path(tmp_path).read_bytes()
    assert dominoes(["league", *TINY, "--seed", "4", "--out", str(tmp_path)]) == 2
    assert "holds a different league" in capsys.readouterr().err
    assert results_path(tmp_path).read_bytes() == before


def test_a_killed_command_resumes_without_losing_or_replaying_a_game(tmp_path):
    arguments = ["league", "--policies", "random:2", "greedy:2", "--players", "2", "--highest", "6",
                 "--hands-per-game", "3", "--games", "150", "--workers", "1", "--no-progress"]
    killed, whole = tmp_path / "killed", tmp_path / "whole"
    process = subprocess.Popen([sys.executable, "-m", "baselines.cli", *arguments, "--out", str(killed)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        path = results_path(killed)
        if path.exists() and path.read_bytes().count(b"\n") > 20:
            break
        time.sleep(0.005)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    kept = read_results(results_path(killed)).records
    assert 20 <= len(kept) < 150, "the run should have been killed mid-way"
    spec = make_spec(parse_policy_arguments(["random:2", "greedy:2"]), 2, 6, 3, seed=0)
    played = []
    run_league(spec, 150, killed, workers=1, on_game=played.append)
    assert [r.game for r in played] == list(range(len(kept), 150))
    run_league(spec, 150, whole, workers=1)
    assert results_path(killed).read_bytes() == results_path(whole).read_bytes()


# ------------------------------------------------------------------ Ray
@pytest.mark.slow
def test_the_ray_backend_gives_the_same_results_as_the_local_one(tmp_path):
    ray = pytest.importorskip("ray")
    spec = make_spec(parse_policy_arguments(["random:2", "greedy:2", "double:1"]), 4, 6, 2, seed=9)
    run_league(spec, 16, tmp_path / "local", workers=1)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        run_league(spec, 16, tmp_path / "ray", backend="ray")
    finally:
        ray.shutdown()
    assert results_path(tmp_path / "ray").read_bytes() == results_path(tmp_path / "local").read_bytes()


def test_rate_only_skips_an_unfinished_last_line_and_says_so(tmp_path, capsys, monkeypatch):
    run_tiny_league(tmp_path)
    path = results_path(tmp_path)
    complete = path.read_bytes()
    path.write_bytes(complete + b'{"game":12,"se')
    monkeypatch.setattr("baselines.league.plot.plot_ratings", lambda ratings, path: None)  # no figure needed
    assert dominoes(["league", "--rate-only", str(tmp_path)]) == 0
    assert "ends with an unfinished line" in capsys.readouterr().err
    assert "12 games" in (tmp_path / "ratings.md").read_text()
    assert path.read_bytes() == complete + b'{"game":12,"se'  # rating never rewrites the data


def test_a_failing_game_names_the_game_and_its_players(tmp_path, monkeypatch):
    def broken(env, policies, seed):
        raise ValueError("illegal action 999")

    monkeypatch.setattr("baselines.league.games.play_game", broken)
    with pytest.raises(LeagueError, match=r"game 0 of the league \(seats: \['league_test_.*illegal action 999"):
        run_league(SPEC, 3, tmp_path, workers=1)
    assert read_results(results_path(tmp_path)).records == ()


def test_a_pool_worker_dies_on_sigterm_whatever_handler_the_parent_left():
    """Ray's driver leaves a Python SIGTERM handler behind (it raises SystemExit); a forked worker
    that inherits it and waits on the pool's queue lock, which terminate() holds, outlived the
    pool's SIGTERM in a CI run and held the league for ever. A worker takes SIGTERM's default
    action: checked in a child process whose parent handler swallows the signal."""
    code = ("import os, signal, time; signal.signal(signal.SIGTERM, lambda *_: None)\n"
            "from baselines.harness.parallel import init_worker\n"
            "init_worker(); os.kill(os.getpid(), signal.SIGTERM); time.sleep(30); print('survived')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGTERM and "survived" not in done.stdout


def test_the_league_says_what_it_will_play_and_that_it_resumes(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("baselines.league.plot.plot_ratings", lambda ratings, path: None)  # no figure needed
    assert dominoes(["league", *TINY, "--out", str(tmp_path), "--workers", "1"]) == 0
    first = capsys.readouterr().out
    assert f"playing 12 games of 2 hands into {results_path(tmp_path)}" in first and "resuming" not in first
    more = [*TINY[:TINY.index("--games")], "--games", "200", *TINY[TINY.index("--games") + 2:]]
    assert dominoes(["league", *more, "--out", str(tmp_path), "--workers", "1"]) == 0
    second = capsys.readouterr().out
    assert f"resuming: 12 of the 200 games are in {results_path(tmp_path)} already; playing 188 games" in second
    assert "--games 20 for a first look" in second
