# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Line rate from the hosts: sysfs speed, a vSwitch's uplinks (recorded esxcli output), a run's line rate."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.action.iperf_facts import build_script, parse_probe_output
from ansible_collections.esxilab.iperf.plugins.plugin_utils.nic.speed import (
    esxcli_nics,
    esxcli_speed,
    sysfs_speed,
    uplink_speed,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.line_rate import run_line_rate, with_line_rates
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.planned import PlannedRun
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.preflight import check_link_speeds
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.record import build_record
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import build_report, to_json
from tests.collection_path import ESXI_RECORDINGS, REPO

ESXI = ESXI_RECORDINGS
PAIR = [{"server": "h1", "address": "198.18.0.1", "client": "h2", "client_address": "198.18.0.2"}]


def test_sysfs_speed_is_the_number_or_null_with_the_reason() -> None:
    veth = sysfs_speed("eth0", "10000\n", "198.18.0.1")
    assert veth == {"interface": "eth0", "speed_mbps": 10000, "source": "/sys/class/net/eth0/speed", "reason": None}
    unknown = sysfs_speed("eth0", "-1\n", "198.18.0.1")
    assert unknown["speed_mbps"] is None and unknown["reason"] == (
        "/sys/class/net/eth0/speed says -1: the driver reports no speed (unknown)"
    )
    down = sysfs_speed("lo", "cat: /sys/class/net/lo/speed: Invalid argument\n", "127.0.0.1")
    assert down["speed_mbps"] is None and "Invalid argument" in down["reason"]
    assert sysfs_speed("", "", "192.0.2.9")["reason"] == "no interface of the host holds 192.0.2.9 (or `ip` is missing)"


def test_the_probe_output_is_split_per_address() -> None:
    script = build_script("MK", gather_tools=False, link_speed_of=["198.18.0.1"])
    assert "lspeed 198.18.0.1\n" in script and "command -v" not in script
    out = "MK START\n\nMK SPEED 198.18.0.1\neth0\n10000\n\nMK SPEEDEND\n\nMK DONE\n"
    assert parse_probe_output(out, "MK").speeds == {"198.18.0.1": ("eth0", "10000\n")}


def test_vswitch_line_rate_is_its_lowest_active_uplink_from_recorded_esxcli() -> None:
    # ESXi 6.7.0: vSwitch1 has uplinks vmnic3, vmnic2, vmnic1; only vmnic1 is up (1000 Mb/s)
    nics = esxcli_nics(
        (ESXI / "6.7.0__network-nic-list.txt").read_text(),
        (ESXI / "6.7.0__network-vswitch-standard-list.txt").read_text(),
    )
    assert [(n["name"], n["link_up"], n["speed_mbps"], n["vswitch"]) for n in nics] == [
        ("vmnic0", True, 1000, "vSwitch0"), ("vmnic1", True, 1000, "vSwitch1"),
        ("vmnic2", False, None, "vSwitch1"), ("vmnic3", False, None, "vSwitch1"),
    ]  # fmt: skip
    found = uplink_speed(nics, "vSwitch1", "esxcli")
    assert found["speed_mbps"] == 1000
    assert found["source"] == "esxcli: the lowest active uplink of vSwitch1 (vmnic1 1000 Mb/s; down: vmnic2, vmnic3)"
    assert uplink_speed(nics, "vSwitch9", "esxcli")["reason"] == "vSwitch9 has no uplink (esxcli)"


def test_vswitch_line_rate_from_the_vmknic_module_takes_the_lowest_active_uplink() -> None:
    nics = [
        {"name": "vmnic4", "link_up": True, "speed_mbps": 56000, "vswitch": "vSwitch-56G"},
        {"name": "vmnic5", "link_up": True, "speed_mbps": 40000, "vswitch": "vSwitch-56G"},
        {"name": "vmnic6", "link_up": False, "speed_mbps": None, "vswitch": "vSwitch-56G"},
        {"name": "vmnic0", "link_up": True, "speed_mbps": 1000, "vswitch": "vSwitch0"},
    ]
    found = uplink_speed(nics, "vSwitch-56G", "esxi_vmknic")
    assert found["speed_mbps"] == 40000 and "vmnic4 56000 Mb/s, vmnic5 40000 Mb/s; down: vmnic6" in found["source"]
    assert uplink_speed(nics[2:3], "vSwitch-56G", "esxi_vmknic")["speed_mbps"] is None
    # the vSwitch's own uplink list (esxi_vmknic's vswitch.uplinks) decides when given
    assert uplink_speed(nics, "vSwitch-56G", "esxi_vmknic", ["vmnic4"])["speed_mbps"] == 56000
    # govmomi's simulator keeps no uplink on a new vSwitch: no speed, and the reason
    assert uplink_speed(nics, "vSwitch-c", "esxi_vmknic", [])["reason"] == "vSwitch-c has no uplink (esxi_vmknic)"


def _speeds(**by_end: Any) -> dict[str, Any]:
    return {end: {"speed_mbps": mbps, "source": "/sys/class/net/eth0/speed", "reason": "down"}
            for end, mbps in by_end.items()}  # fmt: skip


def test_run_line_rate_is_the_slowest_end_or_unknown_with_the_reason() -> None:
    pairs = [{"server": "h1", "address": "198.18.0.1", "client": "h2", "client_bind": "198.18.0.2"}]
    speeds = {"h1 198.18.0.1": {"speed_mbps": 10000, "source": "/sys/class/net/eth0/speed"},
              "h2 198.18.0.2": {"speed_mbps": 1000, "source": "/sys/class/net/eth1/speed"}}  # fmt: skip
    rate, source = run_line_rate(pairs, speeds)
    assert rate == 1e9
    assert source == "host: 1000 Mb/s, the slowest end of the run (h2 198.18.0.2 /sys/class/net/eth1/speed)"
    speeds["h2 198.18.0.2"] = {"speed_mbps": None, "reason": "/sys/class/net/eth1/speed says -1"}
    assert run_line_rate(pairs, speeds) == (None, "unknown: h2 198.18.0.2: /sys/class/net/eth1/speed says -1")
    assert run_line_rate(pairs, speeds, given_bps=5e9, given_source="given: x") == (5e9, "given: x")


def _record_of(run: PlannedRun) -> Any:
    item = {"run": run["run"], "pair": 1}
    client = {"item": item, "started_at": 1.0, "result": {"bits_per_second": 2e9, "complete": True}}
    reports = [
        {"host": "h1", "servers": {"results": [{"item": item, "pid": 1}]}},
        {"host": "h2", "clients": {"results": [client]}},
    ]
    return build_record(run, reports)


def test_percent_of_line_rate_without_an_inventory_value() -> None:
    plan = build_plan([{"name": "t", "pairs": PAIR}])
    assert plan["addresses_by_host"] == {"h1": ["198.18.0.1"], "h2": ["198.18.0.2"]}
    veth = {"interface": "eth0", "speed_mbps": 10000, "source": "/sys/class/net/eth0/speed", "reason": None}
    speeds = {"h1": {"198.18.0.1": veth}, "h2": {"198.18.0.2": veth}}
    rated = with_line_rates(plan, speeds)
    (run,) = rated["runs"]
    assert run["labels"]["line_rate_bps"] == 1e10 and run["pairs"][0]["labels"]["line_rate_bps"] == 1e10
    doc = json.loads(to_json(build_report([_record_of(run)])))
    (group,) = doc["summary"]
    assert group["percent_of_line_rate"] == pytest.approx(20.0)
    assert (
        group["line_rate_source"]
        == doc["runs"][0]["line_rate_source"]
        == ("host: 10000 Mb/s, the slowest end of the run (h1 198.18.0.1 /sys/class/net/eth0/speed)")
    )


def test_a_given_line_rate_wins_and_esxi_network_beats_sysfs() -> None:
    unknown: dict[str, Any] = {"interface": None, "speed_mbps": None, "source": None, "reason": "no interface (ESXi)"}
    veth: dict[str, Any] = {
        "interface": "eth0",
        "speed_mbps": 10000,
        "source": "/sys/class/net/eth0/speed",
        "reason": None,
    }
    uplink: dict[str, Any] = {
        "speed_mbps": 56000,
        "source": "esxi_vmknic: the lowest active uplink of vSwitch-56G (vmnic4 56000 Mb/s)",
    }
    speeds: dict[str, Any] = {"h1": {"198.18.0.1": unknown}, "h2": {"198.18.0.2": veth}}
    plan = build_plan([{"name": "t", "pairs": PAIR}])
    (run,) = with_line_rates(plan, speeds)["runs"]
    assert "line_rate_bps" not in run["labels"]
    assert run["labels"]["line_rate_source"] == "unknown: h1 198.18.0.1: no interface (ESXi)"
    (run,) = with_line_rates(plan, speeds, published={"h1": {"198.18.0.1": uplink}})["runs"]
    assert run["labels"]["line_rate_bps"] == 1e10  # the peer's 10G NIC is the slower end
    (run,) = with_line_rates(plan, speeds, report_line_rate_bps=4e10)["runs"]
    assert run["labels"]["line_rate_source"] == "given: report_line_rate_bps" and "line_rate_bps" not in run["labels"]
    given = build_plan([{"name": "t", "pairs": PAIR, "labels": {"link_speed_mbps": 56000}}])
    (run,) = with_line_rates(given, speeds)["runs"]
    assert run["labels"]["line_rate_source"] == "given: the test's link_speed_mbps label (inventory)"
    assert "line_rate_bps" not in run["labels"]
    # an unset inventory value (null, as the seed playbooks pass it) is no override
    unset = build_plan([{"name": "t", "pairs": PAIR, "labels": {"link_speed_mbps": None}}])
    (run,) = with_line_rates(unset, {"h1": {"198.18.0.1": veth}, "h2": {"198.18.0.2": veth}})["runs"]
    assert run["labels"]["line_rate_bps"] == 1e10


def test_a_hosts_given_link_speed_beats_the_veths_10g_and_labels_beat_it() -> None:
    """The local lab shapes a veth (which reports 10000 Mb/s) to 1 Gbit/s and writes paired_test_link_speed_mbps:
    1000 into its inventory; the preflight hands it to the plan."""
    veth = {"interface": "eth0", "speed_mbps": 10000, "source": "/sys/class/net/eth0/speed", "reason": None}
    speeds = {"h1": {"198.18.0.1": veth}, "h2": {"198.18.0.2": veth}}
    plan = build_plan([{"name": "t", "pairs": PAIR}])
    (run,) = with_line_rates({**plan, "given_link_speeds": {"h1": 1000.0}}, speeds)["runs"]
    assert run["labels"]["line_rate_bps"] == 1e9
    assert run["labels"]["line_rate_source"] == (
        "host: 1000 Mb/s, the slowest end of the run (h1 198.18.0.1 given: paired_test_link_speed_mbps of h1 "
        "(inventory))"
    )
    labelled = build_plan([{"name": "t", "pairs": PAIR, "labels": {"link_speed_mbps": 100}}])
    (run,) = with_line_rates({**labelled, "given_link_speeds": {"h1": 1000.0}}, speeds)["runs"]
    assert run["labels"]["line_rate_source"] == "given: the test's link_speed_mbps label (inventory)"


@pytest.mark.parametrize(
    ("value", "shown"), [(0, "0"), (-5, "-5"), ("fast", '"fast"'), (float("nan"), "NaN"), (True, "true")]
)
def test_a_bad_given_link_speed_is_refused_naming_the_host(value: Any, shown: str) -> None:
    given, problems = check_link_speeds({"h1": value, "h2": None, "h3": 1000})
    assert given == {"h3": 1000.0}
    (problem,) = problems
    assert problem.startswith(f"paired_test_link_speed_mbps={shown} on h1 is not a link speed")
    assert "give a positive number of Mbit/s" in problem


def test_esxi_speed_through_the_standin_esxcli(tmp_path: Path) -> None:
    """The probe's shell code run for real against tests/esxi_standin (recorded ESXi 6.7 listings): vmk0 holds
    192.168.0.28 and is on vSwitch0, whose one uplink vmnic0 is up at 1000 Mb/s."""
    addresses = ["192.168.0.28", "192.168.100.28", "198.18.0.1"]
    script = build_script("MK", gather_tools=False, link_speed_of=addresses)
    standin = REPO / "tests" / "esxi_standin"
    env = {
        **os.environ,
        "PATH": f"{standin}:{os.environ['PATH']}",
        "ESXI_STANDIN_STATE": str(tmp_path),
        "HOME": str(tmp_path),
    }
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, env=env, timeout=60, check=True)
    probe = parse_probe_output(done.stdout, "MK")
    assert sorted(probe.esxcli) == ["interfaces", "ipv4", "nic", "vswitches"]
    vmk0, vmk1, other = (esxcli_speed(a, probe.esxcli) for a in addresses)
    assert vmk0 == {"interface": "vmk0", "speed_mbps": 1000, "reason": None,
                    "source": "esxcli: the lowest active uplink of vSwitch0 (vmnic0 1000 Mb/s)"}  # fmt: skip
    # the recorded interface list (another host) has no vmk1: no vSwitch, so no speed - and why
    assert (
        vmk1["speed_mbps"] is None
        and vmk1["reason"] == "vmk1 is on no standard vSwitch (esxcli network ip interface list)"
    )
    assert other["reason"] == "no VMkernel adapter holds 198.18.0.1 (esxcli network ip interface ipv4 list)"
    # a Linux host has no esxcli: nothing of it in the output, the sysfs path answers
    linux = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert parse_probe_output(linux.stdout, "MK").esxcli == {}
