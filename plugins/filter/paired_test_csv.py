# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter ``esxilab.iperf.paired_test_csv`` (deprecated): a thin shim over the report builder, ``_report.py``."""

from __future__ import annotations

DOCUMENTATION = r"""
name: paired_test_csv
short_description: Paired iperf runs or their summary as CSV text
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
deprecated:
  removed_in: "2.0.0"
  why: The collection has one report builder; the role C(esxilab.iperf.paired_test) no longer uses this filter.
  alternative: >-
    The role C(esxilab.iperf.report) (or M(esxilab.iperf.report_write)), which writes the same tables as
    C(results.csv) and C(summary.csv).
description:
  - Deprecated, see above. Kept for the deprecation period as a thin shim over the report builder of
    C(esxilab.iperf.report) - the text is that report's C(results.csv) or C(summary.csv), with its columns.
  - O(table=pairs) - C(results.csv), one row per pair of every run.
  - O(table=summary) - C(summary.csv), one row per test, direction, swap and streams value.
  - A header row comes first. Unknown figures are empty cells; rates are bits per second written with full
    precision; booleans are C(true)/C(false).
  - 'A cell that starts with C(=), C(+), C(-), C(@), a tab or a carriage return (for example a test name) gets a
    leading C('') so a spreadsheet shows it as text instead of running it as a formula (OWASP "CSV Injection");
    plain numbers such as C(-1.5) are written as they are.'
options:
  _input:
    description: The run records (C(paired_test_results)), for either table.
    type: list
    elements: dict
    required: true
  table:
    description: Which table to write.
    type: str
    choices: [pairs, summary]
    default: pairs
seealso:
  - module: esxilab.iperf.report_write
    description: Writes these tables, the JSON and the readable summary in one report directory.
"""

EXAMPLES = r"""
---
- name: Write the runs as CSV on the controller
  ansible.builtin.copy:
    content: "{{ paired_test_results | esxilab.iperf.paired_test_csv }}"
    dest: /tmp/paired-test.csv
    mode: "0644"
  delegate_to: localhost
  run_once: true

- name: Write the summary as CSV
  ansible.builtin.copy:
    content: "{{ paired_test_results | esxilab.iperf.paired_test_csv(table='summary') }}"
    dest: /tmp/paired-test-summary.csv
    mode: "0644"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
_value:
  description: The CSV text, lines ending in a newline.
  type: str
  sample: |
    run,test,direction,swapped,streams,repetition,pair,server,client,address,port,started_at,...
    1,vswitch,forward,false,1,1,1,h1,h2,198.18.0.11,5201,1733000000.5,...
"""

# Ansible's layout puts DOCUMENTATION, EXAMPLES and RETURN above the imports.
# ruff: noqa: E402

from collections.abc import Callable, Mapping
from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.plugin_utils._report import (
    ReportError,
    build_report,
    results_csv,
    summary_csv,
)

_NAME = "esxilab.iperf.paired_test_csv"


def paired_test_csv(data: Any, table: str = "pairs") -> str:
    """Write the run records as the report's CSV tables (see the DOCUMENTATION above)."""
    render = {"pairs": results_csv, "summary": summary_csv}.get(table)
    if render is None:
        raise AnsibleFilterError(f"{_NAME}: table must be 'pairs' or 'summary', got {table!r}")
    runs = list(data) if isinstance(data, tuple) else data
    if isinstance(runs, list) and any(isinstance(i, Mapping) and "stats" in i and "pairs" not in i for i in runs):
        raise AnsibleFilterError(
            f"{_NAME}: expected run records (paired_test_results), got summary items; both tables are now made "
            "from the run records"
        )
    try:
        return render(build_report(runs))
    except ReportError as exc:
        raise AnsibleFilterError(f"{_NAME}: {exc}") from exc


class FilterModule:
    """The paired_test_csv filter."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"paired_test_csv": paired_test_csv}
