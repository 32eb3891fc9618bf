# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plans carried out on the recording HostNetworkSystem fake: the spec objects that are sent."""

from __future__ import annotations

from typing import Any

import pytest
from pyVmomi import vim

from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_apply import ApplyError, apply_plan, read_host_state
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_params import desired_from_params
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_plan import make_plan
from tests.unit.plugins.vsphere_fakes import FakeHost, fault, join_dvs, lab_host


def run(host: FakeHost, **params: Any) -> str | None:
    plan = make_plan(read_host_state(host), desired_from_params(params))
    created: str | None = apply_plan(host, plan.ops)
    return created


def test_read_host_state_reads_service_tags_from_the_nic_manager() -> None:
    state = read_host_state(lab_host())
    assert state.services == {"vmk0": frozenset({"management"}), "vmk1": frozenset({"vmotion"})}


def test_read_host_state_without_a_nic_manager_leaves_tags_unknown() -> None:
    host = lab_host()
    host.nic_manager.broken = True  # govmomi's simulator: ManagedObjectNotFound
    assert read_host_state(host).services is None


def test_unreadable_tags_record_which_calls_failed() -> None:
    host = lab_host()
    host.nic_manager.broken = True
    state = read_host_state(host)
    assert state.services_error == (
        "reading HostVirtualNicManager.info failed: ManagedObjectNotFound: no HostVirtualNicManager; "
        "QueryNetConfig(nicType=management) failed: ManagedObjectNotFound: no HostVirtualNicManager"
    )
    host.nic_manager = None  # type: ignore[assignment]  # a host that has no VirtualNicManager at all
    assert read_host_state(host).services_error == "the host has no configManager.virtualNicManager"
    assert read_host_state(lab_host()).services_error is None


def test_read_host_state_reads_the_distributed_switches() -> None:
    host = lab_host()
    join_dvs(host, "DSwitch-mgmt", "uuid-a", ["vmnic3"], move="vmk0")
    state = read_host_state(host)
    assert [(s.label, s.uplinks) for s in state.other_switches] == [("distributed switch DSwitch-mgmt", ("vmnic3",))]
    vmk0 = state.vmknic("vmk0")
    assert vmk0 is not None and vmk0.switch_uuid == "uuid-a"


def test_mtu_only_update_sends_back_uplinks_ports_and_keeps_policy() -> None:
    host = lab_host()
    run(host, vswitch={"name": "vSwitch1", "mtu": 9000})
    [call] = host.recorder.of("UpdateVirtualSwitch")
    assert isinstance(call.args["spec"], vim.host.VirtualSwitch.Specification)
    spec: Any = call.args["spec"]
    assert (call.args["vswitchName"], spec.mtu, spec.numPorts) == ("vSwitch1", 9000, 128)
    assert list(spec.bridge.nicDevice) == ["vmnic1", "vmnic2"]  # without it the API detaches the uplinks
    assert spec.policy is None  # unset: "the policy will be unchanged"
    live = host.network_system._vswitch("vSwitch1")
    assert (live.mtu, list(live.spec.bridge.nicDevice)) == (9000, ["vmnic1", "vmnic2"])
    assert list(live.spec.policy.nicTeaming.nicOrder.standbyNic) == ["vmnic2"]
    assert host.recorder.methods() == ["UpdateVirtualSwitch"]


def test_uplink_change_keeps_standby_and_makes_new_nics_active() -> None:
    host = lab_host()
    run(host, vswitch={"name": "vSwitch1", "uplinks": ["vmnic2", "vmnic3"]})
    [call] = host.recorder.of("UpdateVirtualSwitch")
    spec = call.args["spec"]
    assert list(spec.bridge.nicDevice) == ["vmnic2", "vmnic3"]
    order = spec.policy.nicTeaming.nicOrder
    assert (list(order.activeNic), list(order.standbyNic)) == (["vmnic3"], ["vmnic2"])
    assert spec.mtu == 1500  # the MTU is sent back as it is


def test_vlan_update_keeps_the_portgroup_policy_and_vswitch() -> None:
    host = lab_host()
    run(host, portgroup={"name": "iperf", "vlan_id": 31})
    [call] = host.recorder.of("UpdatePortGroup")
    assert isinstance(call.args["portgrp"], vim.host.PortGroup.Specification)
    spec: Any = call.args["portgrp"]
    assert (call.args["pgName"], spec.name, spec.vlanId, spec.vswitchName) == ("iperf", "iperf", 31, "vSwitch1")
    assert spec.policy is not None


def test_new_network_is_added_and_the_new_vmk_is_tagged() -> None:
    host = lab_host()
    created = run(
        host,
        vswitch={"name": "vSwitch2", "uplinks": ["vmnic3"], "mtu": 9000},
        portgroup={"name": "iperf2", "vlan_id": 40},
        vmknic={
            "ip_address": "203.0.113.21",
            "netmask": "255.255.255.0",
            "mtu": 9000,
            "services": ["vmotion"],
            "ipv6": {"addresses": ["2001:db8:40::21/64"]},
        },
    )
    assert created == "vmk2"
    assert host.recorder.methods() == [
        "AddVirtualSwitch",
        "UpdateVirtualSwitch",  # the new uplink was in no teaming list: made active
        "AddPortGroup",
        "AddVirtualNic",
        "SelectVnicForNicType",
    ]
    add_vs = host.recorder.of("AddVirtualSwitch")[0].args["spec"]
    assert (add_vs.numPorts, add_vs.mtu, list(add_vs.bridge.nicDevice)) == (128, 9000, ["vmnic3"])
    fix = host.recorder.of("UpdateVirtualSwitch")[0].args["spec"]
    assert list(fix.policy.nicTeaming.nicOrder.activeNic) == ["vmnic3"]
    add_pg = host.recorder.of("AddPortGroup")[0].args["portgrp"]
    assert (add_pg.name, add_pg.vlanId, add_pg.vswitchName) == ("iperf2", 40, "vSwitch2")
    add_nic = host.recorder.of("AddVirtualNic")[0].args
    nic = add_nic["nic"]
    assert add_nic["portgroup"] == "iperf2"
    assert (nic.ip.dhcp, nic.ip.ipAddress, nic.ip.subnetMask, nic.mtu) == (False, "203.0.113.21", "255.255.255.0", 9000)
    assert nic.netStackInstanceKey is None  # default stack: not sent
    [v6] = nic.ip.ipV6Config.ipV6Address
    assert (v6.ipAddress, v6.prefixLength, v6.origin, v6.operation) == ("2001:db8:40::21", 64, "manual", "add")
    assert host.recorder.of("SelectVnicForNicType")[0].args == {"nicType": "vmotion", "device": "vmk2"}
    # Read back: everything as requested.
    state = read_host_state(host)
    vmk2 = state.vmknic("vmk2")
    assert vmk2 is not None and (vmk2.portgroup, vmk2.mtu, vmk2.ip_address) == ("iperf2", 9000, "203.0.113.21")
    assert state.services_of("vmk2") == frozenset({"vmotion"})
    assert make_plan(state, desired_from_params({"vswitch": {"name": "vSwitch2", "mtu": 9000}})).ops == ()


def test_ip_change_sends_update_virtual_nic_with_the_full_ip_config() -> None:
    host = lab_host()
    run(host, vmknic={"device": "vmk1", "ip_address": "198.51.100.99", "netmask": "255.255.255.128"})
    [call] = host.recorder.of("UpdateVirtualNic")
    nic = call.args["nic"]
    assert call.args["device"] == "vmk1"
    assert (nic.ip.dhcp, nic.ip.ipAddress, nic.ip.subnetMask) == (False, "198.51.100.99", "255.255.255.128")
    assert nic.mtu == 1500 and nic.portgroup is None and nic.ip.ipV6Config is None
    assert host.network_system._vnic("vmk1").spec.ip.ipAddress == "198.51.100.99"


def test_portgroup_move_sends_the_new_portgroup() -> None:
    host = lab_host()
    run(host, vswitch={"name": "vSwitch1"}, portgroup={"name": "iperf-b"}, vmknic={"device": "vmk1"})
    assert host.recorder.methods() == ["AddPortGroup", "UpdateVirtualNic"]
    nic = host.recorder.of("UpdateVirtualNic")[0].args["nic"]
    assert nic.portgroup == "iperf-b"
    assert host.network_system._vnic("vmk1").portgroup == "iperf-b"
    # The old port group is free again and can be removed.
    run(host, state="absent", portgroup={"name": "iperf"})
    assert host.recorder.methods()[-1] == "RemovePortGroup"


def test_ipv6_remove_and_add_operations() -> None:
    host = lab_host()
    run(host, vmknic={"device": "vmk1", "ipv6": {"addresses": ["2001:db8:30::22/64"], "autoconf": True}})
    config = host.recorder.of("UpdateVirtualNic")[0].args["nic"].ip.ipV6Config
    assert [(a.ipAddress, a.prefixLength, a.operation) for a in config.ipV6Address] == [
        ("2001:db8:30::21", 64, "remove"),
        ("2001:db8:30::22", 64, "add"),
    ]
    assert (config.autoConfigurationEnabled, config.dhcpV6Enabled) == (True, False)
    vmk1 = read_host_state(host).vmknic("vmk1")
    assert vmk1 is not None and vmk1.ipv6 is not None
    assert [a.text for a in vmk1.ipv6.addresses] == ["fe80::250:56ff:fe6a:1/64", "2001:db8:30::22/64"]


def test_stack_change_with_recreate_removes_then_adds() -> None:
    host = lab_host()
    created = run(host, portgroup={"name": "iperf"}, vmknic={"tcpip_stack": "vmotion"}, recreate=True)
    assert host.recorder.methods() == ["RemoveVirtualNic", "AddVirtualNic"]
    nic = host.recorder.of("AddVirtualNic")[0].args["nic"]
    assert (nic.netStackInstanceKey, nic.ip.ipAddress, nic.mtu) == ("vmotion", "198.51.100.21", 1500)
    assert created == "vmk1"  # the fake reuses the lowest free name; a real host may pick another
    assert host.network_system._vnic("vmk1").spec.netStackInstanceKey == "vmotion"


def test_absent_runs_in_order() -> None:
    host = lab_host()
    run(host, state="absent", vswitch={"name": "vSwitch1"}, portgroup={"name": "iperf"}, vmknic={})
    assert host.recorder.methods() == ["RemoveVirtualNic", "RemovePortGroup", "RemoveVirtualSwitch"]
    assert host.recorder.of("RemoveVirtualNic")[0].args == {"device": "vmk1"}
    assert [v.name for v in host.network_system.networkInfo.vswitch] == ["vSwitch0"]


def test_failure_names_the_operation_the_cause_and_what_was_applied() -> None:
    host = lab_host()
    host.network_system.fail_on["UpdateVirtualNic"] = fault("vim.fault.HostConfigFault", "vmknic busy")
    with pytest.raises(ApplyError) as caught:
        run(host, vswitch={"name": "vSwitch1", "mtu": 9000}, vmknic={"device": "vmk1", "mtu": 9000})
    assert str(caught.value) == (
        "update VMkernel adapter vmk1: MTU 1500 -> 9000 failed: HostConfigFault: vmknic busy. "
        "Already applied: update vSwitch vSwitch1: mtu 9000."
    )
    assert [op.kind for op in caught.value.applied] == ["update_vswitch"]


def test_unimplemented_method_is_reported_with_a_hint() -> None:
    host = lab_host()
    host.network_system.fail_on["UpdatePortGroup"] = fault(
        "vmodl.fault.MethodNotFound", "HostNetworkSystem:hostnetworksystem-2 does not implement: UpdatePortGroup"
    )
    with pytest.raises(ApplyError) as caught:
        run(host, portgroup={"name": "iperf", "vlan_id": 5})
    assert "MethodNotFound: HostNetworkSystem:hostnetworksystem-2 does not implement: UpdatePortGroup" in str(
        caught.value
    )
    assert "govmomi's simulator" in str(caught.value)
    assert "Already applied: nothing." in str(caught.value)
