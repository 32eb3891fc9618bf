# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Host CPU readings: ``iperf_facts``' script on this machine's shell (real ``/proc/stat``), the fact, the split of one
``iperf_facts`` result into the NIC and CPU readings, the plan's ``cpu_hosts`` and the run record's ``cpu``."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from ansible_collections.esxilab.iperf.plugins.action.iperf_facts import build_script, parse_probe_output
from ansible_collections.esxilab.iperf.plugins.plugin_utils.cpu.reading import (
    ESXI_HOST,
    NO_PROC_STAT,
    cpu_times_fact,
    host_cpu,
    split_reading,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.record import build_record
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.recorder import stop_hosts

PAIR = [{"server": "h1", "address": "198.18.0.1", "client": "h2", "client_address": "198.18.0.2"}]


def _read_here() -> dict[str, Any]:
    script = build_script("MK", gather_tools=False, cpu_times=True)
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60, check=True)
    probe = parse_probe_output(done.stdout, "MK")
    assert probe.finished
    return cpu_times_fact(probe.cpu.get("CPUSTAT"), probe.cpu.get("CPUUPTIME"))


def test_the_script_reads_this_machines_proc_stat_and_a_busy_loop_shows() -> None:
    """Two readings of the real /proc/stat around 0.5 s of a busy loop: the busiest core is busy, and the host's mean
    is at most the busiest core (the other CPUs may idle)."""
    before = _read_here()
    assert before["kind"] == "linux" and before["reason"] is None and before["stat"].startswith("cpu ")
    # every cpu line of /proc/stat, and only those (the shell's read loop stops at the first other line)
    names = [line.split()[0] for line in Path("/proc/stat").read_text().splitlines() if line.startswith("cpu")]
    assert [line.split()[0] for line in before["stat"].splitlines()] == names
    assert isinstance(before["uptime"], float) and before["uptime"] > 0
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:
        pass
    after = _read_here()
    entry = host_cpu(before, after)
    assert entry["reason"] is None and entry["kind"] == "linux" and entry["source"] == "/proc/stat"
    assert entry["before"] == before["stat"] and entry["after"] == after["stat"]  # the raw text beside the figures
    assert entry["max_core_percent"] >= 40.0 and entry["max_core"].startswith("cpu")
    assert 0.0 < entry["mean_percent"] <= entry["max_core_percent"]
    assert entry["cores"] == before["stat"].count("\ncpu") and 0.3 <= entry["seconds"] <= 30.0


def test_a_host_without_proc_stat_and_an_esxi_host_say_why() -> None:
    assert cpu_times_fact(("", "missing"), ("1.0 1.0\n", "0"))["reason"] == NO_PROC_STAT
    esxi = cpu_times_fact(("", "vmkernel"), ("", "1"))
    assert esxi == {"kind": None, "source": None, "stat": None, "uptime": None, "reason": ESXI_HOST}
    assert "vSphere API" in ESXI_HOST
    failed = cpu_times_fact(("sed: /proc/stat: Permission denied\n", "2"), None)
    assert failed["reason"] == "/proc/stat could not be read (status 2): sed: /proc/stat: Permission denied"
    assert cpu_times_fact(None, None)["reason"] == "the host's command printed no /proc/stat section"
    assert cpu_times_fact(("intr 1 2\n", "0"), None)["reason"] == "no 'cpu' line: this is not /proc/stat"
    no_uptime = cpu_times_fact(("cpu 1 1 1 1\n", "0"), ("cat: /proc/uptime: No such file or directory\n", "1"))
    assert no_uptime["kind"] == "linux" and no_uptime["uptime"] is None


def test_a_run_entry_without_two_readings_has_no_figure_and_says_why() -> None:
    reading = {"kind": "linux", "source": "/proc/stat", "stat": "cpu 1 1 1 1\n", "uptime": 2.0, "reason": None}
    assert host_cpu(None, reading)["reason"] == "the CPU was not read before the run"
    failed = host_cpu({"error": "lost the connection"}, reading)
    assert failed["reason"] == "the CPU read before the run failed: lost the connection"
    assert failed["after"] == "cpu 1 1 1 1\n" and failed["mean_percent"] is None
    esxi = host_cpu(
        {"kind": None, "stat": None, "reason": ESXI_HOST}, {"kind": None, "stat": None, "reason": ESXI_HOST}
    )
    assert esxi["reason"] == f"before the run: {ESXI_HOST}; after the run: {ESXI_HOST}" and esxi["kind"] is None
    # uptime that went backwards (another boot) leaves seconds unknown; the counters say the rest
    later = dict(reading, stat="cpu 3 1 1 3\n", uptime=1.0)
    assert host_cpu(reading, later)["seconds"] is None and host_cpu(reading, later)["mean_percent"] == 50.0


def test_one_iperf_facts_result_is_split_into_the_nic_and_the_cpu_reading() -> None:
    times = {"kind": "linux", "stat": "cpu 1 1 1 1\n"}
    found = {"changed": False, "ansible_facts": {"iperf_nic_counters": {"a": 1}, "iperf_cpu_times": times}}
    nic, cpu = split_reading(found, nic=True, cpu=True)
    assert nic == {"changed": False, "ansible_facts": {"iperf_nic_counters": {"a": 1}}} and cpu == times
    assert split_reading(found, nic=False, cpu=True) == (None, times)
    assert split_reading({"failed": True, "msg": "unreachable"}, nic=False, cpu=True) == (
        None,
        {"error": "unreachable"},
    )
    assert split_reading(found, nic=True, cpu=False)[1] is None


def test_the_plan_reads_the_cpu_of_every_host_of_a_run_and_the_record_keeps_it() -> None:
    (run,) = build_plan([{"name": "t", "pairs": PAIR, "nic_counters": "none"}])["runs"]
    assert run["cpu_hosts"] == ["h1", "h2"] and stop_hosts(run) == ["h1", "h2"]  # the client takes part in the stop
    before = {"kind": "linux", "source": "/proc/stat", "stat": "cpu 10 0 0 10\ncpu0 10 0 0 10\n", "uptime": 1.0}
    after = dict(before, stat="cpu 40 0 0 20\ncpu0 40 0 0 20\n", uptime=1.4)
    reports = [{"host": "h1", "cpu_before": before, "cpu_after": after}, {"host": "h2", "cpu_before": before}]
    cpu = build_record(run, reports)["cpu"]
    assert cpu is not None and sorted(cpu) == ["h1", "h2"]
    assert (cpu["h1"]["mean_percent"], cpu["h1"]["max_core_percent"], cpu["h1"]["max_core"]) == (75.0, 75.0, "cpu0")
    assert cpu["h1"]["seconds"] == 0.4 and cpu["h1"]["before"] == before["stat"]
    assert cpu["h2"]["mean_percent"] is None and cpu["h2"]["reason"] == "the CPU was not read after the run"
    (quiet,) = build_plan([{"name": "t", "pairs": PAIR, "host_cpu": False, "nic_counters": "none"}])["runs"]
    assert quiet["cpu_hosts"] == [] and stop_hosts(quiet) == ["h1"] and build_record(quiet, reports)["cpu"] is None


def test_on_linux_the_reading_names_the_kernel_without_a_uname_process(tmp_path: Path) -> None:
    """The kernel's name comes from ``/proc/sys/kernel/ostype`` (what ``uname -s`` prints on Linux): a ``uname`` first
    in PATH, which would say ESXi and leave a mark, is not run - and the reading is still this machine's CPU."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    mark = tmp_path / "uname-ran"
    (bin_dir / "uname").write_text(f"#!/bin/sh\n: >{mark}\necho VMkernel\n")
    (bin_dir / "uname").chmod(0o755)
    script = build_script("MK", gather_tools=False, cpu_times=True)
    done = subprocess.run(["sh", "-c", f"PATH={bin_dir}:$PATH; {script}"], capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    probe = parse_probe_output(done.stdout, "MK")
    fact = cpu_times_fact(probe.cpu.get("CPUSTAT"), probe.cpu.get("CPUUPTIME"))
    assert not mark.exists()
    assert fact["kind"] == "linux" and fact["reason"] is None
