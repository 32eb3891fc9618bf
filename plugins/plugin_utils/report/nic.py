# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""NIC context of the report: the counter deltas around the runs and the NICs' driver/firmware.

The paired_test records carry NIC readings (``record["nic"]``: ``{mode, before, after}``, each
``{host: {address: reading}}`` as ``nic/counters.py`` reads them). This is the one place their deltas are made:

* ``span_delta()`` - between a before-reading and an after-reading: per NIC (host, address, interface)
  the change of every counter both readings have, and the sums ``rx_dropped``, ``tx_dropped``,
  ``rx_errors``, ``tx_errors`` (``DELTA_COUNTERS``) over the NICs. A counter that went backwards
  (a driver reset, a wrap) is ``None`` with a warning - never a negative number; a counter a NIC
  did not print makes the sum ``None``.
* ``run_delta()`` - a run whose record holds both readings (``paired_test_nic_counters: run``, or a
  test of one run): that run's delta.
* ``deltas_by_test()`` - per test, the before-reading of its first record and the after-reading of its
  last (``test`` mode): the whole test's delta.
* ``nic_environment()`` - driver, firmware, version, bus and link speed of every NIC read (with ``bridge`` for
  the ports of a bridge that holds a test address), for the report's environment section.

A NIC's deltas also cover its driver's own statistics (``driver.<key>``, Linux ``ethtool -S``, ESXi ``localcli ...
networkinternal nic privstats get``: ``None`` where not available, so its counters are null in the delta) and its
queueing disciplines (``qdisc.<key>``, Linux ``tc -s qdisc``); each NIC's ``losses`` (``report/losses.py``) say which
deltas are drops, errors, pause frames or ring exhaustion, and ``NicDelta.loss_lines()`` the warning lines of the
report and the play. Neither ``ip -s link`` nor ``esxcli network nic stats get`` prints pause frames: they come from
``ethtool -S`` and the ESXi private statistics where the driver counts them. Private module: not part of the
collection's public API.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.losses import findings, loss_line

__all__ = ["DELTA_COUNTERS", "NicDelta", "deltas_by_test", "nic_environment", "run_delta", "span_delta", "sum_deltas"]

#: The counters the report shows as columns (``nic_<name>``), summed over the NICs read.
DELTA_COUNTERS = ("rx_dropped", "tx_dropped", "rx_errors", "tx_errors")


@dataclass
class NicDelta:
    """The counter changes between two readings, summed (``counters``) and per NIC (``nics``)."""

    first_run: int | None
    last_run: int | None
    counters: dict[str, int | None]
    nics: list[dict[str, object]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "first_run": self.first_run,
            "last_run": self.last_run,
            "counters": dict(self.counters),
            "nics": self.nics,
            "warnings": list(self.warnings),
        }

    def loss_lines(self) -> list[str]:
        """One line per NIC and kind of loss that grew (``run 3 dropped 1,204 packets on vmnic1 of esx1
        (rx_missed_errors)``); ``runs 1-4`` for the delta of a test's runs."""
        first, last = self.first_run, self.last_run
        where = f"run {first}" if first == last else f"runs {first}-{last}"
        return [
            loss_line(where, str(nic["host"]), str(nic["nic"]), finding)
            for nic in self.nics
            for finding in nic.get("losses") or []  # type: ignore[attr-defined]
        ]


def _nics(readings: Any) -> dict[tuple[str, str, str], Mapping[str, Any]]:
    """``{(host, address, nic name): nic}`` of one reading ``{host: {address: reading}}``."""
    found: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    if not isinstance(readings, Mapping):
        return found
    for host, by_address in readings.items():
        if not isinstance(by_address, Mapping):
            continue
        for address, reading in by_address.items():
            if not isinstance(reading, Mapping):
                continue
            for nic in reading.get("nics") or []:
                if isinstance(nic, Mapping) and isinstance(nic.get("name"), str):
                    found[(str(host), str(address), nic["name"])] = nic
    return found


def _problems(readings: Any, when: str) -> list[str]:
    """Why a reading holds nothing: the hosts' ``error`` and the addresses' ``reason``."""
    out: list[str] = []
    for host, by_address in (readings or {}).items() if isinstance(readings, Mapping) else ():
        if not isinstance(by_address, Mapping):
            continue
        if isinstance(by_address.get("error"), str):
            out.append(f"{when}: {by_address['error']}")
            continue
        for address, reading in by_address.items():
            if isinstance(reading, Mapping) and reading.get("reason"):
                out.append(f"{when}: {host} {address}: {reading['reason']}")
    return out


def _flat(nic: Mapping[str, Any]) -> dict[str, Any]:
    """A NIC reading's counters in one name space: the rtnl names, ``driver.<key>`` and ``qdisc.<key>``."""
    out: dict[str, Any] = dict(nic["counters"]) if isinstance(nic.get("counters"), Mapping) else {}
    for source, prefix in (("driver_stats", "driver."), ("qdisc", "qdisc.")):
        extra = nic.get(source)
        if isinstance(extra, Mapping):
            out.update({f"{prefix}{key}": value for key, value in extra.items()})
    return out


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def span_delta(before: Any, after: Any, *, first_run: int | None = None, last_run: int | None = None) -> NicDelta:
    """The delta between two readings (``{host: {address: reading}}``); see the module docstring."""
    old, new = _nics(before), _nics(after)
    warnings = _problems(before, "before") + _problems(after, "after")
    nics: list[dict[str, object]] = []
    sums: dict[str, int | None] = dict.fromkeys(DELTA_COUNTERS, 0)
    for key in sorted(set(old) | set(new)):
        host, address, name = key
        if key not in old or key not in new:
            missing = "before" if key not in old else "after"
            warnings.append(f"{host} {address} {name}: not read {missing} the runs; its counters are not counted")
            sums = dict.fromkeys(DELTA_COUNTERS)
            continue
        first, last = _flat(old[key]), _flat(new[key])
        deltas: dict[str, int | None] = {}
        for counter in sorted(set(first) | set(last)):
            a, b = _count(first.get(counter)), _count(last.get(counter))
            if a is None or b is None:
                deltas[counter] = None
            elif b < a:
                deltas[counter] = None
                warnings.append(
                    f"{host} {address} {name}: {counter} went backwards ({a} -> {b}: a driver reset or a counter "
                    "wrap); its delta is unknown"
                )
            else:
                deltas[counter] = b - a
        for counter in DELTA_COUNTERS:
            value = deltas.get(counter)
            total = sums[counter]
            sums[counter] = None if value is None or total is None else total + value
        nics.append({"host": host, "address": address, "nic": name, "deltas": deltas, "losses": findings(deltas)})
    if not nics:
        sums = dict.fromkeys(DELTA_COUNTERS)
    return NicDelta(first_run=first_run, last_run=last_run, counters=sums, nics=nics, warnings=warnings)


def _run_number(record: Mapping[str, Any]) -> int | None:
    run = record.get("run")
    return run if isinstance(run, int) and not isinstance(run, bool) else None


def run_delta(record: Mapping[str, Any] | None) -> NicDelta | None:
    """The delta of one run: its record holds the before- and the after-reading; else ``None`` (not read)."""
    nic = record.get("nic") if isinstance(record, Mapping) else None
    if not isinstance(nic, Mapping) or nic.get("before") is None or nic.get("after") is None:
        return None
    run = _run_number(record)  # type: ignore[arg-type]
    return span_delta(nic["before"], nic["after"], first_run=run, last_run=run)


def deltas_by_test(records: Iterable[tuple[str, Mapping[str, Any] | None]]) -> dict[str, NicDelta | None]:
    """Per test (``(test, record)`` in run order): the delta from the first before-reading to the last after-reading
    of its records; ``None`` for a test whose records read nothing, or that has no after-reading (its last planned
    run was skipped) - the report says n/a."""
    spans: dict[str, tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]] = {}
    for test, record in records:
        first, last = spans.get(test, (None, None))
        nic = record.get("nic") if isinstance(record, Mapping) else None
        if isinstance(nic, Mapping) and isinstance(record, Mapping):
            if first is None and nic.get("before") is not None:
                first = record
            if nic.get("after") is not None:
                last = record
        spans[test] = (first, last)
    out: dict[str, NicDelta | None] = {}
    for test, (first, last) in spans.items():
        if first is None or last is None or (_run_number(last) or 0) < (_run_number(first) or 0):
            out[test] = None
            continue
        out[test] = span_delta(
            first["nic"]["before"], last["nic"]["after"], first_run=_run_number(first), last_run=_run_number(last)
        )
    return out


def sum_deltas(deltas: Sequence[NicDelta | None]) -> dict[str, int | None] | None:
    """The sums of several runs' deltas (a group): ``None`` when a run has none (not read); a counter is ``None``
    when a run's is."""
    if not deltas or any(d is None for d in deltas):
        return None
    sums: dict[str, int | None] = dict.fromkeys(DELTA_COUNTERS, 0)
    for delta in deltas:
        for counter in DELTA_COUNTERS:
            value, total = delta.counters.get(counter), sums[counter]  # type: ignore[union-attr]
            sums[counter] = None if value is None or total is None else total + value
    return sums


def nic_environment(records: Iterable[Mapping[str, Any] | None]) -> list[dict[str, object]]:
    """Driver, firmware, version, bus and link speed of every NIC read (its first reading), in order of appearance."""
    seen: dict[tuple[str, str, str], dict[str, object]] = {}
    for record in records:
        nic = record.get("nic") if isinstance(record, Mapping) else None
        if not isinstance(nic, Mapping):
            continue
        for when in ("before", "after"):
            readings = nic.get(when)
            for host, by_address in (readings or {}).items() if isinstance(readings, Mapping) else ():
                for address, reading in by_address.items() if isinstance(by_address, Mapping) else ():
                    if not isinstance(reading, Mapping):
                        continue
                    for item in reading.get("nics") or []:
                        key = (str(host), str(address), str(item.get("name")))
                        if key in seen or not isinstance(item, Mapping):
                            continue
                        seen[key] = {
                            "host": key[0],
                            "address": key[1],
                            "interface": reading.get("interface"),
                            "nic": key[2],
                            **{k: item.get(k) for k in ("driver", "firmware", "version", "bus_info", "speed_mbps")},
                            # a port of the bridge holding the address (a Linux bridge or OVS host, seed 003)
                            **({"bridge": item["bridge"]} if item.get("bridge") else {}),
                        }
    return list(seen.values())
