# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation of ``esxilab.iperf.report_check``; the work is done by plugins/action/report_check.py."""

from __future__ import annotations

DOCUMENTATION = r"""
module: report_check
short_description: Check every setting of a report before it is written, and fail with every problem at once
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - The first check of the role C(esxilab.iperf.report) (the role C(esxilab.iperf.paired_test) makes the same check in
    its preflight, M(esxilab.iperf.paired_test_preflight), before the benchmark).
  - 'Checks that there are runs to report, the report name (it starts the name of the report''s directory), the knee''s
    tolerance, the line rate, the history (C(sqlite:///PATH) that exists or can be created, a PostgreSQL URL that
    answers and whose schema this collection can read, or none), the baseline (V(previous) with a history, or a
    C(results.json) that holds runs) and the gate''s tolerances.'
  - Every problem is listed at once, one line each, naming the option and the fix. Nothing is written.
  - A password in a history URL never shows in a message (it is masked).
options:
  runs:
    description: How many runs are to be reported (C(report_runs | length)); V(0) is a problem.
    type: int
    required: true
  name:
    description: C(report_name) - letters, digits and C(._+-), starting with a letter or digit.
    type: raw
    required: true
  knee_tolerance:
    description: C(report_knee_tolerance) - a fraction in [0, 1).
    type: raw
    required: true
  settings:
    description:
      - The other settings by variable name - C(report_history), C(report_history_password), C(report_baseline),
        C(report_line_rate_bps) and the gate's C(report_max_drop_percent), C(report_min_line_rate_percent),
        C(report_max_retransmits), C(report_max_loss_percent), C(report_max_latency_increase_percent),
        C(report_max_loaded_rtt_ms) (each a number of at least 0) and C(report_latency_percentile) (50, 90 or 99). A
        missing one counts as unset.
    type: dict
    default: {}
extends_documentation_fragment:
  - esxilab.iperf.attributes
  - esxilab.iperf.attributes.action
  - esxilab.iperf.attributes.info_module
attributes:
  platform:
    support: full
    platforms: posix
    details:
      - Runs on the controller only; the host is not contacted. Relative paths are relative to the playbook.
seealso:
  - module: esxilab.iperf.paired_test_preflight
  - module: esxilab.iperf.report_write
  - module: esxilab.iperf.report_gate
"""

EXAMPLES = r"""
---
- name: Check every setting of the report
  esxilab.iperf.report_check:
    runs: "{{ report_runs | length }}"
    name: "{{ report_name }}"
    knee_tolerance: "{{ report_knee_tolerance }}"
    settings:
      report_history: "{{ report_history }}"
      report_baseline: "{{ report_baseline }}"
      report_max_drop_percent: "{{ report_max_drop_percent }}"
  run_once: true
"""

RETURN = r"""
problems:
  description: Every problem found, one line each, naming the option and the fix; empty when every setting is usable.
  returned: always
  type: list
  elements: str
  sample:
    - report_knee_tolerance=1.5 is not a fraction in [0, 1) ...
msg:
  description: What was found.
  returned: always
  type: str
  sample: every setting of the report is usable
"""
