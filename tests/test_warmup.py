"""Compiling before the work starts: every kernel the league's policies run is ready afterwards."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from baselines.harness import warmup
from baselines.policies.specs import PolicySpec
from dominoes_env.core import make_config

KERNELS = "rules.apply_action, rules.fill_legal_mask, observation.write_observation, search_chain"


def test_warm_up_readies_what_the_policies_run():
    """In a fresh process (this session has long compiled them): nothing is ready before, all after."""
    code = f"""
from baselines.harness import warmup
from baselines.policies.chain_search import search_chain
from baselines.policies.specs import PolicySpec
from dominoes_env.core import make_config, observation, rules
kernels = ({KERNELS})
before = [bool(kernel.signatures) for kernel in kernels]
warmup.warm_up([PolicySpec("persistent_line"), PolicySpec("random")], make_config(3, 6))
print(before, [bool(kernel.signatures) for kernel in kernels])
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split("\n")[-2] == "[False, False, False, False] [True, True, True, True]"


def test_warm_up_announces_only_when_slow():
    said = []
    warmup.warm_up([PolicySpec("persistent_line"), PolicySpec("random")], make_config(3, 6),
                   announce=lambda: said.append("compiling"), after_seconds=60.0)
    assert said == []  # quick (the cache is warm in a test session): no notice
    warmup.warm_up([PolicySpec("greedy")], make_config(3, 6), announce=lambda: said.append("compiling"),
                   after_seconds=0.0)
    assert said == ["compiling"]  # slower than the threshold: the notice is given


def test_a_cold_cache_shares_the_policies_with_a_helper_process_in_turns(monkeypatch, tmp_path):
    """This process and the helper take the policies in turns from a shared counter, the last
    listed first, each policy once; this process then plays every policy once (loading the
    helper's from the cache)."""
    import time

    monkeypatch.setattr(warmup, "_cache_is_cold", lambda *_: True)
    monkeypatch.setattr(warmup, "default_workers", lambda: 2)
    log = tmp_path / "turns.txt"
    original = warmup._play_once

    def slow_play(policies, *table):  # recorded by whichever process plays (the helper is forked)
        with open(log, "a") as out:
            out.write(f"{os.getpid()} {' '.join(policy.name for policy in policies)}\n")
        time.sleep(0.2)  # long enough for the helper to take its turns too
        original(policies, *table)

    monkeypatch.setattr(warmup, "_play_once", slow_play)
    specs = [PolicySpec(name) for name in ("greedy", "random", "double", "stupid", "greedy")]
    warmup.warm_up(specs, make_config(4, 9), start_method="fork")  # fork: the helper plays slow_play too
    distinct = [spec.name for spec in specs[:4]]
    lines = [line.split(" ", 1) for line in log.read_text().splitlines()]
    assert lines[-1] == [str(os.getpid()), " ".join(distinct)]  # last: every policy once, here
    turns = lines[:-1]
    assert sorted(name for _, name in turns) == sorted(distinct)  # each taken once, by one process
    pids = {pid for pid, _ in turns}
    assert len(pids) == 2 and str(os.getpid()) in pids  # both processes took turns
    mine = [name for pid, name in turns if pid == str(os.getpid())]
    assert mine == [name for name in distinct[::-1] if name in mine]  # in turn, the last listed first


@pytest.mark.slow
def test_the_helper_starts_with_the_chain_search_the_policies_call(tmp_path):
    """The helper's first work, the chain search, compiles exactly the specialisation the policies
    and the learners' features use: on a fresh cache (where every caller is compiled, so typed
    anew), playing them afterwards adds no compiled version of it."""
    code = """
from baselines.harness import warmup
from baselines.policies.chain_search import search_chain
from baselines.policies.specs import PolicySpec
from dominoes_env.core import make_config
warmup._compile_chain_search(make_config(4, 9))
before = set(search_chain.signatures)
warmup._play_once([PolicySpec(name) for name in ("persistent_line", "td_lambda", "linear_sarsa", "lookahead")],
                  make_config(4, 9))
print(len(before), set(search_chain.signatures) == before, bool(search_chain.stats.cache_misses))
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split("\n")[-2] == "1 True True"


@pytest.mark.slow
def test_a_cold_warm_up_with_a_helper_leaves_every_kernel_ready(tmp_path):
    """On a fresh cache with two cores, the helper's share is loaded from the cache afterwards:
    every kernel the policies run is ready in this process, and the engine's probe was compiled."""
    code = f"""
from baselines.harness import parallel, warmup
from baselines.policies.chain_search import search_chain
from baselines.policies.specs import PolicySpec
from dominoes_env.core import make_config, observation, rules
warmup._cores = lambda: 2
kernels = ({KERNELS})
warmup.warm_up([PolicySpec("persistent_line"), PolicySpec("random"), PolicySpec("greedy")], make_config(3, 6),
               start_method=parallel.start_method())
print(bool(rules.cache_probe.stats.cache_misses), [bool(kernel.signatures) for kernel in kernels])
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split("\n")[-2] == "True [True, True, True, True]"


@pytest.mark.slow
def test_a_cold_cache_compiles_each_rule_kernel_once_for_the_scalar_and_the_batched_engine(tmp_path):
    """numba compiles a kernel once per argument type: a read-only table on one path and a writable
    one on the other (or a literal 0 and an int64) compiled the rules and the encoder twice, about
    10 s of a cold test run. In a fresh cache, the scalar env, the batched engine and the
    after-states (which call the encoder with seat 0) must share one compilation of each."""
    code = """
import numpy as np, dominoes_env
from dominoes_env.core import afterstate, observation, rules
from dominoes_env.vector import VectorDominoes, random_legal_actions
env = dominoes_env.env(); env.reset(seed=0)
for agent in env.agent_iter():
    obs, _, done, cut, _ = env.last()
    env.step(None if done or cut else int(np.flatnonzero(obs['action_mask'])[0]))
vec = VectorDominoes(8, seed=0); obs, _ = vec.reset(); rng = np.random.default_rng(0)
for _ in range(30):
    obs, *_ = vec.step(random_legal_actions(obs['action_mask'], rng))
afterstate.afterstate(obs['observation'][0], int(np.flatnonzero(obs['action_mask'][0])[0]), 4, 9)
print([len(kernel.overloads) for kernel in (rules.apply_action, rules.is_legal, rules.fill_legal_actions,
                                            observation.write_observation)])
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split("\n")[-2] == "[1, 1, 1, 1]"
