# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""ESXi host CPU from PerformanceManager series (``cpu.vsphere.figures``): the samples that overlap the run, the host
and core means in percent (the API's hundredths), the window and its coverage, and no figure where the API gave none.
The query itself runs over SOAP against govmomi's simulator (tests/integration/test_host_cpu_vcsim.py)."""

from __future__ import annotations

from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.cpu.vsphere import CPU_COUNTER, figures

# three 20 s samples ending at 1000, 1020, 1040 (epoch seconds: each covers the 20 s before); a run from 1005 to
# 1015 overlaps the second only, one from 1010 to 1030 the last two
SERIES: dict[str, Any] = {
    "interval": 20,
    "timestamps": [1000.0, 1020.0, 1040.0],
    "counters": {
        CPU_COUNTER: {"": [2500, 3500, 9000], "0": [1000, 3000, 9000], "1": [4000, 4000, 9000]},
        "net.droppedRx.summation": {"vmnic0": [1, 2, 50], "": []},
        "net.packetsRx.summation": {"vmnic0": [100, 200, 5000]},
    },
    "reason": None,
}


def test_the_samples_that_overlap_the_run_give_the_figures() -> None:
    one = figures(SERIES, 1005.0, 1015.0)
    assert (one["mean_percent"], one["max_core_percent"], one["max_core"], one["cores"]) == (35.0, 40.0, "cpu1", 2)
    assert (one["samples"], one["window_start"], one["window_end"], one["seconds"], one["coverage"]) == (
        1, 1000.0, 1020.0, 20.0, 0.5,
    )  # fmt: skip
    two = figures(SERIES, 1010.0, 1030.0)
    assert (two["mean_percent"], two["max_core_percent"], two["max_core"], two["samples"]) == (62.5, 65.0, "cpu1", 2)
    assert two["coverage"] == 0.5 and two["seconds"] == 40.0  # 20 s of the run in a 40 s window
    assert two["net"] == {"vmnic0": {"droppedRx": 52, "packetsRx": 5200}, "(host)": {"droppedRx": None}}
    assert two["raw"] == SERIES and two["reason"] is None


def test_no_overlapping_sample_and_missing_values_give_no_figure() -> None:
    late = figures(SERIES, 1100.0, 1110.0)
    assert late["mean_percent"] is None and late["reason"].startswith("no 20 s sample of the PerformanceManager")
    gaps = dict(SERIES, counters={CPU_COUNTER: {"": [2500, -1, 1], "0": [1000, 3000, 1000]}})
    entry = figures(gaps, 1010.0, 1030.0)
    assert entry["mean_percent"] is None and entry["max_core_percent"] == 20.0 and entry["max_core"] == "cpu0"
    assert entry["reason"] == f"{CPU_COUNTER} of the host (instance '') missing a sample"
    bare = figures(dict(SERIES, counters={}), 1010.0, 1030.0)
    assert (
        bare["reason"] == f"{CPU_COUNTER} of the host (instance '') not returned; {CPU_COUNTER} per core not returned"
    )
    assert figures({"reason": "the vSphere API has 0 host(s)"}, 0.0, 1.0)["reason"] == "the vSphere API has 0 host(s)"
