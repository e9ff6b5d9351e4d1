"""Training the beliefs network (torch): a short run learns (its held-out score beats the uniform
kind's on positions it never saw), the command writes weights that the beliefs load, with its
log and curve, and refuses bad options in one line before playing anything."""

from __future__ import annotations

import csv

import numpy as np
import pytest

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from conftest import interrupt_at  # noqa: E402

import dominoes_env  # noqa: E402
from baselines.cli import main as dominoes  # noqa: E402
from baselines.inference.beliefs import NetworkBeliefs  # noqa: E402
from baselines.inference.data import self_play_positions  # noqa: E402
from baselines.inference.network import load_weights  # noqa: E402
from baselines.inference.train import TrainingSettings, split_by_hand, train  # noqa: E402


def test_a_short_run_learns_what_the_uniform_kind_does_not_know():
    config = dominoes_env.make_config(4, 9)
    torch.set_num_threads(1)
    positions = self_play_positions(config, 60_000, seed=3)
    rows = []
    weights = train(config, positions, TrainingSettings(hidden=(128,), epochs=3, learning_rate=3e-3, seed=3),
                    rows.append)
    assert rows[-1]["best_held_out_log_p"] > rows[-1]["held_out_uniform_log_p"] + 0.002  # learned: 0.0034 here
    training, held = split_by_hand(positions, 0.05)
    assert not set(positions.hands[training]) & set(positions.hands[held])  # held-out hands are whole hands
    beliefs = weights.beliefs(positions.observations[held[:64]], positions.marginals[held[:64]].astype(np.float64))
    hidden = positions.marginals[held[:64]].sum(axis=2) > 0
    assert np.allclose(beliefs.sum(axis=2)[hidden], 1.0) and not beliefs[~hidden].any()


def test_the_command_writes_weights_the_beliefs_load(tmp_path, capsys):
    out = tmp_path / "run"
    assert dominoes(["train", "beliefs", "--players", "3", "--highest", "6", "--player", "greedy", "--positions",
                     "3000", "--hidden", "32", "--epochs", "1", "--seed", "4", "--out", str(out)]) == 0
    config = dominoes_env.make_config(3, 6)
    weights = load_weights(out / "beliefs_3p_d6.safetensors", config)
    assert weights.info["command"].startswith("dominoes train beliefs --players 3 --highest 6 --seed 4")
    assert "--player greedy" in weights.info["command"]
    assert weights.info["positions"] >= 3000 and (out / "learning_curve.png").stat().st_size > 1000
    with open(out / "log.csv") as file:
        logged = list(csv.DictReader(file))
    assert logged and float(logged[-1]["epoch"]) == 1.0
    beliefs = NetworkBeliefs(config, out / "beliefs_3p_d6.safetensors")
    env = dominoes_env.raw_env(config)
    env.reset(seed=1)
    beliefs.observe(env.observe(env.agent_selection)["observation"])
    assert np.allclose(beliefs.probabilities().sum(axis=1)[beliefs.knowledge.hidden], 1.0)


@pytest.mark.parametrize("arguments, message", [
    (["--positions", "0"], "--positions must be an integer from 1 to"),
    (["--keep", "0"], "--keep must be"),
    (["--player", "oracle"], "sees every hand"),
    (["--player", "nosuch"], "nosuch"),
    (["--players", "3", "--highest", "6", "--boneyard"], "named for the rule book's game or the Mexican Train rules"),
])
def test_bad_options_are_one_line_before_anything_is_played(arguments, message, tmp_path, capsys):
    out = tmp_path / "run"
    assert dominoes(["train", "beliefs", *arguments, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err
    assert not out.exists()


def test_bad_widths_are_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as stopped:
        dominoes(["train", "beliefs", "--hidden", "0"])
    assert stopped.value.code == 2 and "widths from 1 to 4096" in capsys.readouterr().err


def test_init_starts_from_a_file_s_weights_and_refuses_other_widths_in_one_line(tmp_path, capsys):
    first = tmp_path / "first"
    common = ["train", "beliefs", "--players", "3", "--highest", "6", "--player", "greedy", "--positions", "3000",
              "--epochs", "1", "--seed", "4"]
    assert dominoes([*common, "--hidden", "32", "--out", str(first)]) == 0
    config = dominoes_env.make_config(3, 6)
    started = load_weights(first / "beliefs_3p_d6.safetensors", config)
    positions = self_play_positions(config, 2000, seed=9, player="greedy")
    still = train(config, positions, TrainingSettings(hidden=(32,), epochs=1, learning_rate=1e-7, seed=9),
                  init=started)  # a step size of 1e-7: the weights stay the file's
    for (weight, bias), (kept, kept_bias) in zip(started.layers, still.layers):
        assert np.allclose(weight, kept, atol=1e-4) and np.allclose(bias, kept_bias, atol=1e-4)
    capsys.readouterr()
    second = tmp_path / "second"
    assert dominoes([*common, "--hidden", "64", "--init", str(first / "beliefs_3p_d6.safetensors"),
                     "--out", str(second)]) == 2
    err = capsys.readouterr().err.strip()
    assert "give --hidden 32" in err and len(err.splitlines()) == 1 and not second.exists(), err


BELIEFS_RUN = ["train", "beliefs", "--players", "3", "--highest", "6", "--player", "greedy", "--positions", "3000",
               "--hidden", "32", "--epochs", "3", "--batch-size", "128", "--dropout", "0.2", "--seed", "4",
               "--no-progress"]


def _log_rows(out):
    """The log's rows, the training time left out (a resumed run's differs)."""
    with open(out / "log.csv", newline="") as handle:
        return [{key: value for key, value in row.items() if key != "seconds"} for row in csv.DictReader(handle)]


@pytest.mark.parametrize("killed_at", ["after writing epoch 1", "before writing epoch 2"])
def test_a_killed_run_plays_the_same_positions_again_and_ends_with_the_unbroken_run_s_weights(tmp_path, monkeypatch,
                                                                                               capsys, killed_at):
    """Killed once the resume file holds epoch 1 (the log holding epoch 1's rows, or epoch 2's too), the
    same command plays the same positions (their checksum is part of the settings), goes on after
    epoch 1 and ends with the unbroken run's weights and log, the dropout's draws included."""
    from baselines.inference import cli

    whole, killed = tmp_path / "whole", tmp_path / "killed"
    assert dominoes([*BELIEFS_RUN, "--out", str(whole)]) == 0
    write = interrupt_at(monkeypatch, cli, "save_torch_resume", before=lambda *args: args[-1]["epoch"] == 2,
                         after=lambda *args: killed_at == "after writing epoch 1")
    assert dominoes([*BELIEFS_RUN, "--out", str(killed)]) != 0
    assert not (killed / "beliefs_3p_d6.safetensors").exists()
    last = float(_log_rows(killed)[-1]["epoch"])
    assert last == (1.0 if killed_at == "after writing epoch 1" else 2.0)
    monkeypatch.setattr(cli, "save_torch_resume", write)
    capsys.readouterr()
    assert dominoes([*BELIEFS_RUN, "--out", str(killed)]) == 0
    assert "going on after epoch 1" in capsys.readouterr().out
    assert _log_rows(killed) == _log_rows(whole) and float(_log_rows(whole)[-1]["epoch"]) == 3.0
    config = dominoes_env.make_config(3, 6)
    first = load_weights(whole / "beliefs_3p_d6.safetensors", config)
    second = load_weights(killed / "beliefs_3p_d6.safetensors", config)
    assert all(np.array_equal(mine, theirs) for ours, resumed in zip(first.layers, second.layers)
               for mine, theirs in zip(ours, resumed))
    assert first.info["held_out_log_p"] == second.info["held_out_log_p"]


def test_a_directory_holding_a_run_of_other_settings_or_a_damaged_resume_file_is_refused_in_one_line(tmp_path,
                                                                                                     capsys):
    out = tmp_path / "run"
    run = ["train", "beliefs", "--players", "3", "--highest", "6", "--player", "greedy", "--positions", "2000",
           "--hidden", "16", "--epochs", "1", "--seed", "4", "--no-progress", "--out", str(out)]
    assert dominoes([*run, "--save-data", str(tmp_path / "positions.npz")]) == 0
    assert dominoes([*run, "--data", str(tmp_path / "positions.npz")]) == 0  # the same positions: the same run
    assert "going on after epoch 1" in capsys.readouterr().out
    log = (out / "log.csv").read_text()
    capsys.readouterr()
    for other in (["--dropout", "0.1"], ["--seed", "5"], ["--keep", "0.5"]):
        assert dominoes([*run, *other]) == 2
        err = capsys.readouterr().err.strip()
        assert "holds a run of another configuration" in err and len(err.splitlines()) == 1, err
    assert (out / "log.csv").read_text() == log  # refused before anything is written
    (out / "resume.pt").write_bytes(b"not a resume file")
    assert dominoes(run) == 2
    err = capsys.readouterr().err.strip()
    assert "cannot be resumed" in err and len(err.splitlines()) == 1, err
