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
  - Used by the role C(esxilab.iperf.paired_test), three times per run on the hosts of the run, so that a run is three
    tasks (start, clients, stop - which also records the run). Each part does on this host what the run asks of it, by
    the same actions a hand-written play would use, in one task - M(esxilab.iperf.iperf_run) for servers and clients and
    M(esxilab.iperf.iperf_facts) for the NIC counters.
  - O(part=probe) - the host's one probe before the runs (M(esxilab.iperf.iperf_run)
    O(esxilab.iperf.iperf_run#module:mode=probe), returned as it returns it), then the link speed of its test
    addresses (M(esxilab.iperf.iperf_facts), the fact C(iperf_link_speeds)), in one task.
  - O(part=start) - the NIC counters before the run (when the run reads them), then the servers of this host's pairs;
    a server that fails to start fails the task, and the servers started before it are stopped by O(part=stop).
    Prints the command of every server outside the inventory this host's clients will connect to.
  - O(part=clients) - this host's client, at the run's common start time when the run has a barrier, then, for this
    host's pairs with clients outside the inventory (C(external)), prints what to run there and waits for them
    (M(esxilab.iperf.iperf_run) O(esxilab.iperf.iperf_run#module:mode=collect)). The common start time is when the
    last host of the run was ready (the start pieces in O(spool)) plus the start delay
    (P(esxilab.iperf.paired_test_start_delay#filter), learnt from the runs so far and O(probe_dispatch)); without
    O(spool), O(start_at).
  - With O(spool), each part writes what it did there (its piece) for the run's record, and first reads the state of
    the series - a part of a run the series does not make (it stopped after a failed run, or the run's C(repeat)
    point is done) does nothing and is skipped.
  - O(part=stop) - stops this host's servers (also after a failure, the role runs it in C(always)), then the NIC
    counters after the run (when the run reads them), and hands the result to the run's recorder through O(spool).
  - O(part=stop) with O(record=true) (the role's keeper, one host of the tests, in every run) - also waits up to 120 s
    for the stop pieces of the run's other stop hosts, builds the record of the run
    (P(esxilab.iperf.paired_test_record#filter)) from the run's pieces (and the rescue's C(__paired_test_failure) of
    a host that wrote none), writes the state of the series, removes the run's pieces, and returns the records so far
    as this host's facts. A stop host whose result did not come is recorded as such - its
    servers are not known to be stopped.
  - Each result of a server start, client, collect or stop is returned as the item of a loop would be (C(item) is the
    pair), so the record of the run (P(esxilab.iperf.paired_test_record#filter)) reads them as it reads loop results.
options:
  part:
    description: Which part of the run (V(probe) - the host's one probe, before the runs).
    type: str
    required: true
    choices: [probe, start, clients, stop]
  run:
    description:
      - The run, an item of RV(esxilab.iperf.paired_test_plan#filter:_value.runs). Required but for O(part=probe).
    type: dict
  state_dir:
    description: O(esxilab.iperf.iperf_run#module:state_dir) of this host. Required but for O(part=probe).
    type: str
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
    description: O(esxilab.iperf.iperf_run#module:binary); unset - the probe's choice.
    type: str
  probe:
    description:
      - What O(esxilab.iperf.iperf_run#module:mode=probe) returned on this host (one session per start or client).
    type: dict
  start_at:
    description:
      - O(part=clients) without O(spool) - the common start time of the clients (epoch seconds) when the run has a
        barrier.
    type: float
  probe_dispatch:
    description:
      - O(part=clients) - seconds Ansible took to hand the preflight's probe to every host of the tests; the first
        run with a number of clients learns its start delay from it (P(esxilab.iperf.paired_test_start_delay#filter)
        O(esxilab.iperf.paired_test_start_delay#filter:probe_dispatch)).
    type: float
  spool:
    description:
      - The directory on the controller where the pieces of the run and the state of the series are kept (what
        M(esxilab.iperf.paired_test_preflight) returned as C(spool)). Unset - this host's part goes nowhere (no record
        is made from it, no run is skipped).
    type: str
  record:
    description: O(part=stop) - this host records the run (see above). Needs O(spool).
    type: bool
    default: false
  continue_on_error:
    description:
      - O(part=stop) with O(record=true) - a failed run does not stop the series (the role's
        C(paired_test_continue_on_error)).
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
      - O(part=probe) reads only and runs in check mode. The other parts start and stop processes - in check mode they
        do nothing and are skipped (the role does not run its series in check mode).
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
- name: Start this host's servers of the run
  esxilab.iperf.paired_test_host:
    part: start
    run: "{{ run }}"
    state_dir: /tmp
  register: started
"""

RETURN = r"""
run:
  description: The run's number.
  returned: part is not probe
  type: int
probe:
  description: O(part=probe) - what M(esxilab.iperf.iperf_run) O(esxilab.iperf.iperf_run#module:mode=probe) found.
  returned: part is probe
  type: dict
ready_at:
  description:
    - O(part=start) - when this host's part was done (epoch seconds on the controller); the barrier is set from it.
  returned: part is start
  type: float
servers:
  description:
    - O(part=start) - C(results), one M(esxilab.iperf.iperf_run) server start per pair of this host, C(item) the pair.
  returned: part is start
  type: dict
barrier:
  description:
    - O(part=clients) - the run's barrier, C({run, start_at, start_delay}) (see
      P(esxilab.iperf.paired_test_record#filter)); V(null) for a run without one.
  returned: part is clients
  type: dict
skip_reason:
  description: Why the part did nothing - the series stopped after a failed run, or the run's point is done.
  returned: skipped
  type: str
clients:
  description: O(part=clients) - C(results), this host's client run, C(item) the pair.
  returned: part is clients
  type: dict
collects:
  description: O(part=clients) - C(results), one wait for the external clients per external pair of this host.
  returned: part is clients
  type: dict
stops:
  description: O(part=stop) - C(results), one server stop per pair of this host.
  returned: part is stop
  type: dict
nic_before:
  description: O(part=start) - the M(esxilab.iperf.iperf_facts) result of the NIC read before the run, when it was read.
  returned: part is start
  type: dict
cpu_before:
  description:
    - O(part=start) - the host's CPU reading before the run
      (RV(esxilab.iperf.iperf_facts#module:ansible_facts.iperf_cpu_times)), or C({error}) when the read failed;
      C(null) when the run reads no CPU on this host.
  returned: part is start
  type: dict
ansible_facts:
  description:
    - O(part=stop) with O(record=true) - the records of the series so far and whether it stops.
    - O(part=probe) with O(link_speed_of) - C(iperf_link_speeds), as M(esxilab.iperf.iperf_facts) sets it.
  returned: part is stop and record is true, or part is probe
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
ok:
  description: O(part=stop) with O(record=true) - whether every pair of the run has a figure.
  returned: part is stop and record is true
  type: bool
nic_after:
  description: O(part=stop) - the M(esxilab.iperf.iperf_facts) result of the NIC read after the run, when it was read.
  returned: part is stop
  type: dict
cpu_after:
  description:
    - O(part=stop) - the host's CPU reading after the run's stop, as RV(cpu_before).
  returned: part is stop
  type: dict
"""
