# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The deprecated filters ``paired_test_summary`` and ``paired_test_csv``: thin shims over the report builder.

Their documentation is in ``paired_test_summary.yml`` and ``paired_test_csv.yml`` next to this
file. They live in a file of another name on purpose: ansible-core loads every filter file of
the collection whenever it resolves one filter, and checks each file's name against
``meta/runtime.yml``; a file named like a deprecated filter would print its deprecation warning
in every play that uses any filter of the collection. Named otherwise, the warning comes only
when the deprecated filter itself is used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import (
    ReportError,
    build_report,
    results_csv,
    summary_csv,
    summary_doc,
)


def paired_test_summary(results: Any, tolerance: float = 0.05, confidence: float = 0.95) -> dict[str, Any]:
    """The ``summary`` and ``sweeps`` of the report's ``results.json`` (see paired_test_summary.yml)."""
    del confidence  # the report gives the 95 % interval
    try:
        report = build_report(list(results) if isinstance(results, tuple) else results, knee_tolerance=tolerance)
    except ReportError as exc:
        raise AnsibleFilterError(f"esxilab.iperf.paired_test_summary: {exc}") from exc
    return summary_doc(report)


def paired_test_csv(data: Any, table: str = "pairs") -> str:
    """The report's ``results.csv`` or ``summary.csv`` of the run records (see paired_test_csv.yml)."""
    name = "esxilab.iperf.paired_test_csv"
    render = {"pairs": results_csv, "summary": summary_csv}.get(table)
    if render is None:
        raise AnsibleFilterError(f"{name}: table must be 'pairs' or 'summary', got {table!r}")
    runs = list(data) if isinstance(data, tuple) else data
    if isinstance(runs, list) and any(isinstance(i, Mapping) and "stats" in i and "pairs" not in i for i in runs):
        raise AnsibleFilterError(
            f"{name}: expected run records (paired_test_results), got summary items; both tables are now made "
            "from the run records"
        )
    try:
        return render(build_report(runs))
    except ReportError as exc:
        raise AnsibleFilterError(f"{name}: {exc}") from exc


class FilterModule:
    """The deprecated paired_test_summary and paired_test_csv filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"paired_test_summary": paired_test_summary, "paired_test_csv": paired_test_csv}
