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
    tasks (start, clients, stop) and one record. Each part does on this host what the run asks of it, by the same
    actions a hand-written play would use, in one task - M(esxilab.iperf.iperf_run) for servers and clients and
    M(esxilab.iperf.iperf_facts) for the NIC counters.
  - O(part=start) - the NIC counters before the run (when the run reads them), then the servers of this host's pairs;
    a server that fails to start fails the task, and the servers started before it are stopped by O(part=stop).
    Prints the command of every server outside the inventory this host's clients will connect to.
  - O(part=clients) - this host's client (at O(start_at) when the run has a barrier), then, for this host's pairs
    with clients outside the inventory (C(external)), prints what to run there and waits for them
    (M(esxilab.iperf.iperf_run) O(esxilab.iperf.iperf_run#module:mode=collect)).
  - O(part=stop) - stops this host's servers (also after a failure, the role runs it in C(always)), then the NIC
    counters after the run (when the run reads them).
  - Each result of a server start, client, collect or stop is returned as the item of a loop would be (C(item) is the
    pair), so the record of the run (P(esxilab.iperf.paired_test_record#filter)) reads them as it reads loop results.
options:
  part:
    description: Which part of the run.
    type: str
    required: true
    choices: [start, clients, stop]
  run:
    description: The run, an item of RV(esxilab.iperf.paired_test_plan#filter:_value.runs).
    type: dict
    required: true
  state_dir:
    description: O(esxilab.iperf.iperf_run#module:state_dir) of this host.
    type: str
    required: true
  binary:
    description: O(esxilab.iperf.iperf_run#module:binary); unset - the probe's choice.
    type: str
  probe:
    description:
      - What O(esxilab.iperf.iperf_run#module:mode=probe) returned on this host (one session per start or client).
    type: dict
  start_at:
    description: The common start time of the clients (epoch seconds) when the run has a barrier (O(part=clients)).
    type: float
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
    support: none
    details:
      - The role does not run its series in check mode; the parts start and stop processes.
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
  returned: always
  type: int
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
nic_after:
  description: O(part=stop) - the M(esxilab.iperf.iperf_facts) result of the NIC read after the run, when it was read.
  returned: part is stop
  type: dict
"""
