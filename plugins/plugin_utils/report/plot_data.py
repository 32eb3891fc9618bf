# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What to draw, as plain data (``plots.py`` draws it): sweeps, comparison bars and time series.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.base import NA, Unit, as_number, rate_with_unit, slug
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.build import Report
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.comparison import Comparison, ComparisonRow
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.groups import Sweep, common_value, in_order
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.rows import ResultRow


@dataclass(frozen=True)
class Series:
    """One line or one set of bars; ``y``/``yerr`` in the plot's unit, ``None`` = no figure."""

    label: str
    x: tuple[float, ...]
    y: tuple[float | None, ...]
    yerr: tuple[float | None, ...] = ()
    knee: float | None = None  # sweeps: the knee's x


@dataclass(frozen=True)
class PlotSpec:
    """What one PNG shows."""

    kind: str  # sweep | timeseries | compare
    file: str
    title: str
    xlabel: str
    ylabel: str
    series: tuple[Series, ...]
    categories: tuple[str, ...] = ()  # compare: the x categories
    line_rate: float | None = None  # in the plot's unit
    line_rate_label: str | None = None
    caption: str = ""


def _scaled(value: float | None, unit: Unit) -> float | None:
    return None if value is None else value / unit.scale


class _LineRate(TypedDict):
    line_rate: float | None
    line_rate_label: str | None


def _line_rate(rate: float | None, unit: Unit) -> _LineRate:
    """A plot's line-rate mark in the plot's unit, labelled only when the rate is known."""
    return {"line_rate": _scaled(rate, unit), "line_rate_label": f"line rate {rate_with_unit(rate)}" if rate else None}


def _sweep_labels(sweeps: Sequence[Sweep], label: str | None) -> list[str]:
    """Legend names: the compared value (``mtu=9000``) when it tells the sweeps apart, else with the test."""
    short = [f"{label}={s.compare}" if s.compare is not None else s.test for s in sweeps]
    if len(set(short)) == len(short):
        return short
    return [s.test if s.compare is None else f"{s.test}, {label}={s.compare}" for s in sweeps]


def _unique(name: str, used: set[str]) -> str:
    stem, number = name, 2
    while f"{name}.png" in used:
        name = f"{stem}-{number}"
        number += 1
    used.add(f"{name}.png")
    return f"{name}.png"


def plot_specs(report: Report) -> list[PlotSpec]:
    """Sweeps (throughput vs streams with 95 % CI error bars, one PNG per direction), time series
    (per-interval throughput, one PNG per summary group with intervals) and the comparison
    (grouped bars). Plots without a single usable figure are left out."""
    unit = report.unit
    ylabel = f"Throughput ({unit.name})"
    used: set[str] = set()
    specs: list[PlotSpec] = []

    for direction, swapped in in_order((s.direction, s.swapped) for s in report.sweeps):
        sweeps = [
            s
            for s in report.sweeps
            if (s.direction, s.swapped) == (direction, swapped) and s.best_bits_per_second is not None
        ]
        series = []
        for sweep, name in zip(sweeps, _sweep_labels(sweeps, report.compare_by), strict=True):
            points = [g for g in sweep.groups if g.streams is not None]
            series.append(
                Series(
                    label=name,
                    x=tuple(float(g.streams) for g in points if g.streams is not None),
                    y=tuple(_scaled(g.mean, unit) for g in points),
                    yerr=tuple(_scaled(g.half_width, unit) for g in points),
                    knee=None if sweep.knee is None else float(sweep.knee),
                )
            )
        if not series:
            continue
        rate = common_value(s.line_rate_bps for s in sweeps)
        direction_text = f"{direction} (swapped)" if swapped else direction
        subject = sweeps[0].test if len({s.test for s in sweeps}) == 1 else report.name
        specs.append(
            PlotSpec(
                kind="sweep",
                file=_unique(slug(f"sweep-{direction}{'-swapped' if swapped else ''}"), used),
                title=f"Throughput vs parallel streams: {subject} ({direction_text})",
                xlabel="Parallel streams per client",
                ylabel=ylabel,
                series=tuple(series),
                **_line_rate(rate, unit),
                caption=f"Mean throughput vs parallel streams ({direction_text}), error bars: 95 % CI, star: knee",
            )
        )

    if report.comparison is not None and report.comparison.rows:
        comparison = report.comparison
        tests = in_order(row.key.get("test") for row in comparison.rows) if comparison.per_test else [None]
        for test in tests:
            rows = [row for row in comparison.rows if row.key.get("test") == test]
            categories = tuple(_category(row, comparison, rows) for row in rows)
            series = []
            for value in comparison.values:
                cells = [row.cells.get(value) for row in rows]
                series.append(
                    Series(
                        label=f"{comparison.label}={value}",
                        x=tuple(float(i) for i in range(len(rows))),
                        y=tuple(_scaled(c.mean if c else None, unit) for c in cells),
                        yerr=tuple(_scaled(c.half_width if c else None, unit) for c in cells),
                    )
                )
            if not any(v is not None for s in series for v in s.y):
                continue
            groups = [c for row in rows for c in row.cells.values() if c is not None]
            rate = common_value(g.line_rate_bps for g in groups)
            suffix = f" - test {test}" if test is not None else ""
            specs.append(
                PlotSpec(
                    kind="compare",
                    file=_unique(slug(f"compare-{comparison.label}{'-' + test if test else ''}"), used),
                    title=f"Throughput by {comparison.label}{suffix}",
                    xlabel="Conditions",
                    ylabel=ylabel,
                    series=tuple(series),
                    categories=categories,
                    **_line_rate(rate, unit),
                    caption=f"Mean throughput by {comparison.label}{suffix}, error bars: 95 % CI",
                )
            )

    for group in report.groups:
        series = []
        for run in group.runs:
            for row in run.results:
                steps = _interval_points(row)
                if not steps:
                    continue
                name = f"run {run.run}" + (f" pair {row.pair}" if len(run.results) > 1 else "")
                # Drawn as steps: each interval's rate from its start to its end.
                series.append(
                    Series(
                        label=name,
                        x=(*(start for start, _end, _bps in steps), steps[-1][1]),
                        y=(*(_scaled(bps, unit) for _start, _end, bps in steps), _scaled(steps[-1][2], unit)),
                    )
                )
        if not series:
            continue
        streams = NA if group.streams is None else str(group.streams)
        what = f"{group.test}, {group.direction_text}, {streams} stream{'' if group.streams == 1 else 's'}"
        if group.compare is not None:
            what += f", {report.compare_by}={group.compare}"
        specs.append(
            PlotSpec(
                kind="timeseries",
                file=_unique(
                    slug(
                        f"timeseries-{group.test}-{group.direction}{'-swapped' if group.swapped else ''}-{streams}s"
                        + (f"-{group.compare}" if group.compare is not None else "")
                    ),
                    used,
                ),
                title=f"Throughput per interval: {what}",
                xlabel="Time since start of test (s)",
                ylabel=ylabel,
                series=tuple(series),
                **_line_rate(group.line_rate_bps, unit),
                caption=f"Throughput per interval ({what}); omitted (-O) intervals are not shown",
            )
        )
    return specs


def _interval_points(row: ResultRow) -> list[tuple[float, float, float]]:
    """``(start, end, bits_per_second)`` of the result's intervals, without omitted ones."""
    intervals = row.field("intervals")
    if not isinstance(intervals, Sequence) or isinstance(intervals, str):
        return []
    points = []
    for item in intervals:
        if not isinstance(item, Mapping) or item.get("omitted"):
            continue
        start, end = as_number(item.get("start")), as_number(item.get("end"))
        bps = as_number(item.get("bits_per_second"))
        if start is not None and end is not None and bps is not None:
            points.append((start, end, bps))
    return points


def _category(row: ComparisonRow, comparison: Comparison, rows: Sequence[ComparisonRow]) -> str:
    parts = []
    varying = {k for k in row.key if k != "test" and len({r.key.get(k) for r in rows}) > 1}
    if "streams" in varying or ("streams" in row.key and not varying):
        streams = row.key.get("streams")
        parts.append(NA if streams is None else f"{streams} stream{'' if streams == 1 else 's'}")
    if "direction" in varying or "swapped" in varying:
        parts.append(f"{row.key.get('direction')}{' (swapped)' if row.key.get('swapped') else ''}")
    return "\n".join(parts) or "all runs"
