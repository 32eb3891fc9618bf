# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The comparison by one label (``compare_by``, e.g. ``nic``: e1000 vs vmxnet3): the groups of each label value
side by side for the same conditions.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.base import NA, signed_pct
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.baseline import welch_interval
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.groups import Group, in_order, streams_order
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.rows import RunRow


@dataclass(frozen=True)
class Difference:
    """A value's mean against the first value's, as the regression gate compares a run with its baseline: the
    difference in % of the first value's mean with Welch's 95 % interval (``report.baseline.welch_interval``)."""

    percent: float | None
    low: float | None  # the interval's ends, in % of the first value's mean; None without 2 figures a side
    high: float | None
    verdict: str  # significant, not significant, "n=1, no statistics", no figure

    @property
    def text(self) -> str:
        """``+12.3 % (95 % CI +8.1 % .. +16.5 %)``, then ``, not significant`` or why there is no interval."""
        if self.percent is None:
            return NA
        text = signed_pct(self.percent)
        if self.low is None or self.high is None:
            return f"{text} ({self.verdict})"
        text += f" (95 % CI {signed_pct(self.low)} .. {signed_pct(self.high)})"
        return text + (", not significant" if self.verdict == "not significant" else "")

    def as_doc(self) -> dict[str, Any]:
        return {
            "difference_percent": self.percent,
            "ci95_low_percent": self.low,
            "ci95_high_percent": self.high,
            "verdict": self.verdict,
        }


def _samples(group: Group | None) -> list[float]:
    return [float(r.bits_per_second) for r in group.runs if r.bits_per_second is not None] if group else []


@dataclass
class ComparisonRow:
    """One row of the comparison: the groups of each label value for the same conditions."""

    key: dict[str, Any]  # test (when per test), direction, swapped, streams
    cells: dict[str, Group | None]


@dataclass
class Comparison:
    """Groups side by side by the value of one label (``nic``: e1000 vs vmxnet3)."""

    label: str
    values: list[str]
    per_test: bool
    rows: list[ComparisonRow]
    left_out: int  # runs without the label (a run whose pairs differ in it is compared through its parts)

    def delta(self, row: ComparisonRow, value: str) -> float | None:
        """``value``'s mean relative to the first value's, in percent."""
        return self.difference(row, value).percent

    def difference(self, row: ComparisonRow, value: str) -> Difference:
        """``value``'s mean against the first value's, with Welch's 95 % interval (same test as the gate's)."""
        base = row.cells.get(self.values[0])
        other = row.cells.get(value)
        if base is None or other is None or base.mean is None or other.mean is None or base.mean <= 0:
            return Difference(None, None, None, "no figure")
        percent = (other.mean / base.mean - 1.0) * 100.0
        interval = welch_interval(_samples(base), _samples(other))
        if interval is None:
            return Difference(percent, None, None, "n=1, no statistics")
        low, high = 100.0 * interval.low / base.mean, 100.0 * interval.high / base.mean
        return Difference(percent, low, high, "significant" if interval.significant else "not significant")


def build_comparison(label: str, runs: Sequence[RunRow], groups: Sequence[Group]) -> Comparison:
    labelled = [g for g in groups if g.compare is not None]
    values = in_order(run.compare for run in runs if run.compare is not None)
    # a run split into parts by the label is in the comparison through its parts
    left_out = sum(run.compare is None and not run.parts for run in runs)
    values_per_test: dict[str, set[str]] = {}
    for group in labelled:
        values_per_test.setdefault(group.test, set()).add(str(group.compare))
    # Tests are the variants (test "vmxnet3" has nic=vmxnet3 only): compare across tests.
    per_test = any(len(v) > 1 for v in values_per_test.values()) and label != "test"
    dimensions = [d for d in (("test",) if per_test else ()) + ("direction", "swapped", "streams") if d != label]
    rows: dict[tuple[Any, ...], ComparisonRow] = {}
    for group in labelled:
        key = {name: getattr(group, name) for name in dimensions}
        marker = tuple(key.values())
        if marker not in rows:
            rows[marker] = ComparisonRow(key=key, cells=dict.fromkeys(values))
        cells = rows[marker].cells
        if cells.get(str(group.compare)) is None:
            cells[str(group.compare)] = group
        else:  # two tests give the same conditions and value: keep both apart, per test
            return _build_comparison_per_test(label, runs, groups, values, left_out)
    ordered = sorted(rows.values(), key=lambda r: _row_order(r, dimensions, groups))
    return Comparison(label=label, values=values, per_test=per_test, rows=ordered, left_out=left_out)


def _build_comparison_per_test(
    label: str, runs: Sequence[RunRow], groups: Sequence[Group], values: list[str], left_out: int
) -> Comparison:
    dimensions = [d for d in ("test", "direction", "swapped", "streams") if d != label]
    rows: dict[tuple[Any, ...], ComparisonRow] = {}
    for group in (g for g in groups if g.compare is not None):
        key = {name: getattr(group, name) for name in dimensions}
        row = rows.setdefault(tuple(key.values()), ComparisonRow(key=key, cells=dict.fromkeys(values)))
        row.cells[str(group.compare)] = group
    ordered = sorted(rows.values(), key=lambda r: _row_order(r, dimensions, groups))
    return Comparison(label=label, values=values, per_test=True, rows=ordered, left_out=left_out)


def _row_order(row: ComparisonRow, dimensions: Sequence[str], groups: Sequence[Group]) -> tuple[Any, ...]:
    tests = in_order(g.test for g in groups)
    directions = in_order((g.direction, g.swapped) for g in groups)
    key = row.key
    return (
        tests.index(key["test"]) if "test" in key else 0,
        directions.index((key.get("direction"), key.get("swapped"))) if "direction" in key else 0,
        streams_order(key.get("streams")) if "streams" in key else (0, 0),
    )
