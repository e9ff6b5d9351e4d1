"""Compile the rules engine and the policies' kernels once, before the real work starts.

The engine and the policies are numba-compiled on first use, and numba keeps the machine
code in a disk cache next to the sources. On a new machine (or after an upgrade) the first
use compiles: seconds of work that used to happen inside the first game of every league
worker at once, under a progress bar that promised hours. :func:`warm_up` does it first,
in the calling process, with a notice when it is slow; workers forked afterwards inherit
the compiled code, and spawned or Ray workers load it from the cache.

When the cache is cold and there is a second core, half of the policies are compiled in a
helper process at the same time (both write the shared disk cache), and this process then
loads that half from the cache: about a third less waiting on two cores.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

import dominoes_env
from baselines.harness.play import play_game
from baselines.harness.threads import single_threaded_torch
from baselines.policies import registry
from baselines.policies.specs import PolicySpec
from dominoes_env.core import HandState, rules
from dominoes_env.core.config import GameConfig


def warm_up(policies: Sequence[PolicySpec], config: GameConfig, announce: Callable[[], None] | None = None,
            after_seconds: float = 1.0, start_method: str | None = None) -> None:
    """Play one hand with each policy so that everything they run is compiled (or loaded).

    `announce` is called if this takes longer than `after_seconds`, which happens only
    when it is really compiling, so the user learns why the command waits. On a cold cache
    with two cores a helper process compiles half the policies, started with
    `start_method` (a multiprocessing start method; the caller's workers' choice, so that
    what the helper leaves in the cache is what they load; default: the platform's).
    """
    distinct = list(dict.fromkeys(policies))
    with _announced_if_slow(announce, after_seconds):
        if len(distinct) > 1 and _cores() > 1 and _cache_is_cold(config):
            context: Any = multiprocessing.get_context(start_method)  # typeshed's BaseContext lacks Process
            helper = context.Process(target=_play_once, args=(distinct[1::2], config), daemon=True)
            helper.start()
            _play_once(distinct[0::2], config)
            helper.join()
            _play_once(distinct[1::2], config)  # the helper's half, now loaded from the cache
        else:
            _play_once(distinct, config)


def _play_once(policies: Sequence[PolicySpec], config: GameConfig) -> None:
    """One hand per group of `num_players` policies (each policy sits at least once)."""
    seats = config.num_players
    env = dominoes_env.raw_env(config, num_hands=1)
    for first in range(0, len(policies), seats):
        table = [policies[(first + k) % len(policies)] for k in range(seats)]
        with single_threaded_torch():
            play_game(env, [registry.build(policy, config, seed=k) for k, policy in enumerate(table)], 0)


def _cache_is_cold(config: GameConfig) -> bool:
    """Whether the rules engine had to be compiled (numba's cache statistics of one small kernel)."""
    HandState.deal(config, 0, np.random.default_rng(0)).scores()
    return bool(rules.hand_scores.stats.cache_misses)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@contextmanager
def _announced_if_slow(announce: Callable[[], None] | None, after_seconds: float) -> Iterator[None]:
    timer = threading.Timer(after_seconds, announce) if announce is not None else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        yield
    finally:
        if timer is not None:
            timer.cancel()
