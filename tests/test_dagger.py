"""DAgger on ppo's network (needs torch): each lesson is the teacher's move at a position the learner
reached, found again here step by step; a short run learns a teacher it can represent; what it cannot
learn from is refused in one line; the command writes a ppo file, resumes, and keeps to its own runs."""

from __future__ import annotations

import functools

import numpy as np
import pytest

pytestmark = [pytest.mark.torch, pytest.mark.usefixtures("one_torch_thread")]
torch = pytest.importorskip("torch")

from conftest import interrupt_at  # noqa: E402
from test_dmc import TABLE  # noqa: E402
from test_dmc import small as small_run  # noqa: E402

import baselines.ppo.run as ppo_run  # noqa: E402
from baselines.ppo import PPOConfig, PPOPolicy, PPOWeights, load_weights, save_weights  # noqa: E402
from baselines.ppo.dagger import DAggerTrainer  # noqa: E402
from baselines.ppo.network import ActorCritic  # noqa: E402
from baselines.ppo.run import train_run  # noqa: E402


def small(**changes) -> PPOConfig:
    """test_dmc's small run, with a wider layer: imitating a teacher needs more room than DMC's 16."""
    return small_run(**{"hidden": (32,), **changes})


@pytest.fixture
def teacher(tmp_path) -> str:
    """A teacher the learner can represent exactly: a ppo file of random weights (a fixed function of
    what the mover sees, far from any player the learner starts as)."""
    config = small(hidden=(16,), seed=99)
    torch.manual_seed(99)
    path = save_weights(tmp_path / "teacher.safetensors", PPOWeights(ActorCritic(config).named_weights(), config, {}))
    return f"ppo@{path}"


def test_each_lesson_is_the_teachers_move_at_a_position_the_learner_reached(monkeypatch, teacher):
    trainer = DAggerTrainer(small(), teacher=teacher)
    trainer.start_segment(0)
    player = PPOPolicy(TABLE, checkpoint=teacher.removeprefix("ppo@"))
    expected: list[tuple[np.ndarray, int, int]] = []
    step = trainer.engine.step

    def recorded(actions):
        observations, masks = trainer.observation["observation"], trainer.observation["action_mask"]
        for game in np.flatnonzero(masks.sum(axis=1) > 1):
            expected.append((observations[game, :trainer.one_hand].copy(), player.act(observations[game], masks[game]),
                             int(actions[game])))
        return step(actions)

    monkeypatch.setattr(trainer.engine, "step", recorded)
    lessons = trainer.collect()
    assert len(expected) > 50 and lessons.steps == trainer.config.num_envs * trainer.config.rollout_steps
    np.testing.assert_array_equal(lessons.positions, np.array([seen for seen, _, _ in expected]))
    np.testing.assert_array_equal(lessons.teacher.numpy(), [move for _, move, _ in expected])
    assert lessons.agreed == sum(move == played for _, move, played in expected)
    assert 0 < lessons.agreed < len(expected)  # the learner's own moves drove the games, not the teacher's


def test_what_dagger_cannot_learn_from_is_refused_in_one_line(teacher):
    with pytest.raises(ValueError, match="plays every seat"):
        DAggerTrainer(small(opponents=("random",)), teacher=teacher)
    with pytest.raises(ValueError, match="keeps nothing between moves"):
        DAggerTrainer(small(), teacher="persistent_line")
    with pytest.raises(ValueError, match="no_such_player"):
        DAggerTrainer(small(), teacher="no_such_player")


def _agreement(weights: PPOWeights | None, teacher: str, head: str) -> float:
    """How often a greedy player of `weights` (None: fresh random ones) plays the teacher's move, at the
    positions with a choice of a rollout of that network's own games."""
    probe = DAggerTrainer(small(num_envs=32, seed=5, policy_head=head), teacher=teacher)
    if weights is not None:
        probe.network.load_named_weights(dict(weights.weights))
    probe.start_segment(3)
    lessons = probe.collect()
    player = PPOPolicy(TABLE, checkpoint=probe.weights())
    return float(np.mean(player.act_batch(lessons.positions, _masks(lessons)) == lessons.teacher.numpy()))


def _masks(lessons) -> np.ndarray:
    """The legal moves of each lesson's position, from the stored candidates."""
    store = lessons.store
    masks = np.zeros((lessons.teacher.shape[0], TABLE.num_actions), dtype=bool)
    index, segments = store.of_rows(lessons.flat_rows)
    masks[segments.numpy(), store.actions.index_select(0, index).numpy()] = True
    return masks


@pytest.mark.parametrize("head", ["afterstates", "actions"])
def test_a_short_run_learns_a_teacher_it_can_represent(tmp_path, teacher, head):
    """With either head (the action head learns from the observation's own features, the after-state
    head from the moves' after-states alone)."""
    config = small(steps=60_000, num_envs=32, rollout_steps=20, minibatches=4, epochs=2, learning_rate=3e-3,
                   eval_every=0, seed=7, policy_head=head)
    final = train_run(config, tmp_path, "cpu", progress=False, torch_threads=1,
                      trainer_class=functools.partial(DAggerTrainer, teacher=teacher))
    before, after = _agreement(None, teacher, head), _agreement(load_weights(final), teacher, head)
    assert after > 0.8 and after > before + 0.3, (before, after)  # from a third of the moves to most


def _train(arguments: list[str]) -> int:
    from baselines.cli import main as dominoes

    try:
        return dominoes(["train", *arguments])
    except SystemExit as exited:  # argparse's refusals
        return int(exited.code or 0)


def test_dominoes_train_dagger_writes_a_ppo_file_resumes_and_keeps_to_its_own_runs(tmp_path, capsys, monkeypatch,
                                                                                   teacher):
    """The command trains with DAgger's trainer (its weights say so and play as ppo@FILE); killed after
    its first segment and run again, it ends on the unbroken run's weights; PPO's command refuses its
    directory, so does DAgger with another teacher, and a teacher it cannot use is refused before --out."""
    def command(out, *more):
        return ["dagger", "--players", "2", "--highest", "6", "--num-envs", "16", "--rollout-steps", "8", "--hidden",
                "8", "--steps", "512", "--eval-every", "256", "--eval-hands", "6", "--eval-opponents", "random",
                "--out", str(out), "--no-progress", "--torch-threads", "1", *more]

    assert _train(command(tmp_path / "whole", "--teacher", teacher)) == 0
    whole = load_weights(tmp_path / "whole" / "ppo.safetensors")
    assert whole.info["learner"] == "dagger" and whole.info["command"].startswith("dominoes train dagger")
    assert f"--teacher {teacher}" in whole.info["command"] and whole.info["steps_trained"] == 512
    log = (tmp_path / "whole" / "log.csv").read_text().splitlines()
    agreement = log[0].split(",").index("agreement")
    assert all(0 <= float(line.split(",")[agreement]) <= 1 for line in log[1:] if ",train," in line)

    out = tmp_path / "killed"
    original = interrupt_at(monkeypatch, ppo_run, "save_resume",
                            after=lambda path, trainer, steps, segment: steps == 256)
    assert _train(command(out, "--teacher", teacher)) != 0
    monkeypatch.setattr(ppo_run, "save_resume", original)
    rollouts = []
    collect = DAggerTrainer.collect
    monkeypatch.setattr(DAggerTrainer, "collect", lambda trainer: rollouts.append(1) or collect(trainer))
    assert _train(command(out, "--teacher", teacher)) == 0
    assert len(rollouts) == 2  # 256 steps of rollouts of 16 games x 8 steps: from the kill on, not from 0
    resumed = load_weights(out / "ppo.safetensors")
    for name in whole.weights:
        np.testing.assert_array_equal(resumed.weights[name], whole.weights[name])

    capsys.readouterr()
    assert _train(["ppo", *command(out)[1:]]) == 2
    assert "holds a run of another configuration" in capsys.readouterr().err
    assert _train(command(out, "--teacher", "random")) == 2  # another teacher: another run
    assert "holds a run of another configuration" in capsys.readouterr().err
    assert _train(command(tmp_path / "bad", "--teacher", "persistent_line")) == 2
    err = capsys.readouterr().err
    assert "keeps nothing between moves" in err and "Traceback" not in err and len(err.strip().splitlines()) <= 2
    assert not (tmp_path / "bad").exists()


def test_init_refuses_weights_that_read_another_input(tmp_path):
    """The shipped ppo reads the best-chain numbers: a run without them is refused in one line, not a torch crash."""
    from baselines.ppo.run import initial_weights

    config = small(features="best_chain")
    path = save_weights(tmp_path / "chain.safetensors", PPOWeights(ActorCritic(config).named_weights(), config, {}))
    with pytest.raises(ValueError, match="give the run the same --features"):
        initial_weights(str(path), small())
    assert initial_weights(str(path), config).config.features == "best_chain"
