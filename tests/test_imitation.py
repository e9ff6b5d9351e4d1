"""Behaviour cloning: a dataset read back as rows (checked, refused in one line when damaged or
foreign) and ``dominoes train bc`` fitting the ppo network to it."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

minari = pytest.importorskip("minari")  # the minari extra; .ci/run installs it and runs this file again

from conftest import interrupt_at  # noqa: E402

from baselines.cli import main as dominoes  # noqa: E402
from baselines.imitation import load_demonstrations  # noqa: E402
from dominoes_env.core.config import make_config  # noqa: E402
from dominoes_env.core.rewards import hand_rewards  # noqa: E402

TABLE = ["--players", "3", "--highest", "6"]


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    """Minari's datasets folder for this test alone, holding a greedy dataset of 40 hands at 3 players, double-6."""
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    written = dominoes(["dataset", "greedy", *TABLE, "--hands", "40", "--seed", "11", "--dataset-id", "tiny/greedy-v0"])
    assert written == 0
    return tmp_path / "minari"


def _one_line(capsys, status: int, message: str) -> None:
    err = capsys.readouterr().err
    assert status == 2 and message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_the_rows_are_every_move_of_every_episode_with_its_mask_and_the_hand_s_pay_in_the_mover_s_frame(root):
    data = load_demonstrations("tiny/greedy-v0")
    dataset = minari.load_dataset("tiny/greedy-v0")
    assert data.config == make_config(3, 6) and data.about["player"] == "greedy"
    assert data.rows == dataset.total_steps and data.observations.shape[1] == dataset.observation_space.shape[0]
    assert data.masks[np.arange(data.rows), data.actions].all()
    first = dataset[0]
    about = next(iter(dataset.storage.get_episode_metadata([0])))
    steps = len(first.actions)
    assert (data.observations[:steps] == first.observations[:-1]).all()
    assert (data.actions[:steps] == first.actions).all()
    paid = hand_rewards(np.asarray(about["hand_scores"]), "zero_sum")
    assert np.allclose(data.values[0], np.roll(paid, -int(about["seat"])))  # entry 0: the mover's own pay
    assert np.allclose(load_demonstrations("tiny/greedy-v0", "score").values[0, 0], first.rewards.sum())
    training, held = data.split(0.25, seed=0)
    assert set(data.hands[training]).isdisjoint(data.hands[held]) and len(set(data.hands[held])) == 10
    assert load_demonstrations("tiny/greedy-v0", episodes=5).rows == sum(
        len(episode.actions) for episode in dataset.iterate_episodes(range(5)))


def test_a_foreign_missing_or_damaged_dataset_is_refused_in_one_line(root):
    import h5py
    from gymnasium import spaces
    from minari.data_collector import EpisodeBuffer

    buffer = EpisodeBuffer(observations=np.zeros((3, 2), dtype=np.float32), actions=np.zeros(2, dtype=np.int64),
                           rewards=np.zeros(2), terminations=np.array([False, True]), truncations=np.zeros(2, bool))
    with pytest.warns(UserWarning):
        minari.create_dataset_from_buffers("someone/else-v0", [buffer], observation_space=spaces.Box(0, 1, (2,)),
                                           action_space=spaces.Discrete(2))
    with pytest.raises(ValueError, match="was not written by dominoes dataset"):
        load_demonstrations("someone/else-v0")
    with pytest.raises(ValueError, match="no such dataset"):
        load_demonstrations("tiny/nothing-v0")
    with pytest.raises(ValueError, match="--reward"):
        load_demonstrations("tiny/greedy-v0", reward="cheers")
    storage = root / "tiny" / "greedy-v0" / "data" / "main_data.hdf5"
    with h5py.File(storage, "r+") as handle:  # a move its own mask forbids
        actions = handle["episode_3"]["actions"]
        mask = handle["episode_3"]["infos"]["action_mask"][0]
        actions[0] = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(ValueError, match="episode 3 has a move its own mask forbids"):
        load_demonstrations("tiny/greedy-v0")
    storage.write_bytes(storage.read_bytes()[:5000])  # cut short
    with pytest.raises(ValueError, match="tiny/greedy-v0") as refused:
        load_demonstrations("tiny/greedy-v0")
    assert "\n" not in str(refused.value)


@pytest.mark.torch
def test_cloning_lowers_the_loss_and_the_clone_plays_the_teacher_s_moves_on_most_training_positions(root, tmp_path,
                                                                                                     capsys):
    from baselines.ppo.policy import PPOPolicy
    from baselines.ppo.run import initial_weights
    from baselines.ppo.weights import load_weights

    out = tmp_path / "bc"
    assert dominoes(["train", "bc", "--dataset", "tiny/greedy-v0", "--epochs", "12", "--batch-size", "64",
                     "--policy-head", "actions", "--hidden", "64,64", "--eval-hands", "30", "--no-progress",
                     "--out", str(out)]) == 0
    rows = [line.split(",") for line in (out / "log.csv").read_text().splitlines()]
    header, fits = rows[0], [row for row in rows[1:] if row[2] == "fit"]
    loss = [float(row[header.index("train_loss")]) for row in fits]
    assert len(fits) == 12 and loss[-1] < 0.5 * loss[0]
    assert {row[3] for row in rows[1:] if row[2] == "eval"} == {"persistent_line"}  # no td_lambda ships for 3p d6
    assert (out / "learning_curve.png").stat().st_size > 0
    weights = load_weights(out / "bc.safetensors")
    assert weights.info["teacher"] == "greedy" and "dominoes train bc" in weights.info["command"]
    data = load_demonstrations("tiny/greedy-v0")
    choosing = data.masks.sum(axis=1) > 1
    played = PPOPolicy(data.config, checkpoint=out / "bc.safetensors").act_batch(data.observations, data.masks)
    assert (played[choosing] == data.actions[choosing]).mean() > 0.85
    initial_weights(str(out / "bc.safetensors"), weights.config)  # dominoes train ppo --init takes it


@pytest.mark.torch
def test_bad_arguments_are_one_line_and_write_nothing(root, tmp_path, capsys):
    out = tmp_path / "refused"
    for arguments, message in ((["--dataset", "tiny/none-v0"], "no such dataset"),
                               (["--dataset", "bad id!"], "--dataset 'bad id!': Minari's ids"),
                               (["--dataset", "tiny/greedy-v0", "--epochs", "0"], "--epochs"),
                               (["--dataset", "tiny/greedy-v0", "--held-out", "0.9"], "--held-out"),
                               (["--dataset", "tiny/greedy-v0", "--hidden", "0"], "--hidden"),
                               (["--dataset", "tiny/greedy-v0", "--eval-opponents", "nobody"], "nobody")):
        _one_line(capsys, dominoes(["train", "bc", *arguments, "--out", str(out)]), message)
        assert not out.exists() or not any(out.iterdir())


@pytest.mark.torch
def test_init_goes_on_from_a_clone_and_refuses_another_network_in_one_line(root, tmp_path, capsys):
    common = ["train", "bc", "--dataset", "tiny/greedy-v0", "--batch-size", "64", "--policy-head", "actions",
              "--eval-hands", "0", "--no-progress"]
    assert dominoes([*common, "--epochs", "6", "--hidden", "32", "--out", str(tmp_path / "first")]) == 0
    assert dominoes([*common, "--epochs", "1", "--hidden", "32", "--out", str(tmp_path / "fresh")]) == 0
    assert dominoes([*common, "--epochs", "1", "--hidden", "32", "--init", str(tmp_path / "first" / "bc.safetensors"),
                     "--out", str(tmp_path / "again")]) == 0

    def first_loss(run: str) -> float:
        lines = (tmp_path / run / "log.csv").read_text().splitlines()
        return float(lines[1].split(",")[lines[0].split(",").index("train_loss")])

    assert first_loss("again") < first_loss("fresh")
    capsys.readouterr()
    _one_line(capsys, dominoes([*common, "--hidden", "64", "--init", str(tmp_path / "first" / "bc.safetensors"),
                                "--out", str(tmp_path / "refused")]), "--init")


def _log_rows(out: Path) -> list[dict[str, str]]:
    """The log's rows, the wall time left out (a resumed run's differs)."""
    with open(out / "log.csv", newline="") as handle:
        return [{key: value for key, value in row.items() if key != "elapsed_s"} for row in csv.DictReader(handle)]


BC_RUN = ["train", "bc", "--dataset", "tiny/greedy-v0", "--epochs", "3", "--batch-size", "64", "--hidden", "32",
          "--weight-decay", "0.01", "--eval-hands", "6", "--eval-opponents", "greedy", "--no-progress"]


@pytest.mark.torch
@pytest.mark.parametrize("killed_at", ["after writing epoch 1", "before writing epoch 2"])
def test_a_killed_run_goes_on_from_its_last_finished_epoch_to_the_unbroken_run_s_weights(root, tmp_path, monkeypatch,
                                                                                          capsys, killed_at):
    """Killed once the resume file holds epoch 1 (the log holding epoch 1's rows, or epoch 2's too),
    the same command again ends with the unbroken run's weights and log; once more, it changes nothing."""
    from baselines.imitation import cli
    from baselines.ppo.weights import load_weights

    whole, killed = tmp_path / "whole", tmp_path / "killed"
    assert dominoes([*BC_RUN, "--out", str(whole)]) == 0
    write = interrupt_at(monkeypatch, cli, "save_torch_resume", before=lambda *args: args[-1]["epoch"] == 2,
                         after=lambda *args: killed_at == "after writing epoch 1")
    assert dominoes([*BC_RUN, "--out", str(killed)]) != 0
    assert not (killed / "bc.safetensors").exists()
    logged = {row["epoch"] for row in _log_rows(killed)}
    assert logged == ({"1"} if killed_at == "after writing epoch 1" else {"1", "2"})
    monkeypatch.setattr(cli, "save_torch_resume", write)
    capsys.readouterr()
    assert dominoes([*BC_RUN, "--out", str(killed)]) == 0
    assert "going on after epoch 1" in capsys.readouterr().out
    assert _log_rows(killed) == _log_rows(whole) and len(_log_rows(whole)) == 6  # a fit and an eval row per epoch
    first, second = load_weights(whole / "bc.safetensors"), load_weights(killed / "bc.safetensors")
    assert all(np.array_equal(first.weights[name], second.weights[name]) for name in first.weights)
    assert (first.info["epoch"], first.info["held_out_accuracy"]) == (second.info["epoch"],
                                                                      second.info["held_out_accuracy"])
    assert dominoes([*BC_RUN, "--out", str(killed)]) == 0  # a finished run: nothing left to train
    again = load_weights(killed / "bc.safetensors")
    assert all(np.array_equal(first.weights[name], again.weights[name]) for name in first.weights)
    assert _log_rows(killed) == _log_rows(whole)


@pytest.mark.torch
def test_a_directory_holding_a_run_of_other_settings_or_a_damaged_resume_file_is_refused_in_one_line(root, tmp_path,
                                                                                                     capsys):
    out = tmp_path / "run"
    run = ["train", "bc", "--dataset", "tiny/greedy-v0", "--epochs", "1", "--batch-size", "64", "--hidden", "32",
           "--eval-hands", "0", "--no-progress", "--out", str(out)]
    assert dominoes(run) == 0
    log = (out / "log.csv").read_text()
    capsys.readouterr()
    _one_line(capsys, dominoes([*run, "--learning-rate", "0.01"]), "holds a run of another configuration")
    _one_line(capsys, dominoes([*run, "--episodes", "30"]), "holds a run of another configuration")
    assert (out / "log.csv").read_text() == log  # refused before anything is written
    (out / "resume.pt").write_bytes(b"not a resume file")
    _one_line(capsys, dominoes(run), "cannot be resumed")
    (out / "resume.pt").unlink()
    (out / "resume.pt").mkdir()
    _one_line(capsys, dominoes(run), "resume.pt in it is a directory")
