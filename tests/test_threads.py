"""Playing code runs numpy's BLAS on one thread and gives the caller's settings back."""

from __future__ import annotations

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
