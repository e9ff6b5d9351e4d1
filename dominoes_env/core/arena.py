"""Many arrays in one byte buffer, so that a compiled function can take them as one argument.

A call into a compiled function pays for every array it is given: numba unboxes each one
(about 60 ns on a shared 2-core machine). For a step of one game, whose whole work is a
couple of microseconds, a kernel of twenty arrays spends a third of its time there. An
arena holds the arrays instead, one after the other in a ``uint8`` buffer behind a header
of their places and shapes; compiled code rebuilds each as a view (a few nanoseconds) with
the readers below, and Python code uses the views :func:`allocate` returns. Both are the
same memory: a write through either is seen by the other.

Header: :data:`FIELDS` int64 per array, from byte 0: its first byte, the byte after its
last, its rows and its columns (1 for a vector).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dominoes_env.core.compiled import kernel

#: int64 header entries per array: first byte, byte after the last, rows, columns
FIELDS = 4
_ALIGN = 8  # every array starts on a multiple of 8 bytes, as its dtype needs


def allocate(specs: Sequence[tuple[tuple[int, ...], type]]) -> tuple[np.ndarray, list[np.ndarray]]:
    """One zeroed buffer holding an array of each ``(shape, dtype)`` (1-D or 2-D), in order.

    Returns:
        the buffer (pass it to compiled code) and the arrays, views of it (index k is ``specs[k]``).
    """
    header_bytes = FIELDS * 8 * len(specs)
    places = []
    stop = header_bytes
    for shape, dtype in specs:
        if len(shape) not in (1, 2):
            raise ValueError(f"an arena holds 1-D and 2-D arrays, not shape {shape}")
        start = -(-stop // _ALIGN) * _ALIGN
        stop = start + int(np.prod(shape)) * np.dtype(dtype).itemsize
        places.append((start, stop))
    buffer = np.zeros(-(-stop // _ALIGN) * _ALIGN, dtype=np.uint8)
    header = buffer[:header_bytes].view(np.int64)
    views: list[np.ndarray] = []
    for k, ((shape, dtype), (start, stop)) in enumerate(zip(specs, places, strict=True)):
        rows, columns = shape[0], shape[1] if len(shape) == 2 else 1
        header[FIELDS * k:FIELDS * (k + 1)] = start, stop, rows, columns
        views.append(buffer[start:stop].view(dtype).reshape(shape))
    return buffer, views


# Readers, for compiled code: :func:`header` once, then each array as a view of its dtype
# (a numpy scalar type such as ``np.int16``, a constant where the reader is inlined) and
# rank. Inlined, a reader costs a few tens of nanoseconds.

@kernel(inline="always")
def header(buffer, count):
    """The header of a buffer of `count` arrays, as int64."""
    return buffer[:FIELDS * 8 * count].view(np.int64)


@kernel(inline="always")
def vector(buffer, head, k, dtype):
    """Array k, 1-D, of `dtype`."""
    return buffer[head[FIELDS * k]:head[FIELDS * k + 1]].view(dtype)


@kernel(inline="always")
def matrix(buffer, head, k, dtype):
    """Array k, 2-D, of `dtype`."""
    return vector(buffer, head, k, dtype).reshape((head[FIELDS * k + 2], head[FIELDS * k + 3]))
