# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter ``esxilab.iperf.paired_test_summary``: run records -> statistics per test and streams, knees."""

from __future__ import annotations

DOCUMENTATION = r"""
name: paired_test_summary
short_description: Statistics of paired iperf runs per test and stream count, and the knee of stream sweeps
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Used by the role C(esxilab.iperf.paired_test) on C(paired_test_results).
  - Groups the runs by test, direction, swap and streams value and summarizes their C(total_bits_per_second) as
    P(esxilab.iperf.iperf_stats#filter) does (count, mean, median, min, max, stdev, CV, Student-t 95% interval). A
    failed run (total C(null)) is skipped and counted in C(skipped), never counted as zero.
  - For tests whose streams were a list (a sweep), gives the knee - the smallest stream count whose mean is within
    O(tolerance) of the best mean.
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
    description: Two-sided level of C(stats.ci) (C(stats.ci95) is always the 95% interval).
    type: float
    default: 0.95
seealso:
  - plugin: esxilab.iperf.iperf_stats
    plugin_type: filter
    description: The same statistics over any list of results or numbers.
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
  description: Summaries and sweeps.
  type: dict
  contains:
    summary:
      description: One item per test, direction, swap and streams value, in the order the runs came.
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
          description: Runs in the group.
          type: int
        failed_runs:
          description: Runs whose total is C(null).
          type: int
        stats:
          description:
            - P(esxilab.iperf.iperf_stats#filter) of the runs' C(total_bits_per_second) (C(key) says so) - C(count),
              C(skipped), C(sum), C(mean), C(median), C(min), C(max), C(stdev), C(cv), C(ci95), C(ci).
          type: dict
        knee:
          description: The knee of the test's sweep (same for every streams value of it); C(null) outside sweeps.
          type: int
    sweeps:
      description: One item per test, direction and swap whose streams were a list.
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
          description: C({streams, mean, count}) per stream count, ascending.
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

from ansible_collections.esxilab.iperf.plugins.plugin_utils._paired import PairedTestError, summarize_results

_NAME = "esxilab.iperf.paired_test_summary"


def paired_test_summary(results: Any, tolerance: float = 0.05, confidence: float = 0.95) -> dict[str, Any]:
    """Summarize paired test runs (see the DOCUMENTATION above)."""
    try:
        summary: dict[str, Any] = summarize_results(
            list(results) if isinstance(results, tuple) else results,
            tolerance=tolerance,
            confidence=confidence,
        )
    except PairedTestError as exc:
        raise AnsibleFilterError(f"{_NAME}: {exc}") from exc
    return summary


class FilterModule:
    """The paired_test_summary filter."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"paired_test_summary": paired_test_summary}
