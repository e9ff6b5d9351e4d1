"""The TD(lambda) after-state learner's training (torch): gradients, traces, learning, the trained
network against the numpy player, the train command. Every test here needs torch (the torch marker:
``pytest -m torch``); checkpoint files, the player, the features, the configuration's bounds and the
command line's refusals need none: test_td_lambda_files.py.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")
from conftest import interrupt_at  # noqa: E402
from test_td_lambda_files import TINY, refused_in_one_line, tiny_checkpoint  # noqa: E402

import dominoes_env  # noqa: E402
from baselines import td_lambda  # noqa: E402
from baselines.cli import main as dominoes  # noqa: E402
from baselines.cli import train as train_command  # noqa: E402
from baselines.harness.evaluate import evaluate  # noqa: E402
from baselines.policies.registry import make_policy  # noqa: E402
from baselines.td_lambda.features import input_size  # noqa: E402
from dominoes_env import make_config  # noqa: E402


def test_per_sample_gradients_equal_autograd_of_each_sample():
    torch.manual_seed(0)
    network = td_lambda.ValueNetwork(7, (6, 5))
    x = torch.randn(4, 7)
    grads, values = network.gradients_and_values(x)
    for k in range(4):
        network.zero_grad()
        value = network(x[k:k + 1])[0]
        value.backward()
        # float32 sums in another order than autograd's differ by ~1e-6 (1e-4 relative); a wrong gradient by far more
        torch.testing.assert_close(grads[k], network.theta.grad, atol=1e-5, rtol=1e-3)
        torch.testing.assert_close(values[k], value.detach())


def _value_and_grad(network, theta, x):
    theta = theta.clone().requires_grad_(True)
    value = network.value(theta, torch.as_tensor(x)[None])[0]
    (grad,) = torch.autograd.grad(value, theta)
    return float(value.detach()), grad


def test_traces_and_updates_match_a_hand_computation():
    torch.manual_seed(1)
    network = td_lambda.ValueNetwork(3, (2,))
    lam, alpha, final_pips = 0.5, 0.1, 7.0
    x1, x2, x3 = (np.array(v, dtype=np.float32) for v in ([1, 0, 1], [0, 1, 1], [1, 1, 0]))
    traces = td_lambda.Traces(network, lam, alpha, tables=1, seats=1)
    one, zero, no = np.array([0]), np.array([0]), np.array([False])
    theta0 = network.theta.detach().clone()

    def current_value(x):
        return np.array([network.predict(x[None])[0]], dtype=np.float32)

    traces.step(one, zero, current_value(x1), no, x1[None])  # first move of the hand: z = grad V(s1)
    traces.step(one, zero, current_value(x2), no, x2[None])  # delta = V(s2) - V(s1), update, z = lam z + grad V(s2)
    traces.end_hand(0, 0, final_pips)  # delta = R - V(s2), applied at the next update
    traces.step(one, zero, current_value(x3), no, x3[None])  # a new hand: its trace starts afresh

    v1, g1 = _value_and_grad(network, theta0, x1)
    v2_before, _ = _value_and_grad(network, theta0, x2)
    theta1 = theta0 + alpha * (v2_before - v1) * g1
    v2, g2 = _value_and_grad(network, theta1, x2)
    z = lam * g1 + g2
    theta2 = theta1 + alpha * (final_pips - v2) * z
    _, g3 = _value_and_grad(network, theta2, x3)
    torch.testing.assert_close(network.theta.detach(), theta2, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(traces.z[0, 0], g3, atol=1e-6, rtol=1e-5)


def test_the_general_trace_path_equals_the_all_tables_fast_path():
    """Self-play indexes one seat's trace among several; it must update exactly as the one-seat path does."""
    torch.manual_seed(2)
    xs = [np.random.default_rng(k).random((1, 5), dtype=np.float32) for k in range(4)]
    results = []
    for seats, slot in ((1, 0), (3, 1)):
        network = td_lambda.ValueNetwork(5, (4,))
        network.theta.data = torch.linspace(-1, 1, network.theta.numel())
        traces = td_lambda.Traces(network, td_lambda=0.7, alpha=0.05, tables=1, seats=seats)
        for k, x in enumerate(xs):
            traces.step(np.array([0]), np.array([slot]), network.predict(x), np.array([False]), x)
            if k == 1:
                traces.end_hand(0, slot, 4.0)
        results.append((network.theta.detach().clone(), traces.z[0, slot].clone(), traces.z.abs().sum()))
    (theta_fast, z_fast, total_fast), (theta_general, z_general, total_general) = results
    torch.testing.assert_close(theta_general, theta_fast, rtol=0, atol=1e-7)
    torch.testing.assert_close(z_general, z_fast, rtol=0, atol=1e-7)
    torch.testing.assert_close(total_general, total_fast)  # the other seats' traces stayed zero


def _recorded_hands(config, hands):
    """Seat 0's after-state features in a few random hands, with its final pips: a fixed data set."""
    features = td_lambda.make_features(config)
    env = dominoes_env.raw_env(config.num_players, config.highest_double)
    rng = np.random.default_rng(7)
    recorded = []
    for seed in range(hands):
        env.reset(seed=seed)
        steps = []
        while not env.game.is_over:
            agent = env.agent_selection
            observed = env.observe(agent)
            action = int(rng.choice(np.flatnonzero(observed["action_mask"])))
            if agent == "player_0":
                after = dominoes_env.afterstate(observed["observation"], action, 2, 6)
                steps.append(features(after[None])[0])
            env.step(action)
        recorded.append((steps, float(env.game.hand_scores[-1][0])))
    return recorded


def test_td_error_falls_on_a_small_fixed_setup():
    """TD(lambda) evaluating a few fixed recorded hands over and over: the mean squared delta of a pass shrinks."""
    td_lambda.seed_everything(0)
    network = td_lambda.build_network(TINY)
    traces = td_lambda.Traces(network, td_lambda=0.5, alpha=3e-4, tables=1, seats=1)
    table, slot = np.array([0]), np.array([0])
    recorded = _recorded_hands(TINY, 6)
    errors_per_pass = []
    for _ in range(60):
        traces.mean_abs_errors.clear()
        for steps, final_pips in recorded:
            for x in steps:
                traces.step(table, slot, network.predict(x[None]), np.array([False]), x[None])
            traces.end_hand(0, 0, final_pips)
        # Apply the last hand's final delta with a move that ends a (new) hand at once.
        traces.step(table, slot, np.zeros(1, dtype=np.float32), np.array([True]), x[None])
        errors_per_pass.append(np.mean(np.square(traces.mean_abs_errors)))
    assert np.mean(errors_per_pass[-5:]) < 0.4 * errors_per_pass[0]


def test_a_tiny_training_run_is_deterministic_for_a_seed():
    first = td_lambda.train(TINY).theta.detach().clone()
    again = td_lambda.train(TINY).theta.detach().clone()
    other = td_lambda.train(replace(TINY, seed=1)).theta.detach().clone()
    torch.testing.assert_close(first, again, rtol=0, atol=0)
    assert not torch.equal(first, other)


def _learns(config):
    """Mean pips against random players of the untrained and the trained network (same deals), and the
    TD error (mean |delta|) of each chunk of training."""
    td_lambda.seed_everything(config.seed)
    untrained = td_lambda.build_network(config)  # the same initial weights train() starts from
    errors = []
    trained = td_lambda.train(config, td_lambda.TrainingLog(on_progress=lambda stats: errors.append(stats["td_error"])))
    assert torch.isfinite(trained.theta).all()
    before, after = (td_lambda.evaluate_network(network, config, "random", 200).policies[0].mean_pips
                     for network in (untrained, trained))
    return before, after, errors


LEARNING = replace(TINY, hands=1200, parallel_hands=16, eval_every=300)  # 4 chunks of 300 hands, no evaluation


def test_a_short_run_against_random_players_learns():
    """At this seed: 9.4 pips per hand before, 3.3 after. A run this short learns at most seeds, not
    all: seeds 0-23 gain -1.7 to 7.7 pips, 14 of them 2 or more (18 with the batch's deals before
    its shuffle moved into the compiled deal), so this checks one seeded run. The TD error of a
    chunk goes up and down as the policy changes the hands it sees, so it is reported, not
    asserted: test_td_error_falls_on_a_small_fixed_setup checks the update itself."""
    before, after, errors = _learns(LEARNING)
    assert after < before - 2.0
    assert len(errors) == 4 and np.isfinite(errors).all()


def test_a_diverging_run_stops_with_a_clear_error():
    """alpha = 1 blows the weights up within the first hands: the run stops with an error that
    says so, not with whatever a NaN value breaks first (choosing the smallest of NaNs)."""
    with pytest.raises(FloatingPointError, match=r"diverged by 48 hands .* alpha=1.0; lower either"):
        td_lambda.train(replace(TINY, alpha=1.0))


def test_self_play_training_runs_and_learns_something():
    """At this seed: 9.4 pips per hand against random players before, 3.65 after. Seeds 0-9 gain
    1.1 to 7.2 pips (the untrained networks already differ by 6) and none diverges; at alpha
    1e-3 seed 8 diverged (self-play's step is alpha / players, as every seat learns)."""
    before, after, errors = _learns(replace(LEARNING, hands=800, eval_every=200, curriculum=(("self", 1.0),),
                                            alpha=5e-4))
    assert after < before - 1.0
    assert len(errors) == 4 and np.isfinite(errors).all()


def _saved(tmp_path: Path, config=TINY) -> Path:
    network = td_lambda.train(config)
    return td_lambda.save_checkpoint(tmp_path / "tiny.safetensors", network, config)


def test_save_and_load_give_identical_actions(tmp_path):
    path = _saved(tmp_path)
    network = td_lambda.train(TINY)  # the same weights, rebuilt by the deterministic run
    loaded = make_policy("td_lambda", 2, 6, checkpoint=str(path))
    torch.testing.assert_close(torch.from_numpy(td_lambda.load_checkpoint(path).theta), network.theta.detach(),
                               rtol=0, atol=0)
    assert loaded.training_config == TINY
    features = td_lambda.make_features(TINY)
    env = dominoes_env.raw_env(2, 6)
    moves = 0
    for seed in range(5):
        env.reset(seed=seed)
        while not env.game.is_over:
            observed = env.observe(env.agent_selection)
            actions, vectors, ends = dominoes_env.core.afterstate.legal_afterstates(
                observed["observation"], observed["action_mask"], 2, 6)
            expected = actions[np.argmin(td_lambda.predicted_final_pips(network, features, vectors, ends))]
            action = loaded.act(observed["observation"], observed["action_mask"])
            assert action == expected
            env.step(action)
            moves += 1
    assert moves > 20


def test_the_numpy_forward_pass_used_for_acting_matches_the_network():
    network = td_lambda.build_network(TINY)
    with torch.no_grad():
        network.theta.normal_(0.0, 0.5)  # away from the initial LayerNorm weights, so every term matters
    features = np.random.default_rng(0).random((32, td_lambda.make_features(TINY).size), dtype=np.float32)
    acting = td_lambda.NumpyValue(network.weights(), TINY.architecture)
    np.testing.assert_allclose(acting.predict(features), network.predict(features), rtol=1e-4, atol=1e-4)


def test_the_train_command_writes_checkpoint_log_and_curve(tmp_path):
    parser = argparse.ArgumentParser()
    train_command.add_arguments(parser)
    args = parser.parse_args(["td-lambda", "--players", "2", "--highest", "6", "--hands", "32", "--hidden", "8",
                              "--parallel-hands", "8", "--eval-every", "16", "--eval-hands", "8",
                              "--eval-opponents", "random", "--curriculum", "random+greedy:1,self:1",
                              "--out", str(tmp_path), "--no-progress"])
    assert train_command.run(args) == 0
    for name in ("td_lambda.safetensors", "latest.safetensors", "log.csv", "learning_curve.png"):
        assert (tmp_path / name).stat().st_size > 0
    rows = (tmp_path / "log.csv").read_text().splitlines()
    assert rows[0].startswith("hands,kind,opponent") and sum(",eval,random," in row for row in rows) == 2
    policy = make_policy("td_lambda", 2, 6, checkpoint=str(tmp_path / "td_lambda.safetensors"))
    assert policy.training_config.hidden_sizes == (8,)
    # The last evaluation is of the final weights: its win_rate is the shared harness's "won".
    last = [row.split(",") for row in rows if ",eval,random," in row][-1]
    header = rows[0].split(",")
    checkpoint = td_lambda.load_checkpoint(tmp_path / "td_lambda.safetensors")
    result = evaluate(
        [td_lambda.TDLambdaPolicy(2, 6, seed=td_lambda.EVALUATION_SEED, checkpoint=checkpoint), "random"], 8,
        seed=td_lambda.EVALUATION_SEED, num_players=2, highest_double=6)
    assert float(last[header.index("win_rate")]) == round(result.policies[0].won, 4)
    assert float(last[header.index("own_pips")]) == round(result.policies[0].mean_pips, 3)



def test_a_killed_run_resumes_from_its_last_round_to_the_same_weights(tmp_path, monkeypatch):
    from baselines.learning.recorder import RunRecorder

    words = ["td-lambda", "--players", "2", "--highest", "6", "--hands", "48", "--hidden", "8", "--parallel-hands",
             "8", "--eval-every", "16", "--eval-hands", "8", "--eval-opponents", "random", "--no-progress"]
    parser = argparse.ArgumentParser()
    train_command.add_arguments(parser)
    assert train_command.run(parser.parse_args([*words, "--out", str(tmp_path / "whole")])) == 0
    written_round = interrupt_at(monkeypatch, RunRecorder, "on_round", after=lambda _, hands, *rest: hands == 32)
    with pytest.raises(KeyboardInterrupt):
        train_command.run(parser.parse_args([*words, "--out", str(tmp_path / "broken")]))
    monkeypatch.setattr(RunRecorder, "on_round", written_round)
    assert train_command.run(parser.parse_args([*words, "--out", str(tmp_path / "broken")])) == 0
    whole, broken = (td_lambda.load_checkpoint(tmp_path / name / "td_lambda.safetensors")
                     for name in ("whole", "broken"))
    assert torch.equal(torch.as_tensor(whole.theta), torch.as_tensor(broken.theta))

@pytest.mark.slow
def test_a_short_run_beats_random_players():
    config = td_lambda.TDLambdaConfig(hands=3000, curriculum=(("random", 1.0),), eval_every=0, eval_opponents=())
    network = td_lambda.train(config)
    result = td_lambda.evaluate_network(network, config, "random", 400)
    assert result.policies[0].mean_pips < result.policies[1].mean_pips - 3


def test_the_line_variant_trains_saves_and_loads(tmp_path):
    config = replace(TINY, variant="line")
    network = td_lambda.train(config)
    path = td_lambda.save_checkpoint(tmp_path / "line.safetensors", network, config)
    policy = make_policy("td_lambda", 2, 6, checkpoint=str(path))
    assert policy.training_config.variant == "line"
    assert isinstance(policy.features, td_lambda.LineFeatures)


def test_final_deltas_still_queued_when_play_stops_are_applied():
    """A learner whose hand ended after everyone else's still gets its final update."""
    network = td_lambda.build_network(TINY)
    traces = td_lambda.Traces(network, td_lambda=0.5, alpha=0.1, tables=2, seats=1)
    traces.z[1, 0] = 1.0
    traces.previous_value[1, 0], traces.has_previous[1, 0] = 2.0, True
    traces.end_hand(1, 0, final_pips=5.0)  # delta = 5 - 2 = 3, queued
    before = network.theta.detach().clone()
    traces.flush()
    torch.testing.assert_close(network.theta.detach(), before + 0.1 * 3.0)
    assert not traces.pending_delta.any() and not traces.z[1, 0].any()


def test_an_evaluation_against_the_shipped_player_keeps_the_learner_apart():
    shipped = td_lambda.load_checkpoint(td_lambda.shipped_checkpoint(make_config(4, 9)))
    network = td_lambda.build_network(shipped.config, shipped.theta)
    result = td_lambda.evaluate_network(network, shipped.config, "td_lambda", 8)
    assert len(result.policies) == 2 and result.labels[1] == "td_lambda"
    assert result.policies[0].hands == 8 and result.policies[1].hands == 24


def test_every_public_name_resolves_and_the_training_ones_load_on_first_use():
    assert {"train", "ValueNetwork", "Traces", "TrainingLog"} <= set(dir(td_lambda))
    for name in td_lambda.__all__:
        assert getattr(td_lambda, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'evaluate'"):
        td_lambda.evaluate  # noqa: B018 (the private harness is gone: training uses baselines.harness.evaluate)


# --------------------------------------------------------------------------- the command line
@pytest.mark.parametrize("arguments", [
    ["--out", "/etc/passwd"], ["--out", "/proc/no/such/dir"],
    ["--init", "missing.safetensors"], ["--init", "DAMAGED"], ["--init", "OTHER"],
])
def test_bad_checkpoint_options_get_one_error_line(arguments, tmp_path, capsys):
    """Checked once the learner's run starts, after it has found torch (without torch the run stops there)."""
    damaged = tmp_path / "damaged.safetensors"
    damaged.write_bytes(b"\x08" + bytes(100))
    other = tiny_checkpoint(tmp_path / "other.safetensors")  # 2 players, double-6
    replacements = {"DAMAGED": str(damaged), "OTHER": str(other)}
    arguments = [replacements.get(argument, argument) for argument in arguments]
    err = refused_in_one_line(arguments, tmp_path, capsys)
    assert arguments[0] in err, err  # the option is named


def test_an_unwritable_checkpoint_directory_is_refused(capsys):
    # /proc refuses new entries even to root (a chmod-ed directory would not stop root)
    assert dominoes(["train", "td-lambda", "--out", "/proc/td_lambda_run", "--no-progress"]) == 2
    assert "--out /proc/td_lambda_run: cannot be created" in capsys.readouterr().err


def test_the_old_option_names_still_work_and_say_what_replaced_them(capsys):
    """--checkpoint-dir and --init-checkpoint (the names before one vocabulary for every learner)."""
    assert dominoes(["train", "td-lambda", "--checkpoint-dir", "/proc/td_lambda_run", "--init-checkpoint",
                     "missing.safetensors", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "note: --checkpoint-dir is now --out (the old name still works)" in err
    assert "note: --init-checkpoint is now --init (the old name still works)" in err
    assert "error: --init: td_lambda checkpoint 'missing.safetensors' does not exist" in err  # the new name


@pytest.mark.parametrize("rules", [{"boneyard": True}, {"boneyard": True, "cover_doubles": True},
                                   {"cover_doubles": True, "first_player": "left_of_engine"}])
def test_the_learner_trains_and_plays_under_table_rules(tmp_path, rules):
    config = replace(TINY, variant="line", game=make_config(2, 6, **rules))
    assert td_lambda.make_features(config).size == input_size(config.game, "line")
    network = td_lambda.train(config)  # draws are forced moves: played without an after-state
    path = td_lambda.save_checkpoint(tmp_path / "rules.safetensors", network, config)
    game = make_config(2, 6, **rules)
    policy = make_policy("td_lambda", game, checkpoint=str(path))
    assert policy.training_config.game == game
    result = evaluate([policy, "random"], num_hands=20, seed=0, num_players=2, highest_double=6, **rules)
    assert result.num_hands == 20  # every move checked against the mask by the shared loop
    with pytest.raises(ValueError, match="was trained for 2 players, double-6 \\(.*\\), not 2 players, double-6"):
        make_policy("td_lambda", 2, 6, checkpoint=str(path))  # the rule book's game: another game
    assert dominoes(["train", "td-lambda", "--players", "2", "--highest", "6", "--hands", "8", "--hidden", "8",
                 "--parallel-hands", "4", "--eval-every", "0", "--eval-opponents", "", "--curriculum", "random:1",
                 "--no-progress", "--out", str(tmp_path / "cli"),
                 *(["--boneyard"] if rules.get("boneyard") else []),
                 *(["--cover-doubles"] if rules.get("cover_doubles") else []),
                 *(["--first-player", rules["first_player"]] if "first_player" in rules else [])]) == 0
    trained = td_lambda.load_checkpoint(tmp_path / "cli" / "td_lambda.safetensors")
    assert trained.config.game == game
