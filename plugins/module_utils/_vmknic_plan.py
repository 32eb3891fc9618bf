# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plan changes to an ESXi host's standard-switch VMkernel networking: pure, typed logic.

Three steps, none of which talks to a host:

1. :func:`read_network_state` turns what the vSphere API returned (``HostNetworkSystem
   .networkInfo``, ``HostVirtualNicManager.info.netConfig``) into plain frozen dataclasses.
   It only reads attributes, so it works on real pyVmomi data objects and on test doubles.
2. :func:`desired_from_params` validates the requested state (the module's options).
3. :func:`make_plan` compares both and returns a :class:`Plan`: an ordered tuple of operations
   plus a before/after view for diff mode, or raises :class:`PlanError` with every reason the
   request is refused.

Rules the plan keeps (they are what the module documents):

* An option left out (``None``) is left as it is on the host: uplinks, VLAN, MTU, IP, services.
* MTU changes are ordered so no frame is ever bigger than the path: the vSwitch MTU is raised
  before a VMkernel adapter's, and lowered after it.
* A change to an existing VMkernel adapter is either planned (``UpdateVirtualNic``, a move to
  another port group of a standard switch included) or refused with a reason, never ignored.
* The TCP/IP stack of an adapter cannot change in place: it needs ``recreate`` (remove + add).
* The management network (``vmk0``, any adapter tagged ``management``, the port groups they
  are on or one named ``Management Network``, the vSwitches carrying those and their uplinks,
  the uplinks of a distributed switch carrying one of those adapters) is only changed with
  ``allow_management_changes``. When the service tags cannot be read, every adapter on the
  default TCP/IP stack might carry management and is guarded the same way, with the reason.
* A physical NIC that is an uplink of a distributed (or NSX) switch is never taken for a
  standard vSwitch: this module does not manage those switches.
* ``state: absent`` removes what is named: adapter first, then port group, then vSwitch.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar, Final, Literal, TypeAlias

__all__ = [
    "BUILTIN_STACKS",
    "DEFAULT_STACK",
    "MANAGEMENT_PORTGROUP",
    "MANAGEMENT_VMK",
    "SERVICES",
    "TCPIP_STACKS",
    "AddPortGroup",
    "AddVSwitch",
    "AddVmknic",
    "DeselectService",
    "DesiredState",
    "DistributedSwitchState",
    "HostNetworkState",
    "Ipv4Config",
    "Ipv6Address",
    "Ipv6Change",
    "Ipv6Spec",
    "Ipv6State",
    "ManagementScope",
    "Op",
    "Plan",
    "PlanError",
    "PnicState",
    "PortGroupSpec",
    "PortGroupState",
    "RemovePortGroup",
    "RemoveVSwitch",
    "RemoveVmknic",
    "SelectService",
    "UpdatePortGroup",
    "UpdateVSwitch",
    "UpdateVmknic",
    "VSwitchSpec",
    "VSwitchState",
    "VmknicSpec",
    "VmknicState",
    "desired_from_params",
    "make_plan",
    "management_scope",
    "pnic_views",
    "read_network_state",
    "read_services",
    "replace_device",
    "shape_error",
    "split_v6",
    "state_views",
]

MANAGEMENT_VMK: Final = "vmk0"
MANAGEMENT_PORTGROUP: Final = "Management Network"
DEFAULT_STACK: Final = "defaultTcpipStack"

#: Friendly TCP/IP stack names -> ``HostVirtualNicSpec.netStackInstanceKey``. Any other value
#: is taken as a key as it is (a custom stack made with ``esxcli network ip netstack add``).
TCPIP_STACKS: Final[Mapping[str, str]] = {
    "default": DEFAULT_STACK,
    "vmotion": "vmotion",
    "provisioning": "vSphereProvisioning",
    "vxlan": "vxlan",
}
#: The stack keys every ESXi host has (``HostNetStackInstance.key``).
BUILTIN_STACKS: Final = frozenset(TCPIP_STACKS.values())

#: Service tags -> ``HostVirtualNicManagerNicType`` values (SelectVnicForNicType).
SERVICES: Final[Mapping[str, str]] = {
    "management": "management",
    "vmotion": "vmotion",
    "vsan": "vsan",
    "vsan_witness": "vsanWitness",
    "provisioning": "vSphereProvisioning",
    "replication": "vSphereReplication",
    "replication_nfc": "vSphereReplicationNFC",
    "backup_nfc": "vSphereBackupNFC",
    "fault_tolerance": "faultToleranceLogging",
    "nvme_tcp": "nvmeTcp",
    "nvme_rdma": "nvmeRdma",
}
_SERVICE_TAGS: Final[Mapping[str, str]] = {nic_type: tag for tag, nic_type in SERVICES.items()}

MTU_MAX: Final = 9000  # the largest MTU a standard vSwitch or VMkernel adapter accepts
_PNIC_KEY_PREFIX: Final = "key-vim.host.PhysicalNic-"


class PlanError(ValueError):
    """The request cannot be carried out as given; ``reasons`` holds every problem found."""

    def __init__(self, reasons: Sequence[str]) -> None:
        self.reasons: tuple[str, ...] = tuple(reasons)
        super().__init__("; ".join(self.reasons))


# --------------------------------------------------------------------------------------------
# Current state (read from the host)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ipv6Address:
    """One IPv6 address of an adapter; ``address`` is in compressed lower-case form."""

    address: str
    prefix_length: int
    origin: str | None = None  # HostIpConfigIpV6AddressConfigType: manual, dhcp, linklayer, ...

    @property
    def text(self) -> str:
        return f"{self.address}/{self.prefix_length}"


@dataclass(frozen=True)
class Ipv6State:
    addresses: tuple[Ipv6Address, ...] = ()
    autoconf: bool | None = None
    dhcp: bool | None = None

    @property
    def manual(self) -> tuple[Ipv6Address, ...]:
        """The statically configured addresses: the only ones this module adds or removes."""
        return tuple(a for a in self.addresses if a.origin == "manual")


@dataclass(frozen=True)
class VSwitchState:
    name: str
    mtu: int | None
    uplinks: tuple[str, ...]
    num_ports: int | None = None


@dataclass(frozen=True)
class PortGroupState:
    name: str
    vswitch: str
    vlan_id: int
    port_types: tuple[str, ...] = ()  # HostPortGroupPort.type of every connected port

    @property
    def vm_ports(self) -> int:
        return sum(1 for t in self.port_types if t == "virtualMachine")


@dataclass(frozen=True)
class VmknicState:
    device: str
    portgroup: str | None  # None when not on a standard-switch port group (DVS, opaque)
    mtu: int | None
    tcpip_stack: str | None  # netStackInstanceKey as reported (None: not reported)
    dhcp: bool
    ip_address: str | None
    netmask: str | None
    ipv6: Ipv6State | None = None
    mac: str | None = None
    distributed: bool = False
    #: ``spec.distributedVirtualPort.switchUuid``: the distributed switch it is on (None: not on one).
    switch_uuid: str | None = None

    @property
    def stack(self) -> str:
        return self.tcpip_stack or DEFAULT_STACK


@dataclass(frozen=True)
class PnicState:
    device: str
    driver: str | None
    mac: str | None
    link_up: bool
    speed_mb: int | None  # None when the link is down: the API then sets no linkSpeed
    duplex: Literal["full", "half"] | None


@dataclass(frozen=True)
class DistributedSwitchState:
    """A switch of the host that this module does not manage: a vSphere Distributed Switch
    (``HostProxySwitch``, ``kind`` "distributed switch") or an NSX switch (``HostOpaqueSwitch``,
    ``kind`` "NSX switch"). Only what the guard needs: its name, identity and uplinks."""

    name: str
    uuid: str | None
    uplinks: tuple[str, ...]
    kind: str = "distributed switch"

    @property
    def label(self) -> str:
        return f"{self.kind} {self.name}"


@dataclass(frozen=True)
class HostNetworkState:
    vswitches: tuple[VSwitchState, ...] = ()
    portgroups: tuple[PortGroupState, ...] = ()
    vmknics: tuple[VmknicState, ...] = ()
    pnics: tuple[PnicState, ...] = ()
    #: device -> nicTypes selected for it; None when the service tags could not be read.
    services: Mapping[str, frozenset[str]] | None = None
    ipv6_enabled: bool | None = None
    #: Distributed and NSX switches the host is a member of (``proxySwitch``, ``opaqueSwitch``).
    other_switches: tuple[DistributedSwitchState, ...] = ()
    #: Why the service tags could not be read (the call and its fault), when ``services`` is None.
    services_error: str | None = None
    #: Keys of the host's TCP/IP stacks (``netStackInstance``); None when the host lists none.
    netstacks: tuple[str, ...] | None = None

    def vswitch(self, name: str) -> VSwitchState | None:
        return next((v for v in self.vswitches if v.name == name), None)

    def portgroup(self, name: str) -> PortGroupState | None:
        return next((p for p in self.portgroups if p.name == name), None)

    def vmknic(self, device: str) -> VmknicState | None:
        return next((v for v in self.vmknics if v.device == device), None)

    def portgroups_on(self, vswitch: str) -> tuple[PortGroupState, ...]:
        return tuple(p for p in self.portgroups if p.vswitch == vswitch)

    def vmknics_on(self, portgroup: str) -> tuple[VmknicState, ...]:
        return tuple(v for v in self.vmknics if v.portgroup == portgroup)

    def vswitch_of_uplink(self, pnic: str) -> VSwitchState | None:
        return next((v for v in self.vswitches if pnic in v.uplinks), None)

    def other_switch_of_uplink(self, pnic: str) -> DistributedSwitchState | None:
        return next((s for s in self.other_switches if pnic in s.uplinks), None)

    def services_of(self, device: str) -> frozenset[str] | None:
        if self.services is None:
            return None
        return self.services.get(device, frozenset())


def _str(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _int(value: Any) -> int | None:
    return None if value is None or isinstance(value, bool) else int(value)


def _positive(value: Any) -> int | None:
    number = _int(value)
    return number if number is not None and number > 0 else None


def _bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _items(value: Any) -> list[Any]:
    return list(value) if value else []


def _norm_v6(address: str) -> str:
    return ipaddress.IPv6Address(address.split("%", 1)[0]).compressed


def _read_ipv6(config: Any) -> Ipv6State | None:
    if config is None:
        return None
    addresses = tuple(
        Ipv6Address(_norm_v6(str(a.ipAddress)), int(a.prefixLength), _str(getattr(a, "origin", None)))
        for a in _items(getattr(config, "ipV6Address", None))
        if getattr(a, "ipAddress", None)
    )
    return Ipv6State(
        addresses=addresses,
        autoconf=_bool(getattr(config, "autoConfigurationEnabled", None)),
        dhcp=_bool(getattr(config, "dhcpV6Enabled", None)),
    )


def _read_vswitch(vswitch: Any, pnic_by_key: Mapping[str, str]) -> VSwitchState:
    spec = getattr(vswitch, "spec", None)
    nic_devices = getattr(getattr(spec, "bridge", None), "nicDevice", None)
    if nic_devices is not None:
        uplinks = tuple(str(n) for n in nic_devices)
    else:  # no BondBridge: fall back to the pnic links ("key-vim.host.PhysicalNic-vmnic0")
        uplinks = tuple(
            pnic_by_key.get(str(k), str(k).removeprefix(_PNIC_KEY_PREFIX))
            for k in _items(getattr(vswitch, "pnic", None))
        )
    return VSwitchState(
        name=str(vswitch.name),
        mtu=_positive(getattr(vswitch, "mtu", None)) or _positive(getattr(spec, "mtu", None)),
        uplinks=uplinks,
        num_ports=_positive(getattr(spec, "numPorts", None)),
    )


def _read_portgroup(portgroup: Any) -> PortGroupState:
    spec = portgroup.spec
    return PortGroupState(
        name=str(spec.name),
        vswitch=str(spec.vswitchName),
        vlan_id=int(spec.vlanId or 0),
        port_types=tuple(str(p.type) for p in _items(getattr(portgroup, "port", None))),
    )


def _read_vmknic(vnic: Any) -> VmknicState:
    spec = vnic.spec
    ip = getattr(spec, "ip", None)
    portgroup = _str(getattr(vnic, "portgroup", None)) or _str(getattr(spec, "portgroup", None))
    dv_port = getattr(spec, "distributedVirtualPort", None)
    distributed = dv_port is not None or getattr(spec, "opaqueNetwork", None) is not None
    return VmknicState(
        device=str(vnic.device),
        portgroup=None if distributed else portgroup,
        mtu=_positive(getattr(spec, "mtu", None)),
        tcpip_stack=_str(getattr(spec, "netStackInstanceKey", None)),
        dhcp=bool(getattr(ip, "dhcp", False)),
        ip_address=_str(getattr(ip, "ipAddress", None)),
        netmask=_str(getattr(ip, "subnetMask", None)),
        ipv6=_read_ipv6(getattr(ip, "ipV6Config", None)),
        mac=_str(getattr(spec, "mac", None)),
        distributed=distributed,
        switch_uuid=_str(getattr(dv_port, "switchUuid", None)),
    )


def _read_pnic(pnic: Any) -> PnicState:
    link = getattr(pnic, "linkSpeed", None)
    duplex: Literal["full", "half"] | None = None
    if link is not None:
        duplex = "full" if getattr(link, "duplex", False) else "half"
    return PnicState(
        device=str(pnic.device),
        driver=_str(getattr(pnic, "driver", None)),
        mac=_str(getattr(pnic, "mac", None)),
        link_up=link is not None,
        speed_mb=_positive(getattr(link, "speedMb", None)) if link is not None else None,
        duplex=duplex,
    )


def _pnic_devices(keys: Any, pnic_by_key: Mapping[str, str]) -> list[str]:
    return [pnic_by_key.get(str(k), str(k).removeprefix(_PNIC_KEY_PREFIX)) for k in _items(keys)]


def _read_proxy_switch(proxy: Any, pnic_by_key: Mapping[str, str]) -> DistributedSwitchState:
    """``HostProxySwitch``: uplinks from ``spec.backing.pnicSpec`` (what the vDS was given) and
    ``pnic`` (what is bridged now), so an uplink in either is seen."""
    backing = getattr(getattr(proxy, "spec", None), "backing", None)
    devices = [str(p.pnicDevice) for p in _items(getattr(backing, "pnicSpec", None)) if getattr(p, "pnicDevice", None)]
    devices += _pnic_devices(getattr(proxy, "pnic", None), pnic_by_key)
    uuid = _str(getattr(proxy, "dvsUuid", None))
    name = _str(getattr(proxy, "dvsName", None)) or uuid or str(getattr(proxy, "key", "?"))
    return DistributedSwitchState(name=name, uuid=uuid, uplinks=tuple(dict.fromkeys(devices)))


def _read_opaque_switch(switch: Any, pnic_by_key: Mapping[str, str]) -> DistributedSwitchState:
    name = _str(getattr(switch, "name", None)) or str(getattr(switch, "key", "?"))
    devices = _pnic_devices(getattr(switch, "pnic", None), pnic_by_key)
    return DistributedSwitchState(name=name, uuid=None, uplinks=tuple(dict.fromkeys(devices)), kind="NSX switch")


def read_services(net_configs: Iterable[Any]) -> dict[str, frozenset[str]]:
    """Map device -> selected nicTypes from ``HostVirtualNicManager`` net configs.

    ``selectedVnic`` holds keys of ``candidateVnic`` entries, so the device is found through
    the candidate whose key matches.
    """
    selected: dict[str, set[str]] = {}
    for config in net_configs:
        keys = {str(k) for k in _items(getattr(config, "selectedVnic", None))}
        for candidate in _items(getattr(config, "candidateVnic", None)):
            if str(getattr(candidate, "key", "")) in keys:
                selected.setdefault(str(candidate.device), set()).add(str(config.nicType))
    return {device: frozenset(types) for device, types in selected.items()}


def read_network_state(
    network_info: Any,
    *,
    net_configs: Iterable[Any] | None = None,
    host_network: Any = None,
    services_error: str | None = None,
) -> HostNetworkState:
    """Read a ``vim.host.NetworkInfo`` (plus service tags) into a :class:`HostNetworkState`.

    ``host_network`` (``HostSystem.config.network``, the same data type) is used only for the
    physical and VMkernel adapter lists when ``network_info`` carries none: real hosts fill
    both, govmomi's simulator fills only ``config.network``. ``net_configs`` is
    ``HostVirtualNicManager.info.netConfig``; None means the tags could not be read, and
    ``services_error`` then says why (the call that failed and its fault).
    """

    def either(name: str) -> list[Any]:
        return _items(getattr(network_info, name, None)) or _items(getattr(host_network, name, None))

    pnic_objs = either("pnic")
    vnic_objs = either("vnic")
    pnic_by_key = {str(getattr(p, "key", "")): str(p.device) for p in pnic_objs if getattr(p, "key", None)}
    stacks = [str(n.key) for n in either("netStackInstance") if getattr(n, "key", None)]
    others = [_read_proxy_switch(p, pnic_by_key) for p in either("proxySwitch")]
    others += [_read_opaque_switch(o, pnic_by_key) for o in either("opaqueSwitch")]
    if net_configs is None and services_error is None:
        services_error = "the service tags were not read"
    return HostNetworkState(
        vswitches=tuple(_read_vswitch(v, pnic_by_key) for v in _items(getattr(network_info, "vswitch", None))),
        portgroups=tuple(_read_portgroup(p) for p in _items(getattr(network_info, "portgroup", None))),
        vmknics=tuple(_read_vmknic(v) for v in vnic_objs),
        pnics=tuple(_read_pnic(p) for p in pnic_objs),
        services=None if net_configs is None else read_services(net_configs),
        ipv6_enabled=_bool(getattr(network_info, "ipV6Enabled", None)),
        other_switches=tuple(others),
        services_error=None if net_configs is not None else services_error,
        netstacks=tuple(stacks) or None,
    )


# --------------------------------------------------------------------------------------------
# Desired state (the module's options)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VSwitchSpec:
    name: str
    uplinks: tuple[str, ...] | None = None
    mtu: int | None = None


@dataclass(frozen=True)
class PortGroupSpec:
    name: str
    vlan_id: int | None = None


@dataclass(frozen=True)
class Ipv6Spec:
    addresses: tuple[str, ...] | None = None  # "addr/prefix", normalized; None: leave as is
    autoconf: bool | None = None
    dhcp: bool | None = None


@dataclass(frozen=True)
class VmknicSpec:
    device: str | None = None
    ip_address: str | None = None
    netmask: str | None = None
    dhcp: bool | None = None
    ipv6: Ipv6Spec | None = None
    mtu: int | None = None
    tcpip_stack: str | None = None  # a netStackInstanceKey (friendly names resolved)
    services: tuple[str, ...] | None = None  # nicTypes (friendly tags resolved)


@dataclass(frozen=True)
class DesiredState:
    vswitch: VSwitchSpec | None = None
    portgroup: PortGroupSpec | None = None
    vmknic: VmknicSpec | None = None
    state: Literal["present", "absent"] = "present"
    recreate: bool = False
    allow_management_changes: bool = False


def _check_mtu(what: str, mtu: Any, reasons: list[str]) -> int | None:
    if mtu is None:
        return None
    value = int(mtu)
    if not 1 <= value <= MTU_MAX:
        reasons.append(f"{what} mtu {value} is out of range: give 1 to {MTU_MAX}")
    return value


def _ipv4_checked(what: str, value: str, reasons: list[str]) -> str:
    try:
        return str(ipaddress.IPv4Address(value))
    except ValueError:
        reasons.append(f"{what} {value!r} is not an IPv4 address")
        return value


def _netmask_checked(value: str, reasons: list[str]) -> str:
    """A netmask in dotted form (``255.255.255.0``) or as a prefix length (``24``, ``/24``),
    returned dotted: the form the vSphere API takes and reports."""
    text = value.strip()
    prefix = text.removeprefix("/")
    if prefix.isdecimal():
        if int(prefix) <= 32:
            return str(ipaddress.IPv4Network(f"0.0.0.0/{int(prefix)}").netmask)
        reasons.append(f"vmknic.netmask {value!r} is out of range: a prefix length is 0 to 32 (e.g. 24 or /24)")
        return value
    try:
        network = ipaddress.IPv4Network(f"0.0.0.0/{text}")
        dotted = ipaddress.IPv4Address(text)
    except ValueError:
        network = None
    if network is None or network.netmask != dotted:  # not a netmask (or a host mask like 0.0.0.255)
        reasons.append(
            f"vmknic.netmask {value!r} is not a dotted IPv4 netmask (e.g. 255.255.255.0) or a prefix length "
            f"(e.g. 24 or /24)"
        )
        return value
    return str(network.netmask)


def _ipv6_checked(value: str, reasons: list[str]) -> str:
    try:
        interface = ipaddress.IPv6Interface(value)
    except ValueError:
        reasons.append(
            f"vmknic.ipv6.addresses item {value!r} is not an IPv6 address with prefix (e.g. 2001:db8::10/64)"
        )
        return value
    if "/" not in value:
        reasons.append(f"vmknic.ipv6.addresses item {value!r} needs a prefix length (e.g. {value}/64)")
    if interface.ip.is_link_local:
        reasons.append(f"vmknic.ipv6.addresses item {value!r} is link-local; ESXi assigns those itself")
    return f"{interface.ip.compressed}/{interface.network.prefixlen}"


def _stack_key(value: str) -> str:
    return TCPIP_STACKS.get(value, value)


def _stack_checked(value: Any, reasons: list[str]) -> str | None:
    """Resolve a friendly stack name; refuse what cannot be a stack key at all.

    Whether a custom key exists is checked against the host (:meth:`_Planner.check_stack`).
    """
    if value is None or value == "":
        return None
    text = str(value)
    known = {*TCPIP_STACKS, *BUILTIN_STACKS}
    near = [k for k in sorted(known) if k.lower() == text.lower()]
    if text not in known and near:
        reasons.append(f"vmknic.tcpip_stack {text!r} is not known; stack names are case-sensitive: give {near[0]}")
    elif not text.replace("-", "").replace("_", "").replace(".", "").isalnum():
        reasons.append(
            f"vmknic.tcpip_stack {text!r} is not a TCP/IP stack name: give one of {_STACK_CHOICES}, or the key "
            f"of a custom stack on the host (letters, digits, '-', '_')"
        )
    return _stack_key(text)


_STACK_CHOICES: Final = ", ".join([*TCPIP_STACKS, *(k for k in sorted(BUILTIN_STACKS) if k not in TCPIP_STACKS)])
_SECTION_EXAMPLES: Final[Mapping[str, str]] = {
    "vswitch": "vswitch: {name: vSwitch1, uplinks: [vmnic1]}",
    "portgroup": "portgroup: {name: iperf, vlan_id: 30}",
    "vmknic": "vmknic: {ip_address: 192.0.2.21, netmask: 255.255.255.0}",
    "vmknic.ipv6": "ipv6: {addresses: ['2001:db8::21/64']}",
}


def _section(params: Mapping[str, Any], name: str, reasons: list[str], label: str | None = None) -> Any:
    """``params[name]`` when it is a dictionary (or unset); else a reason naming the option."""
    value = params.get(name)
    if value is None or isinstance(value, Mapping):
        return value
    label = label or name
    reasons.append(shape_error(label, value))
    return None


def shape_error(option: str, value: Any) -> str:
    """The message for a dictionary option given as something else (a string, a list...)."""
    example = _SECTION_EXAMPLES.get(option, f"{option}: {{...}}")
    return (
        f"{option} must be a dictionary of its sub-options, not the {type(value).__name__} {str(value)[:60]!r}; "
        f"write it like {example}"
    )


def desired_from_params(params: Mapping[str, Any]) -> DesiredState:
    """Validate the module's options (plain dicts) into a :class:`DesiredState`."""
    reasons: list[str] = []
    vswitch = portgroup = vmknic = None

    raw = _section(params, "vswitch", reasons)
    if raw:
        uplinks = raw.get("uplinks")
        vswitch = VSwitchSpec(
            name=str(raw.get("name") or ""),
            uplinks=None if uplinks is None else tuple(dict.fromkeys(str(u) for u in uplinks)),
            mtu=_check_mtu("vswitch", raw.get("mtu"), reasons),
        )
        if not vswitch.name:
            reasons.append("vswitch.name must not be empty")

    raw = _section(params, "portgroup", reasons)
    if raw:
        vlan = raw.get("vlan_id")
        if vlan is not None and not 0 <= int(vlan) <= 4095:
            reasons.append(f"portgroup.vlan_id {vlan} is out of range: give 0 (no tagging) to 4095")
        portgroup = PortGroupSpec(name=str(raw.get("name") or ""), vlan_id=None if vlan is None else int(vlan))
        if not portgroup.name:
            reasons.append("portgroup.name must not be empty")

    raw = _section(params, "vmknic", reasons)
    if raw is not None:
        address, netmask, dhcp = raw.get("ip_address"), raw.get("netmask"), raw.get("dhcp")
        if address is not None:
            address = _ipv4_checked("vmknic.ip_address", str(address), reasons)
        if netmask is not None:
            netmask = _netmask_checked(str(netmask), reasons)
        if (address is None) != (netmask is None):
            reasons.append("vmknic.ip_address and vmknic.netmask go together: give both or neither")
        if dhcp and address is not None:
            reasons.append("vmknic.dhcp: true and vmknic.ip_address exclude each other")
        if dhcp is False and address is None:
            reasons.append("vmknic.dhcp: false needs vmknic.ip_address and vmknic.netmask (the static address to use)")
        ipv6 = None
        raw6 = _section(raw, "ipv6", reasons, "vmknic.ipv6")
        if raw6:
            addrs = raw6.get("addresses")
            ipv6 = Ipv6Spec(
                addresses=None
                if addrs is None
                else tuple(dict.fromkeys(_ipv6_checked(str(a), reasons) for a in addrs)),
                autoconf=_bool(raw6.get("autoconf")),
                dhcp=_bool(raw6.get("dhcp")),
            )
        services = raw.get("services")
        if services is not None:
            unknown = sorted(set(map(str, services)) - set(SERVICES))
            if unknown:
                reasons.append(
                    f"vmknic.services: unknown service(s) {', '.join(unknown)}; known: {', '.join(SERVICES)}"
                )
        stack = _stack_checked(raw.get("tcpip_stack"), reasons)
        vmknic = VmknicSpec(
            device=_str(raw.get("device")),
            ip_address=address,
            netmask=netmask,
            dhcp=_bool(dhcp),
            ipv6=ipv6,
            mtu=_check_mtu("vmknic", raw.get("mtu"), reasons),
            tcpip_stack=stack,
            services=None
            if services is None
            else tuple(sorted({SERVICES[str(s)] for s in services if str(s) in SERVICES})),
        )

    state = params.get("state") or "present"
    if state not in ("present", "absent"):
        reasons.append(f"state must be present or absent, not {state!r}")
    if vswitch is None and portgroup is None and vmknic is None and not reasons:
        reasons.append("nothing to manage: give at least one of vswitch, portgroup, vmknic")
    if reasons:
        raise PlanError(reasons)
    return DesiredState(
        vswitch=vswitch,
        portgroup=portgroup,
        vmknic=vmknic,
        state="absent" if state == "absent" else "present",
        recreate=bool(params.get("recreate")),
        allow_management_changes=bool(params.get("allow_management_changes")),
    )


# --------------------------------------------------------------------------------------------
# Operations
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ipv4Config:
    dhcp: bool
    address: str | None = None
    netmask: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"dhcp": self.dhcp, "address": self.address, "netmask": self.netmask}


@dataclass(frozen=True)
class Ipv6Change:
    """IPv6 part of a HostIpConfig: addresses to add/remove (origin manual) and the flags."""

    add: tuple[str, ...] = ()  # "addr/prefix"
    remove: tuple[str, ...] = ()
    autoconf: bool | None = None
    dhcp: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"add": list(self.add), "remove": list(self.remove), "autoconf": self.autoconf, "dhcp": self.dhcp}


@dataclass(frozen=True)
class _OpBase:
    kind: ClassVar[str] = ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.kind}
        for item in fields(self):
            name = item.name
            value = getattr(self, name)
            if isinstance(value, Ipv4Config | Ipv6Change):
                value = value.as_dict()
            elif isinstance(value, tuple):
                value = list(value)
            out[name] = value
        return out


@dataclass(frozen=True)
class AddVSwitch(_OpBase):
    kind: ClassVar[str] = "add_vswitch"
    name: str
    mtu: int | None = None
    uplinks: tuple[str, ...] = ()

    def describe(self) -> str:
        return f"add vSwitch {self.name} (mtu {self.mtu or 'host default'}, uplinks {list(self.uplinks)})"


@dataclass(frozen=True)
class UpdateVSwitch(_OpBase):
    """Change only what is set; everything else (ports, policy, beacon) is kept from the host."""

    kind: ClassVar[str] = "update_vswitch"
    name: str
    mtu: int | None = None
    uplinks: tuple[str, ...] | None = None

    def describe(self) -> str:
        parts = []
        if self.mtu is not None:
            parts.append(f"mtu {self.mtu}")
        if self.uplinks is not None:
            parts.append(f"uplinks {list(self.uplinks)}")
        return f"update vSwitch {self.name}: {', '.join(parts)}"


@dataclass(frozen=True)
class RemoveVSwitch(_OpBase):
    kind: ClassVar[str] = "remove_vswitch"
    name: str

    def describe(self) -> str:
        return f"remove vSwitch {self.name}"


@dataclass(frozen=True)
class AddPortGroup(_OpBase):
    kind: ClassVar[str] = "add_portgroup"
    name: str
    vswitch: str
    vlan_id: int = 0

    def describe(self) -> str:
        return f"add port group {self.name} on vSwitch {self.vswitch} (VLAN {self.vlan_id})"


@dataclass(frozen=True)
class UpdatePortGroup(_OpBase):
    kind: ClassVar[str] = "update_portgroup"
    name: str
    vlan_id: int

    def describe(self) -> str:
        return f"update port group {self.name}: VLAN {self.vlan_id}"


@dataclass(frozen=True)
class RemovePortGroup(_OpBase):
    kind: ClassVar[str] = "remove_portgroup"
    name: str

    def describe(self) -> str:
        return f"remove port group {self.name}"


@dataclass(frozen=True)
class AddVmknic(_OpBase):
    kind: ClassVar[str] = "add_vmknic"
    portgroup: str
    ipv4: Ipv4Config
    ipv6: Ipv6Change | None = None
    mtu: int | None = None
    tcpip_stack: str | None = None

    def describe(self) -> str:
        ip = "dhcp" if self.ipv4.dhcp else f"{self.ipv4.address}/{self.ipv4.netmask}"
        return (
            f"add VMkernel adapter on port group {self.portgroup} "
            f"({ip}, mtu {self.mtu or 'host default'}, stack {self.tcpip_stack or DEFAULT_STACK})"
        )


@dataclass(frozen=True)
class UpdateVmknic(_OpBase):
    """``UpdateVirtualNic``: ``ipv4`` and ``mtu`` are the full values to send (the API wants
    an IP configuration every time); ``portgroup`` is set only for a move."""

    kind: ClassVar[str] = "update_vmknic"
    device: str
    ipv4: Ipv4Config
    mtu: int | None = None
    portgroup: str | None = None
    ipv6: Ipv6Change | None = None
    changes: tuple[str, ...] = ()

    def describe(self) -> str:
        return f"update VMkernel adapter {self.device}: {', '.join(self.changes)}"


@dataclass(frozen=True)
class RemoveVmknic(_OpBase):
    kind: ClassVar[str] = "remove_vmknic"
    device: str

    def describe(self) -> str:
        return f"remove VMkernel adapter {self.device}"


@dataclass(frozen=True)
class SelectService(_OpBase):
    """``device`` None: the adapter created by the AddVmknic earlier in the same plan."""

    kind: ClassVar[str] = "select_service"
    device: str | None
    nic_type: str

    def describe(self) -> str:
        return f"tag {self.device or 'the new VMkernel adapter'} for {self.nic_type}"


@dataclass(frozen=True)
class DeselectService(_OpBase):
    kind: ClassVar[str] = "deselect_service"
    device: str
    nic_type: str

    def describe(self) -> str:
        return f"untag {self.device} for {self.nic_type}"


Op: TypeAlias = (
    AddVSwitch
    | UpdateVSwitch
    | RemoveVSwitch
    | AddPortGroup
    | UpdatePortGroup
    | RemovePortGroup
    | AddVmknic
    | UpdateVmknic
    | RemoveVmknic
    | SelectService
    | DeselectService
)


@dataclass(frozen=True)
class Plan:
    ops: tuple[Op, ...]
    before: dict[str, Any]
    after: dict[str, Any]
    warnings: tuple[str, ...] = ()
    #: The adapter the plan is about (None: none named, or one still to be created).
    device: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.ops)


# --------------------------------------------------------------------------------------------
# Views (diff and return values)
# --------------------------------------------------------------------------------------------


def _service_tags(nic_types: Iterable[str] | None) -> list[str] | None:
    if nic_types is None:
        return None
    return sorted(_SERVICE_TAGS.get(t, t) for t in nic_types)


def _vswitch_view(vswitch: VSwitchState, portgroups: Iterable[str]) -> dict[str, Any]:
    return {
        "name": vswitch.name,
        "mtu": vswitch.mtu,
        "uplinks": list(vswitch.uplinks),
        "portgroups": sorted(portgroups),
    }


def _portgroup_view(portgroup: PortGroupState) -> dict[str, Any]:
    return {"name": portgroup.name, "vswitch": portgroup.vswitch, "vlan_id": portgroup.vlan_id}


def _ipv6_view(ipv6: Ipv6State | None) -> dict[str, Any] | None:
    if ipv6 is None:
        return None
    return {
        "addresses": [a.text for a in ipv6.manual],
        "other_addresses": [a.text for a in ipv6.addresses if a.origin != "manual"],
        "autoconf": ipv6.autoconf,
        "dhcp": ipv6.dhcp,
    }


def _vmknic_view(vmknic: VmknicState, services: Iterable[str] | None) -> dict[str, Any]:
    return {
        "device": vmknic.device,
        "portgroup": vmknic.portgroup,
        "distributed": vmknic.distributed,
        "mtu": vmknic.mtu,
        "tcpip_stack": vmknic.tcpip_stack,
        "ipv4": {"dhcp": vmknic.dhcp, "address": vmknic.ip_address, "netmask": vmknic.netmask},
        "ipv6": _ipv6_view(vmknic.ipv6),
        "mac": vmknic.mac,
        "services": _service_tags(services),
    }


def pnic_views(state: HostNetworkState) -> list[dict[str, Any]]:
    """The host's physical NICs as returned by the module (for % of line rate reports)."""
    out = []
    for pnic in state.pnics:
        vswitch = state.vswitch_of_uplink(pnic.device)
        out.append(
            {
                "name": pnic.device,
                "driver": pnic.driver,
                "mac": pnic.mac,
                "link_up": pnic.link_up,
                "speed_mbps": pnic.speed_mb,
                "duplex": pnic.duplex,
                "vswitch": vswitch.name if vswitch else None,
                "vswitch_mtu": vswitch.mtu if vswitch else None,
            }
        )
    return out


def state_views(state: HostNetworkState, desired: DesiredState, device: str | None = None) -> dict[str, Any]:
    """Return ``vswitch``/``portgroup``/``vmknic`` as they are in ``state`` (None: absent).

    Only the objects the request names are returned; ``device`` picks the adapter when the
    request names it by port group only (or it was just created).
    """
    out: dict[str, Any] = {}
    pg_name = desired.portgroup.name if desired.portgroup else None
    vs_name = desired.vswitch.name if desired.vswitch else None
    if vs_name is None and pg_name is not None and (pg := state.portgroup(pg_name)) is not None:
        vs_name = pg.vswitch
    if vs_name is not None:
        vswitch = state.vswitch(vs_name)
        out["vswitch"] = (
            _vswitch_view(vswitch, (p.name for p in state.portgroups_on(vs_name))) if vswitch is not None else None
        )
    if pg_name is not None:
        portgroup = state.portgroup(pg_name)
        out["portgroup"] = _portgroup_view(portgroup) if portgroup is not None else None
    if desired.vmknic is not None:
        name = device or desired.vmknic.device
        vmknic = state.vmknic(name) if name else None
        if vmknic is None and name is None and pg_name is not None:
            on_pg = state.vmknics_on(pg_name)
            vmknic = on_pg[0] if len(on_pg) == 1 else None
        out["vmknic"] = _vmknic_view(vmknic, state.services_of(vmknic.device)) if vmknic is not None else None
    return out


# --------------------------------------------------------------------------------------------
# Management guard
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ManagementScope:
    """What carries (or, when the service tags are unreadable, might carry) management traffic.

    ``why`` maps ``(kind, name)`` (kind: vmknic, portgroup, vswitch, pnic, switch) to the reason the
    object is in scope; ``uncertain`` holds the objects that are in scope only because the
    service tags could not be read (``error`` says why).
    """

    vmknics: frozenset[str]
    portgroups: frozenset[str]
    vswitches: frozenset[str]
    uplinks: frozenset[str]
    #: Names of the distributed / NSX switches that carry a (possible) management adapter.
    other_switches: frozenset[str] = frozenset()
    why: Mapping[tuple[str, str], str] = field(default_factory=dict)
    uncertain: frozenset[tuple[str, str]] = frozenset()
    error: str | None = None

    def reason(self, kind: str, name: str) -> str:
        return self.why.get((kind, name), "management")

    def is_uncertain(self, kind: str, name: str) -> bool:
        return (kind, name) in self.uncertain


def management_scope(state: HostNetworkState) -> ManagementScope:
    """What carries the host's management traffic (see the module documentation).

    Sure: ``vmk0``, adapters tagged ``management``, a port group named ``Management Network``.
    When the service tags cannot be read (``state.services`` is None) every adapter on the
    default TCP/IP stack might be tagged ``management`` (only that stack carries it), so it is
    taken in as well, marked uncertain. From the adapters follow their port groups, the
    vSwitches carrying those and the vSwitches' uplinks; an adapter on a distributed switch
    brings in that switch's uplinks (on an NSX switch: the uplinks of every NSX switch).
    """
    why: dict[tuple[str, str], str] = {}
    uncertain: set[tuple[str, str]] = set()

    def add(kind: str, name: str, reason: str, unsure: bool) -> None:
        key = (kind, name)
        if key in why and (unsure or key not in uncertain):
            return  # the first reason is kept, unless a sure one replaces an unsure one
        why[key] = reason
        uncertain.discard(key)
        if unsure:
            uncertain.add(key)

    unread = f"its service tags could not be read ({state.services_error})"
    for vmk in state.vmknics:
        tags = state.services_of(vmk.device)
        if vmk.device == MANAGEMENT_VMK:
            add("vmknic", vmk.device, "the host's first VMkernel adapter", False)
        elif tags is not None and "management" in tags:
            add("vmknic", vmk.device, "tagged for the management service", False)
        elif tags is None and vmk.stack == DEFAULT_STACK:
            add("vmknic", vmk.device, f"on the default TCP/IP stack, and {unread}", True)
    if state.portgroup(MANAGEMENT_PORTGROUP) is not None:
        add("portgroup", MANAGEMENT_PORTGROUP, "management port group", False)
    for (kind, device), _ in list(why.items()):
        adapter = state.vmknic(device) if kind == "vmknic" else None
        if adapter is None:
            continue
        unsure = ("vmknic", device) in uncertain
        if adapter.portgroup is not None:
            reason = "port group of " + (f"{device}, whose service tags could not be read" if unsure else device)
            add("portgroup", adapter.portgroup, reason if unsure else "management port group", unsure)
        for other in state.other_switches:
            on_it = other.uuid is not None and other.uuid == adapter.switch_uuid
            on_nsx = adapter.distributed and adapter.switch_uuid is None and other.uuid is None
            if on_it or on_nsx:
                unread_note = ", whose service tags could not be read" if unsure else ""
                add("switch", other.name, f"it carries {device}{unread_note}", unsure)
                for pnic in other.uplinks:
                    add("pnic", pnic, f"uplink of {other.label}, which carries {device}", unsure)
    for (kind, name), _ in list(why.items()):
        pg = state.portgroup(name) if kind == "portgroup" else None
        if pg is None:
            continue
        unsure = ("portgroup", name) in uncertain
        reason = f"it carries port group {name}" if unsure else "it carries the management port group"
        add("vswitch", pg.vswitch, reason, unsure)
    for (kind, name), _ in list(why.items()):
        vs = state.vswitch(name) if kind == "vswitch" else None
        if vs is None:
            continue
        unsure = ("vswitch", name) in uncertain
        for pnic in vs.uplinks:
            add("pnic", pnic, f"uplink of vSwitch {name}, which carries management", unsure)

    def names(kind: str) -> frozenset[str]:
        return frozenset(n for k, n in why if k == kind)

    return ManagementScope(
        vmknics=names("vmknic"),
        portgroups=names("portgroup"),
        vswitches=names("vswitch"),
        uplinks=names("pnic"),
        other_switches=names("switch"),
        why=why,
        uncertain=frozenset(uncertain),
        error=state.services_error if uncertain else None,
    )


_OVERRIDE: Final = "Set allow_management_changes: true to override (make sure you keep another way into the host)."


def _uncertain_fix(error: str | None) -> str:
    return (
        f"The host's management network cannot be determined: the service tags could not be read ({error}). "
        f"Make them readable (the API user needs the System.Read privilege on the host, and the endpoint must "
        f"implement HostVirtualNicManager), or, if you are sure this does not carry management traffic, set "
        f"allow_management_changes: true (make sure you keep another way into the host)."
    )


# --------------------------------------------------------------------------------------------
# The planner
# --------------------------------------------------------------------------------------------


@dataclass
class _Planner:
    state: HostNetworkState
    desired: DesiredState
    scope: ManagementScope
    reasons: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    vswitch_early: list[Op] = field(default_factory=list)
    portgroup_ops: list[Op] = field(default_factory=list)
    vmknic_ops: list[Op] = field(default_factory=list)
    service_ops: list[Op] = field(default_factory=list)
    vswitch_late: list[Op] = field(default_factory=list)
    removals: list[Op] = field(default_factory=list)  # state absent: adapter, port group, vSwitch
    before: dict[str, Any] = field(default_factory=dict)
    after: dict[str, Any] = field(default_factory=dict)
    device: str | None = None
    #: The managed adapter once planned: (label, final MTU, final port group, MTU/port group touched).
    vmk_final: tuple[str, int | None, str | None, bool] | None = None

    def guard(self, what: str, why: str, *, uncertain: bool = False) -> None:
        if self.desired.allow_management_changes:
            return
        if uncertain:
            self.reasons.append(
                f"{what} might be part of the host's management network ({why}); refusing to change it. "
                f"{_uncertain_fix(self.scope.error)}"
            )
            return
        self.reasons.append(
            f"{what} is part of the host's management network ({why}); refusing to change it. {_OVERRIDE}"
        )

    def guard_object(self, kind: str, name: str, label: str) -> None:
        """Guard ``name`` of ``kind`` (vmknic, portgroup, vswitch, pnic) if it is in scope."""
        if (kind, name) in self.scope.why:
            self.guard(label, self.scope.reason(kind, name), uncertain=self.scope.is_uncertain(kind, name))

    def ops(self) -> tuple[Op, ...]:
        if self.desired.state == "absent":
            return tuple(self.removals)
        return (*self.vswitch_early, *self.portgroup_ops, *self.vmknic_ops, *self.service_ops, *self.vswitch_late)

    # -- helpers -----------------------------------------------------------------------------

    def check_uplinks(self, vswitch: str, uplinks: Iterable[str]) -> None:
        known = {p.device for p in self.state.pnics}
        for pnic in uplinks:
            if known and pnic not in known:
                self.reasons.append(
                    f"vSwitch {vswitch}: there is no physical NIC {pnic} on this host "
                    f"(it has {', '.join(sorted(known))})"
                )
                continue
            other = self.state.other_switch_of_uplink(pnic)
            if other is not None:
                carries = ""
                if other.name in self.scope.other_switches:
                    verb = "might carry" if self.scope.is_uncertain("switch", other.name) else "carries"
                    carries = (
                        f", which {verb} the host's management network ({self.scope.reason('switch', other.name)})"
                    )
                self.reasons.append(
                    f"vSwitch {vswitch}: physical NIC {pnic} is an uplink of {other.label}{carries}. This module "
                    f"never takes an uplink from a distributed or NSX switch (allow_management_changes does not "
                    f"change that): pick another NIC, or release {pnic} from {other.name} in vCenter / NSX first"
                )
                continue
            owner = self.state.vswitch_of_uplink(pnic)
            if owner is None or owner.name == vswitch:
                continue
            if pnic in self.scope.uplinks and not self.desired.allow_management_changes:
                self.guard_object("pnic", pnic, f"Physical NIC {pnic}")
            else:
                extra = " with allow_management_changes: true" if pnic in self.scope.uplinks else ""
                self.reasons.append(
                    f"vSwitch {vswitch}: physical NIC {pnic} is an uplink of vSwitch {owner.name}; "
                    f"remove it there first (list that vSwitch's other uplinks in its own task{extra})"
                )

    def check_stack(self, stack: str | None, device: str) -> bool:
        """A stack an adapter is to be put on must exist on the host (built-in or custom)."""
        if stack is None or stack in BUILTIN_STACKS or stack in (self.state.netstacks or ()):
            return True
        have = (
            f"this host has {', '.join(self.state.netstacks)}"
            if self.state.netstacks
            else "the host lists no stacks, so only the built-in ones are accepted"
        )
        self.reasons.append(
            f"{device}: vmknic.tcpip_stack {stack!r} is not a TCP/IP stack of this host ({have}). Give one of "
            f"{_STACK_CHOICES}, or create the custom stack first (esxcli network ip netstack add -N {stack})"
        )
        return False

    def final_vswitch_mtu(self, name: str) -> int | None:
        spec = self.desired.vswitch
        if spec is not None and spec.name == name and spec.mtu is not None:
            return spec.mtu
        current = self.state.vswitch(name)
        return current.mtu if current else None

    # -- present -----------------------------------------------------------------------------

    def plan_present(self) -> None:
        vs_spec, pg_spec, vmk_spec = self.desired.vswitch, self.desired.portgroup, self.desired.vmknic
        cur_pg = self.state.portgroup(pg_spec.name) if pg_spec else None
        vs_name = vs_spec.name if vs_spec else (cur_pg.vswitch if cur_pg else None)
        if pg_spec and cur_pg and vs_spec and cur_pg.vswitch != vs_spec.name:
            self.reasons.append(
                f"port group {pg_spec.name} exists on vSwitch {cur_pg.vswitch}, not on {vs_spec.name}; moving a port "
                f"group between vSwitches is not supported: remove it (state: absent) and create it again"
            )
            return
        if pg_spec and cur_pg is None and vs_spec is None:
            self.reasons.append(f"port group {pg_spec.name} does not exist; give vswitch.name to create it")
            return
        if vs_spec is not None:
            self.plan_vswitch(vs_spec)
        if pg_spec is not None and vs_name is not None:
            self.plan_portgroup(pg_spec, cur_pg, vs_name)
        if vmk_spec is not None:
            self.plan_vmknic(vmk_spec, pg_spec)
        self.mtu_warnings()

    def mtu_warnings(self) -> None:
        """Warn where an adapter's MTU ends up above its vSwitch's (frames would be dropped)."""
        mtu_changed = {
            op.name for op in (*self.vswitch_early, *self.vswitch_late) if isinstance(op, UpdateVSwitch) and op.mtu
        }
        entries = [
            (v.device, v.mtu, v.portgroup, False)
            for v in self.state.vmknics
            if self.vmk_final is None or v.device != self.device
        ]
        if self.vmk_final is not None:
            entries.append(self.vmk_final)
        for label, mtu, portgroup, touched in entries:
            vswitch = self.vswitch_for(portgroup) if portgroup else None
            if vswitch is None or mtu is None or not (touched or vswitch in mtu_changed):
                continue
            vs_mtu = self.final_vswitch_mtu(vswitch)
            if vs_mtu is not None and mtu > vs_mtu:
                self.warnings.append(
                    f"{label} MTU {mtu} is above the MTU {vs_mtu} of vSwitch {vswitch}: frames above {vs_mtu} "
                    f"bytes will be dropped (raise vswitch.mtu or lower vmknic.mtu)"
                )

    def plan_vswitch(self, spec: VSwitchSpec) -> None:
        current = self.state.vswitch(spec.name)
        pg_names = [p.name for p in self.state.portgroups_on(spec.name)]
        pg_spec = self.desired.portgroup
        if pg_spec is not None and self.state.portgroup(pg_spec.name) is None:
            pg_names.append(pg_spec.name)
        if current is None:
            uplinks = spec.uplinks or ()
            self.check_uplinks(spec.name, uplinks)
            self.vswitch_early.append(AddVSwitch(spec.name, spec.mtu, uplinks))
            self.before["vswitch"] = None
            self.after["vswitch"] = {
                "name": spec.name,
                "mtu": spec.mtu,
                "uplinks": list(uplinks),
                "portgroups": sorted(pg_names),
            }
            return
        self.before["vswitch"] = _vswitch_view(current, (p.name for p in self.state.portgroups_on(spec.name)))
        mtu_change = spec.mtu is not None and spec.mtu != current.mtu
        uplinks_change = spec.uplinks is not None and set(spec.uplinks) != set(current.uplinks)
        if mtu_change or uplinks_change:
            self.guard_object("vswitch", spec.name, f"vSwitch {spec.name}")
        if uplinks_change and spec.uplinks is not None:
            self.check_uplinks(spec.name, spec.uplinks)
        mtu_up = mtu_change and (current.mtu is None or (spec.mtu or 0) > current.mtu)
        if mtu_up or uplinks_change:
            self.vswitch_early.append(
                UpdateVSwitch(spec.name, spec.mtu if mtu_up else None, spec.uplinks if uplinks_change else None)
            )
        if mtu_change and not mtu_up:
            self.vswitch_late.append(UpdateVSwitch(spec.name, mtu=spec.mtu))
        self.after["vswitch"] = {
            "name": spec.name,
            "mtu": spec.mtu if spec.mtu is not None else current.mtu,
            "uplinks": list(spec.uplinks if uplinks_change and spec.uplinks is not None else current.uplinks),
            "portgroups": sorted(pg_names),
        }

    def plan_portgroup(self, spec: PortGroupSpec, current: PortGroupState | None, vswitch: str) -> None:
        if current is None:
            self.portgroup_ops.append(AddPortGroup(spec.name, vswitch, spec.vlan_id or 0))
            self.before["portgroup"] = None
            self.after["portgroup"] = {"name": spec.name, "vswitch": vswitch, "vlan_id": spec.vlan_id or 0}
            return
        self.before["portgroup"] = _portgroup_view(current)
        if spec.vlan_id is not None and spec.vlan_id != current.vlan_id:
            self.guard_object("portgroup", spec.name, f"Port group {spec.name}")
            self.portgroup_ops.append(UpdatePortGroup(spec.name, spec.vlan_id))
        self.after["portgroup"] = {
            "name": spec.name,
            "vswitch": current.vswitch,
            "vlan_id": spec.vlan_id if spec.vlan_id is not None else current.vlan_id,
        }

    def find_vmknic(self, spec: VmknicSpec, pg_spec: PortGroupSpec | None) -> tuple[bool, VmknicState | None]:
        """Return (ok, adapter); ok False when the request cannot name an adapter."""
        if spec.device:
            current = self.state.vmknic(spec.device)
            if current is None and self.desired.state == "present":
                self.reasons.append(
                    f"VMkernel adapter {spec.device} does not exist. The vSphere API picks the device name when it "
                    f"creates an adapter: leave vmknic.device out to create one on portgroup.name (it is then found "
                    f"by its port group)"
                )
                return False, None
            return True, current
        if pg_spec is None:
            self.reasons.append("vmknic needs vmknic.device or portgroup.name (the port group the adapter is on)")
            return False, None
        on_pg = self.state.vmknics_on(pg_spec.name)
        if len(on_pg) > 1:
            self.reasons.append(
                f"port group {pg_spec.name} has several VMkernel adapters ({', '.join(v.device for v in on_pg)}); "
                f"name one with vmknic.device"
            )
            return False, None
        return True, (on_pg[0] if on_pg else None)

    def ipv6_change(self, want: Ipv6Spec | None, current: Ipv6State | None, device: str) -> Ipv6Change | None:
        if want is None:
            return None
        have_all = {(a.address, a.prefix_length) for a in (current.addresses if current else ())}
        have_manual = {a.text for a in (current.manual if current else ())}
        add: tuple[str, ...] = ()
        remove: tuple[str, ...] = ()
        if want.addresses is not None:
            add = tuple(a for a in want.addresses if split_v6(a) not in have_all)
            remove = tuple(sorted(have_manual - set(want.addresses)))
        autoconf_change = want.autoconf is not None and (current is None or want.autoconf != current.autoconf)
        dhcp_change = want.dhcp is not None and (current is None or want.dhcp != current.dhcp)
        if not (add or remove or autoconf_change or dhcp_change):
            return None
        if (add or want.autoconf or want.dhcp) and self.state.ipv6_enabled is False:
            self.reasons.append(
                f"{device}: IPv6 is disabled on this host (networkInfo.ipV6Enabled is false); enable IPv6 on the host "
                f"(it takes a reboot) before configuring IPv6 addresses"
            )
        return Ipv6Change(
            add=add,
            remove=remove,
            autoconf=want.autoconf if want.autoconf is not None else (current.autoconf if current else None),
            dhcp=want.dhcp if want.dhcp is not None else (current.dhcp if current else None),
        )

    def plan_vmknic(self, spec: VmknicSpec, pg_spec: PortGroupSpec | None) -> None:
        ok, current = self.find_vmknic(spec, pg_spec)
        if not ok:
            return
        target_pg = pg_spec.name if pg_spec else None
        if current is None:
            self.plan_new_vmknic(spec, target_pg)
        else:
            self.device = current.device
            self.plan_existing_vmknic(spec, current, target_pg)

    def desired_services(self, spec: VmknicSpec, stack: str, device: str) -> None:
        if spec.services and stack != DEFAULT_STACK:
            self.reasons.append(
                f"{device}: services can be tagged only on the default TCP/IP stack, not on {stack} "
                f"(drop vmknic.services or use tcpip_stack: default)"
            )

    def plan_new_vmknic(self, spec: VmknicSpec, portgroup: str | None) -> None:
        if portgroup is None:  # find_vmknic made sure there is a port group or a device
            return
        self.guard_object("portgroup", portgroup, f"Port group {portgroup}")
        if spec.ip_address is not None:
            ipv4 = Ipv4Config(False, spec.ip_address, spec.netmask)
        elif spec.dhcp:
            ipv4 = Ipv4Config(True)
        else:
            self.reasons.append(
                f"creating a VMkernel adapter on port group {portgroup} needs an IPv4 configuration: "
                f"vmknic.ip_address with vmknic.netmask, or vmknic.dhcp: true"
            )
            return
        stack = spec.tcpip_stack or DEFAULT_STACK
        self.check_stack(spec.tcpip_stack, "the new adapter")
        ipv6 = self.ipv6_change(spec.ipv6, None, "the new adapter")
        self.desired_services(spec, stack, "the new adapter")
        self.vmknic_ops.append(AddVmknic(portgroup, ipv4, ipv6, spec.mtu, spec.tcpip_stack))
        for nic_type in spec.services or ():
            self.service_ops.append(SelectService(None, nic_type))
        self.vmk_final = ("the new adapter", spec.mtu, portgroup, True)
        self.before["vmknic"] = None
        self.after["vmknic"] = {
            "device": None,
            "portgroup": portgroup,
            "distributed": False,
            "mtu": spec.mtu,
            "tcpip_stack": stack,
            "ipv4": ipv4.as_dict(),
            "ipv6": _ipv6_after(None, ipv6),
            "services": _service_tags(spec.services or ()),
        }

    def vswitch_for(self, portgroup: str) -> str | None:
        current = self.state.portgroup(portgroup)
        if current is not None:
            return current.vswitch
        return self.desired.vswitch.name if self.desired.vswitch else None

    def plan_existing_vmknic(self, spec: VmknicSpec, current: VmknicState, target_pg: str | None) -> None:
        services = self.state.services_of(current.device)
        self.before["vmknic"] = {k: v for k, v in _vmknic_view(current, services).items() if k != "mac"}
        device = current.device
        changes: list[str] = []

        # IPv4: static address, DHCP, or left as it is.
        ipv4 = Ipv4Config(current.dhcp, current.ip_address, current.netmask)
        if spec.ip_address is not None:
            want = Ipv4Config(False, spec.ip_address, spec.netmask)
            if current.dhcp or (current.ip_address, current.netmask) != (spec.ip_address, spec.netmask):
                changes.append(f"IPv4 {_ipv4_text(ipv4)} -> {_ipv4_text(want)}")
                ipv4 = want
        elif spec.dhcp and not current.dhcp:
            changes.append(f"IPv4 {_ipv4_text(ipv4)} -> dhcp")
            ipv4 = Ipv4Config(True)

        mtu = current.mtu
        if spec.mtu is not None and spec.mtu != current.mtu:
            changes.append(f"MTU {current.mtu} -> {spec.mtu}")
            mtu = spec.mtu

        move: str | None = None
        if target_pg is not None and target_pg != current.portgroup:
            if current.distributed:
                self.reasons.append(
                    f"{device} is on a distributed or opaque switch; moving it to standard port group {target_pg} is "
                    f"not supported by this module"
                )
                return
            occupied = [v.device for v in self.state.vmknics_on(target_pg) if v.device != device]
            if occupied:
                self.reasons.append(
                    f"{device} cannot move to port group {target_pg}: {', '.join(occupied)} is already on it "
                    f"(a standard port group holds one VMkernel adapter)"
                )
                return
            changes.append(f"port group {current.portgroup} -> {target_pg}")
            move = target_pg
            for name in (current.portgroup, target_pg):
                if name is not None:
                    self.guard_object("portgroup", name, f"Port group {name}")

        ipv6 = self.ipv6_change(spec.ipv6, current.ipv6, device)
        if ipv6 is not None:
            changes.append("IPv6 " + ", ".join(_ipv6_change_text(ipv6, current.ipv6)))

        want_stack = spec.tcpip_stack
        stack_change = want_stack is not None and want_stack != current.stack
        final_stack = want_stack if want_stack is not None else current.stack
        self.desired_services(spec, final_stack, device)

        select: list[str] = []
        deselect: list[str] = []
        if spec.services is not None:
            if services is None:
                self.reasons.append(
                    f"{device}: the service tags could not be read from the host (HostVirtualNicManager), so "
                    f"vmknic.services cannot be checked; leave it out"
                )
            else:
                select = sorted(set(spec.services) - services)
                deselect = sorted(services - set(spec.services))
                if select or deselect:
                    changes.append(f"services {_service_tags(services)} -> {_service_tags(spec.services)}")

        if changes or stack_change:
            if device in self.scope.vmknics:
                self.guard_object("vmknic", device, f"VMkernel adapter {device}")
            elif current.portgroup is not None and current.portgroup in self.scope.portgroups and move is None:
                pg_name = current.portgroup
                unsure = self.scope.is_uncertain("portgroup", pg_name)
                self.guard(
                    f"VMkernel adapter {device}",
                    f"on port group {pg_name}: {self.scope.reason('portgroup', pg_name)}"
                    if unsure
                    else f"on management port group {pg_name}",
                    uncertain=unsure,
                )

        final_pg = move or current.portgroup
        self.vmk_final = (device, mtu, final_pg, spec.mtu is not None or move is not None)

        if stack_change:
            if not self.check_stack(want_stack, device):
                return
            if not self.desired.recreate:
                self.reasons.append(
                    f"{device} is on TCP/IP stack {current.stack}, wanted {want_stack}: the stack of an existing "
                    f"VMkernel adapter cannot be changed in place. Set recreate: true to remove and re-create it "
                    f"(its connections drop, and the device name may change)"
                )
                return
            if final_pg is None:
                self.reasons.append(f"{device} is not on a standard port group; re-creating it is not supported")
                return
            self.plan_recreate(current, final_pg, ipv4, mtu, spec, final_stack, services)
            return

        if ipv4 != Ipv4Config(current.dhcp, current.ip_address, current.netmask) or mtu != current.mtu or move or ipv6:
            self.vmknic_ops.append(
                UpdateVmknic(
                    device,
                    ipv4,
                    mtu,
                    move,
                    ipv6,
                    tuple(c for c in changes if not c.startswith("services")),
                )
            )
        self.service_ops.extend(SelectService(device, t) for t in select)
        self.service_ops.extend(DeselectService(device, t) for t in deselect)
        self.after["vmknic"] = {
            **self.before["vmknic"],
            "portgroup": final_pg,
            "mtu": mtu,
            "ipv4": ipv4.as_dict(),
            "ipv6": _ipv6_after(current.ipv6, ipv6),
            "services": _service_tags(spec.services) if spec.services is not None else _service_tags(services),
        }

    def plan_recreate(
        self,
        current: VmknicState,
        portgroup: str,
        ipv4: Ipv4Config,
        mtu: int | None,
        spec: VmknicSpec,
        stack: str,
        services: frozenset[str] | None,
    ) -> None:
        device = current.device
        if ipv4.dhcp is False and ipv4.address is None:
            self.reasons.append(f"{device} has no IPv4 address to carry over; give vmknic.ip_address and netmask")
            return
        # Carry every IPv6 address the user manages (desired list, else the current manual ones).
        manual = [a.text for a in (current.ipv6.manual if current.ipv6 else ())]
        want6 = spec.ipv6 or Ipv6Spec()
        adds = tuple(want6.addresses if want6.addresses is not None else manual)
        autoconf = want6.autoconf if want6.autoconf is not None else (current.ipv6.autoconf if current.ipv6 else None)
        dhcp6 = want6.dhcp if want6.dhcp is not None else (current.ipv6.dhcp if current.ipv6 else None)
        ipv6 = Ipv6Change(add=adds, autoconf=autoconf, dhcp=dhcp6) if (adds or autoconf or dhcp6) else None
        keep = tuple(spec.services) if spec.services is not None else tuple(sorted(services or ()))
        if stack != DEFAULT_STACK and keep and spec.services is None:
            self.warnings.append(
                f"{device} had services {_service_tags(keep)}; they are not re-applied on TCP/IP stack {stack}, "
                f"which cannot carry service tags"
            )
            keep = ()
        self.vmknic_ops.append(RemoveVmknic(device))
        self.vmknic_ops.append(AddVmknic(portgroup, ipv4, ipv6, mtu, stack))
        self.service_ops.extend(SelectService(None, t) for t in keep)
        self.warnings.append(
            f"{device} is re-created on TCP/IP stack {stack}; the vSphere API picks the new device name, which is "
            f"returned in vmknic.device"
        )
        self.after["vmknic"] = {
            **self.before["vmknic"],
            "device": None,
            "portgroup": portgroup,
            "mtu": mtu,
            "tcpip_stack": stack,
            "ipv4": ipv4.as_dict(),
            "ipv6": _ipv6_after(None, ipv6),
            "services": _service_tags(keep),
        }

    # -- absent ------------------------------------------------------------------------------

    def plan_absent(self) -> None:
        vs_spec, pg_spec, vmk_spec = self.desired.vswitch, self.desired.portgroup, self.desired.vmknic
        removed_vmks: set[str] = set()
        if vmk_spec is not None:
            if vmk_spec.device:
                targets = [v] if (v := self.state.vmknic(vmk_spec.device)) is not None else []
            elif pg_spec is not None:
                targets = list(self.state.vmknics_on(pg_spec.name))
            else:
                self.reasons.append("vmknic needs vmknic.device or portgroup.name to say which adapter to remove")
                targets = []
            for vmk in targets:
                self.guard_object("vmknic", vmk.device, f"VMkernel adapter {vmk.device}")
                self.removals.append(RemoveVmknic(vmk.device))
                removed_vmks.add(vmk.device)
            first = targets[0] if targets else None
            self.device = first.device if first else None
            self.before["vmknic"] = (
                {k: v for k, v in _vmknic_view(first, self.state.services_of(first.device)).items() if k != "mac"}
                if first
                else None
            )
            self.after["vmknic"] = None

        removed_pgs: set[str] = set()
        if pg_spec is not None:
            current_pg = self.state.portgroup(pg_spec.name)
            self.before["portgroup"] = _portgroup_view(current_pg) if current_pg else None
            self.after["portgroup"] = None
            if current_pg is not None:
                self.guard_object("portgroup", current_pg.name, f"Port group {current_pg.name}")
                left = [v.device for v in self.state.vmknics_on(current_pg.name) if v.device not in removed_vmks]
                if left:
                    self.reasons.append(
                        f"port group {current_pg.name} still has VMkernel adapter(s) {', '.join(left)}; name the "
                        f"adapter in vmknic (vmknic.device) to remove it as well"
                    )
                if current_pg.vm_ports:
                    self.reasons.append(
                        f"port group {current_pg.name} is in use by {current_pg.vm_ports} virtual machine port(s); "
                        f"move those VMs to another network first"
                    )
                self.removals.append(RemovePortGroup(current_pg.name))
                removed_pgs.add(current_pg.name)

        if vs_spec is not None:
            current_vs = self.state.vswitch(vs_spec.name)
            self.before["vswitch"] = (
                _vswitch_view(current_vs, (p.name for p in self.state.portgroups_on(current_vs.name)))
                if current_vs
                else None
            )
            self.after["vswitch"] = None
            if current_vs is not None:
                self.guard_object("vswitch", current_vs.name, f"vSwitch {current_vs.name}")
                others = [p.name for p in self.state.portgroups_on(current_vs.name) if p.name not in removed_pgs]
                if others:
                    self.reasons.append(
                        f"vSwitch {current_vs.name} still carries port group(s) {', '.join(others)}; it is removed "
                        f"only when empty (remove those port groups first, or leave vswitch out)"
                    )
                self.removals.append(RemoveVSwitch(current_vs.name))


def split_v6(text: str) -> tuple[str, int]:
    """Split ``"2001:db8::1/64"`` into ``("2001:db8::1", 64)``."""
    address, prefix = text.split("/", 1)
    return address, int(prefix)


def _ipv4_text(config: Ipv4Config) -> str:
    if config.dhcp:
        return "dhcp"
    return f"{config.address}/{config.netmask}" if config.address else "none"


def _ipv6_change_text(change: Ipv6Change, current: Ipv6State | None) -> list[str]:
    parts = [f"+{a}" for a in change.add] + [f"-{a}" for a in change.remove]
    if change.autoconf is not None and (current is None or change.autoconf != current.autoconf):
        parts.append(f"autoconf {change.autoconf}")
    if change.dhcp is not None and (current is None or change.dhcp != current.dhcp):
        parts.append(f"dhcp {change.dhcp}")
    return parts


def _ipv6_after(current: Ipv6State | None, change: Ipv6Change | None) -> dict[str, Any] | None:
    if change is None:
        return _ipv6_view(current)
    manual = [a.text for a in (current.manual if current else ()) if a.text not in change.remove]
    manual += [a for a in change.add if a not in manual]
    return {
        "addresses": manual,
        "other_addresses": [a.text for a in (current.addresses if current else ()) if a.origin != "manual"],
        "autoconf": change.autoconf,
        "dhcp": change.dhcp,
    }


def make_plan(state: HostNetworkState, desired: DesiredState) -> Plan:
    """Compute the ordered operations that take ``state`` to ``desired``.

    Raises :class:`PlanError` listing every refusal (management guard, immutable stack, objects
    still in use, ambiguous or missing objects). An empty ``ops`` means nothing to change.
    """
    planner = _Planner(state, desired, management_scope(state))
    if desired.state == "absent":
        planner.plan_absent()
    else:
        planner.plan_present()
    if planner.reasons:
        raise PlanError(list(dict.fromkeys(planner.reasons)))
    ops = planner.ops()
    after = planner.after if ops else dict(planner.before)
    return Plan(ops, planner.before, after, tuple(dict.fromkeys(planner.warnings)), planner.device)


def replace_device(op: Op, device: str) -> Op:
    """Return ``op`` with the new adapter's device filled in (for SelectService on a new vmk)."""
    if isinstance(op, SelectService) and op.device is None:
        return replace(op, device=device)
    return op
