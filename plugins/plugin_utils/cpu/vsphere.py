# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""ESXi host CPU (and its NICs' packet and drop counters) over a run, from the vSphere API's PerformanceManager.

Why the API and not ``esxtop -b`` over SSH: the API needs nothing on the host (no shell session, no
``esxtop`` CSV whose columns change with the release and the host's devices), names its counters
(``cpu.usage.average``: hundredths of a percent, per host and per core instance), and the collection has
no recorded ``esxtop -b`` output to test a parser against, while govmomi's simulator serves a
PerformanceManager over real SOAP. The cost: a host's real-time statistics are 20 s samples, so a run
is covered by the samples that overlap it - ``window_start`` / ``window_end`` say which span the figures
are of, and ``coverage`` how much of that span was the run.

* ``figures()`` - pure: the samples (plain data, as ``query()`` returns them) to the run record's entry
  of the host, in the same shape as a Linux host's (``reading.host_cpu``) plus ``window_*``, ``coverage``,
  ``samples``, ``net`` (per instance: ``packetsRx``, ``packetsTx``, ``droppedRx``, ``droppedTx`` summed over
  the samples) and ``raw`` (the series as the API returned them);
* ``query()`` - the one call to the API: ``QueryAvailablePerfMetric`` and ``QueryPerf`` of the host over the
  interval (20 s samples), given a pyVmomi service instance (controller side; nothing runs on the host).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

__all__ = ["CPU_COUNTER", "NET_COUNTERS", "REALTIME_INTERVAL", "figures", "query", "session"]

#: The counters read, as ``group.name.rollup``.
CPU_COUNTER = "cpu.usage.average"
NET_COUNTERS = ("net.packetsRx.summation", "net.packetsTx.summation", "net.droppedRx.summation",
                "net.droppedTx.summation")  # fmt: skip
#: A host's real-time statistics: one sample per 20 s.
REALTIME_INTERVAL = 20
_SOURCE = "vSphere PerformanceManager cpu.usage.average (real-time, 20 s samples)"


def _overlap(sample_end: float, interval: float, start: float, end: float) -> float:
    return max(0.0, min(sample_end, end) - max(sample_end - interval, start))


def figures(series: Mapping[str, Any], start: float, end: float) -> dict[str, Any]:
    """The host's CPU over ``[start, end]`` (epoch seconds) from ``series`` (``query()``'s plain data:
    ``{timestamps: [epoch], interval: s, counters: {name: {instance: [value per sample]}}, reason}``).

    Only the samples whose interval overlaps the run are used. ``cpu.usage.average`` is in hundredths of a
    percent: the host's (instance ``""``) mean over those samples is ``mean_percent``, the core (instance
    ``"0"``, ``"1"``, ...) with the highest mean is ``max_core``. A figure the API did not return is ``None``
    with the reason."""
    out: dict[str, Any] = {"kind": "esxi", "source": _SOURCE, "mean_percent": None, "max_core_percent": None,
                           "max_core": None, "cores": None, "seconds": None, "reason": series.get("reason"),
                           "window_start": None, "window_end": None, "coverage": None, "samples": 0, "net": {},
                           "raw": dict(series)}  # fmt: skip
    if out["reason"]:
        return out
    interval = float(series.get("interval") or REALTIME_INTERVAL)
    stamps: Sequence[float] = series.get("timestamps") or ()
    used = [i for i, stamp in enumerate(stamps) if _overlap(stamp, interval, start, end) > 0]
    if not used:
        out["reason"] = (
            f"no {interval:g} s sample of the PerformanceManager overlaps the run ({len(stamps)} returned); "
            "a host publishes a real-time sample every 20 s - read again after the run's end plus 20 s"
        )
        return out
    first, last = min(stamps[i] for i in used) - interval, max(stamps[i] for i in used)
    out.update(window_start=first, window_end=last, samples=len(used), seconds=round(last - first, 3))
    out["coverage"] = round(sum(_overlap(stamps[i], interval, start, end) for i in used) / (last - first), 3)
    counters: Mapping[str, Mapping[str, Sequence[int]]] = series.get("counters") or {}

    def mean(values: Sequence[int]) -> float | None:
        picked = [values[i] for i in used if i < len(values) and values[i] >= 0]  # -1: no value for that sample
        return round(sum(picked) / len(picked) / 100.0, 2) if len(picked) == len(used) else None

    usage = counters.get(CPU_COUNTER) or {}
    host = mean(usage[""]) if "" in usage else None
    cores = {name: mean(values) for name, values in usage.items() if name.isdigit()}
    out["mean_percent"] = host
    out["cores"] = len(cores) or None
    reasons = []
    if host is None:
        reasons.append(
            f"{CPU_COUNTER} of the host (instance '') " + ("missing a sample" if "" in usage else "not returned")
        )
    if cores and all(v is not None for v in cores.values()):
        best = max(cores, key=lambda name: (cores[name] or 0.0, -int(name)))
        out["max_core_percent"], out["max_core"] = cores[best], f"cpu{best}"
    else:
        reasons.append(f"{CPU_COUNTER} per core " + ("missing a sample" if cores else "not returned"))
    out["reason"] = "; ".join(reasons) or None
    for name in NET_COUNTERS:
        short = name.split(".")[1]
        for instance, values in (counters.get(name) or {}).items():
            picked = [values[i] for i in used if i < len(values)]
            total = sum(picked) if len(picked) == len(used) and all(v >= 0 for v in picked) else None
            out["net"].setdefault(instance or "(host)", {})[short] = total
    return out


def _epoch(moment: datetime) -> float:
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def query(si: Any, host_name: str | None, start: float, end: float) -> dict[str, Any]:
    """The series of ``CPU_COUNTER`` and ``NET_COUNTERS`` of the host ``host_name`` (the only host when ``None``)
    from ``start - 20 s`` to ``end + 20 s`` (epoch seconds), as plain data for ``figures()``; a problem of the
    API (no such host, no such counter) is the ``reason``, never an exception."""
    from pyVmomi import vim  # pyVmomi: a controller requirement of the vSphere parts only

    content = si.RetrieveContent()
    view = content.viewManager.CreateContainerView(content.rootFolder, [vim.HostSystem], True)
    try:
        hosts = [h for h in view.view if host_name is None or h.name == host_name]
    finally:
        view.Destroy()
    if len(hosts) != 1:
        names = ", ".join(sorted(h.name for h in hosts)) or "none"
        return {"reason": f"the vSphere API has {len(hosts)} host(s) named {host_name or '(any)'} ({names})"}
    manager = content.perfManager
    keys = {f"{c.groupInfo.key}.{c.nameInfo.key}.{c.rollupType}": c.key for c in manager.perfCounter}
    wanted = {keys[name]: name for name in (CPU_COUNTER, *NET_COUNTERS) if name in keys}
    if CPU_COUNTER not in wanted.values():
        return {"reason": f"the PerformanceManager has no counter {CPU_COUNTER}"}
    available = manager.QueryAvailablePerfMetric(entity=hosts[0], intervalId=REALTIME_INTERVAL)
    metrics = [m for m in available if m.counterId in wanted]
    query_spec: Any = vim.PerformanceManager.QuerySpec  # pyVmomi's data objects are untyped
    spec = query_spec(
        entity=hosts[0], metricId=metrics, intervalId=REALTIME_INTERVAL, format="normal",
        maxSample=int((end - start) // REALTIME_INTERVAL) + 3,  # the samples of the span asked for, and no more
        startTime=datetime.fromtimestamp(start - REALTIME_INTERVAL, UTC),
        endTime=datetime.fromtimestamp(end + REALTIME_INTERVAL, UTC),
    )  # fmt: skip
    found = manager.QueryPerf(querySpec=[spec])
    if not found:
        return {"reason": "QueryPerf returned no samples for the host"}
    entity = found[0]
    samples = list(entity.sampleInfo or [])
    counters: dict[str, dict[str, list[int]]] = {}
    for value in entity.value or []:
        counters.setdefault(wanted[value.id.counterId], {})[value.id.instance] = [int(v) for v in value.value]
    interval = samples[0].interval if samples else REALTIME_INTERVAL
    return {
        "host": hosts[0].name,
        "interval": interval,
        "timestamps": [_epoch(s.timestamp) for s in samples if s.timestamp is not None],
        "counters": counters,
        "reason": None if samples else "QueryPerf returned no samples for the host",
        "queried": [_epoch(spec.startTime), _epoch(spec.endTime)],
    }


@contextmanager
def session(hostname: str, port: int, username: str, password: str, validate_certs: bool) -> Iterator[Any]:
    """A pyVmomi service instance of the vSphere endpoint (an ESXi host's own API or a vCenter), logged out after."""
    import ssl  # imported here with pyVmomi: a play without an ESXi host never needs it

    from pyVim import connect  # pyVmomi: a controller requirement of the vSphere parts only

    context = ssl.create_default_context()
    if not validate_certs:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    smart_connect: Any = connect.SmartConnect  # untyped in pyVmomi
    disconnect: Any = connect.Disconnect
    si = smart_connect(host=hostname, port=port, user=username, pwd=password, sslContext=context)
    try:
        yield si
    finally:
        disconnect(si)
