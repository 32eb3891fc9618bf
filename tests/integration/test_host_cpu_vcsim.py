# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""ESXi host CPU through the vSphere API, proven on govmomi's simulator: ``cpu.vsphere.query`` asks its
PerformanceManager over real SOAP (pyVmomi) for ``cpu.usage.average`` of the host and of each core and the
NICs' packet and drop counters over a run's interval, and ``cpu.vsphere.figures`` turns the 20 s samples into the
record's figures.

The simulator's samples are generated (recorded ESXi values with noise), so the test checks what the API says and
that the figures are exactly those of the returned series, not a CPU level: the simulator's host has 2 CPU threads
(instances ``0`` and ``1``) and NICs ``vmnic0`` and ``vmnic1``.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.cpu.vsphere import CPU_COUNTER, figures, query
from tests.integration.labkit import vcsim_service

pytestmark = [pytest.mark.slow]


def test_the_performance_manager_gives_the_host_and_core_cpu_over_a_run(vcsim: dict[str, Any]) -> None:
    end = time.time()
    start = end - 10.0  # a 10 s run that just ended
    with vcsim_service(vcsim["vcsim_port"]) as si:
        series = query(si, None, start, end)
        named = query(si, "no-such-host", start, end)
    assert series["reason"] is None and series["interval"] == 20
    assert sorted(series["counters"][CPU_COUNTER]) == ["", "0", "1"]
    assert {"vmnic0", "vmnic1"} <= set(series["counters"]["net.droppedRx.summation"])
    assert len(series["timestamps"]) == len(series["counters"][CPU_COUNTER][""]) >= 2
    entry = figures(series, start, end)
    assert entry["kind"] == "esxi" and entry["reason"] is None and entry["cores"] == 2
    # the samples overlapping the run, and the figures exactly those of the returned values (hundredths of %)
    used = [i for i, t in enumerate(series["timestamps"]) if t > start and t - 20 < end]
    assert entry["samples"] == len(used) >= 1 and entry["window_end"] >= end - 20
    host = series["counters"][CPU_COUNTER][""]
    assert entry["mean_percent"] == round(sum(host[i] for i in used) / len(used) / 100.0, 2)
    cores = {name: round(sum(v[i] for i in used) / len(used) / 100.0, 2)
             for name, v in series["counters"][CPU_COUNTER].items() if name}  # fmt: skip
    assert (
        entry["max_core_percent"] == max(cores.values())
        and entry["max_core"] == f"cpu{max(cores, key=lambda name: cores[name])}"
    )
    packets = series["counters"]["net.packetsRx.summation"]["vmnic0"]
    assert entry["net"]["vmnic0"]["packetsRx"] == sum(packets[i] for i in used) > 0
    # the simulator has no drop data (its series of zeros reach pyVmomi with no value at all): no figure, not 0
    assert series["counters"]["net.droppedRx.summation"]["vmnic0"] == []
    assert entry["net"]["vmnic0"]["droppedRx"] is None
    assert 0.0 < entry["coverage"] <= 1.0 and entry["raw"] == series  # the API's series kept beside the figures
    assert named == {"reason": "the vSphere API has 0 host(s) named no-such-host (none)"}
