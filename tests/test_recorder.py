"""A run's log.csv, written one way for every learner (baselines.learning.recorder.RunLog): rows on
disk as they come, the rows a resumed run keeps written back in their own text, the wall time
across sessions, a damaged log refused in one line; and the shared learners' recorder, which
keeps every earlier row when it resumes."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest
from conftest import interrupt_at

from baselines.learning import recorder
from baselines.learning.recorder import LOG_COLUMNS, Learner, RunLog, RunRecorder
from dominoes_env import files

COLUMNS = ("steps", "kind", "opponent", "margin", "elapsed_s")


def written(path: Path) -> list[str]:
    return path.read_text().splitlines()


def test_a_fresh_log_holds_the_header_and_each_row_as_it_comes(tmp_path):
    log = RunLog(tmp_path / "log.csv", COLUMNS)
    log.start()
    assert written(tmp_path / "log.csv") == [",".join(COLUMNS)]
    log.append({"steps": 100, "kind": "eval", "opponent": "greedy", "margin": "1.5e+05", "not_a_column": 1})
    log.append({"steps": 200, "kind": "train", "opponent": "self", "margin": None})
    lines = written(tmp_path / "log.csv")
    assert lines[1].startswith("100,eval,greedy,1.5e+05,") and lines[2].startswith("200,train,self,,")
    # in memory as reading the file back gives it: numbers as numbers, an empty cell as ""
    assert log.rows[0]["steps"] == 100 and log.rows[0]["margin"] == 150000 and log.rows[1]["margin"] == ""
    assert isinstance(log.rows[0]["elapsed_s"], float) and "not_a_column" not in log.rows[0]
    RunLog(tmp_path / "log.csv", COLUMNS).start(keep=None)  # a run that does not resume starts afresh
    assert written(tmp_path / "log.csv") == [",".join(COLUMNS)]


def test_a_resumed_log_keeps_the_rows_it_asks_for_in_their_own_text_and_its_time_goes_on(tmp_path):
    path = tmp_path / "log.csv"
    earlier = [",".join(COLUMNS), "100,train,self,1.5e+05,12.0", "200,eval,greedy,-0.25,30.5",
               "300,train,self,0.1,45.0"]
    path.write_text("\r\n".join(earlier) + "\r\n")
    log = RunLog(path, COLUMNS)
    log.start(keep=lambda row: row["steps"] <= 200)  # PPO: repeat what followed its resume point
    assert written(path) == earlier[:3]  # written back as it was, not as the numbers would print
    assert [row["steps"] for row in log.rows] == [100, 200]
    assert 30.5 <= log.elapsed() < 30.5 + 60
    log.append({"steps": 300, "kind": "train", "opponent": "self", "margin": "0.2"})
    lines = written(path)
    assert log.rows[-1]["elapsed_s"] >= 30.5 and lines[:3] == earlier[:3] and len(lines) == 4
    everything = RunLog(path, COLUMNS)
    everything.start(keep=lambda row: True)  # the shared learners: every row goes on
    assert written(path) == lines and len(everything.rows) == 3


def test_a_log_of_other_columns_is_read_back_in_this_logs_columns(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("steps,kind,extra\n100,train,x,surplus\n200\n")
    log = RunLog(path, COLUMNS)
    log.start(keep=lambda row: True)
    assert written(path) == [",".join(COLUMNS), "100,train,,,", "200,,,,"]


def test_a_damaged_or_huge_log_is_refused_in_one_line(tmp_path, monkeypatch):
    path = tmp_path / "log.csv"
    path.write_bytes(b"steps,kind\n\xff\xfe\n")
    with pytest.raises(files.FileRefused, match=r"log.csv: is not a CSV log \(.*utf-8") as refused:
        RunLog(path, COLUMNS).start(keep=lambda row: True)
    assert "\n" not in str(refused.value)
    path.write_text("steps\n" + "1\n" * 100)
    monkeypatch.setattr(recorder, "LOG_LIMIT", 50)
    with pytest.raises(files.FileRefused, match="log.csv: is more than the 50 bytes"):
        RunLog(path, COLUMNS).start(keep=lambda row: True)
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(files.FileRefused, match="log.csv: is a FIFO"):
        RunLog(path, COLUMNS).start(keep=lambda row: True)


def recording(out: Path) -> RunRecorder:
    columns = (*LOG_COLUMNS, "hands_per_s", "elapsed_s")
    learner = Learner("sarsa", object, lambda config, args, rec: "", columns, out, "weights.json")  # type: ignore[arg-type]
    config = argparse.Namespace(hands=40, eval_opponents=("greedy",))
    return RunRecorder(out, learner, config, progress=False)  # type: ignore[arg-type]


def test_the_shared_recorder_keeps_every_earlier_row_when_it_resumes(tmp_path):
    first = recording(tmp_path)
    first.start(lambda path, model, info: None, "latest.json")
    first.on_progress({"hands": 20, "stage": "greedy", "own_pips": 3.14159, "opponent_pips": 2.5, "hands_per_s": 9.87})
    first.close()
    assert (tmp_path / "learning_curve.png").stat().st_size > 0
    second = recording(tmp_path)
    second.start(lambda path, model, info: None, "latest.json", resume=True)
    second.on_progress({"hands": 40, "stage": "greedy", "own_pips": 3.0, "opponent_pips": 2.0, "hands_per_s": 10.0})
    second.close()
    lines = written(tmp_path / "log.csv")
    assert lines[0] == ",".join((*LOG_COLUMNS, "hands_per_s", "elapsed_s"))
    assert [line.split(",")[:4] for line in lines[1:]] == [["20", "train", "greedy", "3.142"],
                                                           ["40", "train", "greedy", "3.0"]]
    assert [row["hands"] for row in second.rows] == [20, 40] and second.elapsed() >= first.rows[0]["elapsed_s"]
    third = recording(tmp_path)
    third.start(lambda path, model, info: None, "latest.json")  # not resumed: a fresh log
    assert written(tmp_path / "log.csv") == lines[:1]


SARSA = ["train", "sarsa", "--hands", "96", "--eval-every", "32", "--eval-hands", "8", "--eval-opponents",
         "greedy", "--parallel-hands", "8", "--seed", "5", "--no-progress"]


def test_a_killed_run_goes_on_from_its_last_round_and_ends_as_an_unbroken_run_does(tmp_path, monkeypatch, capsys):
    from baselines.cli import main

    assert main([*SARSA, "--out", str(tmp_path / "whole")]) == 0
    written_round = interrupt_at(monkeypatch, RunRecorder, "on_round", after=lambda _, hands, *rest: hands == 64)
    assert main([*SARSA, "--out", str(tmp_path / "broken")]) != 0  # killed once its second round is written
    monkeypatch.setattr(RunRecorder, "on_round", written_round)
    assert main([*SARSA, "--out", str(tmp_path / "broken")]) == 0
    assert "resumed after 64 hands" in capsys.readouterr().out
    whole, broken = (json.loads((tmp_path / name / "linear_sarsa.json").read_text()) for name in ("whole", "broken"))
    assert whole["weights"] == broken["weights"]  # the same weights, number for number
    logs = [[line.split(",")[:6] for line in written(tmp_path / name / "log.csv")] for name in ("whole", "broken")]
    assert logs[0] == logs[1]  # the same rows (the timings aside), none twice


def test_a_directory_of_other_settings_or_a_damaged_resume_file_is_refused_in_one_line(tmp_path, capsys):
    from baselines.cli import main

    out = tmp_path / "run"
    assert main([*SARSA, "--out", str(out)]) == 0
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    capsys.readouterr()
    assert main([*SARSA[:3], "128", *SARSA[4:], "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip()
    assert "holds a linear_sarsa run of other settings (hands)" in error and len(error.splitlines()) == 1
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before  # nothing changed
    (out / "resume.json").write_text("{not json")
    assert main([*SARSA, "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip()
    assert "resume.json cannot be resumed" in error and len(error.splitlines()) == 1
    (out / "resume.json").write_bytes(before["resume.json"])
    (out / "latest.json").write_text((out / "latest.json").read_text().replace("0", "1", 1))
    assert main([*SARSA, "--out", str(out)]) == 2
    assert "is not the file" in capsys.readouterr().err


def test_the_lookahead_resumed_within_a_stage_against_its_previous_self_ends_as_an_unbroken_run(tmp_path, monkeypatch):
    """The stage against "previous" plays the weights as they stood when it began: the resume
    point keeps them, so a run killed within that stage plays the same opponent after it."""
    from baselines.cli import main

    words = ["train", "lookahead", "--players", "2", "--highest", "6", "--hands", "48", "--curriculum",
             "random:0.34,previous:0.66", "--eval-every", "16", "--eval-hands", "4", "--eval-opponents", "random",
             "--parallel-hands", "4", "--train-samples", "2", "--train-depth", "1", "--seed", "3", "--no-progress"]
    assert main([*words, "--out", str(tmp_path / "whole")]) == 0
    # killed once the round at hand 32 is written: within the stage against its previous self, begun at hand 16
    written_round = interrupt_at(monkeypatch, RunRecorder, "on_round", after=lambda _, hands, *rest: hands == 32)
    assert main([*words, "--out", str(tmp_path / "broken")]) != 0
    monkeypatch.setattr(RunRecorder, "on_round", written_round)
    assert main([*words, "--out", str(tmp_path / "broken")]) == 0
    whole, broken = (json.loads((tmp_path / name / "lookahead.json").read_text()) for name in ("whole", "broken"))
    assert whole["weights"] == broken["weights"]
