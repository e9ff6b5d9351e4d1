"""examples/jax_ppo.py end to end, as a user runs it: PPO compiled whole with the game in JAX trains
by self-play, its network is saved, loaded back into numpy, rated and benched (slow: about a
minute). At this budget it already beats random players (about +7 pips a hand at 200,000 steps)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from conftest import ROOT, printed_bench_rating

pytestmark = pytest.mark.slow

EXAMPLE = ROOT / "examples" / "jax_ppo.py"
STEPS = 81_920  # 20 updates of 64 games x 64 steps
EVAL_HANDS = 200


def test_the_example_trains_in_jax_saves_loads_into_numpy_rates_and_benches(tmp_path):
    pytest.importorskip("jax")
    pytest.importorskip("optax")
    saved = tmp_path / "network.npz"
    run = subprocess.run([sys.executable, str(EXAMPLE), "--steps", str(STEPS), "--seed", "0", "--out", str(saved),
                          "--num-envs", "64", "--num-steps", "64", "--hidden", "128", "128",
                          "--eval-hands", str(EVAL_HANDS), "--bench", "quick"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    assert saved.is_file() and f"trained {STEPS:,} steps" in run.stdout, run.stdout[-2000:]
    assert run.stdout.count(f"| jax_ppo({saved.name}) | {EVAL_HANDS} |") == 2, run.stdout
    gain = re.search(r"gain ([+-][\d.]+) ± ([\d.]+) pips per hand", run.stdout)
    assert gain and float(gain.group(1)) - float(gain.group(2)) > 0, run.stdout[-2000:]  # it learned
    printed_bench_rating(run.stdout, f"jax_ppo({saved.name})")


def test_a_network_of_another_table_or_a_foreign_file_is_refused_in_one_line(tmp_path):
    pytest.importorskip("jax")
    pytest.importorskip("optax")
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import jax_ppo
    finally:
        sys.path.remove(str(ROOT / "examples"))
    from dominoes_env import make_config
    foreign = tmp_path / "foreign.npz"
    foreign.write_bytes(b"not a network")
    with pytest.raises(ValueError, match="is not a network saved by jax_ppo.py"):
        jax_ppo.load(foreign, make_config(4, 9))
    params = {"trunk": [{"w": [[0.0]], "b": [0.0]}], "policy": {"w": [[0.0]], "b": [0.0]},
              "value": {"w": [[0.0]], "b": [0.0]}}
    other = tmp_path / "other.npz"
    jax_ppo.save(params, make_config(2, 6), jax_ppo.Settings(), other)
    with pytest.raises(ValueError, match="trained at another table"):
        jax_ppo.load(other, make_config(4, 9))
