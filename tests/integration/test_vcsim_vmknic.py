# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""esxilab.iperf.esxi_vmknic through ansible-playbook against govmomi's ESXi simulator (vcsim).

``tests/vcsim/`` is built offline against Debian's ``golang-github-vmware-govmomi-dev`` (GOPATH
mode, no network, CGO off, ``-trimpath``: the same binary every time) and started on 127.0.0.1
with its own credentials. It speaks the real vSphere SOAP API, so login, host lookup, property
reads and the faults are real. govmomi's simulator alone implements only a bare AddVirtualSwitch
(spec dropped), RemoveVirtualSwitch, AddPortGroup and RemovePortGroup; ``tests/vcsim/network.go``
adds what a standalone ESXi host does for the rest of the calls this module makes: the vSwitch
spec and MTU, UpdateVirtualSwitch, UpdatePortGroup, Add/Update/RemoveVirtualNic (partial
updates), the HostVirtualNicManager (service tags) and ResourceInUse for a port group still
carrying an adapter. So a VMkernel adapter goes create -> change (MTU up, new IP) -> unchanged
-> MTU down -> move -> remove over pyVmomi SOAP here, with check mode, diff and the management
guard. What the simulator cannot prove (a real host's defaults and refusals, a real link) is
listed in docs/vsphere-simulator.md.

Needs: go, golang-github-vmware-govmomi-dev (apt-get install -y golang-go
golang-github-vmware-govmomi-dev). Skipped with the reason when they are missing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.labkit import (
    ansible_env,
    run_playbook,
    simulator,
    vcsim_service,
)

pytestmark = pytest.mark.slow

PLAYBOOK_TIMEOUT = 300


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

    - name: VLAN change (UpdatePortGroup)
      esxilab.iperf.esxi_vmknic:
        portgroup: {name: iperf, vlan_id: 31}
      diff: true
      register: vlan_change

    - name: New vSwitch with an MTU
      esxilab.iperf.esxi_vmknic:
        vswitch: {name: vSwitch-mtu, mtu: 9000}
      register: mtu_new

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
              'vlan_change': vlan_change, 'mtu_new': mtu_new, 'mtu_removed': mtu_removed,
              'absent_check': absent_check, 'absent': absent, 'absent_again': absent_again,
              'bad_login': bad_login} | to_json }}
        mode: "0600"
"""


def _run_playbook(playbook: str, variables: dict[str, Any], work: Path) -> dict[str, Any]:
    (work / "play.yml").write_text(playbook)
    results_file = work / "results.json"
    extra = {**variables, "results_file": str(results_file), "ansible_python_interpreter": sys.executable}
    (work / "vars.json").write_text(json.dumps(extra))
    env = ansible_env(ANSIBLE_LOCAL_TEMP=str(work / "tmp"), ANSIBLE_HOME=str(work / "home"))
    env.pop("ANSIBLE_CONFIG", None)
    run = run_playbook(
        "-i", "localhost,", "-c", "local", "-e", f"@{work / 'vars.json'}", "play.yml",
        timeout=PLAYBOOK_TIMEOUT, env=env, cwd=work,
    )  # fmt: skip
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
    # No MTU asked for: the host's default, read back.
    assert create["vswitch"] == {"name": "vSwitch-iperf", "mtu": 1500, "uplinks": [], "portgroups": ["iperf"]}
    assert create["portgroup"] == {"name": "iperf", "vswitch": "vSwitch-iperf", "vlan_id": 30}
    # vmnic0 is vSwitch0's uplink (management), vmnic1 is free.
    assert create["physical_nics"] == [
        {
            "name": "vmnic0",
            "driver": "nvmxnet3",
            "mac": "00:0c:29:81:d8:a0",
            "link_up": True,
            "speed_mbps": 10000,
            "duplex": "full",
            "vswitch": "vSwitch0",
            "vswitch_mtu": 1500,
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


def test_a_vlan_change_is_applied_in_place(results: dict[str, Any]) -> None:
    vlan = results["vlan_change"]
    assert vlan["changed"] is True and vlan["converged"] is True
    assert vlan["operations"] == [{"op": "update_portgroup", "name": "iperf", "vlan_id": 31}]
    assert vlan["diff"]["before"]["portgroup"]["vlan_id"] == 30
    assert vlan["diff"]["after"]["portgroup"]["vlan_id"] == 31
    assert vlan["portgroup"] == {"name": "iperf", "vswitch": "vSwitch-iperf", "vlan_id": 31}


def test_a_new_vswitch_gets_its_mtu(results: dict[str, Any]) -> None:
    new = results["mtu_new"]
    assert new["changed"] is True and new["converged"] is True
    assert new["operations"] == [{"op": "add_vswitch", "name": "vSwitch-mtu", "mtu": 9000, "uplinks": []}]
    assert new["vswitch"] == {"name": "vSwitch-mtu", "mtu": 9000, "uplinks": [], "portgroups": []}
    assert not new.get("warnings"), new.get("warnings")
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
    with simulator(vcsim_binary, "-dvs-uplink", "vmnic1", "-no-vnic-manager") as variables:
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
    # Started without its HostVirtualNicManager: the real fault of the real call is named.
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


# -- a VMkernel adapter: create -> change -> unchanged -> MTU down -> move -> remove --------------

VMKNIC_PLAYBOOK = r"""
- name: esxi_vmknic's VMkernel adapter round trip against the simulator
  hosts: localhost
  gather_facts: false
  module_defaults:
    esxilab.iperf.esxi_vmknic:
      hostname: 127.0.0.1
      port: "{{ vcsim_port }}"
      username: "{{ vcsim_user }}"
      password: "{{ vcsim_password }}"
      validate_certs: false
  vars:
    first: &first
      vswitch: {name: vSwitch-vmk, uplinks: [vmnic1]}
      portgroup: {name: iperf-vmk, vlan_id: 40}
      vmknic: {ip_address: 198.18.40.1, netmask: 24, services: [vmotion]}
    jumbo: &jumbo
      vswitch: {name: vSwitch-vmk, uplinks: [vmnic1], mtu: 9000}
      portgroup: {name: iperf-vmk, vlan_id: 40}
      vmknic: {ip_address: 198.18.40.2, netmask: 255.255.255.0, mtu: 9000, services: [vmotion]}
  tasks:
    - name: Create (check mode)
      esxilab.iperf.esxi_vmknic: *first
      check_mode: true
      diff: true
      register: create_check

    - name: Create
      esxilab.iperf.esxi_vmknic: *first
      diff: true
      register: create

    - name: MTU up and a new address (check mode)
      esxilab.iperf.esxi_vmknic: *jumbo
      check_mode: true
      diff: true
      register: jumbo_check

    - name: MTU up and a new address
      esxilab.iperf.esxi_vmknic: *jumbo
      diff: true
      register: jumbo_applied

    - name: Again (unchanged)
      esxilab.iperf.esxi_vmknic: *jumbo
      register: jumbo_again

    - name: Again (unchanged, check mode)
      esxilab.iperf.esxi_vmknic: *jumbo
      check_mode: true
      register: jumbo_again_check

    - name: Only the VLAN - the adapter, left out, is untouched
      esxilab.iperf.esxi_vmknic:
        portgroup: {name: iperf-vmk, vlan_id: 41}
        vmknic: {}
      register: vlan_only

    - name: Only the adapter's MTU down - address, services and vSwitch untouched
      esxilab.iperf.esxi_vmknic:
        portgroup: {name: iperf-vmk}
        vmknic: {mtu: 1500}
      register: vmk_mtu_down

    - name: vSwitch MTU down
      esxilab.iperf.esxi_vmknic:
        vswitch: {name: vSwitch-vmk, mtu: 1500}
      register: vswitch_mtu_down

    - name: Both MTUs up again in one task
      esxilab.iperf.esxi_vmknic:
        vswitch: {name: vSwitch-vmk, mtu: 9000}
        portgroup: {name: iperf-vmk}
        vmknic: {mtu: 9000}
      register: both_up

    - name: Both MTUs down in one task
      esxilab.iperf.esxi_vmknic:
        vswitch: {name: vSwitch-vmk, mtu: 1500}
        portgroup: {name: iperf-vmk}
        vmknic: {mtu: 1500}
      register: both_down

    - name: Move the adapter to a second port group
      esxilab.iperf.esxi_vmknic:
        vswitch: {name: vSwitch-vmk}
        portgroup: {name: iperf-vmk2, vlan_id: 42}
        vmknic: {device: "{{ create.vmknic.device }}"}
      register: moved

    - name: The emptied port group can go now
      esxilab.iperf.esxi_vmknic:
        state: absent
        portgroup: {name: iperf-vmk}
      register: old_pg_removed

    - name: Management guard - vmk0, tagged management
      esxilab.iperf.esxi_vmknic:
        vmknic: {device: vmk0, mtu: 9000}
      register: guard_vmk0
      ignore_errors: true

    - name: Management guard - vmk0 in check mode
      esxilab.iperf.esxi_vmknic:
        vmknic: {device: vmk0, ip_address: 198.18.40.9, netmask: 24}
      check_mode: true
      register: guard_vmk0_check
      ignore_errors: true

    - name: Management guard - the management vSwitch's uplink
      esxilab.iperf.esxi_vmknic:
        vswitch: {name: vSwitch-steal, uplinks: [vmnic0]}
      register: guard_uplink
      ignore_errors: true

    - name: Other service tags (SelectVnicForNicType, DeselectVnicForNicType)
      esxilab.iperf.esxi_vmknic:
        vmknic: {device: "{{ create.vmknic.device }}", services: [vsan, provisioning]}
      register: retagged

    - name: Another TCP/IP stack is refused without recreate
      esxilab.iperf.esxi_vmknic:
        portgroup: {name: iperf-vmk2}
        vmknic: {device: "{{ create.vmknic.device }}", tcpip_stack: vmotion}
      register: stack_refused
      ignore_errors: true

    - name: Another TCP/IP stack with recreate (remove and add again)
      esxilab.iperf.esxi_vmknic:
        portgroup: {name: iperf-vmk2}
        vmknic: {device: "{{ create.vmknic.device }}", tcpip_stack: vmotion, ip_address: 198.18.40.3, netmask: 24}
        recreate: true
      register: recreated

    - name: IPv6 on a host with IPv6 disabled
      esxilab.iperf.esxi_vmknic:
        vmknic: {device: "{{ recreated.vmknic.device }}", ipv6: {addresses: ["2001:db8:40::1/64"]}}
      register: ipv6_refused
      ignore_errors: true

    - name: DHCP instead of the static address
      esxilab.iperf.esxi_vmknic:
        vmknic: {device: "{{ recreated.vmknic.device }}", dhcp: true}
      register: dhcp

    - name: Remove (check mode)
      esxilab.iperf.esxi_vmknic:
        state: absent
        vswitch: {name: vSwitch-vmk}
        portgroup: {name: iperf-vmk2}
        vmknic: {device: "{{ recreated.vmknic.device }}"}
      check_mode: true
      diff: true
      register: remove_check

    - name: Remove
      esxilab.iperf.esxi_vmknic:
        state: absent
        vswitch: {name: vSwitch-vmk}
        portgroup: {name: iperf-vmk2}
        vmknic: {device: "{{ recreated.vmknic.device }}"}
      register: removed

    - name: Remove again (unchanged)
      esxilab.iperf.esxi_vmknic:
        state: absent
        vswitch: {name: vSwitch-vmk}
        portgroup: {name: iperf-vmk2}
      register: removed_again

    - name: Save the results for the test
      ansible.builtin.copy:
        dest: "{{ results_file }}"
        content: >-
          {{ {'create_check': create_check, 'create': create, 'jumbo_check': jumbo_check,
              'jumbo_applied': jumbo_applied, 'jumbo_again': jumbo_again, 'jumbo_again_check': jumbo_again_check,
              'vlan_only': vlan_only, 'vmk_mtu_down': vmk_mtu_down, 'vswitch_mtu_down': vswitch_mtu_down,
              'both_up': both_up, 'both_down': both_down, 'moved': moved, 'old_pg_removed': old_pg_removed,
              'guard_vmk0': guard_vmk0, 'guard_vmk0_check': guard_vmk0_check, 'guard_uplink': guard_uplink,
              'retagged': retagged,
              'stack_refused': stack_refused, 'recreated': recreated, 'ipv6_refused': ipv6_refused,
              'dhcp': dhcp, 'remove_check': remove_check,
              'removed': removed, 'removed_again': removed_again} | to_json }}
        mode: "0600"
"""


@pytest.fixture(scope="module")
def vmk_results(vcsim_binary: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    with simulator(vcsim_binary) as variables:
        return _run_playbook(VMKNIC_PLAYBOOK, variables, tmp_path_factory.mktemp("vmknic"))


TEST_VMK = {
    "device": "vmk1",
    "portgroup": "iperf-vmk",
    "distributed": False,
    "mtu": 9000,
    "tcpip_stack": "defaultTcpipStack",
    "ipv4": {"dhcp": False, "address": "198.18.40.2", "netmask": "255.255.255.0"},
    "ipv6": None,
    "mac": "00:50:56:6b:00:01",
    "services": ["vmotion"],
}


def test_vmk_check_mode_predicts_and_creates_nothing(vmk_results: dict[str, Any]) -> None:
    check = vmk_results["create_check"]
    assert check["changed"] is True
    assert [op["op"] for op in check["operations"]] == ["add_vswitch", "add_portgroup", "add_vmknic", "select_service"]
    assert check["diff"]["before"] == {"vswitch": None, "portgroup": None, "vmknic": None}
    assert check["diff"]["after"]["vmknic"]["ipv4"] == {
        "dhcp": False,
        "address": "198.18.40.1",
        "netmask": "255.255.255.0",
    }
    assert (check["vswitch"], check["portgroup"], check["vmknic"]) == (None, None, None)
    # The real create sees nothing left over from check mode.
    assert vmk_results["create"]["operations"] == check["operations"]


def test_vmk_create_over_soap_reads_back_the_adapter(vmk_results: dict[str, Any]) -> None:
    create = vmk_results["create"]
    assert create["changed"] is True and create["converged"] is True
    assert create["vswitch"] == {"name": "vSwitch-vmk", "mtu": 1500, "uplinks": ["vmnic1"], "portgroups": ["iperf-vmk"]}
    assert create["portgroup"] == {"name": "iperf-vmk", "vswitch": "vSwitch-vmk", "vlan_id": 40}
    assert create["vmknic"] == {
        **TEST_VMK,
        "mtu": 1500,  # none asked for: the host's default
        "ipv4": {"dhcp": False, "address": "198.18.40.1", "netmask": "255.255.255.0"},  # netmask 24, dotted
    }


def test_vmk_mtu_up_and_new_address_vswitch_first(vmk_results: dict[str, Any]) -> None:
    check, applied = vmk_results["jumbo_check"], vmk_results["jumbo_applied"]
    assert check["operations"] == applied["operations"]
    assert [op["op"] for op in applied["operations"]] == ["update_vswitch", "update_vmknic"]  # vSwitch MTU first
    assert applied["operations"][1]["changes"] == [
        "IPv4 198.18.40.1/255.255.255.0 -> 198.18.40.2/255.255.255.0",
        "MTU 1500 -> 9000",
    ]
    assert check["vmknic"]["mtu"] == 1500  # check mode changed nothing
    assert check["diff"]["after"]["vmknic"]["mtu"] == 9000
    assert applied["changed"] is True and applied["converged"] is True
    assert applied["vswitch"]["mtu"] == 9000
    assert applied["vmknic"] == TEST_VMK
    assert applied["diff"]["before"]["vmknic"]["ipv4"]["address"] == "198.18.40.1"


def test_vmk_rerun_is_unchanged(vmk_results: dict[str, Any]) -> None:
    for name in ("jumbo_again", "jumbo_again_check"):
        assert vmk_results[name]["changed"] is False, name
        assert vmk_results[name]["operations"] == [], name
        assert vmk_results[name]["vmknic"] == TEST_VMK, name


def test_vmk_left_out_is_untouched(vmk_results: dict[str, Any]) -> None:
    vlan = vmk_results["vlan_only"]
    assert vlan["operations"] == [{"op": "update_portgroup", "name": "iperf-vmk", "vlan_id": 41}]
    assert vlan["vmknic"] == TEST_VMK
    assert vlan["vswitch"]["mtu"] == 9000
    down = vmk_results["vmk_mtu_down"]
    assert [op["op"] for op in down["operations"]] == ["update_vmknic"]
    assert down["operations"][0]["changes"] == ["MTU 9000 -> 1500"]
    assert down["vmknic"] == {**TEST_VMK, "mtu": 1500}  # address and tags kept
    assert down["vswitch"]["mtu"] == 9000  # not named: not lowered
    vswitch = vmk_results["vswitch_mtu_down"]
    assert vswitch["operations"] == [{"op": "update_vswitch", "name": "vSwitch-vmk", "mtu": 1500, "uplinks": None}]
    assert vswitch["vswitch"] == {
        "name": "vSwitch-vmk",
        "mtu": 1500,
        "uplinks": ["vmnic1"],
        "portgroups": ["iperf-vmk"],
    }


def test_vmk_mtu_order_both_ways(vmk_results: dict[str, Any]) -> None:
    up, down = vmk_results["both_up"], vmk_results["both_down"]
    assert [op["op"] for op in up["operations"]] == ["update_vswitch", "update_vmknic"]
    assert [op["op"] for op in down["operations"]] == ["update_vmknic", "update_vswitch"]  # adapter down first
    assert (up["vswitch"]["mtu"], up["vmknic"]["mtu"]) == (9000, 9000)
    assert (down["vswitch"]["mtu"], down["vmknic"]["mtu"]) == (1500, 1500)
    assert up["converged"] is True and down["converged"] is True


def test_vmk_moves_to_another_portgroup_and_the_old_one_can_go(vmk_results: dict[str, Any]) -> None:
    moved = vmk_results["moved"]
    assert [op["op"] for op in moved["operations"]] == ["add_portgroup", "update_vmknic"]
    assert moved["operations"][1]["changes"] == ["port group iperf-vmk -> iperf-vmk2"]
    assert moved["vmknic"] == {**TEST_VMK, "portgroup": "iperf-vmk2", "mtu": 1500}
    removed = vmk_results["old_pg_removed"]
    assert removed["operations"] == [{"op": "remove_portgroup", "name": "iperf-vmk"}]
    assert removed["portgroup"] is None


def test_vmk_management_guard_with_readable_tags(vmk_results: dict[str, Any]) -> None:
    for name in ("guard_vmk0", "guard_vmk0_check"):
        result = vmk_results[name]
        assert result["failed"] is True and result["changed"] is False, name
        assert result["msg"].startswith(
            "localhost.localdomain: VMkernel adapter vmk0 is part of the host's management network"
        ), result["msg"]
        assert "Set allow_management_changes: true to override" in result["msg"]
    uplink = vmk_results["guard_uplink"]
    assert uplink["failed"] is True and uplink["changed"] is False
    assert "vmnic0" in uplink["msg"] and "vSwitch0" in uplink["msg"], uplink["msg"]


def test_vmk_service_tags_and_stack_recreate(vmk_results: dict[str, Any]) -> None:
    retagged = vmk_results["retagged"]
    assert retagged["operations"] == [
        {"op": "select_service", "device": "vmk1", "nic_type": "vSphereProvisioning"},
        {"op": "select_service", "device": "vmk1", "nic_type": "vsan"},
        {"op": "deselect_service", "device": "vmk1", "nic_type": "vmotion"},
    ]
    assert retagged["vmknic"]["services"] == ["provisioning", "vsan"]
    refused = vmk_results["stack_refused"]
    assert refused["failed"] is True and refused["changed"] is False
    assert "Set recreate: true" in refused["msg"]
    recreated = vmk_results["recreated"]
    assert [op["op"] for op in recreated["operations"]] == ["remove_vmknic", "add_vmknic"]
    assert recreated["converged"] is True
    assert recreated["vmknic"]["tcpip_stack"] == "vmotion"
    assert recreated["vmknic"]["ipv4"]["address"] == "198.18.40.3"
    assert recreated["vmknic"]["mac"] != TEST_VMK["mac"]  # a new adapter, not the old one updated
    assert any("are not re-applied on TCP/IP stack vmotion" in w for w in recreated["warnings"])


def test_vmk_ipv6_refused_on_a_host_without_it_and_dhcp_applied(vmk_results: dict[str, Any]) -> None:
    refused = vmk_results["ipv6_refused"]
    assert refused["failed"] is True and refused["changed"] is False
    assert refused["msg"] == (
        "localhost.localdomain: vmk1: IPv6 is disabled on this host (networkInfo.ipV6Enabled is false); enable IPv6 "
        "on the host (it takes a reboot) before configuring IPv6 addresses"
    )
    dhcp = vmk_results["dhcp"]
    assert dhcp["changed"] is True and dhcp["converged"] is True
    assert dhcp["operations"][0]["changes"] == ["IPv4 198.18.40.3/255.255.255.0 -> dhcp"]
    assert dhcp["vmknic"]["ipv4"] == {"dhcp": True, "address": None, "netmask": None}
    assert dhcp["vmknic"]["tcpip_stack"] == "vmotion"  # the rest kept


def test_vmk_remove_in_order_and_idempotent(vmk_results: dict[str, Any]) -> None:
    check, removed = vmk_results["remove_check"], vmk_results["removed"]
    expected = [
        {"op": "remove_vmknic", "device": "vmk1"},
        {"op": "remove_portgroup", "name": "iperf-vmk2"},
        {"op": "remove_vswitch", "name": "vSwitch-vmk"},
    ]
    assert check["operations"] == removed["operations"] == expected
    assert check["vmknic"] is not None  # check mode removed nothing
    assert check["diff"]["after"] == {"vmknic": None, "portgroup": None, "vswitch": None}
    assert removed["converged"] is True
    assert (removed["vswitch"], removed["portgroup"], removed["vmknic"]) == (None, None, None)
    assert vmk_results["removed_again"]["changed"] is False
    assert vmk_results["removed_again"]["operations"] == []


# -- the harness itself, read over pyVmomi: HostSystem.config.network follows every change --------


def test_simulator_keeps_host_config_and_policies_consistent(vcsim_binary: Path) -> None:
    """What the module does not read: HostSystem.config.network, the vSwitch policy kept across
    an MTU-only UpdateVirtualSwitch, a port group's policy overrides in its computedPolicy, and
    the faults a real host gives (ResourceInUse, AlreadyExists, InvalidArgument)."""
    pytest.importorskip("pyVmomi")
    from pyVmomi import vim as vim_types

    vim: Any = vim_types  # pyVmomi's constructors are untyped

    with simulator(vcsim_binary) as variables, vcsim_service(variables["vcsim_port"]) as si:
        host = si.content.rootFolder.childEntity[0].hostFolder.childEntity[0].host[0]
        ns = host.configManager.networkSystem
        policy = vim.host.NetworkPolicy(
            security=vim.host.NetworkPolicy.SecurityPolicy(
                allowPromiscuous=True, macChanges=True, forgedTransmits=True
            ),
            nicTeaming=vim.host.NetworkPolicy.NicTeamingPolicy(
                policy="loadbalance_ip",
                nicOrder=vim.host.NetworkPolicy.NicOrderPolicy(activeNic=["vmnic1"]),
            ),
        )
        bridge = vim.host.VirtualSwitch.BondBridge(nicDevice=["vmnic1"])
        spec = vim.host.VirtualSwitch.Specification(numPorts=64, mtu=9000, bridge=bridge, policy=policy)
        ns.AddVirtualSwitch(vswitchName="vSwitch-h", spec=spec)
        with pytest.raises(vim.fault.AlreadyExists):
            ns.AddVirtualSwitch(vswitchName="vSwitch-h", spec=spec)
        with pytest.raises(vim.fault.ResourceInUse):  # vmnic1 is taken now
            ns.AddVirtualSwitch(vswitchName="vSwitch-other", spec=spec)
        override = vim.host.NetworkPolicy(security=vim.host.NetworkPolicy.SecurityPolicy(allowPromiscuous=False))
        ns.AddPortGroup(
            portgrp=vim.host.PortGroup.Specification(
                name="pg-h", vlanId=5, vswitchName="vSwitch-h", policy=vim.host.NetworkPolicy()
            )
        )
        ns.UpdatePortGroup(
            pgName="pg-h",
            portgrp=vim.host.PortGroup.Specification(name="pg-h", vlanId=6, vswitchName="vSwitch-h", policy=override),
        )
        ip = vim.host.IpConfig(dhcp=False, ipAddress="198.18.50.1", subnetMask="255.255.255.0")
        device = ns.AddVirtualNic(portgroup="pg-h", nic=vim.host.VirtualNic.Specification(ip=ip, mtu=9000))
        # An MTU-only update as esxi_vmknic sends it: the bridge sent back (left out, the
        # uplinks would go), the policy left unset ("unchanged").
        ns.UpdateVirtualSwitch(
            vswitchName="vSwitch-h",
            spec=vim.host.VirtualSwitch.Specification(numPorts=64, mtu=1600, bridge=bridge),
        )
        ns.UpdateVirtualNic(device=device, nic=vim.host.VirtualNic.Specification(mtu=1600))
        with pytest.raises(vim.fault.ResourceInUse):
            ns.RemovePortGroup(pgName="pg-h")
        with pytest.raises(vmodl_fault("InvalidArgument")):
            ns.UpdateVirtualSwitch(
                vswitchName="vSwitch-h", spec=vim.host.VirtualSwitch.Specification(numPorts=64, mtu=9001)
            )

        network = host.config.network
        [vswitch] = [v for v in network.vswitch if v.name == "vSwitch-h"]
        assert (vswitch.mtu, list(vswitch.pnic)) == (1600, ["key-vim.host.PhysicalNic-vmnic1"])
        assert list(vswitch.portgroup) == ["key-vim.host.PortGroup-pg-h"]
        assert vswitch.spec.policy.security.allowPromiscuous is True
        assert vswitch.spec.policy.nicTeaming.policy == "loadbalance_ip"
        [portgroup] = [p for p in network.portgroup if p.spec.name == "pg-h"]
        assert portgroup.spec.vlanId == 6
        assert portgroup.spec.policy.security.allowPromiscuous is False
        computed = portgroup.computedPolicy.security
        assert (computed.allowPromiscuous, computed.macChanges, computed.forgedTransmits) == (False, True, True)
        assert portgroup.computedPolicy.nicTeaming.policy == "loadbalance_ip"
        assert [p.type for p in portgroup.port] == ["host"]
        [vnic] = [v for v in network.vnic if v.device == device]
        assert (vnic.portgroup, vnic.spec.mtu, vnic.spec.ip.ipAddress) == ("pg-h", 1600, "198.18.50.1")
        # networkInfo and config.network agree.
        assert [v.device for v in ns.networkInfo.vnic] == [v.device for v in network.vnic]
        assert [v.mtu for v in ns.networkInfo.vswitch] == [v.mtu for v in network.vswitch]

        ns.RemoveVirtualNic(device=device)
        ns.RemoveVirtualSwitch(vswitchName="vSwitch-h")  # takes its port group with it
        network = host.config.network
        assert "vSwitch-h" not in [v.name for v in network.vswitch]
        assert "pg-h" not in [p.spec.name for p in network.portgroup]
        assert device not in [v.device for v in network.vnic]


def vmodl_fault(name: str) -> type[BaseException]:
    from pyVmomi import vmodl

    fault: type[BaseException] = getattr(vmodl.fault, name)
    return fault


# -- vSwitch security / teaming policy and port-group overrides over SOAP ---------------------------

POLICY_PLAYBOOK = r"""
- name: esxi_vmknic's vSwitch policy and port-group overrides against the simulator
  hosts: localhost
  gather_facts: false
  module_defaults:
    esxilab.iperf.esxi_vmknic:
      hostname: 127.0.0.1
      port: "{{ vcsim_port }}"
      username: "{{ vcsim_user }}"
      password: "{{ vcsim_password }}"
      validate_certs: false
  vars:
    policy: &policy
      vswitch:
        name: vSwitch-fwd
        security: {allow_promiscuous: true, forged_transmits: true, mac_changes: true}
        teaming: {active_uplinks: [vmnic2], standby_uplinks: [vmnic1], load_balancing: failover_explicit}
      portgroup:
        name: fwd
        security: {allow_promiscuous: false}
        teaming: {load_balancing: loadbalance_srcmac}
  tasks:
    - name: A test vSwitch with two uplinks and a port group, no policy named
      esxilab.iperf.esxi_vmknic:
        vswitch: {name: vSwitch-fwd, uplinks: [vmnic1, vmnic2]}
        portgroup: {name: fwd, vlan_id: 50}
      register: base

    - name: Policy (check mode)
      esxilab.iperf.esxi_vmknic: *policy
      check_mode: true
      diff: true
      register: policy_check

    - name: Policy
      esxilab.iperf.esxi_vmknic: *policy
      diff: true
      register: policy_applied

    - name: Policy again (unchanged)
      esxilab.iperf.esxi_vmknic: *policy
      register: policy_again

    - name: Policy again (check mode, unchanged)
      esxilab.iperf.esxi_vmknic: *policy
      check_mode: true
      diff: true
      register: policy_again_check

    - name: Only MAC changes on the vSwitch (the rest left out)
      esxilab.iperf.esxi_vmknic:
        vswitch: {name: vSwitch-fwd, security: {mac_changes: false}}
      diff: true
      register: vswitch_left_out

    - name: Only forged transmits on the port group (the other overrides left out)
      esxilab.iperf.esxi_vmknic:
        portgroup: {name: fwd, security: {forged_transmits: false}}
      diff: true
      register: portgroup_left_out

    - name: An uplink the vSwitch does not have
      esxilab.iperf.esxi_vmknic:
        vswitch: {name: vSwitch-fwd, teaming: {active_uplinks: [vmnic1, vmnic0]}}
      register: bad_unknown
      ignore_errors: true

    - name: A NIC both active and standby
      esxilab.iperf.esxi_vmknic:
        portgroup: {name: fwd, teaming: {active_uplinks: [vmnic1], standby_uplinks: [vmnic1]}}
      register: bad_both
      ignore_errors: true

    - name: Promiscuous on the management port group (refused)
      esxilab.iperf.esxi_vmknic:
        portgroup: {name: Management Network, security: {allow_promiscuous: true}}
      register: guard_portgroup
      ignore_errors: true

    - name: Promiscuous on the management port group (check mode, refused)
      esxilab.iperf.esxi_vmknic:
        portgroup: {name: Management Network, security: {allow_promiscuous: true}}
      check_mode: true
      register: guard_portgroup_check
      ignore_errors: true

    - name: Teaming of the management vSwitch (refused)
      esxilab.iperf.esxi_vmknic:
        vswitch: {name: vSwitch0, teaming: {load_balancing: loadbalance_ip}}
      register: guard_vswitch
      ignore_errors: true

    - name: The test policy after the refusals (check mode)
      esxilab.iperf.esxi_vmknic:
        vswitch: {name: vSwitch-fwd, security: {mac_changes: false}}
        portgroup: {name: fwd, security: {forged_transmits: false}}
      check_mode: true
      register: after_refusals

    - name: Save the results for the test
      ansible.builtin.copy:
        dest: "{{ results_file }}"
        content: >-
          {{ {'base': base, 'policy_check': policy_check, 'policy_applied': policy_applied,
              'policy_again': policy_again, 'policy_again_check': policy_again_check,
              'vswitch_left_out': vswitch_left_out, 'portgroup_left_out': portgroup_left_out,
              'bad_unknown': bad_unknown, 'bad_both': bad_both, 'guard_portgroup': guard_portgroup,
              'guard_portgroup_check': guard_portgroup_check, 'guard_vswitch': guard_vswitch,
              'after_refusals': after_refusals} | to_json }}
        mode: "0600"
"""


def _read_policies(port: int) -> dict[str, Any]:
    """The policies as the simulator holds them, read with pyVmomi (not through the module)."""
    with vcsim_service(port) as si:
        host = si.content.rootFolder.childEntity[0].hostFolder.childEntity[0].host[0]
        info = host.configManager.networkSystem.networkInfo

        def policy(value: Any) -> dict[str, Any]:
            security, teaming = value.security, value.nicTeaming
            order = teaming.nicOrder if teaming is not None else None
            return {
                "promiscuous": None if security is None else security.allowPromiscuous,
                "forged": None if security is None else security.forgedTransmits,
                "mac": None if security is None else security.macChanges,
                "balancing": None if teaming is None else teaming.policy,
                "active": None if order is None else list(order.activeNic or []),
                "standby": None if order is None else list(order.standbyNic or []),
            }

        out: dict[str, Any] = {}
        for vswitch in info.vswitch:
            out[f"vswitch {vswitch.name}"] = policy(vswitch.spec.policy)
        for group in info.portgroup:
            out[f"computed {group.spec.name}"] = policy(group.computedPolicy)
            out[f"overrides {group.spec.name}"] = policy(group.spec.policy)
        return out


@pytest.fixture(scope="module")
def policy_results(vcsim_binary: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    pytest.importorskip("pyVmomi")
    with simulator(vcsim_binary, "-extra-nics", "1") as variables:
        before = _read_policies(variables["vcsim_port"])
        results = _run_playbook(POLICY_PLAYBOOK, variables, tmp_path_factory.mktemp("policy"))
        return {**results, "host_before": before, "host_after": _read_policies(variables["vcsim_port"])}


FWD_SECURITY = {"allow_promiscuous": True, "forged_transmits": True, "mac_changes": True}
FWD_TEAMING = {"active_uplinks": ["vmnic2"], "standby_uplinks": ["vmnic1"], "load_balancing": "failover_explicit"}


def test_policy_check_mode_shows_the_change_and_changes_nothing(policy_results: dict[str, Any]) -> None:
    check = policy_results["policy_check"]
    assert check["changed"] is True
    assert [op["op"] for op in check["operations"]] == ["set_vswitch_policy", "set_portgroup_policy"]
    before, after = check["diff"]["before"], check["diff"]["after"]
    assert before["vswitch"]["policy"] == {
        "security": {"allow_promiscuous": False, "forged_transmits": False, "mac_changes": False},
        "teaming": {
            "active_uplinks": ["vmnic1", "vmnic2"],
            "standby_uplinks": [],
            "load_balancing": "loadbalance_srcid",
        },
    }
    assert after["vswitch"]["policy"] == {"security": FWD_SECURITY, "teaming": FWD_TEAMING}
    assert after["portgroup"]["policy"]["security"] == {
        "allow_promiscuous": False,
        "forged_transmits": None,
        "mac_changes": None,
    }
    # check mode returned the host as it was
    assert check["vswitch"]["policy"] == before["vswitch"]["policy"]
    assert policy_results["policy_applied"]["operations"] == check["operations"]


def test_policy_is_applied_over_soap_and_read_back(policy_results: dict[str, Any]) -> None:
    applied = policy_results["policy_applied"]
    assert applied["changed"] is True and applied["converged"] is True
    assert applied["vswitch"]["policy"] == {"security": FWD_SECURITY, "teaming": FWD_TEAMING}
    assert applied["vswitch"]["uplinks"] == ["vmnic1", "vmnic2"]
    assert applied["portgroup"]["policy"] == {
        "security": {"allow_promiscuous": False, "forged_transmits": None, "mac_changes": None},
        "teaming": {"active_uplinks": None, "standby_uplinks": None, "load_balancing": "loadbalance_srcmac"},
    }
    assert applied["portgroup"]["vlan_id"] == 50  # left out: kept
    for name in ("policy_again", "policy_again_check"):
        assert policy_results[name]["changed"] is False, name
        assert policy_results[name]["operations"] == [], name


def test_policy_left_out_fields_are_untouched(policy_results: dict[str, Any]) -> None:
    vswitch = policy_results["vswitch_left_out"]
    assert vswitch["operations"] == [
        {"op": "set_vswitch_policy", "name": "vSwitch-fwd", "policy": {"mac_changes": False}}
    ]
    assert vswitch["vswitch"]["policy"] == {"security": {**FWD_SECURITY, "mac_changes": False}, "teaming": FWD_TEAMING}
    group = policy_results["portgroup_left_out"]
    assert group["operations"] == [{"op": "set_portgroup_policy", "name": "fwd", "policy": {"forged_transmits": False}}]
    assert group["portgroup"]["policy"]["security"] == {
        "allow_promiscuous": False,
        "forged_transmits": False,
        "mac_changes": None,
    }
    assert group["portgroup"]["policy"]["teaming"]["load_balancing"] == "loadbalance_srcmac"
    assert group["portgroup"]["vlan_id"] == 50
    # What the host computes: the vSwitch's policy with the overrides on top.
    host = policy_results["host_after"]
    assert host["computed fwd"] == {
        "promiscuous": False,  # override
        "forged": False,  # override
        "mac": False,  # inherited from the vSwitch
        "balancing": "loadbalance_srcmac",  # override
        "active": ["vmnic2"],  # inherited
        "standby": ["vmnic1"],
    }


def test_bad_policy_input_is_refused_naming_the_option(policy_results: dict[str, Any]) -> None:
    unknown = policy_results["bad_unknown"]
    assert unknown["failed"] is True and unknown["changed"] is False
    assert "vswitch.teaming.active_uplinks: vmnic0 is not an uplink of vSwitch vSwitch-fwd" in unknown["msg"]
    assert "add it to vswitch.uplinks or leave it out of active_uplinks" in unknown["msg"]
    both = policy_results["bad_both"]
    assert both["failed"] is True and both["changed"] is False
    assert "portgroup.teaming: vmnic1 is in both active_uplinks and standby_uplinks" in both["msg"]
    # nothing changed by them (nor by the refusals below): the test policy is still the one set last
    assert policy_results["after_refusals"]["changed"] is False


def test_policy_guard_refuses_the_management_network(policy_results: dict[str, Any]) -> None:
    for name in ("guard_portgroup", "guard_portgroup_check"):
        result = policy_results[name]
        assert result["failed"] is True and result["changed"] is False, name
        assert "The policy of port group Management Network is part of the host's management network" in result["msg"]
        assert "Set allow_management_changes: true to override" in result["msg"]
    guard = policy_results["guard_vswitch"]
    assert guard["failed"] is True and guard["changed"] is False
    assert "The policy of vSwitch vSwitch0 is part of the host's management network" in guard["msg"]
    before, after = policy_results["host_before"], policy_results["host_after"]
    for key in ("vswitch vSwitch0", "computed Management Network", "overrides Management Network"):
        assert after[key] == before[key], key
