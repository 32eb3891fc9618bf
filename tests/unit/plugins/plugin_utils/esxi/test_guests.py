# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The guests' vNIC wiring plan (plugin_utils/esxi/guests.py) and its filters, without Ansible running."""

from __future__ import annotations

import re
from typing import Any

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.filter.guest_vnic_plan import guest_vnic_plan
from ansible_collections.esxilab.iperf.plugins.filter.guest_vnic_requests import guest_vnic_requests
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.guests import GuestsError, check_guests, plan_guests


def nic(mac: str, kind: str, group: str) -> dict[str, Any]:
    """A vNIC as community.vmware.vmware_guest_network's gather_network_info returns it."""
    return {
        "mac_address": mac,
        "device_type": kind,
        "network_name": group,
        "label": "Network adapter 1",
        "connected": True,
        "start_connected": True,
        "switch": "vSwitch0",
        "unit_number": 7,
    }


PGS = ["VM Network", "Management Network", "iperf-t"]


def plan_one(kind: str, nics: list[dict[str, Any]] | None, replace: bool = False) -> dict[str, Any]:
    requests = check_guests([{"vm": "vm1", "type": kind}], "iperf-t")
    plan = plan_guests(requests, {"vm1": nics}, PGS, replace)
    [guest] = plan["guests"]
    return {**guest, "changes": plan["changes"], "refused": plan["refused"]}


def test_requests_are_normalised_with_the_default_portgroup() -> None:
    assert check_guests(
        [{"vm": " a ", "type": "VMXNET3"}, {"vm": "b", "type": "e1000", "portgroup": "p2", "name": "g"}], "p1"
    ) == [
        {"name": "a", "vm": "a", "type": "vmxnet3", "portgroup": "p1"},
        {"name": "g", "vm": "b", "type": "e1000", "portgroup": "p2"},
    ]


@pytest.mark.parametrize(
    ("guests", "portgroup", "message"),
    [
        ("vm1", "p", "esxi_guests_guests must be a list"),
        ([["vm1"]], "p", "esxi_guests_guests[0] must be a dict"),
        ([{"type": "e1000"}], "p", "esxi_guests_guests[0].vm: give the VM's name"),
        (
            [{"vm": "a", "type": "pcnet32"}],
            "p",
            "esxi_guests_guests[0].type: 'pcnet32' for VM a; give one of e1000",
        ),
        ([{"vm": "a"}], "p", "esxi_guests_guests[0].type: None for VM a"),
        (
            [{"vm": "a", "type": "e1000"}],
            None,
            "esxi_guests_guests[0].portgroup: VM a has no port group; set it or esxi_guests_portgroup",
        ),
        (
            [{"vm": "a", "type": "e1000"}, {"vm": "a", "type": "vmxnet3"}],
            "p",
            "esxi_guests_guests[1].vm: VM a is also esxi_guests_guests[0]",
        ),
        ([{"vm": "a", "type": "e1000", "nic": 1}], "p", "esxi_guests_guests[0]: unknown key(s) nic"),
    ],
)
def test_bad_input_names_the_option(guests: Any, portgroup: str | None, message: str) -> None:
    with pytest.raises(GuestsError, match=r"^" + re.escape(message)):
        check_guests(guests, portgroup)


def test_the_management_portgroup_is_refused_unless_allowed() -> None:
    with pytest.raises(GuestsError, match=r"management port group .*esxi_guests_allow_management: true"):
        check_guests([{"vm": "a", "type": "e1000"}], "management network")  # any case
    with pytest.raises(GuestsError, match="port group mgmt of VM a is the management port group"):
        check_guests([{"vm": "a", "type": "e1000", "portgroup": "mgmt"}], None, management_portgroup="mgmt")
    assert check_guests([{"vm": "a", "type": "e1000"}], "Management Network", allow_management=True)[0][
        "portgroup"
    ] == ("Management Network")


def test_a_vnic_of_the_type_on_the_portgroup_is_unchanged_and_other_portgroups_are_ignored() -> None:
    guest = plan_one("vmxnet3", [nic("m0", "e1000", "VM Network"), nic("m1", "vmxnet3", "iperf-t")])
    assert (guest["action"], guest["add"], guest["remove"], guest["changes"]) == ("unchanged", None, [], 0)
    assert [n["mac_address"] for n in guest["before"]] == [n["mac_address"] for n in guest["after"]] == ["m1"]
    assert guest["reason"] == "VM vm1 has a vNIC of type vmxnet3 on iperf-t"


def test_no_vnic_on_the_portgroup_is_added_whatever_is_elsewhere() -> None:
    guest = plan_one("e1000e", [nic("m0", "e1000e", "VM Network")])
    assert (guest["action"], guest["add"], guest["remove"], guest["changes"]) == (
        "add",
        {"type": "e1000e", "portgroup": "iperf-t"},
        [],
        1,
    )
    assert guest["before"] == []
    assert guest["after"] == [
        {"mac_address": None, "type": "e1000e", "portgroup": "iperf-t", "label": None, "connected": True}
    ]
    assert plan_one("vmxnet3", [])["action"] == "add"  # a VM without any vNIC


def test_a_type_mismatch_is_refused_naming_the_option_and_the_fix() -> None:
    guest = plan_one("vmxnet3", [nic("m1", "e1000", "iperf-t")])
    assert (guest["action"], guest["add"], guest["remove"], guest["changes"]) == ("refuse", None, [], 0)
    assert guest["refused"] == [guest["reason"]]
    assert "VM vm1 has e1000 m1 on iperf-t, not vmxnet3; the vSphere API cannot change a vNIC's type" in guest["reason"]
    assert "esxi_guests_replace_mismatched: true" in guest["reason"] and "new MAC address" in guest["reason"]
    assert "or ask for type e1000" in guest["reason"]


def test_a_type_mismatch_is_replaced_with_the_opt_in_add_first() -> None:
    guest = plan_one("vmxnet3", [nic("m1", "e1000", "iperf-t"), nic("m0", "e1000", "VM Network")], replace=True)
    assert (guest["action"], guest["add"], guest["remove"], guest["changes"]) == (
        "replace",
        {"type": "vmxnet3", "portgroup": "iperf-t"},
        ["m1"],
        1,
    )
    assert [n["type"] for n in guest["after"]] == ["vmxnet3"]
    assert guest["reason"] == (
        "VM vm1 has e1000 m1 on iperf-t, not vmxnet3: a vNIC of type vmxnet3 is added (a new "
        "MAC address), then e1000 m1 removed"
    )


def test_extra_vnics_of_another_type_beside_a_matching_one_are_removed_only() -> None:
    nics = [nic("m1", "vmxnet3", "iperf-t"), nic("m2", "e1000", "iperf-t")]
    assert plan_one("vmxnet3", nics)["action"] == "refuse"
    guest = plan_one("vmxnet3", nics, replace=True)
    assert (guest["action"], guest["add"], guest["remove"]) == ("replace", None, ["m2"])
    assert [n["mac_address"] for n in guest["after"]] == ["m1"]


def test_a_missing_vm_and_a_missing_portgroup_are_named() -> None:
    missing = plan_one("e1000", None)
    assert missing["action"] == "refuse" and missing["reason"].startswith(
        "VM vm1 was not found (esxi_guests_guests: vm vm1)"
    )
    requests = check_guests([{"vm": "vm1", "type": "e1000", "portgroup": "nope"}])
    [guest] = plan_guests(requests, {"vm1": []}, PGS)["guests"]
    assert guest["action"] == "refuse"
    assert guest["reason"] == (
        "port group nope of VM vm1 does not exist on the host (port groups: Management Network, "
        "VM Network, iperf-t); build it first (esxilab.iperf.esxi_network) or fix the port "
        "group name"
    )


def test_one_refusal_among_several_guests_is_reported_with_the_others_planned() -> None:
    requests = check_guests([{"vm": "a", "type": "e1000"}, {"vm": "b", "type": "e1000"}], "iperf-t")
    plan = plan_guests(requests, {"a": [], "b": [nic("m", "vmxnet3", "iperf-t")]}, PGS)
    assert [g["action"] for g in plan["guests"]] == ["add", "refuse"]
    assert plan["changes"] == 1 and len(plan["refused"]) == 1  # the role refuses the whole wiring then


def test_filters_wrap_the_errors_and_check_their_input() -> None:
    with pytest.raises(AnsibleFilterError, match=r"esxi_guests_guests\[0\].type"):
        guest_vnic_requests([{"vm": "a", "type": "vmxnet2"}], "p")
    assert guest_vnic_requests([{"vm": "a", "type": "e1000"}], "p", None, False)[0]["portgroup"] == "p"
    requests = guest_vnic_requests([{"vm": "a", "type": "e1000"}], "iperf-t")
    assert guest_vnic_plan(requests, {"a": []}, PGS)["changes"] == 1
    assert guest_vnic_plan(requests, {}, PGS)["guests"][0]["action"] == "refuse"  # left out: not found
    with pytest.raises(AnsibleFilterError, match="nics must map VM names"):
        guest_vnic_plan(requests, [], PGS)
    with pytest.raises(AnsibleFilterError, match="portgroups must be a list"):
        guest_vnic_plan(requests, {"a": []}, "iperf-t")
    with pytest.raises(AnsibleFilterError, match=r"esxi_guests_guests\[0\].vm"):
        guest_vnic_plan([{"type": "e1000", "portgroup": "p"}], {}, PGS)
