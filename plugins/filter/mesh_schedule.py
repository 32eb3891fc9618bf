# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter ``esxilab.iperf.mesh_schedule``: hosts -> rounds of disjoint pairs, as paired_test tests."""

from __future__ import annotations

DOCUMENTATION = r"""
name: mesh_schedule
short_description: Rounds of host pairs in which no host takes part in two tests at once
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Turns a list of hosts into rounds of disjoint pairs - no host is in two pairs of a round - so that many hosts can
    be measured without two tests sharing a host at the same time.
  - Each round is returned as a test of the role C(esxilab.iperf.paired_test) - C(name), C(pairs) (C(server),
    C(client)) and C(labels) - so the result feeds C(paired_test_tests) as it is. The role runs the tests one after
    the other and the pairs of a test at the same time, so a round's pairs run concurrently and rounds run in turn.
  - 'The pairs carry no addresses; the role takes them from the host variable named by C(paired_test_address_var).
    Settings such as the duration come from the role variables (C(paired_test_duration)...), or add them to every
    round with P(ansible.builtin.combine#filter), for example C(map(''combine'', {''duration'': 30})).'
  - V(mesh) - every unordered pair of hosts once, by the circle method (round robin). With an even number N of hosts,
    N-1 rounds of N/2 pairs; with an odd N, N rounds of (N-1)/2 pairs and one host idle in each. Every host is server
    and client equally often (odd N) or within one (even N). For the other direction of each pair use the role's
    C(direction=both) or C(swap_roles=true), or O(directed=true).
  - V(ring) - one round in which each host sends to the next (the last to the first), as the vSAN network
    performance test does; each host is client once and server once.
  - V(halves) - one round, the first half of the hosts as servers and the second half as clients, paired in order
    (with 4 hosts h1 serves h3 and h2 serves h4). Needs an even number of hosts.
  - A schedule that cannot be made (fewer than 2 hosts, a host listed twice, an odd number for V(halves), an unknown
    topology) is an error that says why.
options:
  _input:
    description:
      - The inventory names of the hosts, in the order that decides the pairs (for example C(groups['mesh'])).
    type: list
    elements: str
    required: true
  topology:
    description: How the hosts are paired - see above.
    type: str
    choices: [mesh, ring, halves]
    default: mesh
  name:
    description:
      - Name of the tests. With one round it is the test's name; with several, C(<name>-round-<n>).
    type: str
    default: mesh
  directed:
    description:
      - V(mesh) only - also the mirrored rounds (servers and clients exchanged), so that every ordered pair is measured
        once; twice the rounds.
    type: bool
    default: false
  max_pairs:
    description:
      - At most this many pairs per round. Use it to limit the concurrency, for example to what a shared uplink
        carries. Unset - no limit.
      - The pairs, in schedule order, are packed first-fit into rounds of at most this many disjoint pairs, so free
        places are filled with pairs of later rounds (6 hosts, 2 pairs at a time - 8 rounds for the 15 pairs).
    type: int
  labels:
    description:
      - Labels added to every round, next to C(topology), C(round) and C(rounds), which are always set.
    type: dict
  host_labels:
    description:
      - 'Labels per host - a dictionary of host name to a dictionary of labels, for example the guests'' host
        variable C(esxilab_guest_labels) (C({vm1: {os: centos}, vm3: {os: ubuntu}})).'
      - Each pair takes the labels of its B(client) host as its pair labels (C(pairs[].labels) of the role
        C(esxilab.iperf.paired_test), merged over the round's labels) - the client is the host that sends (unless
        reversed) and prints the result. A pair keeps them when the roles are swapped. A host without labels gives
        its pairs none.
      - With C(report_compare_by) naming such a label, the report sums each value's pairs of a run apart, beside the
        whole run - one concurrent run gives a row per value (see the role C(esxilab.iperf.report)).
    type: dict
seealso:
  - plugin: esxilab.iperf.paired_test_plan
    plugin_type: filter
    description: Expands the tests into the runs the role C(esxilab.iperf.paired_test) makes.
notes:
  - C(docs/mesh.md) of the collection walks through a mesh of many hosts with C(playbooks/mesh.yml).
"""

EXAMPLES = r"""
---
- name: Measure every pair of the mesh group, each host in one test at a time
  hosts: mesh
  gather_facts: false
  roles:
    - role: esxilab.iperf.paired_test
      vars:
        paired_test_tests: "{{ groups['mesh'] | esxilab.iperf.mesh_schedule(name='mesh') }}"
        paired_test_direction: both

- name: Preview a schedule (server <- client)
  ansible.builtin.debug:
    msg: >-
      {{ item.name }}: {{ item.pairs | map(attribute='server') | zip(item.pairs | map(attribute='client'))
         | map('join', ' <- ') }}
  loop: "{{ ['h1', 'h2', 'h3', 'h4'] | esxilab.iperf.mesh_schedule }}"
  # mesh-round-1: ['h1 <- h4', 'h2 <- h3']
  # mesh-round-2: ['h3 <- h1', 'h4 <- h2']
  # mesh-round-3: ['h1 <- h2', 'h3 <- h4']

- name: Half of the guests serve the other half, each pair labelled with its client guest's OS
  ansible.builtin.set_fact:
    vswitch_tests: >-
      {{ ['vm1', 'vm2', 'vm3', 'vm4'] | esxilab.iperf.mesh_schedule(topology='halves', name='vswitch',
         host_labels={'vm3': {'os': 'centos'}, 'vm4': {'os': 'ubuntu'}}) }}
  # [{name: vswitch, pairs: [{server: vm1, client: vm3, labels: {os: centos}},
  #                          {server: vm2, client: vm4, labels: {os: ubuntu}}], labels: {...}}]

- name: Half of the guests serve the other half, two pairs at a time
  ansible.builtin.set_fact:
    vswitch_tests: >-
      {{ groups['guests'] | esxilab.iperf.mesh_schedule(topology='halves', name='vswitch', max_pairs=2)
         | map('combine', {'duration': 60, 'repeat': 4}) }}
"""

RETURN = r"""
_value:
  description: One test of the role C(esxilab.iperf.paired_test) per round, in the order to run them.
  type: list
  elements: dict
  contains:
    name:
      description: O(name), or C(<name>-round-<n>) when there are several rounds.
      type: str
      sample: mesh-round-1
    pairs:
      description: The pairs of the round; no host is in two of them (V(ring) - each host once as each role).
      type: list
      elements: dict
      contains:
        server:
          description: Inventory name of the host that runs the iperf server.
          type: str
        client:
          description: Inventory name of the host that runs the iperf client (the sender, unless reversed).
          type: str
        labels:
          description: The client host's labels from O(host_labels); left out when it has none.
          type: dict
      sample: [{server: h1, client: h4, labels: {os: centos}}, {server: h2, client: h3, labels: {os: ubuntu}}]
    labels:
      description: O(labels) with C(topology), C(round) (1-based) and C(rounds) (how many).
      type: dict
      sample: {topology: mesh, round: 1, rounds: 3}
"""

# Ansible's layout puts DOCUMENTATION, EXAMPLES and RETURN above the imports.
# ruff: noqa: E402

from collections.abc import Callable, Mapping
from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.mesh import MeshError, schedule

_NAME = "esxilab.iperf.mesh_schedule"


def mesh_schedule(
    hosts: Any,
    topology: str = "mesh",
    name: str = "mesh",
    directed: bool = False,
    max_pairs: int | None = None,
    labels: Mapping[str, Any] | None = None,
    host_labels: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Rounds of disjoint pairs as paired_test tests (see the DOCUMENTATION above)."""
    try:
        return schedule(
            hosts,
            topology=topology,
            name=name,
            directed=directed,
            max_pairs=max_pairs,
            labels=labels,
            host_labels=host_labels,
        )
    except MeshError as exc:
        raise AnsibleFilterError(f"{_NAME}: {exc}") from exc


class FilterModule:
    """The mesh_schedule filter."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"mesh_schedule": mesh_schedule}
