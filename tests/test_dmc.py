"""DMC on ppo's network (needs torch): each decision's target is its mover's Monte-Carlo return, found
again here step by step from the engine's own rewards; greedy means the best score; what it cannot
learn is refused in one line; and a short run learns to beat random players."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = [pytest.mark.torch, pytest.mark.usefixtures("one_torch_thread")]
torch = pytest.importorskip("torch")

from conftest import interrupt_at  # noqa: E402

import baselines.ppo.run as ppo_run  # noqa: E402
import dominoes_env  # noqa: E402
from baselines.harness.evaluate import evaluate  # noqa: E402
from baselines.ppo import PPOConfig, PPOPolicy, load_weights  # noqa: E402
from baselines.ppo.dmc import DMCTrainer  # noqa: E402
from baselines.ppo.run import train_run  # noqa: E402
from baselines.ppo.trainer import Trainer  # noqa: E402

TABLE = dominoes_env.make_config(2, 6)


def small(**changes) -> PPOConfig:
    """A run of a few seconds at the 2-player double-six table (test_dagger's too, with a wider layer)."""
    return PPOConfig(**{"game": TABLE, "hidden": (16,), "num_envs": 8, "rollout_steps": 40, "minibatches": 2,
                        "epochs": 1, "eval_hands": 8, "eval_opponents": ("random",), **changes})


def test_each_target_is_the_movers_rewards_from_its_move_to_its_games_end(monkeypatch):
    """Two hands a game, so a game pays in its middle too; games end at different steps."""
    config = small(hands_per_game=2, rollout_steps=90)
    trainer = DMCTrainer(config, epsilon=0.2)
    trainer.start_segment(0)
    steps: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    step = trainer.engine.step

    def recorded(actions):
        choosing = trainer.observation["action_mask"].sum(axis=1) > 1
        movers = trainer.engine.current_player.astype(np.int64).copy()
        observation, rewards, terminated, truncated, infos = step(actions)
        steps.append((choosing, movers, rewards.copy(), terminated | truncated))
        return observation, rewards, terminated, truncated, infos

    monkeypatch.setattr(trainer.engine, "step", recorded)
    finished = trainer.collect()
    expected = []
    for t, (choosing, movers, _, _) in enumerate(steps):
        for game in np.flatnonzero(choosing):
            paid, mover = 0.0, movers[game]
            for _, _, rewards, ended in steps[t:]:
                paid += rewards[game, mover] * config.reward_scale
                if ended[game]:
                    expected.append(paid)
                    break
    assert len(expected) > 50 and finished.steps == config.num_envs * config.rollout_steps
    np.testing.assert_allclose(finished.returns.numpy(), expected, rtol=1e-5, atol=1e-6)
    assert finished.afterstates.shape == (len(expected), trainer.one_hand)


def test_without_exploration_each_chosen_move_has_its_rows_best_score():
    trainer = DMCTrainer(small(), epsilon=0.0)
    trainer.start_segment(3)

    def seen() -> tuple[np.ndarray, np.ndarray]:
        return trainer.observation["observation"][:, :trainer.one_hand], trainer.observation["action_mask"]

    for _ in range(6):  # past the first moves, to positions with choices
        actions, _, _ = trainer._choose(*seen(), None)
        trainer.observation = trainer.engine.step(actions)[0]
    observations, masks = seen()
    actions, rows, chosen = trainer._choose(observations, masks, None)
    found = trainer.head.candidates(observations, masks)
    assert rows.size > 0
    with torch.no_grad():
        scores = trainer.network.afterstate_scores(torch.from_numpy(found.vectors).float()).numpy()
        picked = trainer.network.afterstate_scores(torch.from_numpy(chosen).float()).numpy()
    best = np.array([scores[found.rows == row].max() for row in rows])
    np.testing.assert_allclose(picked, best, rtol=1e-6)
    assert all(masks[row, actions[row]] for row in range(masks.shape[0]))


def test_what_dmc_cannot_learn_is_refused_in_one_line():
    with pytest.raises(ValueError, match="self-play only"):
        DMCTrainer(small(opponents=("random",)))
    with pytest.raises(ValueError, match="--policy-head afterstates"):
        DMCTrainer(small(policy_head="actions"))
    with pytest.raises(ValueError, match=r"epsilon must be in \[0, 1\]"):
        DMCTrainer(small(), epsilon=1.5)


def test_a_short_run_learns_to_beat_random_players(tmp_path):
    config = small(steps=60_000, num_envs=64, rollout_steps=16, minibatches=4, eval_every=0, seed=7)
    final = train_run(config, tmp_path, "cpu", progress=False, torch_threads=1, trainer_class=DMCTrainer)
    player = PPOPolicy(TABLE, checkpoint=load_weights(final))
    result = evaluate([player, "random"], 300, seed=4321, num_players=TABLE)
    margin, spread, _ = result.difference(result.policies[0].label, result.policies[1].label)
    assert margin + spread < 0, (margin, spread)  # fewer pips than random, the interval clear of 0


def _train(arguments: list[str]) -> int:
    from baselines.cli import main as dominoes

    try:
        return dominoes(["train", *arguments])
    except SystemExit as exited:  # argparse's refusals
        return int(exited.code or 0)


def test_dominoes_train_dmc_writes_a_ppo_file_resumes_and_is_never_taken_for_a_ppo_run(tmp_path, capsys,
                                                                                        monkeypatch):
    """The command trains with DMC's trainer (its weights say so and play as ppo@FILE); killed after
    its first segment and run again, it ends on the unbroken run's weights; PPO's command refuses its
    directory, so does DMC with another epsilon, and a bad epsilon is one line that names the option."""
    def command(out, *more):
        return ["dmc", "--players", "2", "--highest", "6", "--num-envs", "16", "--rollout-steps", "8", "--hidden",
                "8", "--steps", "512", "--eval-every", "256", "--eval-hands", "6", "--eval-opponents", "random",
                "--out", str(out), "--no-progress", "--torch-threads", "1", *more]

    assert _train(command(tmp_path / "whole", "--epsilon", "0.05")) == 0
    whole = load_weights(tmp_path / "whole" / "ppo.safetensors")
    assert whole.info["learner"] == "dmc" and whole.info["command"].startswith("dominoes train dmc")
    assert "--epsilon 0.05" in whole.info["command"] and whole.info["steps_trained"] == 512
    PPOPolicy(TABLE, checkpoint=str(tmp_path / "whole" / "ppo.safetensors"))

    out = tmp_path / "killed"
    original = interrupt_at(monkeypatch, ppo_run, "save_resume",
                            after=lambda path, trainer, steps, segment: steps == 256)
    assert _train(command(out, "--epsilon", "0.05")) != 0
    monkeypatch.setattr(ppo_run, "save_resume", original)
    rollouts = []
    collect = DMCTrainer.collect
    monkeypatch.setattr(DMCTrainer, "collect", lambda trainer: rollouts.append(1) or collect(trainer))
    assert _train(command(out, "--epsilon", "0.05")) == 0
    assert len(rollouts) == 2  # 256 steps of rollouts of 16 games x 8 steps: from the kill on, not from 0
    resumed = load_weights(out / "ppo.safetensors")
    assert resumed.weights.keys() == whole.weights.keys()
    for name in whole.weights:
        np.testing.assert_array_equal(resumed.weights[name], whole.weights[name])

    capsys.readouterr()
    ppo_instead = ["ppo", *command(out)[1:]]
    assert _train(ppo_instead) == 2
    assert "holds a run of another configuration" in capsys.readouterr().err
    assert _train(command(out)) == 2  # the default epsilon: another run
    assert "holds a run of another configuration" in capsys.readouterr().err
    assert _train(["dmc", "--epsilon", "2", "--out", str(tmp_path / "bad")]) == 2
    assert "--epsilon: must be a share in [0, 1], got '2'" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


def test_a_run_with_the_history_feature_learns_and_its_file_plays_as_ppo_history(tmp_path):
    config = small(steps=60_000, num_envs=64, rollout_steps=16, minibatches=4, eval_every=0, seed=7,
                   history="passes")
    final = train_run(config, tmp_path, "cpu", progress=False, torch_threads=1, trainer_class=DMCTrainer)
    weights = load_weights(final)
    assert weights.config.history == "passes"
    result = evaluate(["ppo_history@" + str(final), "random"], 300, seed=4321, num_players=TABLE)
    margin, spread, _ = result.difference(result.policies[0].label, result.policies[1].label)
    assert margin + spread < 0, (margin, spread)
    with pytest.raises(ValueError, match="read by dmc's trainer only"):
        Trainer(config)


def test_a_history_that_the_run_does_not_read_is_refused_before_training(tmp_path, capsys):
    flat = tmp_path / "flat"
    assert _train(["dmc", "--steps", "1", "--num-envs", "8", "--rollout-steps", "4", "--hidden", "16",
                   "--eval-every", "0", "--eval-hands", "8", "--eval-opponents", "random", "--players", "2",
                   "--highest", "6", "--no-progress", "--out", str(flat)]) == 0
    with pytest.raises(ValueError, match="has history 'none', this run 'passes'"):
        ppo_run.initial_weights(str(flat / "ppo.safetensors"), small(history="passes"))
    capsys.readouterr()
    assert _train(["ppo", "--history", "passes", "--out", str(tmp_path / "never")]) == 2  # not one of ppo's options
    assert "unrecognized arguments: --history" in capsys.readouterr().err
    assert not (tmp_path / "never").exists()


def test_behaviour_cloning_refuses_a_history_feature_in_one_line():
    from baselines.imitation.settings import CloningSettings
    from baselines.imitation.train import clone

    with pytest.raises(ValueError, match="fits the observation alone"):
        clone(None, small(history="passes"), CloningSettings(), lambda row, weights: None)  # type: ignore[arg-type]
