# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``results.json``: every normalized result with its labels, the environment, the runs, the parts of split runs,
the summary, the sweeps and the comparison.

``report_doc()`` builds the document once, as plain data; ``json_text()`` is the file's text of it. The action
``report_write`` writes that text and returns the same document: what a play learns of the report is what the file
holds, never read back from disk.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.base import REPORT_FORMAT, REPORT_VERSION, plain_data
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.build import Report
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.comparison import Comparison
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.groups import Group, Sweep
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.host_cpu import GroupHostCpu, HostCpu
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.rows import ResultRow, RunRow


def _stats_doc(stats: Mapping[str, Any]) -> dict[str, object]:
    return {k: stats.get(k) for k in ("count", "skipped", "mean", "median", "min", "max", "stdev", "cv", "sum", "ci95")}


def _group_doc(group: Group, with_part: bool) -> dict[str, object]:
    """One summary group; ``part`` (a group of parts of runs, not of whole runs) only in a report with parts, so a
    report without split runs is written as before."""
    return {
        "test": group.test,
        "direction": group.direction,
        "swapped": group.swapped,
        "streams": group.streams,
        "compare": group.compare,
        # the sums over each run's pairs with the compared value (parts of the runs), not whole runs
        **({"part": group.part} if with_part else {}),
        "runs": [run.run for run in group.runs],
        "stats": _stats_doc(group.stats),
        "line_rate_bps": group.line_rate_bps,
        "line_rate_source": group.line_rate_source,
        "percent_of_line_rate": group.percent_of_line_rate,
        "sweep": group.sweep,
        "knee": group.knee,
        "stability": group.stability,
        "combined": group.combined,
        "flows": group.flows,
        "line_rate_note": group.line_rate_note,
        "figures": group.figures.as_dict(),
        "nic": group.nic,
        # host CPU over the group's runs (paired_test_host_cpu): host -> {mean_percent, max_core_percent, runs}
        "host_cpu": _host_cpu_doc(group.host_cpu),
    }


def _host_cpu_doc(found: Mapping[str, HostCpu | GroupHostCpu] | None) -> dict[str, object] | None:
    return None if found is None else {host: value.as_dict() for host, value in found.items()}


def _run_doc(run: RunRow) -> dict[str, object]:
    return {
        **run.identity(),
        "compare": run.compare,
        "labels": run.labels,
        "protocol": run.protocol,
        "pairs": len(run.results),
        "bits_per_second": run.bits_per_second,
        "line_rate_bps": run.line_rate_bps,
        "line_rate_source": run.line_rate_source,
        "percent_of_line_rate": run.percent_of_line_rate,
        "retransmits": run.retransmits,
        "complete": run.complete,
        "errors": run.errors,
        "warnings": run.warnings,
        "source": run.source,
        "flows": run.flows,
        "line_rate_note": run.line_rate_note,
        "figures": run.figures.as_dict(),
        "nic": None if run.nic is None else run.nic.as_dict(),
        # host CPU over the run (paired_test_host_cpu): host -> {mean_percent, max_core_percent, max_core, reason}
        "host_cpu": _host_cpu_doc(run.host_cpu),
        "record": None if run.record is None else {k: v for k, v in run.record.items() if k != "pairs"},
        # the compared values of its parts (top-level "parts"), only when its pairs differ in the compared label
        **({"parts": [part.compare for part in run.parts]} if run.parts else {}),
    }


def _part_doc(part: RunRow) -> dict[str, object]:
    """One part of a run: the run's pairs with one value of the compared label, summed (``parts.py``)."""
    return {
        **part.identity(),
        "part_of": part.whole.run if part.whole is not None else part.run,
        "compare": part.compare,
        "labels": part.labels,
        "pairs": [row.pair for row in part.results],
        "bits_per_second": part.bits_per_second,
        "line_rate_bps": part.line_rate_bps,
        "percent_of_line_rate": part.percent_of_line_rate,
        "line_rate_note": part.line_rate_note,
        "retransmits": part.retransmits,
        "complete": part.complete,
        "errors": part.errors,
        "flows": part.flows,
        "figures": part.figures.as_dict(),
    }


def _result_doc(row: ResultRow) -> dict[str, object]:
    return {
        "run": row.run,
        **row.place(),
        "labels": row.labels,
        "line_rate_bps": row.line_rate_bps,
        "percent_of_line_rate": row.percent_of_line_rate,
        "error": row.error,
        "flow": row.flow,
        "figures": row.figures.as_dict(),
        "result": row.result,
        "record": None if row.record is None else {k: v for k, v in row.record.items() if k != "result"},
    }


def _comparison_doc(comparison: Comparison) -> dict[str, object]:
    return {
        "label": comparison.label,
        "values": comparison.values,
        "per_test": comparison.per_test,
        "left_out_runs": comparison.left_out,
        "rows": [
            {
                **row.key,
                "means": {v: (g.mean if g else None) for v, g in row.cells.items()},
                "ci95_half_width": {v: (g.half_width if g else None) for v, g in row.cells.items()},
                "delta_percent": {v: comparison.delta(row, v) for v in comparison.values[1:]},
                # the same difference with Welch's 95 % interval, in % of the first value's mean, and its verdict
                "difference": {v: comparison.difference(row, v).as_doc() for v in comparison.values[1:]},
            }
            for row in comparison.rows
        ],
    }


def _sweep_doc(sweep: Sweep) -> dict[str, object]:
    return {
        "test": sweep.test,
        "direction": sweep.direction,
        "swapped": sweep.swapped,
        "compare": sweep.compare,
        "points": [
            {"streams": g.streams, "mean": g.mean, "ci95_half_width": g.half_width, "count": g.stats["count"]}
            for g in sweep.groups
        ],
        "knee": sweep.knee,
        "best_streams": sweep.best_streams,
        "best_bits_per_second": sweep.best_bits_per_second,
        # where the sweep levels off: the stream counts from the knee on within the tolerance of the best, their level
        "plateau_streams": sweep.plateau_streams,
        "plateau_bits_per_second": sweep.plateau_bits_per_second,
        "tolerance": sweep.tolerance,
    }


def report_doc(report: Report) -> dict[str, Any]:
    """The ``results.json`` document as plain data: format, version, the options, environment, runs, results,
    summary, sweeps, comparison, combined, nic (and parts, when a run was split)."""
    document: dict[str, Any] = {
        "format": REPORT_FORMAT,
        "version": REPORT_VERSION,
        "name": report.name,
        "title": report.title,
        "generated_at": report.generated_at,
        "environment": report.environment,
        "line_rate_bps": report.line_rate_bps,
        "compare_by": report.compare_by,
        "knee_tolerance": report.knee_tolerance,
        "unit": report.unit.name,
        "runs": [_run_doc(run) for run in report.runs],
        "results": [_result_doc(row) for row in report.results],
        "summary": [_group_doc(group, bool(report.parts)) for group in report.groups],
        "sweeps": [_sweep_doc(sweep) for sweep in report.sweeps],
        "comparison": _comparison_doc(report.comparison) if report.comparison else None,
        # combine_swapped: the swapped and unswapped runs of a point in one group (besides their own rows)
        "combined": [_group_doc(group, bool(report.parts)) for group in report.combined],
        # NIC counters read around the runs (paired_test_nic_counters): each test's delta; null: none was read
        # and where the packets went: a line per run, NIC and kind of loss (report/losses.py)
        "nic": {
            "tests": {t: None if d is None else d.as_dict() for t, d in report.nic_tests.items()},
            "loss_warnings": report.loss_warnings,
        }
        if report.has_nic
        else None,
    }
    if report.parts:  # runs split by compare_by: per run and value, the sum over that value's pairs (not runs)
        document["parts"] = [_part_doc(part) for part in report.parts]
    result: dict[str, Any] = plain_data(document)
    return result


def json_text(document: Mapping[str, Any]) -> str:
    """The text of ``results.json`` holding ``document`` (``report_doc()``): what it reads back as is the document."""
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


def to_json(report: Report) -> str:
    """``results.json`` of ``report``: ``json_text(report_doc(report))``."""
    return json_text(report_doc(report))
