"""What the tools refuse: paths that are not regular files, reads without a bound, values that
cannot be trusted, and games that must outlive a signal. Each case was reproduced on 0.2.0."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import ROOT
from test_league_results import SPEC, fake_record
from test_play_and_replay import play, script

import dominoes_env
from baselines import linear_sarsa
from baselines.cli import main as dominoes
from baselines.league.results import ResultsError, open_results, read_results, results_path
from dominoes_env import files
from dominoes_env.records import RecordError, read_record, write_record

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and devices are POSIX")


@contextmanager
def at_most(seconds: int) -> Iterator[None]:
    """Fail instead of hanging: the reads below used to block for ever on a FIFO."""
    def expired(signum: int, frame: Any) -> None:
        raise AssertionError(f"still running after {seconds} s: it hangs")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(autouse=True)
def no_test_hangs() -> Iterator[None]:
    """Every test here fails after two minutes rather than waiting on a FIFO for ever."""
    with at_most(120):
        yield


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


@pytest.fixture
def device(tmp_path) -> Path:
    """A character device to refuse. Root (CI) gets its own copy of /dev/null in tmp_path: a writer
    that regressed would replace that copy, never the machine's /dev/null (0.2.0 did replace it).
    Anyone else gets /dev/null itself, which they cannot replace."""
    if os.geteuid() != 0:
        return Path("/dev/null")
    path = tmp_path / "null"
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return path


@pytest.fixture
def link(tmp_path) -> Path:
    """A symbolic link to a file that must stay as it is."""
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    path = tmp_path / "link.json"
    path.symlink_to(target)
    return path


def unchanged(path: Path, kind: str) -> bool:
    return files.existing_kind(path) == kind


@pytest.fixture(scope="module")
def game(tmp_path_factory):
    """A finished one-hand record, as data."""
    out = tmp_path_factory.mktemp("game")
    play(script(), out)
    return json.loads((out / "game.json").read_text())


# ------------------------------------------------------------------ files the tools write
@pytest.mark.parametrize("target", ["device", "fifo", "link"])
def test_play_refuses_a_record_path_that_is_not_a_regular_file_before_the_game(target, request, capsys):
    path = request.getfixturevalue(target)
    kind = files.existing_kind(path)
    assert dominoes(["play", "--opponents", "random", "--record", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dominoes play: error: --record {path}: is {kind}") and err.count("\n") == 1
    assert unchanged(path, kind)
    if target == "link":
        assert path.resolve().read_text() == "keep me"


def test_play_refuses_a_record_in_a_directory_that_takes_no_file(capsys):
    """/proc/version is a regular file in a directory where no file can be created: refused before
    the game, where it used to be lost after the whole game."""
    assert dominoes(["play", "--opponents", "random", "--record", "/proc/version"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dominoes play: error: --record /proc/version: cannot write a file in '/proc'")


def test_replay_refuses_a_gif_or_png_path_that_is_not_a_regular_file(tmp_path, fifo, link, device, capsys, game):
    record = tmp_path / "game.json"
    record.write_text(json.dumps(game))
    for arguments, message in [(["--gif", str(fifo)], f"--gif {fifo}: is a FIFO (named pipe)"),
                               (["--gif", str(link)], f"--gif {link}: is a symbolic link"),
                               (["--gif", str(device)], f"--gif {device}: is a character device"),
                               (["--png-dir", str(device)], f"--png-dir {device}: is a character device, not a "
                                                            "directory")]:
        assert dominoes(["replay", str(record), *arguments]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"dominoes replay: error: {message}"), err
    assert unchanged(fifo, "a FIFO (named pipe)") and unchanged(link, "a symbolic link")
    assert unchanged(device, "a character device")


def test_a_league_refuses_an_out_directory_whose_files_are_not_regular_before_playing(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "results.jsonl")
    assert dominoes(["league", "--policies", "random:4", "--games", "2", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dominoes league: error: --out {out}: results.jsonl in it is a FIFO (named pipe)")
    (out / "results.jsonl").unlink()
    (out / "ratings.md").symlink_to(tmp_path / "elsewhere.md")
    assert dominoes(["league", "--policies", "random:4", "--games", "2", "--out", str(out)]) == 2
    assert "ratings.md in it is a symbolic link" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["ratings.md"]  # nothing played, nothing written


def test_a_league_refuses_a_device_as_its_record_directory(tmp_path, device, capsys):
    assert dominoes(["league", "--policies", "random:4", "--games", "2", "--out", str(tmp_path / "out"),
                     "--record-games", str(device)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dominoes league: error: --record-games {device}: is a character device, not a directory")
    assert unchanged(device, "a character device")


def test_training_refuses_outputs_that_are_not_regular_files_before_it_trains(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    os.mkfifo(run / "log.csv")
    arguments = ["train", "sarsa", "--players", "2", "--highest", "6", "--hands", "8", "--eval-every", "0",
                 "--eval-hands", "2", "--no-progress", "--out", str(run)]
    assert dominoes(arguments) == 2
    assert f"--out {run}: log.csv in it is a FIFO (named pipe)" in capsys.readouterr().err
    (run / "log.csv").unlink()
    (run / "linear_sarsa.json").symlink_to(tmp_path / "elsewhere.json")
    assert dominoes(arguments) == 2
    assert "linear_sarsa.json in it is a symbolic link" in capsys.readouterr().err
    assert sorted(p.name for p in run.iterdir()) == ["linear_sarsa.json"]


def test_every_writer_replaces_only_regular_files(tmp_path, fifo, link, device, game):
    recorded = dominoes_env.records.parse_record(game)
    for path, kind in [(fifo, "a FIFO (named pipe)"), (link, "a symbolic link"), (tmp_path, "a directory"),
                       (device, "a character device")]:
        with pytest.raises(files.FileRefused, match=re.escape(f"{path}: is {kind}")):
            write_record(recorded, path)
        with pytest.raises(files.FileRefused, match=re.escape(f"{path}: is {kind}")):
            files.write_atomically(path, b"data")
        assert unchanged(path, kind)
    assert link.resolve().read_text() == "keep me"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []  # no temporary file left


def test_the_game_record_wrapper_refuses_an_episode_file_that_is_a_link(tmp_path, link):
    (tmp_path / "episode_000000.json").symlink_to(link.resolve())
    env = dominoes_env.records.RecordGames(dominoes_env.raw_env(2, 6), directory=tmp_path)
    env.reset(seed=0)
    with pytest.raises(files.FileRefused, match="episode_000000.json: is a symbolic link"):
        env.close()
    assert link.resolve().read_text() == "keep me"


def test_pictures_are_written_only_over_regular_files(fifo):
    pytest.importorskip("PIL")
    from dominoes_env.image import save_gif, save_png

    frame = np.zeros((4, 4, 3), dtype=np.uint8)
    with pytest.raises(files.FileRefused, match="is a FIFO"):
        save_png(frame, fifo)
    with pytest.raises(files.FileRefused, match="is a FIFO"):
        save_gif([frame], fifo, 2.0)


# ------------------------------------------------------------------ files the tools read
#: Every reader of a file, run in a child process whose memory is capped (3 GiB of address space):
#: /dev/zero used to fill the memory and a FIFO to block for ever, so a regression fails the
#: test, by MemoryError or the time-out, instead of taking the machine down.
READERS = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
from baselines import linear_sarsa, td_lambda
from baselines.league.results import read_results
from baselines.policies.registry import make_policy
from dominoes_env.records import read_record

path = sys.argv[1]
for read in [lambda: read_record(path), lambda: read_results(path), lambda: linear_sarsa.load_weights(path),
             lambda: make_policy("linear_sarsa", 4, 9, checkpoint=path),
             lambda: make_policy("lookahead", 4, 9, checkpoint=path), lambda: td_lambda.load_checkpoint(path),
             lambda: make_policy("td_lambda", 4, 9, checkpoint=path)]:
    try:
        read()
    except BaseException as error:
        print(type(error).__name__, str(error), flush=True)
from baselines.cli import main
print("replay exit status", main(["replay", path]))
"""


@pytest.mark.parametrize("source", ["fifo", "/dev/zero"])
def test_every_reader_refuses_what_is_not_a_regular_file_without_hanging(source, request):
    pytest.importorskip("safetensors")
    path = Path(source) if source.startswith("/") else request.getfixturevalue(source)
    kind = files.existing_kind(path)
    child = subprocess.run([sys.executable, "-c", READERS, str(path)], capture_output=True, text=True, timeout=100,
                           cwd=ROOT)
    assert child.returncode == 0, child.stderr[-2000:]
    refusals = child.stdout.splitlines()
    assert refusals == [
        f"RecordError record {path}: is {kind}, not a regular file; not a game record",
        f"ResultsError {path} is {kind}, not a regular file; a league's results file is written by dominoes league "
        f"--out DIR",
        f"ValueError linear_sarsa weights '{path}' is {kind}, not a regular file",
        f"ValueError linear_sarsa weights '{path}' is {kind}, not a regular file",
        f"ValueError lookahead weights '{path}' is {kind}, not a regular file",
        f"ValueError td_lambda checkpoint '{path}' is {kind}, not a regular file",
        f"ValueError td_lambda checkpoint '{path}' is {kind}, not a regular file",
        "replay exit status 2",
    ]
    assert child.stderr == f"dominoes replay: error: record {path}: is {kind}, not a regular file; not a game record\n"


def test_reads_are_bounded_whatever_the_file_says(tmp_path):
    huge = tmp_path / "huge"
    with open(huge, "wb") as handle:
        handle.truncate(40 * 2**20)  # 40 MiB of zeros, sparse
    with pytest.raises(RecordError, match="more than the 33,554,432 bytes"):
        read_record(huge)
    with pytest.raises(files.FileRefused, match="more than the 10 bytes"):
        files.read_regular_file(huge, 10)
    with pytest.raises(ResultsError, match="line 1: longer than 1,048,576 bytes"):
        read_results(huge)  # one line of 40 MiB: read 1 MiB of it, no more


def test_a_results_line_that_turns_a_seat_out_into_a_blocked_hand_is_refused(tmp_path):
    """Rule 10: only the holder of (0|0) scores 0 without going out, so a blocked hand has at most
    one seat on 0 pips, and none in the hand whose engine is (0|0)."""
    record = fake_record(SPEC, 2)
    line = json.loads(record.to_line())
    line["hand_scores"], line["went_out"] = [[0, 0, 5], [1, 2, 3]], [None, None]
    line["totals"] = [1, 2, 8]
    _, writer = open_results(tmp_path, SPEC)
    writer.close()
    with open(results_path(tmp_path), "a") as handle:
        handle.write(json.dumps(line) + "\n")
    with pytest.raises(ResultsError, match="went_out is null \\(blocked\\) but 2 seat\\(s\\) hold 0 pips"):
        read_results(results_path(tmp_path))


def test_a_blocked_hand_of_the_engine_zero_hand_has_no_seat_on_zero(tmp_path):
    from baselines.league.spec import LeagueSpec
    from baselines.policies.specs import PolicySpec

    spec = LeagueSpec(((PolicySpec("random"), 3),), dominoes_env.make_config(3, 6), 7, 11)  # the 7th engine is (0|0)
    record = json.loads(fake_record(spec, 0).to_line())
    record["hand_scores"][6] = [0, 4, 9]
    record["went_out"] = [None] * 7
    record["totals"] = [sum(column) for column in zip(*record["hand_scores"])]
    _, writer = open_results(tmp_path, spec)
    writer.close()
    with open(results_path(tmp_path), "a") as handle:
        handle.write(json.dumps(record) + "\n")
    with pytest.raises(ResultsError, match="and the engine is \\(0\\|0\\)"):
        read_results(results_path(tmp_path))


# ------------------------------------------------------------------ linear weights files
@pytest.fixture
def weights(tmp_path) -> dict:
    return json.loads(linear_sarsa.shipped_weights(dominoes_env.make_config(4, 9)).read_text())


def _saved(tmp_path: Path, content: dict) -> Path:
    path = tmp_path / "weights.json"
    path.write_text(json.dumps(content))
    return path


@pytest.mark.parametrize("value", ["1" + "0" * 400, "1e308", "-1e308", "1e7", "1e400", "NaN"])
def test_weights_beyond_the_bound_are_refused_when_loaded(tmp_path, weights, value):
    weights["weights"]["bias"] = "BIAS"
    path = tmp_path / "weights.json"
    path.write_text(json.dumps(weights).replace('"BIAS"', value))  # a JSON number Python's json cannot write
    with pytest.raises(ValueError, match=r"not finite numbers within \+-1e\+06: \['bias'\]"):
        linear_sarsa.load_weights(path)


def test_weights_in_memory_are_bounded_too():
    config = linear_sarsa.LinearSarsaConfig()
    with pytest.raises(ValueError, match="exceed 1e\\+06 in magnitude"):
        linear_sarsa.Weights(np.full(len(linear_sarsa.FEATURES), 1e308), config)


def test_evaluate_with_huge_weights_is_one_line_not_a_traceback(tmp_path, weights, capsys):
    weights["weights"] = {name: 1e308 for name in weights["weights"]}
    path = _saved(tmp_path, weights)
    assert dominoes(["evaluate", f"linear_sarsa@{path}", "random:3", "--hands", "4"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not finite numbers within +-1e+06" in err


@pytest.mark.parametrize("change, message", [
    (lambda config: config.pop("epsilon"), r"missing configuration field\(s\) \['epsilon'\]"),
    (lambda config: config.update(curriculum=[["nobody", 1.0]]), r"unknown opponent\(s\) \['nobody'\]"),
    (lambda config: config.update(eval_opponents=["nobody"]), r"unknown opponent\(s\) \['nobody'\]"),
    (lambda config: config.update(curriculum=[["random+self", 1.0]]), "can only be a whole curriculum stage"),
])
def test_a_weights_configuration_is_validated_fully(tmp_path, weights, change, message):
    change(weights["config"])
    with pytest.raises(ValueError, match=message):
        linear_sarsa.load_weights(_saved(tmp_path, weights))


def test_a_lookahead_configuration_keeps_its_own_special_stages(tmp_path):
    from baselines.lookahead import weights as lookahead_weights

    shipped = lookahead_weights.shipped_weights(dominoes_env.make_config(4, 9))
    content = json.loads(shipped.read_text())
    assert ["previous", 0.3] in content["config"]["curriculum"]
    loaded = lookahead_weights.load_weights(shipped).config.curriculum
    assert loaded == tuple(map(tuple, content["config"]["curriculum"]))


# ------------------------------------------------------------------ game records
@pytest.mark.parametrize("change, message", [
    (lambda data: data.update(version=True), "format version True"),
    (lambda data: data.update(version=1.0), "format version 1.0"),
    (lambda data: data["hands"][0].update(engine=float(data["hands"][0]["engine"])), "engine 6.0"),
    (lambda data: data["hands"][0].update(went_out=True if data["hands"][0]["went_out"] == 1 else 1.0),
     "went_out must be an integer"),
    (lambda data: data.update(players=["\x1b[31mred", "b", "c"]), "printable characters"),
    (lambda data: data.update(players=["line\nbreak", "b", "c"]), "printable characters"),
])
def test_a_record_holds_integers_as_integers_and_printable_names(tmp_path, game, change, message):
    data = json.loads(json.dumps(game))
    change(data)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(data))
    with pytest.raises(RecordError, match=message):
        read_record(path)


# ------------------------------------------------------------------ a game in progress
def test_an_answer_of_any_length_is_not_a_move_and_is_asked_again(tmp_path):
    finished, out = play(script("9" * 5000, "²", "0" * 3000 + "1", then="1"), tmp_path)
    assert finished
    assert out.count("is not a move") == 2  # the long one is cut in the message, and '²' is no digit here
    assert "9" * 100 not in out


def test_ctrl_c_during_start_up_is_one_line_and_130(monkeypatch, capsys):
    def interrupted(name: str) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr("baselines.cli.importlib.import_module", interrupted)
    assert dominoes(["play"]) == 130
    assert capsys.readouterr().err == "\ndominoes play: interrupted\n"


def _play_until_the_prompt(record: Path, hands: int) -> subprocess.Popen:
    """`dominoes play` in a child process, waiting at its first prompt (stdin open, never written)."""
    child = subprocess.Popen([sys.executable, "-c", "import sys; from baselines.cli import main; sys.exit(main())",
                              "play", "--opponents", "random", "--hands", str(hands), "--seed", "3",
                              "--record", str(record)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, cwd=ROOT)
    assert child.stdout is not None
    seen = b""
    deadline = time.monotonic() + 120
    while b"your move" not in seen:
        assert time.monotonic() < deadline and child.poll() is None, seen.decode()[-2000:]
        seen += child.stdout.read1(4096)
    return child


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_at_the_prompt_keep_the_record(tmp_path, signum):
    record = tmp_path / "game.json"
    child = _play_until_the_prompt(record, hands=2)
    child.send_signal(signum)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 128 + signum
    assert err.decode().strip().endswith(f"dominoes play: stopped by {signal.Signals(signum).name}")
    kept = read_record(record)
    assert not kept.finished and kept.hands[0].deal  # the first hand, dealt and unfinished, is kept


# ------------------------------------------------------------------ the README's test command and the registries
def test_the_test_extra_installs_no_torch():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    test_extra = project["project"]["optional-dependencies"]["test"]
    assert not any(requirement.startswith("torch") for requirement in test_extra)
    assert "not torch" in project["tool"]["pytest"]["ini_options"]["addopts"]


def test_gymnasium_makes_the_env_in_a_fresh_interpreter_and_the_docs_say_how():
    code = ("import gymnasium; env = gymnasium.make('dominoes_env:dominoes_env/Dominoes-v0'); "
            "print(env.reset(seed=0)[0].shape)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() \
        == "(479,)"
    code = ("import dominoes_env, pettingzoo; env = pettingzoo.make('aec', 'dominoes/dominoes-v1'); "
            "env.reset(seed=0); print(env.agent_selection)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() \
        .startswith("player_")
    start_here = (ROOT / "docs" / "quickstart.md").read_text()  # the README links to it
    assert "gymnasium.make(\"dominoes_env:dominoes_env/Dominoes-v0\")" in start_here
    assert "import dominoes_env` first" in start_here


@pytest.mark.parametrize("text", ["td_lambda@/tmp/a\x1b[31mb", "td_lambda@/tmp/a\nb", "linear_sarsa@w\tx.json"])
def test_a_policy_spec_with_control_characters_is_refused_so_no_label_reaches_a_terminal_raw(text):
    """Labels are printed in ratings tables and kept in records and results headers."""
    from baselines.policies.specs import SpecError, parse

    with pytest.raises(SpecError, match="a spec is printable text"):
        parse(text)
