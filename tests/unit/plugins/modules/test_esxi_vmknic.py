# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""esxilab.iperf.esxi_vmknic's main(), run the way Ansible runs it, against the recording fake.

The module arguments go in through ``ansible.module_utils.testing.patch_module_args`` (or, before
ansible-core 2.19, ``basic._ANSIBLE_ARGS``) and
``exit_json``/``fail_json`` are patched to raise (the pattern of vmware.vmware's
``tests/unit/common/utils.py``). The vSphere login and host lookup are replaced by the fake
host of ``vsphere_fakes``; everything after that is the real module code.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from types import SimpleNamespace
from typing import Any
from unittest import mock

import pytest
from ansible.module_utils import basic

import ansible_collections.esxilab.iperf.plugins.modules.esxi_vmknic as vmknic_module
from ansible_collections.esxilab.iperf.plugins.module_utils import _vmware
from ansible_collections.esxilab.iperf.plugins.module_utils._vmware import VSphereError
from tests.unit.plugins.vsphere_fakes import HOST_NAME, MUTATING, FakeHost, fault, join_dvs, lab_host

CONNECTION = {"hostname": "esxi01.lab.example", "username": "root", "password": "s3cret", "validate_certs": False}


@contextlib.contextmanager
def module_args(args: Mapping[str, Any]) -> Iterator[None]:
    """Hand ``args`` to the AnsibleModule created inside (ansible-core 2.19+ helper, else its global)."""
    try:
        from ansible.module_utils.testing import patch_module_args
    except ImportError:  # ansible-core < 2.19
        payload = json.dumps({"ANSIBLE_MODULE_ARGS": dict(args)}).encode()
        with mock.patch.object(basic, "_ANSIBLE_ARGS", payload):
            yield
        return
    with patch_module_args(dict(args)):
        yield


class ModuleExit(Exception):
    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__(result)
        self.result = result


def _exit_json(self: Any, **kwargs: Any) -> None:
    kwargs.setdefault("changed", False)
    raise ModuleExit(kwargs)


def _fail_json(self: Any, msg: str, **kwargs: Any) -> None:
    raise ModuleExit({**kwargs, "msg": msg, "failed": True})


def run_module(
    host: FakeHost | None,
    args: Mapping[str, Any],
    *,
    check_mode: bool = False,
    diff: bool = False,
    sessions: list[Mapping[str, Any]] | None = None,
    session_error: Exception | None = None,
) -> dict[str, Any]:
    """Run main() once; return what it passed to exit_json/fail_json, plus its warnings."""
    arguments = {**args, "_ansible_check_mode": check_mode, "_ansible_diff": diff}
    warnings: list[str] = []

    @contextlib.contextmanager
    def fake_session(params: Mapping[str, Any]) -> Iterator[str]:
        if sessions is not None:
            sessions.append(dict(params))
        if session_error is not None:
            raise session_error
        yield "service-instance"

    def fake_find_host(service_instance: Any, esxi_hostname: str | None) -> FakeHost | None:
        assert service_instance == "service-instance"
        return host

    with (
        module_args(arguments),
        mock.patch.multiple(
            basic.AnsibleModule,
            exit_json=_exit_json,
            fail_json=_fail_json,
            warn=lambda self, warning: warnings.append(warning),
        ),
        mock.patch.object(vmknic_module, "vsphere_session", fake_session),
        mock.patch.object(vmknic_module, "find_host", fake_find_host),
        pytest.raises(ModuleExit) as caught,
    ):
        vmknic_module.main()
    result = caught.value.result
    result["warnings"] = warnings
    return result


def mutations(host: FakeHost) -> list[str]:
    return [m for m in host.recorder.methods() if m in MUTATING]


NEW_NETWORK = {
    **CONNECTION,
    "vswitch": {"name": "vSwitch2", "uplinks": ["vmnic3"], "mtu": 9000},
    "portgroup": {"name": "iperf2", "vlan_id": 40},
    "vmknic": {"ip_address": "203.0.113.21", "netmask": "255.255.255.0", "mtu": 9000, "services": ["vmotion"]},
}


def test_creates_the_network_and_returns_the_final_state_read_back() -> None:
    host = lab_host()
    result = run_module(host, NEW_NETWORK)
    assert result["changed"] is True
    assert result["converged"] is True
    assert result["host"] == HOST_NAME
    assert [op["op"] for op in result["operations"]] == ["add_vswitch", "add_portgroup", "add_vmknic", "select_service"]
    assert mutations(host) == [
        "AddVirtualSwitch",
        "UpdateVirtualSwitch",
        "AddPortGroup",
        "AddVirtualNic",
        "SelectVnicForNicType",
    ]
    assert result["vswitch"] == {"name": "vSwitch2", "mtu": 9000, "uplinks": ["vmnic3"], "portgroups": ["iperf2"]}
    assert result["portgroup"] == {"name": "iperf2", "vswitch": "vSwitch2", "vlan_id": 40}
    vmk = result["vmknic"]
    assert (vmk["device"], vmk["portgroup"], vmk["mtu"], vmk["tcpip_stack"]) == (
        "vmk2",
        "iperf2",
        9000,
        "defaultTcpipStack",
    )
    assert vmk["ipv4"] == {"dhcp": False, "address": "203.0.113.21", "netmask": "255.255.255.0"}
    assert vmk["services"] == ["vmotion"]
    nics = {n["name"]: n for n in result["physical_nics"]}
    assert (nics["vmnic3"]["vswitch"], nics["vmnic3"]["vswitch_mtu"], nics["vmnic3"]["link_up"]) == (
        "vSwitch2",
        9000,
        False,
    )
    assert (nics["vmnic1"]["speed_mbps"], nics["vmnic1"]["duplex"]) == (10000, "full")
    assert "diff" not in result
    assert result["warnings"] == []


def test_second_run_is_unchanged_and_calls_nothing() -> None:
    host = lab_host()
    run_module(host, NEW_NETWORK)
    before = len(host.recorder.calls)
    result = run_module(host, NEW_NETWORK)
    assert result["changed"] is False
    assert result["operations"] == []
    assert host.recorder.calls[before:] == []
    assert result["vmknic"]["device"] == "vmk2"


def test_check_mode_calls_nothing_and_returns_the_diff() -> None:
    host = lab_host()
    result = run_module(host, NEW_NETWORK, check_mode=True, diff=True)
    assert result["changed"] is True
    assert mutations(host) == []
    assert [op["op"] for op in result["operations"]] == ["add_vswitch", "add_portgroup", "add_vmknic", "select_service"]
    assert result["diff"]["before"] == {"vswitch": None, "portgroup": None, "vmknic": None}
    assert result["diff"]["after"]["vswitch"] == {
        "name": "vSwitch2",
        "mtu": 9000,
        "uplinks": ["vmnic3"],
        "portgroups": ["iperf2"],
    }
    assert result["diff"]["after"]["vmknic"]["ipv4"]["address"] == "203.0.113.21"
    # Check mode returns the host as it is: nothing was created.
    assert (result["vswitch"], result["portgroup"], result["vmknic"]) == (None, None, None)
    assert "converged" not in result


def test_diff_shows_only_what_changes_and_keeps_left_out_values() -> None:
    host = lab_host()
    result = run_module(
        host,
        {
            **CONNECTION,
            "vswitch": {"name": "vSwitch1", "mtu": 9000},
            "portgroup": {"name": "iperf"},
            "vmknic": {"mtu": 9000},
        },
        diff=True,
    )
    before, after = result["diff"]["before"], result["diff"]["after"]
    assert (before["vswitch"]["mtu"], after["vswitch"]["mtu"]) == (1500, 9000)
    assert before["vswitch"]["uplinks"] == after["vswitch"]["uplinks"] == ["vmnic1", "vmnic2"]
    assert before["portgroup"] == after["portgroup"] == {"name": "iperf", "vswitch": "vSwitch1", "vlan_id": 30}
    assert (before["vmknic"]["mtu"], after["vmknic"]["mtu"]) == (1500, 9000)
    assert before["vmknic"]["ipv4"] == after["vmknic"]["ipv4"]
    assert before["vmknic"]["services"] == after["vmknic"]["services"] == ["vmotion"]


def test_left_out_uplinks_vlan_and_mtu_are_untouched_on_the_host() -> None:
    host = lab_host()
    result = run_module(
        host,
        {
            **CONNECTION,
            "vswitch": {"name": "vSwitch1"},
            "portgroup": {"name": "iperf"},
            "vmknic": {"ip_address": "198.51.100.30", "netmask": "255.255.255.0"},
        },
    )
    assert result["changed"] is True
    assert mutations(host) == ["UpdateVirtualNic"]
    assert result["vswitch"] == {
        "name": "vSwitch1",
        "mtu": 1500,
        "uplinks": ["vmnic1", "vmnic2"],
        "portgroups": ["iperf"],
    }
    assert result["portgroup"]["vlan_id"] == 30
    assert (result["vmknic"]["mtu"], result["vmknic"]["ipv4"]["address"]) == (1500, "198.51.100.30")


def test_mtu_goes_up_switch_first_and_down_adapter_first() -> None:
    host = lab_host()
    up = {**CONNECTION, "vswitch": {"name": "vSwitch1", "mtu": 9000}, "vmknic": {"device": "vmk1", "mtu": 9000}}
    assert run_module(host, up)["changed"] is True
    assert mutations(host) == ["UpdateVirtualSwitch", "UpdateVirtualNic"]
    down = {**CONNECTION, "vswitch": {"name": "vSwitch1", "mtu": 1500}, "vmknic": {"device": "vmk1", "mtu": 1500}}
    result = run_module(host, down)
    assert mutations(host)[2:] == ["UpdateVirtualNic", "UpdateVirtualSwitch"]
    assert (result["vswitch"]["mtu"], result["vmknic"]["mtu"]) == (1500, 1500)


def test_ip_change_is_applied_not_just_reported() -> None:
    host = lab_host()
    result = run_module(
        host, {**CONNECTION, "vmknic": {"device": "vmk1", "ip_address": "198.51.100.99", "netmask": "255.255.255.0"}}
    )
    assert result["changed"] is True and result["converged"] is True
    assert result["operations"] == [
        {
            "op": "update_vmknic",
            "device": "vmk1",
            "ipv4": {"dhcp": False, "address": "198.51.100.99", "netmask": "255.255.255.0"},
            "mtu": 1500,
            "portgroup": None,
            "ipv6": None,
            "changes": ["IPv4 198.51.100.21/255.255.255.0 -> 198.51.100.99/255.255.255.0"],
        }
    ]
    assert result["vmknic"]["ipv4"]["address"] == "198.51.100.99"
    assert host.network_system._vnic("vmk1").spec.ip.ipAddress == "198.51.100.99"


def test_portgroup_move_is_applied() -> None:
    host = lab_host()
    args = {
        **CONNECTION,
        "vswitch": {"name": "vSwitch1"},
        "portgroup": {"name": "iperf-b"},
        "vmknic": {"device": "vmk1"},
    }
    result = run_module(host, args)
    assert mutations(host) == ["AddPortGroup", "UpdateVirtualNic"]
    assert result["vmknic"]["portgroup"] == "iperf-b"
    assert run_module(host, args)["changed"] is False


def test_stack_change_fails_without_recreate_and_is_done_with_it() -> None:
    host = lab_host()
    args = {**CONNECTION, "portgroup": {"name": "iperf"}, "vmknic": {"tcpip_stack": "vmotion"}}
    failed = run_module(host, args)
    assert failed["failed"] is True
    assert "cannot be changed in place. Set recreate: true" in failed["msg"]
    assert mutations(host) == []
    done = run_module(host, {**args, "recreate": True})
    assert done["changed"] is True
    assert mutations(host) == ["RemoveVirtualNic", "AddVirtualNic"]
    assert done["vmknic"]["tcpip_stack"] == "vmotion"
    assert any("re-created on TCP/IP stack vmotion" in w for w in done["warnings"])


@pytest.mark.parametrize(
    "args",
    [
        {"vmknic": {"device": "vmk0", "mtu": 9000}},
        {"portgroup": {"name": "Management Network", "vlan_id": 12}},
        {"vswitch": {"name": "vSwitch0", "uplinks": ["vmnic0", "vmnic3"]}},
    ],
    ids=["vmk0", "management-portgroup", "management-uplinks"],
)
def test_management_network_is_refused_and_nothing_is_called(args: dict[str, Any]) -> None:
    host = lab_host()
    result = run_module(host, {**CONNECTION, **args})
    assert result["failed"] is True
    assert result["msg"].startswith(f"{HOST_NAME}: ")
    assert "management" in result["msg"]
    assert "allow_management_changes: true" in result["msg"]
    assert mutations(host) == []
    allowed = run_module(host, {**CONNECTION, **args, "allow_management_changes": True})
    assert allowed["changed"] is True


def test_absent_removes_in_order_and_is_idempotent() -> None:
    host = lab_host()
    args = {
        **CONNECTION,
        "state": "absent",
        "vswitch": {"name": "vSwitch1"},
        "portgroup": {"name": "iperf"},
        "vmknic": {},
    }
    result = run_module(host, args, diff=True)
    assert mutations(host) == ["RemoveVirtualNic", "RemovePortGroup", "RemoveVirtualSwitch"]
    assert (result["vswitch"], result["portgroup"], result["vmknic"]) == (None, None, None)
    assert result["diff"]["after"] == {"vmknic": None, "portgroup": None, "vswitch": None}
    assert result["diff"]["before"]["vmknic"]["device"] == "vmk1"
    assert run_module(host, args)["changed"] is False


def test_failure_midway_reports_what_was_applied() -> None:
    host = lab_host()
    host.network_system.fail_on["UpdateVirtualNic"] = fault("vim.fault.HostConfigFault", "vmknic busy")
    result = run_module(
        host, {**CONNECTION, "vswitch": {"name": "vSwitch1", "mtu": 9000}, "vmknic": {"device": "vmk1", "mtu": 9000}}
    )
    assert result["failed"] is True
    assert result["changed"] is True  # the vSwitch MTU was raised before the failure
    assert "HostConfigFault: vmknic busy" in result["msg"]
    assert [op["op"] for op in result["applied"]] == ["update_vswitch"]


def test_a_host_that_ignores_part_of_a_change_is_not_reported_as_converged() -> None:
    host = lab_host(ignore_mtu=True)  # accepts UpdateVirtualSwitch but keeps the MTU, like vcsim's AddVirtualSwitch
    result = run_module(host, {**CONNECTION, "vswitch": {"name": "vSwitch1", "mtu": 9000}})
    assert result["changed"] is True
    assert result["converged"] is False
    assert result["vswitch"]["mtu"] == 1500
    assert any("still differs from the request: update vSwitch vSwitch1: mtu 9000" in w for w in result["warnings"])


def test_connection_options_fall_back_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VMWARE_HOST", "vc.lab.example")
    monkeypatch.setenv("VMWARE_USER", "administrator@vsphere.local")
    monkeypatch.setenv("VMWARE_PASSWORD", "env-secret")
    monkeypatch.setenv("VMWARE_PORT", "8443")
    monkeypatch.setenv("VMWARE_VALIDATE_CERTS", "false")
    sessions: list[Mapping[str, Any]] = []
    run_module(lab_host(), {"esxi_hostname": "esxi01.lab.example", "portgroup": {"name": "iperf"}}, sessions=sessions)
    [params] = sessions
    assert (params["hostname"], params["username"], params["password"]) == (
        "vc.lab.example",
        "administrator@vsphere.local",
        "env-secret",
    )
    assert (params["port"], params["validate_certs"], params["esxi_hostname"]) == (8443, False, "esxi01.lab.example")


def test_connection_defaults_and_password_is_no_log() -> None:
    spec = vmknic_module.argument_spec()
    assert spec["port"]["default"] == 443
    assert spec["validate_certs"]["default"] is True
    assert spec["password"]["no_log"] is True


def test_argument_spec_says_what_the_documentation_says() -> None:
    """One source of truth: the module's own options (policy ones included) are in both, with the same type,
    elements, choices and defaults (the connection options come from ``_vmware`` and its doc fragment)."""
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import argument_spec

    connection = set(_vmware.vmware_argument_spec())
    documented = {k: v for k, v in argument_spec(vmknic_module.DOCUMENTATION).items() if k not in connection}
    declared = {k: v for k, v in vmknic_module.argument_spec().items() if k not in connection}

    def strip(spec: Mapping[str, Any]) -> dict[str, Any]:
        out = {}
        for name, option in spec.items():
            kept = {k: v for k, v in option.items() if k not in ("fallback", "required_together", "options")}
            if "options" in option:
                kept["options"] = strip(option["options"])
            out[name] = kept
        return out

    assert strip(declared) == strip(documented)
    assert documented["portgroup"]["options"]["teaming"] == documented["vswitch"]["options"]["teaming"]


def test_connection_error_fails_with_its_message() -> None:
    result = run_module(
        None,
        {**CONNECTION, "portgroup": {"name": "iperf"}},
        session_error=VSphereError("cannot connect to the vSphere API at esxi01.lab.example:443: refused"),
    )
    assert result == {
        "msg": "cannot connect to the vSphere API at esxi01.lab.example:443: refused",
        "failed": True,
        "warnings": [],
    }


def test_invalid_request_fails_before_connecting() -> None:
    sessions: list[Mapping[str, Any]] = []
    result = run_module(None, {**CONNECTION, "vswitch": {"name": "v", "mtu": 10000}}, sessions=sessions)
    assert result["failed"] is True and "vswitch mtu 10000 is out of range" in result["msg"]
    assert sessions == []


def test_missing_pyvmomi_is_reported_with_missing_required_lib(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_vmware, "HAS_PYVMOMI", False)
    monkeypatch.setattr(_vmware, "PYVMOMI_IMPORT_ERROR", "Traceback: No module named 'pyVmomi'")
    result = run_module(lab_host(), {**CONNECTION, "portgroup": {"name": "iperf"}})
    assert result["failed"] is True
    assert "Failed to import the required Python library (pyvmomi)" in result["msg"]


def test_nothing_named_is_refused_by_the_argument_spec() -> None:
    result = run_module(lab_host(), CONNECTION)
    assert result["failed"] is True
    assert "one of the following is required: vswitch, portgroup, vmknic" in result["msg"]


def test_session_error_type_comes_from_vmware_utils() -> None:
    with (
        pytest.raises(VSphereError, match="hostname is not set: give it in the task or export VMWARE_HOST"),
        _vmware.vsphere_session({}),
    ):
        pass


class _UnreadableNetworkSystem:
    @property
    def networkInfo(self) -> Any:
        raise fault("vim.fault.NoPermission", "Permission to perform this operation was denied.")


def test_unreadable_host_fails_with_the_privilege_to_check() -> None:
    host: Any = SimpleNamespace(
        name=HOST_NAME,
        configManager=SimpleNamespace(networkSystem=_UnreadableNetworkSystem(), virtualNicManager=None),
        config=None,
    )
    result = run_module(host, {**CONNECTION, "portgroup": {"name": "iperf"}})
    assert result["failed"] is True
    assert result["msg"] == (
        "cannot read the network configuration of the host: NoPermission: Permission to perform this operation "
        "was denied.; the user needs the System.Read privilege on it"
    )


# -- management guard: distributed switches and unreadable service tags -------------------------


@pytest.mark.parametrize("override", [False, True])
def test_a_vds_uplink_carrying_management_is_refused_and_nothing_is_called(override: bool) -> None:
    host = lab_host()
    join_dvs(host, "DSwitch-mgmt", "50 1a 2b", ["vmnic3"], move="vmk0")
    args = {**CONNECTION, "vswitch": {"name": "vSwitch2", "uplinks": ["vmnic3"]}, "allow_management_changes": override}
    result = run_module(host, args)
    assert result["failed"] is True and result.get("changed") is not True
    assert result["msg"].startswith(f"{HOST_NAME}: vSwitch vSwitch2: physical NIC vmnic3 is an uplink of distributed ")
    assert "which carries the host's management network (it carries vmk0)" in result["msg"]
    assert mutations(host) == []


def test_unreadable_tags_refuse_a_possible_management_change_and_name_the_failed_call() -> None:
    host = lab_host()
    host.nic_manager.broken = True
    args = {**CONNECTION, "vmknic": {"device": "vmk1", "mtu": 9000}}
    result = run_module(host, args)
    assert result["failed"] is True
    assert result["msg"].startswith(f"{HOST_NAME}: VMkernel adapter vmk1 might be part of the host's management")
    assert "reading HostVirtualNicManager.info failed: ManagedObjectNotFound" in result["msg"]
    assert "QueryNetConfig(nicType=management) failed" in result["msg"]
    assert "the API user needs the System.Read privilege" in result["msg"]
    assert "set allow_management_changes: true" in result["msg"]
    assert mutations(host) == []
    allowed = run_module(host, {**args, "allow_management_changes": True})
    assert allowed["changed"] is True and mutations(host) == ["UpdateVirtualNic"]


# -- bad inputs ----------------------------------------------------------------------------------


def test_netmask_as_prefix_length_is_applied_dotted() -> None:
    host = lab_host()
    args = {**CONNECTION, "portgroup": {"name": "iperf"}, "vmknic": {"ip_address": "198.51.100.22", "netmask": "/24"}}
    result = run_module(host, args)
    assert result["changed"] is True
    assert result["vmknic"]["ipv4"] == {"dhcp": False, "address": "198.51.100.22", "netmask": "255.255.255.0"}
    assert run_module(host, {**args, "vmknic": {"ip_address": "198.51.100.22", "netmask": 24}})["changed"] is False


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"vswitch": "vSwitch1"}, "vswitch must be a dictionary of its sub-options, not the str 'vSwitch1'; write it"),
        ({"portgroup": "iperf"}, "portgroup must be a dictionary of its sub-options, not the str 'iperf'"),
        ({"vmknic": "vmk1"}, "vmknic must be a dictionary of its sub-options, not the str 'vmk1'"),
        ({"vmknic": {"device": "vmk1", "ipv6": "2001:db8::5/64"}}, "vmknic.ipv6 must be a dictionary"),
        ({"vmknic": {"device": "vmk1", "ip_address": "198.51.100.5", "netmask": "33"}}, "vmknic.netmask '33'"),
        ({"vmknic": {"device": "vmk1", "tcpip_stack": "vMotion"}}, "case-sensitive: give vmotion"),
    ],
    ids=["vswitch-string", "portgroup-string", "vmknic-string", "ipv6-string", "netmask-33", "stack-case"],
)
def test_bad_input_fails_naming_the_option_before_connecting(args: dict[str, Any], expected: str) -> None:
    sessions: list[Mapping[str, Any]] = []
    host = lab_host()
    result = run_module(host, {**CONNECTION, **args}, sessions=sessions)
    assert result["failed"] is True
    assert expected in result["msg"], result["msg"]
    assert sessions == [] and mutations(host) == []


def test_unknown_tcpip_stack_fails_with_the_hosts_stacks_and_changes_nothing() -> None:
    host = lab_host()
    args = {**CONNECTION, "portgroup": {"name": "iperf"}, "vmknic": {"device": "vmk1", "tcpip_stack": "bogus"}}
    result = run_module(host, {**args, "recreate": True})
    assert result["failed"] is True
    assert (
        "vmknic.tcpip_stack 'bogus' is not a TCP/IP stack of this host (this host has defaultTcpipStack"
        in (result["msg"])
    )
    assert mutations(host) == []


def test_other_argument_errors_keep_ansibles_message() -> None:
    result = run_module(lab_host(), {**CONNECTION, "vswitch": {"mtu": 9000}})
    assert result["failed"] is True
    assert "missing required arguments: name found in vswitch" in result["msg"]


POLICY = {
    **CONNECTION,
    "vswitch": {
        "name": "vSwitch1",
        "security": {"allow_promiscuous": True, "forged_transmits": True, "mac_changes": True},
        "teaming": {"active_uplinks": ["vmnic2"], "standby_uplinks": ["vmnic1"], "load_balancing": "failover_explicit"},
    },
    "portgroup": {"name": "iperf", "security": {"allow_promiscuous": False}},
}


def test_policy_check_mode_apply_and_unchanged_rerun() -> None:
    host = lab_host()
    check = run_module(host, POLICY, check_mode=True, diff=True)
    assert check["changed"] is True and mutations(host) == []
    assert [op["op"] for op in check["operations"]] == ["set_vswitch_policy", "set_portgroup_policy"]
    assert check["vswitch"]["policy"]["security"]["allow_promiscuous"] is False  # as it is: nothing changed
    assert check["diff"]["after"]["vswitch"]["policy"]["security"] == {
        "allow_promiscuous": True,
        "forged_transmits": True,
        "mac_changes": True,
    }
    applied = run_module(host, POLICY, diff=True)
    assert mutations(host) == ["UpdateVirtualSwitch", "UpdatePortGroup"]
    assert applied["converged"] is True
    assert applied["operations"] == check["operations"]
    assert applied["vswitch"]["policy"]["teaming"] == {
        "active_uplinks": ["vmnic2"],
        "standby_uplinks": ["vmnic1"],
        "load_balancing": "failover_explicit",
    }
    assert applied["vswitch"]["uplinks"] == ["vmnic1", "vmnic2"]  # bridge sent back, not detached
    assert applied["portgroup"]["policy"] == {
        "security": {"allow_promiscuous": False, "forged_transmits": None, "mac_changes": None},
        "teaming": {"active_uplinks": None, "standby_uplinks": None, "load_balancing": None},
    }
    assert applied["portgroup"]["vlan_id"] == 30  # left out: kept
    before = len(host.recorder.calls)
    again = run_module(host, POLICY)
    assert again["changed"] is False and again["operations"] == []
    assert [m for m in host.recorder.methods()[before:] if m in MUTATING] == []


def test_policy_on_the_management_portgroup_is_refused_and_nothing_is_called() -> None:
    host = lab_host()
    result = run_module(
        host, {**CONNECTION, "portgroup": {"name": "Management Network", "security": {"mac_changes": True}}}
    )
    assert result["failed"] is True
    assert "The policy of port group Management Network is part of the host's management network" in result["msg"]
    assert mutations(host) == []
