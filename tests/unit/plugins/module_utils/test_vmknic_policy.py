# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""vSwitch security / teaming policy and port-group overrides: the plan and its diff."""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_ops import (
    AddPortGroup,
    AddVSwitch,
    SetPortGroupPolicy,
    SetVSwitchPolicy,
)
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_params import desired_from_params
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_plan import make_plan
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_policy import Policy
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_state import PlanError, read_network_state
from tests.unit.plugins.vsphere_fakes import lab_host

INHERITED = {
    "security": {"allow_promiscuous": None, "forged_transmits": None, "mac_changes": None},
    "teaming": {"active_uplinks": None, "standby_uplinks": None, "load_balancing": None},
}


def plan_for(**params: Any) -> Any:
    host = lab_host()
    state = read_network_state(host.network_system.networkInfo, net_configs=host.nic_manager.info.netConfig)
    return make_plan(state, desired_from_params(params))


def refusal(**params: Any) -> str:
    with pytest.raises(PlanError) as caught:
        plan_for(**params)
    return str(caught.value)


def test_security_on_the_vswitch_sets_only_what_differs_and_shows_it_in_the_diff() -> None:
    plan = plan_for(
        vswitch={
            "name": "vSwitch1",
            "security": {"allow_promiscuous": True, "forged_transmits": True, "mac_changes": False},
        }
    )
    # the lab vSwitch has mac_changes false already and no forgedTransmits set: only what differs
    assert plan.ops == (SetVSwitchPolicy("vSwitch1", Policy(allow_promiscuous=True, forged_transmits=True)),)
    before, after = plan.before["vswitch"]["policy"], plan.after["vswitch"]["policy"]
    assert before["security"] == {"allow_promiscuous": False, "forged_transmits": None, "mac_changes": False}
    assert after["security"] == {"allow_promiscuous": True, "forged_transmits": True, "mac_changes": False}
    assert (
        before["teaming"]
        == after["teaming"]
        == {
            "active_uplinks": ["vmnic1"],
            "standby_uplinks": ["vmnic2"],
            "load_balancing": "loadbalance_srcid",
        }
    )


def test_policy_already_as_asked_is_unchanged() -> None:
    plan = plan_for(vswitch={"name": "vSwitch1", "security": {"allow_promiscuous": False, "mac_changes": False}})
    assert plan.ops == ()
    assert plan.after == plan.before


def test_teaming_active_alone_takes_its_nics_out_of_standby() -> None:
    plan = plan_for(vswitch={"name": "vSwitch1", "teaming": {"active_uplinks": ["vmnic2"]}})
    # standby left out: the current standby (vmnic2) minus the new active ones; vmnic1 unused
    assert plan.ops == (SetVSwitchPolicy("vSwitch1", Policy(active_uplinks=("vmnic2",), standby_uplinks=())),)
    assert plan.after["vswitch"]["policy"]["teaming"] == {
        "active_uplinks": ["vmnic2"],
        "standby_uplinks": [],
        "load_balancing": "loadbalance_srcid",
    }


def test_teaming_swap_active_and_standby() -> None:
    plan = plan_for(
        vswitch={"name": "vSwitch1", "teaming": {"active_uplinks": ["vmnic2"], "standby_uplinks": ["vmnic1"]}}
    )
    assert plan.ops == (SetVSwitchPolicy("vSwitch1", Policy(active_uplinks=("vmnic2",), standby_uplinks=("vmnic1",))),)
    assert plan.after["vswitch"]["policy"]["teaming"]["load_balancing"] == "loadbalance_srcid"  # left out: kept
    assert plan.ops[0].as_dict() == {
        "op": "set_vswitch_policy",
        "name": "vSwitch1",
        "policy": {"active_uplinks": ["vmnic2"], "standby_uplinks": ["vmnic1"]},
    }


def test_portgroup_override_sets_only_the_fields_given() -> None:
    plan = plan_for(
        portgroup={
            "name": "iperf",
            "security": {"forged_transmits": True},
            "teaming": {"active_uplinks": ["vmnic2"], "load_balancing": "failover_explicit"},
        }
    )
    # active given, standby left out: the vSwitch's standby (none) minus the new active ones
    assert plan.ops == (
        SetPortGroupPolicy(
            "iperf",
            Policy(
                forged_transmits=True,
                active_uplinks=("vmnic2",),
                standby_uplinks=(),
                load_balancing="failover_explicit",
            ),
        ),
    )
    assert plan.before["portgroup"]["policy"] == INHERITED
    after = plan.after["portgroup"]["policy"]
    assert after["security"] == {"allow_promiscuous": None, "forged_transmits": True, "mac_changes": None}
    assert after["teaming"] == {
        "active_uplinks": ["vmnic2"],
        "standby_uplinks": [],
        "load_balancing": "failover_explicit",
    }


def test_new_vswitch_and_portgroup_get_their_policy_after_creation() -> None:
    plan = plan_for(
        vswitch={"name": "vSwitch9", "uplinks": ["vmnic3"], "security": {"allow_promiscuous": True}},
        portgroup={"name": "fwd", "security": {"mac_changes": True}},
    )
    assert plan.ops == (
        AddVSwitch("vSwitch9", None, ("vmnic3",)),
        SetVSwitchPolicy("vSwitch9", Policy(allow_promiscuous=True)),
        AddPortGroup("fwd", "vSwitch9", 0),
        SetPortGroupPolicy("fwd", Policy(mac_changes=True)),
    )
    assert plan.after["vswitch"]["policy"]["security"] == {
        "allow_promiscuous": True,
        "forged_transmits": False,
        "mac_changes": False,
    }


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        (
            {"vswitch": {"name": "vSwitch1", "teaming": {"active_uplinks": ["vmnic1"], "standby_uplinks": ["vmnic1"]}}},
            "vswitch.teaming: vmnic1 is in both active_uplinks and standby_uplinks; list each NIC in one of them",
        ),
        (
            {"vswitch": {"name": "vSwitch1", "teaming": {"active_uplinks": ["vmnic1", "vmnic7"]}}},
            "vswitch.teaming.active_uplinks: vmnic7 is not an uplink of vSwitch vSwitch1 (its uplinks: vmnic1, "
            "vmnic2); add it to vswitch.uplinks or leave it out of active_uplinks",
        ),
        (
            {"portgroup": {"name": "iperf", "teaming": {"standby_uplinks": ["vmnic0"]}}},
            "portgroup.teaming.standby_uplinks: vmnic0 is not an uplink of vSwitch vSwitch1",
        ),
        (
            {"vswitch": {"name": "vSwitch1", "teaming": {"standby_uplinks": ["vmnic1"]}}},
            "vswitch.teaming would leave vSwitch vSwitch1 no active uplink; give vswitch.teaming.active_uplinks",
        ),
        (
            {"vswitch": {"name": "vSwitch1", "teaming": {"load_balancing": "loadbalance_round"}}},
            "vswitch.teaming.load_balancing 'loadbalance_round' is not known: give one of loadbalance_srcid,",
        ),
    ],
)
def test_bad_teaming_is_refused_naming_the_option_and_the_fix(params: dict[str, Any], expected: str) -> None:
    assert expected in refusal(**params)


def test_new_uplinks_count_for_the_teaming_order() -> None:
    plan = plan_for(
        vswitch={"name": "vSwitch1", "uplinks": ["vmnic1", "vmnic3"], "teaming": {"standby_uplinks": ["vmnic3"]}}
    )
    assert [op.kind for op in plan.ops] == ["update_vswitch", "set_vswitch_policy"]
    assert plan.ops[1] == SetVSwitchPolicy("vSwitch1", Policy(active_uplinks=("vmnic1",), standby_uplinks=("vmnic3",)))


@pytest.mark.parametrize(
    "params",
    [
        {"vswitch": {"name": "vSwitch0", "security": {"allow_promiscuous": True}}},
        {"portgroup": {"name": "Management Network", "security": {"forged_transmits": True}}},
        {"portgroup": {"name": "Management Network", "teaming": {"load_balancing": "loadbalance_ip"}}},
    ],
)
def test_management_policy_is_refused_unless_overridden(params: dict[str, Any]) -> None:
    message = refusal(**params)
    assert "is part of the host's management network" in message
    assert "Set allow_management_changes: true to override" in message
    assert plan_for(**params, allow_management_changes=True).ops


def test_management_policy_already_as_asked_is_not_refused() -> None:
    plan = plan_for(vswitch={"name": "vSwitch0", "security": {"allow_promiscuous": False}})
    assert plan.ops == ()
