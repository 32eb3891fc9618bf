# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""vnic-compare.yml and vswitch-forwarding.yml wire their guests against the simulator and test on the lab.

Issue 12's "done when" for the guests: both playbooks build their guests' wiring against govmomi's
ESXi simulator (tests/vcsim, started with VMs named after the lab hosts: ``-vm h1=e1000`` ...) -
check mode (predicted, nothing changed in the simulator), apply, an unchanged rerun - and run their
tests on the lab (``lab/esxilab_lab.py``, prefix ``gstpb``, 198.19.161.0/24, 4 hosts on 1 Gbit/s
links, 2 s runs): the wiring step is the role ``esxi_guests`` (community.vmware underneath), the
tests are real iperf3 between the lab's namespaces, and the report is written. The lab overlay
(``inventories/lab``) with the vSphere connection and the guest -> VM names as extra variables;
the simulator's VMs are read back with pyVmomi after every step, independently of the role.

What this does not prove: that the lab hosts are those VMs (the lab's "vNICs" are veths; the
wiring and the tests meet only in the playbook), and anything a real ESXi host does beyond the
simulator (docs/guests.md).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.collection_path import REPO
from tests.integration.labkit import (
    VCSIM_PASSWORD,
    VCSIM_USERNAME,
    Lab,
    ansible_env,
    lab_unavailable,
    printed,
    run_playbook,
    simulator,
    skip_if,
)
from tests.integration.test_esxi_guests_vcsim import vm_nics

pytestmark = [pytest.mark.lab, pytest.mark.slow]

PREFIX = os.environ.get("ESXILAB_GUESTS_PREFIX", "gstpb")
SUBNET = os.environ.get("ESXILAB_GUESTS_SUBNET", "198.19.161.0/24")
OVERLAY = REPO / "inventories" / "lab"
PLAY_TIMEOUT = 300
# h1 serves h2 (e1000) and h3 (vmxnet3) in vnic-compare (inventories/lab); all four are vswitch_guests.
VMS = ["h1=e1000", "h2=e1000", "h3=vmxnet3@iperf-vnic", "h4=vmxnet3@iperf-isolated"]


def _printed(output: str) -> list[str]:
    """Every ``msg`` string the default callback printed."""
    found: list[str] = []
    for value in printed(output):
        message = value.get("msg") if isinstance(value, dict) else None
        found += [message] if isinstance(message, str) else [m for m in message or [] if isinstance(m, str)]
    return found


@dataclass(frozen=True)
class Run:
    rc: int
    output: str
    reports: Path
    before: dict[str, list[tuple[str, str, str]]]
    after: dict[str, list[tuple[str, str, str]]]

    def ok(self) -> Run:
        assert self.rc == 0, self.output[-6000:]
        return self

    def changed(self) -> dict[str, int]:
        """changed= of each host in the PLAY RECAP."""
        return {m[0]: int(m[1]) for m in re.findall(r"^(\S+)\s*:\s*ok=\d+\s+changed=(\d+)", self.output, re.M)}

    def plan(self) -> list[str]:
        """The role's per-guest lines: '<guest>: <action> - <reason>'."""
        return [m for m in _printed(self.output) if re.match(r"^h\d: (unchanged|add|replace|refuse) - ", m)]


@dataclass(frozen=True)
class Setup:
    lab: Lab
    port: int

    def play(self, name: str, tmp: Path, variables: dict[str, Any], *extra: str) -> Run:
        reports = tmp / "reports"
        values = {
            "esxilab_reports_dir": str(reports),
            "esxi_guests_hostname": "127.0.0.1",
            "esxi_guests_port": self.port,
            "esxi_guests_username": VCSIM_USERNAME,
            "esxi_guests_password": VCSIM_PASSWORD,
            "esxi_guests_validate_certs": False,
            **variables,
        }
        vars_file = tmp / f"vars-{name}.json"
        vars_file.write_text(json.dumps(values))
        playbook = REPO / "playbooks" / f"{name}.yml"
        before = vm_nics(self.port)
        proc = run_playbook(
            "-i", self.lab.inventory, "-i", OVERLAY, playbook, "-e", f"@{vars_file}", *extra,
            timeout=PLAY_TIMEOUT, env=ansible_env(ANSIBLE_FORKS="10"),
        )  # fmt: skip
        return Run(proc.returncode, proc.stdout + proc.stderr, reports, before, vm_nics(self.port))


@pytest.fixture(scope="module")
def setup(vcsim_binary: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    skip_if(lab_unavailable(("ip", "tc", "ssh", "ssh-keygen", "iperf3"), ansible=False))
    extra = [arg for vm in VMS for arg in ("-vm", vm)]
    lab = Lab(PREFIX, tmp_path_factory.mktemp(PREFIX) / "state", timeout=180)
    with (
        simulator(vcsim_binary, *extra) as variables,
        lab.session("--hosts", "4", "--subnet", SUBNET, "--rate", "1gbit"),
    ):
        yield Setup(lab, variables["vcsim_port"])


def kinds_on(nics: list[tuple[str, str, str]], portgroup: str) -> list[str]:
    return [kind for kind, _mac, net in nics if net == portgroup]


def report(run: Run, name: str) -> dict[str, Any]:
    (results,) = run.reports.glob(f"{name}-*/{name}/results.json")
    doc: dict[str, Any] = json.loads(results.read_text())
    return doc


def test_vnic_compare_wires_its_guests_then_tests_them(setup: Setup, tmp_path: Path) -> None:
    wiring = {"esxilab_vnic_vms": {"h2": "h2", "h3": "h3"}, "esxilab_vnic_portgroup": "iperf-vnic"}

    checked = setup.play("vnic-compare", tmp_path, wiring, "--check", "--diff", "--tags", "esxi_guests").ok()
    assert checked.plan() == [
        "h2: add - VM h2 has no vNIC on iperf-vnic: a vNIC of type e1000 is added (a new MAC address)",
        "h3: unchanged - VM h3 has a vNIC of type vmxnet3 on iperf-vnic",
    ]
    assert "Guests' vNICs: each guest a vNIC of its type on iperf-vnic (esxilab.iperf.esxi_guests)." in _printed(
        checked.output
    )
    assert '"network_name": "iperf-vnic"' in checked.output  # the module's diff of the predicted vNIC
    assert checked.after == checked.before  # check mode: nothing changed in the simulator
    assert not list(checked.reports.glob("vnic-compare-*/vnic-compare"))  # the tests did not run

    apply_dir = tmp_path / "apply"
    apply_dir.mkdir()
    applied = setup.play("vnic-compare", apply_dir, wiring).ok()
    assert kinds_on(applied.after["h2"], "iperf-vnic") == ["VirtualE1000"]
    assert kinds_on(applied.after["h2"], "VM Network") == ["VirtualE1000"]  # the other vNIC, untouched
    assert applied.after["h3"] == applied.before["h3"] and applied.after["h1"] == applied.before["h1"]
    doc = report(applied, "vnic-compare")  # the tests ran on the lab and the report is written
    assert [(r["server"], r["client"], r["labels"]["nic"]) for r in doc["results"]] == [
        ("h1", "h2", "e1000"),
        ("h1", "h3", "vmxnet3"),
    ]
    assert all(r["result"]["bits_per_second"] > 100e6 for r in doc["results"]), doc["results"]
    # seed 001's CPU of e1000 vs vmxnet3: each guest's and the server's host CPU per vNIC type (issue 23), in the
    # report and in the play's last line per type (the lab's hosts share the machine's /proc/stat)
    cpu = {g["compare"]: g["host_cpu"] for g in doc["summary"]}
    assert sorted(cpu) == ["e1000", "vmxnet3"] and sorted(cpu["e1000"]) == ["h1", "h2"]
    assert all(isinstance(c["mean_percent"], float) and c["runs"] == 1 for c in cpu["e1000"].values()), cpu
    (summary_md,) = applied.reports.glob("vnic-compare-*/vnic-compare/summary.md")
    assert "### Host CPU by `nic`" in summary_md.read_text()
    lines = [m for m in _printed(applied.output) if m.startswith(("e1000 (h2)", "vmxnet3 (h3)"))]
    assert len(lines) == 2 and all("host CPU mean / busiest core" in m for m in lines), lines
    assert (
        f"guest {cpu['e1000']['h2']['mean_percent']:.1f} % / {cpu['e1000']['h2']['max_core_percent']:.1f} %"
        in (lines[0])
    ), lines

    again = setup.play("vnic-compare", tmp_path, wiring, "--tags", "esxi_guests").ok()
    assert [line.split(" - ")[0] for line in again.plan()] == ["h2: unchanged", "h3: unchanged"]
    assert set(again.changed().values()) == {0} and again.after == applied.after


def test_vswitch_forwarding_wires_every_guest_on_the_isolated_portgroup_then_tests(
    setup: Setup, tmp_path: Path
) -> None:
    wiring = {
        "esxilab_vswitch_vms": {f"h{i}": f"h{i}" for i in range(1, 5)},
        "esxilab_vswitch_portgroup": "iperf-isolated",
    }

    checked = setup.play("vswitch-forwarding", tmp_path, wiring, "--check", "--diff", "--tags", "esxi_guests").ok()
    assert [line.split(" - ")[0] for line in checked.plan()] == ["h1: add", "h2: add", "h3: add", "h4: unchanged"]
    assert checked.after == checked.before

    apply_dir = tmp_path / "apply"
    apply_dir.mkdir()
    applied = setup.play("vswitch-forwarding", apply_dir, wiring).ok()
    for host in ("h1", "h2", "h3", "h4"):
        assert kinds_on(applied.after[host], "iperf-isolated") == ["VirtualVmxnet3"], (host, applied.after[host])
        other = [n for n in applied.after[host] if n[2] != "iperf-isolated"]
        assert other == [n for n in applied.before[host] if n[2] != "iperf-isolated"]  # other port groups untouched
    assert "Isolated vSwitch and port group: skipped - the local lab has no vSphere API" in applied.output
    doc = report(applied, "vswitch-forwarding")
    assert [(r["swapped"], r["pairs"]) for r in doc["runs"]] == [(False, 2), (True, 2)]
    assert all(r["result"]["bits_per_second"] > 100e6 for r in doc["results"]), doc["results"]
    again = setup.play("vswitch-forwarding", tmp_path, wiring, "--tags", "esxi_guests").ok()
    assert [line.split(" - ")[0] for line in again.plan()] == [f"h{i}: unchanged" for i in range(1, 5)]
    assert set(again.changed().values()) == {0} and again.after == applied.after


def test_without_the_connection_the_wiring_is_skipped_saying_why(setup: Setup, tmp_path: Path) -> None:
    run = setup.play(
        "vswitch-forwarding", tmp_path, {"esxi_guests_hostname": ""}, "--check", "--tags", "esxi_guests"
    ).ok()
    assert "Guests' vNICs: skipped - no vSphere connection in the inventory (esxi_guests_hostname)." in _printed(
        run.output
    )
    assert run.plan() == [] and run.after == run.before
