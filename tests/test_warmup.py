"""Compiling before the work starts: every kernel the league's policies run is ready afterwards."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from baselines.harness import parallel, warmup
from baselines.policies.specs import PolicySpec
from dominoes_env.core import make_config

KERNELS = "rules.apply_action, rules.fill_legal_mask, observation.write_observation, search_best_chain"


def test_warm_up_readies_what_the_policies_run():
    """In a fresh process (this session has long compiled them): nothing is ready before, all after."""
    code = f"""
from baselines.harness import warmup
from baselines.policies.chain_search import search_best_chain
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


def test_a_cold_cache_splits_the_work_with_a_helper_process(monkeypatch):
    monkeypatch.setattr(warmup, "_cache_is_cold", lambda *_: True)
    monkeypatch.setattr(warmup, "_cores", lambda: 2)
    played = []
    original = warmup._play_once
    monkeypatch.setattr(warmup, "_play_once", lambda policies, *table: (played.append(list(policies)),
                                                                         original(policies, *table)))
    specs = [PolicySpec(name) for name in ("greedy", "random", "double", "stupid")]
    # the league's start method (torchrl, imported by other tests of a run, makes "spawn" the default)
    warmup.warm_up(specs, make_config(4, 9), start_method=parallel.start_method())
    # this process compiled every other policy, the helper (a separate process: not recorded here)
    # the rest, and this process then played the helper's half once, loading its work from the cache
    assert played == [specs[0::2], specs[1::2]]


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
