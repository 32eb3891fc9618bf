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
  - Used by the role C(esxilab.iperf.paired_test) - once per run (an item of a loop), on the controller
    (C(run_once)), so that a run is one task however many hosts it has (the probe of the
    hosts before the runs is done by M(esxilab.iperf.paired_test_preflight)). Each host's part is done by the same
    actions a hand-written play would use - M(esxilab.iperf.iperf_run) and M(esxilab.iperf.iperf_facts) - over that
    host's own connection, as a task delegated to the host would run there (the host''s variables, connection and
    become settings); the hosts of a step work at the same time.
  - The whole run O(run) on every host of it - first every host's start, the NIC counters and the host
    CPU before the run (when the run reads them), then the servers of its pairs (a server that fails to start fails
    the host's part, and its clients are not run); then every host's clients, at the run's common start time when
    the run has a barrier, and, for pairs with clients outside the inventory (C(external)), what to run there and
    the wait for them (M(esxilab.iperf.iperf_run) O(esxilab.iperf.iperf_run#module:mode=collect)); then, always,
    every host's stop - its servers stopped, the NIC counters and the host CPU after the run.
  - The common start time is when the last host of the run was ready plus the start delay
    (P(esxilab.iperf.paired_test_start_delay#filter), learnt from the runs so far; for the first run with as many
    clients, from the run's start - its time per step times the clients, at least one step's latency). A host's NIC
    counters and CPU are read while its servers start and while they stop, over a second session.
  - It then builds the record of the run (P(esxilab.iperf.paired_test_record#filter)), writes it and the state
    of the series to O(spool), and returns the record (and what the callbacks read of it, as a fact). It first reads
    the state of the series - a run the series does not make (it stopped after a failed run, or the run's
    C(repeat) point is done) does nothing and is skipped. Prints the command of every server outside the inventory a
    client will connect to.
  - A host's connection that is lost, or cannot be set up, fails that host's part of the run and the run (recorded as
    such). A failed run fails the task when the series stops after it (not with O(continue_on_error), nor when the
    run's C(repeat) point tolerates the failure) - its message names the run and its errors - and the later runs of
    the loop are skipped.
  - After the series' last run (the run numbered O(run_count)), made or skipped, the CPU of each host of
    O(cpu_hosts) over each run made (the records in O(spool)) from the vSphere API's PerformanceManager
    (C(cpu.usage.average) of the host and of each core, 20 s real-time samples; the samples kept beside the figures),
    into the run's C(cpu) entry of the host, with how much of the samples'
    span the run was (C(coverage)). The endpoint and credentials come from each host's own variables named in
    O(endpoint_options) (C(hostname), C(port), C(username), C(password), C(validate_certs), C(esxi_hostname) - the
    host's name in a vCenter). A host without an endpoint, or whose API fails, keeps no figure and says why (a
    warning); nothing is guessed. Needs pyVmomi on the controller (only then). The records with these entries are
    RV(records).
options:
  run:
    description:
      - The run, an item of RV(esxilab.iperf.paired_test_plan#filter:_value.runs), as the plan made it - its every key
        and the type of each are checked before any host is contacted, and every problem is named.
    type: dict
    required: true
  run_count:
    description:
      - How many runs the plan has (RV(esxilab.iperf.paired_test_plan#filter:_value.run_count)) - the run numbered so is
        the last, after which the CPU of O(cpu_hosts) is read; it is also in the message of a failed run.
    type: int
  host_options:
    description:
      - The options of each host's steps that come from the host's own variables - C(state_dir)
        (O(esxilab.iperf.iperf_run#module:state_dir)) and C(binary) (O(esxilab.iperf.iperf_run#module:binary); unset
        or empty - the probe's choice) - each the name of the variable, templated for each host as a task on that host
        would template it.
    type: dict
    default: {}
  endpoint_options:
    description:
      - The vSphere endpoint of each host of O(cpu_hosts) (see above) - C(hostname), C(port), C(username), C(password),
        C(validate_certs) and C(esxi_hostname), each the name of the variable, templated for each host as
        O(host_options).
    type: dict
    default: {}
  cpu_hosts:
    description:
      - The ESXi hosts whose CPU over the runs is read from the vSphere API after the last run (see above).
    type: list
    elements: str
    default: []
  probes:
    description:
      - What the probe found on each host (C(probes) of M(esxilab.iperf.paired_test_preflight)),
        handed to every start and client so that each needs one session.
    type: dict
    default: {}
  link_speeds:
    description:
      - The link speeds the probe read on each host (C(link_speeds) of
        M(esxilab.iperf.paired_test_preflight)); an ESXi client pings out of the VMkernel adapter of its test address
        (latency under load).
    type: dict
    default: {}
  spool:
    description:
      - The private directory on the controller where the records and the state of the series are kept
        (what M(esxilab.iperf.paired_test_preflight) returned as C(spool)).
    type: str
    required: true
  continue_on_error:
    description:
      - A failed run does not stop the series (the role's C(paired_test_continue_on_error)).
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
      - It starts and stops processes - in check mode it does nothing and is skipped (the role does not run its series
        in check mode).
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
- name: Make each run of a plan, one after the other (the role esxilab.iperf.paired_test does this)
  esxilab.iperf.paired_test_host:
    run: "{{ item }}"
    run_count: "{{ preflight.plan.run_count }}"
    host_options: {state_dir: iperf_state_dir}  # each host's own variable of this name
    probes: "{{ preflight.probes }}"  # the preflight's probe (esxilab.iperf.paired_test_preflight probe=true)
    spool: "{{ preflight.spool }}"
  loop: "{{ preflight.plan.runs }}"
  run_once: true
  vars:
    iperf_state_dir: /tmp
"""

RETURN = r"""
run:
  description: The run's number.
  returned: always
  type: int
skip_reason:
  description: Why the run was not made - the series stopped after a failed run, or the run's point is
    done.
  returned: skipped
  type: str
record:
  description: The record of the run (P(esxilab.iperf.paired_test_record#filter)).
  returned: the run was made
  type: dict
ok:
  description: Whether every pair of the run has a figure.
  returned: the run was made
  type: bool
failed_hosts:
  description: The hosts whose start or clients failed, and why.
  returned: the run was made
  type: dict
records:
  description: The records of the runs made, with the CPU entries of O(cpu_hosts) read from the vSphere API.
  returned: the last run (O(run_count)), with O(cpu_hosts), when a run was made
  type: list
  elements: dict
ansible_facts:
  description:
    - What the callbacks read of the run, and whether the series stops.
  returned: the run was made
  type: dict
  contains:
    __paired_test_recorded:
      description: What the progress callbacks read of this run's record (its C(run), C(test), C(streams),
        C(direction), C(swapped), C(repetition), C(start_delay), C(total_bits_per_second), C(ok), C(errors)), the
        list's one item. The whole record is RV(record); the records of the runs before it are in their own results
        (and in O(spool)).
      type: list
      elements: dict
    __paired_test_halt:
      description: The run failed and the series stops (not with O(continue_on_error), nor when the run's point
        tolerates the failure).
      type: bool
"""
