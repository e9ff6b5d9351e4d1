"""How the project's kernels are compiled: numba's options, chosen here once for all of them.

Every compiled function is decorated ``@kernel`` (``@kernel(inline="always")``,
``@kernel(parallel=True)``): ``numba.njit`` with these options, which a kernel may override.

- ``cache=True``: the machine code is kept on disk, so only a machine's first run compiles.
- ``no_cfunc_wrapper=True``: numba otherwise builds, beside every function, a C-callable twin
  that only a kernel passed around as a first-class function value would call; none is. The
  twin is compiled and optimised like the kernel itself, so leaving it out shortens the first
  run's compiling (``python benchmarks/cold_start.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from numba import njit

OPTIONS = {"cache": True, "no_cfunc_wrapper": True}


def kernel(function: Callable[..., Any] | None = None, /, **options: Any) -> Any:
    """``numba.njit`` with :data:`OPTIONS` (``options`` override them); bare or with arguments."""
    decorate = njit(**{**OPTIONS, **options})
    return decorate if function is None else decorate(function)
