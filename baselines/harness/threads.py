"""One thread for the small numerical work of playing.

A policy's forward pass is small: a few after-states through a small network, or a few
hundred sampled positions through a linear evaluation. Multi-threaded libraries spread even
such work over every core, and their threads then spin against the other workers and
processes on the machine: on this 2-core machine a (400 x 292) by (292 x 128) float32
product took 12 ms with OpenBLAS's two threads and 0.5 ms with one, and a league game with a
torch policy 40x longer with two torch threads. Playing code runs its numerical work on
one thread; the caller's settings are restored afterwards.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any


@cache
def _blas_libraries() -> tuple[Any, ...]:
    """threadpoolctl's controllers of the BLAS libraries loaded with numpy (none without threadpoolctl)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return ()
    return tuple(ThreadpoolController().select(user_api="blas").lib_controllers)


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Numpy's BLAS on one thread inside the block, the caller's thread counts restored after.

    A few microseconds to enter and leave: each library's count is read and set through its
    own C call, where threadpoolctl's ``limit()`` surveys every library each time (several
    times as long). A no-op without threadpoolctl.
    """
    libraries = _blas_libraries()
    threads = [library.get_num_threads() for library in libraries]
    for library, count in zip(libraries, threads):
        if count > 1:
            library.set_num_threads(1)
    try:
        yield
    finally:
        for library, count in zip(libraries, threads):
            if count > 1:
                library.set_num_threads(count)


@contextmanager
def single_threaded_torch() -> Iterator[None]:
    """Run torch-based policies (a user's trained model) on one thread while playing.

    Their forward passes are tiny; torch's intra-op threads only fight the other workers
    (measured here: a game took 40x longer with 2 threads on a busy machine). The
    caller's setting is restored afterwards. Nothing happens when torch is not imported.
    """
    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch is not None else 1
    if torch is not None and threads > 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if torch is not None and threads > 1:
            torch.set_num_threads(threads)


class ThreadChooser:
    """Torch's intra-op threads for a training loop, chosen by measuring the loop's own work.

    On this 2-core machine torch's default (a thread per core) is the fastest when the machine
    is quiet and collapses when another process takes a core: ``dominoes train ppo`` with two
    threads made 0.07x its quiet rate beside one busy process, with one thread 1.00x (of a
    slower quiet rate: 0.65x of two threads'). Which is faster depends on the load, which
    changes during a run, so the chooser measures: it tries each candidate once, then runs the
    fastest, and tries each other one again after `explore_every` rounds times how much dearer
    it was (a count 14 times dearer is tried again after 14 x 16 rounds): what the tries cost
    stays near 1/`explore_every` of the run, however bad the other count is now.

    Use: ``threads = chooser.next()``, set them, do one round of work of `steps` steps in
    `seconds`, then ``chooser.record(threads, seconds / steps)``.
    """

    def __init__(self, candidates: tuple[int, ...], explore_every: int = 16, smoothing: float = 0.5) -> None:
        if not candidates or any(not isinstance(count, int) or count < 1 for count in candidates):
            raise ValueError(f"candidates must be thread counts of 1 or more, got {candidates!r}")
        self.candidates = tuple(dict.fromkeys(candidates))
        self.explore_every, self.smoothing = explore_every, smoothing
        self.cost: dict[int, float] = {}  # seconds a step, smoothed, by thread count
        self.tried: dict[int, int] = {}  # the round each count last ran
        self.rounds = 0

    def next(self) -> int:
        """The thread count of the next round."""
        untried = [count for count in self.candidates if count not in self.cost]
        if untried:
            return untried[0]
        best = min(self.cost, key=self.cost.__getitem__)
        due = [count for count in self.candidates if count != best
               and self.rounds - self.tried[count] >= self.explore_every * self.cost[count] / self.cost[best]]
        return due[0] if due else best

    def record(self, threads: int, seconds_per_step: float) -> None:
        """What a round with `threads` cost."""
        old = self.cost.get(threads)
        self.cost[threads] = seconds_per_step if old is None else \
            self.smoothing * seconds_per_step + (1 - self.smoothing) * old
        self.tried[threads] = self.rounds
        self.rounds += 1

    @property
    def best(self) -> int | None:
        """The cheapest count measured so far (None before any round)."""
        return min(self.cost, key=self.cost.__getitem__) if self.cost else None


def thread_candidates() -> tuple[int, ...]:
    """The counts :class:`ThreadChooser` compares: one thread and one a core (the machine's cores
    as this process may use them)."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return (1,) if cores <= 1 else (1, cores)
