"""Compile the rules engine and the policies' kernels once, before the real work starts.

The engine and the policies are numba-compiled on first use, and numba keeps the machine
code in a disk cache next to the sources. On a new machine (or after an upgrade) the first
use compiles: seconds of work that used to happen inside the first game of every league
worker at once, under a progress bar that promised hours. :func:`warm_up` does it first,
in the calling process, with a notice when it is slow; workers forked afterwards inherit
the compiled code, and spawned or Ray workers load it from the cache.

When the cache is cold and there is a second core, a helper process shares the work (both
write the shared disk cache): it starts at once with the chain search, which most policies and
the learners' features call and which needs no rules engine, while this process compiles the
engine; then the two take the policies in turns, the last listed first (the league lists its
cheap players first, and the costly ones are better started early), and this process finally
loads the helper's from the cache. On two cores, `dominoes league --games 20` on a cold cache
took 11.5 s twice where splitting the policies in halves (the helper starting after this process
had compiled the engine) took 14.5 s and 15.0 s, alternating (``python benchmarks/cold_start.py
--repeats 1 --commands league``, the code before run from a worktree).
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import dominoes_env
from baselines.harness.parallel import default_workers
from baselines.harness.play import play_game
from baselines.harness.threads import single_threaded_torch
from baselines.policies import registry
from baselines.policies.chain_search import best_chain
from baselines.policies.specs import PolicySpec
from dominoes_env.core import rules
from dominoes_env.core.config import GameConfig


def warm_up(policies: Sequence[PolicySpec], config: GameConfig, announce: Callable[[], None] | None = None,
            after_seconds: float = 1.0, start_method: str | None = None) -> None:
    """Play one hand with each policy so that everything they run is compiled (or loaded).

    `announce` is called if this takes longer than `after_seconds`, which happens only
    when it is really compiling, so the user learns why the command waits. On a cold cache
    with two cores a helper process takes its share (the module's docstring), started with
    `start_method` (a multiprocessing start method; the caller's workers' choice, so that
    what the helper leaves in the cache is what they load; default: the platform's).
    """
    distinct = list(dict.fromkeys(policies))
    with _announced_if_slow(announce, after_seconds):
        if len(distinct) > 1 and default_workers() > 1 and _cache_is_cold():
            context: Any = multiprocessing.get_context(start_method)  # typeshed's BaseContext lacks Process
            turns = distinct[::-1]
            taken = context.Value("i", 0)  # the next of `turns` to take, shared
            helper = context.Process(target=_take_turns, args=(turns, config, taken, True), daemon=True)
            helper.start()
            _take_turns(turns, config, taken, False)
            helper.join()
        _play_once(distinct, config)  # all of them: after a helper, its share loads from the cache


def _take_turns(turns: Sequence[PolicySpec], config: GameConfig, taken: Any, chain_search_first: bool) -> None:
    """Warm the next policy of `turns` not yet taken (`taken`: a shared counter) until none is left;
    `chain_search_first`: compile the chain search before (the helper's start)."""
    if chain_search_first:
        _compile_chain_search(config)
    while True:
        with taken.get_lock():
            turn = taken.value
            taken.value += 1
        if turn >= len(turns):
            return
        _play_once([turns[turn]], config)


def _compile_chain_search(config: GameConfig) -> None:
    """The chain search as the policies and the learners' features call it (the same argument
    types, so the same compiled code), on a hand of three tiles."""
    best_chain([0, 1, 2], 0, config.highest_double)


def _play_once(policies: Sequence[PolicySpec], config: GameConfig) -> None:
    """One hand per group of `num_players` policies (each policy sits at least once)."""
    seats = config.num_players
    env = dominoes_env.raw_env(config, num_hands=1)
    for first in range(0, len(policies), seats):
        table = [policies[(first + k) % len(policies)] for k in range(seats)]
        with single_threaded_torch():
            play_game(env, [registry.build(policy, config, seed=k) for k, policy in enumerate(table)], 0)


def _cache_is_cold() -> bool:
    """Whether numba's cache lacks the rules engine: its probe, a kernel that does nothing, had to
    be compiled (a few hundredths of a second; loaded, it says the rules' cache is there)."""
    rules.cache_probe()
    return bool(rules.cache_probe.stats.cache_misses)


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
