# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The VMkernel networking planner, fed with state read from real pyVmomi data objects."""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_guard import management_scope
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_ops import (
    AddPortGroup,
    AddVmknic,
    AddVSwitch,
    DeselectService,
    Ipv4Config,
    Ipv6Change,
    RemovePortGroup,
    RemoveVmknic,
    RemoveVSwitch,
    SelectService,
    UpdatePortGroup,
    UpdateVmknic,
    UpdateVSwitch,
)
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_params import desired_from_params
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_plan import make_plan
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_state import (
    HostNetworkState,
    PlanError,
    read_network_state,
)
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_views import pnic_views, state_views
from tests.unit.plugins.vsphere_fakes import FakeHost, join_dvs, lab_host, new, portgroup, vmknic, vswitch


def lab_state(**changes: Any) -> HostNetworkState:
    """The lab host of vsphere_fakes, read the way the module reads a real host."""
    host = lab_host()
    info = host.network_system.networkInfo
    for vnic in info.vnic:
        if vnic.device in changes:
            for key, value in changes[vnic.device].items():
                setattr(vnic.spec, key, value)
    for item in info.vswitch:
        if item.name in changes:
            item.mtu = item.spec.mtu = changes[item.name]["mtu"]
    return read_network_state(info, net_configs=host.nic_manager.info.netConfig)


def plan_for(host_state: HostNetworkState | None = None, /, **params: Any) -> Any:
    return make_plan(host_state or lab_state(), desired_from_params(params))


def refusal(host_state: HostNetworkState | None = None, /, **params: Any) -> str:
    with pytest.raises(PlanError) as caught:
        plan_for(host_state, **params)
    return str(caught.value)


# -- reading real pyVmomi objects ----------------------------------------------------------------


def test_reader_extracts_switches_portgroups_and_adapters() -> None:
    state = lab_state()
    vs1 = state.vswitch("vSwitch1")
    assert vs1 is not None
    assert (vs1.mtu, vs1.uplinks, vs1.num_ports) == (1500, ("vmnic1", "vmnic2"), 128)
    iperf = state.portgroup("iperf")
    assert iperf is not None
    assert (iperf.vswitch, iperf.vlan_id, iperf.port_types) == ("vSwitch1", 30, ("host",))
    vm_network = state.portgroup("VM Network")
    assert vm_network is not None and vm_network.vm_ports == 1
    vmk1 = state.vmknic("vmk1")
    assert vmk1 is not None
    assert (vmk1.portgroup, vmk1.mtu, vmk1.stack, vmk1.dhcp) == ("iperf", 1500, "defaultTcpipStack", False)
    assert (vmk1.ip_address, vmk1.netmask, vmk1.mac) == ("198.51.100.21", "255.255.255.0", "00:50:56:6a:00:01")
    assert vmk1.ipv6 is not None
    assert [a.text for a in vmk1.ipv6.manual] == ["2001:db8:30::21/64"]
    assert [(a.text, a.origin) for a in vmk1.ipv6.addresses][1] == ("fe80::250:56ff:fe6a:1/64", "linklayer")
    assert state.services == {"vmk0": frozenset({"management"}), "vmk1": frozenset({"vmotion"})}
    assert state.ipv6_enabled is True


def test_reader_reports_link_speed_and_down_links_as_unknown() -> None:
    views = {p["name"]: p for p in pnic_views(lab_state())}
    assert views["vmnic1"] == {
        "name": "vmnic1",
        "driver": "ixgben",
        "mac": "00:30:93:0c:05:c6",
        "link_up": True,
        "speed_mbps": 10000,
        "duplex": "full",
        "vswitch": "vSwitch1",
        "vswitch_mtu": 1500,
    }
    assert views["vmnic0"]["speed_mbps"] == 1000 and views["vmnic0"]["driver"] == "ntg3"
    # No linkSpeed object means the link is down: no speed, no duplex (not 0 / half).
    assert views["vmnic3"] | {} == {
        "name": "vmnic3",
        "driver": "ixgben",
        "mac": "00:30:93:0c:05:c8",
        "link_up": False,
        "speed_mbps": None,
        "duplex": None,
        "vswitch": None,
        "vswitch_mtu": None,
    }


def test_reader_falls_back_to_config_network_when_network_info_has_no_adapters() -> None:
    # govmomi's simulator fills HostSystem.config.network but not networkInfo.vnic/pnic.
    host = lab_host()
    info = host.network_system.networkInfo
    config_network = type("Cfg", (), {"vnic": list(info.vnic), "pnic": list(info.pnic)})()
    info.vnic, info.pnic = [], []
    state = read_network_state(info, host_network=config_network)
    assert [v.device for v in state.vmknics] == ["vmk0", "vmk1"]
    assert [p.device for p in state.pnics] == ["vmnic0", "vmnic1", "vmnic2", "vmnic3"]
    assert state.services is None


def test_management_scope_of_the_lab_host() -> None:
    scope = management_scope(lab_state())
    assert scope.vmknics == {"vmk0"}
    assert scope.portgroups == {"Management Network"}
    assert scope.vswitches == {"vSwitch0"}
    assert scope.uplinks == {"vmnic0"}


# -- options left out stay as they are -----------------------------------------------------------


def test_left_out_options_are_not_touched() -> None:
    plan = plan_for(vswitch={"name": "vSwitch1", "mtu": 9000}, portgroup={"name": "iperf"}, vmknic={})
    assert plan.ops == (UpdateVSwitch("vSwitch1", mtu=9000, uplinks=None),)
    assert plan.after["vswitch"]["uplinks"] == ["vmnic1", "vmnic2"]
    assert plan.after["portgroup"]["vlan_id"] == 30
    assert plan.after["vmknic"]["ipv4"] == {"dhcp": False, "address": "198.51.100.21", "netmask": "255.255.255.0"}


def test_request_equal_to_the_host_plans_nothing() -> None:
    plan = plan_for(
        vswitch={"name": "vSwitch1", "uplinks": ["vmnic2", "vmnic1"], "mtu": 1500},
        portgroup={"name": "iperf", "vlan_id": 30},
        vmknic={
            "device": "vmk1",
            "ip_address": "198.51.100.21",
            "netmask": "255.255.255.0",
            "mtu": 1500,
            "tcpip_stack": "default",
            "services": ["vmotion"],
            "ipv6": {"addresses": ["2001:DB8:30:0::21/64"], "autoconf": False, "dhcp": False},
        },
    )
    assert plan.ops == ()
    assert plan.changed is False
    assert plan.before == plan.after


def test_vlan_change_is_planned_and_only_that() -> None:
    plan = plan_for(portgroup={"name": "iperf", "vlan_id": 31})
    assert plan.ops == (UpdatePortGroup("iperf", 31),)
    assert (plan.before["portgroup"]["vlan_id"], plan.after["portgroup"]["vlan_id"]) == (30, 31)


def test_uplinks_listed_replace_the_set_and_a_busy_nic_is_refused() -> None:
    plan = plan_for(vswitch={"name": "vSwitch1", "uplinks": ["vmnic1", "vmnic3"]})
    assert plan.ops == (UpdateVSwitch("vSwitch1", mtu=None, uplinks=("vmnic1", "vmnic3")),)
    message = refusal(vswitch={"name": "vSwitch2", "uplinks": ["vmnic2"]})
    assert "vmnic2 is an uplink of vSwitch vSwitch1" in message
    assert "no physical NIC vmnic9" in refusal(vswitch={"name": "vSwitch2", "uplinks": ["vmnic9"]})


# -- MTU order -----------------------------------------------------------------------------------


def test_mtu_up_raises_the_vswitch_before_the_vmknic() -> None:
    plan = plan_for(vswitch={"name": "vSwitch1", "mtu": 9000}, vmknic={"device": "vmk1", "mtu": 9000})
    assert [type(op) for op in plan.ops] == [UpdateVSwitch, UpdateVmknic]
    assert plan.ops[0] == UpdateVSwitch("vSwitch1", mtu=9000)
    vmk_op = plan.ops[1]
    assert isinstance(vmk_op, UpdateVmknic) and vmk_op.mtu == 9000 and vmk_op.portgroup is None
    # The IP configuration the API requires is sent unchanged.
    assert vmk_op.ipv4 == Ipv4Config(False, "198.51.100.21", "255.255.255.0")
    assert plan.warnings == ()


def test_mtu_down_lowers_the_vmknic_before_the_vswitch() -> None:
    state = lab_state(vmk1={"mtu": 9000}, vSwitch1={"mtu": 9000})
    plan = plan_for(state, vswitch={"name": "vSwitch1", "mtu": 1500}, vmknic={"device": "vmk1", "mtu": 1500})
    assert [type(op) for op in plan.ops] == [UpdateVmknic, UpdateVSwitch]
    assert plan.ops[0] == UpdateVmknic(
        "vmk1", Ipv4Config(False, "198.51.100.21", "255.255.255.0"), 1500, None, None, ("MTU 9000 -> 1500",)
    )
    assert plan.ops[1] == UpdateVSwitch("vSwitch1", mtu=1500)


def test_mtu_down_of_the_vswitch_alone_warns_about_a_bigger_adapter() -> None:
    state = lab_state(vmk1={"mtu": 9000}, vSwitch1={"mtu": 9000})
    plan = plan_for(state, vswitch={"name": "vSwitch1", "mtu": 1500})
    assert plan.ops == (UpdateVSwitch("vSwitch1", mtu=1500),)
    assert plan.warnings == (
        "vmk1 MTU 9000 is above the MTU 1500 of vSwitch vSwitch1: frames above 1500 bytes will be dropped "
        "(raise vswitch.mtu or lower vmknic.mtu)",
    )


def test_vmknic_mtu_above_its_vswitch_warns() -> None:
    plan = plan_for(vmknic={"device": "vmk1", "mtu": 9000})
    assert plan.ops[0] == UpdateVmknic(
        "vmk1", Ipv4Config(False, "198.51.100.21", "255.255.255.0"), 9000, None, None, ("MTU 1500 -> 9000",)
    )
    assert plan.warnings and "vmk1 MTU 9000 is above the MTU 1500 of vSwitch vSwitch1" in plan.warnings[0]


# -- changes to an existing adapter ---------------------------------------------------------------


def test_ip_change_is_applied_with_update_virtual_nic() -> None:
    plan = plan_for(vmknic={"device": "vmk1", "ip_address": "198.51.100.99", "netmask": "255.255.255.128"})
    assert plan.ops == (
        UpdateVmknic(
            "vmk1",
            Ipv4Config(False, "198.51.100.99", "255.255.255.128"),
            1500,
            None,
            None,
            ("IPv4 198.51.100.21/255.255.255.0 -> 198.51.100.99/255.255.255.128",),
        ),
    )
    assert plan.before["vmknic"]["ipv4"]["address"] == "198.51.100.21"
    assert plan.after["vmknic"]["ipv4"] == {"dhcp": False, "address": "198.51.100.99", "netmask": "255.255.255.128"}


def test_switch_to_dhcp() -> None:
    plan = plan_for(vmknic={"device": "vmk1", "dhcp": True})
    op = plan.ops[0]
    assert (
        isinstance(op, UpdateVmknic)
        and op.ipv4 == Ipv4Config(True)
        and op.changes == ("IPv4 198.51.100.21/255.255.255.0 -> dhcp",)
    )


def test_portgroup_move_is_planned_on_a_standard_switch() -> None:
    plan = plan_for(
        vswitch={"name": "vSwitch1"}, portgroup={"name": "iperf-b", "vlan_id": 31}, vmknic={"device": "vmk1"}
    )
    assert plan.ops == (
        AddPortGroup("iperf-b", "vSwitch1", 31),
        UpdateVmknic(
            "vmk1",
            Ipv4Config(False, "198.51.100.21", "255.255.255.0"),
            1500,
            "iperf-b",
            None,
            ("port group iperf -> iperf-b",),
        ),
    )
    assert (plan.before["vmknic"]["portgroup"], plan.after["vmknic"]["portgroup"]) == ("iperf", "iperf-b")


def test_move_onto_an_occupied_portgroup_is_refused_with_the_reason() -> None:
    message = refusal(
        portgroup={"name": "Management Network"}, vmknic={"device": "vmk1"}, allow_management_changes=True
    )
    assert "vmk1 cannot move to port group Management Network: vmk0 is already on it" in message


def test_tcpip_stack_change_needs_recreate() -> None:
    message = refusal(portgroup={"name": "iperf"}, vmknic={"tcpip_stack": "vmotion"})
    assert "vmk1 is on TCP/IP stack defaultTcpipStack, wanted vmotion" in message
    assert "Set recreate: true" in message


def test_tcpip_stack_change_with_recreate_removes_and_adds() -> None:
    plan = plan_for(portgroup={"name": "iperf"}, vmknic={"tcpip_stack": "vmotion", "mtu": 9000}, recreate=True)
    assert plan.ops == (
        RemoveVmknic("vmk1"),
        AddVmknic(
            "iperf",
            Ipv4Config(False, "198.51.100.21", "255.255.255.0"),
            Ipv6Change(add=("2001:db8:30::21/64",), autoconf=False, dhcp=False),
            9000,
            "vmotion",
        ),
    )
    assert any("vmotion" in w and "not re-applied" in w for w in plan.warnings)
    assert plan.after["vmknic"]["tcpip_stack"] == "vmotion"


def test_recreate_is_permission_not_force() -> None:
    assert plan_for(portgroup={"name": "iperf"}, vmknic={"tcpip_stack": "default"}, recreate=True).ops == ()


def test_device_that_does_not_exist_is_refused() -> None:
    assert "VMkernel adapter vmk7 does not exist" in refusal(vmknic={"device": "vmk7", "mtu": 9000})


# -- services ------------------------------------------------------------------------------------


def test_services_are_selected_and_deselected() -> None:
    plan = plan_for(vmknic={"device": "vmk1", "services": ["vsan", "provisioning"]})
    assert plan.ops == (
        SelectService("vmk1", "vSphereProvisioning"),
        SelectService("vmk1", "vsan"),
        DeselectService("vmk1", "vmotion"),
    )
    assert plan.after["vmknic"]["services"] == ["provisioning", "vsan"]


def test_services_on_a_non_default_stack_are_refused() -> None:
    state = lab_state(vmk1={"netStackInstanceKey": "vmotion"})
    assert "services can be tagged only on the default TCP/IP stack" in refusal(
        state, vmknic={"device": "vmk1", "services": ["vmotion"]}
    )


def test_unreadable_services_are_not_guessed() -> None:
    host = lab_host()
    state = read_network_state(host.network_system.networkInfo)  # no net configs: tags unknown
    assert "service tags could not be read" in refusal(state, vmknic={"device": "vmk1", "services": []})
    assert plan_for(state, vmknic={"device": "vmk1", "mtu": 1500}).ops == ()


# -- IPv6 ----------------------------------------------------------------------------------------


def test_ipv6_static_addresses_are_added_and_removed_link_local_kept() -> None:
    plan = plan_for(vmknic={"device": "vmk1", "ipv6": {"addresses": ["2001:db8:30::22/64"]}})
    op = plan.ops[0]
    assert isinstance(op, UpdateVmknic)
    assert op.ipv6 == Ipv6Change(
        add=("2001:db8:30::22/64",), remove=("2001:db8:30::21/64",), autoconf=False, dhcp=False
    )
    assert plan.after["vmknic"]["ipv6"] == {
        "addresses": ["2001:db8:30::22/64"],
        "other_addresses": ["fe80::250:56ff:fe6a:1/64"],
        "autoconf": False,
        "dhcp": False,
    }


def test_ipv6_on_a_host_with_ipv6_disabled_is_refused() -> None:
    host = lab_host()
    host.network_system.networkInfo.ipV6Enabled = False
    state = read_network_state(host.network_system.networkInfo, net_configs=host.nic_manager.info.netConfig)
    assert "IPv6 is disabled on this host" in refusal(state, vmknic={"device": "vmk1", "ipv6": {"autoconf": True}})


# -- creating ------------------------------------------------------------------------------------


def test_new_network_is_created_in_order() -> None:
    plan = plan_for(
        vswitch={"name": "vSwitch2", "uplinks": ["vmnic3"], "mtu": 9000},
        portgroup={"name": "iperf2", "vlan_id": 40},
        vmknic={"ip_address": "203.0.113.21", "netmask": "255.255.255.0", "mtu": 9000, "services": ["vmotion"]},
    )
    assert plan.ops == (
        AddVSwitch("vSwitch2", 9000, ("vmnic3",)),
        AddPortGroup("iperf2", "vSwitch2", 40),
        AddVmknic("iperf2", Ipv4Config(False, "203.0.113.21", "255.255.255.0"), None, 9000, None),
        SelectService(None, "vmotion"),
    )
    assert plan.before == {"vswitch": None, "portgroup": None, "vmknic": None}
    assert plan.after["vmknic"]["device"] is None and plan.after["vmknic"]["mtu"] == 9000
    assert plan.warnings == ()


def test_new_adapter_needs_an_ipv4_configuration() -> None:
    message = refusal(vswitch={"name": "vSwitch2"}, portgroup={"name": "p2"}, vmknic={"mtu": 9000})
    assert "needs an IPv4 configuration" in message


def test_portgroup_without_vswitch_must_exist() -> None:
    assert "give vswitch.name to create it" in refusal(portgroup={"name": "nope"})


def test_portgroup_on_another_vswitch_is_not_moved() -> None:
    assert "exists on vSwitch vSwitch1, not on vSwitch0" in refusal(
        vswitch={"name": "vSwitch0"}, portgroup={"name": "iperf"}
    )


# -- management guard ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"vmknic": {"device": "vmk0", "mtu": 9000}}, "VMkernel adapter vmk0 is part of the host's management network"),
        ({"portgroup": {"name": "Management Network", "vlan_id": 10}}, "Port group Management Network is part"),
        ({"vswitch": {"name": "vSwitch0", "mtu": 9000}}, "vSwitch vSwitch0 is part of the host's management network"),
        ({"vswitch": {"name": "vSwitch0", "uplinks": ["vmnic0", "vmnic3"]}}, "vSwitch vSwitch0 is part"),
        ({"vswitch": {"name": "vSwitch2", "uplinks": ["vmnic0"]}}, "Physical NIC vmnic0 is part"),
        ({"vmknic": {"device": "vmk0", "tcpip_stack": "vmotion"}, "recreate": True}, "vmk0 is part"),
        ({"state": "absent", "vmknic": {"device": "vmk0"}}, "vmk0 is part"),
        ({"state": "absent", "vswitch": {"name": "vSwitch0"}}, "vSwitch vSwitch0 is part"),
    ],
)
def test_management_network_is_refused_without_override(params: dict[str, Any], expected: str) -> None:
    message = refusal(**params)
    assert expected in message
    assert "management" in message
    assert "Set allow_management_changes: true to override" in message


def test_management_override_plans_the_change() -> None:
    plan = plan_for(vmknic={"device": "vmk0", "mtu": 9000}, allow_management_changes=True)
    assert [type(op) for op in plan.ops] == [UpdateVmknic]


def test_adding_a_portgroup_to_the_management_vswitch_is_allowed() -> None:
    plan = plan_for(
        vswitch={"name": "vSwitch0"},
        portgroup={"name": "iperf0"},
        vmknic={"ip_address": "192.0.2.50", "netmask": "255.255.255.0"},
    )
    assert [type(op) for op in plan.ops] == [AddPortGroup, AddVmknic]


def test_vmknic_tagged_management_is_protected() -> None:
    host = lab_host()
    host.nic_manager.tags["management"].add("vmk1")
    state = read_network_state(host.network_system.networkInfo, net_configs=host.nic_manager.info.netConfig)
    assert "tagged for the management service" in refusal(state, vmknic={"device": "vmk1", "mtu": 9000})


# -- absent --------------------------------------------------------------------------------------


def test_absent_removes_vmknic_then_portgroup_then_vswitch() -> None:
    plan = plan_for(state="absent", vswitch={"name": "vSwitch1"}, portgroup={"name": "iperf"}, vmknic={})
    assert plan.ops == (RemoveVmknic("vmk1"), RemovePortGroup("iperf"), RemoveVSwitch("vSwitch1"))
    assert plan.after == {"vmknic": None, "portgroup": None, "vswitch": None}
    assert plan.before["vswitch"] == {
        "name": "vSwitch1",
        "mtu": 1500,
        "uplinks": ["vmnic1", "vmnic2"],
        "portgroups": ["iperf"],
    }


def test_absent_refuses_what_is_still_in_use() -> None:
    assert "port group iperf still has VMkernel adapter(s) vmk1" in refusal(state="absent", portgroup={"name": "iperf"})
    message = refusal(state="absent", vswitch={"name": "vSwitch1"})
    assert "vSwitch vSwitch1 still carries port group(s) iperf" in message


def test_absent_refuses_a_portgroup_with_vms() -> None:
    host = lab_host()
    pg = host.network_system.networkInfo.portgroup[1]
    pg.spec.vswitchName = "vSwitch1"  # "VM Network" with its VM port, off the management vSwitch
    state = read_network_state(host.network_system.networkInfo, net_configs=host.nic_manager.info.netConfig)
    assert "in use by 1 virtual machine port(s)" in refusal(state, state="absent", portgroup={"name": "VM Network"})


def test_absent_of_what_does_not_exist_plans_nothing() -> None:
    plan = plan_for(state="absent", vswitch={"name": "vSwitchX"}, portgroup={"name": "px"}, vmknic={"device": "vmk9"})
    assert plan.ops == ()


# -- input validation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"vswitch": {"name": "v", "mtu": 9001}}, "vswitch mtu 9001 is out of range"),
        ({"portgroup": {"name": "p", "vlan_id": 4096}}, "portgroup.vlan_id 4096 is out of range"),
        ({"vmknic": {"ip_address": "10.0.0.300", "netmask": "255.255.255.0"}}, "'10.0.0.300' is not an IPv4 address"),
        ({"vmknic": {"ip_address": "10.0.0.3", "netmask": "255.0.255.0"}}, "is not a dotted IPv4 netmask"),
        ({"vmknic": {"ip_address": "10.0.0.3"}}, "go together"),
        ({"vmknic": {"dhcp": False}}, "vmknic.dhcp: false needs vmknic.ip_address"),
        ({"vmknic": {"ipv6": {"addresses": ["fe80::1/64"]}}}, "is link-local"),
        ({"vmknic": {"ipv6": {"addresses": ["2001:db8::1"]}}}, "needs a prefix length"),
        ({"vmknic": {"services": ["bogus"]}}, "unknown service(s) bogus"),
        ({}, "nothing to manage"),
    ],
)
def test_invalid_requests_are_refused_before_reading_the_host(params: dict[str, Any], expected: str) -> None:
    with pytest.raises(PlanError) as caught:
        desired_from_params(params)
    assert expected in str(caught.value)


def test_state_views_pick_the_adapter_on_the_portgroup() -> None:
    views = state_views(lab_state(), desired_from_params({"portgroup": {"name": "iperf"}, "vmknic": {}}))
    assert views["vswitch"]["name"] == "vSwitch1"
    assert views["portgroup"] == {"name": "iperf", "vswitch": "vSwitch1", "vlan_id": 30}
    assert views["vmknic"]["device"] == "vmk1"
    assert views["vmknic"]["services"] == ["vmotion"]


def test_reader_accepts_a_dvs_adapter_and_refuses_to_move_it() -> None:
    host = lab_host()
    dvs_vmk = vmknic("vmk2", "", "203.0.113.5", "255.255.255.0")
    dvs_vmk.portgroup = ""
    dvs_vmk.spec.portgroup = None
    from pyVmomi import vim

    dvs_vmk.spec.distributedVirtualPort = vim.dvs.PortConnection(switchUuid="50 1a", portgroupKey="dvportgroup-1")  # type: ignore[no-untyped-call]
    host.network_system.networkInfo.vnic = [*host.network_system.networkInfo.vnic, dvs_vmk]
    state = read_network_state(host.network_system.networkInfo, net_configs=host.nic_manager.info.netConfig)
    vmk2 = state.vmknic("vmk2")
    assert vmk2 is not None and vmk2.distributed and vmk2.portgroup is None
    assert "is on a distributed or opaque switch" in refusal(
        state, portgroup={"name": "iperf"}, vmknic={"device": "vmk2"}
    )


# -- management guard: distributed switches ------------------------------------------------------

DVS_UUID = "50 1a 2b 3c 4d 5e 6f 70-81 92 a3 b4 c5 d6 e7 f8"


def read(host: FakeHost, *, tags: bool = True) -> HostNetworkState:
    """Read ``host`` as the module does; ``tags`` False: as if HostVirtualNicManager failed."""
    info = host.network_system.networkInfo
    if tags:
        return read_network_state(info, net_configs=host.nic_manager.info.netConfig)
    return read_network_state(info, services_error="reading HostVirtualNicManager.info failed: NoPermission")


def test_reader_takes_vds_uplinks_from_the_backing_and_from_the_pnic_list() -> None:
    host = lab_host()
    join_dvs(host, "DSwitch-spec", "uuid-a", ["vmnic3"], bridged=False)  # only spec.backing.pnicSpec
    join_dvs(host, "DSwitch-pnic", "uuid-b", ["vmnic2"], in_spec=False)  # only the PhysicalNic keys
    state = read(host)
    assert [(s.name, s.uuid, s.uplinks) for s in state.other_switches] == [
        ("DSwitch-spec", "uuid-a", ("vmnic3",)),
        ("DSwitch-pnic", "uuid-b", ("vmnic2",)),
    ]
    assert state.netstacks == ("defaultTcpipStack", "vmotion", "vSphereProvisioning")


def test_management_on_a_vds_brings_in_its_uplinks() -> None:
    host = lab_host()
    join_dvs(host, "DSwitch-mgmt", DVS_UUID, ["vmnic3"], move="vmk0")
    state = read(host)
    vmk0 = state.vmknic("vmk0")
    assert vmk0 is not None and vmk0.distributed and vmk0.switch_uuid == DVS_UUID
    scope = management_scope(state)
    assert scope.other_switches == {"DSwitch-mgmt"}
    assert "vmnic3" in scope.uplinks
    assert scope.why[("pnic", "vmnic3")] == "uplink of distributed switch DSwitch-mgmt, which carries vmk0"


@pytest.mark.parametrize("override", [False, True])
@pytest.mark.parametrize(
    "vswitch_params",
    [{"name": "vSwitch2", "uplinks": ["vmnic3"]}, {"name": "vSwitch1", "uplinks": ["vmnic1", "vmnic2", "vmnic3"]}],
    ids=["new-vswitch", "existing-vswitch"],
)
def test_a_vds_uplink_carrying_management_is_never_taken(vswitch_params: dict[str, Any], override: bool) -> None:
    host = lab_host()
    join_dvs(host, "DSwitch-mgmt", DVS_UUID, ["vmnic3"], move="vmk0")
    message = refusal(read(host), vswitch=vswitch_params, allow_management_changes=override)
    assert message == (
        f"vSwitch {vswitch_params['name']}: physical NIC vmnic3 is an uplink of distributed switch DSwitch-mgmt, "
        "which carries the host's management network (it carries vmk0). This module never takes an uplink from a "
        "distributed or NSX switch (allow_management_changes does not change that): pick another NIC, or release "
        "vmnic3 from DSwitch-mgmt in vCenter / NSX first"
    )


def test_any_vds_uplink_is_refused_even_without_management_on_it() -> None:
    host = lab_host()
    join_dvs(host, "DSwitch-vmotion", DVS_UUID, ["vmnic3"], move="vmk1")  # vmk1 is tagged vmotion
    message = refusal(read(host), vswitch={"name": "vSwitch2", "uplinks": ["vmnic3"]})
    assert "physical NIC vmnic3 is an uplink of distributed switch DSwitch-vmotion. This module never" in message
    assert "management" not in message.split("(", maxsplit=1)[0]


def test_an_nsx_switch_uplink_is_refused() -> None:
    host = lab_host()
    from pyVmomi import vim

    info = host.network_system.networkInfo
    info.opaqueSwitch = [
        new(vim.host.OpaqueSwitch, key="nvds-1", name="nvds-overlay", pnic=["key-vim.host.PhysicalNic-vmnic3"])
    ]
    message = refusal(read(host), vswitch={"name": "vSwitch2", "uplinks": ["vmnic3"]})
    assert "physical NIC vmnic3 is an uplink of NSX switch nvds-overlay" in message


def test_a_free_nic_is_still_taken_next_to_a_vds() -> None:
    host = lab_host()
    join_dvs(host, "DSwitch-mgmt", DVS_UUID, ["vmnic2"], move="vmk0", bridged=False)
    host.network_system.networkInfo.vswitch[1].spec.bridge.nicDevice = ["vmnic1"]
    plan = plan_for(read(host), vswitch={"name": "vSwitch2", "uplinks": ["vmnic3"]})
    assert plan.ops == (AddVSwitch("vSwitch2", None, ("vmnic3",)),)


# -- management guard: service tags that cannot be read ------------------------------------------


def _unread_fix(error: str = "reading HostVirtualNicManager.info failed: NoPermission") -> str:
    return (
        f"The host's management network cannot be determined: the service tags could not be read ({error}). "
        "Make them readable (the API user needs the System.Read privilege on the host, and the endpoint must "
        "implement HostVirtualNicManager), or, if you are sure this does not carry management traffic, set "
        "allow_management_changes: true (make sure you keep another way into the host)."
    )


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        (
            {"vmknic": {"device": "vmk1", "mtu": 9000}},
            "VMkernel adapter vmk1 might be part of the host's management network (on the default TCP/IP stack, and "
            "its service tags could not be read (reading HostVirtualNicManager.info failed: NoPermission)); "
            "refusing to change it.",
        ),
        (
            {"portgroup": {"name": "iperf", "vlan_id": 31}},
            "Port group iperf might be part of the host's management network (port group of vmk1, whose service "
            "tags could not be read); refusing to change it.",
        ),
        (
            {"vswitch": {"name": "vSwitch1", "uplinks": ["vmnic1"]}},
            "vSwitch vSwitch1 might be part of the host's management network (it carries port group iperf); "
            "refusing to change it.",
        ),
        (
            {"vswitch": {"name": "vSwitch2", "uplinks": ["vmnic2"]}},
            "Physical NIC vmnic2 might be part of the host's management network (uplink of vSwitch vSwitch1, which "
            "carries management); refusing to change it.",
        ),
        ({"state": "absent", "vmknic": {"device": "vmk1"}}, "VMkernel adapter vmk1 might be part"),
    ],
    ids=["vmknic", "portgroup", "vswitch", "uplink", "absent"],
)
def test_unreadable_tags_refuse_what_might_carry_management(params: dict[str, Any], expected: str) -> None:
    message = refusal(read(lab_host(), tags=False), **params)
    assert message.startswith(expected), message
    assert message.endswith(_unread_fix())
    if "vSwitch2" in str(params):  # taking a NIC from another vSwitch is refused anyway, but not as management
        for state, override in ((read(lab_host()), False), (read(lab_host(), tags=False), True)):
            other = refusal(state, **params, allow_management_changes=override)
            assert other.startswith("vSwitch vSwitch2: physical NIC vmnic2 is an uplink of vSwitch vSwitch1; remove")
        return
    # The same request on a host whose tags say vmk1 carries vMotion only is planned.
    assert plan_for(read(lab_host()), **params).ops
    # And the override lets it through (with the risk the message names).
    assert plan_for(read(lab_host(), tags=False), **params, allow_management_changes=True).ops


def test_unreadable_tags_catch_a_management_vmk2_the_names_would_miss() -> None:
    """vmk2 carries management on its own vSwitch; neither it nor its port group has a management name."""
    host = lab_host()
    info = host.network_system.networkInfo
    info.vswitch = [*info.vswitch, vswitch("vSwitch2", 1500, ["vmnic3"])]
    info.portgroup = [*info.portgroup, portgroup("mgmt-b", "vSwitch2", 0, ["host"])]
    info.vnic = [*info.vnic, vmknic("vmk2", "mgmt-b", "192.0.2.11", "255.255.255.0")]
    host.nic_manager.tags["management"].add("vmk2")
    readable = read(host)
    assert "tagged for the management service" in refusal(readable, vmknic={"device": "vmk2", "mtu": 9000})
    unreadable = read(host, tags=False)
    scope = management_scope(unreadable)
    assert {"vmk0", "vmk1", "vmk2"} <= scope.vmknics and {"vSwitch0", "vSwitch1", "vSwitch2"} <= scope.vswitches
    assert scope.uplinks == {"vmnic0", "vmnic1", "vmnic2", "vmnic3"}
    for params in (
        {"vmknic": {"device": "vmk2", "ip_address": "192.0.2.12", "netmask": "255.255.255.0"}},
        {"vswitch": {"name": "vSwitch2", "uplinks": []}},
        {"vswitch": {"name": "vSwitch9", "uplinks": ["vmnic3"]}},
        {"vswitch": {"name": "vSwitch0", "uplinks": ["vmnic0", "vmnic3"]}},
    ):
        assert _unread_fix() in refusal(unreadable, **params), params


def test_unreadable_tags_leave_other_stacks_and_new_networks_alone() -> None:
    host = lab_host()
    host.network_system.networkInfo.vnic[1].spec.netStackInstanceKey = "vmotion"  # cannot carry management
    state = read(host, tags=False)
    assert "vmk1" not in management_scope(state).vmknics
    assert [type(op) for op in plan_for(state, vmknic={"device": "vmk1", "mtu": 9000}).ops] == [UpdateVmknic]
    plan = plan_for(
        state,
        vswitch={"name": "vSwitch2", "uplinks": ["vmnic3"]},
        portgroup={"name": "iperf2"},
        vmknic={"ip_address": "203.0.113.5", "netmask": "24"},
    )
    assert [type(op) for op in plan.ops] == [AddVSwitch, AddPortGroup, AddVmknic]


def test_vmk0_keeps_its_reason_when_tags_are_unreadable() -> None:
    message = refusal(read(lab_host(), tags=False), vmknic={"device": "vmk0", "mtu": 9000})
    assert message.startswith("VMkernel adapter vmk0 is part of the host's management network (the host's first")
    assert message.endswith(
        "Set allow_management_changes: true to override (make sure you keep another way into the host)."
    )


def test_an_uplink_of_a_management_vswitch_is_not_claimed_even_with_the_override() -> None:
    message = refusal(vswitch={"name": "vSwitch2", "uplinks": ["vmnic0"]}, allow_management_changes=True)
    assert message == (
        "vSwitch vSwitch2: physical NIC vmnic0 is an uplink of vSwitch vSwitch0; remove it there first (list that "
        "vSwitch's other uplinks in its own task with allow_management_changes: true)"
    )


# -- bad inputs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("netmask", ["24", "/24", " 24 ", 24, "255.255.255.0"])
def test_netmask_as_prefix_length_is_converted_to_dotted(netmask: Any) -> None:
    desired = desired_from_params({"vmknic": {"ip_address": "198.51.100.21", "netmask": netmask}})
    assert desired.vmknic is not None and desired.vmknic.netmask == "255.255.255.0"
    # vmk1 already has 198.51.100.21/255.255.255.0: nothing to change.
    assert plan_for(portgroup={"name": "iperf"}, vmknic={"ip_address": "198.51.100.21", "netmask": netmask}).ops == ()


@pytest.mark.parametrize(
    ("netmask", "expected"),
    [
        ("33", "vmknic.netmask '33' is out of range: a prefix length is 8 to 32 (e.g. 24 or /24)"),
        ("0", "vmknic.netmask '0' is out of range: a prefix length is 8 to 32"),
        ("/7", "the management network among them"),
        ("0.0.0.0", "vmknic.netmask '0.0.0.0' (/0) is too wide: give at least /8"),
        ("254.0.0.0", "(/7) is too wide"),
        ("/40", "vmknic.netmask '/40' is out of range"),
        ("0.0.0.255", "vmknic.netmask '0.0.0.255' is not a dotted IPv4 netmask (e.g. 255.255.255.0) or a prefix"),
        ("24x", "vmknic.netmask '24x' is not a dotted IPv4 netmask"),
        ("", "vmknic.netmask '' is not a dotted IPv4 netmask"),
    ],
)
def test_bad_netmask_is_refused_naming_the_option_and_the_forms(netmask: str, expected: str) -> None:
    with pytest.raises(PlanError) as caught:
        desired_from_params({"vmknic": {"ip_address": "198.51.100.21", "netmask": netmask}})
    assert expected in str(caught.value)


@pytest.mark.parametrize(
    ("stack", "key"),
    [
        ("default", "defaultTcpipStack"),
        ("vmotion", "vmotion"),
        ("provisioning", "vSphereProvisioning"),
        ("vSphereProvisioning", "vSphereProvisioning"),
        ("defaultTcpipStack", "defaultTcpipStack"),
    ],
)
def test_known_tcpip_stacks_resolve(stack: str, key: str) -> None:
    desired = desired_from_params({"vmknic": {"tcpip_stack": stack}, "portgroup": {"name": "p"}})
    assert desired.vmknic is not None and desired.vmknic.tcpip_stack == key


@pytest.mark.parametrize(
    ("stack", "expected"),
    [
        ("vMotion", "vmknic.tcpip_stack 'vMotion' is not known; stack names are case-sensitive: give vmotion"),
        ("Default", "stack names are case-sensitive: give default"),
        ("my stack", "vmknic.tcpip_stack 'my stack' is not a TCP/IP stack name: give one of default, vmotion, "),
    ],
)
def test_misspelt_tcpip_stack_is_refused_before_reading_the_host(stack: str, expected: str) -> None:
    with pytest.raises(PlanError) as caught:
        desired_from_params({"vmknic": {"tcpip_stack": stack}, "portgroup": {"name": "p"}})
    assert expected in str(caught.value)


def test_unknown_tcpip_stack_is_refused_with_the_hosts_stacks() -> None:
    params = {"portgroup": {"name": "iperf"}, "vmknic": {"device": "vmk1", "tcpip_stack": "bogus"}, "recreate": True}
    assert refusal(**params) == (
        "vmk1: vmknic.tcpip_stack 'bogus' is not a TCP/IP stack of this host (this host has defaultTcpipStack, "
        "vmotion, vSphereProvisioning). Give one of default, vmotion, provisioning, vxlan, defaultTcpipStack, "
        "vSphereProvisioning, or create the custom stack first (esxcli network ip netstack add -N bogus)"
    )
    new = {"vswitch": {"name": "vSwitch2"}, "portgroup": {"name": "p2"}}
    assert "'bogus' is not a TCP/IP stack of this host" in refusal(**new, vmknic={"dhcp": True, "tcpip_stack": "bogus"})


def test_a_custom_stack_the_host_has_is_accepted() -> None:
    host = lab_host()
    from tests.unit.plugins.vsphere_fakes import netstack

    host.network_system.networkInfo.netStackInstance = [
        *host.network_system.networkInfo.netStackInstance,
        netstack("iperfStack"),
    ]
    plan = plan_for(
        read(host),
        vswitch={"name": "vSwitch2"},
        portgroup={"name": "p2"},
        vmknic={"dhcp": True, "tcpip_stack": "iperfStack"},
    )
    assert plan.ops[-1] == AddVmknic("p2", Ipv4Config(True), None, None, "iperfStack")


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        (
            {"vswitch": "vSwitch1"},
            "vswitch must be a dictionary of its sub-options, not the str 'vSwitch1'; write it like vswitch: "
            "{name: vSwitch1, uplinks: [vmnic1]}",
        ),
        ({"portgroup": ["iperf"]}, "portgroup must be a dictionary of its sub-options, not the list"),
        ({"vmknic": "vmk1"}, "vmknic must be a dictionary of its sub-options, not the str 'vmk1'"),
        ({"vmknic": {"device": "vmk1", "ipv6": "2001:db8::1/64"}}, "vmknic.ipv6 must be a dictionary"),
    ],
)
def test_a_dictionary_option_given_as_a_string_is_named(params: dict[str, Any], expected: str) -> None:
    with pytest.raises(PlanError) as caught:
        desired_from_params(params)
    assert expected in str(caught.value)
    assert "nothing to manage" not in str(caught.value)


def test_a_vds_uplink_that_might_carry_management_says_might() -> None:
    host = lab_host()
    join_dvs(host, "DSwitch-b", DVS_UUID, ["vmnic3"], move="vmk1")
    message = refusal(read(host, tags=False), vswitch={"name": "vSwitch2", "uplinks": ["vmnic3"]})
    assert message.startswith(
        "vSwitch vSwitch2: physical NIC vmnic3 is an uplink of distributed switch DSwitch-b, which might carry the "
        "host's management network (it carries vmk1, whose service tags could not be read). This module never"
    )


def test_management_on_an_nsx_segment_brings_in_the_nsx_uplinks() -> None:
    host = lab_host()
    from pyVmomi import vim

    info = host.network_system.networkInfo
    info.opaqueSwitch = [
        new(vim.host.OpaqueSwitch, key="nvds-1", name="nvds-mgmt", pnic=["key-vim.host.PhysicalNic-vmnic3"])
    ]
    vmk0 = info.vnic[0]
    vmk0.portgroup = ""
    vmk0.spec.portgroup = None
    vmk0.spec.opaqueNetwork = new(
        vim.host.VirtualNic.OpaqueNetworkSpec, opaqueNetworkId="seg-1", opaqueNetworkType="nsx.LogicalSwitch"
    )
    scope = management_scope(read(host))
    assert scope.other_switches == {"nvds-mgmt"} and "vmnic3" in scope.uplinks
    assert "NSX switch nvds-mgmt, which carries the host's management network (it carries vmk0)" in refusal(
        read(host), vswitch={"name": "vSwitch2", "uplinks": ["vmnic3"]}, allow_management_changes=True
    )
