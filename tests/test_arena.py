"""One buffer, many arrays: the Python views and the compiled readers see the same memory."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from dominoes_env.core import arena, batch
from dominoes_env.vector import VectorDominoes


@njit
def _write_through_readers(buffer):
    head = arena.header(buffer, 3)
    arena.matrix(buffer, head, 0, np.int16)[1, 2] = -7
    arena.vector(buffer, head, 1, np.int64)[4] = 1 << 40
    arena.vector(buffer, head, 2, np.bool_)[0] = True


def test_arrays_are_views_of_one_buffer_in_order_and_compiled_writes_land_in_them():
    buffer, (matrix, vector, flags) = arena.allocate([((3, 5), np.int16), ((6,), np.int64), ((3,), np.bool_)])
    assert [a.dtype for a in (matrix, vector, flags)] == [np.int16, np.int64, np.bool_]
    assert [a.shape for a in (matrix, vector, flags)] == [(3, 5), (6,), (3,)]
    assert all(a.flags.c_contiguous and np.shares_memory(a, buffer) for a in (matrix, vector, flags))
    assert not (matrix.any() or vector.any() or flags.any())
    assert vector.ctypes.data % 8 == 0  # an int64 after 30 bytes of int16 starts aligned
    _write_through_readers(buffer)
    assert matrix[1, 2] == -7 and matrix.sum() == -7
    assert vector[4] == 1 << 40 and vector.sum() == 1 << 40
    assert flags.tolist() == [True, False, False]


def test_an_arena_holds_vectors_and_matrices_only():
    with pytest.raises(ValueError, match=r"1-D and 2-D arrays, not shape \(2, 2, 2\)"):
        arena.allocate([((2, 2, 2), np.int64)])


@pytest.mark.parametrize("games, players, highest", [(1, 4, 9), (7, 3, 12)])
def test_the_compiled_step_reads_every_array_of_the_batch_where_python_keeps_it(games, players, highest):
    vec = VectorDominoes(games, players, highest, seed=0)
    vec.reset()
    compiled = batch.unpack(vec._arena)
    assert len(compiled) == len(batch.BatchArrays._fields)
    for name, seen, kept in zip(batch.BatchArrays._fields, compiled, vec._arrays, strict=True):
        assert seen.dtype == kept.dtype and seen.shape == kept.shape, name
        assert np.shares_memory(seen, kept) and np.array_equal(seen, kept), name
    assert np.shares_memory(vec.states, vec._arrays.states) and vec.current_player is vec._arrays.players
    assert not vec.states.flags.writeable  # a position changes through the batch's methods only
