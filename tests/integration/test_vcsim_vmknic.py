# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""esxilab.iperf.esxi_vmknic through ansible-playbook against govmomi's ESXi simulator (vcsim).

``tests/vcsim/main.go`` is built offline against Debian's ``golang-github-vmware-govmomi-dev``
(GOPATH mode, no network, CGO off, ``-trimpath``: the same binary every time) and started on
127.0.0.1 with its own credentials. It speaks the real vSphere SOAP API, so login, host lookup,
property reads and the faults are real; but it implements only AddVirtualSwitch (spec ignored),
RemoveVirtualSwitch, AddPortGroup and RemovePortGroup of HostNetworkSystem, and no
HostVirtualNicManager at all. So this covers: connect, find the host, create a vSwitch and a
port group, run again unchanged, check mode, diff, the management guard, an ignored MTU reported
as not converged, an unimplemented call reported with what was applied, removal, a bad login.
VMkernel adapter and MTU changes are covered by the unit tests against pyVmomi objects only.

Needs: go, golang-github-vmware-govmomi-dev (apt-get install -y golang-go
golang-github-vmware-govmomi-dev). Skipped with the reason when they are missing.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.collection_path import REPO, ensure_collection_path

pytestmark = pytest.mark.slow

GOVMOMI = Path("/usr/share/gocode/src/github.com/vmware/govmomi/simulator")
GO = shutil.which("go")
ANSIBLE_PLAYBOOK = Path(sys.executable).with_name("ansible-playbook")
BUILD_TIMEOUT = 480  # a cold build compiles the standard library with CGO off: ~100 s on 2 cores
START_TIMEOUT = 30
PLAYBOOK_TIMEOUT = 300
USERNAME = "root"
PASSWORD = "vcsim-test-password"


def _skip_reason() -> str | None:
    if GO is None:
        return "go is not installed (apt-get install -y golang-go)"
    if not GOVMOMI.is_dir():
        return f"{GOVMOMI} is missing (apt-get install -y golang-github-vmware-govmomi-dev)"
    if not ANSIBLE_PLAYBOOK.exists():
        return f"ansible-playbook is not next to {sys.executable}"
    return None


@pytest.fixture(scope="module")
def vcsim_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    assert GO is not None
    output = tmp_path_factory.mktemp("vcsim") / "vcsim-esx"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path_factory.getbasetemp()),
        "GO111MODULE": "off",  # GOPATH mode against Debian's packaged sources: no module download
        "GOPATH": "/usr/share/gocode",
        "GOFLAGS": "",
        "GOPROXY": "off",
        "CGO_ENABLED": "0",
        # Kept between runs so only the first build compiles the standard library.
        "GOCACHE": str(Path(tempfile.gettempdir()) / f"esxilab-vcsim-gocache-{os.getuid()}"),
    }
    build = subprocess.run(
        [GO, "build", "-trimpath", "-o", str(output), "./tests/vcsim"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    if build.returncode != 0:
        pytest.fail(f"go build of tests/vcsim failed ({build.returncode}):\n{build.stderr}")
    return output


@contextlib.contextmanager
def _simulator(vcsim_binary: Path, *extra: str) -> Iterator[dict[str, Any]]:
    """Start the simulator on a free loopback port; yield the connection variables."""
    log = (vcsim_binary.parent / f"vcsim{'-'.join(extra)}.log").open("w")  # stderr: read when something fails
    process = subprocess.Popen(
        [
            str(vcsim_binary),
            "-listen",
            "127.0.0.1:0",
            "-username",
            USERNAME,
            "-password",
            PASSWORD,
            "-lifetime",
            "10m",
            *extra,
        ],
        stdin=subprocess.PIPE,  # closing it stops the simulator
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def read_stdout() -> None:
        for line in process.stdout or []:
            lines.put(line)

    threading.Thread(target=read_stdout, daemon=True).start()
    try:
        try:
            first = lines.get(timeout=START_TIMEOUT)
        except queue.Empty:
            pytest.fail(f"vcsim printed no URL within {START_TIMEOUT} s")
        assert first.startswith("VCSIM_URL=https://127.0.0.1:"), first
        port = int(first.strip().rsplit(":", 1)[1].split("/", 1)[0])
        yield {"vcsim_port": port, "vcsim_user": USERNAME, "vcsim_password": PASSWORD}
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


@pytest.fixture(scope="module")
def vcsim(vcsim_binary: Path) -> Iterator[dict[str, Any]]:
    with _simulator(vcsim_binary) as variables:
        yield variables


PLAYBOOK = r"""
- name: esxi_vmknic against govmomi's ESXi simulator
  hosts: localhost
  gather_facts: false
  module_defaults:
    esxilab.iperf.esxi_vmknic:
      hostname: 127.0.0.1
      port: "{{ vcsim_port }}"
      username: "{{ vcsim_user }}"
      password: "{{ vcsim_password }}"
      validate_certs: false
  tasks:
    - name: Create vSwitch and port group (check mode)
      esxilab.iperf.esxi_vmknic:
        vswitch: {name: vSwitch-iperf}
        portgroup: {name: iperf, vlan_id: 30}
      check_mode: true
      diff: true
      register: create_check

    - name: Create vSwitch and port group
      esxilab.iperf.esxi_vmknic:
        vswitch: {name: vSwitch-iperf}
        portgroup: {name: iperf, vlan_id: 30}
      register: create

    - name: Create again (idempotent)
      esxilab.iperf.esxi_vmknic:
        vswitch: {name: vSwitch-iperf}
        portgroup: {name: iperf, vlan_id: 30}
      register: create_again

    - name: Create again (idempotent, check mode)
      esxilab.iperf.esxi_vmknic:
        vswitch: {name: vSwitch-iperf}
        portgroup: {name: iperf, vlan_id: 30}
      check_mode: true
      register: create_again_check

    - name: Management guard - vmk0
      esxilab.iperf.esxi_vmknic:
        vmknic: {device: vmk0, mtu: 9000}
      register: guard_vmk0
      ignore_errors: true

    - name: Management guard - management port group
      esxilab.iperf.esxi_vmknic:
        portgroup: {name: Management Network, vlan_id: 12}
      register: guard_pg
      ignore_errors: true

    - name: VLAN change needs UpdatePortGroup, which the simulator does not implement
      esxilab.iperf.esxi_vmknic:
        portgroup: {name: iperf, vlan_id: 31}
      register: vlan_change
      ignore_errors: true

    - name: New vSwitch with an MTU (the simulator drops the spec)
      esxilab.iperf.esxi_vmknic:
        vswitch: {name: vSwitch-mtu, mtu: 9000}
      register: mtu_dropped

    - name: Remove that vSwitch
      esxilab.iperf.esxi_vmknic:
        state: absent
        vswitch: {name: vSwitch-mtu}
      register: mtu_removed

    - name: Remove port group and vSwitch (check mode)
      esxilab.iperf.esxi_vmknic:
        state: absent
        vswitch: {name: vSwitch-iperf}
        portgroup: {name: iperf}
      check_mode: true
      register: absent_check

    - name: Remove port group and vSwitch
      esxilab.iperf.esxi_vmknic:
        state: absent
        vswitch: {name: vSwitch-iperf}
        portgroup: {name: iperf}
      register: absent

    - name: Remove again (idempotent)
      esxilab.iperf.esxi_vmknic:
        state: absent
        vswitch: {name: vSwitch-iperf}
        portgroup: {name: iperf}
      register: absent_again

    - name: Wrong password
      esxilab.iperf.esxi_vmknic:
        password: not-the-password
        portgroup: {name: iperf}
      register: bad_login
      ignore_errors: true

    - name: Save the results for the test
      ansible.builtin.copy:
        dest: "{{ results_file }}"
        content: >-
          {{ {'create_check': create_check, 'create': create, 'create_again': create_again,
              'create_again_check': create_again_check, 'guard_vmk0': guard_vmk0, 'guard_pg': guard_pg,
              'vlan_change': vlan_change, 'mtu_dropped': mtu_dropped, 'mtu_removed': mtu_removed,
              'absent_check': absent_check, 'absent': absent, 'absent_again': absent_again,
              'bad_login': bad_login} | to_json }}
        mode: "0600"
"""


def _run_playbook(playbook: str, variables: dict[str, Any], work: Path) -> dict[str, Any]:
    (work / "play.yml").write_text(playbook)
    results_file = work / "results.json"
    extra = {**variables, "results_file": str(results_file), "ansible_python_interpreter": sys.executable}
    (work / "vars.json").write_text(json.dumps(extra))
    env = {
        **os.environ,
        "ANSIBLE_COLLECTIONS_PATH": str(ensure_collection_path()),
        "ANSIBLE_LOCAL_TEMP": str(work / "tmp"),
        "ANSIBLE_HOME": str(work / "home"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
    }
    env.pop("ANSIBLE_CONFIG", None)
    run = subprocess.run(
        [str(ANSIBLE_PLAYBOOK), "-i", "localhost,", "-c", "local", "-e", f"@{work / 'vars.json'}", "play.yml"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=PLAYBOOK_TIMEOUT,
        check=False,
    )
    assert run.returncode == 0, f"ansible-playbook failed ({run.returncode}):\n{run.stdout}\n{run.stderr}"
    loaded: dict[str, Any] = json.loads(results_file.read_text())
    return loaded


@pytest.fixture(scope="module")
def results(vcsim: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _run_playbook(PLAYBOOK, vcsim, tmp_path_factory.mktemp("playbook"))


def test_check_mode_predicts_the_creation_with_a_diff(results: dict[str, Any]) -> None:
    check = results["create_check"]
    assert check["changed"] is True
    assert [op["op"] for op in check["operations"]] == ["add_vswitch", "add_portgroup"]
    assert check["diff"]["before"] == {"vswitch": None, "portgroup": None}
    assert check["diff"]["after"] == {
        "vswitch": {"name": "vSwitch-iperf", "mtu": None, "uplinks": [], "portgroups": ["iperf"]},
        "portgroup": {"name": "iperf", "vswitch": "vSwitch-iperf", "vlan_id": 30},
    }
    assert (check["vswitch"], check["portgroup"]) == (None, None)  # nothing was created


def test_create_connects_finds_the_host_and_reads_back(results: dict[str, Any]) -> None:
    create = results["create"]
    assert create["changed"] is True
    assert create["converged"] is True
    assert create["host"] == "localhost.localdomain"
    assert create["operations"] == [
        {"op": "add_vswitch", "name": "vSwitch-iperf", "mtu": None, "uplinks": []},
        {"op": "add_portgroup", "name": "iperf", "vswitch": "vSwitch-iperf", "vlan_id": 30},
    ]
    # The simulator stores no MTU for a new vSwitch: reported as unknown, not as a guess.
    assert create["vswitch"] == {"name": "vSwitch-iperf", "mtu": None, "uplinks": [], "portgroups": ["iperf"]}
    assert create["portgroup"] == {"name": "iperf", "vswitch": "vSwitch-iperf", "vlan_id": 30}
    # Read from HostSystem.config.network (the simulator leaves networkInfo.pnic empty).
    assert create["physical_nics"] == [
        {
            "name": "vmnic0",
            "driver": "nvmxnet3",
            "mac": "00:0c:29:81:d8:a0",
            "link_up": True,
            "speed_mbps": 10000,
            "duplex": "full",
            "vswitch": None,
            "vswitch_mtu": None,
        },
        {
            "name": "vmnic1",
            "driver": "nvmxnet3",
            "mac": "00:0c:29:81:d8:aa",
            "link_up": True,
            "speed_mbps": 10000,
            "duplex": "full",
            "vswitch": None,
            "vswitch_mtu": None,
        },
    ]


def test_second_run_is_unchanged(results: dict[str, Any]) -> None:
    for name in ("create_again", "create_again_check"):
        assert results[name]["changed"] is False, name
        assert results[name]["operations"] == [], name
        assert results[name]["portgroup"] == {"name": "iperf", "vswitch": "vSwitch-iperf", "vlan_id": 30}


def test_management_guard_refuses_vmk0_and_the_management_portgroup(results: dict[str, Any]) -> None:
    vmk0 = results["guard_vmk0"]
    assert vmk0["failed"] is True and vmk0["changed"] is False
    assert vmk0["msg"] == (
        "localhost.localdomain: VMkernel adapter vmk0 is part of the host's management network (the host's first "
        "VMkernel adapter); refusing to change it. Set allow_management_changes: true to override (make sure you "
        "keep another way into the host)."
    )
    pg = results["guard_pg"]
    assert pg["failed"] is True
    assert "Port group Management Network is part of the host's management network" in pg["msg"]


def test_unimplemented_call_fails_naming_it_and_what_was_applied(results: dict[str, Any]) -> None:
    vlan = results["vlan_change"]
    assert vlan["failed"] is True and vlan["changed"] is False
    assert vlan["msg"].startswith("localhost.localdomain: update port group iperf: VLAN 31 failed: MethodNotFound")
    assert "does not implement: UpdatePortGroup" in vlan["msg"]
    assert vlan["msg"].endswith("Already applied: nothing.")
    assert vlan["applied"] == []


def test_a_dropped_mtu_is_reported_as_not_converged(results: dict[str, Any]) -> None:
    dropped = results["mtu_dropped"]
    assert dropped["changed"] is True
    assert dropped["converged"] is False
    assert dropped["vswitch"]["mtu"] is None
    assert any(
        "still differs from the request: update vSwitch vSwitch-mtu: mtu 9000" in str(w)
        for w in dropped.get("warnings", [])
    ), dropped.get("warnings")
    assert results["mtu_removed"]["changed"] is True
    assert results["mtu_removed"]["vswitch"] is None


def test_absent_removes_portgroup_then_vswitch_and_is_idempotent(results: dict[str, Any]) -> None:
    check = results["absent_check"]
    assert check["changed"] is True
    assert check["operations"] == [
        {"op": "remove_portgroup", "name": "iperf"},
        {"op": "remove_vswitch", "name": "vSwitch-iperf"},
    ]
    assert check["portgroup"] is not None  # check mode removed nothing
    absent = results["absent"]
    assert absent["changed"] is True and absent["converged"] is True
    assert (absent["vswitch"], absent["portgroup"]) == (None, None)
    assert results["absent_again"]["changed"] is False


def test_bad_login_is_reported(results: dict[str, Any]) -> None:
    bad = results["bad_login"]
    assert bad["failed"] is True
    assert bad["msg"].startswith("cannot log in to the vSphere API at 127.0.0.1:")
    assert bad["msg"].endswith(" as root: Login failure")


# -- a host on a distributed switch, with no readable service tags -------------------------------

DVS_PLAYBOOK = r"""
- name: esxi_vmknic's management guard against the simulator with a distributed switch
  hosts: localhost
  gather_facts: false
  module_defaults:
    esxilab.iperf.esxi_vmknic:
      hostname: 127.0.0.1
      port: "{{ vcsim_port }}"
      username: "{{ vcsim_user }}"
      password: "{{ vcsim_password }}"
      validate_certs: false
  tasks:
    - name: A new vSwitch on the vDS uplink
      esxilab.iperf.esxi_vmknic:
        vswitch: {name: vSwitch-iperf, uplinks: [vmnic1]}
      register: take_dvs_uplink
      ignore_errors: true

    - name: The same with the override (still refused)
      esxilab.iperf.esxi_vmknic:
        vswitch: {name: vSwitch-iperf, uplinks: [vmnic1]}
        allow_management_changes: true
      register: take_dvs_uplink_override
      ignore_errors: true

    - name: The adapter on the vDS, whose service tags cannot be read
      esxilab.iperf.esxi_vmknic:
        vmknic: {device: vmk1, mtu: 9000}
      register: change_vmk1
      ignore_errors: true

    - name: A test network beside it on a free NIC is still built
      esxilab.iperf.esxi_vmknic:
        vswitch: {name: vSwitch-iperf}
        portgroup: {name: iperf, vlan_id: 30}
      register: beside

    - name: Remove it again
      esxilab.iperf.esxi_vmknic:
        state: absent
        vswitch: {name: vSwitch-iperf}
        portgroup: {name: iperf}
      register: beside_removed

    - name: Bad input - a vswitch given as a string
      esxilab.iperf.esxi_vmknic:
        vswitch: vSwitch-iperf
      register: vswitch_string
      ignore_errors: true

    - name: Save the results for the test
      ansible.builtin.copy:
        dest: "{{ results_file }}"
        content: >-
          {{ {'take_dvs_uplink': take_dvs_uplink, 'take_dvs_uplink_override': take_dvs_uplink_override,
              'change_vmk1': change_vmk1, 'beside': beside, 'beside_removed': beside_removed,
              'vswitch_string': vswitch_string} | to_json }}
        mode: "0600"
"""


@pytest.fixture(scope="module")
def dvs_results(vcsim_binary: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    with _simulator(vcsim_binary, "-dvs-uplink", "vmnic1") as variables:
        return _run_playbook(DVS_PLAYBOOK, variables, tmp_path_factory.mktemp("dvs"))


def test_a_vds_uplink_is_never_taken_for_a_standard_vswitch(dvs_results: dict[str, Any]) -> None:
    for name in ("take_dvs_uplink", "take_dvs_uplink_override"):
        result = dvs_results[name]
        assert result["failed"] is True and result["changed"] is False, name
        assert result["msg"].startswith(
            "localhost.localdomain: vSwitch vSwitch-iperf: physical NIC vmnic1 is an uplink of distributed switch "
            "DSwitch-mgmt, which might carry the host's management network (it carries vmk1, whose service tags "
            "could not be read)."
        ), result["msg"]
        assert "allow_management_changes does not change that" in result["msg"]


def test_unreadable_tags_refuse_the_vds_adapter_and_name_the_failed_call(dvs_results: dict[str, Any]) -> None:
    result = dvs_results["change_vmk1"]
    assert result["failed"] is True and result["changed"] is False
    msg = result["msg"]
    assert msg.startswith("localhost.localdomain: VMkernel adapter vmk1 might be part of the host's management network")
    # The simulator has no HostVirtualNicManager: the real fault of the real call is named.
    assert "reading HostVirtualNicManager.info failed: ManagedObjectNotFound" in msg, msg
    assert "the API user needs the System.Read privilege on the host" in msg
    assert "set allow_management_changes: true" in msg


def test_a_network_on_a_free_nic_is_built_beside_the_vds(dvs_results: dict[str, Any]) -> None:
    assert dvs_results["beside"]["changed"] is True and dvs_results["beside"]["converged"] is True
    assert dvs_results["beside_removed"]["changed"] is True


def test_a_vswitch_given_as_a_string_is_named(dvs_results: dict[str, Any]) -> None:
    result = dvs_results["vswitch_string"]
    assert result["failed"] is True
    assert result["msg"] == (
        "vswitch must be a dictionary of its sub-options, not the str 'vSwitch-iperf'; write it like vswitch: "
        "{name: vSwitch1, uplinks: [vmnic1]}"
    )
