# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation of ``esxilab.iperf.paired_test_preflight``; the work is in plugins/action/paired_test_preflight.py."""

from __future__ import annotations

DOCUMENTATION = r"""
module: paired_test_preflight
short_description: Check every setting of a paired iperf test and its report at once, before any host is contacted
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - The one preflight of the role C(esxilab.iperf.paired_test), run once per play on the controller. It checks the tests
    (every test, pair, C(repeat) and C(external) key, every setting), the hosts and addresses they name, the role's
    settings, the state directory of every host of the tests, and the report's settings - the history (it opens and its
    schema is one this collection knows), the baseline (the file exists and is a C(results.json) of a report) and the
    gate's tolerances.
  - It reports B(all) problems at once, one line each, each naming the option by its full path (such as
    C(paired_test_tests[0].pairs[1]) or C(report_baseline)) and the fix; an unknown key or variable gets the closest
    valid name (C(did you mean streams?)).
  - A variable that starts with C(paired_test_) or C(report_) and is no option of the role is a problem (a typo such as
    C(report_max_drop_percnt) would otherwise switch the gate off silently); with O(unknown_variables=warn) it is a
    warning.
  - Each host of the play's own C(paired_test_state_dir) (the play's value where the host has none),
    C(paired_test_link_speed_mbps) (a positive number of Mbit/s, where set; the plan returned carries the given ones in
    C(given_link_speeds)) and test address (the variable O(address_var)) are read from its variables by the action,
    once per host.
  - Returns the plan of runs (as the filter P(esxilab.iperf.paired_test_plan#filter) does). Reads files on the
    controller and connects to a PostgreSQL history to read its schema version; writes nothing.
options:
  tests:
    description: The tests, C(paired_test_tests).
    type: raw
    required: true
  defaults:
    description: The per-test settings of the role (C(paired_test_duration) and so on, without the prefix).
    type: dict
    default: {}
  address_var:
    description:
      - The host variable that holds a host's test address (C(paired_test_address_var)); each host of the play's own
        value is read (none where the host has none).
    type: str
  max_runs:
    description: The most runs the tests may make (C(paired_test_max_runs)).
    type: raw
    default: 1000
  knee_tolerance:
    description: C(paired_test_knee_tolerance), a fraction in [0, 1).
    type: raw
    default: 0.05
  report_name:
    description: C(paired_test_report_name), a plain file name, or null.
    type: raw
  report:
    description:
      - The report's settings by variable name (C(report_history), C(report_history_password), C(report_baseline),
        C(report_compare_by) - a label some planned run or pair must have,
        C(report_line_rate_bps) and the gate's C(report_max_drop_percent), C(report_min_line_rate_percent),
        C(report_max_retransmits), C(report_max_loss_percent), C(report_max_latency_increase_percent),
        C(report_max_loaded_rtt_ms), C(report_latency_percentile)). Checked only when O(reporting) is true.
      - The latency checks must be able to compare something - a test with the setting C(latency) whose loaded
        window sends enough probes for the percentile (p99 needs 100), else the preflight says which test and the
        fix.
    type: dict
    default: {}
  reporting:
    description: Whether a report is written (C(paired_test_report_dir) is set).
    type: bool
    default: true
  role_path:
    description:
      - Directory of the role C(esxilab.iperf.paired_test), normally C({{ role_path }}). The valid variable names are
        read from it and from the role C(report) beside it (as M(esxilab.iperf.role_vars_check) does).
    type: path
    required: true
  known:
    description: More valid names (the host variable named by C(paired_test_address_var)).
    type: list
    elements: str
    default: []
  unknown_variables:
    description:
      - What an unknown C(paired_test_*) or C(report_*) variable is - a problem (V(fail)) or a warning (V(warn)).
    type: str
    choices: [fail, warn]
    default: fail
extends_documentation_fragment:
  - esxilab.iperf.attributes
  - esxilab.iperf.attributes.action
attributes:
  check_mode:
    support: full
    details:
      - Only reads; runs unchanged in check mode.
  diff_mode:
    support: none
    details:
      - Nothing changes; there is nothing to diff.
  platform:
    support: full
    platforms: posix
    details:
      - Runs on the controller only; the host is not contacted.
seealso:
  - plugin: esxilab.iperf.paired_test_plan
    plugin_type: filter
    description: The plan alone, from the tests.
  - module: esxilab.iperf.role_vars_check
    description: The unknown-variable check of the other roles.
"""

EXAMPLES = r"""
---
- name: Check the tests, the hosts and the report settings
  esxilab.iperf.paired_test_preflight:
    tests: "{{ paired_test_tests }}"
    address_var: lab_address
    role_path: "{{ role_path }}"
    report:
      report_history: sqlite:///reports/history.sqlite
      report_baseline: previous
  run_once: true
  register: preflight
"""

RETURN = r"""
plan:
  description: The plan of runs - what the filter P(esxilab.iperf.paired_test_plan#filter) returns.
  returned: success
  type: dict
spool:
  description:
    - A new private directory on the controller, inside Ansible's own temporary directory (removed by Ansible when the
      play ends), in which each run's stop results meet (O(esxilab.iperf.paired_test_host#module:spool)).
  returned: success
  type: str
ansible_facts:
  description: The series starts with no run on every host of the play (the facts the progress callbacks read).
  returned: success
  type: dict
  contains:
    __paired_test_recorded:
      description: Empty; each run's task (M(esxilab.iperf.paired_test_host)) sets it to what the callbacks read of its
        record.
      type: list
      elements: dict
    __paired_test_halt:
      description: Whether the series stops (a run failed); false.
      type: bool
finished_at:
  description: When the check ended (epoch seconds on the controller); the role measures from it how long Ansible takes
    to hand the next task to the hosts.
  returned: success
  type: float
msg:
  description: Every problem found, one line each after the first (the play fails when there is one), or what was
    checked.
  returned: always
  type: str
"""
