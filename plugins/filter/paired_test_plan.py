# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter ``esxilab.iperf.paired_test_plan``: paired tests -> the ordered list of runs."""

from __future__ import annotations

DOCUMENTATION = r"""
name: paired_test_plan
short_description: Expand paired iperf tests into the ordered list of runs
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Used by the role C(esxilab.iperf.paired_test); usable alone to preview what a test list will run.
  - 'Expands every test into runs in this order: streams values, then directions (V(both) gives V(forward) then
    V(reverse)), then unswapped/swapped roles, then repetitions.'
  - Each pair gets its own port, the test's C(port_base) plus the pair's index (0 for the first pair), unless the
    pair sets C(port).
  - In swapped runs the server runs on the pair's client host and listens on the pair's C(client_address).
  - Input of the wrong shape (unknown keys, wrong types, duplicate test names, a C(bandwidth), C(window) or
    C(length) iperf cannot read such as V(10X)) is an error. Everything that depends on the inventory is listed in
    RV(_value.problems) instead, for the role's preflight asserts.
  - A plan of more than O(max_runs) runs is an error, raised before any run is made, that gives the number of runs
    per test and in all.
options:
  _input:
    description:
      - The tests, as in the role variable C(paired_test_tests) - a list of dictionaries with C(name), C(pairs)
        (C(server), C(client), C(address), C(client_address), C(port), C(external) instead of C(client), or
        C(external.server=true) instead of C(server)) and
        optional per-test settings.
    type: list
    elements: dict
    required: true
  defaults:
    description:
      - Values of the settings a test does not set (keys without the C(paired_test_) prefix, for example
        C(duration)). Settings missing here use the role's defaults.
    type: dict
    default: {}
  addresses:
    description:
      - Host name to test address, used for a pair without C(address) (the server's) or C(client_address) (the
        client's).
    type: dict
    default: {}
  address_var:
    description:
      - Name of the host variable O(addresses) was read from; only used in messages.
    type: str
  inventory_hosts:
    description:
      - Every inventory host name (C(groups['all'])); hosts of the tests outside it are listed in
        RV(_value.problems.unknown_hosts). Not checked when unset.
    type: list
    elements: str
  play_hosts:
    description:
      - The hosts of the play's current batch (C(ansible_play_batch)); hosts of the tests outside it are listed in
        RV(_value.problems.hosts_not_in_play). Not checked when unset.
    type: list
    elements: str
  max_runs:
    description:
      - The most runs the tests may make in all (streams values x directions x role orders x repeat, summed over the
        tests). More is an error, so a typo such as C(repeat=100000) fails at once instead of keeping Ansible busy
        for minutes.
    type: int
    default: 1000
seealso:
  - plugin: esxilab.iperf.paired_test_record
    plugin_type: filter
    description: Turn what the hosts registered during one run into its record.
"""

EXAMPLES = r"""
---
- name: Preview the runs of a test list
  ansible.builtin.debug:
    msg: >-
      {{ plan.runs | map(attribute='test') | zip(plan.runs | map(attribute='streams'),
         plan.runs | map(attribute='direction')) | list }}
  vars:
    plan: "{{ paired_test_tests | esxilab.iperf.paired_test_plan(defaults={'duration': 30}) }}"

- name: Fail early when a host of the tests is not in the play
  ansible.builtin.assert:
    that: plan.problems.hosts_not_in_play | length == 0
    fail_msg: "{{ plan.problems.hosts_not_in_play | join('; ') }}"
  vars:
    plan: "{{ paired_test_tests | esxilab.iperf.paired_test_plan(play_hosts=ansible_play_batch) }}"
"""

RETURN = r"""
_value:
  description: The plan.
  type: dict
  contains:
    tests:
      description: The tests with every setting resolved and every pair's address and port filled in.
      type: list
      elements: dict
    runs:
      description:
        - One item per run, in execution order, with C(run) (1-based number), C(test), C(streams), C(sweep) (the
          test's streams were a list), C(direction) (V(forward) - the client sends; V(reverse) - the server sends),
          C(reverse), C(swapped), C(repetition), the iperf settings (C(duration), C(tool), C(protocol), C(bandwidth),
          ...), C(server_timeout), C(barrier) (whether the clients wait for a common start time; false for one pair),
          C(start_delay), C(server_hosts), C(client_hosts) and C(pairs).
        - C(point) names the run's point (test, direction, streams value, role order); C(stability) is the test's
          C(repeat) dictionary (C({min, max, until_cv, ci_percent, max_failures})) when it has one (with a run
          layout and C(max_failures) - the point's own count as C(min) and C(max)),
          else C(null); C(repeat) is the point's planned run count;
          C(order) and C(shuffle_seed) say how the test's runs were ordered (a V(shuffled) test without a seed gets
          a random one here); C(combine_swapped) whether the report combines swapped and unswapped runs.
        - With a C(repeat) dictionary the plan holds every point's C(max) runs; the role skips the runs of a point
          once its C(stability) is C(done) (see P(esxilab.iperf.paired_test_record#filter)).
        - C(iperf_server) and C(iperf_client) are the M(esxilab.iperf.iperf_run) arguments of the run's servers and
          clients that come from the test's settings, keyed by option name (unset settings left out); the role hands
          them to its iperf_run tasks as they are.
        - Each pair has C(run), C(pair) (1-based index), C(server) and C(client) (the hosts in this run, exchanged
          when swapped), C(address) (what the server listens on and the client connects to), C(port), C(bind) and
          C(client_bind) (the C(-B) addresses, null when not bound), C(sender), C(receiver) and C(labels) (the test's
          labels, the pair's own C(labels) over them, and the run's identity). The run's C(labels) are the labels every
          pair of the run has with the same value.
        - 'External clients (a pair''s C(external)): the pair''s C(client) is null, its C(sender) V(external), its
          C(external) the pair''s C({count, deadline, from}) plus C(command) (the client command line the person is
          asked to run) and C(one_off) true for one iperf3 client; the run has C(external) true (false otherwise),
          C(external_wait) (the longest deadline; null otherwise), no barrier, and a C(server_timeout) beyond the
          wait. See C(docs/external-peer.md).'
        - 'A server outside the inventory (a pair''s C(external.server=true)): the pair''s C(server) and C(bind) are
          null, its C(external_server) C({command}) (the server command line to run there; null for other pairs),
          its C(sender) or C(receiver) V(external <address>); the run''s C(external_servers) is true when it has such
          a pair, and its C(server_hosts) leave them out.'
      type: list
      elements: dict
    run_count:
      description: Number of runs.
      type: int
    hosts:
      description: Every host of the tests, sorted.
      type: list
      elements: str
    tools_by_host:
      description: For each host, the iperf families (C(iperf3), C(iperf2)) its runs use.
      type: dict
    problems:
      description:
        - Lists of messages, each naming the test, the pair, the cause and the fix. Every list is empty when the
          plan can run.
        - C(unknown_hosts), C(hosts_not_in_play), C(missing_addresses), C(duplicate_endpoints) (two pairs of a test
          on the same address and port, or on the same host and port), C(address_conflicts) (one address given to
          two hosts), C(busy_clients) (a host that would run two clients of one run), C(too_many_clients) (a run whose
          clients part - its client hosts and the servers waiting for external clients - has more hosts than the
          role starts at once, 64).
      type: dict
    problem_count:
      description: Total number of problems.
      type: int
"""

# Ansible's layout puts DOCUMENTATION, EXAMPLES and RETURN above the imports.
# ruff: noqa: E402

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.checks import MAX_RUNS, PairedTestError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan

_NAME = "esxilab.iperf.paired_test_plan"


def paired_test_plan(
    tests: Any,
    defaults: Mapping[str, Any] | None = None,
    addresses: Mapping[str, Any] | None = None,
    address_var: str | None = None,
    inventory_hosts: Sequence[str] | None = None,
    play_hosts: Sequence[str] | None = None,
    max_runs: int = MAX_RUNS,
) -> dict[str, Any]:
    """Expand paired tests into runs (see the DOCUMENTATION above)."""
    try:
        plan: dict[str, Any] = build_plan(
            tests,
            defaults,
            addresses=addresses,
            address_var=address_var,
            inventory_hosts=list(inventory_hosts) if inventory_hosts is not None else None,
            play_hosts=list(play_hosts) if play_hosts is not None else None,
            max_runs=max_runs,
            # the seed of a shuffled test without shuffle_seed: drawn here, recorded in the plan
            random_seed=random.SystemRandom().randrange(2**31),
        )
    except PairedTestError as exc:
        raise AnsibleFilterError(f"{_NAME}: {exc}") from exc
    return plan


class FilterModule:
    """The paired_test_plan filter."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"paired_test_plan": paired_test_plan}
