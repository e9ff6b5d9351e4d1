"""Linear SARSA: features on written positions, the update, the weights file, the player, the command line."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

import numpy as np
import pytest

from baselines import linear_sarsa
from baselines.cli import main as dominoes
from baselines.cli import train as train_command
from baselines.command_line.learner import config_from_arguments
from baselines.harness.evaluate import evaluate
from baselines.learning.run import EVALUATION_SEED
from baselines.linear_sarsa import FEATURES, LinearSarsaConfig, LinearSarsaPolicy, MoveFeatures, Sarsa, Weights
from baselines.policies.registry import make_policy
from dominoes_env import make_config
from dominoes_env.core import HandState, Observer

TINY = LinearSarsaConfig(game=make_config(2, 6), hands=48, curriculum=(("random", 1.0),), parallel_hands=8,
                         eval_every=0, eval_opponents=())
THREE_SIX = make_config(3, 6)


def tile(a: int, b: int, config=THREE_SIX) -> int:
    return config.tiles.index(a, b)


def features_of(hand: HandState, actions: list[int]) -> dict[int, dict[str, float]]:
    """The features of some moves of the player to move, by action and name, as the env shows it the position."""
    observation = Observer(hand.config).encode(hand.state, hand.current_player)
    moves = MoveFeatures(hand.config)(observation[None], np.zeros(len(actions), dtype=np.int64), np.array(actions))
    return {action: dict(zip(FEATURES, row.tolist())) for action, row in zip(actions, moves.features)}


# --------------------------------------------------------------------------- features on written positions
@pytest.fixture(scope="module")
def written():
    """3 players, double-6, engine (6|6). I hold (3|6) (3|3) (1|3) (2|5) (0|0); seat 1 has played (5|6) on
    its line and its marker is up; seat 2's line is not started (so the dummy is closed)."""
    hand = HandState.from_position(
        THREE_SIX, [[tile(3, 6), tile(3, 3), tile(1, 3), tile(2, 5), tile(0, 0)], [tile(4, 6), tile(4, 4)],
                    [tile(2, 6)]], 6, lines={1: [tile(5, 6)]}, markers=[1])
    t = THREE_SIX.num_tiles
    own, elsewhere = tile(3, 6), 1 * t + tile(2, 5)  # (3|6) on my line; (2|5) on seat 1's line (relative line 1)
    assert sorted(hand.legal_actions().tolist()) == sorted([own, elsewhere])
    return features_of(hand, [own, elsewhere]), own, elsewhere


def test_the_features_of_a_move_on_my_own_line_are_what_a_reader_computes(written):
    values, own, _ = written
    scale = 6 * 10  # N x the largest hand (28 tiles for 3 players: 10)
    # Afterwards I hold (3|3) (1|3) (2|5) (0|0): 17 pips. My line is open at 3: the best chain is (3|3) then
    # (1|3) (a double uses no turn: both in the current turn), in-line 6 + 4, off the chain 7, value 10 - 7.
    expected = {"bias": 1, "tile_pips": 9 / 12, "is_double": 0, "on_own_line": 1, "on_other_line": 0, "on_dummy": 0,
                "is_pass": 0, "pips_left": 17 / scale, "tiles_left": 4 / 10, "chain_value": 3 / scale,
                "chain_tiles": 2 / 10, "off_chain_pips": 7 / scale, "doubles_left_pips": 6 / scale,
                # open to me: my line (3) and seat 1's (5, marker up): (3|3) (1|3) (2|5) fit
                "playable_tiles": 3 / 10, "my_marker_up": 0, "feeds_others": 0, "opens_dummy": 0,
                "markers_up": 1 / 2, "opponent_near_out": 1.0, "pips_left_near_out": 17 / scale}
    assert values[own] == pytest.approx(expected)


def test_the_features_of_a_move_on_an_open_line_are_what_a_reader_computes(written):
    values, _, elsewhere = written
    scale = 6 * 10
    # Afterwards I hold (3|6) (3|3) (1|3) (0|0): 19 pips; my line is still open at 6: the chain (3|6) (3|3)
    # (1|3) takes turns 0, 0, 1: 9 + 6 + 0.9 * 4, nothing left off it but (0|0).
    # Seat 1's line stays open to everyone (its marker is up) at 2: of the 21 tiles I cannot see
    # (28 - my 5 - (5|6) played - the engine), 6 have a 2: (0|2) (1|2) (2|2) (2|3) (2|4) (2|6).
    expected = {"bias": 1, "tile_pips": 7 / 12, "is_double": 0, "on_own_line": 0, "on_other_line": 1, "on_dummy": 0,
                "is_pass": 0, "pips_left": 19 / scale, "tiles_left": 4 / 10, "chain_value": 18.6 / scale,
                "chain_tiles": 3 / 10, "off_chain_pips": 0, "doubles_left_pips": 6 / scale,
                "playable_tiles": 1 / 10, "my_marker_up": 0, "feeds_others": 6 / 7, "opens_dummy": 0,
                "markers_up": 1 / 2, "opponent_near_out": 1.0, "pips_left_near_out": 19 / scale}
    assert values[elsewhere] == pytest.approx(expected)


def test_a_pass_puts_my_marker_up_and_a_move_that_starts_the_last_line_opens_the_dummy():
    config = make_config(2, 6)
    pass_action = config.pass_action
    stuck = HandState.from_position(config, [[tile(1, 2, config)], [tile(5, 6, config)]], 6)  # seat 1 can play
    assert stuck.legal_actions().tolist() == [pass_action]
    passing = features_of(stuck, [pass_action])[pass_action]
    assert passing["is_pass"] == 1 and passing["my_marker_up"] == 1 and passing["tile_pips"] == 0
    assert passing["pips_left"] == pytest.approx(3 / (6 * 14)) and passing["feeds_others"] == 0
    opening = HandState.from_position(config, [[tile(4, 6, config), tile(1, 1, config)], [tile(0, 5, config)]], 6,
                                      lines={1: [tile(2, 6, config)]})
    move = features_of(opening, [tile(4, 6, config)])[tile(4, 6, config)]  # my line was the last unstarted one
    assert move["opens_dummy"] == 1 and move["on_own_line"] == 1 and move["opponent_near_out"] == 1.0


def test_features_have_one_name_each_and_every_table_size_gets_them():
    assert len(set(FEATURES)) == len(FEATURES)
    for config in (make_config(2, 6), make_config(8, 15), make_config(4, 9, boneyard=True, cover_doubles=True)):
        policy = LinearSarsaPolicy(config, checkpoint=Weights(np.zeros(len(FEATURES)), replace(TINY, game=config)))
        result = evaluate([policy, "random"] + ["random"] * (config.num_players - 2), num_hands=config.num_players,
                          seed=0, num_players=config)
        assert result.num_hands == config.num_players  # every move checked against the mask by the shared loop


# --------------------------------------------------------------------------- the update
def test_one_sarsa_update_matches_a_hand_computation():
    rng = np.random.default_rng(3)
    w0 = rng.normal(size=len(FEATURES))
    f1, f2 = rng.random(len(FEATURES)), rng.random(len(FEATURES))
    sarsa = Sarsa(w0.copy(), gamma=0.9, tables=1, slots=1)
    learner, slot = np.array([0]), np.array([0])
    sarsa.move(learner, slot, f1[None], np.array([f1 @ w0]), np.array([False]))  # a first move: nothing to learn
    sarsa.apply(0.1)
    assert np.array_equal(sarsa.w, w0)
    q2 = f2 @ w0
    sarsa.move(learner, slot, f2[None], np.array([q2]), np.array([False]))
    sarsa.apply(0.1)
    w1 = w0 + 0.1 * (0 + 0.9 * q2 - f1 @ w0) * f1  # w <- w + alpha (r + gamma Q(s', a') - Q(s, a)) f(s, a)
    np.testing.assert_allclose(sarsa.w, w1, rtol=1e-12)
    sarsa.end_hand(0, 0, final_pips=12.0)  # the hand ends: delta = r - Q(s_K, a_K), r = -12
    sarsa.apply(0.05)
    np.testing.assert_allclose(sarsa.w, w1 + 0.05 * (-12.0 - f2 @ w1) * f2, rtol=1e-12)


def test_a_move_that_ends_the_hand_is_learned_towards_its_exact_value_and_tables_are_averaged():
    rng = np.random.default_rng(4)
    w0 = rng.normal(size=len(FEATURES))
    f = rng.random((2, len(FEATURES)))
    sarsa = Sarsa(w0.copy(), gamma=1.0, tables=2, slots=1)
    tables, slots = np.array([0, 1]), np.array([0, 0])
    sarsa.move(tables, slots, f, f @ w0, np.array([False, False]))
    sarsa.apply(0.1)
    # table 0 goes out (exact value 0), table 1 plays on; then table 1's hand ends at -7 pips
    ending = rng.random((2, len(FEATURES)))
    sarsa.move(tables, slots, ending, np.array([0.0, ending[1] @ w0]), np.array([True, False]))
    sarsa.apply(0.1)
    deltas = np.array([0.0 - f[0] @ w0, ending[1] @ w0 - f[1] @ w0])
    w1 = w0 + 0.1 * (deltas @ f) / 2  # the mean of the two tables' updates
    np.testing.assert_allclose(sarsa.w, w1, rtol=1e-12)
    sarsa.end_hand(0, 0, final_pips=0.0)  # table 0's last move ended the hand: nothing more to learn
    sarsa.end_hand(1, 0, final_pips=7.0)
    sarsa.apply(0.1)
    np.testing.assert_allclose(sarsa.w, w1 + 0.1 * (-7.0 - ending[1] @ w1) * ending[1], rtol=1e-12)


def test_the_step_size_halves_over_its_half_life_down_to_the_floor():
    config = LinearSarsaConfig(alpha=0.08, alpha_half_life=1000, alpha_floor=0.01)
    assert [config.step_size(hands) for hands in (0, 1000, 2000, 10_000)] == [0.08, 0.04, 0.02, 0.01]


# --------------------------------------------------------------------------- training
def test_training_is_deterministic_for_a_seed():
    first, again = linear_sarsa.train(TINY), linear_sarsa.train(TINY)
    assert np.array_equal(first, again) and np.abs(first).sum() > 0
    assert not np.array_equal(first, linear_sarsa.train(replace(TINY, seed=1)))


def test_self_play_and_every_table_rule_train_and_play(tmp_path):
    for rules in ({}, {"boneyard": True}, {"cover_doubles": True, "first_player": "left_of_engine"}):
        config = replace(TINY, curriculum=(("greedy", 1.0), ("self", 1.0)), game=make_config(2, 6, **rules))
        w = linear_sarsa.train(config)  # draws are forced moves: played without a step of their own
        path = linear_sarsa.save_weights(tmp_path / "rules.json", Weights(w, config))
        game = make_config(2, 6, **rules)
        policy = make_policy("linear_sarsa", game, checkpoint=str(path))
        assert policy.weights.config.game == game
        assert evaluate([policy, "random"], num_hands=20, seed=0, num_players=2, highest_double=6,
                        **rules).num_hands == 20
    with pytest.raises(ValueError, match="was trained for 2 players, double-6 \\(.*\\), not 2 players, double-6"):
        make_policy("linear_sarsa", 2, 6, checkpoint=str(path))  # the rule book's game: another game


@pytest.mark.slow
def test_a_short_run_beats_greedy_and_double():
    config = LinearSarsaConfig(hands=6000, curriculum=(("random", 0.2), ("greedy", 0.4), ("double", 0.4)),
                               eval_every=0, eval_opponents=())
    w = linear_sarsa.train(config)
    for opponent in ("greedy", "double"):
        player, opponents = linear_sarsa.evaluate_weights(w, config, opponent, 400).policies
        assert player.mean_pips < opponents.mean_pips - 1.5, opponent


@pytest.mark.slow
def test_the_shipped_weights_beat_greedy_and_double():
    for opponent in ("greedy", "double"):
        player, opponents = evaluate(["linear_sarsa", f"{opponent}:3"], num_hands=400, seed=1).policies
        assert player.mean_pips < opponents.mean_pips - 3, opponent


# --------------------------------------------------------------------------- the weights file
@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("weights") / "w.json"
    return linear_sarsa.save_weights(path, Weights(linear_sarsa.train(TINY), TINY, {"hands_trained": 48}))


def test_weights_save_and_load_back_exactly(saved, tmp_path):
    loaded = linear_sarsa.load_weights(saved)
    assert np.array_equal(loaded.w, linear_sarsa.train(TINY)) and loaded.config == TINY
    assert loaded.info == {"hands_trained": 48}
    content = json.loads(saved.read_text())  # readable: the format, the run's settings, a weight per name
    assert content["format"] == linear_sarsa.WEIGHTS_FORMAT and list(content["weights"]) == list(FEATURES)
    assert content["config"]["gamma"] == TINY.gamma
    again = linear_sarsa.save_weights(tmp_path / "again.json", loaded)
    assert again.read_bytes() == saved.read_bytes()


def _rewritten(saved, tmp_path, change):
    content = json.loads(saved.read_text())
    change(content)
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(content))
    return path


@pytest.mark.parametrize("change, message", [
    (lambda c: c.update(format="something/1"), "is not a linear_sarsa weights file"),
    (lambda c: c["weights"].pop("feeds_others"), "was written for other features \\(lacks \\['feeds_others'\\]\\)"),
    (lambda c: c["weights"].update(extra=1.0), "was written for other features \\(has unknown \\['extra'\\]\\)"),
    (lambda c: c.update(weights=dict(reversed(list(c["weights"].items())))), "in another order"),
    (lambda c: c["weights"].update(bias="1"), "not finite numbers within \\+-1e\\+06: \\['bias'\\]"),
    (lambda c: c["weights"].update(bias=True), "not finite numbers within \\+-1e\\+06: \\['bias'\\]"),
    (lambda c: c["weights"].update(bias=float("nan")), "not finite numbers within \\+-1e\\+06: \\['bias'\\]"),
    (lambda c: c["config"].update(num_players=99), "unreadable configuration: num_players must be an integer"),
    (lambda c: c["config"].update(parallel_hands=10**12), "unreadable configuration: parallel_hands"),
    (lambda c: c["config"].update(layers=3), "unreadable configuration: unknown configuration field"),
    (lambda c: c.update(config=[]), "unreadable configuration: the configuration must be a JSON object"),
    (lambda c: c.update(info="x"), "'info' entry that is not a JSON object"),
    (lambda c: c.update(extra=1), "must hold exactly the keys"),
])
def test_a_damaged_or_mismatched_weights_file_is_refused_naming_the_file(saved, tmp_path, change, message):
    path = _rewritten(saved, tmp_path, change)
    with pytest.raises(ValueError, match=message) as refusal:
        linear_sarsa.load_weights(path)
    assert str(refusal.value).startswith(f"linear_sarsa weights {str(path)!r} ") and "\n" not in str(refusal.value)


@pytest.mark.parametrize("content, message", [
    (b'{"format": "dominoes-linear-sarsa/1", "config": {', "is damaged or not JSON"),
    (b"\xff\xfe", "is damaged or not JSON"),
    (b"[1, 2]", "is not a linear_sarsa weights file"),
    (b" " * (linear_sarsa.weights.MAX_FILE_BYTES + 1), "is more than the 1,048,576 bytes this file can be"),
    (b"[" * 100_000, "is damaged or not JSON"),
])
def test_a_file_that_is_not_weights_is_refused_naming_the_file(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message) as refusal:
        linear_sarsa.load_weights(path)
    assert str(path) in str(refusal.value)
    with pytest.raises(ValueError, match="does not exist"):
        linear_sarsa.load_weights(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="is a directory, not a regular file"):
        linear_sarsa.load_weights(tmp_path)


def test_weights_for_another_table_are_refused(saved):
    with pytest.raises(ValueError, match="was trained for 2 players, double-6, not 4 players, double-9"):
        linear_sarsa.load_weights(saved, expected=make_config(4, 9))
    with pytest.raises(ValueError, match=f"linear_sarsa weights {str(saved)!r} was trained for 2 players"):
        make_policy("linear_sarsa", 4, 9, checkpoint=str(saved))
    with pytest.raises(ValueError, match="trained for 2 players, double-6, not 4 players, double-9"):
        LinearSarsaPolicy(4, 9, checkpoint=linear_sarsa.load_weights(saved))


# --------------------------------------------------------------------------- the player
def test_the_shipped_weights_load_play_legal_moves_and_sit_in_the_default_league_only_where_they_ship():
    policy = make_policy("linear_sarsa", 4, 9, seed=0)
    assert policy.weights.config.game == make_config(4, 9) and policy.weights.info["hands_trained"] > 0
    assert LinearSarsaPolicy.plays_by_default(make_config(4, 9))
    for other in (make_config(3, 9), make_config(4, 12), make_config(4, 9, boneyard=True)):
        assert not LinearSarsaPolicy.plays_by_default(other)
        shipped = r"\(it ships for: .*4 players, double-9.*\)"
        with pytest.raises(ValueError, match=rf"no linear_sarsa weights file ships for .*{shipped}; train one "
                                             r"with `dominoes train sarsa --players \d --highest \d+.*`"):
            make_policy("linear_sarsa", other)
    result = evaluate(["linear_sarsa", "random", "greedy", "double"], num_hands=40, seed=0)
    assert result.num_hands == 40


def test_a_batch_is_played_as_each_game_alone(saved):
    from dominoes_env import VectorDominoes

    policy = make_policy("linear_sarsa", 2, 6, checkpoint=str(saved))
    vec = VectorDominoes(48, 2, 6, seed=5)
    observations = vec.reset()[0]
    for _ in range(6):
        batch = policy.act_batch(observations["observation"], observations["action_mask"])
        alone = [policy.act(o, m) for o, m in zip(observations["observation"], observations["action_mask"])]
        assert batch.tolist() == alone
        observations = vec.step(batch)[0]


def test_policy_arguments_are_refused_clearly():
    with pytest.raises(ValueError, match="checkpoint must be a file path or linear_sarsa Weights"):
        LinearSarsaPolicy(4, 9, checkpoint=3)
    with pytest.raises(ValueError, match="does not exist"):
        make_policy("linear_sarsa", 4, 9, checkpoint="no/such/weights.json")


# --------------------------------------------------------------------------- the configuration and the command line
@pytest.mark.parametrize("field, value, message", [
    ("gamma", 1.5, "gamma must be a finite number in \\[0, 1\\]"),
    ("alpha", 0.0, "alpha must be a finite number in \\(0, 1\\]"),
    ("alpha_floor", 0.5, "alpha_floor must be at most alpha"),
    ("alpha_half_life", 0, "alpha_half_life must be an integer from 1"),
    ("epsilon", float("nan"), "epsilon"),
    ("hands", 10**15, "hands must be an integer from 0 to 1000000000"),
    ("parallel_hands", 5000, "parallel_hands"),
    ("curriculum", (), "1 to 64 stages"),
    ("eval_hands", 1, "eval_hands must be at least num_players"),
])
def test_every_field_is_bounded(field, value, message):
    with pytest.raises(ValueError, match=message):
        LinearSarsaConfig(**{field: value})


def test_the_seed_defaults_and_every_option_reads_its_default_back():
    config = LinearSarsaConfig()
    assert (config.gamma, config.alpha_floor, config.epsilon) == (0.9, 1e-4, 0.1)
    parser = argparse.ArgumentParser()
    train_command.add_arguments(parser)
    from baselines.linear_sarsa import cli as sarsa_command

    assert config_from_arguments(parser.parse_args(["sarsa"]), sarsa_command.LEARNER) == config
    for name, option, default in LinearSarsaConfig.command_line_options():
        assert option.check(option.flag, option.parse(option.show(default))) == default, name


def test_the_train_command_writes_weights_log_and_curve(tmp_path):
    arguments = ["sarsa", "--players", "2", "--highest", "6", "--hands", "32", "--parallel-hands", "8",
                 "--eval-every", "16", "--eval-hands", "8", "--eval-opponents", "random", "--curriculum",
                 "random+greedy:1,self:1", "--gamma", "1", "--out", str(tmp_path), "--no-progress"]
    assert dominoes(["train", *arguments]) == 0
    for name in ("linear_sarsa.json", "latest.json", "log.csv", "learning_curve.png"):
        assert (tmp_path / name).stat().st_size > 0
    rows = (tmp_path / "log.csv").read_text().splitlines()
    header = rows[0].split(",")
    assert header == ["hands", "kind", "opponent", "own_pips", "opponent_pips", "win_rate", "td_error", "alpha",
                      "hands_per_s", "elapsed_s"]
    assert sum(",eval,random," in row for row in rows) == 2 and sum(",train," in row for row in rows) == 2
    weights = linear_sarsa.load_weights(tmp_path / "linear_sarsa.json")
    assert weights.config.gamma == 1.0 and weights.info["hands_trained"] == 32
    last = [row.split(",") for row in rows if ",eval,random," in row][-1]  # the final weights, by the harness
    player = LinearSarsaPolicy(2, 6, seed=EVALUATION_SEED, checkpoint=weights)
    result = evaluate([player, "random"], 8, seed=EVALUATION_SEED, num_players=2, highest_double=6)
    assert float(last[header.index("own_pips")]) == round(result.policies[0].mean_pips, 3)
    assert float(last[header.index("win_rate")]) == round(result.policies[0].won, 4)
    # and training goes on from a weights file
    assert dominoes(["train", *arguments[:-3], "--init", str(tmp_path / "linear_sarsa.json"),
                     "--out", str(tmp_path / "more"), "--no-progress"]) == 0
    # or from the weights of another table: the features mean the same at every size and rule
    other = [*arguments[:-3], "--players", "3", "--rules", "mexican_train"]
    assert dominoes(["train", *other, "--init", str(tmp_path / "linear_sarsa.json"),
                     "--out", str(tmp_path / "other"), "--no-progress"]) == 0
    moved = linear_sarsa.load_weights(tmp_path / "other" / "linear_sarsa.json")
    assert moved.config.game == make_config(3, 6, rules="mexican_train")
    assert moved.info["initialized_from"] == str(tmp_path / "linear_sarsa.json")


@pytest.mark.parametrize("arguments", [
    ["--gamma", "2"], ["--gamma", "x"], ["--alpha", "0"], ["--alpha-floor", "1"], ["--alpha-half-life", "0"],
    ["--epsilon", "-0.1"], ["--hands", "1e30"], ["--players", "9"], ["--curriculum", "nosuch:1"],
    ["--eval-opponents", "nobody"], ["--out", "/etc/passwd"], ["--init", "missing.json"],
])
def test_bad_command_lines_get_one_error_line(arguments, tmp_path, capsys):
    if "--out" not in arguments:
        arguments += ["--out", str(tmp_path / "run")]
    assert dominoes(["train", "sarsa", "--no-progress", *arguments]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dominoes train: error: ") and err.count("\n") == 1, err
    assert not (tmp_path / "run").exists()  # refused before anything is written


def test_train_without_a_learner_or_with_an_unknown_one_is_one_error_line(capsys):
    for arguments in ([], ["q-learning"]):
        with pytest.raises(SystemExit) as exit_status:
            dominoes(["train", *arguments])
        assert exit_status.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("dominoes train: error: ") and err.count("\n") == 1, err
