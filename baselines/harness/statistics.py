"""Confidence intervals of means: the one place the harness's intervals are computed.

An evaluation's samples are per-deal means (the seat rotations of one deal are correlated,
so a deal is one sample). With few deals the normal approximation is too narrow, so the
half-width uses Student's t quantile with ``deals - 1`` degrees of freedom: 12.7 standard
errors for 2 deals, 2.26 for 10, 1.98 for 100, tending to the normal 1.96.

The t distribution's CDF for an integer number of degrees of freedom is a finite sum
(Abramowitz and Stegun 26.7.3 and 26.7.4), exact to float precision; the quantile is found
by bisection on it. Beyond 1,000 degrees of freedom a Cornish-Fisher expansion around the
normal quantile is used (its error there is below 1e-9).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

#: The normal distribution's 97.5% quantile: the 95% interval's half-width in standard errors.
Z_975 = 1.959963984540054
_SERIES_LIMIT = 1000  # degrees of freedom up to which the exact series is summed


def t_two_sided_mass(t: float, dof: int) -> float:
    """P(|T| <= t) for Student's t with `dof` degrees of freedom (t >= 0)."""
    theta = math.atan(t / math.sqrt(dof))
    sin, cos2 = math.sin(theta), math.cos(theta) ** 2
    if dof % 2 == 1:
        total, term = 0.0, math.cos(theta)
        if dof > 1:
            total = term
            for k in range(1, (dof - 3) // 2 + 1):  # terms cos^(2k+1) with ratios 2k / (2k+1)
                term *= cos2 * (2 * k) / (2 * k + 1)
                total += term
        return 2.0 / math.pi * (theta + sin * total)
    total, term = 1.0, 1.0
    for k in range(1, (dof - 2) // 2 + 1):  # terms cos^(2k) with ratios (2k-1) / (2k)
        term *= cos2 * (2 * k - 1) / (2 * k)
        total += term
    return sin * total


def t_quantile_975(dof: int) -> float:
    """Student's t 97.5% quantile (the 95% two-sided interval's multiplier) for `dof` >= 1."""
    if dof < 1:
        raise ValueError(f"degrees of freedom must be at least 1, got {dof}")
    if dof > _SERIES_LIMIT:
        z, v = Z_975, float(dof)
        return (z + (z ** 3 + z) / (4 * v) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * v ** 2)
                + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * v ** 3))
    low, high = Z_975, 20.0
    while t_two_sided_mass(high, dof) < 0.95:
        high *= 2.0
    for _ in range(200):
        middle = 0.5 * (low + high)
        if t_two_sided_mass(middle, dof) < 0.95:
            low = middle
        else:
            high = middle
        if high - low < 1e-13 * high:
            break
    return 0.5 * (low + high)


def ci95_half_width(samples: Sequence[float] | np.ndarray) -> float:
    """Half-width of the 95% confidence interval of the mean of independent `samples`
    (Student's t; NaN with fewer than two samples)."""
    values = np.asarray(samples, dtype=np.float64)
    if values.shape[0] < 2:
        return math.nan
    return float(t_quantile_975(values.shape[0] - 1) * values.std(ddof=1) / math.sqrt(values.shape[0]))


def signed(value: float, digits: int = 2) -> str:
    """A difference with its sign, ``+1.25`` or ``-0.40``; one that rounds to zero is ``+0.00`` (never
    ``-0.00``: a player against copies of itself differs by nothing, not by minus nothing)."""
    text = f"{value:+.{digits}f}"
    return "+" + text[1:] if float(text) == 0 else text
