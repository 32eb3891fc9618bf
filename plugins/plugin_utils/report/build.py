# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report as a whole: ``build_report()`` reads the runs, groups them, finds the knees and the comparison,
and returns the ``Report`` every file is rendered from.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.base import (
    ReportError,
    Unit,
    as_number,
    pick_unit,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.comparison import Comparison, build_comparison
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.groups import (
    Group,
    Sweep,
    build_groups,
    combine_swapped,
    in_order,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.nic import NicDelta, deltas_by_test, nic_environment
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.parts import split_runs
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.rows import ResultRow, RunRow, kind_name, read_runs


@dataclass
class Report:
    """Everything the files are rendered from."""

    name: str
    title: str
    environment: dict[str, Any]
    line_rate_bps: float | None
    compare_by: str | None
    knee_tolerance: float
    generated_at: str | None
    runs: list[RunRow]
    groups: list[Group]
    sweeps: list[Sweep]
    comparison: Comparison | None
    unit: Unit
    #: The swapped and unswapped runs of a point together, for the tests with combine_swapped.
    combined: list[Group] = field(default_factory=list)
    #: The parts of the runs whose pairs differ in the compared label (``parts.py``); never in ``runs``.
    parts: list[RunRow] = field(default_factory=list)
    #: NIC counters (paired_test_nic_counters): per test, the delta over its runs; empty when none was read.
    nic_tests: dict[str, NicDelta | None] = field(default_factory=dict)

    @property
    def has_nic(self) -> bool:
        """Whether any run record carries NIC readings."""
        return any(run.record is not None and run.record.get("nic") for run in self.runs)

    @property
    def loss_warnings(self) -> list[str]:
        """Where the packets went: one line per run, NIC and kind of loss (drops, ring exhaustion, pause frames,
        errors) that grew during the run (``report/losses.py``); a test whose counters were read around all its runs
        only (``nic_counters: test``) has its lines for the whole test. Shown in summary.md, report.html and the
        play's warnings."""
        lines = [line for run in self.runs if run.nic is not None for line in run.nic.loss_lines()]
        per_run = {run.test for run in self.runs if run.nic is not None}
        for test, delta in self.nic_tests.items():
            if delta is not None and test not in per_run:
                lines += [f"test {test}: {line}" for line in delta.loss_lines()]
        return lines

    @property
    def results(self) -> list[ResultRow]:
        return [r for run in self.runs for r in run.results]

    @property
    def tests(self) -> list[str]:
        return in_order(run.test for run in self.runs)

    @property
    def failed_runs(self) -> list[RunRow]:
        return [run for run in self.runs if run.bits_per_second is None]

    @property
    def has_line_rate(self) -> bool:
        return any(run.line_rate_bps is not None for run in self.runs)

    def tools(self) -> list[tuple[str, str | None, int]]:
        """``(tool, version, number of results)`` seen in the results, in order of appearance."""
        counts: dict[tuple[str, str | None], int] = {}
        for row in self.results:
            tool = row.field("tool")
            if not isinstance(tool, str):
                continue
            version = row.field("tool_version")
            key = (tool, version if isinstance(version, str) else None)
            counts[key] = counts.get(key, 0) + 1
        return [(tool, version, count) for (tool, version), count in counts.items()]


_TIME = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?$"
)


def check_generated_at(value: Any) -> str | None:
    """``generated_at``: unset, or an ISO 8601 date and time such as ``2025-01-31T12:00:00Z`` (it is shown, recorded
    in the history and may end the report directory's name, so it is never free text)."""
    if value is None:
        return None
    text = value.strip() if isinstance(value, str) else None
    valid = text is not None and _TIME.match(text) is not None
    if valid and text is not None:
        try:
            datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            valid = False
    if not valid or text is None:
        raise ReportError(
            f"generated_at={value!r} is not a date and time: give an ISO 8601 time such as 2025-01-31T12:00:00Z (the "
            "role esxilab.iperf.report gives the time of the task), or leave it unset"
        )
    return text


def compare_by_warning(report: Report) -> str | None:
    """Why the comparison by ``compare_by`` is empty - no run has the label - naming the labels the runs have."""
    if report.compare_by is None or (report.comparison is not None and report.comparison.values):
        return None
    seen = in_order(str(k) for run in report.runs for k in (*run.labels, *(k for r in run.results for k in r.labels)))
    known = ", ".join(seen) if seen else "none"
    return (
        f"compare_by={report.compare_by!r}: no run has the label {report.compare_by!r}, so nothing is compared; the "
        f"runs' labels are: {known} - fix the name, or unset compare_by"
    )


def build_report(
    runs: Any,
    *,
    name: str = "iperf",
    title: str | None = None,
    environment: Mapping[str, Any] | None = None,
    line_rate_bps: float | None = None,
    compare_by: str | None = None,
    knee_tolerance: float = 0.05,
    generated_at: str | None = None,
) -> Report:
    """Read ``runs`` and compute the groups, sweeps and comparison of the report."""
    if not isinstance(name, str) or not name.strip():
        raise ReportError(f"name must be a non-empty string, got {name!r}")
    if line_rate_bps is not None:
        rate = as_number(line_rate_bps)
        if rate is None or rate <= 0:
            raise ReportError(
                f"line_rate_bps must be a positive number of bit/s (10 Gbit/s = 10000000000), got {line_rate_bps!r}"
            )
        line_rate_bps = rate
    if isinstance(knee_tolerance, bool) or not isinstance(knee_tolerance, int | float):
        raise ReportError(f"knee_tolerance must be a fraction such as 0.05, got {knee_tolerance!r}")
    if not 0.0 <= knee_tolerance < 1.0:
        raise ReportError(f"knee_tolerance must be a fraction in [0, 1), e.g. 0.05, got {knee_tolerance!r}")
    if environment is not None and not isinstance(environment, Mapping):
        raise ReportError(f"environment must be a dictionary, got {kind_name(environment)}")
    label = compare_by.strip() if isinstance(compare_by, str) and compare_by.strip() else None
    generated_at = check_generated_at(generated_at)

    rows = read_runs(runs, line_rate_bps=line_rate_bps)
    if not rows:
        raise ReportError(
            "runs is empty: there is no run to report, so no report is written; pass paired_test_results or "
            "normalized results (check that the runs were registered, and that the list given is the right one)"
        )
    parts = split_runs(rows, label) if label is not None else []
    # each run followed by its parts: the groups of a run's parts come right after the run's own groups
    ordered = [row for run in rows for row in (run, *run.parts)]
    groups, sweeps = build_groups(ordered, float(knee_tolerance))
    comparison = build_comparison(label, ordered, groups) if label is not None else None
    unit = pick_unit([run.bits_per_second for run in rows] + [r.bits_per_second for run in rows for r in run.results])
    records = [(run.test, run.record) for run in rows]
    read = any(record is not None and record.get("nic") for _test, record in records)
    env = dict(environment or {})
    nics = nic_environment(record for _test, record in records)
    if nics:
        env.setdefault("nics", nics)  # driver/firmware/speed of the NICs read (report_environment's "nics" wins)
    return Report(
        name=name.strip(),
        title=title.strip() if isinstance(title, str) and title.strip() else f"iperf report: {name.strip()}",
        environment=env,
        line_rate_bps=line_rate_bps,
        compare_by=label,
        knee_tolerance=float(knee_tolerance),
        generated_at=generated_at,
        runs=rows,
        groups=groups,
        sweeps=sweeps,
        comparison=comparison,
        unit=unit,
        combined=combine_swapped(groups),
        parts=parts,
        nic_tests=deltas_by_test(records) if read else {},
    )
