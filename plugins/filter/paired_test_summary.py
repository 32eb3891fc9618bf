# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter ``esxilab.iperf.paired_test_summary`` (deprecated): a thin shim over the report builder, ``_report.py``."""

from __future__ import annotations

DOCUMENTATION = r"""
name: paired_test_summary
short_description: Statistics of paired iperf runs per test and stream count, and the knee of stream sweeps
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
deprecated:
  removed_in: "2.0.0"
  why: The collection has one report builder; the role C(esxilab.iperf.paired_test) no longer uses this filter.
  alternative: >-
    The role C(esxilab.iperf.report) (or M(esxilab.iperf.report_write)): C(summary) and C(sweeps) of its
    C(results.json); the role C(esxilab.iperf.paired_test) sets them as C(paired_test_summary) and
    C(paired_test_sweeps).
description:
  - Deprecated, see above. Kept for the deprecation period as a thin shim over the report builder of
    C(esxilab.iperf.report), so its output is the C(summary) and C(sweeps) of that report's C(results.json).
  - Groups the runs by test, direction, swap and streams value and summarizes their C(total_bits_per_second) as
    P(esxilab.iperf.iperf_stats#filter) does (count, mean, median, min, max, stdev, CV, Student-t 95% interval). A
    failed run (total C(null)) is skipped and counted in C(stats.skipped), never counted as zero.
  - For each test, direction and swap with more than one stream count (a sweep), gives the knee - the smallest stream
    count whose mean is within O(tolerance) of the best mean.
options:
  _input:
    description: The run records (C(paired_test_results)).
    type: list
    elements: dict
    required: true
  tolerance:
    description: Fraction of the best mean within which a stream count counts as reaching the plateau.
    type: float
    default: 0.05
  confidence:
    description: Ignored; the summary gives the 95% interval (C(stats.ci95)), as the report does.
    type: float
    default: 0.95
seealso:
  - plugin: esxilab.iperf.iperf_stats
    plugin_type: filter
    description: The same statistics over any list of results or numbers.
  - module: esxilab.iperf.report_write
    description: Writes the report these summaries come from.
"""

EXAMPLES = r"""
---
- name: Mean total per stream count, and the knee of the sweep
  ansible.builtin.debug:
    msg: >-
      {{ summary.summary | map(attribute='streams') | zip(summary.summary | map(attribute='stats.mean')) | list }},
      knee {{ summary.sweeps[0].knee }}
  vars:
    summary: "{{ paired_test_results | esxilab.iperf.paired_test_summary(tolerance=0.05) }}"
"""

RETURN = r"""
_value:
  description: C(summary) and C(sweeps) as in the C(results.json) of M(esxilab.iperf.report_write).
  type: dict
  contains:
    summary:
      description: One item per test, direction, swap and streams value, in the order of the tests.
      type: list
      elements: dict
      contains:
        test:
          description: Test name.
          type: str
        direction:
          description: V(forward) or V(reverse).
          type: str
        swapped:
          description: Whether servers and clients were exchanged.
          type: bool
        streams:
          description: Streams per pair.
          type: int
        runs:
          description: The numbers of the runs in the group.
          type: list
          elements: int
        stats:
          description:
            - P(esxilab.iperf.iperf_stats#filter) of the runs' C(total_bits_per_second) - C(count), C(skipped) (the
              failed runs), C(sum), C(mean), C(median), C(min), C(max), C(stdev), C(cv), C(ci95).
          type: dict
        sweep:
          description: Whether the group is a point of a sweep.
          type: bool
        knee:
          description: The knee of the group's sweep (same for every streams value of it); C(null) outside sweeps.
          type: int
    sweeps:
      description: One item per test, direction and swap with more than one streams value.
      type: list
      elements: dict
      contains:
        test:
          description: Test name.
          type: str
        direction:
          description: V(forward) or V(reverse).
          type: str
        swapped:
          description: Whether servers and clients were exchanged.
          type: bool
        points:
          description: C({streams, mean, ci95_half_width, count}) per stream count, ascending.
          type: list
          elements: dict
        best_streams:
          description: Stream count with the highest mean (the smallest one on a tie).
          type: int
        best_bits_per_second:
          description: That mean.
          type: float
        knee:
          description:
            - Smallest stream count whose mean is within O(tolerance) of the best; C(null) without any usable run.
          type: int
        tolerance:
          description: The O(tolerance) used.
          type: float
"""

# Ansible's layout puts DOCUMENTATION, EXAMPLES and RETURN above the imports.
# ruff: noqa: E402

from collections.abc import Callable
from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.plugin_utils._report import ReportError, build_report, summary_doc

_NAME = "esxilab.iperf.paired_test_summary"


def paired_test_summary(results: Any, tolerance: float = 0.05, confidence: float = 0.95) -> dict[str, Any]:
    """Summarize paired test runs with the report builder (see the DOCUMENTATION above)."""
    del confidence  # the report gives the 95 % interval
    try:
        report = build_report(list(results) if isinstance(results, tuple) else results, knee_tolerance=tolerance)
    except ReportError as exc:
        raise AnsibleFilterError(f"{_NAME}: {exc}") from exc
    return summary_doc(report)


class FilterModule:
    """The paired_test_summary filter."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"paired_test_summary": paired_test_summary}
