# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The seeds' layouts for real, on the local lab (issue 23): seed 002's run layout, seed 000's guided external
sweep, seed 003's bridge host.

* ``repeat: {forward: 3, swapped: 1}``: 3 runs, then 1 with the roles swapped (interleaved: forward, swapped,
  forward, forward), 1 s each; the report's combined row is the mean of the 4 records' totals;
* a guided external sweep: a pair with ``external`` clients and ``streams: [1, 2, 3]``. While
  ``ansible-playbook`` runs, THIS test plays the person at the Windows box: it reads the play's output as it
  comes, and for each printed command (``on the external host run ...: iperf3 -c ... -P n``) runs exactly
  that command in h2's namespace. Each flow is limited to 40 Mbit/s under a 100 Mbit/s link
  (``--flow-rate``), so the sweep rises and levels off: the report has the sweep, its knee and plateau;
* ``playbooks/bridge-host.yml`` (the lab overlay's group ``bridge_host``: h1 and its peer h2) with h1's ``eth0``
  put under a Linux bridge ``br0`` (the address moved to ``br0``; the last test of the file): the play reads
  the bridge and its port, requires it, measures, and the report's environment names the port with
  ``bridge: br0``; the NIC counters of the bridge and of its port are read around the test.

Lab: prefix ``layw`` (env ``ESXILAB_LAYOUT_PREFIX``), 3 hosts on 198.19.62.0/24 (env
``ESXILAB_LAYOUT_SUBNET``), 100 Mbit/s per host, 40 Mbit/s per flow. Open vSwitch is not proven here: this
machine's kernel has no ``openvswitch`` module (the OVS reading is unit-tested on its outputs).
"""

from __future__ import annotations

import csv
import itertools
import json
import os
import re
import shlex
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from ansible_collections.esxilab.iperf.plugins.action.iperf_facts import build_script, parse_probe_output
from ansible_collections.esxilab.iperf.plugins.plugin_utils.nic.counters import linux_reading
from tests.collection_path import REPO
from tests.integration.labkit import (
    ANSIBLE_PLAYBOOK,
    PAIRED_TEST_PLAYBOOK,
    Lab,
    ansible_env,
    lab_unavailable,
    paired_test_vars,
    run_playbook,
    skip_if,
    wait_no_iperf,
)

pytestmark = [pytest.mark.lab, pytest.mark.slow]

PREFIX = os.environ.get("ESXILAB_LAYOUT_PREFIX", "layw")
SUBNET = os.environ.get("ESXILAB_LAYOUT_SUBNET", "198.19.62")
HOSTS = ("h1", "h2", "h3")
ADDRESS = {f"h{i}": f"{SUBNET}.{10 + i}" for i in range(1, 4)}
RATE = 100_000_000
FLOW_RATE = 40_000_000
PORT_BASE = 26201
PLAY_TIMEOUT = 180


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    skip_if(lab_unavailable(("ip", "tc", "ssh", "iperf3", "timeout")))
    the_lab = Lab(PREFIX, tmp_path_factory.mktemp(PREFIX) / "state", timeout=120)
    with the_lab.session("--hosts", "3", "--subnet", f"{SUBNET}.0/24", "--rate", "100mbit", "--flow-rate", "40mbit"):
        yield the_lab
        assert wait_no_iperf(PREFIX, HOSTS) == []


def _records(doc: dict[str, Any]) -> list[dict[str, Any]]:
    pairs = iter(doc["results"])
    return [
        {**run["record"], "pairs": [r["record"] for r in itertools.islice(pairs, run["pairs"])]} for run in doc["runs"]
    ]


def _report(tmp: Path) -> tuple[dict[str, Any], Path]:
    (found,) = sorted((tmp / "reports").glob("report-*/results.json"))
    return json.loads(found.read_text()), found.parent


# --------------------------------------------------------------------------------------------
# Seed 002: 3 runs + 1 with the roles swapped, the mean of the 4
# --------------------------------------------------------------------------------------------


def test_seed002_layout_three_runs_then_one_swapped_and_the_mean_of_the_4(lab: Lab, tmp_path: Path) -> None:
    tests = [
        {
            "name": "seed002",
            "pairs": [{"server": "h1", "client": "h2"}],
            "duration": 1,
            "swap_roles": True,
            "combine_swapped": True,
            "repeat": {"forward": 3, "swapped": 1},
        }
    ]
    variables = paired_test_vars(tmp_path, tests, paired_test_port_base=PORT_BASE)
    proc = run_playbook("-i", lab.inventory, PAIRED_TEST_PLAYBOOK, "-e", f"@{variables}", timeout=PLAY_TIMEOUT)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    doc, directory = _report(tmp_path)
    runs = _records(doc)
    assert [(r["swapped"], r["repetition"]) for r in runs] == [(False, 1), (True, 1), (False, 2), (False, 3)]
    senders = [r["pairs"][0]["sender"] for r in runs]
    assert senders == ["h2", "h1", "h2", "h2"]  # the swapped run: h1 is the client
    totals = [r["total_bits_per_second"] for r in runs]
    for total in totals:  # iperf's own figures: one flow, 40 Mbit/s per flow on the lab
        assert 0.8 * FLOW_RATE < total < 1.02 * FLOW_RATE, totals
    groups = {g["swapped"]: g for g in doc["summary"]}
    assert (groups[False]["stats"]["count"], groups[True]["stats"]["count"]) == (3, 1)
    [combined] = doc["combined"]
    assert combined["stats"]["count"] == 4 and combined["runs"] == [1, 2, 3, 4]
    assert combined["stats"]["mean"] == pytest.approx(sum(totals) / 4)
    rows = list(csv.DictReader((directory / "summary.csv").open()))
    assert [(row["swapped"], row["count"], row["combined"]) for row in rows] == [
        ("false", "3", "false"),
        ("true", "1", "false"),
        ("false", "4", "true"),
    ]
    assert "seed002 forward (swapped + unswapped), 1 stream(s): mean" in proc.stdout
    print(f"\nseed 002 on the lab: {[round(t / 1e6, 2) for t in totals]} Mbit/s, mean of the 4 "
          f"{combined['stats']['mean'] / 1e6:.2f} Mbit/s")  # fmt: skip


# --------------------------------------------------------------------------------------------
# Seed 000: the guided external sweep, the person following the printed commands
# --------------------------------------------------------------------------------------------

COMMAND = re.compile(r"on the external host run \(iperf3\.exe on Windows takes the same arguments\): (iperf3 .+?)\s*$")


def _follow(stream: IO[str], seen: list[str], commands: list[str], problems: list[str]) -> None:
    """Read the play's output as it comes; run each printed command from h2, as the person would."""
    for line in stream:
        seen.append(line)
        found = COMMAND.search(line)
        if found is None:
            continue
        command = found.group(1)
        commands.append(command)
        argv = ["timeout", "-k", "2", "30", "ip", "netns", "exec", f"{PREFIX}-h2", *shlex.split(command)]
        for _attempt in range(5):  # the server may still be starting up its socket (it said listening first)
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=40, check=False)
            if proc.returncode == 0:
                break
            time.sleep(0.3)
        else:
            problems.append(f"{command}: {proc.stdout[-300:]} {proc.stderr[-300:]}")


def test_guided_external_sweep_follows_the_printed_commands(lab: Lab, tmp_path: Path) -> None:
    tests = [
        {
            "name": "guided",
            "pairs": [{"server": "h1", "external": {"count": 1, "deadline": 60, "from": ADDRESS["h2"]}}],
            "streams": [1, 2, 3],
            "duration": 1,
        }
    ]
    variables = paired_test_vars(tmp_path, tests, paired_test_port_base=PORT_BASE + 10)
    argv = [str(ANSIBLE_PLAYBOOK), "-i", str(lab.inventory), str(PAIRED_TEST_PLAYBOOK), "-e", f"@{variables}"]
    seen: list[str] = []
    commands: list[str] = []
    problems: list[str] = []
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ansible_env(PYTHONUNBUFFERED="1")
    ) as play:
        assert play.stdout is not None
        reader = threading.Thread(target=_follow, args=(play.stdout, seen, commands, problems), daemon=True)
        reader.start()
        try:
            rc = play.wait(timeout=PLAY_TIMEOUT)
        finally:
            if play.poll() is None:
                play.kill()
        reader.join(timeout=30)
    output = "".join(seen)
    assert rc == 0 and problems == [], (problems, output[-4000:])
    # one printed command per step, each with its own -P, run as printed
    assert commands == [f"iperf3 -c {ADDRESS['h1']} -p {PORT_BASE + 10} -t 1 -P {n}" for n in (1, 2, 3)]
    doc, _directory = _report(tmp_path)
    runs = _records(doc)
    assert [r["streams"] for r in runs] == [1, 2, 3]
    for run, item in zip(runs, doc["results"], strict=True):
        (pair,) = run["pairs"]
        assert pair["measured_by"] == "server" and pair["sender"] == f"external {ADDRESS['h2']}"
        assert pair["external"]["command"] == commands[run["streams"] - 1]
        assert item["result"]["side"] == "server" and item["result"]["streams"] == run["streams"]  # the -P it ran
    rates = {r["streams"]: r["total_bits_per_second"] for r in runs}
    # 40 Mbit/s per flow under a 100 Mbit/s link: 1 stream ~38, 2 ~76, 3 streams fill the link (~95)
    assert 0.8 * FLOW_RATE < rates[1] < 1.02 * FLOW_RATE and rates[1] < rates[2] < rates[3] < RATE, rates
    [sweep] = doc["sweeps"]
    assert [p["streams"] for p in sweep["points"]] == [1, 2, 3]
    assert sweep["knee"] == 3 and sweep["plateau_streams"] == [3]
    assert sweep["plateau_bits_per_second"] == pytest.approx(rates[3])
    print(f"\nguided sweep on the lab: {[round(v / 1e6, 1) for v in rates.values()]} Mbit/s, knee {sweep['knee']}")


# --------------------------------------------------------------------------------------------
# Seed 003: a host with a Linux bridge on its path, from playbooks/bridge-host.yml
# --------------------------------------------------------------------------------------------


def _netns(host: str, *argv: str) -> None:
    subprocess.run(["ip", "netns", "exec", f"{PREFIX}-{host}", *argv], check=True, timeout=10, capture_output=True)


def test_the_script_reads_the_ports_of_a_real_bridge(lab: Lab) -> None:
    """iperf_facts' script in a namespace of the test's own: a bridge with a veth port, its reading."""
    ns = f"{PREFIX}-brscript"
    subprocess.run(["ip", "netns", "add", ns], check=True, timeout=10)
    try:
        run = ["ip", "netns", "exec", ns]
        for argv in (
            ["ip", "link", "add", "br0", "type", "bridge"],
            ["ip", "link", "add", "p0", "type", "veth", "peer", "name", "p1"],
            ["ip", "link", "set", "p0", "master", "br0"],
            ["ip", "addr", "add", f"{SUBNET}.250/24", "dev", "br0"],
            ["ip", "link", "set", "br0", "up"],
        ):
            subprocess.run([*run, *argv], check=True, timeout=10)
        script = build_script("MK", gather_tools=False, nic_counters_of=[f"{SUBNET}.250"])
        out = subprocess.run([*run, "sh", "-c", script], capture_output=True, text=True, timeout=30, check=True)
        probe = parse_probe_output(out.stdout, "MK")
        address = f"{SUBNET}.250"
        reading = linux_reading(address, probe.nic_interfaces[address], "", probe.nic_outputs[address])
        assert reading["interface"] == "br0" and reading["bridge"] == {"kind": "linux", "name": "br0", "ports": ["p0"]}
        assert [n["name"] for n in reading["nics"]] == ["br0", "p0"] and "tx_packets" in reading["nics"][1]["counters"]
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False, timeout=10)


def test_bridge_host_playbook_reads_the_bridge_and_measures_through_it(lab: Lab, tmp_path: Path) -> None:
    # h1's eth0 goes under br0 and its address moves to br0 (the namespace goes with the lab)
    address = ADDRESS["h1"]
    _netns("h1", "ip", "link", "add", "br0", "type", "bridge")
    _netns("h1", "ip", "link", "set", "br0", "address", _mac("h1"))
    _netns("h1", "ip", "link", "set", "eth0", "master", "br0")
    _netns("h1", "ip", "link", "set", "br0", "up")
    _netns("h1", "ip", "addr", "del", f"{address}/24", "dev", "eth0")
    _netns("h1", "ip", "addr", "add", f"{address}/24", "dev", "br0")
    reports = tmp_path / "reports"
    variables = {
        "esxilab_reports_dir": str(reports),
        "esxilab_bridge_require": True,
        "esxilab_bridge_streams": [1, 2],
        "esxilab_bridge_duration": 1,
        "esxilab_bridge_direction": "forward",
        "report_history": "none",
        "report_plots": False,
    }
    (tmp_path / "vars.json").write_text(json.dumps(variables))
    argv: list[str | Path] = [
        "-i",
        lab.inventory,
        "-i",
        REPO / "inventories" / "lab",
        REPO / "playbooks" / "bridge-host.yml",
    ]
    proc = run_playbook(
        *argv, "-e", f"@{tmp_path / 'vars.json'}", timeout=PLAY_TIMEOUT, env=ansible_env(ANSIBLE_FORKS="10")
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    assert f"h1 {address} is on the Linux bridge br0 (interface br0), ports: eth0." in output
    (found,) = reports.glob("bridge-host-*/bridge-host/results.json")
    doc = json.loads(found.read_text())
    assert doc["environment"]["bridge"] == {"kind": "linux", "name": "br0", "ports": ["eth0"]}
    nics = {(n["host"], n["nic"]): n for n in doc["environment"]["nics"]}
    assert nics[("h1", "br0")]["interface"] == "br0" and "bridge" not in nics[("h1", "br0")]
    assert nics[("h1", "eth0")]["bridge"] == "br0"
    runs = _records(doc)
    assert [r["streams"] for r in runs] == [1, 2] and all(r["ok"] for r in runs)
    for run in runs:  # through the bridge, h2 -> h1: each flow limited to 40 Mbit/s by h2's shaper
        assert 0.8 * FLOW_RATE * run["streams"] < run["total_bits_per_second"] < 1.02 * FLOW_RATE * run["streams"]
    # the NIC counters of the bridge and of its port were read around the test: the port's deltas are there
    delta = doc["nic"]["tests"]["bridge-host"]
    read = {(n["host"], n["nic"]) for n in delta["nics"]}
    assert {("h1", "br0"), ("h1", "eth0"), ("h2", "eth0")} <= read, delta
    assert all(isinstance(delta["counters"][name], int) for name in ("rx_dropped", "tx_dropped")), delta


def _mac(host: str) -> str:
    """The MAC of the host's eth0: br0 takes it, so the peers' neighbour entries stay right."""
    out = subprocess.run(
        ["ip", "-n", f"{PREFIX}-{host}", "-j", "link", "show", "dev", "eth0"],
        capture_output=True,
        text=True,
        timeout=10,
        check=True,
    )
    return str(json.loads(out.stdout)[0]["address"])
