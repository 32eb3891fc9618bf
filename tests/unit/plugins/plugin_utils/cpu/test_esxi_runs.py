# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ESXi hosts' CPU over each run of a series, from the vSphere API's samples, into the run records."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.cpu.esxi_runs import run_window, with_esxi_cpu
from ansible_collections.esxilab.iperf.plugins.plugin_utils.cpu.reading import ESXI_HOST
from ansible_collections.esxilab.iperf.plugins.plugin_utils.cpu.vsphere import CPU_COUNTER


def _record(run: int, start_at: float | None, duration: float | None = 10.0, **extra: Any) -> dict[str, Any]:
    cpu = {"esx1": {"kind": None, "reason": ESXI_HOST}, "lin1": {"kind": "linux", "mean_percent": 12.0}}
    return {"run": run, "start_at": start_at, "duration": duration, "pairs": [], "cpu": cpu, **extra}


def _series(host: str, start: float, end: float) -> Mapping[str, Any]:
    """Samples every 20 s at 100, 120, 140, ...: the host at 25 %, its cores at 10 % and 40 %."""
    stamps = [t for t in range(100, 400, 20) if start - 20 < t < end + 20]
    values = {"": [2500] * len(stamps), "0": [1000] * len(stamps), "1": [4000] * len(stamps)}
    return {"host": host, "interval": 20, "timestamps": stamps, "counters": {CPU_COUNTER: values}, "reason": None}


def test_a_runs_window_is_its_start_plus_its_duration() -> None:
    assert run_window(_record(1, 105.0)) == (105.0, 115.0)
    pairs = [{"started_at": 107.5}, {"started_at": 106.0}, {"started_at": None}]
    assert run_window(_record(1, None, pairs=pairs)) == (106.0, 116.0)  # no barrier: the first client's start
    assert run_window(_record(1, None)) is None and run_window(_record(1, 105.0, duration=None)) is None


def test_each_run_gets_the_esxi_hosts_figures_of_its_own_window_and_the_linux_entries_stay() -> None:
    asked: list[tuple[str, float, float]] = []

    def series_of(host: str, start: float, end: float) -> Mapping[str, Any]:
        asked.append((host, start, end))
        return _series(host, start, end)

    records = with_esxi_cpu([_record(1, 105.0), _record(2, 205.0), _record(3, None)], ["esx1"], series_of)
    assert asked == [("esx1", 105.0, 115.0), ("esx1", 205.0, 215.0)]  # a run that did not start is not asked about
    first = records[0]["cpu"]["esx1"]
    assert (first["kind"], first["mean_percent"], first["max_core_percent"], first["max_core"]) == (
        "esxi",
        25.0,
        40.0,
        "cpu1",
    )
    assert first["window_start"] == 100.0 and first["window_end"] == 120.0 and first["coverage"] == 0.5
    assert first["raw"]["timestamps"] == [100, 120] and first["samples"] == 1  # what the API returned, kept
    assert records[0]["cpu"]["lin1"] == {"kind": "linux", "mean_percent": 12.0}
    assert records[2]["cpu"]["esx1"]["reason"] == ESXI_HOST  # unchanged


def test_a_host_whose_api_cannot_be_asked_keeps_no_figure_and_says_why() -> None:
    records = with_esxi_cpu([_record(1, 105.0)], ["esx1"], lambda host, s, e: {"reason": "no vSphere endpoint"})
    entry = records[0]["cpu"]["esx1"]
    assert entry["mean_percent"] is None and entry["reason"] == "no vSphere endpoint"
