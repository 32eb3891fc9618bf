# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter ``esxilab.iperf.iperf_stats``: results or numbers -> summary statistics."""

from __future__ import annotations

DOCUMENTATION = r"""
name: iperf_stats
short_description: Summary statistics over repeated iperf runs
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Summarizes a list of normalized results (from P(esxilab.iperf.iperf_parse#filter) or
    M(esxilab.iperf.iperf_facts)) or a list of plain numbers.
  - 'Gives count, sum, mean, median, min, max, the sample standard deviation (n-1), the coefficient of variation and
    a two-sided Student-t confidence interval of the mean.'
  - A result whose figure is C(null) (the run measured nothing usable, for example a failed run) is skipped and
    counted in RV(_value.skipped); it is never counted as zero.
  - A negative value (of a plain number or of the O(key) field of a result) is refused with an error naming the index
    of the item, since no iperf figure (rate, byte count, time, count, percentage) can be negative.
  - The t quantile is computed exactly for any number of runs; no extra Python library is needed.
options:
  _input:
    description:
      - A list of normalized results, or a list of numbers. C(null) items are skipped.
    type: list
    elements: raw
    required: true
  key:
    description:
      - The field of each result to summarize, as a dotted path.
      - The default is the headline C(bits_per_second). Other examples are C(received.bits_per_second),
        C(sent.retransmits), C(udp.lost_percent), C(udp.jitter_ms), C(cpu.local_percent).
      - Ignored for items that are plain numbers.
    type: str
    default: bits_per_second
  confidence:
    description:
      - Two-sided confidence level of RV(_value.ci), a fraction strictly between 0 and 1.
      - RV(_value.ci95) is always the 95% interval.
    type: float
    default: 0.95
seealso:
  - plugin: esxilab.iperf.iperf_parse
    plugin_type: filter
    description: Turn iperf output into results.
"""

EXAMPLES = r"""
---
- name: Mean throughput and its 95% confidence interval over repeated runs
  ansible.builtin.debug:
    msg: >-
      {{ (summary.mean / 1e9) | round(2) }} Gbit/s
      +/- {{ (summary.ci95.half_width / 1e9) | round(2) }} (n={{ summary.count }}, CV={{ summary.cv | round(3) }})
  vars:
    summary: "{{ runs | esxilab.iperf.iperf_stats }}"

- name: UDP loss over runs, with a 99% interval
  ansible.builtin.set_fact:
    loss: "{{ runs | esxilab.iperf.iperf_stats(key='udp.lost_percent', confidence=0.99) }}"

- name: Plain numbers work too
  ansible.builtin.debug:
    msg: "{{ [9.41e9, 9.38e9, 9.40e9] | esxilab.iperf.iperf_stats }}"
"""

RETURN = r"""
_value:
  description: Summary of the values.
  type: dict
  contains:
    count:
      description: Number of values used.
      type: int
    skipped:
      description: Items skipped because their figure is C(null) (or the field does not exist in them).
      type: int
    key:
      description: The field summarized (O(key)).
      type: str
    sum:
      description: Sum of the values, for example the aggregate rate of parallel pairs; C(null) when there is none.
      type: float
    mean:
      description: Arithmetic mean; C(null) when there is no value.
      type: float
    median:
      description: Median; C(null) when there is no value.
      type: float
    min:
      description: Smallest value; C(null) when there is no value.
      type: float
    max:
      description: Largest value; C(null) when there is no value.
      type: float
    stdev:
      description: Sample standard deviation (n-1); C(null) for fewer than 2 values.
      type: float
    cv:
      description: Coefficient of variation, stdev/mean; C(null) for fewer than 2 values or a mean that is not positive.
      type: float
    ci95:
      description:
        - Two-sided 95% Student-t confidence interval of the mean C({low, high, half_width}).
        - The figures are C(null) for fewer than 2 values.
      type: dict
    ci:
      description: The interval at level O(confidence) C({level, low, high, half_width}).
      type: dict
"""

# Ansible's layout puts DOCUMENTATION, EXAMPLES and RETURN above the imports.
# ruff: noqa: E402

from collections.abc import Callable, Mapping
from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.stats import StatsError, summarize

_NAME = "esxilab.iperf.iperf_stats"


def iperf_stats(data: Any, key: str | None = None, confidence: float = 0.95) -> dict[str, Any]:
    """Summarize a list of results or numbers (see the DOCUMENTATION above)."""
    if isinstance(data, Mapping):
        raise AnsibleFilterError(
            f"{_NAME}: expected a list of results or numbers, got one dictionary; "
            "wrap a single result in a list ([result]) or pass the list of runs"
        )
    if not isinstance(data, list | tuple):
        raise AnsibleFilterError(f"{_NAME}: expected a list of results or numbers, got {type(data).__name__}")
    try:
        summary: dict[str, Any] = summarize(data, key=key, confidence=confidence)
    except StatsError as exc:
        raise AnsibleFilterError(f"{_NAME}: {exc}") from exc
    return summary


class FilterModule:
    """The iperf_stats filter."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"iperf_stats": iperf_stats}
