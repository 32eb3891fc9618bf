# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The per-test settings of the ``esxilab.iperf.paired_test`` role, declared once.

``SETTINGS`` lists every key a test in ``paired_test_tests`` may set, falling back to the role
variable ``paired_test_<key>``: its kind, limits, built-in default, the description of the role
variable, and the ``esxilab.iperf.iperf_run`` option it feeds on the servers (``server``) and
on the clients (``client``) of a run. Everything else is derived from this table:

* ``paired/plan.py`` checks and coerces the settings with it and builds each run's ``iperf_server``
  and ``iperf_client`` arguments (keyed by ``iperf_run`` option name) from ``server`` /
  ``client``, so ``roles/paired_test/tasks/series.yml`` passes them through without naming them;
* ``hacking/generate_paired_test_settings.py`` writes the settings parts of the role's
  ``defaults/main.yml``, ``vars/main.yml`` and ``meta/argument_specs.yml`` (the role variables and
  the per-test options), and a unit test fails when those files are not current.

``PAIR_OPTIONS`` lists every key a pair of a test (``paired_test_tests[].pairs[]``) may set, with
its kind and description: ``paired/plan.py`` refuses any other key, and the generator writes the pair
options of ``meta/argument_specs.yml`` from it.

Adding an iperf option: the option in ``plugins/modules/iperf_run.py`` (documentation = argument
spec), its applicability and command line in ``plugin_utils/iperf_run/options.py``, a ``Setting`` here
with ``client=``/``server=`` naming that option; then run the generator (see the role's
README, "How to add an iperf option").

Plain data; no Ansible import, no I/O.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.stability import LAYOUT_KEYS

__all__ = ["KINDS", "PAIR_OPTIONS", "SETTINGS", "PairOption", "Setting"]

#: The kinds of setting, with the role argument spec type and elements each is documented as.
KINDS: dict[str, tuple[str, str | None]] = {
    "int": ("int", None),
    "float": ("float", None),
    "bool": ("bool", None),
    "str": ("str", None),
    "choice": ("str", None),
    "dict": ("dict", None),
    "list_str": ("list", "str"),
    "streams": ("raw", None),  # a stream count or a list of them to sweep
    "repeat": ("raw", None),  # a run count, {min, max, until_cv, ci_percent, max_failures} or {forward, swapped, ...}
    "latency": ("raw", None),  # true/false or {interval, idle}: latency/option.py
}


@dataclass(frozen=True)
class Setting:
    """One per-test setting: its kind, limits, built-in default, documentation and iperf_run feed."""

    kind: str  # a key of KINDS
    default: Any = None
    nullable: bool = False
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    #: The iperf_run option the run's servers get this setting's value as (None: not passed).
    server: str | None = None
    #: The iperf_run option the run's clients get this setting's value as (None: not passed).
    client: str | None = None
    #: 0 is the tool's own behaviour: not passed at all (iperf2 has no ``-O``).
    unset_when_zero: bool = False
    #: The description of the role variable ``paired_test_<name>`` (one item per paragraph).
    description: tuple[str, ...] = ()


SETTINGS: dict[str, Setting] = {
    "duration": Setting(
        "int",
        10,
        minimum=1,
        client="duration",
        description=("Test length in seconds (iperf C(-t)).",),
    ),
    "streams": Setting(
        "streams",
        1,
        client="streams",
        description=(
            "Parallel streams per client (C(-P)), 1 to 128; or a list of them to sweep, for example V([1, 2, 4, 8]).",
            (
                "A sweep gets a knee in C(paired_test_sweeps) - the smallest stream count whose mean total is within "
                "O(paired_test_knee_tolerance) of the best."
            ),
        ),
    ),
    "repeat": Setting(
        "repeat",
        1,
        description=(
            (
                "How many times each point (streams value, direction, role order) runs; the summary is over the "
                "repetitions."
            ),
            (
                "A whole number - exactly that often. Or a dictionary C({min, max, until_cv, ci_percent, max_failures})"
                " - at least C(min) and at most C(max) runs; once a point has C(min) usable samples (2 at least) its "
                "remaining runs are skipped as soon as the coefficient of variation is at most C(until_cv) % of the "
                "mean and (when given) the half-width of the 95 % confidence interval at most C(ci_percent) % of the "
                'mean. A point that reaches C(max) without that is reported as "unstable after N runs (cv X %)" '
                "(C(stability) in the run records and the summary). C(until_cv) and C(ci_percent) are above 0 and at "
                "most 100."
            ),
            (
                "C(max_failures) - failed runs a point tolerates (they do not stop the play even without "
                "O(paired_test_continue_on_error)); one more and the point's remaining runs are skipped. Unset - a "
                "failed run stops the play (or, with O(paired_test_continue_on_error), is recorded and the point goes "
                "on)."
            ),
            (
                "Or a run layout - the runs per kind of point, for example V({forward: 3, swapped: 1}) (seed 002 - "
                "3 runs, then 1 with the roles swapped; with O(paired_test_combine_swapped) the report adds the mean "
                "of the 4): "
                + ", ".join(f"C({key})" for key in LAYOUT_KEYS)
                + " - C(forward) and C(reverse) the runs of that direction with the roles as given, C(swapped) the "
                "runs with the roles swapped (each direction); each at least 1. It names exactly the kinds the test "
                "plans (its C(direction), and C(swapped) with O(paired_test_swap_roles)); C(max_failures) goes with "
                "it, C(min), C(max), C(until_cv) and C(ci_percent) do not."
            ),
            "The whole plan (every point's C(max), or its layout count) is capped by O(paired_test_max_runs).",
        ),
    ),
    "order": Setting(
        "choice",
        "interleaved",
        choices=("interleaved", "sequential", "shuffled"),
        description=(
            "The order of a test's runs.",
            (
                "V(interleaved) - round robin: the first repetition of every point (streams value, direction, role "
                "order), then the second, and so on, so that drift over time (warm-up, a neighbour VM) is spread over "
                "every point instead of lining up with one setting."
            ),
            "V(sequential) - every repetition of a point back to back, then the next point.",
            (
                "V(shuffled) - like V(interleaved), each round in a random order from O(paired_test_shuffle_seed); "
                "the seed is recorded in every run record (C(shuffle_seed)) so the order can be replayed."
            ),
            "Tests always run one after the other, in the order given.",
        ),
    ),
    "shuffle_seed": Setting(
        "int",
        None,
        nullable=True,
        minimum=0,
        description=("Seed of the V(shuffled) order. Unset - a random seed, recorded in the run records.",),
    ),
    "combine_swapped": Setting(
        "bool",
        False,
        description=(
            (
                "With O(paired_test_swap_roles) - the report adds a combined summary over the swapped and the "
                "unswapped runs of each direction and streams value (C(combined) in C(results.json)), besides the "
                "separate rows."
            ),
        ),
    ),
    "direction": Setting(
        "choice",
        "forward",
        choices=("forward", "reverse", "both"),
        description=(
            "V(forward) - the clients send (the pair's client host to its server host).",
            "V(reverse) - the servers send (C(-R)); needs iperf3 or iperf2 2.1 or later.",
            "V(both) - a forward run, then a reverse run.",
        ),
    ),
    "swap_roles": Setting(
        "bool",
        False,
        description=(
            (
                "Also run every combination with servers and clients exchanged - the server runs on the pair's client"
                " host, listening on the pair's C(client_address) (or the host's variable named by "
                "O(paired_test_address_var)), and the client runs on the pair's server host."
            ),
            "Together with V(direction=both) this measures both directions with both hosts as client.",
        ),
    ),
    "tool": Setting(
        "choice",
        "iperf3",
        choices=("iperf3", "iperf2"),
        server="tool",
        client="tool",
        description=("V(iperf3) or V(iperf2), on servers and clients alike (the two do not interoperate).",),
    ),
    "protocol": Setting(
        "choice",
        "tcp",
        choices=("tcp", "udp"),
        server="protocol",
        client="protocol",
        description=("V(tcp) or V(udp). For UDP set O(paired_test_bandwidth) too (iperf's UDP default is 1 Mbit/s).",),
    ),
    "bandwidth": Setting(
        "str",
        None,
        nullable=True,
        client="bandwidth",
        description=(
            "Target rate per client (C(-b)), for example V(1G); V(0) is unlimited. Unset - the tool's default.",
            (
                "A number of bit/s with an optional C(K), C(M), C(G) or C(T) suffix (1000-based); iperf3 also takes a"
                " burst (V(100M/10)), iperf2 a packet rate (V(1000pps)). Anything else (for example V(10X)) fails in "
                "the preflight."
            ),
        ),
    ),
    "port_base": Setting(
        "int",
        5201,
        minimum=1,
        maximum=65535,
        description=("Port of each test's first pair; pair I(n) (0-based) uses O(paired_test_port_base) + I(n).",),
    ),
    "labels": Setting(
        "dict",
        {},
        description=(
            (
                "Labels added to every result and run record (with C(test), C(run), C(pair), C(streams), "
                "C(direction), C(swapped) and C(repetition), which are always added)."
            ),
            "A pair's own C(labels) are merged over these for that pair (the pair's value wins).",
            "A label the plan sets itself, or a name or value with a control character (a line break, a tab), is "
            "refused before anything runs.",
        ),
    ),
    "omit": Setting(
        "int",
        None,
        nullable=True,
        minimum=0,
        client="omit",
        unset_when_zero=True,
        description=("iperf3 only - seconds at the start left out of the totals (C(-O)).",),
    ),
    "interval": Setting(
        "float",
        None,
        nullable=True,
        minimum=0,
        client="interval",
        description=("Seconds between interval reports (C(-i)); V(0) turns them off. Unset - the tool's default.",),
    ),
    "window": Setting(
        "str",
        None,
        nullable=True,
        server="window",
        client="window",
        description=("Socket buffer size (C(-w)), for example V(512K), on servers and clients.",),
    ),
    "length": Setting(
        "str",
        None,
        nullable=True,
        client="length",
        description=("Buffer length or UDP datagram size (C(-l)).",),
    ),
    "mss": Setting(
        "int",
        None,
        nullable=True,
        minimum=1,
        client="mss",
        description=("TCP maximum segment size (C(-M)).",),
    ),
    "zerocopy": Setting(
        "bool",
        False,
        client="zerocopy",
        description=("iperf3 only - send with C(sendfile()) (C(-Z)).",),
    ),
    "tos": Setting(
        "int",
        None,
        nullable=True,
        minimum=0,
        maximum=255,
        client="tos",
        description=("IP type-of-service byte of the test packets (C(-S)), 0 to 255, for example V(184) (DSCP EF).",),
    ),
    "connect_timeout": Setting(
        "int",
        None,
        nullable=True,
        minimum=1,
        client="connect_timeout",
        description=(
            "iperf3 only (3.2 or later) - milliseconds to wait for the control connection (C(--connect-timeout)).",
        ),
    ),
    "client_timeout": Setting(
        "float",
        None,
        nullable=True,
        minimum=1,
        client="timeout",
        description=(
            (
                "Seconds a client may run before it is killed. Unset - the duration + omit + 30 s "
                "(M(esxilab.iperf.iperf_run)'s default)."
            ),
        ),
    ),
    "server_timeout": Setting(
        "int",
        None,
        nullable=True,
        minimum=1,
        server="server_timeout",
        description=(
            (
                "Seconds after which a server is killed by its guard even if nobody stops it (an SSH connection lost "
                "before the C(always:) ran). Unset - the run's duration + omit + start delay + 120 s."
            ),
        ),
    ),
    "server_extra_args": Setting(
        "list_str",
        [],
        server="extra_args",
        description=("More arguments for the servers, verbatim.",),
    ),
    "client_extra_args": Setting(
        "list_str",
        [],
        client="extra_args",
        description=("More arguments for the clients, verbatim.",),
    ),
    "start_delay": Setting(
        "float",
        None,
        nullable=True,
        minimum=0,
        description=(
            (
                "Seconds between setting the common start time of a run's clients and that time, so that every client"
                " reaches the barrier before it."
            ),
            (
                "Unset - automatic: the first run with a number of clients waits 1 s + 0.4 s per client (Ansible "
                "hands the task to the hosts one after the other); later runs with as many clients wait 1.5 times the "
                "longest C(dispatch_time) (setting the start time to the last client's arrival, in the run record) of "
                "the last three such runs, plus 0.1 s - shorter or longer, as measured."
            ),
            "A late client starts at once; it shows in C(start_spread), C(barrier_margin) and the run's warnings.",
            "A run with one pair has no barrier; its client starts as soon as the server is up.",
        ),
    ),
    "latency": Setting(
        "latency",
        None,
        nullable=True,
        client="latency",
        description=(
            (
                "Latency under load - each client pings its server address (Linux C(ping), ESXi C(vmkping -I vmkN)) "
                "for a window before the transfer (idle) and during it (loaded); the run records and the report give "
                "the round-trip times p50, p90, p99 and max of both windows per pair and direction (see "
                "C(docs/latency.md))."
            ),
            (
                "V(true) - a probe every 0.2 s, an idle window as long as the transfer (C(duration) + C(omit)). A "
                "dictionary C({interval, idle}) - seconds between probes (0.01 to 10) and of the idle window (0 to "
                "3600; 0 - none). Unset or V(false) - no ping."
            ),
            (
                "The idle window is added to the start delay of a run with a barrier (the clients ping while they wait "
                "for the common start time) and to a one-pair run before its client starts: each run takes that much "
                "longer."
            ),
        ),
    ),
    "server_bind": Setting(
        "bool",
        True,
        description=("Servers listen on the pair's address only (C(-B)). V(false) - on every address of the host.",),
    ),
    "client_bind": Setting(
        "bool",
        True,
        description=("Clients send from their own address (C(-B) with C(client_address)) when it is known.",),
    ),
    "host_cpu": Setting(
        "bool",
        True,
        description=(
            (
                "Read the CPU of every host of a run at its start and after its stop (Linux - the C(cpu) lines of "
                "C(/proc/stat), C(esxilab.iperf.iperf_facts) O(esxilab.iperf.iperf_facts#module:cpu_times), in the "
                "session of the NIC read when there is one): the run record's C(cpu) (the host's mean CPU % and its "
                "busiest core over the run, the raw readings beside them) and the report's host CPU beside throughput."
            ),
            (
                "A host whose CPU cannot be read (an ESXi host, whose CPU is in the vSphere API and not in "
                "C(/proc/stat)) gets null figures and the reason. In a network namespace C(/proc/stat) is the whole "
                "machine's. V(false) - not read (one SSH session less per host and part)."
            ),
        ),
    ),
    "nic_counters": Setting(
        "choice",
        "test",
        choices=("test", "run", "none"),
        description=(
            (
                "When to read the NIC counters and driver/firmware of the interfaces behind the pairs' test "
                "addresses (Linux - the interface holding the address, C(ip -s -s -j link), C(ethtool -i) where "
                "installed, C(ethtool -S) and C(tc -s qdisc); ESXi - the active uplinks of the VMkernel adapter's "
                "vSwitch, C(esxcli network nic stats get), C(nic get) and the driver's private statistics where "
                "C(localcli) prints them): one read-only SSH session per host and read (C(esxilab.iperf.iperf_facts) "
                "O(esxilab.iperf.iperf_facts#module:nic_counters_of))."
            ),
            (
                "V(test) - before the first and after the last planned run of the test (the report shows the test's "
                "deltas; a run gets its own only when the test has one run). V(run) - before and after every run "
                "(per-run deltas; two sessions per host and run). V(none) - not read (the report says n/a)."
            ),
            (
                "With a C(repeat) dictionary the last planned run of a test may be skipped; with V(test) its test then "
                "has no after-reading (n/a) - use V(run) there."
            ),
        ),
    ),
}


@dataclass(frozen=True)
class PairOption:
    """One key of a pair (``paired_test_tests[].pairs[]``): its kind, whether it is required, its documentation."""

    kind: str  # a key of KINDS
    description: tuple[str, ...]
    required: bool = False


PAIR_OPTIONS: dict[str, PairOption] = {
    "server": PairOption(
        "str",
        (
            "Inventory name of the host that runs the server. Required, except in a pair whose server is outside "
            "the inventory (C(external: {server: true})): give no C(server) then.",
        ),
    ),
    "client": PairOption(
        "str",
        (
            "Inventory name of the host that runs the client. Required, except in a pair with external clients "
            "(C(external: {count, deadline, from}): they are outside the inventory, give no C(client) then).",
        ),
    ),
    "address": PairOption(
        "str",
        (
            "Address of the server host that the server listens on (C(-B)) and the client connects to.",
            "Default the server host's variable named by O(paired_test_address_var). Required when the server is "
            "outside the inventory (C(external: {server: true})): the address it listens on there.",
        ),
    ),
    "client_address": PairOption(
        "str",
        (
            (
                "Address of the client host. Needed with C(swap_roles=true) (the server then runs there and listens "
                "on it); also the client's source address (C(-B)) when O(paired_test_client_bind=true)."
            ),
            "Default the client host's variable named by O(paired_test_address_var).",
        ),
    ),
    "port": PairOption(
        "int", ("Server port of this pair. Default the test's C(port_base) plus the pair's index (0-based).",)
    ),
    "labels": PairOption(
        "dict",
        (
            (
                "Labels of this pair only (for example C({os: centos, nic: vmxnet3})), merged over the test's "
                "C(labels) - a key both set takes the pair's value. Values are strings, numbers or booleans; the "
                "run's own labels (C(test), C(run), C(pair), C(streams), C(direction), C(swapped), C(repetition)) "
                "cannot be set."
            ),
            (
                "They go into the pair's result and record; the labels every pair of a run shares with the same "
                "value are also the run's labels. With C(report_compare_by) naming a label whose value differs "
                "between the pairs of a run, the report sums each value's pairs of that run apart (a part of the "
                "run) beside the whole run's sum - see the C(esxilab.iperf.report) role."
            ),
            "A pair keeps its labels when the roles are swapped (O(paired_test_swap_roles)).",
        ),
    ),
    "external": PairOption(
        "dict",
        (
            (
                "External peer (single-ended) mode: C({count, deadline, from}) - the pair's clients are outside the "
                "inventory (a Windows box with C(iperf3.exe), an appliance, a person). The server starts on "
                "C(server) as usual; the role then waits until C(count) client tests have ended there or C(deadline) "
                "has passed, stops the server and records what the server measured - one result per client test, "
                "C(measured_by=server), the headline the server's received rate. Give no C(client) (nor "
                "C(client_address))."
            ),
            (
                "C(count) - how many client tests to wait for (default 1, at most 64); C(deadline) (required, above "
                "0 and at most 86400, a day - the server listens, and a firewall window stays open, that long) - "
                "seconds the server waits for them from right after its start, a test still running then is cut "
                "(incomplete), the server's guard (C(server_timeout)) is set beyond it; C(from) - the IP address the "
                "external client comes from, never a host name (the server's log names clients by address; client "
                "tests from other addresses are not counted, a warning names them; unset - any address counts)."
            ),
            (
                "Every pair of the test must be external; the test's C(direction) stays V(forward) and C(swap_roles) "
                "V(false). C(streams) is the C(-P) the person is asked to use (the server's own stream count is "
                "recorded and a difference warned about); a list, for example V([1, 2, 3, 4, 5]), is a guided sweep - "
                "one run per stream count, each printing its own command, waiting for its client test(s) and moving "
                "on; the report has the sweep with its knee and plateau."
            ),
            (
                "iperf3 serves one test at a time (the clients come one after the other, and then the run has no "
                "total; C(count=1) runs the server C(--one-off)); iperf2 serves them at once, and clients at the same "
                "time from several addresses are told apart and add up."
            ),
            (
                "Fewer clients than C(count) by the deadline: the results of those that came, a failed record per "
                "missing client (no figure), and the run failed. See C(docs/external-peer.md)."
            ),
            (
                "C({server: true}) - the other way round: the pair's server is outside the inventory (a Windows box "
                "running C(iperf3.exe -s -p 5201), an appliance) and its client is the inventory host C(client). Give"
                " no C(server); C(address) (required) and C(port) say where that server listens, and it must be "
                "listening there when the run starts. Only the client runs (as for any pair, ESXi included); the "
                "record names the server C(external) (C(receiver) or C(sender) V(external <address>)), C(measured_by="
                "client), the headline from the client's own output. C(count), C(deadline) and C(from) do not go with "
                "it (both ends outside the inventory: nothing would run)."
            ),
            (
                "Such pairs may share a test with inventory pairs (their clients start together); C(direction) "
                "V(reverse) or V(both) work (the client's C(-R)); C(swap_roles) does not (no server host to run a "
                "client on). A server that is not there or not listening: a failed record without a figure, the "
                "client's error kept, and the run failed."
            ),
        ),
    ),
}
