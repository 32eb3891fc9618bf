# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The plan of the paired tests: ``build_plan()`` expands the tests into the ordered list of runs (tests x
streams x direction x swap x repeat), gives each pair its port (``port_base`` + pair index unless the pair sets
``port``) and lists every problem of the tests at once (unknown key, host or address, duplicate address/port, a host
that would have to run two clients at once, a run of more client hosts than start together), each led by its path
in ``paired_test_tests``.

Plain data in, plain data out; no Ansible import, no clock, no I/O.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.latency.option import idle_seconds
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.checks import (
    ADDRESS_VAR_HINT,
    BUILTIN_DEFAULTS,
    EXTERNAL_CLIENT,
    EXTERNAL_KEYS,
    EXTERNAL_SERVER,
    IDENTITY_LABELS,
    MAX_EXTERNAL_CLIENTS,
    MAX_EXTERNAL_DEADLINE,
    MAX_RUNS,
    PAIR_KEYS,
    SERVER_TIMEOUT_MARGIN,
    TEST_KEYS,
    PairedTestError,
    PlanErrors,
    _check_address,
    _check_host,
    _check_peer_address,
    _check_setting,
    _coerce,
    _is_int,
    _kind_name,
    _messages,
    _unknown_keys,
    _with_path,
    check_labels,
    has_control,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.planned import MAX_AT_ONCE, PlannedPair, PlannedRun
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.recorder import clients_hosts
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.settings import SETTINGS
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.stability import (
    RepeatSpec,
    StabilityError,
    check_layout,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.start_delay import (
    START_DELAY_BASE,
    START_DELAY_PER_CLIENT,
)

__all__ = [
    "SERVER_ONLY_SETTINGS",
    "build_plan",
    "external_command",
    "external_server_command",
    "point_key",
    "run_order",
    "run_seconds",
]

# --------------------------------------------------------------------------------------------
# Plan
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Pair:
    index: int  # 1-based
    server: str | None  # None: the server is outside the inventory (external_server)
    client: str | None  # None: the clients are outside the inventory (external)
    address: str | None
    client_address: str | None
    port: int | None
    labels: dict[str, Any]
    external: dict[str, Any] | None = None  # {count, deadline, from}
    external_server: bool = False  # external: {server: true}


def _read_external(value: Any, here: str, path: str) -> dict[str, Any]:
    """A pair's ``external``: ``{count, deadline, from}`` - clients outside the inventory (an external peer).
    ``path`` is the pair's place in paired_test_tests (``paired_test_tests[0].pairs[1]``), ``here`` its name."""
    where = f"{here}: external"
    if not isinstance(value, Mapping):
        raise PairedTestError(
            f"{where} must be a dictionary such as {{count: 1, deadline: 300}} (how many clients outside the inventory "
            f"connect to the server, and how many seconds to wait for them), got {_kind_name(value)} {value!r}"
        )
    _unknown_keys(value, EXTERNAL_KEYS, where)
    count = _coerce("int", value.get("count", 1))
    if not _is_int(count) or not 1 <= count <= MAX_EXTERNAL_CLIENTS:
        raise PairedTestError(
            f"{where}.count must be a whole number from 1 to {MAX_EXTERNAL_CLIENTS} (the client tests to wait for), "
            f"got {count!r}"
        )
    if "deadline" not in value:
        raise PairedTestError(
            f"{where}.deadline is missing: the seconds the server waits for the external client(s) to finish, counted "
            "from when it listens - give the person at the other end time to start, for example deadline: 300"
        )
    deadline = _coerce("float", value["deadline"])
    if not (_is_int(deadline) or isinstance(deadline, float)) or not math.isfinite(deadline) or deadline <= 0:
        raise PairedTestError(f"{where}.deadline must be a number of seconds above 0, got {value['deadline']!r}")
    if deadline > MAX_EXTERNAL_DEADLINE:
        raise PairedTestError(
            f"{path}.external.deadline ({here}) is {value['deadline']!r} s, more than {MAX_EXTERNAL_DEADLINE} s (1 "
            "day): the server listens, and a firewall window stays open, for the whole deadline - give the seconds "
            "the person at the other end needs to start, for example deadline: 600"
        )
    return {
        "count": count,
        "deadline": float(deadline),
        "from": _check_peer_address(value.get("from"), f"{path} ({here})", "external.from"),
    }


def _read_external_server(value: Any, item: Mapping[str, Any], here: str, path: str) -> bool:
    """Whether a pair's ``external`` is ``{server: true}`` - its server is outside the inventory - after checking the
    pair fits that form: no ``server``, a ``client`` and an ``address``, no client-side keys of ``external``.
    ``path`` is the pair's place in paired_test_tests (``paired_test_tests[0].pairs[1]``), ``here`` its name."""
    if not isinstance(value, Mapping) or "server" not in value:
        return False
    flag = _coerce("bool", value["server"])
    if not isinstance(flag, bool):
        raise PairedTestError(
            f"{path}.external.server ({here}) must be true or false, got {_kind_name(flag)} {value['server']!r}: true "
            "- the pair's server is outside the inventory"
        )
    if not flag:
        return False
    _unknown_keys(value, EXTERNAL_KEYS, f"{path}.external ({here})")
    both = [key for key in ("count", "deadline", "from") if key in value]
    if both:
        raise PairedTestError(
            f"{path}.external ({here}) has server: true (the server is outside the inventory) and {', '.join(both)} "
            "(for clients outside it): a pair with both ends outside the inventory has nothing to run - give "
            "external: {server: true} with an inventory client, or external: {count, deadline} with an inventory "
            "server"
        )
    if item.get("server") is not None:
        raise PairedTestError(
            f"{path}.server ({here}) is set, but external.server is true (the server is outside the inventory): a "
            "pair names either a server host of the inventory (server) or a server outside it (external: {server: "
            "true} with address and port) - remove one"
        )
    if item.get("client") is None:
        raise PairedTestError(
            f"{path}.client ({here}) is missing: the server is outside the inventory (external.server: true), so the "
            "client must be an inventory host that runs iperf - give client: <inventory host>"
        )
    if item.get("address") is None:
        raise PairedTestError(
            f"{path}.address ({here}) is missing: the server is outside the inventory (external.server: true), so "
            "its address cannot come from a host variable - give address: <the address the external server listens "
            "on> (and port: when it is not port_base + the pair's index)"
        )
    return True


def _read_pairs(raw: Any, where: str, position: int) -> list[_Pair]:
    """The pairs of the test at ``position`` (1-based) of paired_test_tests."""
    if isinstance(raw, str | bytes | Mapping) or not isinstance(raw, Sequence) or not raw:
        raise PairedTestError(
            f"{where}: pairs must be a non-empty list of {{server, address, client}} dictionaries, got {raw!r}"
        )
    pairs = []
    errors: list[str] = []
    for index, item in enumerate(raw, start=1):
        try:
            pairs.append(_read_pair(item, index, where, position))
        except PairedTestError as exc:
            errors.extend(_messages(exc))
    if errors:
        raise PlanErrors(errors)
    return pairs


def _read_pair(item: Any, index: int, where: str, position: int) -> _Pair:
    """Pair ``index`` (1-based) of the test at ``position`` (1-based)."""
    here = f"{where} pair {index}"
    if not isinstance(item, Mapping):
        raise PairedTestError(f"{here}: must be a dictionary with server, address and client, got {item!r}")
    _unknown_keys(item, PAIR_KEYS, here)
    path = f"paired_test_tests[{position - 1}].pairs[{index - 1}]"
    external = item.get("external")
    outside = _read_external_server(external, item, here, path)
    if outside:
        external = None
    elif "server" not in item:
        raise PairedTestError(
            f"{path}.server ({here}) is missing (an inventory host name); for a server outside the inventory "
            "(iperf3.exe -s on a Windows box, an appliance) give external: {server: true} with its address and "
            "port instead"
        )
    if external is None and "client" not in item:
        raise PairedTestError(
            f"{here}: client is missing (an inventory host name); for clients outside the inventory (a Windows "
            "box, an appliance) give external: {count, deadline} instead"
        )
    if external is not None and item.get("client") is not None:
        raise PairedTestError(
            f"{here}: client and external are both set; a pair has either a client in the inventory (client) or "
            "clients outside it (external) - remove one"
        )
    if external is not None and item.get("client_address") is not None:
        raise PairedTestError(
            f"{here}: client_address is for a client in the inventory; the address an external client comes from "
            "is external.from"
        )
    port = _coerce("int", item.get("port"))
    if port is not None and (not _is_int(port) or not 1 <= port <= 65535):
        raise PairedTestError(f"{here}: port must be a number from 1 to 65535, got {port!r}")
    return _Pair(
        index=index,
        server=None if outside else _check_host(item["server"], here, "server"),
        client=None if external is not None else _check_host(item["client"], here, "client"),
        address=_check_address(item.get("address"), f"{path} ({here})", "address"),
        client_address=_check_address(item.get("client_address"), f"{path} ({here})", "client_address"),
        port=port,
        labels=check_labels(item.get("labels"), f"{path}.labels ({here})"),
        external=None if external is None else _read_external(external, here, path),
        external_server=outside,
    )


def _read_test(
    test: Mapping[str, Any], defaults: Mapping[str, Any], where: str, position: int
) -> tuple[list[_Pair], dict[str, Any]]:
    """The pairs and settings of a test; every problem found in its keys, pairs and settings (``PlanErrors``)."""
    errors: list[str] = []
    pairs: list[_Pair] = []
    settings: dict[str, Any] = {}
    try:
        _unknown_keys(test, TEST_KEYS, where)
    except PairedTestError as exc:
        errors.append(str(exc))
    if "pairs" not in test:
        errors.append(f"{where}: pairs is missing (a list of {{server, address, client}})")
    else:
        try:
            pairs = _read_pairs(test["pairs"], where, position)
        except PairedTestError as exc:
            errors.extend(_messages(exc))
    try:
        settings = _resolve_settings(test, defaults, where, f"paired_test_tests[{position - 1}]")
    except PairedTestError as exc:
        errors.extend(_messages(exc))
    if not errors:
        try:
            _check_external_test(pairs, settings, where, [name for name in SETTINGS if name in test])
        except PairedTestError as exc:
            errors.extend(_messages(exc))
    if errors:
        raise PlanErrors(errors)
    return pairs, settings


def _resolve_settings(test: Mapping[str, Any], defaults: Mapping[str, Any], where: str, path: str) -> dict[str, Any]:
    """The test's settings (``path``: its place in paired_test_tests), each from the test, the role or the default."""
    settings: dict[str, Any] = {}
    errors: list[str] = []
    for name in SETTINGS:
        try:
            if name in test:
                settings[name] = _check_setting(name, test[name], where, f"{path}.{name}")
            elif name in defaults:
                settings[name] = _check_setting(
                    name, defaults[name], f"role variable paired_test_{name}", f"paired_test_{name}"
                )
            else:
                settings[name] = _check_setting(name, BUILTIN_DEFAULTS[name], where)
        except PairedTestError as exc:
            errors.append(str(exc))
    if errors:
        raise PlanErrors(errors)
    try:
        check_layout(
            settings["repeat"],
            _directions(settings["direction"]),
            settings["swap_roles"],
            where,
            f"{path}.repeat" if "repeat" in test else "paired_test_repeat",
        )
    except StabilityError as exc:
        raise PairedTestError(str(exc)) from exc
    bandwidth = settings["bandwidth"]
    if bandwidth is not None:
        if settings["tool"] == "iperf3" and bandwidth.endswith("pps"):
            raise PairedTestError(
                f"{where}: bandwidth={bandwidth!r} is a packet rate, which only iperf2 reads; give iperf3 a rate "
                "in bit/s such as 100M, or set tool: iperf2"
            )
        if settings["tool"] == "iperf2" and "/" in bandwidth:
            raise PairedTestError(
                f"{where}: bandwidth={bandwidth!r} has a burst (/n), which only iperf3 reads; give iperf2 a rate "
                "such as 100M, or set tool: iperf3"
            )
    return settings


# What a test sets for the servers this role starts: meaningless when every server is outside the inventory.
SERVER_ONLY_SETTINGS = ("server_extra_args", "server_timeout", "server_bind")


def _check_external_test(
    pairs: Sequence[_Pair], settings: Mapping[str, Any], where: str, given: Collection[str] = ()
) -> None:
    """A test with external peers. Servers outside the inventory: no swapped roles, no settings of a server this
    role would start (``given``: the settings the test itself sets). External clients: every pair external, forward
    only, no swapped roles, and a server guard that outlives the wait. A streams list is a guided sweep: one run per
    stream count, each printing its own command (``-P``) and collecting that step's client test(s)."""
    outside = [p.index for p in pairs if p.external_server]
    unused = [name for name in SERVER_ONLY_SETTINGS if name in given]
    if outside and len(outside) == len(pairs) and unused:
        raise PairedTestError(
            f"{where}: {', '.join(unused)} set, but every pair of the test has its server outside the inventory, so "
            "this role starts no server to give it to; remove it from the test (ask whoever runs the outside server "
            "for the same on their command line - the play prints the command)"
        )
    if outside and settings["swap_roles"]:
        raise PairedTestError(
            f"{where}: swap_roles=True cannot be used with a server outside the inventory (pair(s) {_join(outside)}): "
            "the swapped run would need a server on the client host and a client on the external host, which nothing "
            "here runs; leave swap_roles false (direction: both measures the other direction with the client's -R), "
            "or put those pairs in a test of their own"
        )
    external = [p for p in pairs if p.external is not None]
    if not external:
        return
    if outside:
        raise PairedTestError(
            f"{where}: pair(s) {_join(outside)} have their server outside the inventory (an inventory client that "
            f"starts with the others) and pair(s) {_join([p.index for p in external])} external clients (which come "
            "when they come); put the external-client pairs in a test of their own"
        )
    if len(external) != len(pairs):
        inside = ", ".join(str(p.index) for p in pairs if p.external is None)
        raise PairedTestError(
            f"{where}: pair(s) {inside} have a client in the inventory and the others external clients; the runs of a "
            "test start their inventory clients together, while external clients come when they come - put the "
            "external pairs in a test of their own"
        )
    fixes = {
        "direction": (
            settings["direction"] != "forward",
            "the external client chooses the direction (-R on its command line); leave direction at forward",
        ),
        "swap_roles": (
            bool(settings["swap_roles"]),
            "an external client cannot run a server here; leave swap_roles false",
        ),
        "latency": (
            settings["latency"] is not None,
            "the pings run on the client host, which is outside the inventory here; remove latency from the test",
        ),
    }
    for name, (wrong, fix) in fixes.items():
        if wrong:
            shown = _shown(settings[name])
            raise PairedTestError(f"{where}: {name}={shown} cannot be used with external clients: {fix}")
    waits: dict[str, float] = {}
    for p in external:
        if p.external is not None and p.server is not None:  # a host waits for its external pairs one after the other
            waits[p.server] = waits.get(p.server, 0.0) + p.external["deadline"]
    longest = max(waits.values())
    timeout = settings["server_timeout"]
    if timeout is not None and timeout <= longest:
        raise PairedTestError(
            f"{where}: server_timeout={timeout} is not longer than external.deadline={longest:g} (a host's deadlines "
            "added up): the guard would end the server while the clients may still come; raise server_timeout or "
            "leave it unset (the wait + 120 s)"
        )


def _shown(value: Any) -> str:
    return repr(list(value)) if isinstance(value, tuple) else repr(value)


def _directions(direction: str) -> tuple[str, ...]:
    return ("forward", "reverse") if direction == "both" else (direction,)


def build_plan(
    tests: Any,
    defaults: Mapping[str, Any] | None = None,
    *,
    addresses: Mapping[str, Any] | None = None,
    address_var: str | None = None,
    inventory_hosts: Sequence[str] | None = None,
    play_hosts: Sequence[str] | None = None,
    max_runs: int = MAX_RUNS,
    random_seed: int = 0,
) -> dict[str, Any]:
    """Expand ``tests`` into runs and list the problems to assert on before running anything.

    ``defaults`` maps setting names (without the ``paired_test_`` prefix) to the role's values;
    ``addresses`` maps host names to their test address (from the host variable named by
    ``address_var``), used when a pair gives no ``address`` / ``client_address``. The host
    lists are only used for the problem checks (``None``: not checked).
    ``random_seed`` is the seed of a ``shuffled`` test without ``shuffle_seed`` (the caller draws it;
    the plan records it in the test and its runs).

    Raises ``PairedTestError`` for input of the wrong shape (unknown keys, wrong types,
    duplicate test names) and for a plan of more than ``max_runs`` runs (counted before any
    run is made, so the message gives the whole count at once); everything that depends on
    the inventory is a *problem* instead.
    """
    max_runs = _coerce("int", max_runs)  # a role variable given with -e is a string
    if isinstance(max_runs, bool) or not isinstance(max_runs, int) or max_runs < 1:
        raise PairedTestError(f"paired_test_max_runs must be a whole number of at least 1, got {max_runs!r}")
    if isinstance(tests, str | bytes | Mapping) or not isinstance(tests, Sequence):
        raise PairedTestError(f"paired_test_tests must be a list of tests, got {_kind_name(tests)}")
    if not tests:
        raise PairedTestError("paired_test_tests is empty: give at least one test with a name and pairs")
    defaults = dict(defaults or {})
    unknown = sorted(k for k in defaults if k not in SETTINGS)
    if unknown:
        raise PairedTestError(f"unknown default setting(s) {', '.join(unknown)}; known: {', '.join(SETTINGS)}")
    host_addresses = {str(h): _check_address(a, f"host variable {address_var} of {h}", "address")
                      for h, a in (addresses or {}).items() if a is not None}  # fmt: skip

    normalized: list[dict[str, Any]] = []
    runs: list[PlannedRun] = []
    names: set[str] = set()
    problems: dict[str, list[str]] = {
        "unknown_hosts": [],
        "hosts_not_in_play": [],
        "missing_addresses": [],
        "duplicate_endpoints": [],
        "address_conflicts": [],
        "busy_clients": [],
        "too_many_clients": [],
    }
    owners: dict[str, tuple[str, str]] = {}  # address -> (host, where)
    planned = 0
    counts: list[str] = []

    errors: list[str] = []  # every test and pair is checked; the errors are raised together at the end
    for position, test in enumerate(tests, start=1):
        here = f"paired_test_tests[{position - 1}]"
        if not isinstance(test, Mapping):
            errors.append(f"{here} (item {position}) must be a dictionary with name and pairs, got {_kind_name(test)}")
            continue
        name = test.get("name")
        if not isinstance(name, str) or not name.strip():
            errors.append(f"{here}.name (item {position}) is missing: give each test a short unique name")
            continue
        name = name.strip()
        if has_control(name):
            errors.append(
                f"{here}.name (item {position}) must be one line of plain text without control characters "
                f"(line breaks, tabs, escapes), got {name!r}; rename the test"
            )
            continue
        where = f"test {name!r}"
        found: list[str] = []
        if name in names:
            found.append(f"{where}: two tests have this name; test names must be unique")
        names.add(name)
        try:
            pairs, settings = _read_test(test, defaults, where, position)
        except PairedTestError as exc:
            found.extend(_messages(exc))
        if found:
            errors.extend(_with_path(message, position) for message in found)
            continue
        streams = settings["streams"]
        sweep = isinstance(streams, tuple)
        stream_values = streams if isinstance(streams, tuple) else (streams,)

        resolved: list[dict[str, Any]] = []
        for pair in pairs:
            address = pair.address or (host_addresses.get(pair.server) if pair.server else None)
            client_address = pair.client_address or (host_addresses.get(pair.client) if pair.client else None)
            port = pair.port if pair.port is not None else settings["port_base"] + pair.index - 1
            if port > 65535:
                errors.append(
                    _with_path(
                        f"{where} pair {pair.index}: port_base {settings['port_base']} + {pair.index - 1} is above "
                        "65535; lower port_base",
                        position,
                    )
                )
                port = 65535  # reported above; the plan is not used
            resolved.append(
                {
                    "pair": pair.index,
                    "server": pair.server,
                    "client": pair.client,
                    "address": address,
                    "client_address": client_address,
                    "port": port,
                    "labels": pair.labels,
                    "external": pair.external,
                    "external_server": pair.external_server,
                }
            )
            _problems_for_pair(problems, where, pair, address, client_address, settings, address_var)
            for host, addr in ((pair.server, address), (pair.client, client_address)):
                if addr is None or host is None:
                    continue
                owner = owners.get(addr)
                if owner is None:
                    owners[addr] = (host, f"{where} pair {pair.index}")
                elif owner[0] != host:
                    problem = (
                        f"{addr} is given as the address of {owner[0]} ({owner[1]}) and of {host} "
                        f"({where} pair {pair.index}); an address belongs to one host -- fix the address of one of them"
                    )
                    if problem not in problems["address_conflicts"]:
                        problems["address_conflicts"].append(problem)

        repeat: RepeatSpec = settings["repeat"]
        seed = settings["shuffle_seed"]
        if settings["order"] == "shuffled" and seed is None:
            seed = random_seed
        settings = {**settings, "shuffle_seed": seed if settings["order"] == "shuffled" else None}
        normalized.append(
            {
                "name": name,
                "pairs": resolved,
                **settings,
                "repeat": repeat.shown(),
                "streams": list(streams) if sweep else streams,
            }
        )
        swaps = (False, True) if settings["swap_roles"] else (False,)
        points = [(s, d, w) for s in stream_values for d in _directions(settings["direction"]) for w in swaps]
        count = sum(repeat.runs_of(d, w) for _s, d, w in points)
        counts.append(
            f"{where}: {len(stream_values)} streams value(s) x {len(_directions(settings['direction']))} "
            f"direction(s) x {len(swaps)} role order(s) {_repeat_text(repeat)} = {count}"
        )
        planned += count
        if planned > max_runs:
            continue  # counted, not made: the error below gives the whole count
        per_point = [repeat.runs_of(d, w) for _s, d, w in points]
        made = len(runs)
        for stream_count, direction, swapped, repetition in run_order(points, per_point, settings["order"], seed):
            runs.append(
                _make_run(len(runs) + 1, name, settings, resolved, stream_count, sweep, direction, swapped, repetition)
            )
        # the hosts of a run's clients part (its clients, and the servers waiting for external clients) work at once
        at_once = max((len(clients_hosts(r)) for r in runs[made:]), default=0)
        if at_once > MAX_AT_ONCE:
            problems["too_many_clients"].append(
                f"{where}: a run has {at_once} hosts whose clients must start together, more than the {MAX_AT_ONCE} "
                f"the role starts at once; split the pairs over tests of at most {MAX_AT_ONCE} client hosts"
            )
        for swapped in swaps:
            _problems_for_concurrency(problems, where, resolved, swapped)

    if planned > max_runs:
        errors.append(
            f"the tests would make {planned} runs ({'; '.join(counts)}), more than the {max_runs} allowed by "
            "paired_test_max_runs; lower repeat, streams, direction or swap_roles, split the tests over several "
            f"plays, or raise paired_test_max_runs to {planned} if you mean it"
        )
    hosts = sorted({host for r in runs for p in r["pairs"] for host in (p["server"], p["client"]) if host})
    _problems_for_hosts(problems, hosts, inventory_hosts, play_hosts)
    if errors:
        raise PlanErrors(errors, [line for lines in problems.values() for line in lines])
    _mark_nic_reads(runs)
    tools: dict[str, list[str]] = {}
    for run in runs:
        for in_run in run["pairs"]:
            for host in (in_run["server"], in_run["client"]):
                if host is not None and run["tool"] not in tools.setdefault(host, []):
                    tools[host].append(run["tool"])
    addresses_by_host: dict[str, list[str]] = {}
    for run in runs:
        for in_run in run["pairs"]:
            for host, address in ((in_run["server"], in_run["address"]), (in_run["client"], in_run["client_bind"])):
                if host and address and address not in addresses_by_host.setdefault(host, []):
                    addresses_by_host[host].append(address)
    return {
        "tests": normalized,
        "runs": runs,
        "run_count": len(runs),
        "hosts": hosts,
        # the addresses each host uses in the runs (iperf_facts reads their link speed: line rate)
        "addresses_by_host": addresses_by_host,
        "tools_by_host": tools,
        "problems": problems,
        "problem_count": sum(len(v) for v in problems.values()),
    }


def _problems_for_pair(
    problems: dict[str, list[str]],
    where: str,
    pair: _Pair,
    address: str | None,
    client_address: str | None,
    settings: Mapping[str, Any],
    address_var: str | None,
) -> None:
    var = f"the host variable {address_var!r}" if address_var else f"a host variable named by {ADDRESS_VAR_HINT}"
    if address is None:
        problems["missing_addresses"].append(
            f"{where} pair {pair.index}: no address for the server {pair.server}; set address in the pair "
            f"(the address {pair.server} listens on and the client connects to) or {var} of {pair.server}"
        )
    if settings["swap_roles"] and client_address is None:
        problems["missing_addresses"].append(
            f"{where} pair {pair.index}: swap_roles is true, so {pair.client} also runs a server, which listens on "
            f"its own address; set client_address in the pair or {var} of {pair.client}"
        )


def _problems_for_concurrency(
    problems: dict[str, list[str]], where: str, pairs: Sequence[Mapping[str, Any]], swapped: bool
) -> None:
    server_key, client_key, address_key = (
        ("client", "server", "client_address") if swapped else ("server", "client", "address")
    )
    label = f"{where}{' (swapped)' if swapped else ''}"
    clients: dict[str, list[int]] = {}
    endpoints: dict[tuple[str, int], list[int]] = {}
    ports: dict[tuple[str, int], list[int]] = {}
    for pair in pairs:
        if pair[client_key] is not None:  # external clients are not hosts of the inventory
            clients.setdefault(pair[client_key], []).append(pair["pair"])
        if pair[address_key] is not None:
            endpoints.setdefault((pair[address_key], pair["port"]), []).append(pair["pair"])
        if pair[server_key] is not None:  # a server outside the inventory is not a host of it
            ports.setdefault((pair[server_key], pair["port"]), []).append(pair["pair"])
    for host, indexes in clients.items():
        if len(indexes) > 1:
            problems["busy_clients"].append(
                f"{label}: {host} is the client of pairs {_join(indexes)}, but a host runs one client at a time, so "
                "they would not run concurrently; give each pair its own client host (a ring h1->h2, h2->h3, h3->h1 "
                "uses every host once as client and once as server), or add a second inventory alias of the host"
            )
    for (address, port), indexes in endpoints.items():
        if len(indexes) > 1:
            problems["duplicate_endpoints"].append(
                f"{label}: pairs {_join(indexes)} all use {address}:{port}; one server per address and port -- "
                "give each pair its own port (remove port from the pairs to get port_base + index) or address"
            )
    for (host, port), indexes in ports.items():
        if len(indexes) > 1 and len({pairs[i - 1][address_key] for i in indexes}) > 1:
            problems["duplicate_endpoints"].append(
                f"{label}: pairs {_join(indexes)} all run a server on {host} port {port}; esxilab.iperf.iperf_run "
                "keeps one server per host and port -- give each pair its own port"
            )


def _problems_for_hosts(
    problems: dict[str, list[str]],
    hosts: Sequence[str],
    inventory_hosts: Sequence[str] | None,
    play_hosts: Sequence[str] | None,
) -> None:
    known = set(inventory_hosts) if inventory_hosts is not None else None
    playing = set(play_hosts) if play_hosts is not None else None
    unknown = [h for h in hosts if known is not None and h not in known]
    if unknown:
        sample = ", ".join(sorted(known or ())[:10]) or "none"
        problems["unknown_hosts"].append(
            f"{_join(unknown)} {'is' if len(unknown) == 1 else 'are'} not in the inventory; server and client are "
            f"inventory host names (the inventory has: {sample}{', ...' if len(known or ()) > 10 else ''})"
        )
    outside = [h for h in hosts if playing is not None and h not in playing and h not in unknown]
    if outside:
        problems["hosts_not_in_play"].append(
            f"{_join(outside)} {'is' if len(outside) == 1 else 'are'} in the inventory but not in this play (or not "
            "in this serial batch); apply the role in a play over every host of the tests (for example hosts: lab), "
            "without serial, so servers and clients run side by side"
        )


def _join(items: Sequence[Any]) -> str:
    return ", ".join(str(i) for i in items)


def run_order(
    points: Sequence[tuple[int, str, bool]], repeat: int | Sequence[int], order: str, seed: int | None
) -> list[tuple[int, str, bool, int]]:
    """The runs of one test as ``(streams, direction, swapped, repetition)``, in the order they run.

    ``repeat``: the runs of every point, or of each point in turn (a run layout such as ``{forward: 3,
    swapped: 1}``). ``interleaved``: round robin, repetition 1 of every point, then repetition 2 of the points
    that have one, ...; ``sequential``: the repetitions of each point back to back; ``shuffled``: round robin,
    each round in a random order drawn from ``random.Random(seed)`` (the same seed gives the same order).
    """
    counts = [repeat] * len(points) if isinstance(repeat, int) else list(repeat)
    if order == "sequential":
        return [(*point, rep) for point, runs in zip(points, counts, strict=True) for rep in range(1, runs + 1)]
    rng = random.Random(seed) if order == "shuffled" else None
    runs: list[tuple[int, str, bool, int]] = []
    for rep in range(1, max(counts, default=0) + 1):
        round_points = [point for point, times in zip(points, counts, strict=True) if times >= rep]
        if rng is not None:
            rng.shuffle(round_points)
        runs.extend((*point, rep) for point in round_points)
    return runs


def _repeat_text(repeat: RepeatSpec) -> str:
    """``x repeat 3``, or a layout as ``with repeat {forward: 3, swapped: 1} runs each`` (the run count message)."""
    if not repeat.layout:
        return f"x repeat {repeat.max}"
    return "with repeat {" + ", ".join(f"{kind}: {runs}" for kind, runs in repeat.layout) + "} runs each"


def point_key(test: str, direction: str, streams: int, swapped: bool) -> str:
    """The name of one point of a test: what its stability is decided over."""
    return f"{test}|{direction}|{streams}|{'swapped' if swapped else 'unswapped'}"


def _make_run(
    number: int,
    test: str,
    settings: Mapping[str, Any],
    pairs: Sequence[Mapping[str, Any]],
    streams: int,
    sweep: bool,
    direction: str,
    swapped: bool,
    repetition: int,
) -> PlannedRun:
    spec: RepeatSpec = settings["repeat"].for_point(direction, swapped)
    run_pairs: list[PlannedPair] = []
    for pair in pairs:
        if swapped:
            server, client, address, source = pair["client"], pair["server"], pair["client_address"], pair["address"]
        else:
            server, client, address, source = pair["server"], pair["client"], pair["address"], pair["client_address"]
        external = pair.get("external")
        if external is not None:
            client = None
            external = {**external, "command": external_command(settings, address, pair["port"], streams)}
        outside = None
        if pair.get("external_server"):  # never swapped (refused): the server is the pair's address
            outside = {"command": external_server_command(settings, pair["port"])}
        shown = client if client is not None else EXTERNAL_CLIENT
        shown_server = server if outside is None else f"{EXTERNAL_SERVER} {address}"
        sender, receiver = (shown, shown_server) if direction == "forward" else (shown_server, shown)
        run_pairs.append(
            {
                "run": number,
                "pair": pair["pair"],
                "server": server,
                "client": client,
                "address": address,
                "port": pair["port"],
                "bind": address if settings["server_bind"] and outside is None else None,
                "client_bind": source if settings["client_bind"] else None,
                "sender": sender,
                "receiver": receiver,
                "external": external,
                # the server is outside the inventory: nobody here starts it ({command}: what runs there)
                "external_server": outside,
                # an iperf3 server serves one test per run (its pair's client, or one external client): it exits
                # after that test (--one-off), so a server an interrupted run left ends by itself; for an external
                # client its log is then complete (iperf3 before 3.1.5 buffers it) and no second client is served
                # unseen. Several external clients come one after the other: not one-off
                "one_off": settings["tool"] == "iperf3" and (external is None or external["count"] == 1),
                "labels": {
                    **settings["labels"],
                    **pair.get("labels", {}),
                    "test": test,
                    "run": number,
                    "pair": pair["pair"],
                    "streams": streams,
                    "direction": direction,
                    "swapped": swapped,
                    "repetition": repetition,
                },
            }
        )
    clients = len({p["client"] for p in run_pairs if p["client"] is not None})
    client_pairs = any(p["client"] is not None for p in run_pairs)
    auto_delay = settings["start_delay"] is None
    start_delay = START_DELAY_BASE + START_DELAY_PER_CLIENT * clients if auto_delay else settings["start_delay"]
    omit = settings["omit"] or 0
    # a host waits for its external pairs one after the other (the role's loop): the longest such sum
    waits: dict[str, float] = {}
    for p in run_pairs:
        if p["external"] is not None and p["server"] is not None:  # external clients: the server is ours
            waits[p["server"]] = waits.get(p["server"], 0.0) + p["external"]["deadline"]
    wait = max(waits.values(), default=None)
    # latency under load: the clients ping for this long before the transfer (in the start delay of a barrier)
    latency_idle = idle_seconds(settings["latency"], settings["duration"] + omit) if client_pairs else 0.0
    server_timeout = settings["server_timeout"] or int(
        (
            math.ceil(wait)
            if wait is not None
            else settings["duration"] + omit + math.ceil(start_delay) + math.ceil(latency_idle)
        )
        + SERVER_TIMEOUT_MARGIN
    )
    run: PlannedRun = {
        "run": number,
        "test": test,
        "sweep": sweep,
        "direction": direction,
        "reverse": direction == "reverse",
        "swapped": swapped,
        "repetition": repetition,
        "repeat": spec.max,
        "point": point_key(test, direction, streams, swapped),
        # None for a plain repeat: N or a layout's count (every run is made); else what assess() decides with
        "stability": spec.as_dict() if spec.adaptive or spec.max_failures is not None else None,
        "order": settings["order"],
        "shuffle_seed": settings["shuffle_seed"],
        "combine_swapped": settings["combine_swapped"] and settings["swap_roles"],
        # every setting that feeds iperf_run (Setting.server / Setting.client), under its own name (streams: this run's
        # value); a unit test keeps this list and SETTINGS in step
        "duration": settings["duration"],
        "streams": streams,
        "tool": settings["tool"],
        "protocol": settings["protocol"],
        "bandwidth": settings["bandwidth"],
        "omit": settings["omit"],
        "interval": settings["interval"],
        "window": settings["window"],
        "length": settings["length"],
        "mss": settings["mss"],
        "zerocopy": settings["zerocopy"],
        "tos": settings["tos"],
        "connect_timeout": settings["connect_timeout"],
        "client_timeout": settings["client_timeout"],
        "server_timeout": server_timeout,
        "server_extra_args": settings["server_extra_args"],
        "client_extra_args": settings["client_extra_args"],
        "latency": settings["latency"],
        "labels": _common_labels(run_pairs),
        # One pair needs no barrier: its client starts as soon as its server is up (external clients: none).
        "barrier": sum(p["client"] is not None for p in run_pairs) > 1,
        # the clients are outside the inventory: the servers wait up to this many seconds for them (the deadlines of
        # the external pairs one host serves, added up: it waits for them one after the other)
        "external": wait is not None,
        "external_wait": wait,
        # some pairs' servers are outside the inventory: their clients connect to them, nobody starts them
        "external_servers": any(p["external_server"] is not None for p in run_pairs),
        "start_delay": round(start_delay, 3),
        "start_delay_auto": auto_delay,
        "latency_idle": latency_idle,
        "pairs": run_pairs,
        # NIC counters (setting nic_counters): read before / after this run (set by _mark_nic_reads), and the
        # addresses each host of the run reads them for (its test addresses in this run; the client's own
        # address even when it does not bind to it)
        "nic_counters": settings["nic_counters"],
        "nic_before": False,
        "nic_after": False,
        "nic_addresses": _nic_addresses(pairs),
        # host CPU (setting host_cpu): the inventory hosts of the run whose CPU is read at its start and after its stop
        "cpu_hosts": sorted({h for p in run_pairs for h in (p["server"], p["client"]) if h})
        if settings["host_cpu"]
        else [],
        "server_hosts": sorted({p["server"] for p in run_pairs if p["server"] is not None}),
        "client_hosts": sorted({p["client"] for p in run_pairs if p["client"] is not None}),
        "iperf_server": {},
        "iperf_client": {},
    }
    run["iperf_server"] = _iperf_arguments(run, "server")
    run["iperf_client"] = {**_iperf_arguments(run, "client"), "reverse": run["reverse"]}
    return run


def _common_labels(pairs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The run's labels: those every pair of the run has with the same value (the test's labels and the pair
    labels all pairs share), without the pair's identity - so pair labels that are the same for every pair of a
    run are run labels, exactly as the test's labels are."""
    first = pairs[0]["labels"]
    return {
        key: value
        for key, value in first.items()
        if key not in IDENTITY_LABELS and all(key in p["labels"] and p["labels"][key] == value for p in pairs[1:])
    }


def _nic_addresses(pairs: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """``{host: [address, ...]}``: the test addresses of a run's hosts (server and client of every pair; the same
    whichever end serves)."""
    found: dict[str, list[str]] = {}
    for pair in pairs:
        for host, address in ((pair["server"], pair["address"]), (pair["client"], pair["client_address"])):
            if host and address and address not in found.setdefault(host, []):
                found[host].append(address)
    return {host: addresses for host, addresses in found.items() if addresses}


def _mark_nic_reads(runs: Sequence[PlannedRun]) -> None:
    """Set ``nic_before`` / ``nic_after`` of the runs: every run with ``nic_counters: run``; the first and the last
    planned run of each test with ``test``; none with ``none``."""
    by_test: dict[str, list[PlannedRun]] = {}
    for run in runs:
        by_test.setdefault(run["test"], []).append(run)
    for test_runs in by_test.values():
        for run in test_runs:
            mode = run["nic_counters"]
            run["nic_before"] = mode == "run" or (mode == "test" and run is test_runs[0])
            run["nic_after"] = mode == "run" or (mode == "test" and run is test_runs[-1])


def external_command(settings: Mapping[str, Any], address: str | None, port: int, streams: int) -> str:
    """The client command line an external client is asked to run (``iperf3.exe`` on Windows takes it as is):
    the test's duration, streams, window, interval, omit, UDP rate and length - what the servers of the
    inventory's pairs would be run with."""
    iperf3 = settings["tool"] == "iperf3"
    argv = ["iperf3" if iperf3 else "iperf", "-c", address or "<server address>", "-p", str(port)]
    argv += ["-t", str(settings["duration"]), "-P", str(streams)]
    for name, flag in (("window", "-w"), ("interval", "-i"), ("length", "-l")):
        if settings[name] is not None:
            value = settings[name]
            argv += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    if iperf3 and settings["omit"]:
        argv += ["-O", str(settings["omit"])]
    if settings["protocol"] == "udp":
        argv.append("-u")
    if settings["bandwidth"] is not None:
        argv += ["-b", str(settings["bandwidth"])]
    return " ".join(argv)


def external_server_command(settings: Mapping[str, Any], port: int) -> str:
    """The server command line to run on a server outside the inventory (``iperf3.exe`` on Windows takes it as is):
    the port, the window, and for iperf2 UDP ``-u`` (an iperf3 server learns the rest from its client)."""
    iperf3 = settings["tool"] == "iperf3"
    argv = ["iperf3" if iperf3 else "iperf", "-s", "-p", str(port)]
    if settings["window"] is not None:
        argv += ["-w", str(settings["window"])]
    if not iperf3 and settings["protocol"] == "udp":
        argv.append("-u")
    return " ".join(argv)


def run_seconds(run: Mapping[str, Any]) -> float:
    """The planned seconds of one run of the plan: the test itself (``duration`` + ``omit``) and the
    clients' ``start_delay``, or for external clients the longest wait for them (``external.deadline``);
    starting and stopping the servers and collecting the results come on top."""
    if run.get("external_wait") is not None:
        return float(run["external_wait"])
    planned = float(run["duration"]) + float(run.get("omit") or 0) + float(run.get("start_delay") or 0)
    return planned + float(run.get("latency_idle") or 0)


def _iperf_arguments(run: Mapping[str, Any], mode: str) -> dict[str, Any]:
    """The ``iperf_run`` arguments of the run's servers or clients that come from the settings,
    keyed by ``iperf_run`` option name (``Setting.server`` / ``Setting.client``); unset ones left out."""
    arguments: dict[str, Any] = {}
    for name, setting in SETTINGS.items():
        option = setting.server if mode == "server" else setting.client
        if option is None or run[name] is None or (setting.unset_when_zero and run[name] == 0):
            continue
        arguments[option] = run[name]
    return arguments
