# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Baseline vs now: Welch's difference of the mean throughput with its 95 % confidence interval.

For one comparable entry (``history.Entry``) of the baseline (samples ``a``, n_a runs) and now
(samples ``b``, n_b runs) the difference is ``mean(b) - mean(a)``; its standard error is
``sqrt(s_a^2/n_a + s_b^2/n_b)`` (Welch: the two variances are not assumed equal) and its degrees of
freedom the Welch-Satterthwaite ``(s_a^2/n_a + s_b^2/n_b)^2 / ((s_a^2/n_a)^2/(n_a-1) + (s_b^2/n_b)^2/(n_b-1))``.
The 95 % interval is ``diff +- t(0.975, df) * se`` (``iperf.stats.t_quantile``: no scipy), given in
percent of the baseline mean (the baseline mean is taken as the reference, not as a random
variable). The difference is *significant* when the interval excludes zero. With fewer than 2
figures on either side there is no variance: the difference is given with ``n=1, no statistics``
and no interval. Two sides with no spread at all (every run the same figure) have the interval
``[diff, diff]``.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.stats import t_quantile
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history import Entry

__all__ = ["CONFIDENCE", "Delta", "WelchInterval", "compare_entries", "welch_interval"]

CONFIDENCE = 0.95


@dataclass(frozen=True)
class WelchInterval:
    """Welch's interval of ``mean(b) - mean(a)`` in the samples' unit."""

    difference: float
    standard_error: float
    df: float | None  # None: no spread on either side
    t: float | None
    low: float
    high: float

    @property
    def significant(self) -> bool:
        return self.low > 0.0 or self.high < 0.0


def welch_interval(a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE) -> WelchInterval | None:
    """Welch's two-sided interval of ``mean(b) - mean(a)``; None when a side has fewer than 2 figures."""
    if len(a) < 2 or len(b) < 2:
        return None
    mean_a, mean_b = math.fsum(a) / len(a), math.fsum(b) / len(b)
    var_a = math.fsum((x - mean_a) ** 2 for x in a) / (len(a) - 1)
    var_b = math.fsum((x - mean_b) ** 2 for x in b) / (len(b) - 1)
    part_a, part_b = var_a / len(a), var_b / len(b)
    diff = mean_b - mean_a
    se = math.sqrt(part_a + part_b)
    if se == 0.0:
        return WelchInterval(diff, 0.0, None, None, diff, diff)
    df = (part_a + part_b) ** 2 / (part_a**2 / (len(a) - 1) + part_b**2 / (len(b) - 1))
    t = t_quantile(0.5 + confidence / 2.0, df)
    return WelchInterval(diff, se, df, t, diff - t * se, diff + t * se)


@dataclass(frozen=True)
class Delta:
    """One comparable entry, baseline vs now."""

    now: Entry
    baseline: Entry | None  # None: no comparable entry in the baseline
    baseline_source: str | None  # where the baseline entry came from (history run, or a file)
    interval: WelchInterval | None

    @property
    def percent(self) -> float | None:
        """``(now - baseline) / baseline`` in %, None without both means or a zero baseline."""
        base = None if self.baseline is None else self.baseline.mean
        if base is None or base == 0.0 or self.now.mean is None:
            return None
        return 100.0 * (self.now.mean - base) / base

    @property
    def percent_interval(self) -> tuple[float, float] | None:
        if self.interval is None or self.baseline is None or not self.baseline.mean:
            return None
        return (100.0 * self.interval.low / self.baseline.mean, 100.0 * self.interval.high / self.baseline.mean)

    @property
    def verdict(self) -> str:
        """``no baseline``, ``n=1, no statistics``, ``significant`` or ``not significant``."""
        if self.baseline is None:
            return "no baseline"
        if self.percent is None:
            return "no figure"
        if self.interval is None:
            return "n=1, no statistics"
        return "significant" if self.interval.significant else "not significant"


def compare_entries(
    now: Sequence[Entry], baseline: Mapping[str, tuple[Entry, str]], confidence: float = CONFIDENCE
) -> list[Delta]:
    """Each entry of now against the baseline entry of its key (``baseline``: key -> (entry, source))."""
    deltas: list[Delta] = []
    for entry in now:
        found = baseline.get(entry.key)
        if found is None:
            deltas.append(Delta(entry, None, None, None))
            continue
        base, source = found
        deltas.append(Delta(entry, base, source, welch_interval(base.samples, entry.samples, confidence)))
    return deltas
