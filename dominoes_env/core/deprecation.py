"""Renamed keywords keep working, with a DeprecationWarning, for one minor version.

0.2.0 renamed ``highest_dominoe`` to ``highest_double``. Every public function, class and
dataclass that takes the new keyword is wrapped with :func:`renamed_keyword`, which turns
the old keyword into the new one and warns; 0.3.0 will drop the old name.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

#: old keyword -> (new keyword, version that renamed it, version that removes the old one)
RENAMED = {"highest_dominoe": ("highest_double", "0.2.0", "0.3.0")}


def warn_renamed(old: str, where: str, stacklevel: int = 3) -> str:
    """Warn that keyword `old` (used in `where`) is deprecated; return its new name."""
    new, since, removed = RENAMED[old]
    warnings.warn(f"{where}: the keyword {old!r} was renamed {new!r} in {since}; "
                  f"the old name stops working in {removed}", DeprecationWarning, stacklevel=stacklevel)
    return new


def translate_kwargs(kwargs: dict[str, Any], where: str, stacklevel: int = 4) -> dict[str, Any]:
    """`kwargs` with every renamed keyword under its new name (warning once per old keyword)."""
    for old in RENAMED.keys() & kwargs.keys():
        new = RENAMED[old][0]
        if new in kwargs:
            raise TypeError(f"{where}: got both {old!r} and its new name {new!r}; pass only {new!r}")
        warn_renamed(old, where, stacklevel)
        kwargs[new] = kwargs.pop(old)
    return kwargs


def renamed_keyword(function: F) -> F:
    """Decorator: accept the old names of renamed keywords (see :data:`RENAMED`)."""

    @functools.wraps(function)
    def accept_old_names(*args: Any, **kwargs: Any) -> Any:
        if kwargs and RENAMED.keys() & kwargs.keys():
            kwargs = translate_kwargs(kwargs, function.__qualname__)
        return function(*args, **kwargs)

    return accept_old_names  # type: ignore[return-value]
