"""The TD(lambda) after-state learner: gradients, traces, determinism, checkpoints, the shipped player."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

import dominoes_env  # noqa: E402
from baselines import td_lambda  # noqa: E402
from baselines import train as train_command  # noqa: E402
from baselines.play import play_game  # noqa: E402
from baselines.policy import make_policy  # noqa: E402
from dominoes_env import make_config  # noqa: E402
from dominoes_env.core.observation import observation_fields  # noqa: E402

TINY = td_lambda.TDLambdaConfig(
    num_players=2, highest_double=6, hidden_sizes=(16, 8), hands=48, curriculum=(("random", 1.0),),
    parallel_hands=8, eval_every=0, eval_opponents=(), alpha=1e-3)


def test_per_sample_gradients_equal_autograd_of_each_sample():
    torch.manual_seed(0)
    network = td_lambda.ValueNetwork(7, (6, 5))
    x = torch.randn(4, 7)
    grads, values = network.gradients_and_values(x)
    for k in range(4):
        network.zero_grad()
        value = network(x[k:k + 1])[0]
        value.backward()
        torch.testing.assert_close(grads[k], network.theta.grad, atol=1e-6, rtol=1e-5)
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


def test_self_play_training_runs_and_learns_something():
    network = td_lambda.train(replace(TINY, curriculum=(("self", 1.0),), hands=32))
    assert torch.isfinite(network.theta).all()


def test_a_hand_ending_after_state_is_worth_the_pips_still_held():
    config = TINY
    network = td_lambda.build_network(config)
    features = td_lambda.make_features(config)
    vectors = np.zeros((2, dominoes_env.core.Observer(config.game).size), dtype=np.int8)
    vectors[1, 3] = 1  # holds tile 3, (0|3)
    values = td_lambda.predicted_final_pips(network, features, vectors, np.array([True, True]))
    np.testing.assert_array_equal(values, [0.0, 3.0])


def _saved(tmp_path: Path, config=TINY) -> Path:
    network = td_lambda.train(config)
    return td_lambda.save_checkpoint(tmp_path / "tiny.safetensors", network, config)


def test_save_and_load_give_identical_actions(tmp_path):
    path = _saved(tmp_path)
    network = td_lambda.train(TINY)  # the same weights, rebuilt by the deterministic run
    loaded = make_policy("td_lambda", 2, 6, checkpoint=str(path))
    torch.testing.assert_close(td_lambda.load_checkpoint(path)[0].theta, network.theta, rtol=0, atol=0)
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
    np.testing.assert_allclose(td_lambda.NumpyValue(network).predict(features), network.predict(features),
                               rtol=1e-4, atol=1e-4)


def test_a_checkpoint_for_another_table_is_refused(tmp_path):
    path = _saved(tmp_path)
    with pytest.raises(ValueError, match="trained for 2 players, double-6"):
        make_policy("td_lambda", 4, 9, checkpoint=str(path))


def test_a_damaged_checkpoint_is_refused_clearly(tmp_path):
    path = _saved(tmp_path)
    damaged = tmp_path / "damaged.safetensors"
    damaged.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(ValueError, match="damaged"):
        make_policy("td_lambda", 2, 6, checkpoint=str(damaged))
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"not a checkpoint at all")
    with pytest.raises(ValueError, match="damaged"):
        make_policy("td_lambda", 2, 6, checkpoint=str(garbage))
    with pytest.raises(ValueError, match="does not exist"):
        make_policy("td_lambda", 2, 6, checkpoint=str(tmp_path / "missing.safetensors"))


def test_a_foreign_safetensors_file_is_not_taken_for_a_checkpoint(tmp_path):
    from safetensors.torch import save_file
    path = tmp_path / "foreign.safetensors"
    save_file({"weight": torch.zeros(3)}, str(path), metadata={"format": "something-else"})
    with pytest.raises(ValueError, match="not a td_lambda checkpoint"):
        td_lambda.load_checkpoint(path)


def test_no_shipped_checkpoint_for_other_tables_says_what_to_do():
    with pytest.raises(ValueError, match="train one"):
        make_policy("td_lambda", 3, 6)


def test_the_shipped_checkpoint_loads_and_plays_only_legal_moves():
    policy = make_policy("td_lambda", seed=0)
    assert policy.training_config.num_players == 4 and policy.training_config.highest_double == 9
    env = dominoes_env.raw_env(4, 9, num_hands=2)  # multi-hand observations carry scores too
    others = [make_policy("random", seed=seat) for seat in range(3)]
    for seed in range(3):
        result = play_game(env, [policy, *others], seed=seed)  # the env raises on any illegal move
        assert result.hand_scores.shape == (2, 4)


def test_bad_configurations_are_refused():
    with pytest.raises(ValueError, match="variant"):
        td_lambda.TDLambdaConfig(variant="deep")
    with pytest.raises(ValueError, match="td_lambda"):
        td_lambda.TDLambdaConfig(td_lambda=1.5)
    with pytest.raises(ValueError, match="num_players"):
        td_lambda.TDLambdaConfig(num_players=9)


def test_curriculum_shares_split_the_hands_exactly():
    config = td_lambda.TDLambdaConfig(hands=1001, curriculum=(("random", 1), ("double", 1), ("self", 1)))
    assert [name for name, _ in config.stage_hands()] == ["random", "double", "self"]
    assert sum(count for _, count in config.stage_hands()) == 1001
    assert train_command.parse_curriculum("random:0.2,self") == (("random", 0.2), ("self", 1.0))
    with pytest.raises(ValueError, match="OPPONENT:SHARE"):
        train_command.parse_curriculum("random:lots")


def test_the_train_command_writes_checkpoint_log_and_curve(tmp_path):
    parser = argparse.ArgumentParser()
    train_command.add_arguments(parser)
    args = parser.parse_args(["td-lambda", "--players", "2", "--highest", "6", "--hands", "32", "--hidden", "8",
                              "--parallel-hands", "8", "--eval-every", "16", "--eval-hands", "8",
                              "--eval-opponents", "random", "--curriculum", "random+greedy:1,self:1",
                              "--checkpoint-dir", str(tmp_path), "--no-progress"])
    assert train_command.run(args) == 0
    for name in ("td_lambda.safetensors", "latest.safetensors", "log.csv", "learning_curve.png"):
        assert (tmp_path / name).stat().st_size > 0
    rows = (tmp_path / "log.csv").read_text().splitlines()
    assert rows[0].startswith("hands,kind,opponent") and sum(",eval,random," in row for row in rows) == 2
    policy = make_policy("td_lambda", 2, 6, checkpoint=str(tmp_path / "td_lambda.safetensors"))
    assert policy.training_config.hidden_sizes == (8,)


@pytest.mark.slow
def test_a_short_run_beats_random_players():
    config = td_lambda.TDLambdaConfig(hands=3000, curriculum=(("random", 1.0),), eval_every=0, eval_opponents=())
    network = td_lambda.train(config)
    result = td_lambda.evaluate(network, config, "random", 400)
    assert result.own_pips < result.opponent_pips - 3


def test_line_features_hold_the_exact_best_chain_of_the_after_state():
    from baselines.chain_search import best_chain
    config = replace(TINY, variant="line")
    features = td_lambda.make_features(config)
    game = config.game
    fields = {f.name: f for f in dominoes_env.core.observation.observation_fields(game)}
    env = dominoes_env.raw_env(2, 6)
    rng = np.random.default_rng(3)
    checked = 0
    for seed in range(4):
        env.reset(seed=seed)
        while not env.game.is_over:
            observed = env.observe(env.agent_selection)
            _, vectors, _ = dominoes_env.core.afterstate.legal_afterstates(
                observed["observation"], observed["action_mask"], 2, 6)
            x = features(vectors)
            for vector, row in zip(vectors, x):
                hand = np.flatnonzero(vector[fields["hand"].slice])
                open_value = int(np.argmax(vector[fields["open_values"].slice][:game.highest_double + 1]))
                chain = best_chain(hand, open_value, 6)
                in_chain = np.flatnonzero(row[features.basic_size:features.basic_size + game.num_tiles])
                assert set(in_chain.tolist()) == set(chain.tiles)
                checked += 1
            env.step(int(rng.choice(np.flatnonzero(observed["action_mask"]))))
    assert checked > 50


def test_the_line_variant_trains_saves_and_loads(tmp_path):
    config = replace(TINY, variant="line")
    network = td_lambda.train(config)
    path = td_lambda.save_checkpoint(tmp_path / "line.safetensors", network, config)
    policy = make_policy("td_lambda", 2, 6, checkpoint=str(path))
    assert policy.training_config.variant == "line"
    assert isinstance(policy.features, td_lambda.LineFeatures)


def test_the_train_command_refuses_unknown_opponents(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    train_command.add_arguments(parser)
    args = parser.parse_args(["td-lambda", "--curriculum", "nobody:1", "--checkpoint-dir", str(tmp_path)])
    assert train_command.run(args) == 2
    assert "unknown opponent(s) ['nobody']" in capsys.readouterr().err


@pytest.mark.parametrize("players, highest", [(2, 6), (4, 9), (6, 12)])
def test_compiled_basic_features_match_a_numpy_reading_of_the_layout(players, highest):
    """The compiled feature pass against the fields read with plain numpy slicing."""
    config = make_config(players, highest)
    fields = {f.name: f for f in observation_fields(config)}
    n, t, m = players, config.num_tiles, config.max_hand_size
    env = dominoes_env.raw_env(players, highest)
    vectors = []
    for seed in range(3):
        env.reset(seed=seed)
        while not env.game.is_over:
            observed = env.observe(env.agent_selection)
            vectors.append(observed["observation"])
            env.step(int(np.flatnonzero(observed["action_mask"])[-1]))
    vectors = np.array(vectors)
    k = vectors.shape[0]
    read = {name: vectors[:, field.slice].astype(np.float32) for name, field in fields.items()}
    expected = np.concatenate([
        read["hand"],
        read["played"].reshape(k, n + 1, t).sum(axis=1),
        read["open_values"],
        read["markers"],
        read["passed_last"],
        read["hand_sizes"].reshape(k, n, m).sum(axis=2) / m,
        read["turns_until"].reshape(k, n, n) @ (np.arange(n, dtype=np.float32) / (n - 1)),
        read["dummy_open"],
    ], axis=1)
    np.testing.assert_allclose(td_lambda.BasicFeatures(config)(vectors), expected, rtol=1e-6, atol=0)


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
