"""examples/sb3_selfplay.py and examples/cleanrl_selfplay.py end to end at a small budget: train against
an opponent pool that grows snapshots of the learner, save, load back, rate, and the margin at a table
of three td_lambda (slow: about a minute each here)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from baselines import OpponentPool

pytestmark = pytest.mark.slow

STEPS, SNAPSHOT_EVERY, EVAL_HANDS = 32_768, 8_192, 400
#: Gain over a random player in the same seats and deals that a run must show, in pips per hand.
#: Measured at this budget (seed 0, 200 hands): sb3 +6.05 ± 1.43, cleanrl +5.73 ± 1.46; an untrained
#: network is within about ±1.4 of 0.
MIN_GAIN = 2.0


def check_run(run, tmp_path):
    generations = [name for name in run.pool.names if name.startswith("generation")]
    assert len(generations) == STEPS // SNAPSHOT_EVERY  # a snapshot after every 8,192 steps
    record = run.pool.record()
    assert record["td_lambda"][1] > 0 and record["generation 1"][1] > 0  # results reported by the env itself
    assert all(0 <= wins <= games for wins, games in record.values())
    assert run.rating.gain.gain >= MIN_GAIN
    assert run.margin.opponent == "td_lambda" and run.margin.hands == EVAL_HANDS and math.isfinite(run.margin.pips)


def test_the_sb3_self_play_example_snapshots_into_the_pool_and_beats_random_players(import_example, tmp_path):
    pytest.importorskip("sb3_contrib")
    run = import_example("sb3_selfplay").main(["--steps", str(STEPS), "--snapshot-every", str(SNAPSHOT_EVERY),
                                               "--eval-hands", str(EVAL_HANDS), "--bench", "off", "--seed", "0",
                                               "--out", str(tmp_path / "model.zip")])
    check_run(run, tmp_path)
    assert (tmp_path / "generation_1.zip").is_file() and run.model_path.is_file()
    saved = OpponentPool.load(tmp_path / "pool.json")  # the pool, its snapshots by spec, and the record
    assert saved.names == run.pool.names and saved.record() == run.pool.record()
    assert saved.member("generation 1") == f"maskable_ppo@{tmp_path / 'generation_1.zip'}"


def test_the_cleanrl_self_play_example_freezes_snapshots_and_beats_random_players(import_example, tmp_path):
    import torch

    example = import_example("cleanrl_selfplay")
    run = example.main(["--steps", str(STEPS), "--snapshot-every", str(SNAPSHOT_EVERY), "--eval-hands",
                        str(EVAL_HANDS), "--bench", "off", "--seed", "0", "--out", str(tmp_path / "agent.pt")])
    check_run(run, tmp_path)
    first, last = run.pool.member("generation 1"), run.pool.member("generation 4")
    assert any(not torch.equal(a, b) for a, b in zip(first.actor.state_dict().values(),
                                                     last.actor.state_dict().values()))  # frozen at different times
    again = example.main(["--rate-only", "--out", str(run.model_path), "--eval-hands", "8", "--bench", "quick"])
    assert again.rating.scorecard is not None  # the bench's 10-hand games: the agent reads their observations
    assert again.train_seconds == 0.0
    loaded = example.load(run.model_path)
    observation = np.zeros(loaded.config.num_actions, dtype=np.int8)
    observation[5] = 1
    assert loaded.act(np.zeros(479, dtype=np.int8), observation) == 5  # only legal moves


@pytest.mark.parametrize("script", ["sb3_selfplay", "cleanrl_selfplay"])
def test_bad_options_are_one_line_errors(import_example, script, capsys, tmp_path):
    if script == "sb3_selfplay":
        pytest.importorskip("sb3_contrib")
    example = import_example(script)
    for options, message in [(["--members", "nobody"], "nobody"), (["--games", "0"], "--games must be"),
                             (["--sampling", "elo"], "invalid choice")]:
        with pytest.raises(SystemExit):
            example.main(options)
        assert message in capsys.readouterr().err
    damaged = tmp_path / "damaged"
    damaged.write_bytes(b"not a model")
    for options in (["--out", str(damaged)], ["--out", str(tmp_path / "missing")]):
        with pytest.raises(SystemExit) as stopped:  # one line, before any rating
            example.main(["--rate-only", *options])
        assert str(stopped.value).startswith(f"{script}.py: error: --") and "\n" not in str(stopped.value)
