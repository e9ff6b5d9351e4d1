"""Playing code runs numpy's BLAS on one thread and gives the caller's settings back."""

from __future__ import annotations

import os

import numpy as np
import pytest

from baselines.harness.threads import one_blas_thread

threadpoolctl = pytest.importorskip("threadpoolctl")


def blas_threads() -> list[int]:
    return [info["num_threads"] for info in threadpoolctl.threadpool_info() if info["user_api"] == "blas"]


def test_one_blas_thread_inside_the_block_and_the_callers_count_after():
    assert np.ones(3) @ np.ones(3) == 3.0  # numpy's BLAS is loaded
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        with one_blas_thread():
            assert blas_threads() and set(blas_threads()) == {1}
        assert blas_threads() == before
        with pytest.raises(RuntimeError), one_blas_thread():
            raise RuntimeError("the block fails")
        assert blas_threads() == before  # restored on the way out of a failing block too


def test_a_batch_on_threads_asks_openmp_for_short_spins_unless_told_otherwise(monkeypatch):
    """Threads spinning on made two threads several times slower than one on a busy machine
    (benchmarks/vector_threads.py); a short spin then sleep is asked for, and any setting of the
    user's own (how the threads wait, or another threading layer) is kept as it is."""
    from dominoes_env.core import batch
    from dominoes_env.vector import VectorDominoes

    for name in batch.THREADING_CHOICES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(batch, "_short_spins_asked", False)  # as in a fresh process
    VectorDominoes(8, 3, 6, threads=1)
    assert not batch.THREADING_CHOICES & set(os.environ)  # one thread: nothing to ask
    VectorDominoes(8, 3, 6, threads=2)
    assert os.environ["GOMP_SPINCOUNT"] == "1000" and os.environ["KMP_BLOCKTIME"] == "0"
    assert "OMP_WAIT_POLICY" not in os.environ  # it would override the spin count
    for name in batch.SHORT_SPINS:
        monkeypatch.delenv(name)
    VectorDominoes(8, 3, 6, threads=2)  # asked once a process: a later batch looks no more
    assert not batch.THREADING_CHOICES & set(os.environ)
    for name, value in (("OMP_WAIT_POLICY", "ACTIVE"), ("GOMP_SPINCOUNT", "30000"), ("KMP_BLOCKTIME", "200"),
                        ("NUMBA_THREADING_LAYER", "workqueue")):
        for other in batch.THREADING_CHOICES:
            monkeypatch.delenv(other, raising=False)
        monkeypatch.setenv(name, value)
        monkeypatch.setattr(batch, "_short_spins_asked", False)
        batch.prefer_short_spins()
        assert {key: os.environ[key] for key in batch.THREADING_CHOICES if key in os.environ} == {name: value}


def test_the_thread_chooser_keeps_the_faster_count_and_follows_a_change_of_load():
    from baselines.harness.threads import ThreadChooser

    chooser = ThreadChooser((1, 2), explore_every=4)
    cost = {1: 2.0, 2: 1.0}  # quiet: two threads are faster, one costs twice as much
    seen = []
    for _ in range(26):
        threads = chooser.next()
        seen.append(threads)
        chooser.record(threads, cost[threads])
    assert seen[:2] == [1, 2] and chooser.best == 2
    assert seen[2:].count(1) == 3  # tried again once 4 x 2 = 8 rounds passed since it last ran, 3 times in 24
    cost = {1: 2.0, 2: 28.0}  # another process took a core: two threads collapse, 14 times dearer
    switched = []
    for _ in range(200):
        threads = chooser.next()
        switched.append(threads)
        chooser.record(threads, cost[threads])
    assert chooser.best == 1 and switched[:3].count(2) <= 2  # it leaves two threads within two rounds
    assert switched[3:].count(2) <= 200 // (4 * 14) + 1  # and tries them about once in 4 x 14 rounds
    with pytest.raises(ValueError, match="candidates must be thread counts of 1 or more"):
        ThreadChooser((0,))
