# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``results.csv`` (one row per result) and ``summary.csv`` (one row per summary group); cells go through
``csv_cells.csv_cell``.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.csv_cells import csv_cell, csv_text
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.base import RUN_LABELS, plain_data
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.build import Report
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.figures import FIGURE_NAMES
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.groups import in_order
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.host_cpu import GroupHostCpu, HostCpu
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.latency import (
    LATENCY_COLUMNS,
    latency_cells,
    result_latency,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.nic import DELTA_COUNTERS

# added in 1.2: the NIC counter deltas around the run / the group's runs ("n/a": not read; empty: unknown)
NIC_COLUMNS = tuple(f"nic_{name}" for name in DELTA_COUNTERS)

# added in 1.3: the CPU of the pair's server and client hosts over the run (paired_test_host_cpu; "n/a": not read,
# empty: read but no figure - the run record's cpu says why)
HOST_CPU_COLUMNS = tuple(
    f"{end}_host_{figure}" for end in ("server", "client") for figure in ("cpu_percent", "max_core_percent")
)

RESULT_COLUMNS = (
    "run",
    "test",
    "direction",
    "swapped",
    "streams",
    "repetition",
    "pair",
    "server",
    "client",
    "address",
    "port",
    "started_at",
    "tool",
    "tool_version",
    "protocol",
    "side",
    "bits_per_second",
    "line_rate_bps",
    "percent_of_line_rate",
    "sent_bytes",
    "sent_bits_per_second",
    "received_bytes",
    "received_bits_per_second",
    "duration",
    "retransmits",
    "jitter_ms",
    "lost_percent",
    "complete",
    "error",
    "run_bits_per_second",
    # added in 1.1: who sent to whom, the run's line rate (the sum over its pairs), the figures beside throughput
    "flow",
    "run_line_rate_bps",
    "run_percent_of_line_rate",
    "cpu_local_percent",
    "cpu_remote_percent",
    "rtt_min_us",
    "rtt_mean_us",
    "rtt_max_us",
    "lost_packets",
    "packets",
    "reverse_bits_per_second",
    "bidir_sum_bits_per_second",
    *NIC_COLUMNS,
    *HOST_CPU_COLUMNS,
    # added in 1.2: latency under load, the pair's pings idle vs during the transfer (report/latency.py)
    *LATENCY_COLUMNS,
)
SUMMARY_COLUMNS = (
    "test",
    "direction",
    "swapped",
    "streams",
    "compare",
    "runs",
    "count",
    "skipped",
    "mean",
    "median",
    "stdev",
    "ci95_low",
    "ci95_high",
    "ci95_half_width",
    "min",
    "max",
    "line_rate_bps",
    "percent_of_line_rate",
    "knee",
    # added in 1.1: who sent to whom, and the figures beside throughput over the group's runs (figures.py)
    "flows",
    *FIGURE_NAMES,
    *NIC_COLUMNS,
    # added in 1.3: host -> {mean_percent, max_core_percent, runs} over the group's runs ("n/a": not read)
    "host_cpu",
    # with compare_by: this row's mean against the first compared value's, as summary.md's last columns
    "compared_with",
    "difference_percent",
    "difference_ci95_low_percent",
    "difference_ci95_high_percent",
    "difference_verdict",
)
COMPARISON_COLUMNS = SUMMARY_COLUMNS[-5:]


def _nic_cells(counters: Mapping[str, int | None] | None) -> dict[str, object]:
    """The ``nic_*`` cells: the deltas, ``n/a`` when the counters were not read around the run(s)."""
    if counters is None:
        return dict.fromkeys(NIC_COLUMNS, "n/a")
    return {f"nic_{name}": counters.get(name) for name in DELTA_COUNTERS}


def _host_cpu_cells(found: Mapping[str, HostCpu] | None, server: str | None, client: str | None) -> dict[str, object]:
    """The ``*_host_*`` cells of a result: its server's and client's CPU over the run, ``n/a`` when not read."""
    cells: dict[str, object] = {}
    for end, host in (("server", server), ("client", client)):
        entry = None if found is None or host is None else found.get(host)
        cells[f"{end}_host_cpu_percent"] = "n/a" if entry is None else entry.mean_percent
        cells[f"{end}_host_max_core_percent"] = "n/a" if entry is None else entry.max_core_percent
    return cells


def _group_host_cpu_cell(found: Mapping[str, GroupHostCpu] | None) -> object:
    return "n/a" if found is None else {host: value.as_dict() for host, value in found.items()}


def _cell(value: Any) -> Any:
    """``csv_cell``, plus lists and mappings as compact JSON and ``str`` subclasses as plain ``str``."""
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(plain_data(value), sort_keys=True, separators=(",", ":"))
    return str(value) if isinstance(value, str) else csv_cell(value)


def _label_columns(report: Report) -> list[str]:
    keys = in_order(str(k) for row in report.results for k in row.labels if str(k) not in RUN_LABELS)
    return [f"label.{k}" for k in keys]


def results_csv(report: Report) -> str:
    """``results.csv``: one row per result; figures from the result, ``None`` as an empty cell.

    Floats are written exactly (``repr``). A failed pair has its ``error`` and empty figures.
    ``label.<key>`` columns hold the labels other than the run's identity.
    """
    label_columns = _label_columns(report)
    rows = []
    for run in report.runs:
        for row in run.results:
            usable = row.bits_per_second is not None
            figures = row.figures
            item: dict[str, object] = {
                **run.identity(),
                **row.place(),
                "tool": row.field("tool"),
                "tool_version": row.field("tool_version"),
                "protocol": row.field("protocol"),
                "side": row.field("side"),
                "bits_per_second": row.bits_per_second,
                "line_rate_bps": row.line_rate_bps,
                "percent_of_line_rate": row.percent_of_line_rate,
                "sent_bytes": row.field("sent.bytes") if usable else None,
                "sent_bits_per_second": row.field("sent.bits_per_second") if usable else None,
                "received_bytes": row.field("received.bytes") if usable else None,
                "received_bits_per_second": row.field("received.bits_per_second") if usable else None,
                "duration": row.field("duration") if usable else None,
                "complete": bool(row.field("complete")),
                "error": row.error,
                "run_bits_per_second": run.bits_per_second,
                "flow": row.flow,
                "run_line_rate_bps": run.line_rate_bps,
                "run_percent_of_line_rate": run.percent_of_line_rate,
                **figures.as_dict(),
                "retransmits": None if figures.retransmits is None else int(figures.retransmits),
                **_nic_cells(None if run.nic is None else run.nic.counters),
                **_host_cpu_cells(run.host_cpu, row.server, row.client),
                **latency_cells(result_latency(row.record)),
            }
            for column in label_columns:
                item[column] = row.labels.get(column[len("label.") :])
            rows.append(item)
    return csv_text((*RESULT_COLUMNS, *label_columns), rows, _cell)


def _differences(report: Report) -> dict[int, dict[str, object]]:
    """The comparison columns of each compared group (by ``id``): its difference to the first value's group."""
    comparison = report.comparison
    if comparison is None or not comparison.values:
        return {}
    cells: dict[int, dict[str, object]] = {}
    for row in comparison.rows:
        for value in comparison.values[1:]:
            group = row.cells.get(value)
            if group is None:
                continue
            found = comparison.difference(row, value)
            cells[id(group)] = {
                "compared_with": f"{comparison.label}={comparison.values[0]}",
                "difference_percent": found.percent,
                "difference_ci95_low_percent": found.low,
                "difference_ci95_high_percent": found.high,
                "difference_verdict": found.verdict,
            }
    return cells


def summary_csv(report: Report) -> str:
    """``summary.csv``: one row per test, direction, swap, streams value and compared label value; with
    ``combine_swapped`` also one per point over its swapped and unswapped runs (column ``combined``)."""
    rows = []
    differences = _differences(report)
    # combine_swapped: after the rows of each role order, one row over both (seed 002's "mean of the 4")
    for group in [*report.groups, *report.combined]:
        ci95 = group.stats.get("ci95") or {}
        rows.append(
            {
                "combined": group.combined,
                "test": group.test,
                "direction": group.direction,
                "swapped": group.swapped,
                "streams": group.streams,
                "compare": group.compare_text,
                "part": group.part,
                "runs": len(group.runs),
                **{k: group.stats.get(k) for k in ("count", "skipped", "mean", "median", "stdev", "min", "max")},
                "ci95_low": ci95.get("low"),
                "ci95_high": ci95.get("high"),
                "ci95_half_width": ci95.get("half_width"),
                "line_rate_bps": group.line_rate_bps,
                "percent_of_line_rate": group.percent_of_line_rate,
                "knee": group.knee,
                "flows": "; ".join(group.flows) or None,
                **group.figures.as_dict(),
                **_nic_cells(group.nic),
                "host_cpu": _group_host_cpu_cell(group.host_cpu),
                **differences.get(id(group), {}),
            }
        )
    columns = list(SUMMARY_COLUMNS)
    if report.compare_by is None:
        columns.remove("compare")
        columns = [c for c in columns if c not in COMPARISON_COLUMNS]
    if report.parts:  # runs split by the compared label: say which rows sum only a value's pairs of each run
        columns.append("part")
    if report.combined:  # combine_swapped: say which rows are over the swapped and unswapped runs together
        columns.append("combined")
    return csv_text(columns, rows, _cell)
