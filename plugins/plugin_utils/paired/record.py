# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The record of one run: ``build_record()`` turns what every host of the run reported (server starts, clients,
server stops, the rescue's failure) into the typed ``RunRecord`` - per pair the normalized result and ``started_at``,
and ``total_bits_per_second``: the sum of the pairs' headline rates, or ``None`` as soon as one pair has no usable
figure (never a partial sum).

Plain data in, plain data out; no Ansible import, no clock, no I/O.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, cast

from ansible_collections.esxilab.iperf.plugins.plugin_utils.cpu.reading import host_cpu
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import (
    RECORD_VERSION,
    LatencyFigures,
    PairRecord,
    RunRecord,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.units import finite_float
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.validate import result_from
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.checks import EXTERNAL_CLIENT, EXTERNAL_SERVER
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.claims import implausible, line_rate_of
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import _join
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.planned import PlannedRun
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.stability import (
    RepeatSpec,
    assess,
)

__all__ = [
    "HOST_REPORT_VARS",
    "build_record",
    "reports_from_host_vars",
]

# --------------------------------------------------------------------------------------------
# Record of one run
# --------------------------------------------------------------------------------------------


def _loop_items(registered: Any) -> list[Mapping[str, Any]]:
    """The per-item results of a registered loop task (empty for a skipped or missing task)."""
    if not isinstance(registered, Mapping):
        return []
    results = registered.get("results")
    if isinstance(results, Sequence) and not isinstance(results, str | bytes):
        return [r for r in results if isinstance(r, Mapping)]
    return []


def _find_item(registered: Any, run: int, pair: int) -> Mapping[str, Any] | None:
    for item in _loop_items(registered):
        loop_item = item.get("item")
        if isinstance(loop_item, Mapping) and loop_item.get("run") == run and loop_item.get("pair") == pair:
            return item
    return None


def _float_or_none(value: Any) -> float | None:
    return finite_float(value)


def _message(result: Mapping[str, Any]) -> str:
    message = result.get("msg") or result.get("reason") or result.get("stderr") or "no message"
    return " ".join(str(message).split())


def _why_missing(report: Mapping[str, Any] | None, host: str, run: int) -> str:
    """Why ``host`` has no item for ``run``: the failure its report recorded for that run, else unreachable."""
    failure = report.get("failure") if report is not None else None
    if isinstance(failure, Mapping) and failure.get("run") == run:
        task = failure.get("task") or "a task"
        return f"{task}: {failure.get('msg') or 'failed'}"
    return f"{host} gave no report for this run (unreachable?)"


def _server_start_error(
    pair: Mapping[str, Any],
    server_report: Mapping[str, Any] | None,
    server_item: Mapping[str, Any] | None,
    endpoint: str,
    run: int,
) -> str | None:
    """Why the pair's server did not start (not run, connection lost, failed), or None when it started."""
    if server_item is None:
        return f"the server on {pair['server']} was not started: {_why_missing(server_report, pair['server'], run)}"
    if server_item.get("unreachable"):
        return f"lost the connection to {pair['server']} while starting its server: {_message(server_item)}"
    if server_item.get("failed"):
        return f"the server on {pair['server']} ({endpoint}) failed to start: {_message(server_item)}"
    return None


def _blank_record(
    pair: Mapping[str, Any], client: str, sender: str, receiver: str, server_item: Mapping[str, Any] | None
) -> PairRecord:
    """A pair's record before its result is read: who and where, no figure yet; the server's pid and tool version
    when its start succeeded."""
    record: PairRecord = {
        "pair": pair["pair"],
        "server": pair["server"],
        "client": client,
        "address": pair["address"],
        "port": pair["port"],
        "sender": sender,
        "receiver": receiver,
        "started_at": None,
        "result": None,
        "ok": False,
        "error": None,
        "tool_version": None,
        "server_pid": None,
        "server_stop": None,
        "late_by": None,
        "arrived_at": None,
        "command": None,
        "labels": dict(pair.get("labels") or {}),
    }
    if server_item is not None and not server_item.get("failed"):
        record["server_pid"] = server_item.get("pid")
        record["tool_version"] = server_item.get("tool_version")
    return record


def _pair_record(pair: Mapping[str, Any], reports: Mapping[str, Mapping[str, Any]], run: int) -> PairRecord:
    """The record of a pair whose client is in the inventory: the client's result. A server outside the inventory
    (``external_server``) has no start and no stop; the record names it ``external`` and says ``measured_by:
    client``."""
    outside = pair.get("external_server")
    server_report = None if outside else reports.get(pair["server"])
    client_report = reports.get(pair["client"])
    server_item = _find_item(server_report and server_report.get("servers"), run, pair["pair"])
    client_item = _find_item(client_report and client_report.get("clients"), run, pair["pair"])
    stop_item = _find_item(server_report and server_report.get("stops"), run, pair["pair"])
    endpoint = f"{pair['address']}:{pair['port']}"

    record = _blank_record(pair, pair["client"], pair["sender"], pair["receiver"], server_item)
    if outside:
        record["server"] = EXTERNAL_SERVER
        record["measured_by"] = "client"
        record["external"] = {
            "server": True,
            "address": pair["address"],
            "port": pair["port"],
            "command": outside.get("command"),
        }
    if stop_item is not None:
        stopped = [s for s in stop_item.get("stopped") or [] if isinstance(s, Mapping)]
        if stop_item.get("unreachable"):
            record["server_stop"] = "unreachable"
        elif stop_item.get("failed"):
            record["server_stop"] = "failed"
        else:
            record["server_stop"] = str(stopped[0].get("status")) if stopped else "not running"
    if client_item is not None:
        record["started_at"] = client_item.get("started_at")
        record["command"] = client_item.get("command")
        record["tool_version"] = client_item.get("tool_version") or record["tool_version"]
        barrier = client_item.get("barrier")
        if isinstance(barrier, Mapping):
            record["late_by"] = barrier.get("late_by")
            record["arrived_at"] = barrier.get("arrived_at")
        record["result"] = result_from(
            client_item.get("result"), f"pair {pair['pair']}: the result of the client on {pair['client']}"
        )
        if isinstance(client_item.get("latency"), Mapping):  # setting latency: the pings idle vs loaded
            record["latency"] = cast(LatencyFigures, dict(client_item["latency"]))

    error = None if outside else _server_start_error(pair, server_report, server_item, endpoint, run)
    if error is not None:
        pass
    elif client_item is None:
        why = _why_missing(client_report, pair["client"], run)
        error = f"the client on {pair['client']} did not run: {why}"
    elif client_item.get("unreachable"):
        error = f"lost the connection to the client host {pair['client']} during the test: {_message(client_item)}"
    elif client_item.get("failed"):
        error = f"the client on {pair['client']} -> {endpoint} failed: {_message(client_item)}"
        if outside:
            error += (
                f" - the server is outside the inventory: is it running and listening on {endpoint} "
                f"({outside.get('command')} there), and does its firewall let port {pair['port']} in?"
            )
    elif client_item.get("skipped"):
        error = f"the client on {pair['client']} was skipped: {_message(client_item)}"
    elif (result := record["result"]) is None:
        error = f"the client on {pair['client']} returned no result"
    elif result["bits_per_second"] is None:
        detail = result["error"] or "; ".join(result["warnings"]) or "no figure"
        error = f"the result of the client on {pair['client']} has no throughput figure: {detail}"
    record["error"] = error
    record["ok"] = error is None
    # Keep what the tool printed when the run failed: the normalized result may not hold it; and always when the
    # server is outside the inventory - the client's output is the only one of the test anybody here has.
    if (error is not None or outside) and client_item is not None and client_item.get("raw"):
        record["raw"] = client_item["raw"]
    return record


def _external_records(
    pair: Mapping[str, Any], reports: Mapping[str, Mapping[str, Any]], run: int, streams: Any
) -> tuple[list[PairRecord], list[str]]:
    """The records of a pair whose clients are outside the inventory: one per client test the server logged
    (its result is the server's: ``measured_by: server``) and one failed record per client that did not come;
    and the run's warnings about them (a different stream count, tests beyond ``count``, tests from other peers).

    From the ``iperf_run mode=collect`` item of the server host (``collects``), which waited for them,
    stopped the server and parsed its log; the start and the ``always:`` stop as for any pair.
    """
    external = pair["external"]
    count = int(external["count"])
    server_report = reports.get(pair["server"])
    server_item = _find_item(server_report and server_report.get("servers"), run, pair["pair"])
    collect_item = _find_item(server_report and server_report.get("collects"), run, pair["pair"])
    stop_item = _find_item(server_report and server_report.get("stops"), run, pair["pair"])
    endpoint = f"{pair['address']}:{pair['port']}"
    info: dict[str, object] = {
        "count": count,
        "deadline": external["deadline"],
        "from": external.get("from"),
        "command": external.get("command"),
        "came": None,
        "reason": None,
    }

    def record(index: int, peer: str | None) -> PairRecord:
        sender = f"{EXTERNAL_CLIENT} {peer}" if peer else EXTERNAL_CLIENT
        entry = _blank_record(pair, EXTERNAL_CLIENT, sender, pair["server"], server_item)
        entry["measured_by"] = "server"
        entry["external"] = {**info, "index": index, "peer": peer, "group": None}
        if server_item is not None and not server_item.get("failed"):
            entry["command"] = server_item.get("command")
        return entry

    error = _server_start_error(pair, server_report, server_item, endpoint, run)
    if error is not None:
        pass
    elif collect_item is None:
        why = _why_missing(server_report, pair["server"], run)
        error = f"the wait for the external clients on {pair['server']} did not run: {why}"
    elif collect_item.get("unreachable") or collect_item.get("failed"):
        error = f"the wait for the external clients on {pair['server']} ({endpoint}) failed: {_message(collect_item)}"
    if error is not None or collect_item is None:  # (collect_item is None sets error)
        failed = record(1, None)
        failed["error"] = error
        return [failed], []

    info["came"] = collect_item.get("came")
    info["reason"] = collect_item.get("reason")
    stop = collect_item.get("server_stop")
    if stop_item is not None and (stop_item.get("failed") or stop_item.get("unreachable")):
        stop = "unreachable" if stop_item.get("unreachable") else "failed"
    tests = [t for t in collect_item.get("tests") or [] if isinstance(t, Mapping)]
    warnings = [
        f"pair {pair['pair']}: a client test from {t.get('peer')} "
        + (
            "came from another address than external.from, not counted"
            if not t.get("counted")
            else f"came after the {count} expected; not counted (its result is in the server's log)"
        )
        for t in tests
        if not t.get("counted") or t.get("extra")
    ]
    tests = [t for t in tests if t.get("counted") and not t.get("extra")]
    records: list[PairRecord] = []
    for index, test in enumerate(tests, start=1):
        entry = record(index, test.get("peer") if isinstance(test.get("peer"), str) else None)
        entry["external"]["group"] = test.get("group")
        entry["server_stop"] = stop
        result = result_from(test.get("result"), f"pair {pair['pair']}: the server's result of external client {index}")
        entry["result"] = result
        if result is not None and result["tool_version"]:
            entry["tool_version"] = result["tool_version"]
        who = f"external client {index} of {count} ({test.get('peer')})"
        if result is None or result["bits_per_second"] is None:
            detail = "no result"
            if result is not None:
                detail = result["error"] or "; ".join(result["warnings"]) or "no figure"
            entry["error"] = f"the server's result of {who} has no throughput figure: {detail}"
        elif not test.get("ended"):
            entry["error"] = f"{who} was still running when the wait ended (deadline {external['deadline']:g} s): cut"
        entry["ok"] = entry["error"] is None
        if result is not None and (result["reverse"] or result["bidir"]):
            warnings.append(
                f"pair {pair['pair']}: {who} ran {'--bidir' if result['bidir'] else '-R'}: the server sent, so "
                "its figure is the sender's; run the client without it to measure what the server receives"
            )
        if isinstance(streams, int) and result is not None and result["streams"] not in (None, 0, streams):
            warnings.append(
                f"pair {pair['pair']}: {who} used {result.get('streams')} stream(s); the test asks for {streams} "
                f"(-P {streams})"
            )
        records.append(entry)
    came_in = {
        "deadline": f"within the deadline of {external['deadline']:g} s",
        "server_exited": "before the server exited",
    }
    for index in range(len(records) + 1, count + 1):
        missing = record(index, None)
        missing["server_stop"] = stop
        missing["error"] = (
            f"external client {index} of {count} did not come {came_in.get(str(info['reason']), 'in time')} "
            f"({len(records)} came); no figure"
        )
        records.append(missing)
    return records, warnings


def _ends(pair: PairRecord) -> str:
    """``client -> server`` of a pair record for messages; an external end named with its address."""
    external = pair.get("external") or {}
    if pair.get("measured_by") == "server":
        return f"{pair['sender']} -> {pair['server']}"
    if external.get("server"):
        return f"{pair['client']} -> {EXTERNAL_SERVER} {external.get('address')}:{external.get('port')}"
    return f"{pair['client']} -> {pair['server']}"


def _check_claims(pair: PairRecord) -> None:
    """A pair with an end outside the inventory: its figures that end reported are claims (``paired/claims.py``).
    An implausible one makes the result ``complete: false`` with a warning naming the external peer; the figure and
    the raw output are kept (so the run is incomplete, and never a baseline)."""
    result = pair["result"]
    if not pair["ok"] or result is None:
        return
    problems = implausible(result, line_rate_bps=line_rate_of(pair["labels"]))
    if not problems:
        return
    external = pair.get("external") or {}
    if pair.get("measured_by") == "server":
        peer = f"the external client {external.get('peer') or '(address not logged)'}"
    else:
        peer = f"the external server {external.get('address')}:{external.get('port')}"
    result["complete"] = False
    result["warnings"] = [
        *result["warnings"],
        f"implausible figures claimed by {peer} (outside the inventory): {'; '.join(problems)} - not a "
        "measurement: the run is incomplete and never a baseline; the raw output is kept",
    ]
    if "raw" not in pair and isinstance(result.get("raw"), str):
        pair["raw"] = result["raw"]


def _headline(pair: PairRecord) -> float | None:
    """The usable rate of a pair: its result's headline when the pair is ok (then both are set)."""
    result = pair["result"]
    return result["bits_per_second"] if pair["ok"] and result is not None else None


# Where the filter paired_test_record finds each piece of a host's report in the hosts' variables (its option
# host_vars): the registered results of the start, clients and stop tasks, and the rescue's fact.
HOST_REPORT_VARS = {
    "servers": ("__paired_test_start", "servers"),
    "nic_before": ("__paired_test_start", "nic_before"),
    "clients": ("__paired_test_part", "clients"),
    "collects": ("__paired_test_part", "collects"),
    "stops": ("__paired_test_end", "stops"),
    "nic_after": ("__paired_test_end", "nic_after"),
    "cpu_before": ("__paired_test_start", "cpu_before"),
    "cpu_after": ("__paired_test_end", "cpu_after"),
    "failure": ("__paired_test_failure", None),
}


def _nic_readings(run: Mapping[str, Any], by_host: Mapping[str, Mapping[str, Any]], key: str) -> dict[str, object]:
    """``{host: {address: reading}}`` of one NIC read of the run (``key``: ``nic_before`` / ``nic_after``), from the
    hosts' registered ``iperf_facts`` results; a host whose read failed or did not run gets ``{error: why}``."""
    readings: dict[str, object] = {}
    for host in sorted(run.get("nic_addresses") or {}):
        registered = (by_host.get(host) or {}).get(key)
        facts = registered.get("ansible_facts") if isinstance(registered, Mapping) else None
        found = facts.get("iperf_nic_counters") if isinstance(facts, Mapping) else None
        if isinstance(found, Mapping):
            readings[host] = dict(found)
        elif isinstance(registered, Mapping) and not registered.get("skipped") and registered.get("msg"):
            readings[host] = {"error": f"the NIC read on {host} failed: {_message(registered)}"}
        else:
            readings[host] = {"error": f"the NIC counters of {host} were not read in run {run['run']}"}
    return readings


def _nic_record(run: Mapping[str, Any], by_host: Mapping[str, Mapping[str, Any]]) -> dict[str, object] | None:
    """The run record's ``nic``: ``{mode, before, after}`` (``None`` where this run read nothing)."""
    if not run.get("nic_before") and not run.get("nic_after"):
        return None
    return {
        "mode": run.get("nic_counters"),
        "before": _nic_readings(run, by_host, "nic_before") if run.get("nic_before") else None,
        "after": _nic_readings(run, by_host, "nic_after") if run.get("nic_after") else None,
    }


def _cpu_record(run: Mapping[str, Any], by_host: Mapping[str, Mapping[str, Any]]) -> dict[str, object] | None:
    """The run record's ``cpu``: ``{host: cpu.reading.host_cpu(before, after)}`` of the run's ``cpu_hosts`` (``None``
    where this run read no CPU)."""
    hosts = run.get("cpu_hosts") or ()
    if not hosts:
        return None
    return {
        host: host_cpu((by_host.get(host) or {}).get("cpu_before"), (by_host.get(host) or {}).get("cpu_after"))
        for host in sorted(hosts)
    }


def reports_from_host_vars(host_vars: Sequence[Any]) -> list[dict[str, object] | None]:
    """The per-host reports of :func:`build_record` from the hosts' variables (``hostvars`` entries)."""
    reports: list[dict[str, object] | None] = []
    for entry in host_vars:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("inventory_hostname"), str):
            reports.append(None)
            continue
        report: dict[str, object] = {"host": entry["inventory_hostname"]}
        for key, (name, field) in HOST_REPORT_VARS.items():
            value = entry.get(name)
            if field is not None:
                value = value.get(field) if isinstance(value, Mapping) else None
            report[key] = value
        reports.append(report)
    return reports


def build_record(
    run: PlannedRun,
    reports: Sequence[Any],
    *,
    barrier: Mapping[str, object] | None = None,
    previous: Sequence[Any] = (),
) -> RunRecord:
    """The record of one run, from the per-host reports registered during it.

    ``reports`` holds one item per host of the play (``None`` for a host with nothing to
    report): ``{host, run, servers, clients, stops, failure}`` where ``servers``/``clients``/
    ``stops`` are the registered results of the looped ``iperf_run`` tasks and ``failure``
    what the rescue saw (``{run, task, msg}``). Items of other runs are ignored (a host that
    failed early keeps the registered results of an earlier run).

    ``barrier`` is ``{run, start_at, start_delay}``: the common start time given to the clients
    and how far ahead of the moment it was set (ignored when it belongs to another run).
    ``barrier_margin`` is the time the slowest client had left when it reached the barrier
    (negative: it was late and started at once); ``dispatch_time`` the time from setting the
    start time to that client's arrival (``start_delay - barrier_margin``).

    ``previous`` holds the records of the runs before (``paired_test_results``): with a ``repeat``
    dictionary, ``stability`` is ``paired.stability.assess()`` over the totals of this run's point
    so far (this run included) - the role skips the point's remaining runs once it is ``done``.
    """
    number = run["run"]
    start_at: float | None = None
    start_delay: float | None = None
    if run.get("barrier") and isinstance(barrier, Mapping) and barrier.get("run") == number:
        start_at = _float_or_none(barrier.get("start_at"))
        start_delay = _float_or_none(barrier.get("start_delay"))
    by_host: dict[str, Mapping[str, Any]] = {}
    for report in reports:
        if isinstance(report, Mapping) and isinstance(report.get("host"), str):
            by_host[report["host"]] = report
    pairs: list[PairRecord] = []
    external_warnings: list[str] = []
    for pair in run["pairs"]:
        if pair.get("external"):
            records, notes = _external_records(pair, by_host, number, run.get("streams"))
            pairs.extend(records)
            external_warnings.extend(notes)
        else:
            pairs.append(_pair_record(pair, by_host, number))
    for entry in pairs:
        if entry.get("external"):
            _check_claims(entry)
    rates = [rate for p in pairs if (rate := _headline(p)) is not None]
    ok = all(p["ok"] for p in pairs)
    total = math.fsum(rates) if ok else None
    # The client tests of an external pair add up only when they ran at the same time: iperf2 clients the
    # server logged as one test (one group). An iperf3 server serves one test at a time.
    one_by_one = sorted(
        {
            p["pair"]
            for p in pairs
            if p.get("measured_by") == "server"
            and len({q["external"]["group"] for q in pairs if q["pair"] == p["pair"]}) > 1
        }
    )
    if ok and one_by_one:
        total = None
        external_warnings.append(
            f"pair(s) {_join(one_by_one)}: the external client tests came one after the other (an iperf3 server "
            "serves one test at a time), so each result is its own figure and the run has no total"
        )
    starts = [p["started_at"] for p in pairs if isinstance(p["started_at"], int | float)]
    spread = max(starts) - min(starts) if len(starts) == len(pairs) and len(pairs) > 1 else None
    errors = [f"pair {p['pair']} ({_ends(p)}): {p['error']}" for p in pairs if p["error"]]
    warnings: list[str] = list(external_warnings)
    arrivals = [p["arrived_at"] for p in pairs if isinstance(p["arrived_at"], int | float)]
    margin = round(start_at - max(arrivals), 6) if start_at is not None and arrivals else None
    if margin is not None and margin < 0:
        warnings.append(
            f"a client reached the barrier {-margin:.3f} s after the common start time and started at once "
            f"(start_delay {start_delay} s was too short); see start_spread. Set paired_test_start_delay higher"
        )
    for p in pairs:
        result = p["result"]
        if p["ok"] and result is not None and not result["complete"]:
            detail = "; ".join(result["warnings"]) or "see its warnings"
            warnings.append(f"pair {p['pair']}: the result is incomplete ({detail})")
        if p["server_stop"] in ("failed", "unreachable"):
            warnings.append(
                f"pair {p['pair']}: the server on {p['server']} port {p['port']} could not be stopped "
                f"({p['server_stop']}); its guard ends it after server_timeout={run.get('server_timeout')} s"
            )
    if not ok:
        warnings.append(f"{len(errors)} of {len(pairs)} pair(s) failed: total_bits_per_second is null (no partial sum)")
    stability: dict[str, object] | None = None
    spec = run.get("stability")
    if isinstance(spec, Mapping):
        point = run.get("point")
        samples = [
            _float_or_none(r.get("total_bits_per_second"))
            for r in previous
            if isinstance(r, Mapping) and r.get("point") == point and r.get("run") != number
        ]
        stability = assess([*samples, total], RepeatSpec(**spec))
    return {
        "schema_version": RECORD_VERSION,
        "run": number,
        "test": run["test"],
        "streams": run["streams"],
        "sweep": run.get("sweep", False),
        "direction": run["direction"],
        "swapped": run["swapped"],
        "repetition": run["repetition"],
        "tool": run.get("tool"),
        "protocol": run.get("protocol"),
        "duration": run.get("duration"),
        "labels": dict(run.get("labels") or {}),
        "start_at": start_at,
        "start_delay": start_delay,
        "barrier_margin": margin,
        "dispatch_time": round(start_delay - margin, 6) if margin is not None and start_delay is not None else None,
        "start_spread": spread,
        "pairs": pairs,
        "total_bits_per_second": total,
        "ok": ok,
        "complete": ok and all(p["result"] is not None and p["result"]["complete"] for p in pairs),
        "failed_pairs": sum(not p["ok"] for p in pairs),
        "errors": errors,
        "warnings": warnings,
        "point": run.get("point"),
        "order": run.get("order"),
        "shuffle_seed": run.get("shuffle_seed"),
        "combine_swapped": bool(run.get("combine_swapped")),
        "stability": stability,
        "nic": _nic_record(run, by_host),
        "cpu": _cpu_record(run, by_host),
    }
