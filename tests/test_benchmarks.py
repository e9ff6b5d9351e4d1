"""Every benchmark script still runs, at its smallest setting: the figures in the docs come from
them, so one that rots after a move of the code would leave a figure nobody can re-run."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT

RUNS = {
    "baselines_speed.py": ["--hands", "4", "--repeats", "1", "--configs", "3x6"],
    "belief_decisions.py": ["--hands", "2", "--workers", "1", "--player", "champion(simulations=8)", "--twins",
                            "champion(simulations=8, inference='network')", "oracle(simulations=8)", "--rollouts", "2"],
    "belief_quality.py": ["--hands", "2", "--tables", "4p_d9", "--plot", "beliefs.png"],
    "bench_at_one_table.py": ["--players", "random", "greedy", "--quick"],
    "chain_search_bound.py": ["--hands", "2"],
    "champion_speed.py": ["--hands", "1", "--specs", "td_lambda", "champion(simulations=8)", "--players", "2",
                          "--highest", "12", "--rules", "mexican_train"],
    "champion_strength.py": ["--hands", "8", "--player", "champion(simulations=8)", "--opponents", "random",
                             "--workers", "1"],
    "cold_start.py": ["--repeats", "1", "--commands", "hand"],
    "env_throughput.py": ["--seconds", "0.2"],
    "hidden_sampling.py": ["--games", "1"],
    "dmc_vs_ppo.py": ["--minutes", "0.02", "--players", "2", "--highest", "6", "--num-envs", "16",
                      "--eval-every", "2048", "--eval-hands", "8", "--opponent", "random", "--out", "runs"],
    "imitation_curves.py": ["--curve", "clone", "dataset:2098",
                            str(ROOT / "baselines/checkpoints/ppo_clone_4p_d9.log.csv"), "--curve", "self-play", "none",
                            str(ROOT / "baselines/checkpoints/ppo_selfplay_4p_d9.stage1.log.csv"),
                            "--out", "curves.png"],
    "jax_throughput.py": ["--sizes", "16", "--seconds", "0.2", "--unroll", "4"],
    "league_speed.py": ["--games", "4", "--workers", "1", "--split"],
    "learned_players_by_table.py": ["--hands", "8", "--two-player-hands", "8", "--transfer"],
    "lookahead_speed.py": ["--hands", "2", "--specs", "lookahead"],
    "openspiel_mccfr.py": ["--seconds", "0.2", "--tables", "2x6"],
    "ppo_throughput.py": ["--hidden", "8", "--num-envs", "16", "--rollout-steps", "4", "--updates", "1",
                          "--skip-cleanrl"],
    "pufferlib_vector.py": ["--seconds", "0.2", "--batch", "8", "--big-batch", "16"],
    "render_speed.py": ["--games", "1", "--repeats", "1"],
    "table_rule_leagues.py": ["--games", "4", "--workers", "1"],
    "td_lambda_speed.py": ["--hands", "4"],
    "torchrl_vector.py": ["--moves", "40", "--games", "8", "--batched-moves", "400"],
    "vector_threads.py": ["--seconds", "0.2", "--batch", "512"],
    "vector_throughput.py": ["--seconds", "0.2", "--sizes", "2"],
}


def test_every_benchmark_is_listed():
    assert sorted(RUNS) == sorted(path.name for path in (ROOT / "benchmarks").glob("*.py"))


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(RUNS))
def test_the_benchmark_runs(script, tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *RUNS[script]], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip()


@pytest.mark.slow
def test_the_table_size_costs_run_and_name_every_table(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "vector_throughput.py"), "--tables", "--seconds",
                           "0.1"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line for line in done.stdout.splitlines() if " players, double-" in line]
    assert [row.split()[0] + row.split()[2] for row in rows] == ["2double-6", "4double-9", "6double-12", "8double-15",
                                                                 "8double-18"]
    assert all(row.count(" us") == 2 for row in rows)


@pytest.mark.slow
def test_comparing_a_player_with_itself_on_the_same_deals_gives_no_difference(tmp_path):
    """champion_strength.py --compare plays the second player on the same deals and seeds: the
    same player twice plays the same games, so the difference deal by deal is exactly zero,
    while its own figure against the opponents is not."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "champion_strength.py"), "--hands", "16",
                           "--player", "greedy", "--compare", "greedy", "--opponents", "random", "--workers", "2"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    row = next(line for line in done.stdout.splitlines() if line.startswith("| 3x random"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[2] == cells[3] != "+0.00 ± 0.00" and cells[4] == "+0.00 ± 0.00"


@pytest.mark.slow
def test_pooling_two_recorded_runs_reads_their_deals_as_one_match_and_refuses_overlapping_shares(tmp_path):
    """--pool prints the figure of the deals of both record files together (nothing is played again),
    and refuses two different shares of one match on one seed, whose deals would count twice."""
    script = [sys.executable, str(ROOT / "benchmarks" / "champion_strength.py")]
    match = ["--player", "greedy", "--opponents", "random", "--workers", "1", "--shares", "1"]
    for seed, hands in (("3", "8"), ("9", "8"), ("3", "12")):
        done = subprocess.run([*script, *match, "--seed", seed, "--hands", hands, "--record",
                               f"seed{seed}_{hands}.jsonl"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
    deals = np.concatenate([json.loads(line)["deals"] for name in ("seed3_8.jsonl", "seed9_8.jsonl")
                            for line in (tmp_path / name).read_text().splitlines()])
    done = subprocess.run([*script, "--pool", "seed3_8.jsonl", "seed9_8.jsonl"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    cells = [cell.strip() for cell in done.stdout.splitlines()[-1].strip("|").split("|")]
    interval = 1.96 * deals.std(ddof=1) / np.sqrt(deals.shape[0])
    assert cells[3:] == ["3, 9", str(4 * deals.shape[0]), f"{deals.mean():+.2f} ± {interval:.2f}"]
    refused = subprocess.run([*script, "--pool", "seed3_8.jsonl", "seed3_12.jsonl"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=600)
    assert refused.returncode == 2 and "on seed 3 (their deals overlap)" in refused.stderr
    assert "Traceback" not in refused.stderr


@pytest.mark.slow
def test_the_cold_start_times_another_checkout_beside_this_one(tmp_path):
    """The other checkout's code is what runs for it: a copy of the package that leaves a mark
    when imported, timed beside this checkout; this checkout itself, or no checkout, is refused."""
    import shutil

    other = tmp_path / "other"
    shutil.copytree(ROOT / "dominoes_env", other / "dominoes_env", ignore=shutil.ignore_patterns("__pycache__"))
    with open(other / "dominoes_env" / "__init__.py", "a") as init:
        init.write("\nopen(__file__ + '.imported', 'w').close()\n")
    script = [sys.executable, str(ROOT / "benchmarks" / "cold_start.py")]
    done = subprocess.run([*script, "--repeats", "1", "--commands", "hand", "--against", str(other)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| `import")]
    assert [row.split("(")[-1].split(")")[0] for row in rows] == ["this checkout", str(other)]
    assert (other / "dominoes_env" / "__init__.py.imported").is_file()
    assert not (ROOT / "dominoes_env" / "__init__.py.imported").exists()
    for against in (tmp_path, ROOT):
        refused = subprocess.run([*script, "--against", str(against)], capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2 and refused.stderr.strip().splitlines()[-1].endswith(f"got {str(against)!r}")


@pytest.mark.slow
def test_the_trainers_busy_ratio_is_measured_beside_a_process_it_starts(tmp_path):
    """ppo_throughput.py --busy: the trainer quiet, then beside a spinning process it starts and stops itself."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "ppo_throughput.py"), "--busy", "--hidden", "8",
                           "--num-envs", "16", "--rollout-steps", "4", "--updates", "2"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    ratio = next(line for line in done.stdout.splitlines() if line.strip().startswith("ratio busy / quiet"))
    assert float(ratio.split()[4]) > 0 and "torch threads auto" in done.stdout


@pytest.mark.slow
def test_a_twin_that_chooses_as_the_player_gains_exactly_nothing_and_one_that_does_not_is_judged(tmp_path):
    """belief_decisions.py judges moves only where a twin chose otherwise: greedy shadowing greedy
    (deterministic) never does, so its gain is exactly 0; the look-ahead does, and gets a figure."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "belief_decisions.py"), "--player", "greedy",
                           "--twins", "greedy", "lookahead(samples=4)", "--hands", "3", "--workers", "1", "--rollouts",
                           "2"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {cells[0]: cells[1:] for line in done.stdout.splitlines() if line.startswith("| ") and "%" in line
            for cells in [[cell.strip() for cell in line.strip("|").split("|")]]}
    assert rows["greedy"] == ["0.0%", "+0.000 ± 0.000"]
    assert float(rows["lookahead(samples=4)"][0].rstrip("%")) > 0
    assert rows["lookahead(samples=4)"][1] != "+0.000 ± 0.000"


def test_a_match_against_copies_of_the_player_itself_is_refused_before_any_hand(tmp_path):
    """champion_strength.py cannot tell a player's seats from its opponents' when they are one policy
    (however the spec is typed): one line, exit status 2, before a hand is played (it crashed after
    the whole match once)."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "champion_strength.py"), "--player", "greedy",
                           "--compare", "lookahead( samples = 8 )", "--opponents", "lookahead(samples=8)",
                           "--hands", "100000", "--workers", "1"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2
    assert "lookahead( samples = 8 ) is also an opponent" in done.stderr.splitlines()[-1]
    assert "|" not in done.stdout  # no table begun: nothing was played
