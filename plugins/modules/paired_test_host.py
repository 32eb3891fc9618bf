# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation of ``esxilab.iperf.paired_test_host``; the work is in plugins/action/paired_test_host.py."""

from __future__ import annotations

DOCUMENTATION = r"""
module: paired_test_host
short_description: One host's part of one run of a paired iperf test
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Used by the role C(esxilab.iperf.paired_test) - once per host of the tests for the probe, then once per run, on one
    host, for the whole run (O(part=run)), so that a run is one task however many hosts it has. Each host's part is
    done by the same actions a hand-written play would use - M(esxilab.iperf.iperf_run) for servers and clients and
    M(esxilab.iperf.iperf_facts) for the NIC counters - over that host's own connection.
  - O(part=probe) - the host's one probe before the runs (M(esxilab.iperf.iperf_run)
    O(esxilab.iperf.iperf_run#module:mode=probe), returned as it returns it), then the link speed of its test
    addresses (M(esxilab.iperf.iperf_facts), the fact C(iperf_link_speeds)), in one task.
  - 'O(part=run) - the whole run O(run), from the controller, on every host of the run (O(hosts)), as a task
    delegated to each would run there (the host''s variables, connection, become): first every host''s start at the
    same time - the NIC counters before the run (when the run reads them), then the servers of its pairs (a server that
    fails to start fails the host''s part, and its clients are not run); then every host''s clients at the same time,
    at the run''s common start time when the run has a barrier, and, for pairs with clients outside the inventory
    (C(external)), what to run there and the wait for them (M(esxilab.iperf.iperf_run)
    O(esxilab.iperf.iperf_run#module:mode=collect)); then, always, every host''s stop - its servers stopped, the NIC
    counters after the run. The common start time is when the last host of the run was ready plus the start delay
    (P(esxilab.iperf.paired_test_start_delay#filter), learnt from the runs so far and O(probe_dispatch)).'
  - O(part=run) then builds the record of the run (P(esxilab.iperf.paired_test_record#filter)), writes it and the state
    of the series to O(spool), and returns the records so far as facts. It first reads the state of the series - a run
    the series does not make (it stopped after a failed run, or the run's C(repeat) point is done) does nothing and is
    skipped. Prints the command of every server outside the inventory a client will connect to.
  - A host's connection that is lost, or cannot be set up, fails that host's part of the run and the run (recorded as
    such), not the task; the series goes on or stops as O(continue_on_error) says.
options:
  part:
    description: Which part (V(probe) - the host's one probe, before the runs; V(run) - a whole run).
    type: str
    required: true
    choices: [probe, run]
  run:
    description:
      - O(part=run) - the run, an item of RV(esxilab.iperf.paired_test_plan#filter:_value.runs).
    type: dict
  host_options:
    description:
      - O(part=run) - the options of each host's steps that come from the host's own variables - C(state_dir)
        (O(esxilab.iperf.iperf_run#module:state_dir)), C(binary) (O(esxilab.iperf.iperf_run#module:binary); unset or
        empty - the probe's choice) and C(probe) (the registered result of the host's O(part=probe) task; its
        C(probe) is handed to every start and client, so each needs one session) - each the name of the variable,
        templated for each host as a task on that host would template it.
    type: dict
    default: {}
  require:
    description:
      - O(part=probe) - the iperf families the host's runs use (O(esxilab.iperf.iperf_run#module:require)).
    type: list
    elements: str
    default: []
  link_speed_of:
    description:
      - O(part=probe) - the host's test addresses whose link speed is read after the probe
        (M(esxilab.iperf.iperf_facts) O(esxilab.iperf.iperf_facts#module:link_speed_of) - the fact
        C(iperf_link_speeds)); empty - none is read.
    type: list
    elements: str
    default: []
  binary:
    description: O(part=probe) - O(esxilab.iperf.iperf_run#module:binary); unset - the probe's choice.
    type: str
  probe_dispatch:
    description:
      - O(part=run) - seconds Ansible took to hand the preflight's probe to every host of the tests; the first
        run with a number of clients learns its start delay from it (P(esxilab.iperf.paired_test_start_delay#filter)
        O(esxilab.iperf.paired_test_start_delay#filter:probe_dispatch)).
    type: float
  spool:
    description:
      - O(part=run) - the private directory on the controller where the records and the state of the series are kept
        (what M(esxilab.iperf.paired_test_preflight) returned as C(spool)).
    type: str
  continue_on_error:
    description:
      - O(part=run) - a failed run does not stop the series (the role's C(paired_test_continue_on_error)).
    type: bool
    default: false
  esxi_hosts:
    description:
      - The hosts whose probe found ESXi; a client whose server is one of them drops the server's sending retransmits
        (O(esxilab.iperf.iperf_run#module:peer_is_esxi)).
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - esxilab.iperf.attributes
  - esxilab.iperf.attributes.action
attributes:
  check_mode:
    support: partial
    details:
      - O(part=probe) reads only and runs in check mode. O(part=run) starts and stops processes - in check mode it
        does nothing and is skipped (the role does not run its series in check mode).
  diff_mode:
    support: none
    details:
      - Processes are started and stopped; there is no file to diff.
  platform:
    support: full
    platforms: posix
    details:
      - Linux and ESXi hosts over the plain shell, as M(esxilab.iperf.iperf_run).
seealso:
  - module: esxilab.iperf.iperf_run
    description: What each server start, client and stop is.
"""

EXAMPLES = r"""
---
- name: Probe this host for iperf3
  esxilab.iperf.paired_test_host:
    part: probe
    require: [iperf3]
  register: probed

- name: Make each run of a plan, one after the other (the role esxilab.iperf.paired_test does this)
  esxilab.iperf.paired_test_host:
    part: run
    run: "{{ item }}"
    host_options: {state_dir: iperf_state_dir, probe: probed}  # each host's own variables of these names
    spool: "{{ preflight.spool }}"
  loop: "{{ plan.runs }}"
  run_once: true
  vars:
    plan: "{{ preflight.plan }}"
    iperf_state_dir: /tmp
"""

RETURN = r"""
run:
  description: O(part=run) - the run's number.
  returned: part is run
  type: int
probe:
  description: O(part=probe) - what M(esxilab.iperf.iperf_run) O(esxilab.iperf.iperf_run#module:mode=probe) found.
  returned: part is probe
  type: dict
skip_reason:
  description: O(part=run) - why the run was not made - the series stopped after a failed run, or the run's point is
    done.
  returned: skipped
  type: str
record:
  description: O(part=run) - the record of the run (P(esxilab.iperf.paired_test_record#filter)).
  returned: part is run and the run was made
  type: dict
ok:
  description: O(part=run) - whether every pair of the run has a figure.
  returned: part is run and the run was made
  type: bool
failed_hosts:
  description: O(part=run) - the hosts whose start or clients failed, and why.
  returned: part is run and the run was made
  type: dict
ansible_facts:
  description:
    - O(part=run) - the records of the series so far and whether it stops.
    - O(part=probe) with O(link_speed_of) - C(iperf_link_speeds), as M(esxilab.iperf.iperf_facts) sets it.
  returned: part is run and the run was made, or part is probe
  type: dict
  contains:
    __paired_test_recorded:
      description: The run records so far, this run's last (P(esxilab.iperf.paired_test_record#filter)).
      type: list
      elements: dict
    __paired_test_halt:
      description: The run failed and the series stops (not with O(continue_on_error), nor when the run's point
        tolerates the failure).
      type: bool
"""
