# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ESXi hosts' CPU over every run of a series, from the vSphere API, into the run records.

An ESXi host's CPU is not in a ``/proc/stat`` (``reading.ESXI_HOST``): after the series, a query of the
host's PerformanceManager per run (``vsphere.query``, 20 s real-time samples) gives the run its figures
(``vsphere.figures`` over the run's window: from its clients' start to that plus its duration). A host
whose API cannot be asked gets the reason, never a guessed figure.

Plain data in and out; the query is handed in. Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.cpu.vsphere import figures

__all__ = ["run_window", "with_esxi_cpu"]

#: ``series_of(host, start, end)``: ``vsphere.query()``'s plain data for the host over ``[start, end]``.
SeriesOf = Callable[[str, float, float], Mapping[str, Any]]


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def run_window(record: Mapping[str, Any]) -> tuple[float, float] | None:
    """``(start, end)`` of the run's transfer in epoch seconds: the clients' common start (or the earliest client
    start without a barrier) plus the run's duration; ``None`` when the record has neither."""
    start = _number(record.get("start_at"))
    if start is None:
        starts = [
            s for p in record.get("pairs") or () if isinstance(p, Mapping) and (s := _number(p.get("started_at")))
        ]
        start = min(starts) if starts else None
    duration = _number(record.get("duration"))
    if start is None or duration is None:
        return None
    return start, start + duration


def with_esxi_cpu(
    records: Sequence[Mapping[str, Any]], esxi_hosts: Sequence[str], series_of: SeriesOf
) -> list[dict[str, Any]]:
    """``records`` with the CPU of each ESXi host of a run (its entry in ``cpu``) from the vSphere API: the samples
    of the run's window (kept beside the figures as ``raw``) and their figures. A run without a window (it did not
    start) keeps its entry."""
    out = [dict(r) for r in records]
    for record in out:
        cpu = record.get("cpu")
        window = run_window(record)
        if not isinstance(cpu, Mapping) or window is None:
            continue
        found = {host: figures(series_of(host, *window), *window) for host in cpu if host in esxi_hosts}
        if found:
            record["cpu"] = {**cpu, **found}
    return out
