"""The PPO trainer (needs torch): GAE and the loss on hand-computed cases, masking, one step that
changes the weights, determinism, resuming after a kill, and the numpy player matching the network."""

from __future__ import annotations

import csv

import numpy as np
import pytest

pytestmark = [pytest.mark.torch, pytest.mark.usefixtures("one_torch_thread")]
torch = pytest.importorskip("torch")

from test_ppo import SMALL  # noqa: E402

import dominoes_env  # noqa: E402
from baselines.cli import main as dominoes  # noqa: E402
from baselines.ppo import PPOConfig, PPOPolicy, load_weights  # noqa: E402
from baselines.ppo.run import LOG_COLUMNS, LOG_NAME, TIMING_COLUMNS, initial_weights, open_log, train_run  # noqa: E402
from baselines.ppo.trainer import Trainer, ppo_losses, seat_advantages, seat_rotation  # noqa: E402


def test_gae_along_each_seats_own_decisions_on_a_hand_computed_case():
    """Two seats moving in turn (0, 1, 0, 1); the hand ends at step 2, paying +1 and -1; a new game follows."""
    rewards = torch.tensor([[[0.0, 0.0]], [[0.0, 0.0]], [[1.0, -1.0]], [[0.0, 0.0]]])  # (T=4, B=1, n=2)
    values = torch.tensor([[[0.5, -0.5]], [[0.2, 0.1]], [[0.3, 0.4]], [[0.6, -0.2]]])
    ended = torch.tensor([[0.0], [0.0], [1.0], [0.0]])
    movers = torch.tensor([[0], [1], [0], [1]])
    bootstrap = torch.tensor([[0.7, 0.8]])
    gamma, lam = 0.9, 0.5
    advantages, returns = seat_advantages(rewards, values, ended, movers, bootstrap, gamma, lam)
    v = values[:, 0].numpy()
    a2 = 1.0 - v[2, 0]  # seat 0's last move of the game: its reward, nothing after
    a1 = -1.0 - v[1, 1]  # seat 1's: the -1 came at step 2, after it; the game ended before its next move
    a0 = gamma * v[2, 0] - v[0, 0] + gamma * lam * a2  # bootstrapped from seat 0's own next decision (step 2)
    a3 = gamma * 0.8 - v[3, 1]  # the new game: seat 1's value after the rollout
    assert np.allclose(advantages[:, 0].numpy(), [a0, a1, a2, a3], atol=1e-6)
    # every seat's target at every step: at its own decision its lambda-return (advantage plus value), elsewhere
    # the rewards up to its next decision, then (discounted) its lambda-return there
    assert np.allclose(returns[:, 0].numpy(), [[a0 + v[0, 0], gamma * (a1 + v[1, 1])], [gamma * (a2 + v[2, 0]),
                                                a1 + v[1, 1]], [a2 + v[2, 0], -1.0], [gamma * 0.7, a3 + v[3, 1]]],
                       atol=1e-6)


def test_the_seat_rotation_puts_each_seat_in_the_movers_frame():
    rotation = seat_rotation(3)
    assert rotation.tolist() == [[0, 1, 2], [2, 0, 1], [1, 2, 0]]  # mover 1: seat 0 is the third in its frame
    values_in_frame = torch.tensor([[10.0, 11.0, 12.0]])  # mover, next, the one after
    assert values_in_frame.gather(1, rotation[torch.tensor([1])]).tolist() == [[12.0, 10.0, 11.0]]


def test_the_clipped_loss_on_a_hand_computed_case():
    """Two rows whose probabilities are known; the old policy gave the actions probability 1/2 and 1/4."""
    logits = torch.tensor([[0.0, 0.0, -1e9], [math_log(3.0), 0.0, 0.0]])  # row 1: probabilities 3/5, 1/5, 1/5
    actions = torch.tensor([0, 1])
    log_softmax = torch.log_softmax(logits, dim=1)
    log_probs = log_softmax.gather(1, actions[:, None]).squeeze(1)
    entropy = -(log_softmax.exp() * log_softmax).sum(dim=1)
    old = torch.log(torch.tensor([0.5, 0.25]))
    advantages = torch.tensor([1.0, -1.0])
    values, returns = torch.zeros(2, 2), torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    losses = ppo_losses(log_probs, entropy, values, old, advantages, returns, torch.tensor([True, True]), clip=0.2)
    # normalised advantages: +1 and -1 (mean 0, population spread 1); ratios 1.0 and (1/5)/(1/4) = 0.8
    expected_policy = -(1.0 * 1.0 + min(0.8 * -1.0, 0.8 * -1.0)) / 2  # row 1: min(0.8 x -1, clip(0.8) x -1)
    assert losses["policy"].item() == pytest.approx(expected_policy, abs=1e-5)
    assert losses["value"].item() == pytest.approx(0.5 * (1 + 4) / 4)
    expected_entropy = (np.log(2) + -(0.6 * np.log(0.6) + 2 * 0.2 * np.log(0.2))) / 2
    assert losses["entropy"].item() == pytest.approx(expected_entropy, abs=1e-5)
    only_first = ppo_losses(log_probs, entropy, values, old, advantages, returns, torch.tensor([True, False]), 0.2)
    assert only_first["entropy"].item() == pytest.approx(np.log(2), abs=1e-5)  # the learner's rows only
    assert only_first["policy"].item() == pytest.approx(0.0, abs=1e-5)  # one row: its advantage normalises to 0


def math_log(value: float) -> float:
    return float(np.log(value))


@pytest.mark.parametrize("head, features", [("actions", "none"), ("afterstates", "none"), ("actions", "best_chain"),
                                            ("afterstates", "best_chain")])
def test_one_update_changes_the_weights_and_no_sampled_move_is_illegal(head, features):
    trainer = Trainer(PPOConfig(**SMALL, steps=10_000, policy_head=head, features=features))
    trainer.start_segment(0)
    before = {name: value.clone() for name, value in trainer.network.state_dict().items()}
    masks = []
    step = trainer.engine.step

    def remember_masks(actions):
        masks.append(trainer.observation["action_mask"].copy())
        return step(actions)

    trainer.engine.step = remember_masks
    rollout = trainer.collect()
    stacked = torch.from_numpy(np.stack(masks)).long()
    assert stacked.gather(2, rollout.actions[..., None]).squeeze(-1).bool().all() and rollout.learns.all()
    assert (rollout.log_probs[~rollout.chooses] == 0).all()  # a forced move: probability 1
    stats = trainer.learn(rollout, 3e-4)
    after = trainer.network.state_dict()
    assert all(not torch.equal(before[name], after[name]) for name in before)
    assert np.isfinite(list(stats.values())).all()


@pytest.mark.parametrize("head, features", [("actions", "none"), ("afterstates", "none"), ("actions", "best_chain"),
                                            ("afterstates", "best_chain")])
def test_the_update_sees_the_probabilities_the_rollout_recorded(head, features):
    """What the rollout records of a move (its log-probability) is what the head gives it again in the
    update, before any step; a forced move has probability 1 and no entropy."""
    trainer = Trainer(PPOConfig(**{**SMALL, "num_envs": 64}, policy_head=head, features=features))
    trainer.start_segment(0)
    rollout = trainer.collect()
    flat_actions = rollout.actions.flatten()
    rows = torch.arange(flat_actions.shape[0])
    with torch.no_grad():
        features = trainer.network.trunk(rollout.observations.flatten(0, 1).float())
        again, entropy = trainer.head.evaluate(trainer.network, rollout.choices, features, rows, flat_actions)
    assert torch.allclose(again, rollout.log_probs.flatten(), atol=1e-5)
    forced = ~rollout.chooses.flatten()
    assert (entropy[forced].abs() < 1e-5).all() and (again[forced].abs() < 1e-5).all() and (entropy >= -1e-6).all()


@pytest.mark.parametrize("head, features", [("actions", "none"), ("afterstates", "none"), ("actions", "best_chain"),
                                            ("afterstates", "best_chain")])
def test_the_numpy_player_gives_the_networks_probabilities(head, features):
    """The numpy player of the trained weights gives the torch network's probabilities, with the
    hand-made feature computed on its side as the trainer computes it on its own."""
    config = PPOConfig(**SMALL, policy_head=head, features=features)
    trainer = Trainer(config)
    trainer.start_segment(0)
    trainer.learn(trainer.collect(), 1e-2)  # weights away from their initial ones
    observation = trainer.observation
    player = PPOPolicy(config.game, checkpoint=trainer.weights())
    seen, masks = observation["observation"], observation["action_mask"]
    b = seen.shape[0]
    with torch.no_grad():
        trunk = trainer.network.trunk(torch.from_numpy(trainer.inputs(seen)).float())
        _, record = trainer.head.sample(trainer.network, trunk, seen, masks, trainer.generator)
        expected = np.zeros(masks.shape)
        for action in np.flatnonzero(masks.any(axis=0)):  # the head's probability of every legal action
            log_probs = trainer.head.log_probs(record, torch.full((b,), int(action)))
            expected[:, action] = np.where(masks[:, action] == 1, log_probs.exp().numpy(), 0.0)
    forced = masks.sum(axis=1) == 1
    expected[forced] = masks[forced]
    assert np.allclose(player.probabilities(seen, masks), expected, atol=1e-5)
    assert (player.act_batch(seen, masks) == expected.argmax(axis=1)).all()


def test_training_is_deterministic_for_a_seed(tmp_path):
    config = PPOConfig(**SMALL, steps=2 * 16 * 8, seed=7)
    first = load_weights(train_run(config, tmp_path / "a", "cpu", progress=False))
    second = load_weights(train_run(config, tmp_path / "b", "cpu", progress=False))
    assert all(np.array_equal(first.weights[name], second.weights[name]) for name in first.weights)
    other = load_weights(train_run(PPOConfig(**SMALL, steps=2 * 16 * 8, seed=8), tmp_path / "c", "cpu",
                                   progress=False))
    assert not np.array_equal(first.weights["policy.weight"], other.weights["policy.weight"])


def log_rows(directory):
    with open(directory / LOG_NAME, newline="") as handle:
        return [{key: value for key, value in row.items() if key not in TIMING_COLUMNS}
                for row in csv.DictReader(handle)]


@pytest.mark.parametrize("opponents, head", [(("self",), "actions"), (("greedy", "persistent_line"), "afterstates")])
def test_a_killed_run_resumes_where_its_last_segment_ended_and_repeats_the_rest(tmp_path, opponents, head):
    rollout = 16 * 8
    config = PPOConfig(**SMALL, steps=4 * rollout, eval_every=2 * rollout, opponents=opponents, policy_head=head,
                       snapshot_every=rollout if opponents != ("self",) else 0)
    whole = train_run(config, tmp_path / "whole", "cpu", progress=False)

    class Killed(Exception):
        pass

    def kill_in_the_second_segment(row):
        if row["kind"] == "train" and int(row["steps"]) > config.eval_every:
            raise Killed

    with pytest.raises(Killed):
        train_run(config, tmp_path / "killed", "cpu", progress=False, on_row=kill_in_the_second_segment)
    resumed = train_run(config, tmp_path / "killed", "cpu", progress=False)
    assert log_rows(tmp_path / "whole") == log_rows(tmp_path / "killed")
    assert len([row for row in log_rows(tmp_path / "whole") if row["kind"] == "eval"]) == 2
    first, second = load_weights(whole), load_weights(resumed)
    assert all(np.array_equal(first.weights[name], second.weights[name]) for name in first.weights)


def test_a_resumed_log_keeps_the_rows_up_to_the_resume_point_as_they_were_and_its_wall_time(tmp_path):
    """open_log: the rows after the resume point go (the run writes them again), the others stay in
    their own text (5 significant digits, not as the numbers would print again); a fresh run starts afresh."""
    def line(steps, kind, elapsed, rate="1.2346e+05"):
        return ",".join(({"steps": str(steps), "kind": kind, "opponent": "self", "steps_per_second": rate,
                          "margin": "" if kind == "train" else "-0.25", "elapsed_s": elapsed}).get(column, "")
                        for column in LOG_COLUMNS)

    earlier = [",".join(LOG_COLUMNS), line(128, "train", "3.0"), line(256, "train", "7.5"),
               line(256, "eval", "9.0", ""), line(384, "train", "12.0")]
    (tmp_path / LOG_NAME).write_text("\r\n".join(earlier) + "\r\n")
    log = open_log(tmp_path, 256)
    assert (tmp_path / LOG_NAME).read_text().splitlines() == earlier[:4]
    assert [(row["steps"], row["kind"]) for row in log.rows] == [(128, "train"), (256, "train"), (256, "eval")]
    assert 9.0 <= log.elapsed() < 9.0 + 60
    assert open_log(tmp_path, 0).rows == [] and (tmp_path / LOG_NAME).read_text().splitlines() == earlier[:1]


def test_a_resume_file_of_another_configuration_is_refused(tmp_path):
    config = PPOConfig(**SMALL, steps=16 * 8)
    train_run(config, tmp_path, "cpu", progress=False)
    with pytest.raises(ValueError, match="holds a run of another configuration"):
        train_run(PPOConfig(**SMALL, steps=16 * 8, seed=1), tmp_path, "cpu", progress=False)
    (tmp_path / "resume.pt").write_bytes(b"not a resume file")
    with pytest.raises(ValueError, match="cannot be resumed: damaged or not a resume file") as refused:
        train_run(config, tmp_path, "cpu", progress=False)
    assert "weights_only" not in str(refused.value)  # not torch's advice to load it unsafely


def test_a_second_stage_starts_from_the_weights_it_is_given_and_refuses_another_network(tmp_path):
    config = PPOConfig(**SMALL, steps=16 * 8, seed=3)
    first_path = train_run(config, tmp_path / "first", "cpu", progress=False)
    first = load_weights(first_path)
    stage = PPOConfig(**SMALL, steps=0, seed=4, learning_rate=3e-4)
    untouched = load_weights(train_run(stage, tmp_path / "zero", "cpu", progress=False,
                                       init=initial_weights(str(first_path), stage)))
    assert all(np.array_equal(first.weights[name], untouched.weights[name]) for name in first.weights)
    stage = PPOConfig(**SMALL, steps=16 * 8, seed=4, learning_rate=3e-4)
    second = load_weights(train_run(stage, tmp_path / "second", "cpu", progress=False,
                                    init=initial_weights(str(first_path), stage)))
    fresh = load_weights(train_run(stage, tmp_path / "fresh", "cpu", progress=False))
    moved = np.abs(second.weights["trunk.0.weight"] - first.weights["trunk.0.weight"]).max()
    assert 0 < moved < np.abs(fresh.weights["trunk.0.weight"] - first.weights["trunk.0.weight"]).max()
    for other, message in ((PPOConfig(**{**SMALL, "hidden": (8,)}), "has hidden"),
                           (PPOConfig(**SMALL, policy_head="actions"), "has policy_head"),
                           (PPOConfig(**{**SMALL, "game": dominoes_env.make_config(3, 6)}), "another table")):
        with pytest.raises(ValueError, match=message):
            initial_weights(str(first_path), other)
    with pytest.raises(ValueError, match="no such file|does not exist|not found"):
        initial_weights(str(tmp_path / "missing.safetensors"), config)


def test_the_value_warmup_fits_the_value_layer_alone_then_ppo_moves_everything(tmp_path):
    """Within value_warmup the policy is exactly the initial one (trunk and policy layer untouched) while the
    value layer learns; past it the whole network moves; learners that fit no critic refuse the field."""
    rollout = 16 * 8
    start = train_run(PPOConfig(**SMALL, steps=0, seed=5), tmp_path / "start", "cpu", progress=False)
    initial = load_weights(start)
    for steps, policy_moves in ((2 * rollout, False), (4 * rollout, True)):
        config = PPOConfig(**SMALL, steps=steps, seed=6, value_warmup=2 * rollout, eval_every=0)
        trained = load_weights(train_run(config, tmp_path / f"run{steps}", "cpu", progress=False,
                                         init=initial_weights(str(start), config))).weights
        assert not np.array_equal(trained["value.weight"], initial.weights["value.weight"])
        for name in ("trunk.0.weight", "trunk.1.weight", "policy.weight"):
            assert np.array_equal(trained[name], initial.weights[name]) != policy_moves, (steps, name)
    from baselines.ppo.dagger import DAggerTrainer

    with pytest.raises(ValueError, match="value_warmup=128 is read by ppo's trainer only"):
        DAggerTrainer(PPOConfig(**SMALL, value_warmup=rollout))


def test_a_log_row_averages_each_figure_over_the_updates_that_gave_it():
    """A row that straddles the end of the value warm-up: value-only updates give no policy figures, so
    the entropy is the PPO updates' own mean, not diluted by the value-only ones."""
    from baselines.ppo.run import _add_figures

    totals: dict[str, float] = {}
    counts: dict[str, int] = {}
    for stats in ({"value": 1.0}, {"value": 2.0}, {"value": 3.0, "entropy": 0.5}, {"value": 6.0, "entropy": 0.7}):
        _add_figures(totals, counts, stats)
    means = {name: value / counts[name] for name, value in totals.items()}
    assert means == pytest.approx({"value": 3.0, "entropy": 0.6})


def test_dominoes_train_ppo_reports_the_steps_it_took_when_a_rollout_overshoots_steps(tmp_path, capsys):
    """--steps 200 with rollouts of 16 games x 8 steps (128 decisions in self-play) takes two whole rollouts:
    the printed count, the log and the weights' info all say 256, and the printed line names the 200 asked for."""
    out = tmp_path / "run"
    assert dominoes(["train", "ppo", "--players", "3", "--highest", "6", "--steps", "200", "--num-envs", "16",
                     "--rollout-steps", "8", "--hidden", "8", "--eval-every", "0", "--eval-hands", "6",
                     "--eval-opponents", "greedy", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    taken = load_weights(out / "ppo.safetensors").info["steps_trained"]
    assert taken == 256
    assert f"trained {taken:,} learner steps (--steps 200, rounded up to whole rollouts);" in printed
    assert int(log_rows(out)[-1]["steps"]) == taken


def test_dominoes_train_ppo_writes_its_files_and_refuses_bad_options(tmp_path, capsys):
    out = tmp_path / "run"
    assert dominoes(["train", "ppo", "--players", "3", "--highest", "6", "--steps", "256", "--num-envs", "16",
                     "--rollout-steps", "8", "--hidden", "8", "--eval-every", "128", "--eval-hands", "6",
                     "--eval-opponents", "greedy", "--out", str(out), "--no-progress"]) == 0
    assert {path.name for path in out.iterdir()} >= {"ppo.safetensors", "latest.safetensors", "log.csv",
                                                      "learning_curve.png", "resume.pt"}
    player = PPOPolicy(dominoes_env.make_config(3, 6), checkpoint=str(out / "ppo.safetensors"))
    assert player.network.info["steps_trained"] == 256 and "dominoes train ppo" in player.network.info["command"]
    again = tmp_path / "again"
    assert dominoes(["train", "ppo", "--players", "3", "--highest", "6", "--steps", "128", "--num-envs", "16",
                     "--rollout-steps", "8", "--hidden", "8", "--eval-hands", "6", "--eval-opponents", "greedy",
                     "--init", str(out / "ppo.safetensors"), "--out", str(again), "--no-progress"]) == 0
    started = PPOPolicy(dominoes_env.make_config(3, 6), checkpoint=str(again / "ppo.safetensors")).network.info
    assert started["init"]["info"]["steps_trained"] == 256 and "--init" in started["command"]
    rows = log_rows(out)
    assert [row["kind"] for row in rows].count("eval") == 2 and rows[-1]["opponent"] == "greedy"
    for bad, message in ((["--hidden", "0"], "--hidden (each) must be an integer"),
                         (["--opponents", "nobody"], "unknown opponent"),
                         (["--device", "tpu"], "invalid choice"),
                         (["--init", str(out / "ppo.safetensors")], "was trained for another table")):
        try:
            status = dominoes(["train", "ppo", "--out", str(tmp_path / "bad"), *bad])
        except SystemExit as exited:
            status = exited.code
        assert status == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()
