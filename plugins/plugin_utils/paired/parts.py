# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One host's part of a run - start, clients, stop - as the steps of the collection's own actions.

Each part calls ``step(name, args)``: the action ``esxilab.iperf.<name>`` (``iperf_run``,
``iperf_facts``) run over the host's connection, its result as a task of its own would return it
(``paired.engine`` hands each host its own). A part returns the host's piece of the run (what the
record is built from: ``paired.recorder.REPORT_KEYS``), the problems that fail the host's part, and
the warnings to show. Nothing here knows Ansible: the unit tests give it steps of their own.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.cpu.reading import split_reading
from ansible_collections.esxilab.iperf.plugins.plugin_utils.latency.option import with_interface

__all__ = ["Part", "Step", "clients_part", "given", "probe_part", "start_part", "stop_part"]

#: ``step(action, args)``: the result of the action ``esxilab.iperf.<action>`` run with ``args`` on the host.
Step = Callable[[str, Mapping[str, Any]], dict[str, Any]]
#: What the part says to the person running the play (a server outside the inventory to start, ...).
Say = Callable[[str], None]


@dataclass
class Part:
    """What one host did in one part of a run."""

    piece: dict[str, Any]
    failed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def given(**options: Any) -> dict[str, Any]:
    """The options that are set (Ansible's ``omit``: a falsy value is left out)."""
    return {name: value for name, value in options.items() if value not in (None, "")}


def _pairs(run: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [p for p in run.get("pairs") or [] if isinstance(p, Mapping)]


def _lost(outcome: Mapping[str, Any]) -> bool:
    return bool(outcome.get("unreachable"))


def reading_of(run: Mapping[str, Any], host: str, when: str) -> dict[str, Any] | None:
    """What the host reads ``before`` the run (start) or ``after`` it (stop) - ``nic_counters_of`` and
    ``cpu_times``, as ``iperf_facts`` and ``iperf_run``'s ``reading`` take them - or ``None``: nothing."""
    addresses = list((run.get("nic_addresses") or {}).get(host) or ()) if run.get(f"nic_{when}") else []
    cpu = host in (run.get("cpu_hosts") or ())
    if not addresses and not cpu:
        return None
    return {**({"nic_counters_of": addresses} if addresses else {}), **({"cpu_times": True} if cpu else {})}


def split(found: Mapping[str, Any], reading: Mapping[str, Any]) -> tuple[Any, Any]:
    """``(the result for the NIC, the CPU reading)`` of a reading's result (``split_reading``)."""
    return split_reading(found, nic=bool(reading.get("nic_counters_of")), cpu=bool(reading.get("cpu_times")))


def reads(step: Step, run: Mapping[str, Any], host: str, when: str) -> tuple[Any, Any]:
    """The NIC counters and the host CPU, read ``before`` the run (start) or ``after`` it (stop) in one
    ``iperf_facts``: ``(its result for the NIC, the CPU reading)``, each ``None`` when not read."""
    reading = reading_of(run, host, when)
    if reading is None:
        return None, None
    return split(step("iperf_facts", {"gather_tools": False, **reading}), reading)


def rides(
    run: Mapping[str, Any], host: str, options: Mapping[str, Any], when: str, *, client: bool = False
) -> dict[str, Any] | None:
    """The reading the host's first server start (``before``) or stop (``after``) makes in its own session, or with
    ``client`` its client after the test (a host without a server in the run: ``after``) - ``iperf_run`` option
    ``reading`` - or ``None``: nothing to read, no such step of the host, or a host not known to be quick to read -
    ESXi (its ``esxcli`` calls take seconds, made at the same time as the servers' over a second session instead) or
    a host whose probe is not known."""
    probe = options.get("probe")
    caps = probe.get("caps") if isinstance(probe, Mapping) else None
    if not isinstance(caps, Mapping) or caps.get("esxi") is not False:
        return None
    pairs = _pairs(run)
    if client:
        only_a_client = any(p.get("client") == host for p in pairs) and all(p.get("server") != host for p in pairs)
        return reading_of(run, host, when) if only_a_client else None
    serves = any(p.get("server") == host and not p.get("external_server") for p in pairs)
    return reading_of(run, host, when) if serves else None


class _Carried:
    """A reading (:func:`rides`, ``None``: none) carried by the first ``iperf_run`` step of a part: the step's extra
    arguments, then the NIC and CPU readings it made (its ``reading``, missing when the step failed: the reason)."""

    def __init__(self, ride: Mapping[str, Any] | None) -> None:
        self.ride = ride
        self.made: tuple[Any, Any] | None = None

    def args(self) -> dict[str, Any]:
        return {"reading": self.ride} if self.ride is not None and self.made is None else {}

    def take(self, outcome: Mapping[str, Any]) -> dict[str, Any]:
        """``outcome`` without its reading, kept for :meth:`readings` (the first step's only)."""
        out = dict(outcome)
        found = out.pop("reading", None)
        if self.ride is not None and self.made is None:
            if not isinstance(found, Mapping):
                found = {"failed": True, "msg": f"no reading: {out.get('msg') or 'the script made none'}"}
            self.made = split(found, self.ride)
        return out

    def readings(self) -> tuple[Any, Any]:
        return self.made or (None, None)


@contextmanager
def reading(
    read_step: Step | None, step: Step, run: Mapping[str, Any], host: str, when: str
) -> Iterator[Callable[[], Any]]:
    """:func:`reads` of the host, made while the block runs when ``read_step`` is given (a second step function of
    the host: its own connection plugin, for a second session at the same time), else before it with ``step``; the
    block's ``got()`` returns them once both are done."""
    if read_step is None:
        done = reads(step, run, host, when)
        yield lambda: done
        return
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(reads, read_step, run, host, when)
        yield future.result


def start_part(
    step: Step, run: Mapping[str, Any], host: str, options: Mapping[str, Any], say: Say, read_step: Step | None = None
) -> Part:
    """Read the NIC counters and the CPU before the run and start the host's servers (a failed start stops the loop:
    the ones started are stopped by the stop part). With ``read_step`` the reading and the starts are made at the same
    time: the reading is done before the clients start all the same."""
    carried = _Carried(rides(run, host, options, "before"))
    if carried.ride is not None:
        part = _start_servers(step, run, host, options, say, carried)
        nic, cpu = carried.readings()
    else:
        with reading(read_step, step, run, host, "before") as got:
            part = _start_servers(step, run, host, options, say, carried)
            nic, cpu = got()
    part.piece.update(nic_before=nic, cpu_before=cpu)
    return part


def _start_servers(
    step: Step,
    run: Mapping[str, Any],
    host: str,
    options: Mapping[str, Any],
    say: Say,
    carried: _Carried,
) -> Part:
    """Start the host's servers; the first start makes the reading ``carried`` holds, if any."""
    part = Part({})
    for pair in _pairs(run):
        outside = pair.get("external_server")
        if pair.get("client") == host and isinstance(outside, Mapping):
            say(
                f"Pair {pair['pair']}: the client on {host} connects to {pair['address']}:{pair['port']}, a "
                "server outside the inventory - it must be listening there now (iperf3.exe on Windows takes "
                f"the same arguments): {outside.get('command')}"
            )
    items: list[dict[str, Any]] = []
    for pair in _pairs(run):
        if pair.get("server") != host or pair.get("external_server"):
            continue
        args = {
            **(run.get("iperf_server") or {}),
            "mode": "server",
            "port": pair["port"],
            "one_off": bool(pair.get("one_off")),
            **given(bind=pair.get("bind")),
            **options,
            **carried.args(),
        }
        outcome = carried.take(step("iperf_run", args))
        items.append({**outcome, "item": pair})
        # servers an interrupted run left on this port, stopped before this start: said, not only recorded
        part.warnings += [f"pair {pair['pair']}: {note}" for note in outcome.get("leftovers") or []]
        if outcome.get("failed") or _lost(outcome):
            part.failed.append(f"pair {pair['pair']}: {outcome.get('msg', 'the server did not start')}")
            break
    part.piece["servers"] = {"results": items}
    return part


def clients_part(
    step: Step,
    run: Mapping[str, Any],
    host: str,
    options: Mapping[str, Any],
    say: Say,
    *,
    start_at: float | None,
    esxi_hosts: frozenset[str],
    link_speeds: Any = None,
) -> Part:
    """Run the host's clients (at ``start_at`` when the run has a barrier), then wait for the external clients of
    the host's servers. ``link_speeds`` - the host's fact ``iperf_link_speeds`` (an ESXi client's pings of latency
    under load go out of the VMkernel adapter of its test address)."""
    part = Part({})
    items: list[dict[str, Any]] = []
    carried = _Carried(rides(run, host, options, "after", client=True))
    for pair in _pairs(run):
        if pair.get("client") != host:
            continue
        peer = pair.get("server")
        address = [pair.get("client_bind"), *(run.get("nic_addresses") or {}).get(host, [])]
        args = {
            **(run.get("iperf_client") or {}),
            **with_interface(run.get("iperf_client"), link_speeds, address),
            "mode": "client",
            "server": pair["address"],
            "port": pair["port"],
            "labels": pair.get("labels") or {},
            # an ESXi server's sending (reverse) carries its garbage TCP_INFO retransmits: dropped
            "peer_is_esxi": peer is not None and peer in esxi_hosts,
            **given(bind=pair.get("client_bind"), start_at=start_at),
            **options,
            **carried.args(),
        }
        outcome = carried.take(step("iperf_run", args))
        items.append({**outcome, "item": pair})
        if outcome.get("failed") or _lost(outcome):
            part.failed.append(f"pair {pair['pair']}: {outcome.get('msg', 'the client failed')}")
    part.piece["clients"] = {"results": items}
    if carried.ride is not None:  # the host's readings after the run, made once its test is done: its stop has none
        part.piece["nic_after"], part.piece["cpu_after"] = carried.readings()
    collects = []
    for pair in _pairs(run):
        external = pair.get("external")
        if pair.get("server") != host or part.failed or not isinstance(external, Mapping):
            continue
        say(
            f"Pair {pair['pair']}: waiting up to {external.get('deadline')} s for {external.get('count')} "
            f"client test(s){(' from ' + str(external['from'])) if external.get('from') else ''}; on the "
            f"external host run (iperf3.exe on Windows takes the same arguments): {external.get('command')}"
        )
        args = {
            "mode": "collect",
            "port": pair["port"],
            "clients": external.get("count"),
            "deadline": external.get("deadline"),
            "labels": pair.get("labels") or {},
            **given(bind=pair.get("bind"), peer=external.get("from"), state_dir=options.get("state_dir")),
        }
        outcome = step("iperf_run", args)
        collects.append({**outcome, "item": pair})
    part.piece["collects"] = {"results": collects}
    return part


def stop_part(
    step: Step, run: Mapping[str, Any], host: str, options: Mapping[str, Any], read_step: Step | None = None
) -> Part:
    """Stop the host's servers and read the NIC counters and the CPU after the run (with ``read_step``, at the same
    time: the clients are done, a stop moves no test traffic). Nothing is read from a host whose stop lost it."""
    part = Part({})
    items: list[dict[str, Any]] = []
    lost = False
    carried = _Carried(rides(run, host, options, "after"))
    if carried.ride is not None:
        context = _made(carried.readings)
    elif read_step is not None:
        context = reading(read_step, step, run, host, "after")
    else:
        context = _after(step, run, host)
    with context as got:
        for pair in _pairs(run):
            if pair.get("server") != host or pair.get("external_server") or lost:
                continue
            args = {
                "mode": "stop",
                "port": pair["port"],
                # the host's tools known: one session, the script reads the pidfile (no probe before it)
                **given(bind=pair.get("bind"), state_dir=options.get("state_dir"), probe=options.get("probe")),
                **carried.args(),
            }
            outcome = carried.take(step("iperf_run", args))
            items.append({**outcome, "item": pair})
            lost = _lost(outcome)
        after = got() if not lost else (None, None)
    part.piece["stops"] = {"results": items}
    part.piece["nic_after"], part.piece["cpu_after"] = after
    return part


@contextmanager
def _made(got: Callable[[], Any]) -> Iterator[Callable[[], Any]]:
    """The reading the block's steps made themselves (``iperf_run``'s ``reading``)."""
    yield got


@contextmanager
def _after(step: Step, run: Mapping[str, Any], host: str) -> Iterator[Callable[[], Any]]:
    """The reading after the block (the stops), with the same step: one session after the other."""
    yield lambda: reads(step, run, host, "after")


def probe_part(step: Step, require: list[str], link_speed_of: list[str], binary: Any = None) -> Part:
    """The host's one probe before the runs (``iperf_run mode=probe``: binaries, versions, the shell's clock and
    sleep tools; it fails on a host that cannot run an iperf family its runs use), and the link speed of its test
    addresses read in the probe's session (its ``reading``: ``iperf_facts``' ``link_speed_of``, no second session).
    The piece: ``probe`` (what the probe found) and ``link_speeds`` (the fact ``iperf_link_speeds``, when read; not
    when the probe failed)."""
    reading = {"reading": {"link_speed_of": list(link_speed_of)}} if link_speed_of else {}
    probe = step("iperf_run", {"mode": "probe", "require": list(require), **given(binary=binary), **reading})
    part = Part({"probe": probe.get("probe"), "link_speeds": None})
    part.warnings += list(probe.get("warnings") or [])
    if probe.get("failed") or _lost(probe):
        part.failed.append(str(probe.get("msg") or "the probe failed"))
        return part
    if link_speed_of:
        speeds = probe.get("reading")
        speeds = speeds if isinstance(speeds, Mapping) else {"failed": True, "msg": "the probe made no reading"}
        facts = speeds.get("ansible_facts")
        if speeds.get("failed") or not isinstance(facts, Mapping):
            part.failed.append(
                f"the link speed of {', '.join(link_speed_of)} could not be read: {speeds.get('msg', 'no message')}"
            )
            return part
        part.piece["link_speeds"] = facts.get("iperf_link_speeds")
    return part
