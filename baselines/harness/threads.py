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
