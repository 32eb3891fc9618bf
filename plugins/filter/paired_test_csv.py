# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter ``esxilab.iperf.paired_test_csv``: run records or summaries -> CSV text."""

from __future__ import annotations

DOCUMENTATION = r"""
name: paired_test_csv
short_description: Paired iperf runs or their summary as CSV text
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Used by the role C(esxilab.iperf.paired_test) to write its CSV reports.
  - 'O(table=pairs): one row per pair of every run - C(run), C(test), C(direction), C(swapped), C(streams),
    C(repetition), C(pair), C(server), C(client), C(address), C(port), C(sender), C(receiver), C(started_at),
    C(bits_per_second) (the pair''s headline), C(bytes) and C(seconds) (of the totals the headline comes from),
    C(retransmits) (sender), C(complete), C(error), C(total_bits_per_second) (of the run, repeated on each of its
    rows).'
  - 'O(table=summary): one row per item of C(paired_test_summary) - C(test), C(direction), C(swapped), C(streams),
    C(runs), C(failed_runs), C(count), C(mean), C(median), C(min), C(max), C(stdev), C(cv), C(ci95_low),
    C(ci95_high), C(knee).'
  - A header row comes first. Unknown figures are empty cells; rates are bits per second written with full
    precision; booleans are C(true)/C(false).
  - 'A cell that starts with C(=), C(+), C(-), C(@), a tab or a carriage return (for example a test name) gets a
    leading C('') so a spreadsheet shows it as text instead of running it as a formula (OWASP "CSV Injection");
    plain numbers such as C(-1.5) are written as they are.'
options:
  _input:
    description: The run records (C(paired_test_results)) for O(table=pairs), the summary items for O(table=summary).
    type: list
    elements: dict
    required: true
  table:
    description: Which table to write.
    type: str
    choices: [pairs, summary]
    default: pairs
seealso:
  - plugin: esxilab.iperf.paired_test_summary
    plugin_type: filter
    description: The summary items.
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
    content: "{{ paired_test_summary | esxilab.iperf.paired_test_csv(table='summary') }}"
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
    run,test,direction,swapped,streams,repetition,pair,server,client,address,port,...
    1,vswitch,forward,false,1,1,1,h1,h2,198.18.0.11,5201,...
"""

# Ansible's layout puts DOCUMENTATION, EXAMPLES and RETURN above the imports.
# ruff: noqa: E402

from collections.abc import Callable
from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.plugin_utils._paired import PairedTestError, to_csv

_NAME = "esxilab.iperf.paired_test_csv"


def paired_test_csv(data: Any, table: str = "pairs") -> str:
    """Write run records or summary items as CSV (see the DOCUMENTATION above)."""
    try:
        text: str = to_csv(list(data) if isinstance(data, tuple) else data, table=table)
    except (PairedTestError, KeyError) as exc:
        raise AnsibleFilterError(f"{_NAME}: {exc}") from exc
    return text


class FilterModule:
    """The paired_test_csv filter."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"paired_test_csv": paired_test_csv}
