"""Every kernel is compiled the one way compiled.kernel sets: cached, without the C-callable twin."""

from __future__ import annotations

import importlib
import pathlib

from numba import njit
from numba.core.caching import FunctionCache
from numba.core.registry import CPUDispatcher

from dominoes_env.core.compiled import kernel

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = sorted(path for package in ("dominoes_env", "baselines") for path in (ROOT / package).rglob("*.py"))


def _defined_functions(dispatcher) -> list[str]:
    library = dispatcher.overloads[dispatcher.signatures[0]].library
    return [function.name for function in library.get_defined_functions()]


def test_a_kernel_is_built_without_the_c_callable_twin_numba_adds_by_default():
    def add_one(x):
        return x + 1

    plain, ours = njit(add_one), kernel(add_one, cache=False)  # not cached: a function of this test
    assert plain(1) == ours(1) == 2
    assert any(name.startswith("cfunc.") for name in _defined_functions(plain))  # the twin, as numba builds it
    assert not any(name.startswith("cfunc.") for name in _defined_functions(ours))


def test_no_module_but_compiled_decorates_with_numba_itself():
    """A kernel decorated with ``numba.njit`` would be compiled with other options, and a cold
    start would pay for its twin again."""
    offenders = [str(path.relative_to(ROOT)) for path in SOURCES
                 if path.name != "compiled.py" and "njit" in path.read_text(encoding="utf-8")]
    assert offenders == []


def test_every_kernel_of_the_packages_is_cached_and_twinless():
    modules = [".".join(path.relative_to(ROOT).with_suffix("").parts) for path in SOURCES
               if "@kernel" in path.read_text(encoding="utf-8")]
    kernels = [value for name in modules for value in vars(importlib.import_module(name)).values()
               if isinstance(value, CPUDispatcher) and value.py_func.__module__ == name]
    assert len(kernels) > 50
    for compiled in kernels:
        inlined = compiled.targetoptions.get("inline") == "always"  # cached inside its callers
        assert inlined or isinstance(compiled._cache, FunctionCache), compiled.py_func.__qualname__
        assert compiled.targetoptions["no_cfunc_wrapper"] is True, compiled.py_func.__qualname__
