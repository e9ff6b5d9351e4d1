"""The champion's training by expert iteration (torch): determinism, workers, resuming, the command."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

from baselines.champion.config import ChampionConfig  # noqa: E402
from baselines.champion.trainer import Parallelism, train  # noqa: E402
from baselines.learning.run import TrainingLog  # noqa: E402
from baselines.td_lambda.checkpoint import load_checkpoint, shipped_checkpoint  # noqa: E402


def _tiny(**changes) -> ChampionConfig:
    settings = dict(hands=24, generation_hands=8, parallel_hands=4, simulations=8, worlds=4, eval_every=0,
                    eval_hands=4, replay_generations=2, seed=3)
    return ChampionConfig(**{**settings, **changes})


def _initial():
    return load_checkpoint(shipped_checkpoint(_tiny().game))


def test_training_is_deterministic_for_a_seed_and_the_same_on_two_workers(tmp_path):
    config = _tiny()
    first = train(config, tmp_path / "a", initial=_initial())
    again = train(config, tmp_path / "b", initial=_initial(), parallelism=Parallelism("local", 2))
    other = train(_tiny(seed=4), tmp_path / "c", initial=_initial())
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other)
    assert not np.array_equal(first, _initial().theta)  # it learned something


class _Killed(Exception):
    pass


def test_a_killed_run_resumes_and_ends_with_the_same_weights(tmp_path):
    config = _tiny()
    whole = train(config, tmp_path / "whole", initial=_initial())

    def kill_after_two_generations(stats):
        if stats["hands"] == 16:
            raise _Killed

    with pytest.raises(_Killed):
        train(config, tmp_path / "cut", TrainingLog(on_progress=kill_after_two_generations), initial=_initial())
    assert np.array_equal(train(config, tmp_path / "cut", initial=_initial()), whole)


def test_a_directory_of_another_run_is_refused(tmp_path):
    train(_tiny(hands=8), tmp_path, initial=_initial())
    with pytest.raises(ValueError, match="simulations"):
        train(_tiny(hands=8, simulations=9), tmp_path, initial=_initial())


def test_the_train_command_writes_weights_a_log_and_a_curve_and_refuses_bad_options(tmp_path, capsys):
    from baselines.cli import main

    out = tmp_path / "run"
    arguments = ["train", "champion", "--hands", "8", "--generation-hands", "4", "--parallel-hands", "4",
                 "--simulations", "8", "--worlds", "4", "--eval-hands", "4", "--workers", "1", "--no-progress",
                 "--init", str(shipped_checkpoint(_tiny().game)), "--out", str(out)]
    assert main(arguments) == 0
    assert load_checkpoint(out / "champion.safetensors").info["champion"]["simulations"] == 8
    log = (out / "log.csv").read_text().splitlines()
    assert log[0].startswith("hands,kind") and any(",eval,td_lambda," in row for row in log)
    assert (out / "learning_curve.png").stat().st_size > 0
    assert main(arguments[:-2] + ["--out", str(out), "--hands", "12"]) == 0  # extends the run
    assert sum(",train," in row for row in (out / "log.csv").read_text().splitlines()) == 3
    capsys.readouterr()
    assert main(["train", "champion", "--simulations", "0", "--out", str(tmp_path / "x")]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("dominoes train: error:") and "simulations" in error and "\n" not in error


@pytest.mark.slow
def test_ray_gives_the_same_weights_as_local_workers(tmp_path):
    pytest.importorskip("ray")
    config = _tiny(hands=8)
    local = train(config, tmp_path / "local", initial=_initial(), parallelism=Parallelism("local", 2))
    on_ray = train(config, tmp_path / "ray", initial=_initial(), parallelism=Parallelism("ray", 2))
    assert np.array_equal(local, on_ray)
