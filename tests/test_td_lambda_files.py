"""The TD(lambda) learner without torch: checkpoint files and every check on them, the numpy player,
the shipped checkpoint, the features, the configuration's bounds and the command line's refusals.

Nothing here imports torch: checkpoints are written from seeded numpy weights, not trained. Training,
the torch network and the command-line checks that run once training starts: test_td_lambda.py, under
the torch marker.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("safetensors")
from safetensors import safe_open  # noqa: E402
from safetensors.numpy import save_file  # noqa: E402

import dominoes_env  # noqa: E402
from baselines import td_lambda  # noqa: E402
from baselines.cli import main as dominoes  # noqa: E402
from baselines.cli import train as train_command  # noqa: E402
from baselines.command_line.learner import config_from_arguments  # noqa: E402
from baselines.harness.play import play_game  # noqa: E402
from baselines.policies.registry import make_policy  # noqa: E402
from dominoes_env import make_config  # noqa: E402
from dominoes_env.core.observation import observation_fields  # noqa: E402

TINY = td_lambda.TDLambdaConfig(
    game=make_config(2, 6), hidden_sizes=(16, 8), hands=48, curriculum=(("random", 1.0),),
    parallel_hands=8, eval_every=0, eval_opponents=(), alpha=1e-3)


def tiny_theta(config: td_lambda.TDLambdaConfig = TINY, seed: int = 0) -> np.ndarray:
    """Small seeded float32 weights of `config`'s network: a checkpoint's worth, without training (or torch)."""
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, 0.1, config.architecture.num_weights).astype(np.float32)


def tiny_checkpoint(path: Path, config: td_lambda.TDLambdaConfig = TINY, seed: int = 0) -> Path:
    """A checkpoint file of `config` holding :func:`tiny_theta`."""
    return td_lambda.save_checkpoint(path, tiny_theta(config, seed), config)


def refused_in_one_line(arguments: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """``dominoes train td-lambda`` with `arguments` exits 2 with one error line and trains nothing; the line."""
    if "--out" not in arguments:
        arguments = [*arguments, "--out", str(tmp_path / "run")]
    assert dominoes(["train", "td-lambda", "--no-progress", *arguments]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dominoes train: error: ") and err.count("\n") == 1, err
    assert not (tmp_path / "run" / "log.csv").exists()  # refused before any training
    return err


def test_a_hand_ending_after_state_is_worth_the_pips_still_held():
    config = TINY
    value = td_lambda.NumpyValue(tiny_theta(config), config.architecture)
    features = td_lambda.make_features(config)
    vectors = np.zeros((2, dominoes_env.core.Observer(config.game).size), dtype=np.int8)
    vectors[1, 3] = 1  # holds tile 3, (0|3)
    values = td_lambda.predicted_final_pips(value, features, vectors, np.array([True, True]))
    np.testing.assert_array_equal(values, [0.0, 3.0])


def test_a_checkpoint_for_another_table_is_refused(tmp_path):
    path = tiny_checkpoint(tmp_path / "tiny.safetensors")
    with pytest.raises(ValueError, match="trained for 2 players, double-6"):
        make_policy("td_lambda", 4, 9, checkpoint=str(path))


def test_a_damaged_checkpoint_is_refused_clearly(tmp_path):
    path = tiny_checkpoint(tmp_path / "tiny.safetensors")
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
    path = tmp_path / "foreign.safetensors"
    save_file({"weight": np.zeros(3, dtype=np.float32)}, str(path), metadata={"format": "something-else"})
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
    with pytest.raises(ValueError, match="game must be a GameConfig"):
        td_lambda.TDLambdaConfig(game=(9, 9))  # the table is one value, checked by make_config


def test_curriculum_shares_split_the_hands_exactly():
    config = td_lambda.TDLambdaConfig(hands=1001, curriculum=(("random", 1), ("double", 1), ("self", 1)))
    assert [name for name, _ in config.stage_hands()] == ["random", "double", "self"]
    assert sum(count for _, count in config.stage_hands()) == 1001
    assert td_lambda.parse_curriculum("random:0.2,self") == (("random", 0.2), ("self", 1.0))
    with pytest.raises(ValueError, match="OPPONENT:SHARE"):
        td_lambda.parse_curriculum("random:lots")


def test_line_features_hold_the_exact_best_chain_of_the_after_state():
    from baselines.policies.chain_search import best_chain
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


def test_the_train_command_refuses_unknown_opponents(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    train_command.add_arguments(parser)
    args = parser.parse_args(["td-lambda", "--curriculum", "nobody:1", "--out", str(tmp_path)])
    assert train_command.run(args) == 2
    assert "unknown opponent(s) ['nobody']" in capsys.readouterr().err


@pytest.mark.parametrize("arguments, misused", [
    (["sarsa", "--curriculum", "self+double:1"], "'self'"),
    (["sarsa", "--eval-opponents", "self"], "'self'"),
    (["td-lambda", "--eval-opponents", "random,self"], "'self'"),
    (["lookahead", "--curriculum", "double:1,previous+random:1"], "'previous'"),
    (["lookahead", "--eval-opponents", "previous"], "'previous'"),
])
def test_a_special_stage_is_refused_anywhere_but_as_a_whole_stage_before_anything_is_written(tmp_path, capsys,
                                                                                            arguments, misused):
    parser = argparse.ArgumentParser()
    train_command.add_arguments(parser)
    out = tmp_path / "run"
    assert train_command.run(parser.parse_args([*arguments, "--hands", "16", "--out", str(out)])) == 2
    err = capsys.readouterr().err
    assert f"{misused} can only be a whole curriculum stage" in err and err.count("\n") == 1
    assert not out.exists()


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


# --------------------------------------------------------------------------- checkpoints: every check
def _metadata(path: Path) -> dict[str, str]:
    with safe_open(str(path), framework="np") as handle:
        return dict(handle.metadata())


def _rewrite(path: Path, theta, checksum: bool = True, **metadata) -> Path:
    """Write `theta` with `path`'s metadata, changed by `metadata` (a correct checksum unless told not to)."""
    values = {**_metadata(path), **metadata}
    if checksum:
        values["sha256"] = td_lambda.checkpoint.checksum(theta)
    out = path.with_name("rewritten.safetensors")
    save_file({"theta": theta}, str(out), metadata=values)
    return out


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    return tiny_checkpoint(tmp_path_factory.mktemp("checkpoint") / "tiny.safetensors")


def test_a_checkpoint_records_format_2_with_the_checksum_of_its_weights(saved):
    metadata = _metadata(saved)
    checkpoint = td_lambda.load_checkpoint(saved)
    assert metadata["format"] == td_lambda.CHECKPOINT_FORMAT == "dominoes-td-lambda/2"
    assert metadata["sha256"] == td_lambda.checkpoint.checksum(checkpoint.theta)
    assert checkpoint.config == TINY and checkpoint.info == {}


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_weights_are_refused(saved, bad):
    theta = td_lambda.load_checkpoint(saved).theta
    theta[5] = bad
    with pytest.raises(ValueError, match=r"rewritten.safetensors.*1 of its \d+ weights are not finite"):
        td_lambda.load_checkpoint(_rewrite(saved, theta))
    with pytest.raises(ValueError, match="not finite"):
        td_lambda.save_checkpoint(saved.with_name("never.safetensors"), theta, TINY)
    assert not saved.with_name("never.safetensors").exists()


def test_weights_of_another_dtype_are_refused(saved):
    theta = td_lambda.load_checkpoint(saved).theta.astype(np.float64)
    with pytest.raises(ValueError, match="stores its weights as F64, not float32"):
        td_lambda.load_checkpoint(_rewrite(saved, theta))


def test_a_corrupted_checksum_is_refused(saved, tmp_path):
    damaged = tmp_path / "flipped.safetensors"
    data = bytearray(saved.read_bytes())
    data[-3] ^= 0x40  # one bit of the last weight
    damaged.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="flipped.safetensors.*fails its checksum"):
        td_lambda.load_checkpoint(damaged)
    theta = td_lambda.load_checkpoint(saved).theta
    with pytest.raises(ValueError, match="fails its checksum"):
        td_lambda.load_checkpoint(_rewrite(saved, theta, checksum=False, sha256="0" * 64))
    with pytest.raises(ValueError, match="no 'sha256' checksum"):
        metadata = {key: value for key, value in _metadata(saved).items() if key != "sha256"}
        bare = tmp_path / "bare.safetensors"
        save_file({"theta": theta}, str(bare), metadata=metadata)
        td_lambda.load_checkpoint(bare)


def test_a_wrong_number_of_weights_is_refused(saved):
    theta = td_lambda.load_checkpoint(saved).theta
    for wrong in (theta[:-1], np.concatenate([theta, theta[:1]]), theta.reshape(1, -1)):
        with pytest.raises(ValueError, match=rf"needs \({theta.size},\)"):
            td_lambda.load_checkpoint(_rewrite(saved, np.ascontiguousarray(wrong)))


def test_a_metadata_layer_of_a_billion_units_is_refused_before_anything_is_allocated(saved):
    import tracemalloc

    config = json.loads(_metadata(saved)["config"])
    huge = _rewrite(saved, td_lambda.load_checkpoint(saved).theta,
                    config=json.dumps({**config, "hidden_sizes": [10**9, 8]}))
    tracemalloc.start()
    with pytest.raises(ValueError, match=r"rewritten.safetensors.*unreadable configuration.*hidden_sizes.*4096"):
        td_lambda.load_checkpoint(huge)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 10 * 2**20  # refused from the metadata: nothing of the claimed size was allocated


def test_a_format_1_checkpoint_without_checksum_still_loads_with_every_other_check(saved):
    """Format 1 files (no checksum; written before the rename, so their config says highest_dominoe)."""
    theta = td_lambda.load_checkpoint(saved).theta
    config = json.loads(_metadata(saved)["config"])
    config["highest_dominoe"] = config.pop("highest_double")
    old = {"format": "dominoes-td-lambda/1", "config": json.dumps(config), "info": "{}"}
    path = saved.with_name("format1.safetensors")
    save_file({"theta": theta}, str(path), metadata=old)
    loaded = td_lambda.load_checkpoint(path)
    assert loaded.config == TINY and np.array_equal(loaded.theta, theta)
    assert make_policy("td_lambda", 2, 6, checkpoint=str(path)).training_config == TINY
    theta = theta.copy()
    theta[0] = np.nan
    save_file({"theta": theta}, str(path), metadata=old)
    with pytest.raises(ValueError, match="not finite"):
        td_lambda.load_checkpoint(path)


def test_the_shipped_checkpoint_is_format_2_and_keeps_its_training_record():
    path = td_lambda.shipped_checkpoint(make_config(4, 9))
    metadata = _metadata(path)
    checkpoint = td_lambda.load_checkpoint(path)
    assert metadata["format"] == "dominoes-td-lambda/2"
    assert checkpoint.info["hands_trained"] == 300_000 and checkpoint.config.variant == "line"
    assert checkpoint.theta.shape == (46_209,)


def test_policy_arguments_are_validated_clearly():
    with pytest.raises(ValueError, match="epsilon must be a finite number in .*got 'x'"):
        make_policy("td_lambda", epsilon="x")
    with pytest.raises(ValueError, match="epsilon"):
        make_policy("td_lambda", epsilon=float("nan"))
    with pytest.raises(ValueError, match="checkpoint must be a file path"):
        make_policy("td_lambda", checkpoint=42)


def test_a_policy_from_weights_in_memory_plays_as_the_same_weights_from_a_file(saved):
    checkpoint = td_lambda.load_checkpoint(saved)
    from_file = make_policy("td_lambda", 2, 6, checkpoint=str(saved))
    in_memory = td_lambda.TDLambdaPolicy(2, 6, checkpoint=checkpoint)
    env = dominoes_env.raw_env(2, 6)
    for seed in range(3):
        env.reset(seed=seed)
        while not env.game.is_over:
            observed = env.observe(env.agent_selection)
            action = from_file.act(observed["observation"], observed["action_mask"])
            assert in_memory.act(observed["observation"], observed["action_mask"]) == action
            env.step(action)
    with pytest.raises(ValueError, match="trained for 2 players, double-6"):
        td_lambda.TDLambdaPolicy(4, 9, checkpoint=checkpoint)
    with pytest.raises(ValueError, match="weights"):
        td_lambda.Checkpoint(checkpoint.theta[:-1], TINY)


ACTING_WITHOUT_TORCH = """
import sys
sys.modules["torch"] = None  # any `import torch` now fails
import baselines.td_lambda
import dominoes_env
from baselines.harness.play import play_game
from baselines.policies.registry import make_policy
policies = [make_policy("td_lambda", seed=0)] + [make_policy("random", seed=seat) for seat in range(3)]
result = play_game(dominoes_env.raw_env(4, 9), policies, seed=0)
assert result.hand_scores.shape == (1, 4)
print("played without torch")
"""


def test_acting_never_imports_torch():
    done = subprocess.run([sys.executable, "-c", ACTING_WITHOUT_TORCH], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "played without torch" in done.stdout


# --------------------------------------------------------------------------- the configuration and the command line
def test_every_option_writes_and_reads_its_default_back():
    parser = argparse.ArgumentParser()
    train_command.add_arguments(parser)
    from baselines.td_lambda import cli as td_command

    assert config_from_arguments(parser.parse_args(["td-lambda"]), td_command.LEARNER) == td_lambda.TDLambdaConfig()
    for name, option, default in td_lambda.TDLambdaConfig.command_line_options():
        if default is not None:
            assert option.check(option.flag, option.parse(option.show(default))) == default, name


@pytest.mark.parametrize("field, value, message", [
    ("hidden_sizes", (10**9,), "hidden_sizes .each width. must be an integer from 1 to 4096"),
    ("hidden_sizes", (8,) * 9, "1 to 8 hidden widths"),
    ("hidden_sizes", (), "1 to 8 hidden widths"),
    ("hands", 10**15, "hands must be an integer from 0 to 1000000000"),
    ("parallel_hands", 0, "parallel_hands"),
    ("alpha", float("nan"), "alpha must be a finite number"),
    ("self_play_alpha", 0.0, "self_play_alpha"),
    ("epsilon", "x", "epsilon"),
    ("eval_hands", 3, "eval_hands must be at least num_players"),
    ("curriculum", (("random", float("inf")),), "finite"),
    ("curriculum", (("random", 0.0), ("self", 0.0)), "add up to more than 0"),
    ("curriculum", (), "1 to 64 stages"),
    ("eval_opponents", ("",), "must name a policy"),
    ("seed", -1, "seed"),
])
def test_every_field_is_bounded(field, value, message):
    with pytest.raises(ValueError, match=message):
        td_lambda.TDLambdaConfig(**{field: value})


def test_a_configuration_whose_traces_would_fill_the_machine_is_refused():
    with pytest.raises(ValueError, match="eligibility traces would need"):
        td_lambda.TDLambdaConfig(hidden_sizes=(4096,) * 4, parallel_hands=4096)


def test_the_table_options_are_every_commands_own(capsys):
    """--players, --highest and the table rules come from the options every command shares: a
    table that is no integer is argparse's one line, as in dominoes league or play."""
    with pytest.raises(SystemExit) as exit_status:
        dominoes(["train", "td-lambda", "--players", "x"])
    err = capsys.readouterr().err
    assert exit_status.value.code == 2 and err.count("\n") == 1
    assert "argument --players: 'x' is not an integer written in ASCII digits" in err


@pytest.mark.parametrize("arguments", [
    ["--hidden", "0"], ["--hidden", "1000000000"], ["--hidden", "x"], ["--hidden", "4096,4096,4096,4096"],
    ["--curriculum", "random:nan"], ["--curriculum", "random:-1"], ["--curriculum", "nosuch:1"],
    ["--curriculum", "random:lots"], ["--eval-hands", "0"], ["--eval-opponents", "nobody"],
    ["--hands", "1000000000000000"], ["--players", "9"], ["--highest", "19"],
    ["--seed", "-1"], ["--parallel-hands", "0"], ["--alpha", "0"], ["--lambda", "2"], ["--epsilon", "1.5"],
    ["--self-play-alpha", "-1"], ["--variant", "deep"],
])
def test_bad_command_lines_get_one_error_line(arguments, tmp_path, capsys):
    """Refused by the configuration's own checks, before the learner asks for torch (--out and
    --init are checked once the run starts: test_td_lambda.py)."""
    err = refused_in_one_line(arguments, tmp_path, capsys)
    assert "training needs torch" not in err, err
