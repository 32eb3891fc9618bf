# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The esxi_network role through ansible-playbook against govmomi's ESXi simulator (vcsim).

The simulator is built and started by the fixtures of tests/integration/test_vcsim_vmknic.py
(offline, 127.0.0.1, its own credentials; tests/vcsim/network.go adds the VMkernel adapter
calls). This covers the role's wiring - the list of networks to esxi_vmknic tasks on the
controller, check mode, idempotence, the published esxi_network_vmknics and the preflight - for
networks with and without a VMkernel adapter, and an MTU change of both.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.collection_path import REPO
from tests.integration.labkit import run_playbook

pytestmark = pytest.mark.slow

PLAYBOOK = REPO / "tests" / "integration" / "targets" / "esxi_network" / "esxi_network.yml"


def _play(vcsim: dict[str, Any], tmp: Path, networks: Sequence[dict[str, Any]], *extra: str) -> dict[str, Any]:
    out = tmp / f"record-{len(list(tmp.glob('record-*')))}.json"
    variables = {
        "e2e_out": str(out),
        "esxi_network_hostname": "127.0.0.1",
        "esxi_network_port": vcsim["vcsim_port"],
        "esxi_network_username": vcsim["vcsim_user"],
        "esxi_network_password": vcsim["vcsim_password"],
        "esxi_network_validate_certs": False,
        "esxi_network_networks": list(networks),
        "ansible_python_interpreter": sys.executable,
    }
    vars_file = tmp / "vars.json"
    vars_file.write_text(json.dumps(variables))
    inventory = tmp / "inventory.yml"
    inventory.write_text("all:\n  hosts:\n    esxsim:\n      ansible_connection: local\n")
    run = run_playbook("-i", inventory, PLAYBOOK, "-e", f"@{vars_file}", *extra, timeout=300)
    assert run.returncode == 0, f"{run.stdout}\n{run.stderr}"
    record: dict[str, Any] = json.loads(out.read_text())
    return record


NETWORKS = [
    {"name": "iperf-a", "vswitch": {"name": "vSwitch-a"}, "portgroup": {"name": "iperf-a", "vlan_id": 30}},
    {"name": "iperf-b", "vswitch": {"name": "vSwitch-b"}, "portgroup": {"name": "iperf-b", "vlan_id": 31}},
]


def test_networks_check_real_idempotent(vcsim: dict[str, Any], tmp_path: Path) -> None:
    checked = _play(vcsim, tmp_path, NETWORKS, "--check")
    assert checked["failure"] is None
    assert [r["changed"] for r in checked["built"]["results"]] == [True, True]
    assert [[op["op"] for op in r["operations"]] for r in checked["built"]["results"]] == [
        ["add_vswitch", "add_portgroup"],
        ["add_vswitch", "add_portgroup"],
    ]
    assert [r["portgroup"] for r in checked["built"]["results"]] == [None, None]  # nothing was created

    real = _play(vcsim, tmp_path, NETWORKS)
    assert [r["changed"] for r in real["built"]["results"]] == [True, True]
    assert [r["portgroup"] for r in real["built"]["results"]] == [
        {"name": "iperf-a", "vswitch": "vSwitch-a", "vlan_id": 30},
        {"name": "iperf-b", "vswitch": "vSwitch-b", "vlan_id": 31},
    ]
    assert real["vmknics"] == {"iperf-a": None, "iperf-b": None}  # no vmknic asked for
    # the line rate of each network: the vSwitches have no uplink here, so no speed - and it says why
    assert {name: (u["speed_mbps"], u["reason"]) for name, u in real["uplinks"].items()} == {
        "iperf-a": (None, "vSwitch-a has no uplink (esxi_network via esxi_vmknic)"),
        "iperf-b": (None, "vSwitch-b has no uplink (esxi_network via esxi_vmknic)"),
    }

    again = _play(vcsim, tmp_path, NETWORKS)
    assert [r["changed"] for r in again["built"]["results"]] == [False, False]

    removed = _play(vcsim, tmp_path, [{**n, "state": "absent"} for n in NETWORKS])
    assert [r["changed"] for r in removed["built"]["results"]] == [True, True]


WITH_VMK: list[dict[str, Any]] = [
    {
        "name": "iperf-a",
        "vswitch": {"name": "vSwitch-a", "uplinks": ["vmnic1"]},
        "portgroup": {"name": "iperf-a", "vlan_id": 30},
        "vmknic": {"ip_address": "198.18.30.1", "netmask": 24},
    },
]


def test_networks_with_a_vmknic_create_change_unchanged_remove(vcsim: dict[str, Any], tmp_path: Path) -> None:
    checked = _play(vcsim, tmp_path, WITH_VMK, "--check")
    assert checked["failure"] is None, checked
    [result] = checked["built"]["results"]
    assert [op["op"] for op in result["operations"]] == ["add_vswitch", "add_portgroup", "add_vmknic"]
    assert result["vmknic"] is None  # nothing was created

    real = _play(vcsim, tmp_path, WITH_VMK)
    [result] = real["built"]["results"]
    assert result["changed"] is True and result["converged"] is True
    device = result["vmknic"]["device"]
    assert device.startswith("vmk") and device != "vmk0"
    assert result["vmknic"]["ipv4"] == {"dhcp": False, "address": "198.18.30.1", "netmask": "255.255.255.0"}
    assert real["vmknics"]["iperf-a"]["device"] == device

    jumbo = [{**WITH_VMK[0], "vswitch": {**WITH_VMK[0]["vswitch"], "mtu": 9000}, "vmknic": {"mtu": 9000}}]
    changed = _play(vcsim, tmp_path, jumbo)
    [result] = changed["built"]["results"]
    assert [op["op"] for op in result["operations"]] == ["update_vswitch", "update_vmknic"]
    assert (result["vswitch"]["mtu"], result["vmknic"]["mtu"]) == (9000, 9000)
    assert result["vmknic"]["ipv4"]["address"] == "198.18.30.1"  # left out: kept

    again = _play(vcsim, tmp_path, jumbo)
    assert [r["changed"] for r in again["built"]["results"]] == [False]

    removed = _play(vcsim, tmp_path, [{**n, "state": "absent"} for n in WITH_VMK])
    [result] = removed["built"]["results"]
    assert [op["op"] for op in result["operations"]] == ["remove_vmknic", "remove_portgroup", "remove_vswitch"]
    assert (result["vswitch"], result["portgroup"], result["vmknic"]) == (None, None, None)


def test_preflight_refuses_duplicate_names(vcsim: dict[str, Any], tmp_path: Path) -> None:
    record = _play(vcsim, tmp_path, [NETWORKS[0], {**NETWORKS[1], "name": "iperf-a"}])
    assert record["built"] is None
    assert record["failure"].startswith(
        "esxi_network_networks on esxsim needs a unique name and a portgroup.name in every item; names given:"
        " iperf-a, iperf-a."
    )


def test_preflight_refuses_a_bad_netmask_and_a_miscased_stack(vcsim: dict[str, Any], tmp_path: Path) -> None:
    bad = {
        **NETWORKS[0],
        "vmknic": {"ip_address": "192.0.2.21", "netmask": "255.255.255.0/24", "tcpip_stack": "vMotion"},
    }
    record = _play(vcsim, tmp_path, [bad])
    assert record["built"] is None
    assert record["failure"] == (
        "Network iperf-a on esxsim: vmknic.netmask must be dotted (255.255.255.0) or a prefix length (24 or /24), "
        "given 255.255.255.0/24; vmknic.tcpip_stack must be one of default, vmotion, provisioning, vxlan, "
        "defaultTcpipStack, vSphereProvisioning (case-sensitive) or the key of a custom stack on the host, "
        "given vMotion."
    )


def test_preflight_passes_a_prefix_length_netmask(vcsim: dict[str, Any], tmp_path: Path) -> None:
    """ "24" passes the preflight; the module turns it into 255.255.255.0."""
    item = {**NETWORKS[0], "vmknic": {"ip_address": "192.0.2.21", "netmask": 24}}
    record = _play(vcsim, tmp_path, [item], "--check")
    assert record["failure"] is None, record
    ops = record["built"]["results"][0]["operations"]
    assert ops[-1]["op"] == "add_vmknic"
    assert ops[-1]["ipv4"] == {"dhcp": False, "address": "192.0.2.21", "netmask": "255.255.255.0"}


def test_role_argument_spec_names_a_vswitch_given_as_a_string(vcsim: dict[str, Any], tmp_path: Path) -> None:
    record = _play(vcsim, tmp_path, [{**NETWORKS[0], "vswitch": "vSwitch-a"}])
    assert record["built"] is None
    assert "argument 'vswitch' is of type str found in 'esxi_network_networks'" in record["failure"], record


WITH_POLICY: list[dict[str, Any]] = [
    {
        "name": "fwd",
        "vswitch": {
            "name": "vSwitch-fwd",
            "uplinks": ["vmnic1"],
            "security": {"allow_promiscuous": True, "forged_transmits": True, "mac_changes": True},
            "teaming": {"active_uplinks": ["vmnic1"], "load_balancing": "failover_explicit"},
        },
        "portgroup": {"name": "fwd", "vlan_id": 60, "security": {"mac_changes": False}},
    },
]


def test_a_network_with_vswitch_policy_and_a_portgroup_override(vcsim: dict[str, Any], tmp_path: Path) -> None:
    checked = _play(vcsim, tmp_path, WITH_POLICY, "--check")
    assert checked["failure"] is None, checked
    [result] = checked["built"]["results"]
    assert [op["op"] for op in result["operations"]] == [
        "add_vswitch",
        "set_vswitch_policy",
        "add_portgroup",
        "set_portgroup_policy",
    ]
    assert result["vswitch"] is None  # nothing was created

    real = _play(vcsim, tmp_path, WITH_POLICY)
    [result] = real["built"]["results"]
    assert result["changed"] is True and result["converged"] is True
    assert result["vswitch"]["policy"] == {
        "security": {"allow_promiscuous": True, "forged_transmits": True, "mac_changes": True},
        "teaming": {"active_uplinks": ["vmnic1"], "standby_uplinks": [], "load_balancing": "failover_explicit"},
    }
    assert result["portgroup"]["policy"]["security"] == {
        "allow_promiscuous": None,
        "forged_transmits": None,
        "mac_changes": False,
    }

    again = _play(vcsim, tmp_path, WITH_POLICY)
    assert [r["changed"] for r in again["built"]["results"]] == [False]

    removed = _play(vcsim, tmp_path, [{**n, "state": "absent"} for n in WITH_POLICY])
    assert [r["changed"] for r in removed["built"]["results"]] == [True]
