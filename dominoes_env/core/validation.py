"""What counts as a valid argument: the one home of "an integer", "a number", "one of these".

Every public door of the package (constructors, command lines, files read back) checks
what comes in with these helpers, so that the same value is accepted or refused the same
way everywhere (``np.int64(3)`` is an integer wherever an integer is asked for, ``True``
and ``3.0`` never are) and every refusal is one ValueError naming the argument, the value
and what is allowed. Inside the boundary, code trusts its inputs.
"""

from __future__ import annotations

import argparse
import math
import numbers
import re
from collections.abc import Iterable
from typing import Any

import numpy as np

#: Seeds are non-negative integers below this (NumPy and Gymnasium accept them).
SEED_LIMIT = 2**64


def as_integer(value: object) -> int | None:
    """`value` as a Python int if it is an integer, else None.

    Integers are Python ints, NumPy integer scalars, 0-d integer arrays and any other
    ``numbers.Integral``; booleans are not integers here (``True`` is never a count or an
    action by accident).
    """
    if type(value) is int:
        return value
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.ndarray):
        if value.shape == () and np.issubdtype(value.dtype, np.integer):
            return int(value)
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    return None


#: How a number is written in text (a command line, a file): ASCII digits only, since int() and
#: float() also read other scripts' digits ("\u0663" as 3), which no user means as a count.
_INTEGER_TEXT = re.compile(r"[+-]?[0-9]{1,40}")
_NUMBER_TEXT = re.compile(r"[+-]?(?:[0-9]{1,40}(?:\.[0-9]{0,40})?|\.[0-9]{1,40})(?:[eE][+-]?[0-9]{1,4})?")


def read_integer(text: str) -> int | None:
    """The integer `text` writes in ASCII digits (an optional sign, at most 40 digits), else None."""
    return int(text) if isinstance(text, str) and _INTEGER_TEXT.fullmatch(text.strip()) else None


def read_number(text: str) -> int | float | None:
    """The number `text` writes in ASCII (an integer as an int, else a float such as 1.5 or 2e-3), else None."""
    integer = read_integer(text)
    if integer is not None:
        return integer
    return float(text) if isinstance(text, str) and _NUMBER_TEXT.fullmatch(text.strip()) else None


def integer_argument(text: str) -> int:
    """An integer option's text, as argparse's ``type``: ASCII digits only, so that ``--players '\u0663'``
    (an Arabic-Indic three, which int() reads as 3) is refused rather than read."""
    value = read_integer(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer written in ASCII digits (e.g. 4)")
    return value


def number_argument(text: str) -> float:
    """A number option's text, as argparse's ``type``: ASCII only, e.g. 2, 0.5 or 1e-3."""
    value = read_number(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number written in ASCII (e.g. 2, 0.5 or 1e-3)")
    return value


def _range_text(minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f"from {minimum} to {maximum}"
    if minimum is not None:
        return f"of at least {minimum}"
    if maximum is not None:
        return f"of at most {maximum}"
    return ""


def integer(name: str, value: object, minimum: int | None = None, maximum: int | None = None,
            allowed: str | None = None) -> int:
    """`value` as an int within [minimum, maximum] (either bound may be None).

    Raises:
        ValueError: "NAME must be an integer from A to B (ALLOWED), got VALUE".
    """
    number = as_integer(value)
    if number is None or (minimum is not None and number < minimum) or (maximum is not None and number > maximum):
        bounds = _range_text(minimum, maximum)
        what = f"an integer {bounds}".rstrip() + (f" ({allowed})" if allowed else "")
        raise ValueError(f"{name} must be {what}, got {shown(value)}")
    return number


def real(name: str, value: object, minimum: float | None = None, maximum: float | None = None,
         above_minimum: bool = False, allowed: str | None = None) -> float:
    """`value` as a finite float within [minimum, maximum]; ``above_minimum`` excludes the minimum.

    Integers are accepted (they are numbers); booleans, strings, NaN and infinities are not.

    Raises:
        ValueError: naming the argument, the value and the allowed range.
    """
    number: float | None = None
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        number = float(value)
    elif isinstance(value, np.ndarray) and value.shape == () and np.issubdtype(value.dtype, np.number) \
            and not np.issubdtype(value.dtype, np.complexfloating):
        number = float(value)
    bad = (number is None or not math.isfinite(number)
           or (minimum is not None and (number < minimum or (above_minimum and number == minimum)))
           or (maximum is not None and number > maximum))
    if bad:
        if minimum is not None and maximum is not None:
            bounds = f"in {'(' if above_minimum else '['}{minimum:g}, {maximum:g}]"
        elif minimum is not None:
            bounds = f"{'above' if above_minimum else 'of at least'} {minimum:g}"
        elif maximum is not None:
            bounds = f"of at most {maximum:g}"
        else:
            bounds = ""
        what = f"a finite number {bounds}".rstrip() + (f" ({allowed})" if allowed else "")
        raise ValueError(f"{name} must be {what}, got {shown(value)}")
    assert number is not None
    return number


def choice(name: str, value: object, allowed: Iterable[str]) -> str:
    """`value` if it is one of the `allowed` strings (only a real ``str`` matches).

    Raises:
        ValueError: "NAME=VALUE is not supported; choose one of [...]".
    """
    options = list(allowed)
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name}={shown(value)} is not supported; choose one of {options}")
    return value


def seed(name: str, value: object) -> int | None:
    """A seed: None (fresh entropy) or an integer from 0 to 2**64 - 1."""
    if value is None:
        return None
    return integer(name, value, 0, SEED_LIMIT - 1)


def flag(name: str, value: object) -> bool:
    """A yes/no option: only ``True``, ``False`` (or NumPy booleans) are accepted."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name} must be True or False, got {shown(value)}")


def shown(value: Any) -> str:
    """A short readable form of a refused value (long reprs are cut)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def reason(error: BaseException) -> str:
    """Why reading a file's content failed, in a few words for a one-line error: the message of
    a check, or what a parser's own exception means (a missing field, nesting too deep)."""
    if isinstance(error, KeyError):
        return f"missing field {error}"
    if isinstance(error, RecursionError):
        return "nested too deeply"
    if isinstance(error, MemoryError):
        return "too large to read"
    return str(error).splitlines()[0] if str(error) else type(error).__name__
