# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter ``esxilab.iperf.paired_test_record``: one run + what the hosts registered -> run record."""

from __future__ import annotations

DOCUMENTATION = r"""
name: paired_test_record
short_description: Build the record of one paired iperf run from what its hosts registered
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - For a hand-written play. The role C(esxilab.iperf.paired_test) builds each run's record the same way
    (M(esxilab.iperf.paired_test_host)).
  - Matches every pair of the run (an item of RV(esxilab.iperf.paired_test_plan#filter:_value.runs)) with the
    registered results of its server start, its client and its server stop (M(esxilab.iperf.iperf_run) tasks looped
    over the pairs), and with the failure a host's C(rescue) saw.
  - RV(_value.total_bits_per_second) is the sum of the pairs' headline rates (the receiver's figure of each normalized
    result). As soon as one pair failed or has no figure it is C(null) - never a partial sum - and the reason is in
    RV(_value.errors).
  - Registered results of other runs are ignored, so a host that failed before a task keeps no stale figures.
options:
  _input:
    description:
      - One run of the plan (an item of RV(esxilab.iperf.paired_test_plan#filter:_value.runs)), as the plan made it -
        its every key and the type of each are checked first, and every problem is named.
    type: dict
    required: true
  reports:
    description:
      - One item per host of the play, C(null) for a host without a report. Each item is a dictionary with C(host),
        C(servers), C(clients) and C(stops) (the registered results of the looped M(esxilab.iperf.iperf_run) tasks)
        and C(failure) (C({run, task, msg}) from the host's C(rescue), or C(null)).
      - Give either O(reports) or O(host_vars).
    type: list
    elements: raw
  barrier:
    description:
      - The barrier of the run, C({run, start_at, start_delay}) - the common start time given to the clients
        (epoch seconds) and how many seconds ahead of the moment it was set. Ignored when its C(run) is not this
        run's.
    type: dict
  previous:
    description:
      - The records of the runs before this one (C(paired_test_results)). Used with a C(repeat) dictionary, for
        RV(_value.stability) over the point's runs so far.
    type: list
    elements: dict
    default: []
seealso:
  - plugin: esxilab.iperf.paired_test_plan
    plugin_type: filter
    description: The runs.
  - module: esxilab.iperf.report_write
    description: The report of the records (summaries, sweeps, tables, plots).
"""

EXAMPLES = r"""
---
- name: Record the run from every host's report
  ansible.builtin.set_fact:
    paired_test_results: "{{ paired_test_results + [record] }}"
  run_once: true
  vars:
    reports: "{{ ansible_play_hosts_all | map('extract', hostvars) | map(attribute='my_report', default=none) }}"
    record: "{{ run | esxilab.iperf.paired_test_record(reports=reports | list, barrier=barrier) }}"
"""

RETURN = r"""
_value:
  description: The run record.
  type: dict
  contains:
    schema_version:
      description:
        - The version of the record's shape (1). The report reads a record without it (written before it was
          added, or by hand) as version 0 and fills what it lacks; a record of a newer version is refused.
      type: int
    run:
      description: Run number (1-based, in execution order).
      type: int
    test:
      description: Test name.
      type: str
    streams:
      description: Parallel streams of each pair's client.
      type: int
    sweep:
      description: Whether the test sweeps a list of stream counts.
      type: bool
    direction:
      description: V(forward) (clients send) or V(reverse) (servers send).
      type: str
    swapped:
      description: Whether servers and clients were exchanged for this run.
      type: bool
    repetition:
      description: Repetition number (1-based).
      type: int
    tool:
      description: C(iperf3) or C(iperf2).
      type: str
    protocol:
      description: C(tcp) or C(udp).
      type: str
    duration:
      description: Test length in seconds, as asked.
      type: int
    labels:
      description:
        - The run's labels - the test's labels and the pair labels that every pair of the run has with the same value
          (a pair's own labels win over the test's), with C(line_rate_bps) and C(line_rate_source).
      type: dict
    start_at:
      description: The common start time of the clients (epoch seconds); C(null) when the run had one pair.
      type: float
    start_delay:
      description: Seconds between setting RV(_value.start_at) and that time; C(null) without a barrier.
      type: float
    barrier_margin:
      description:
        - Seconds the slowest client had left when it reached the barrier; negative when it came late and started
          at once. C(null) without a barrier.
      type: float
    dispatch_time:
      description:
        - Seconds from setting RV(_value.start_at) to the moment the last client reached the barrier, that is
          RV(_value.start_delay) minus RV(_value.barrier_margin) - how long Ansible took to hand the clients their
          task. The automatic start delay of the role's next runs follows it. C(null) without a barrier.
      type: float
    start_spread:
      description:
        - Seconds between the first and the last pair's RV(_value.pairs[].started_at); C(null) for one pair or when a
          start time is missing.
      type: float
    pairs:
      description: One item per pair.
      type: list
      elements: dict
      contains:
        pair:
          description: Pair index (1-based).
          type: int
        server:
          description: Host that ran the server in this run.
          type: str
        client:
          description: Host that ran the client in this run.
          type: str
        address:
          description: Address the server listened on and the client connected to.
          type: str
        port:
          description: Server port.
          type: int
        sender:
          description: Host that sent the test data (the client when forward, the server when reverse).
          type: str
        receiver:
          description: Host that received the test data.
          type: str
        started_at:
          description:
            - Epoch time at which the client host started iperf, read from its clock by M(esxilab.iperf.iperf_run).
          type: float
        result:
          description: The normalized result of the client (see P(esxilab.iperf.iperf_parse#filter)); C(null) when none.
          type: dict
        ok:
          description: Whether the pair gave a usable figure.
          type: bool
        error:
          description: Why the pair failed (which host, which step, the tool's message); C(null) when ok.
          type: str
        raw:
          description: The client's own output, kept when the pair failed, and always when the server is outside the
            inventory.
          type: str
          returned: when the pair failed (or its server is outside the inventory) and the client printed something
        tool_version:
          description: Version of the iperf binary run.
          type: str
        server_pid:
          description: Process id of the server.
          type: int
        server_stop:
          description:
            - How the server ended, from the stop task in C(always) - V(stopped), V(killed) (needed SIGKILL),
              V(gone) (had exited), V(not running), V(failed), V(unreachable); C(null) when no stop was registered.
          type: str
        late_by:
          description: Seconds between the barrier time and the client's start; C(null) without a barrier.
          type: float
        arrived_at:
          description: Epoch time at which the client host reached the barrier; C(null) without a barrier.
          type: float
        command:
          description: The client command line run (for external clients, the server's).
          type: str
        labels:
          description:
            - The pair's labels - the test's labels, the pair's own C(labels) over them, the run's identity (C(test),
              C(run), C(pair), C(streams), C(direction), C(swapped), C(repetition)) and the line rate; the same
              labels its result carries.
          type: dict
        measured_by:
          description:
            - V(server) for a pair with external clients (its C(external) setting) - the result is the server's own
              output (C(result.side=server)), the headline what the server received. V(client) for a pair whose server
              is outside the inventory (C(external.server=true)) - the client's result, as for other pairs, which
              have no C(measured_by).
          type: str
          returned: for a pair with an end outside the inventory
        external:
          description:
            - For a pair with external clients, one record per client test the server logged, then one failed record
              (no result) per client that did not come - C(index) (1-based), C(peer) (the address the server saw),
              C(group) (the server's test it was part of - iperf2 clients at the same time share one), C(count),
              C(deadline), C(from) (as set), C(command) (the client command line the person was asked to
              run), C(came) (how many came) and C(reason) (why the wait ended -
              V(all_came), V(server_exited), V(deadline)). C(client) is then V(external), C(sender)
              V(external <peer>).
            - For a pair whose server is outside the inventory - C({server, address, port, command}) (C(server) true,
              C(command) the server command line the play asked for). C(server) is then V(external), C(sender) or
              C(receiver) V(external <address>), C(server_pid) and C(server_stop) null (nothing was started).
          type: dict
          returned: for a pair with an end outside the inventory
        latency:
          description:
            - Latency under load (the setting C(latency)) - the client's pings to its server address idle before the
              transfer and during it, as M(esxilab.iperf.iperf_run) returns them in its C(latency) (C(tool),
              C(target), C(interface), C(interval), C(idle) and C(loaded) with C(p50_ms), C(p90_ms), C(p99_ms),
              C(max_ms), C(samples), C(lost), C(raw) and more, C(p50_increase_ms)). See C(docs/latency.md).
          type: dict
          returned: for a pair whose client ran with the setting C(latency)
    total_bits_per_second:
      description:
        - Sum of the pairs' headline rates; C(null) when a pair failed (never a partial sum).
        - C(null) as well when the client tests of an external pair came one after the other (different C(group));
          iperf2 clients at the same time add up.
      type: float
    ok:
      description: Every pair gave a usable figure.
      type: bool
    complete:
      description: RV(_value.ok) and every result is complete.
      type: bool
    failed_pairs:
      description: Number of pairs that failed.
      type: int
    errors:
      description: One message per failed pair.
      type: list
      elements: str
    warnings:
      description: Incomplete results, servers that could not be stopped, the reason the total is null.
      type: list
      elements: str
    point:
      description: The run's point - test, direction, streams value and role order, joined by C(|).
      type: str
    order:
      description: How the test's runs were ordered - V(interleaved), V(sequential) or V(shuffled).
      type: str
    shuffle_seed:
      description: The seed of a V(shuffled) order (C(null) otherwise); the same seed gives the same order.
      type: int
    combine_swapped:
      description: Whether the report adds a summary over the swapped and unswapped runs of the point.
      type: bool
    stability:
      description:
        - With a C(repeat) dictionary, the state of the run's point after this run (C(null) for C(repeat) N).
        - C(runs), C(samples) (usable totals), C(failures), C(mean), C(cv_percent) (coefficient of variation in %
          of the mean), C(ci_percent) (half-width of the 95 % confidence interval in % of the mean), C(stable)
          (C(min) samples, at least 2, within C(until_cv) and C(ci_percent)), C(done) (the point's remaining runs
          are skipped), C(tolerated) (this run failed within C(max_failures)) and C(verdict) - for example
          V(stable after 3 runs (cv 0.41 %\)) or V(unstable after 6 runs (cv 7.90 %\)); C(null) until the point is done.
      type: dict
    nic:
      description:
        - The NIC readings of this run (role variable C(paired_test_nic_counters)); C(null) when it read none.
        - "C(mode) (V(test) or V(run)), C(before) and C(after) - each C(null) (not read in this run) or a dictionary
          host -> address -> the reading of C(esxilab.iperf.iperf_facts)' C(iperf_nic_counters) (interface, driver,
          firmware, counters); host -> C(error) (why) when the read failed."
        - The report (C(esxilab.iperf.report_write)) makes the deltas from them.
      type: dict
    cpu:
      description:
        - The host CPU over this run (role variable C(paired_test_host_cpu), record version 2); C(null) when it read
          none (and in version-1 records).
        - "A dictionary host -> C(kind) (V(linux), or C(null) when not read), C(source) (C(/proc/stat)),
          C(mean_percent) (the host's CPU use from the reading at the run's start to the one after its stop - 100 =
          every CPU busy), C(max_core_percent) and C(max_core) (the busiest CPU, for example C(cpu1)), C(cores),
          C(seconds) (the time between the readings, from C(/proc/uptime)), C(reason) (why a figure is C(null):
          not read, an ESXi host, a counter that went backwards, CPUs that came or went between the readings) and
          C(before) / C(after) (the C(cpu) lines of C(/proc/stat) as read)."
        - In a network namespace C(/proc/stat) is the whole machine's.
      type: dict
"""

# Ansible's layout puts DOCUMENTATION, EXAMPLES and RETURN above the imports.
# ruff: noqa: E402

from collections.abc import Callable, Mapping
from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import RunRecord
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.checks import PairedTestError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.planned import PlannedRunError, planned_run
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.record import build_record, reports_from_host_vars

_NAME = "esxilab.iperf.paired_test_record"


def paired_test_record(
    run: Any,
    reports: Any = None,
    barrier: Mapping[str, Any] | None = None,
    host_vars: Any = None,
    previous: Any = None,
) -> RunRecord:
    """Build the record of one run (see the DOCUMENTATION above)."""
    try:
        planned = planned_run(run)  # checked once here: from now on a PlannedRun
    except PlannedRunError as exc:
        raise AnsibleFilterError(f"{_NAME}: {exc}") from exc
    if (reports is None) == (host_vars is None):
        raise AnsibleFilterError(f"{_NAME}: pass either reports or host_vars (one of them)")
    if host_vars is not None:
        if isinstance(host_vars, str | bytes | Mapping) or not hasattr(host_vars, "__iter__"):
            raise AnsibleFilterError(f"{_NAME}: host_vars must be a list of hostvars entries, got {host_vars!r:.200}")
        reports = reports_from_host_vars(list(host_vars))
    if isinstance(reports, str | bytes | Mapping) or not hasattr(reports, "__iter__"):
        raise AnsibleFilterError(f"{_NAME}: reports must be a list with one item per host, got {reports!r:.200}")
    try:
        record = build_record(planned, list(reports), barrier=barrier, previous=list(previous or []))
    except (PairedTestError, KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"{_NAME}: {exc}") from exc
    return record


class FilterModule:
    """The paired_test_record filter."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"paired_test_record": paired_test_record}
