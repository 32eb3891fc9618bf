# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The host CPU beside throughput: each run's hosts as the record measured them, and a group's hosts over its runs.

The paired_test record carries ``cpu`` (record version 2, ``paired_test_host_cpu``): per host the mean CPU % of the
whole host and its busiest core over the run's interval, computed when the run was recorded
(``cpu/reading.py``); the report reads those figures and computes none of its own from raw counters:

* ``run_host_cpu()`` - a run's (or a part's) hosts: those of its pairs (server and client), each with its
  figures or ``None`` figures and the reason; ``None`` when the run read no CPU (an older record, a hand-made
  result, ``paired_test_host_cpu: false``);
* ``group_host_cpu()`` - a group's hosts over its runs: the mean of the runs' mean %, the largest max core %,
  and how many runs had the figure (a run without it is left out, never counted as 0).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["GroupHostCpu", "HostCpu", "group_host_cpu", "run_host_cpu"]


@dataclass(frozen=True)
class HostCpu:
    """One host's CPU over one run, as recorded."""

    host: str
    mean_percent: float | None
    max_core_percent: float | None
    max_core: str | None
    reason: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "mean_percent": self.mean_percent,
            "max_core_percent": self.max_core_percent,
            "max_core": self.max_core,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class GroupHostCpu:
    """One host's CPU over a group's runs."""

    host: str
    mean_percent: float | None  # the mean over the runs with the figure
    max_core_percent: float | None  # the largest over the runs
    runs: int  # the runs with a mean figure

    def as_dict(self) -> dict[str, Any]:
        return {"mean_percent": self.mean_percent, "max_core_percent": self.max_core_percent, "runs": self.runs}


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def run_host_cpu(record: Mapping[str, Any] | None, hosts: Sequence[str]) -> dict[str, HostCpu] | None:
    """The CPU of ``hosts`` (a run's or part's pair ends) from the run's ``record``; ``None`` when it read none."""
    cpu = record.get("cpu") if isinstance(record, Mapping) else None
    if not isinstance(cpu, Mapping):
        return None
    out: dict[str, HostCpu] = {}
    for host in sorted(set(hosts)):
        entry = cpu.get(host)
        if not isinstance(entry, Mapping):
            out[host] = HostCpu(host, None, None, None, "its CPU was not read in this run")
            continue
        core = entry.get("max_core")
        out[host] = HostCpu(
            host,
            _number(entry.get("mean_percent")),
            _number(entry.get("max_core_percent")),
            core if isinstance(core, str) else None,
            str(entry["reason"]) if entry.get("reason") else None,
        )
    return out


def group_host_cpu(runs: Sequence[Mapping[str, HostCpu] | None]) -> dict[str, GroupHostCpu] | None:
    """Each host's CPU over a group's runs (``run_host_cpu`` of each); ``None`` when no run read any."""
    read = [run for run in runs if run is not None]
    if not read:
        return None
    out: dict[str, GroupHostCpu] = {}
    for host in sorted({host for run in read for host in run}):
        means = [m for run in read if host in run and (m := run[host].mean_percent) is not None]
        cores = [c for run in read if host in run and (c := run[host].max_core_percent) is not None]
        out[host] = GroupHostCpu(
            host, round(sum(means) / len(means), 2) if means else None, max(cores) if cores else None, len(means)
        )
    return out
