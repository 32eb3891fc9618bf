# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""NIC context: the readings of a test address (``nic/counters.py``, through ``iperf_facts``' script on a Linux shell
and the ESXi stand-in), the plan's reads (``paired_test_nic_counters``), the record, and the report's deltas
(``report/nic.py``: a counter that went backwards is null with a warning, never negative; n/a when not read)."""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.action.iperf_facts import build_script, parse_probe_output
from ansible_collections.esxilab.iperf.plugins.plugin_utils.nic.counters import esxi_reading, linux_reading
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.checks import PairedTestError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.record import build_record
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import build_report, to_json
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.csv_tables import results_csv, summary_csv
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.markdown import to_markdown
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.nic import (
    deltas_by_test,
    nic_environment,
    run_delta,
    span_delta,
    sum_deltas,
)
from tests.collection_path import ESXI_RECORDINGS, REPO

ESXI = ESXI_RECORDINGS
LAB = "linux-iproute2-6.1.0__"
PAIR = [{"server": "h1", "address": "198.18.0.1", "client": "h2", "client_address": "198.18.0.2"}]


def fx(name: str) -> str:
    return (ESXI / name).read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------------
# Readings
# --------------------------------------------------------------------------------------------


def test_linux_reading_from_recorded_outputs() -> None:
    reading = linux_reading("198.19.190.11", "eth0", "10000\n", {
        "ipjson": (fx(f"{LAB}ip-s-s-j-link-show__veth-drops.txt"), 0),
        "ethtool": ("sh: ethtool: not found\n", 127),
    })  # fmt: skip
    assert reading["interface"] == "eth0" and reading["kind"] == "linux" and reading["reason"] is None
    assert reading["speed_mbps"] == 10000 and reading["source"] == "ip -s -s -j link show dev eth0"
    (nic,) = reading["nics"]
    assert nic["counters"]["tx_dropped"] == 44 and nic["counters"]["rx_dropped"] == 0 and nic["link_up"] is True
    assert nic["driver"] is None and nic["problems"] == ["no ethtool on the host: driver and firmware not read"]
    assert nic["raw"]["stats"] == fx(f"{LAB}ip-s-s-j-link-show__veth-drops.txt")
    # ip without -j: the script falls back to the text form; ethtool where installed
    text = linux_reading("198.19.190.11", "eth0", "10000\n", {
        "ipjson": ('Option "-j" is unknown, try "ip -help".\n', 255),
        "iptext": (fx(f"{LAB}ip-s-s-link-show__veth-drops.txt"), 0),
        "ethtool": (fx("linux-unknown__ethtool-i__be2net.txt").split("\n", 1)[1], 0),
    })  # fmt: skip
    (nic,) = text["nics"]
    assert nic["counters"]["tx_dropped"] == 44 and nic["driver"] == "be2net" and nic["firmware"] == "4.9.311.20"
    assert text["source"] == "ip -s -s link show dev eth0; ethtool -i eth0"
    assert nic["problems"] == [
        'ip -s -s -j link show dev eth0 failed (exit status 255): Option "-j" is unknown, try "ip -help".'
    ]
    none = linux_reading("192.0.2.9", "", "", {})
    assert none["nics"] == [] and none["reason"] == "no interface of the host holds 192.0.2.9 (or `ip` is missing)"
    failed = linux_reading(
        "198.19.190.11", "eth0", "", {"ipjson": (fx(f"{LAB}ip-s-s-j-link-show__missing.stderr.txt"), 1)}
    )
    assert failed["reason"].startswith("no counters of eth0: ip -s -s -j link show dev eth0 failed (exit status 1)")


def _standin_env(tmp_path: Path) -> dict[str, str]:
    standin = REPO / "tests" / "esxi_standin"
    return {**os.environ, "PATH": f"{standin}:{os.environ['PATH']}", "ESXI_STANDIN_STATE": str(tmp_path),
            "HOME": str(tmp_path)}  # fmt: skip


def test_esxi_reading_through_the_standin(tmp_path: Path) -> None:
    """iperf_facts' script against tests/esxi_standin (recorded 6.7 listings): 192.168.0.28 is vmk0 on vSwitch0,
    whose one uplink vmnic0 is up; its nic get / nic stats get / privstats get replay the recorded outputs."""
    script = build_script("MK", gather_tools=False, nic_counters_of=["192.168.0.28", "198.18.0.1"])
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, env=_standin_env(tmp_path),
                          timeout=60, check=True)  # fmt: skip
    probe = parse_probe_output(done.stdout, "MK")
    # every uplink of a standard vSwitch was read once (vSwitch0: vmnic0; vSwitch1: vmnic3, vmnic2, vmnic1)
    kinds = ("nicget", "nicstats", "privstats")
    assert sorted(probe.esxcli_nic) == sorted(f"{k} vmnic{i}" for k in kinds for i in range(4))
    reading = esxi_reading("192.168.0.28", probe.esxcli, probe.esxcli_nic)
    assert reading["interface"] == "vmk0" and reading["reason"] is None and reading["speed_mbps"] == 1000
    assert reading["source"] == (
        "esxcli network nic stats get / nic get of the active uplinks of vSwitch0 (vmnic0); "
        "networkinternal nic privstats get of vmnic0"
    )
    (nic,) = reading["nics"]
    assert (nic["name"], nic["driver"], nic["firmware"], nic["version"]) == ("vmnic0", "nvmxnet3", "7", "2.0.0.31")
    assert nic["counters"]["rx_dropped"] == 2452783244 and nic["counters"]["tx_errors"] == 0
    # the stand-in replays the recorded Intel privstats output (tests/fixtures/esxi/SOURCES.md)
    assert nic["driver_stats"]["rx_total_pkts"] == 100009 and nic["driver_stats"]["link_xoff_tx"] == 0
    assert nic["problems"] == []
    assert esxi_reading("198.18.0.1", probe.esxcli, probe.esxcli_nic)["reason"] == (
        "no VMkernel adapter holds 198.18.0.1 (esxcli network ip interface ipv4 list)"
    )
    # vSwitch1's only up uplink is vmnic1; a failed nic stats get is said, the nic get still read
    listings = dict(probe.esxcli, interfaces=probe.esxcli["interfaces"].replace("vSwitch0", "vSwitch1"))
    outputs = dict(probe.esxcli_nic, **{"nicstats vmnic1": ("Error: Unknown option or set of options.\n", 1)})
    other = esxi_reading("192.168.0.28", listings, outputs)
    (nic,) = other["nics"]
    assert nic["name"] == "vmnic1" and nic["counters"] == {} and nic["driver"] == "nvmxnet3"
    assert other["reason"] == (
        "no counters of vmnic1: esxcli network nic stats get -n vmnic1 failed (exit status 1): "
        "Error: Unknown option or set of options."
    )


def test_esxi_private_statistics_missing_on_the_host_are_not_available(tmp_path: Path) -> None:
    """A host whose localcli has no internal networkinternal namespace (stand-in state ``privstats=absent``): the
    counters are still read, the driver's private statistics are null - not available -, and ``problems`` says why."""
    env = _standin_env(tmp_path)
    subprocess.run(["esxi-standin", "set", "privstats", "absent"], env=env, check=True, timeout=30)
    script = build_script("MK", gather_tools=False, nic_counters_of=["192.168.0.28"])
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, env=env, timeout=60, check=True)
    probe = parse_probe_output(done.stdout, "MK")
    reading = esxi_reading("192.168.0.28", probe.esxcli, probe.esxcli_nic)
    (nic,) = reading["nics"]
    assert reading["reason"] is None and nic["counters"]["rx_dropped"] == 2452783244
    assert nic["driver_stats"] is None
    assert nic["problems"] == [
        "localcli --plugin-dir /usr/lib/vmware/esxcli/int networkinternal nic privstats get -n vmnic0 failed "
        "(exit status 1): esxi-standin: networkinternal nic privstats get is absent here (real esxcli text not "
        "recorded); driver private statistics not available"
    ]
    assert reading["source"] == "esxcli network nic stats get / nic get of the active uplinks of vSwitch0 (vmnic0)"


def test_linux_reading_through_the_script_on_this_shell() -> None:
    """The script's Linux part on the controller's own shell: an address no interface holds is said, not guessed."""
    script = build_script("MK", gather_tools=False, nic_counters_of=["192.0.2.77"])
    probe = parse_probe_output(subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60,
                                              check=True).stdout, "MK")  # fmt: skip
    assert probe.finished and probe.nic_interfaces == {"192.0.2.77": ""} and probe.esxcli_nic == {}


def test_the_script_looks_up_the_interface_of_an_address_once(tmp_path: Path) -> None:
    """An address whose link speed and counters are both read: one ``ip -o addr`` for it (each costs a fork and an
    exec on the host), the interface the same in both sections."""
    real = shutil.which("ip")
    assert real, "iproute2's ip is needed (a Debian package of the lab)"
    calls = tmp_path / "calls"
    (tmp_path / "ip").write_text(f'#!/bin/sh\necho "$*" >>{calls}\nexec {real} "$@"\n')
    (tmp_path / "ip").chmod(0o755)
    script = build_script(
        "MK", gather_tools=False, link_speed_of=["127.0.0.1"], nic_counters_of=["127.0.0.1", "192.0.2.77"]
    )
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}")
    probe = parse_probe_output(subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60,
                                              check=True, env=env).stdout, "MK")  # fmt: skip
    assert probe.nic_interfaces == {"127.0.0.1": "lo", "192.0.2.77": ""}
    assert probe.speeds["127.0.0.1"][0] == "lo" and probe.speeds["192.0.2.77"][0] == ""
    lookups = [line for line in calls.read_text().splitlines() if line.startswith("-o addr")]
    assert lookups == ["-o addr show to 127.0.0.1", "-o addr show to 192.0.2.77"]


# --------------------------------------------------------------------------------------------
# Plan and record
# --------------------------------------------------------------------------------------------


def test_the_plan_reads_around_each_test_or_each_run() -> None:
    tests = [{"name": "a", "pairs": PAIR, "repeat": 3},
             {"name": "b", "pairs": PAIR, "nic_counters": "run", "repeat": 2},
             {"name": "c", "pairs": PAIR, "nic_counters": "none"}]  # fmt: skip
    runs = build_plan(tests)["runs"]
    assert [(r["test"], r["nic_before"], r["nic_after"]) for r in runs] == [
        ("a", True, False), ("a", False, False), ("a", False, True),
        ("b", True, True), ("b", True, True), ("c", False, False),
    ]  # fmt: skip
    assert runs[0]["nic_addresses"] == {"h1": ["198.18.0.1"], "h2": ["198.18.0.2"]}
    swapped = build_plan([{"name": "s", "pairs": PAIR, "swap_roles": True}])["runs"]
    assert all(r["nic_addresses"] == {"h1": ["198.18.0.1"], "h2": ["198.18.0.2"]} for r in swapped)
    with pytest.raises(PairedTestError, match="nic_counters"):
        build_plan([{"name": "x", "pairs": PAIR, "nic_counters": "always"}])


def _facts(address: str, counters: dict[str, int]) -> dict[str, Any]:
    nic: dict[str, Any] = {
        "name": "eth0",
        "driver": "veth",
        "firmware": None,
        "version": "1.0",
        "bus_info": None,
        "speed_mbps": 10000,
        "link_up": True,
        "counters": counters,
        "other": {},
        "problems": [],
        "raw": {},
    }
    reading = {"address": address, "interface": "eth0", "kind": "linux", "source": "ip", "reason": None,
               "speed_mbps": 10000, "nics": [nic]}  # fmt: skip
    return {"ansible_facts": {"iperf_nic_counters": {address: reading}}, "changed": False}


def test_the_record_keeps_the_readings_of_its_run() -> None:
    (run,) = build_plan([{"name": "t", "pairs": PAIR}])["runs"]
    reports = [
        {"host": "h1", "nic_before": _facts("198.18.0.1", {"tx_dropped": 1}), "nic_after": {"skipped": True}},
        {"host": "h2", "nic_before": {"failed": False, "msg": "lost the connection"}, "nic_after": None},
    ]
    nic = build_record(run, reports)["nic"]
    assert nic is not None and nic["mode"] == "test"
    assert nic["before"]["h1"]["198.18.0.1"]["nics"][0]["counters"] == {"tx_dropped": 1}
    assert nic["before"]["h2"] == {"error": "the NIC read on h2 failed: lost the connection"}
    assert nic["after"] == {"h1": {"error": "the NIC counters of h1 were not read in run 1"},
                            "h2": {"error": "the NIC counters of h2 were not read in run 1"}}  # fmt: skip
    (quiet,) = build_plan([{"name": "t", "pairs": PAIR, "nic_counters": "none"}])["runs"]
    assert build_record(quiet, reports)["nic"] is None


# --------------------------------------------------------------------------------------------
# Deltas
# --------------------------------------------------------------------------------------------

BEFORE = {"rx_dropped": 10, "tx_dropped": 5, "rx_errors": 0, "tx_errors": 0, "rx_packets": 100}


def _readings(h1: dict[str, int], h2: dict[str, int] | None = None) -> dict[str, Any]:
    out = {"h1": _facts("198.18.0.1", h1)["ansible_facts"]["iperf_nic_counters"]}
    if h2 is not None:
        out["h2"] = _facts("198.18.0.2", h2)["ansible_facts"]["iperf_nic_counters"]
    return out


def test_span_delta_sums_the_nics_and_never_goes_negative() -> None:
    after = dict(BEFORE, tx_dropped=9, rx_packets=180)
    delta = span_delta(_readings(BEFORE, BEFORE), _readings(after, dict(BEFORE, rx_errors=2)), first_run=1, last_run=3)
    assert delta.counters == {"rx_dropped": 0, "tx_dropped": 4, "rx_errors": 2, "tx_errors": 0}
    assert delta.nics[0] == {"host": "h1", "address": "198.18.0.1", "nic": "eth0",
                             "deltas": {"rx_dropped": 0, "rx_errors": 0, "rx_packets": 80, "tx_dropped": 4,
                                        "tx_errors": 0},
                             "losses": [{"kind": "drop", "count": 4, "counters": {"tx_dropped": 4}}]}  # fmt: skip
    assert delta.warnings == [] and (delta.first_run, delta.last_run) == (1, 3)
    # a driver reset between the reads: the counter went backwards -> null and a warning, never -3
    reset = span_delta(_readings(BEFORE), _readings(dict(BEFORE, tx_dropped=2)))
    assert reset.counters["tx_dropped"] is None and reset.counters["rx_dropped"] == 0
    deltas = reset.nics[0]["deltas"]
    assert isinstance(deltas, dict) and deltas["tx_dropped"] is None
    assert reset.warnings == [
        "h1 198.18.0.1 eth0: tx_dropped went backwards (5 -> 2: a driver reset or a counter wrap); its delta is unknown"
    ]
    # a counter one reading lacks: unknown (None), not 0
    lacking = span_delta(_readings({"rx_dropped": 1}), _readings({"rx_dropped": 3}))
    assert lacking.counters == {"rx_dropped": 2, "tx_dropped": None, "rx_errors": None, "tx_errors": None}
    # a NIC read only once: its counters are not counted, and the sums are unknown
    once = span_delta(_readings(BEFORE, BEFORE), _readings(BEFORE))
    assert once.counters == dict.fromkeys(("rx_dropped", "tx_dropped", "rx_errors", "tx_errors"))
    assert once.warnings == ["h2 198.18.0.2 eth0: not read after the runs; its counters are not counted"]
    failed = span_delta({"h1": {"error": "the NIC read on h1 failed: timeout"}}, _readings(BEFORE))
    assert failed.warnings[0] == "before: the NIC read on h1 failed: timeout"


def _record(run: int, test: str, nic: dict[str, Any] | None, total: float = 1e9) -> dict[str, Any]:
    pair = {"pair": 1, "server": "h1", "client": "h2", "address": "198.18.0.1", "port": 5201, "ok": True,
            "sender": "h2", "receiver": "h1",
            "result": {"tool": "iperf3", "bits_per_second": total, "complete": True, "protocol": "tcp"}}  # fmt: skip
    return {"run": run, "test": test, "streams": 1, "direction": "forward", "swapped": False, "repetition": run,
            "labels": {}, "pairs": [pair], "total_bits_per_second": total, "ok": True, "complete": True,
            "errors": [], "warnings": [], "nic": nic}  # fmt: skip


def _series() -> list[dict[str, Any]]:
    """Test 'a' read around its runs as a whole (test mode, 3 runs); test 'b' around each of its 2 runs."""
    a0, a1 = _readings(BEFORE, BEFORE), _readings(dict(BEFORE, tx_dropped=12), dict(BEFORE, rx_dropped=11))
    b = [_readings(BEFORE), _readings(dict(BEFORE, rx_errors=1)), _readings(dict(BEFORE, rx_errors=1)),
         _readings(dict(BEFORE, rx_errors=4))]  # fmt: skip
    return [
        _record(1, "a", {"mode": "test", "before": a0, "after": None}),
        _record(2, "a", None),
        _record(3, "a", {"mode": "test", "before": None, "after": a1}),
        _record(4, "b", {"mode": "run", "before": b[0], "after": b[1]}),
        _record(5, "b", {"mode": "run", "before": b[2], "after": b[3]}),
    ]


def test_deltas_per_run_per_test_and_per_group() -> None:
    records = _series()
    assert run_delta(records[0]) is None and run_delta(records[1]) is None
    assert run_delta(records[3]).counters == {"rx_dropped": 0, "tx_dropped": 0, "rx_errors": 1, "tx_errors": 0}  # type: ignore[union-attr]
    spans = deltas_by_test((r["test"], r) for r in records)
    assert spans["a"].counters == {"rx_dropped": 1, "tx_dropped": 7, "rx_errors": 0, "tx_errors": 0}  # type: ignore[union-attr]
    assert (spans["a"].first_run, spans["a"].last_run) == (1, 3)  # type: ignore[union-attr]
    assert spans["b"].counters["rx_errors"] == 4  # type: ignore[union-attr]  # from run 4's before to run 5's after
    # a test whose last planned run was skipped has no after-reading: n/a
    assert deltas_by_test([("a", records[0]), ("a", records[1])]) == {"a": None}
    assert sum_deltas([run_delta(records[3]), run_delta(records[4])]) == {
        "rx_dropped": 0, "tx_dropped": 0, "rx_errors": 4, "tx_errors": 0}  # fmt: skip
    assert sum_deltas([run_delta(records[3]), None]) is None
    env = nic_environment(records)
    assert env[0] == {"host": "h1", "address": "198.18.0.1", "interface": "eth0", "nic": "eth0", "driver": "veth",
                      "firmware": None, "version": "1.0", "bus_info": None, "speed_mbps": 10000}  # fmt: skip
    assert len(env) == 2


def test_the_report_files_carry_the_deltas() -> None:
    report = build_report(copy.deepcopy(_series()), name="nic")
    document = json.loads(to_json(report))
    assert document["environment"]["nics"][1]["address"] == "198.18.0.2"
    assert document["nic"]["tests"]["a"]["counters"] == {
        "rx_dropped": 1,
        "tx_dropped": 7,
        "rx_errors": 0,
        "tx_errors": 0,
    }
    assert [r["nic"] is None for r in document["runs"]] == [True, True, True, False, False]
    assert document["runs"][4]["nic"]["counters"]["rx_errors"] == 3
    summary = {s["test"]: s["nic"] for s in document["summary"]}
    assert summary == {"a": None, "b": {"rx_dropped": 0, "tx_dropped": 0, "rx_errors": 4, "tx_errors": 0}}
    rows = list(csv.DictReader(io.StringIO(results_csv(report))))
    assert [(r["run"], r["nic_tx_dropped"], r["nic_rx_errors"]) for r in rows] == [
        ("1", "n/a", "n/a"), ("2", "n/a", "n/a"), ("3", "n/a", "n/a"), ("4", "0", "1"), ("5", "0", "3")]  # fmt: skip
    groups = list(csv.DictReader(io.StringIO(summary_csv(report))))
    assert [(g["test"], g["nic_rx_errors"]) for g in groups] == [("a", "n/a"), ("b", "4")]
    markdown = to_markdown(report)
    assert "## NIC counters" in markdown
    assert "| a | 1 - 3 | 1 | 7 | 0 | 0 |" in markdown and "| 5 | b | 0 | 0 | 3 | 0 |" in markdown
    # a reset: the cell is empty in CSV, '?' in summary.md, with the warning
    records = _series()
    records[4]["nic"]["after"] = _readings(dict(BEFORE, rx_errors=0))
    reset = build_report(records, name="nic")
    rows = list(csv.DictReader(io.StringIO(results_csv(reset))))
    assert rows[4]["nic_rx_errors"] == "" and rows[4]["nic_tx_dropped"] == "0"
    assert "| 5 | b | 0 | 0 | ? | 0 |" in to_markdown(reset)
    assert "rx_errors went backwards (1 -> 0" in to_markdown(reset)
    # no NIC read at all: no section, no nic document, n/a in the columns
    plain = build_report([_record(1, "a", None)], name="plain")
    assert "## NIC counters" not in to_markdown(plain) and json.loads(to_json(plain))["nic"] is None
    (row,) = csv.DictReader(io.StringIO(results_csv(plain)))
    assert row["nic_rx_dropped"] == "n/a"


# --------------------------------------------------------------------------------------------
# A bridge on the path (seed 003): the ports of the bridge that holds the test address
# --------------------------------------------------------------------------------------------


def test_a_linux_bridge_reading_has_its_ports() -> None:
    port = fx(f"{LAB}ip-s-s-j-link-show__veth-drops.txt")
    reading = linux_reading("198.19.62.11", "br0", "cat: /sys/class/net/br0/speed: Invalid argument\n", {
        "ipjson": (port.replace('"ifname":"eth0"', '"ifname":"br0"'), 0),
        "ethtool": ("sh: ethtool: not found\n", 127),
        "bridge": ("linux br0\n", 0),
        "port:eth0": (port, 0),
        "portinfo:eth0": ("sh: ethtool: not found\n", 127),
        "portspeed:eth0": ("10000\n", 0),
    })  # fmt: skip
    assert reading["bridge"] == {"kind": "linux", "name": "br0", "ports": ["eth0"]}
    bridge, member = reading["nics"]
    assert bridge["name"] == "br0" and "bridge" not in bridge
    assert member["name"] == "eth0" and member["bridge"] == "br0" and member["counters"]["tx_dropped"] == 44
    assert member["speed_mbps"] == 10000 and member["problems"] == []
    # the bridge itself has no link speed: the reading's is its slowest port's
    assert bridge["speed_mbps"] is None and reading["speed_mbps"] == 10000
    assert reading["source"] == "ip -s -s -j link show dev br0; linux bridge br0: ports eth0"
    # the ports' drops count in the deltas and the ports are named in the environment
    after = copy.deepcopy(reading)
    after["nics"][1]["counters"]["rx_dropped"] += 7
    delta = span_delta({"h1": {"198.19.62.11": reading}}, {"h1": {"198.19.62.11": after}})
    assert delta.counters["rx_dropped"] == 7
    record = {"nic": {"before": {"h1": {"198.19.62.11": reading}}}}
    assert [(n["nic"], n.get("bridge")) for n in nic_environment([record])] == [("br0", None), ("eth0", "br0")]


def test_an_ovs_bridge_reading_and_a_port_that_could_not_be_read() -> None:
    port = fx(f"{LAB}ip-s-s-j-link-show__veth-drops.txt")
    reading = linux_reading("198.19.62.11", "br-int", "", {
        "ipjson": (port, 0),
        "bridge": ("ovs br-int\n", 0),
        "port:eth1": (port, 0),
        "portinfo:eth1": (fx("linux-unknown__ethtool-i__be2net.txt").split("\n", 1)[1], 0),
        "portspeed:eth1": ("25000\n", 0),
        "port:eth2": ('Device "eth2" does not exist.\n', 1),
    })  # fmt: skip
    assert reading["bridge"] == {"kind": "ovs", "name": "br-int", "ports": ["eth1", "eth2"]}
    _own, first, second = reading["nics"]
    assert first["driver"] == "be2net" and first["speed_mbps"] == 25000 and reading["speed_mbps"] == 25000
    assert second["counters"] == {} and second["problems"] == [
        'ip -s -s -j link show dev eth2: failed (exit status 1): Device "eth2" does not exist.'
    ]
    # no bridge line (not a bridge, or ovs-vsctl missing): the interface alone, as before
    plain = linux_reading("198.19.62.11", "eth0", "10000\n", {"ipjson": (port, 0)})
    assert "bridge" not in plain and len(plain["nics"]) == 1
