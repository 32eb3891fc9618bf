# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The compact table printed at the end of the play (``table_lines()``, the ``table`` of ``report_write``).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Sequence

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.base import (
    FILES,
    NA,
    as_number,
    format_rate,
    label_text,
    pct,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.build import Report
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.parts import ALL_PAIRS, NO_VALUE
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.rows import direction_label


def _columns(rows: Sequence[Sequence[str]], right: Sequence[bool]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, right, strict=True)]
        lines.append("  ".join(cells).rstrip())
    return lines


def table_lines(
    report: Report, *, directory: str | None = None, plots_note: str | None = None, check_mode: bool = False
) -> list[str]:
    """The compact summary for a ``debug`` task: one line per summary group, knees, where the files are.

    Retransmits (mean per run) and CPU (local/remote %) get a column only when some group has the figure,
    so the table stays narrow for results without them. In ``check_mode`` the last line says that no report
    was written and where it would be."""
    unit = report.unit
    failed = len(report.failed_runs)
    head = f"{report.title}: {len(report.runs)} run(s)" + (f", {failed} without a usable figure" if failed else "")
    lines = [head]
    if report.groups:
        with_compare = report.compare_by is not None
        with_rate = report.has_line_rate
        header = ["test", "direction", "streams"]
        if with_compare:
            header.append(str(report.compare_by))
        header += ["runs", f"mean {unit.name}", "+/-95% CI", "min", "max"]
        if with_rate:
            header.append("% line")
        figures = [g.figures for g in report.groups]
        with_retr = any(f.retransmits is not None for f in figures)
        with_cpu = any(f.has_cpu for f in figures)
        if with_retr:
            header.append("retr")
        if with_cpu:
            header.append("cpu % loc/rem")
        rows = [header]
        for group in report.groups:
            count = int(group.stats.get("count") or 0)
            row = [
                group.test,
                direction_label(group.direction, group.swapped, group.flows, limit=1),  # one flow keeps it narrow
                (NA if group.streams is None else str(group.streams)) + ("*" if group.knee == group.streams else ""),
            ]
            if with_compare:
                row.append(group.compare_text or NA)
            row += [
                f"{count}/{len(group.runs)}",
                format_rate(group.mean, unit),
                format_rate(group.half_width, unit),
                format_rate(as_number(group.stats.get("min")), unit),
                format_rate(as_number(group.stats.get("max")), unit),
            ]
            if with_rate:
                row.append(pct(group.percent_of_line_rate))
            group_figures = group.figures
            if with_retr:
                retr = group_figures.retransmits
                row.append(NA if retr is None else f"{retr:.0f}")
            if with_cpu:
                cpu = f"{pct(group_figures.cpu_local_percent)}/{pct(group_figures.cpu_remote_percent)}"
                row.append(cpu if group_figures.has_cpu else NA)
            rows.append(row)
        right = [False, False, True] + ([False] if with_compare else []) + [True] * (len(header) - 3 - with_compare)
        lines += _columns(rows, right)
        for group in report.combined:
            lines.append(
                f"{group.test} {group.direction_text}, {NA if group.streams is None else group.streams} stream(s): "
                f"mean {format_rate(group.mean, unit)} {unit.name} +/- {format_rate(group.half_width, unit)} over "
                f"{int(group.stats.get('count') or 0)} run(s)"
                + (f", {pct(group.percent_of_line_rate)} of line rate" if with_rate else "")
            )
        for group in report.groups:
            if group.stability is not None:
                streams = NA if group.streams is None else group.streams
                lines.append(f"{group.test} {group.direction_text}, {streams} stream(s): {group.stability}")
        if report.parts:
            lines.append(
                f"{report.compare_by}=<value>: per run the sum over its pairs with that value; {ALL_PAIRS}: the whole "
                f"run ({NO_VALUE}: pairs without the label)"
            )
        if any(s.knee is not None for s in report.sweeps):
            lines.append(f"* knee: the smallest stream count within {report.knee_tolerance * 100:g} % of the best mean")
    if report.comparison is not None and len(report.comparison.values) > 1:
        comparison = report.comparison
        for compared in comparison.rows:
            deltas = [f"{v} {comparison.difference(compared, v).text}" for v in comparison.values[1:]]
            # e.g. direction=forward, streams=1 (swapped only when true)
            where = ", ".join(f"{k}={label_text(v)}" for k, v in compared.key.items() if k != "swapped" or v)
            lines.append(f"{comparison.label} vs {comparison.values[0]} ({where}): {', '.join(deltas)}")
    if plots_note:
        lines.append(f"plots: {plots_note}")
    if directory and check_mode:
        lines.append(f"check mode: no report was written (it would be {directory.rstrip('/')}/{FILES['markdown']})")
    elif directory:
        lines.append(f"report: {directory.rstrip('/')}/{FILES['markdown']}")
    return lines
