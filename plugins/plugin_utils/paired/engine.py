# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One run of the plan, driven from the controller: every host's start, then the clients at the barrier, then every
host's stop, then the record.

The role runs each run as one task on one host (``esxilab.iperf.paired_test_host``); that task hands
:func:`drive` a step function per host of the run (the collection's actions over that host's own connection). The
hosts of a part work at the same time, each in a thread of the task; the parts follow each other. So a run costs one
task however many hosts it has, the plan's order is the order of the task's loop, and a host no run uses is never
contacted after the probe.

The barrier: when the last host of the run has started its servers, the clients' common start time is set to that
moment plus the start delay (``paired.start_delay``: learnt from how long the clients of earlier runs took to reach
it; for the first run with as many clients, from this run's start: :func:`first_dispatch`); every client waits for it
on its own host.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import RunRecord
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired import recorder
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.parts import (
    Part,
    Say,
    Step,
    clients_part,
    start_part,
    stop_part,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.planned import MAX_AT_ONCE, PlannedRun
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.record import build_record
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.start_delay import auto_start_delay

__all__ = ["ControllerGone", "Outcome", "drive", "each", "first_dispatch"]

_TASKS = {
    "start": "Start the servers (and read the NIC counters before the run)",
    "clients": "Run the clients together (and wait for external clients)",
}


class ControllerGone(RuntimeError):
    """The play that asked for the run has ended (Ctrl-C): nothing more is done on the hosts."""


@dataclass
class Outcome:
    """What a run left: its record, whether the series stops after it, and what to show."""

    record: RunRecord
    halt: bool
    state: dict[str, object]
    warnings: list[str] = field(default_factory=list)
    failed_hosts: dict[str, str] = field(default_factory=dict)


def each(hosts: Sequence[str], work: Callable[[str], Part]) -> dict[str, Part]:
    """``work(host)`` for every host at the same time; an exception is the host's failed part."""

    def guarded(host: str) -> Part:
        try:
            return work(host)
        except Exception as exc:  # pylint: disable=broad-exception-caught  # a bug fails the host
            return Part({}, failed=[f"{type(exc).__name__}: {exc}"])

    if not hosts:
        return {}
    if len(hosts) == 1:
        return {hosts[0]: guarded(hosts[0])}
    with ThreadPoolExecutor(max_workers=min(len(hosts), MAX_AT_ONCE)) as pool:
        return dict(zip(hosts, pool.map(guarded, hosts), strict=True))


def first_dispatch(
    began: float, answered: Iterable[float], ready: Sequence[float], steps: int, clients: int
) -> float | None:
    """How long handing the clients to their hosts should take, from the start just made (``began``; when each host's
    first step ``answered``; when each host was ``ready``; how many ``steps`` it made): the controller's work on a
    step, shared by every host's thread, and the SSH session's own latency. At least the quickest first answer (one
    step's latency), else the start's time per step times the ``clients`` to hand. ``None`` without a step."""
    first = [t - began for t in answered]
    if not first or not ready or steps <= 0:
        return None
    return max(min(first), (max(ready) - began) * clients / steps)


def drive(
    run: PlannedRun,
    steps: Mapping[str, Step],
    options: Mapping[str, Mapping[str, Any]],
    *,
    state: Mapping[str, Any],
    previous: Sequence[Any],
    esxi_hosts: frozenset[str],
    continue_on_error: bool,
    say: Say,
    link_speeds: Mapping[str, Any] | None = None,
    read_steps: Mapping[str, Step] | None = None,
    clock: Callable[[], float] = time.time,
    alive: Callable[[], bool] = lambda: True,
) -> Outcome:
    """Make ``run`` on its hosts (``steps[host]``; ``options[host]``: the state directory and the tool options every
    ``iperf_run`` step of the host gets; ``link_speeds[host]``: its fact ``iperf_link_speeds``; ``read_steps[host]``: a
    second step function of the host, whose NIC and CPU readings are then made at the same time as its server starts
    and stops) and record it.
    ``state`` is the series' state before the run, ``previous`` the records so far; the outcome carries the state
    after it. ``alive()`` is asked before the clients and before the stop: when the play is gone (Ctrl-C ends
    ``ansible-playbook``, whose task this is), :class:`ControllerGone` is raised and nothing more is done - a stop
    made later could end the servers of the next run on the same ports; what was started is ended by its guard or
    by the next run's start (``iperf_run``'s leftovers)."""
    number = int(run["run"])

    def going_on() -> None:
        if not alive():
            raise ControllerGone(f"run {number}: the play has ended; nothing more is done on the hosts")

    pieces: dict[str, dict[str, dict[str, Any]]] = {kind: {} for kind in recorder.KINDS}
    failures: dict[str, dict[str, object]] = {}
    warnings: list[str] = []

    def note(kind: str, parts: Mapping[str, Part]) -> None:
        for host, part in parts.items():
            if part.piece:  # empty: the part raised - the host has no piece, the report says why
                pieces[kind][host] = part.piece
            warnings.extend(part.warnings)
            if part.failed and kind in _TASKS:
                failures[host] = {
                    "run": number,
                    "task": f"{_TASKS[kind]} - run {number}",
                    "msg": "; ".join(part.failed),
                }

    answered: dict[str, float] = {}  # host -> when its first step of the start answered
    made: list[str] = []  # one entry per step of the start (list.append is atomic)

    def timed(host: str, step: Step) -> Step:
        def made_step(name: str, args: Mapping[str, Any]) -> dict[str, Any]:
            out = step(name, args)
            made.append(host)
            answered.setdefault(host, clock())
            return out

        return made_step

    def start(host: str) -> Part:
        reader = (read_steps or {}).get(host)
        part = start_part(
            timed(host, steps[host]), run, host, options[host], say, timed(host, reader) if reader else None
        )
        part.piece["ready_at"] = round(clock(), 3)
        return part

    starting = sorted(set(run.get("server_hosts") or ()) | set(run.get("client_hosts") or ()))
    began = clock()
    note("start", each(starting, start))
    ready = recorder.ready_times(pieces["start"])
    client_hosts = set(run.get("client_hosts") or ())
    handed = sum(1 for p in run.get("pairs") or () if isinstance(p, Mapping) and p.get("client") in client_hosts)
    dispatch = first_dispatch(began, answered.values(), ready, len(made), handed)
    barrier: dict[str, object] | None = None
    start_at: float | None = None
    if run.get("barrier"):
        delay = auto_start_delay(run, state.get("dispatch") or (), dispatch)
        start_at = recorder.start_at(ready, delay, clock())
        barrier = {"run": number, "start_at": start_at, "start_delay": delay}

    going_on()

    def clients(host: str) -> Part:
        speeds = (link_speeds or {}).get(host)
        return clients_part(
            steps[host], run, host, options[host], say, start_at=start_at, esxi_hosts=esxi_hosts, link_speeds=speeds
        )

    note("clients", each([h for h in recorder.clients_hosts(run) if h not in failures], clients))
    going_on()
    note(
        "stop",
        each(
            recorder.stop_hosts(run, pieces["clients"]),
            lambda host: stop_part(steps[host], run, host, options[host], (read_steps or {}).get(host)),
        ),
    )

    missing = "its stop did not run"
    record = build_record(
        run,
        recorder.reports(run, pieces, failures.get, missing),
        barrier=barrier,
        previous=previous,
    )
    halt = recorder.halts(record, continue_on_error)
    return Outcome(
        record=record,
        halt=halt,
        state=recorder.next_state(state, record, halt),
        warnings=warnings,
        failed_hosts={host: str(failure["msg"]) for host, failure in failures.items()},
    )
