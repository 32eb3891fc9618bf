# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Statistics over repeated iperf runs: summary, Student-t confidence interval, sweep knee.

``summarize()`` takes plain numbers or normalized results (``iperf/result.py``) and returns
count, mean, median, min, max, sample standard deviation, coefficient of variation, a
two-sided Student-t confidence interval and the sum. A result whose figure is ``None``
(the run measured nothing usable) is *skipped* and counted in ``skipped``; it is never
treated as zero. A negative value is refused (``StatsError`` naming the item's index): no
iperf figure can be negative, so it is a mistake upstream, not a measurement.

The t quantile is computed here (no scipy): the Student-t distribution function is
evaluated through the regularized incomplete beta function and inverted by bisection,
which is exact to double precision for every degree of freedom (``math.inf`` gives the
normal quantile).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "DEFAULT_KEY",
    "StatsError",
    "knee",
    "resolve_key",
    "summarize",
    "t_cdf",
    "t_quantile",
]

DEFAULT_KEY = "bits_per_second"

_MISSING = object()


class StatsError(ValueError):
    """The input cannot be summarized (wrong type, not finite, bad option)."""


# --------------------------------------------------------------------------------------
# Student t distribution
# --------------------------------------------------------------------------------------


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz method)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    if abs(d) < tiny:
        d = tiny
    d = 1.0 / d
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta function I_x(a, b) for 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def _normal_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom (``math.inf``: normal)."""
    if not df > 0:
        raise StatsError(f"degrees of freedom must be positive, got {df!r}")
    if math.isinf(df):
        return _normal_cdf(t)
    t2 = t * t
    if t2 < df:
        # Near the median, df / (df + t^2) is close to 1 and loses digits: use the
        # complementary argument t^2 / (df + t^2), computed without cancellation.
        half = 0.5 * _betainc(0.5, df / 2.0, t2 / (df + t2))
        return 0.5 + half if t >= 0 else 0.5 - half
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t2))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom.

    ``t_quantile(0.975, 9)`` is 2.2622; ``df=math.inf`` gives the normal quantile (1.95996).
    """
    if not 0.0 < p < 1.0:
        raise StatsError(f"probability must be strictly between 0 and 1, got {p!r}")
    if not df > 0:
        raise StatsError(f"degrees of freedom must be positive, got {df!r}")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        low, high = high, high * 2.0
        if high > 1e300:  # pragma: no cover - p within 1e-300 of 1
            return math.inf
    for _step in range(200):
        mid = 0.5 * (low + high)
        if mid in (low, high):
            break
        if t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)


# --------------------------------------------------------------------------------------
# Picking values
# --------------------------------------------------------------------------------------


def resolve_key(item: Any, path: str) -> Any:
    """Follow a dotted path (``received.bits_per_second``, ``per_stream.0.sent.bytes``).

    Returns the value, ``None`` when an intermediate value is ``None`` (e.g. ``udp`` of a
    TCP result), or a private sentinel when the path does not exist at all.
    """
    current = item
    for part in path.split("."):
        if current is None:
            return None
        if isinstance(current, Mapping):
            if part not in current:
                return _MISSING
            current = current[part]
        elif isinstance(current, Sequence) and not isinstance(current, str | bytes) and part.lstrip("-").isdigit():
            index = int(part)
            if not -len(current) <= index < len(current):
                return _MISSING
            current = current[index]
        else:
            return _MISSING
    return current


def _check_number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise StatsError(f"{where} is {type(value).__name__} {value!r}, not a number")
    if not math.isfinite(value):
        raise StatsError(f"{where} is {value!r}, not a finite number")
    if value < 0:
        raise StatsError(
            f"{where} is {value!r}, a negative number; iperf figures (rates, bytes, seconds, counts, percentages) "
            "are never negative: fix or leave out that item"
        )
    return value


# --------------------------------------------------------------------------------------
# Summary
# --------------------------------------------------------------------------------------


def _interval(mean: float | None, stdev: float | None, n: int, level: float) -> dict[str, float | None]:
    if mean is None or stdev is None or n < 2:
        return {"level": level, "low": None, "high": None, "half_width": None}
    half = t_quantile((1.0 + level) / 2.0, n - 1) * stdev / math.sqrt(n)
    return {"level": level, "low": mean - half, "high": mean + half, "half_width": half}


def summarize(
    values: Sequence[float | Mapping[str, Any] | None],
    *,
    key: str | None = None,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Summarize numbers or normalized results.

    * numbers are used as they are; ``None`` items are skipped;
    * mappings (normalized results) contribute ``item[key]`` where ``key`` is a dotted path,
      default ``bits_per_second`` (the headline). A ``None`` figure is skipped, never 0;
    * ``confidence`` is the two-sided level of ``ci`` (``ci95`` is always the 95 % interval).

    Returned keys: ``count`` (values used), ``skipped``, ``key``, ``sum``, ``mean``,
    ``median``, ``min``, ``max``, ``stdev`` (sample, n-1; None for n < 2), ``cv``
    (stdev/mean; None for n < 2 or a mean that is not positive), ``ci95`` and ``ci``
    (``{level, low, high, half_width}``, figures None for n < 2).
    """
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Sequence):
        raise StatsError(f"expected a list of numbers or results, got {type(values).__name__}")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0.0 < confidence < 1.0:
        raise StatsError(f"confidence must be a number strictly between 0 and 1 (e.g. 0.95), got {confidence!r}")
    path = DEFAULT_KEY if key is None else key
    if not isinstance(path, str) or not path or any(not part for part in path.split(".")):
        raise StatsError(f"key must be a dotted path such as 'received.bits_per_second', got {key!r}")

    numbers: list[float] = []
    skipped = 0
    mappings = 0
    missing = 0
    for index, item in enumerate(values):
        if item is None:
            skipped += 1
            continue
        if isinstance(item, Mapping):
            mappings += 1
            value = resolve_key(item, path)
            if value is _MISSING:
                missing += 1
                skipped += 1
                continue
            if value is None:
                skipped += 1
                continue
            numbers.append(_check_number(value, f"item {index} field {path!r}"))
        else:
            numbers.append(_check_number(item, f"item {index}"))
    if mappings and missing == mappings:
        raise StatsError(
            f"no result has the field {path!r}; check the spelling of key "
            "(examples: 'bits_per_second', 'received.bits_per_second', 'udp.lost_percent')"
        )

    n = len(numbers)
    mean = statistics.fmean(numbers) if n else None
    stdev = statistics.stdev(numbers) if n >= 2 else None
    cv = stdev / mean if stdev is not None and mean is not None and mean > 0 else None
    ci95 = _interval(mean, stdev, n, 0.95)
    del ci95["level"]
    return {
        "count": n,
        "skipped": skipped,
        "key": path,
        "sum": math.fsum(numbers) if n else None,
        "mean": mean,
        "median": statistics.median(numbers) if n else None,
        "min": min(numbers) if n else None,
        "max": max(numbers) if n else None,
        "stdev": stdev,
        "cv": cv,
        "ci95": ci95,
        "ci": _interval(mean, stdev, n, float(confidence)),
    }


def knee(points: Mapping[int, float | None], tolerance: float = 0.05) -> int | None:
    """The smallest x whose value is within ``tolerance`` (fraction) of the best value.

    Used for stream sweeps: ``{1: 9.1e9, 2: 9.4e9, 4: 9.41e9, 8: 9.3e9}`` gives ``2`` with
    the default 5 %. ``None`` values are ignored; no usable point gives ``None``.
    """
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not 0.0 <= tolerance < 1.0:
        raise StatsError(f"tolerance must be a fraction in [0, 1), e.g. 0.05, got {tolerance!r}")
    usable: list[tuple[int, float]] = []
    for x, value in points.items():
        if isinstance(x, bool) or not isinstance(x, int):
            raise StatsError(f"point {x!r} is not an integer x value")
        if value is None:
            continue
        usable.append((x, _check_number(value, f"value at {x}")))
    if not usable:
        return None
    best = max(value for _x, value in usable)
    threshold = best - tolerance * abs(best)
    return min(x for x, value in usable if value >= threshold)
