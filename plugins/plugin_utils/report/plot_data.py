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
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.rows import ResultRow, direction_label


@dataclass(frozen=True)
class Series:
    """One line or one set of bars; ``y``/``yerr`` in the plot's unit, ``None`` = no figure."""

    label: str
    x: tuple[float, ...]
    y: tuple[float | None, ...]
    yerr: tuple[float | None, ...] = ()
    knee: float | None = None  # sweeps: the knee's x
    hollow: bool = False  # scatter: open markers (the remote CPU)


@dataclass(frozen=True)
class PlotSpec:
    """What one PNG shows."""

    kind: str  # sweep | timeseries | compare | cpu
    file: str
    title: str
    xlabel: str
    ylabel: str
    series: tuple[Series, ...]
    categories: tuple[str, ...] = ()  # compare: the x categories
    line_rate: float | None = None  # in the plot's unit
    line_rate_label: str | None = None
    caption: str = ""
    x_log2: bool = False  # sweeps over 1, 2, 4, 8...: the x axis evenly spaced per doubling, and the label says so


# A sweep whose largest stream count is at least this multiple of its smallest is drawn on a log2 x axis.
SWEEP_LOG2_SPAN = 4


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


# A time series is drawn when a result's intervals cover at least ``timeseries_min_seconds`` (the option) or
# there are at least this many of them; never with fewer than TIMESERIES_MIN_POINTS.
TIMESERIES_MIN_INTERVALS = 10
TIMESERIES_MIN_POINTS = 2
DEFAULT_TIMESERIES_MIN_SECONDS = 10.0


def timeseries_worth(steps: Sequence[tuple[float, float, float]], min_seconds: float) -> bool:
    """Whether a result's intervals say something over time: they cover at least ``min_seconds`` or number at
    least ``TIMESERIES_MIN_INTERVALS``, and are at least ``TIMESERIES_MIN_POINTS``."""
    if len(steps) < TIMESERIES_MIN_POINTS:
        return False
    span = steps[-1][1] - steps[0][0]
    return span >= min_seconds or len(steps) >= TIMESERIES_MIN_INTERVALS


def timeseries_note(report: Report, min_seconds: float = DEFAULT_TIMESERIES_MIN_SECONDS) -> str | None:
    """Why results with intervals have no time-series plot (``None`` when none was left out)."""
    left_out = sum(
        1
        for row in report.results
        if _interval_points(row) and not timeseries_worth(_interval_points(row), min_seconds)
    )
    if not left_out:
        return None
    return (
        f"{left_out} result{'s' if left_out != 1 else ''} with intervals {'have' if left_out != 1 else 'has'} no "
        "time-series plot: a time series is "
        f"drawn only when the intervals cover at least {min_seconds:g} s or number at least "
        f"{TIMESERIES_MIN_INTERVALS} (role variable report_timeseries_min_seconds; 0 draws every result with "
        f"{TIMESERIES_MIN_POINTS} or more intervals)"
    )


def plot_specs(report: Report, *, timeseries_min_seconds: float = DEFAULT_TIMESERIES_MIN_SECONDS) -> list[PlotSpec]:
    """Sweeps (throughput vs streams with 95 % CI error bars, one PNG per direction), time series
    (per-interval throughput, one PNG per summary group with results whose intervals are worth drawing,
    ``timeseries_worth``), the comparison (grouped bars) and the CPU-vs-throughput view of the comparison
    (one point per run and compared value). Plots without a single usable figure are left out."""
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
        xs = sorted({x for s in series for x in s.x})
        log2 = bool(xs) and xs[0] > 0 and xs[-1] / xs[0] >= SWEEP_LOG2_SPAN
        direction_text = sweeps[0].direction_text if len(sweeps) == 1 else direction_label(direction, swapped, [])
        subject = sweeps[0].test if len({s.test for s in sweeps}) == 1 else report.name
        specs.append(
            PlotSpec(
                kind="sweep",
                file=_unique(slug(f"sweep-{direction}{'-swapped' if swapped else ''}"), used),
                title=f"Throughput vs parallel streams: {subject} ({direction_text})",
                xlabel="Parallel streams per client" + (" (log2 scale)" if log2 else ""),
                ylabel=ylabel,
                series=tuple(series),
                **_line_rate(rate, unit),
                caption=f"Mean throughput vs parallel streams ({direction_text}), error bars: 95 % CI, star: knee"
                + (", x axis log2 scale (each doubling of the streams one step)" if log2 else ""),
                x_log2=log2,
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
            cpu = _cpu_spec(report, comparison, rows, test, used)
            if cpu is not None:
                specs.append(cpu)

    for group in report.groups:
        if group.part:  # its results are drawn with the whole runs' group
            continue
        series = []
        for run in group.runs:
            for row in run.results:
                steps = _interval_points(row)
                if not timeseries_worth(steps, timeseries_min_seconds):
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
                        f"timeseries-{group.test}-{group.direction}{'-swapped' if group.swapped else ''}"
                        f"-streams-{streams}" + (f"-{group.compare}" if group.compare is not None else "")
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


def _cpu_spec(
    report: Report, comparison: Comparison, rows: Sequence[ComparisonRow], test: str | None, used: set[str]
) -> PlotSpec | None:
    """CPU % (x) vs throughput (y): per compared value one point per run, filled for the local CPU, open for
    the remote; ``None`` when no run of the comparison has a CPU figure."""
    unit = report.unit
    series = []
    for value in comparison.values:
        runs = [run for row in rows if (g := row.cells.get(value)) is not None for run in g.runs]
        for side, hollow in (("local", False), ("remote", True)):
            points = [
                (cpu, bps)
                for run in runs
                if (bps := run.bits_per_second) is not None
                and (cpu := getattr(run.figures, f"cpu_{side}_percent")) is not None
            ]
            if points:
                series.append(
                    Series(
                        label=f"{comparison.label}={value}, {side} CPU",
                        x=tuple(p[0] for p in points),
                        y=tuple(_scaled(p[1], unit) for p in points),
                        hollow=hollow,
                    )
                )
    if not series:
        return None
    suffix = f" - test {test}" if test is not None else ""
    return PlotSpec(
        kind="cpu",
        file=_unique(slug(f"cpu-vs-throughput-{comparison.label}{'-' + test if test else ''}"), used),
        title=f"CPU vs throughput by {comparison.label}{suffix}",
        xlabel="CPU use (%), as iperf printed it",
        ylabel=f"Throughput ({unit.name})",
        series=tuple(series),
        caption=f"CPU use vs throughput by {comparison.label}{suffix}, one point per run: filled local CPU "
        "(the host that printed the result), open remote CPU",
    )


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
        parts.append(f"{row.key.get('direction')}{', swapped' if row.key.get('swapped') else ''}")
    return "\n".join(parts) or "all runs"
