"""Compiling before the work starts: every kernel the league's policies run is ready afterwards."""

from __future__ import annotations

import subprocess
import sys

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
