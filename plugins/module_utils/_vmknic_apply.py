# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Carry out a VMkernel networking plan on an ESXi host through the vSphere API (pyVmomi).

* :func:`read_host_state` reads ``HostNetworkSystem.networkInfo`` and the service tags of
  ``HostVirtualNicManager`` into the plan's :class:`HostNetworkState`.
* :func:`apply_plan` runs each operation with real ``vim.host.*`` spec objects, in the plan's
  order, and raises :class:`ApplyError` at the first failure, saying which operations were
  already applied.

vSwitch and port-group updates start from the host's current spec, re-read right before the
call, and change only what the operation names: ``UpdateVirtualSwitch`` unsets the uplinks when
``bridge`` is left out, so the current bridge is always sent back.

Module-side code (imports pyVmomi, guarded); it does not import Ansible.
Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_ops import (
    AddPortGroup,
    AddVmknic,
    AddVSwitch,
    DeselectService,
    Ipv4Config,
    Ipv6Change,
    Op,
    RemovePortGroup,
    RemoveVmknic,
    RemoveVSwitch,
    SelectService,
    SetPortGroupPolicy,
    SetVSwitchPolicy,
    UpdatePortGroup,
    UpdateVmknic,
    UpdateVSwitch,
    replace_device,
    split_v6,
)
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_policy import SECURITY, Policy
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_state import (
    SERVICES,
    HostNetworkState,
    read_network_state,
)

try:
    from pyVmomi import vim, vmodl
except ImportError:  # _vmware.require_pyvmomi reports it to the user
    vim = vmodl = None  # type: ignore[assignment]

__all__ = ["DEFAULT_NUM_PORTS", "ApplyError", "HostReadError", "apply_plan", "read_host_state"]

#: Ports of a new standard vSwitch (what ``esxcli network vswitch standard add`` configures).
DEFAULT_NUM_PORTS: Final = 128

_HINTS: Final[dict[str, str]] = {
    "ResourceInUse": "the object is still in use (a VMkernel adapter, a VM or another vSwitch holds it)",
    "AlreadyExists": "an object of that name already exists",
    "NotFound": "the object does not exist (any more)",
    "InvalidState": "the host refused the state (an IPv6 address on a host with IPv6 disabled?)",
    "InvalidArgument": "the host rejected a value (address, netmask, MTU, VLAN, port group name?)",
    "MethodNotFound": "this API endpoint does not implement the call (govmomi's simulator implements only a few)",
    "NotSupported": "the host does not support this change",
}


class HostReadError(Exception):
    """The host's network configuration could not be read."""


class ApplyError(Exception):
    """An operation failed on the host; ``applied`` lists the operations done before it."""

    def __init__(self, message: str, applied: Sequence[Op], failed: Op) -> None:
        super().__init__(message)
        self.applied: tuple[Op, ...] = tuple(applied)
        self.failed = failed


def _net_configs(host: Any) -> tuple[list[Any] | None, str | None]:
    """Service tags per nicType, or (None, why) when the host's VirtualNicManager cannot be read.

    ``why`` names each call that failed and its fault, for the management guard's message.
    """
    manager = getattr(host.configManager, "virtualNicManager", None)
    if manager is None:
        return None, "the host has no configManager.virtualNicManager"
    failures = []
    try:
        info = manager.info
        if info is not None and info.netConfig is not None:
            return list(info.netConfig), None
        failures.append("HostVirtualNicManager.info returned no netConfig")
    except vmodl.MethodFault as err:
        failures.append(f"reading HostVirtualNicManager.info failed: {_describe_failure(err)}")
    configs = []
    nic_type = ""
    try:
        for nic_type in SERVICES.values():
            configs.append(manager.QueryNetConfig(nicType=nic_type))
    except vmodl.MethodFault as err:
        failures.append(f"QueryNetConfig(nicType={nic_type}) failed: {_describe_failure(err)}")
        return None, "; ".join(failures)
    return configs, None


def read_host_state(host: Any) -> HostNetworkState:
    """Read the host's standard-switch networking, its distributed switches and service tags."""
    try:
        network_info = host.configManager.networkSystem.networkInfo
        config = getattr(host, "config", None)
        net_configs, services_error = _net_configs(host)
        return read_network_state(
            network_info,
            net_configs=net_configs,
            host_network=getattr(config, "network", None),
            services_error=services_error,
        )
    except vmodl.MethodFault as err:
        raise HostReadError(
            f"cannot read the network configuration of the host: {_describe_failure(err)}; the user needs the "
            f"System.Read privilege on it"
        ) from err


def _new(data_type: Any, **properties: Any) -> Any:
    """Build a pyVmomi data object (its constructors are untyped)."""
    return data_type(**properties)


def _live_vswitch(network_system: Any, name: str) -> Any:
    for vswitch in network_system.networkInfo.vswitch or []:
        if vswitch.name == name:
            return vswitch
    raise LookupError(f"vSwitch {name} is not on the host any more")


def _live_portgroup(network_system: Any, name: str) -> Any:
    for portgroup in network_system.networkInfo.portgroup or []:
        if portgroup.spec.name == name:
            return portgroup
    raise LookupError(f"port group {name} is not on the host any more")


def _active_order(policy: Any, uplinks: Sequence[str]) -> Any:
    """Adjust ``policy.nicTeaming.nicOrder`` to an uplink set: drop NICs no longer bridged and
    make every uplink in neither list active (such a NIC would carry no traffic)."""
    order = getattr(getattr(policy, "nicTeaming", None), "nicOrder", None)
    if order is None:
        return policy
    active = [n for n in (order.activeNic or []) if n in uplinks]
    standby = [n for n in (order.standbyNic or []) if n in uplinks]
    active += [n for n in uplinks if n not in active and n not in standby]
    order.activeNic = active
    order.standbyNic = standby
    return policy


def _vswitch_spec(live: Any, mtu: int | None, uplinks: Sequence[str] | None) -> Any:
    current = live.spec
    spec = _new(vim.host.VirtualSwitch.Specification)
    spec.numPorts = current.numPorts or DEFAULT_NUM_PORTS
    spec.mtu = mtu if mtu is not None else current.mtu
    spec.bridge = current.bridge  # left out, the API would detach every uplink
    if uplinks is not None:
        if uplinks:
            bridge = current.bridge if isinstance(current.bridge, vim.host.VirtualSwitch.BondBridge) else None
            spec.bridge = bridge or _new(vim.host.VirtualSwitch.BondBridge)
            spec.bridge.nicDevice = list(uplinks)
        else:
            spec.bridge = None
        if current.policy is not None:
            spec.policy = _active_order(current.policy, list(uplinks))
    return spec


def _with_policy(policy: Any, change: Policy) -> Any:
    """``policy`` (a ``HostNetworkPolicy``, or None) with the fields ``change`` sets; the rest kept."""
    policy = policy or _new(vim.host.NetworkPolicy)
    security = {k: v for k, v in change.as_dict().items() if k in SECURITY}
    if security:
        policy.security = policy.security or _new(vim.host.NetworkPolicy.SecurityPolicy)
        for key, value in security.items():
            setattr(policy.security, SECURITY[key], value)
    if change.load_balancing is not None or change.has_order:
        policy.nicTeaming = policy.nicTeaming or _new(vim.host.NetworkPolicy.NicTeamingPolicy)
        if change.load_balancing is not None:
            policy.nicTeaming.policy = change.load_balancing
        if change.has_order:
            policy.nicTeaming.nicOrder = _new(
                vim.host.NetworkPolicy.NicOrderPolicy,
                activeNic=list(change.active_uplinks or ()),
                standbyNic=list(change.standby_uplinks or ()),
            )
    return policy


def _ip_config(ipv4: Ipv4Config, ipv6: Ipv6Change | None) -> Any:
    ip = _new(vim.host.IpConfig, dhcp=ipv4.dhcp)
    if not ipv4.dhcp:
        ip.ipAddress = ipv4.address
        ip.subnetMask = ipv4.netmask
    if ipv6 is not None:
        config = _new(vim.host.IpConfig.IpV6AddressConfiguration)
        addresses = []
        for operation, items in (("remove", ipv6.remove), ("add", ipv6.add)):
            for item in items:
                address, prefix = split_v6(item)
                addresses.append(
                    _new(
                        vim.host.IpConfig.IpV6Address,
                        ipAddress=address,
                        prefixLength=prefix,
                        origin="manual",
                        operation=operation,
                    )
                )
        config.ipV6Address = addresses
        if ipv6.autoconf is not None:
            config.autoConfigurationEnabled = ipv6.autoconf
        if ipv6.dhcp is not None:
            config.dhcpV6Enabled = ipv6.dhcp
        ip.ipV6Config = config
    return ip


def _ensure_uplinks_active(network_system: Any, name: str, uplinks: Sequence[str]) -> None:
    """After AddVirtualSwitch: make sure every uplink is in the teaming order (active or standby)."""
    live = _live_vswitch(network_system, name)
    order = getattr(getattr(live.spec.policy, "nicTeaming", None), "nicOrder", None)
    if order is None:
        return
    listed = set(order.activeNic or []) | set(order.standbyNic or [])
    if set(uplinks) <= listed:
        return
    network_system.UpdateVirtualSwitch(vswitchName=name, spec=_vswitch_spec(live, None, list(uplinks)))


def _run(host: Any, op: Op, new_device: str | None) -> str | None:
    """Run one operation; return the device name when it created an adapter."""
    network_system = host.configManager.networkSystem
    if isinstance(op, AddVSwitch):
        spec = _new(vim.host.VirtualSwitch.Specification, numPorts=DEFAULT_NUM_PORTS)
        if op.mtu is not None:
            spec.mtu = op.mtu
        if op.uplinks:
            spec.bridge = _new(vim.host.VirtualSwitch.BondBridge, nicDevice=list(op.uplinks))
        network_system.AddVirtualSwitch(vswitchName=op.name, spec=spec)
        if op.uplinks:
            _ensure_uplinks_active(network_system, op.name, op.uplinks)
    elif isinstance(op, UpdateVSwitch):
        live = _live_vswitch(network_system, op.name)
        network_system.UpdateVirtualSwitch(vswitchName=op.name, spec=_vswitch_spec(live, op.mtu, op.uplinks))
    elif isinstance(op, SetVSwitchPolicy):
        live = _live_vswitch(network_system, op.name)
        spec = _vswitch_spec(live, None, None)
        spec.policy = _with_policy(live.spec.policy, op.policy)
        network_system.UpdateVirtualSwitch(vswitchName=op.name, spec=spec)
    elif isinstance(op, SetPortGroupPolicy):
        live = _live_portgroup(network_system, op.name).spec
        spec = _new(
            vim.host.PortGroup.Specification,
            name=op.name,
            vlanId=live.vlanId,
            vswitchName=live.vswitchName,
            policy=_with_policy(live.policy, op.policy),
        )
        network_system.UpdatePortGroup(pgName=op.name, portgrp=spec)
    elif isinstance(op, RemoveVSwitch):
        network_system.RemoveVirtualSwitch(vswitchName=op.name)
    elif isinstance(op, AddPortGroup):
        spec = _new(
            vim.host.PortGroup.Specification,
            name=op.name,
            vlanId=op.vlan_id,
            vswitchName=op.vswitch,
            policy=_new(vim.host.NetworkPolicy),
        )
        network_system.AddPortGroup(portgrp=spec)
    elif isinstance(op, UpdatePortGroup):
        live = _live_portgroup(network_system, op.name).spec
        spec = _new(
            vim.host.PortGroup.Specification,
            name=op.name,
            vlanId=op.vlan_id,
            vswitchName=live.vswitchName,
            policy=live.policy or _new(vim.host.NetworkPolicy),
        )
        network_system.UpdatePortGroup(pgName=op.name, portgrp=spec)
    elif isinstance(op, RemovePortGroup):
        network_system.RemovePortGroup(pgName=op.name)
    elif isinstance(op, AddVmknic):
        nic = _new(vim.host.VirtualNic.Specification, ip=_ip_config(op.ipv4, op.ipv6))
        if op.mtu is not None:
            nic.mtu = op.mtu
        if op.tcpip_stack is not None:
            nic.netStackInstanceKey = op.tcpip_stack
        return str(network_system.AddVirtualNic(portgroup=op.portgroup, nic=nic))
    elif isinstance(op, UpdateVmknic):
        nic = _new(vim.host.VirtualNic.Specification, ip=_ip_config(op.ipv4, op.ipv6))
        if op.mtu is not None:
            nic.mtu = op.mtu
        if op.portgroup is not None:
            nic.portgroup = op.portgroup  # a move between standard port groups
        network_system.UpdateVirtualNic(device=op.device, nic=nic)
    elif isinstance(op, RemoveVmknic):
        network_system.RemoveVirtualNic(device=op.device)
    elif isinstance(op, SelectService):
        device = op.device or new_device
        if device is None:
            raise LookupError("no VMkernel adapter was created to tag")
        host.configManager.virtualNicManager.SelectVnicForNicType(nicType=op.nic_type, device=device)
    elif isinstance(op, DeselectService):
        host.configManager.virtualNicManager.DeselectVnicForNicType(nicType=op.nic_type, device=op.device)
    return None


def _describe_failure(err: Exception) -> str:
    name = type(err).__name__.rsplit(".", 1)[-1]
    message = getattr(err, "msg", None) or (str(err) if not isinstance(err, vmodl.MethodFault) else "")
    hint = _HINTS.get(name)
    text = f"{name}: {message}" if message else name
    return f"{text} ({hint})" if hint else text


def apply_plan(host: Any, ops: Sequence[Op]) -> str | None:
    """Run ``ops`` in order on ``host``; return the device of the adapter created, if any."""
    applied: list[Op] = []
    created: str | None = None
    for op in ops:
        run = replace_device(op, created) if created else op
        try:
            device = _run(host, run, created)
        except Exception as err:  # every failure is reported with the operation that failed
            done = "; ".join(o.describe() for o in applied) or "nothing"
            raise ApplyError(
                f"{run.describe()} failed: {_describe_failure(err)}. Already applied: {done}.",
                applied,
                run,
            ) from err
        if device is not None:
            created = device
        applied.append(run)
    return created
