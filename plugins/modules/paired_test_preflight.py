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
  - Every variable of the role is checked against its option in the role's C(meta/argument_specs.yml) (in
    O(role_path)) as Ansible's own check of the role does on every host - type, choices, elements - once for the play; a
    mapping or a list given for a string option is a problem too. A variable a check of the tests already named is not
    named again. So a play may import the role with C(rolespec_validate=false) and lose no check.
  - A variable that starts with C(paired_test_) or C(report_) and is no option of the role is a problem (a typo such as
    C(report_max_drop_percnt) would otherwise switch the gate off silently); with O(unknown_variables=warn) it is a
    warning.
  - Each host of the play's own C(paired_test_state_dir) (the play's value where the host has none),
    C(paired_test_link_speed_mbps) (a positive number of Mbit/s, where set; the plan returned carries the given ones in
    C(given_link_speeds)) and test address (the variable O(address_var)) are read from its variables by the action,
    once per host.
  - Returns the plan of runs (as the filter P(esxilab.iperf.paired_test_plan#filter) does). Reads files on the
    controller and connects to a PostgreSQL history to read its schema version; writes nothing.
  - With O(probe=true), once every check passed - and only then - the one probe of the hosts of the tests, all at once
    from the controller (whatever their number, one task) - each host's M(esxilab.iperf.iperf_run)
    O(esxilab.iperf.iperf_run#module:mode=probe) with the iperf families its runs use (it fails on a host that cannot
    run them, every host's problem at once) and, in the probe's session (its
    O(esxilab.iperf.iperf_run#module:reading)), the link speed of its test addresses as M(esxilab.iperf.iperf_facts)
    O(esxilab.iperf.iperf_facts#module:link_speed_of) reads it (for the runs'
    "% of line rate"; not read where the line rate is given). Each host's own C(paired_test_binary) and
    C(esxi_network_link_speeds) (what C(esxi_network) published; it wins over the speed read) are read from its
    variables. The plan returned then carries the line rate of every run
    (RV(esxilab.iperf.paired_test_line_rates#filter:_value)), and RV(probes), RV(link_speeds) and RV(esxi_hosts) are
    what each run's task (M(esxilab.iperf.paired_test_host)) reads instead of probing again.
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
        read from it and from the role C(report) beside it (as M(esxilab.iperf.role_vars_check) does), and its variables
        are checked against the options of the entry point C(main) of its C(meta/argument_specs.yml).
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
  probe:
    description:
      - Probe the hosts of the tests once every check passed (see above); V(false) - no host is contacted.
    type: bool
    default: false
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
      - Runs on the controller; no host is contacted unless O(probe=true) and every check passed. Linux and ESXi hosts
        over the plain shell, as M(esxilab.iperf.iperf_run).
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
    probe: true  # then each host of the tests for iperf3 and its link speed
    report:
      report_history: sqlite:///reports/history.sqlite
      report_baseline: previous
  run_once: true
  register: preflight
"""

RETURN = r"""
plan:
  description:
    - The plan of runs - what the filter P(esxilab.iperf.paired_test_plan#filter) returns; with O(probe=true), with
      C(line_rate_bps) and C(line_rate_source) in the labels of every run and pair
      (RV(esxilab.iperf.paired_test_line_rates#filter:_value)).
  returned: success
  type: dict
probes:
  description: O(probe=true) - per host of the tests, what M(esxilab.iperf.iperf_run)
    O(esxilab.iperf.iperf_run#module:mode=probe) found (C(null) where it failed).
  returned: O(probe=true) and every check passed
  type: dict
link_speeds:
  description: O(probe=true) - per host of the tests, the link speeds of its test addresses (the fact
    C(iperf_link_speeds) of M(esxilab.iperf.iperf_facts)); C({}) where none was read.
  returned: O(probe=true) and every check passed
  type: dict
esxi_hosts:
  description: O(probe=true) - the hosts of the tests the probe found to be ESXi.
  returned: O(probe=true) and every check passed
  type: list
  elements: str
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
    __paired_test_planned:
      description: What the progress callbacks read of the plan's runs (C(paired.progress.PLAN_KEYS) - C(run),
        C(duration), C(omit), C(start_delay), C(barrier), C(start_delay_auto), C(client_hosts), C(external_wait),
        C(latency_idle)); the whole plan is RV(plan).
      type: dict
msg:
  description: Every problem found, one line each after the first (the play fails when there is one), or what was
    checked.
  returned: always
  type: str
"""
