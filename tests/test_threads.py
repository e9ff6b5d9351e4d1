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


def test_a_batch_on_threads_asks_openmp_to_wait_passively_unless_told_otherwise(monkeypatch):
    """Spinning OpenMP threads made two threads several times slower than one on a busy machine
    (benchmarks/vector_threads.py); the user's own OMP_WAIT_POLICY or threading layer is kept."""
    from dominoes_env.core import batch
    from dominoes_env.vector import VectorDominoes

    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    monkeypatch.delenv("NUMBA_THREADING_LAYER", raising=False)
    VectorDominoes(8, 3, 6, threads=1)
    assert "OMP_WAIT_POLICY" not in os.environ  # one thread: nothing to ask
    VectorDominoes(8, 3, 6, threads=2)
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    batch.prefer_passive_waiting()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
    monkeypatch.delenv("OMP_WAIT_POLICY")
    monkeypatch.setenv("GOMP_SPINCOUNT", "1000")  # GNU OpenMP's own setting of how long to spin
    batch.prefer_passive_waiting()
    assert "OMP_WAIT_POLICY" not in os.environ
    monkeypatch.delenv("GOMP_SPINCOUNT")
    monkeypatch.setenv("NUMBA_THREADING_LAYER", "workqueue")
    batch.prefer_passive_waiting()
    assert "OMP_WAIT_POLICY" not in os.environ
