# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Current state of an ESXi host's VMkernel networking, read from the vSphere API (``esxi_vmknic``).

:func:`read_network_state` turns what the vSphere API returned (``HostNetworkSystem.networkInfo``,
``HostVirtualNicManager.info.netConfig``) into plain frozen dataclasses. It only reads
attributes, so it works on real pyVmomi data objects and on test doubles. Also the names every
other ``_vmknic_*`` file shares: the management defaults, TCP/IP stacks, service tags, ``MTU_MAX``
and :class:`PlanError`.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_policy import Policy, read_policy

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
SERVICE_TAGS: Final[Mapping[str, str]] = {nic_type: tag for tag, nic_type in SERVICES.items()}

MTU_MAX: Final = 9000  # the largest MTU a standard vSwitch or VMkernel adapter accepts
_PNIC_KEY_PREFIX: Final = "key-vim.host.PhysicalNic-"


class PlanError(ValueError):
    """The request cannot be carried out as given; ``reasons`` holds every problem found."""

    def __init__(self, reasons: Sequence[str]) -> None:
        self.reasons: tuple[str, ...] = tuple(reasons)
        super().__init__("; ".join(self.reasons))


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
    policy: Policy = field(default_factory=Policy)  # spec.policy: security, teaming


@dataclass(frozen=True)
class PortGroupState:
    name: str
    vswitch: str
    vlan_id: int
    port_types: tuple[str, ...] = ()  # HostPortGroupPort.type of every connected port
    policy: Policy = field(default_factory=Policy)  # spec.policy: the overrides (None: inherited from the vSwitch)

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


def str_or_none(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _int(value: Any) -> int | None:
    return None if value is None or isinstance(value, bool) else int(value)


def _positive(value: Any) -> int | None:
    number = _int(value)
    return number if number is not None and number > 0 else None


def bool_or_none(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _items(value: Any) -> list[Any]:
    return list(value) if value else []


def _norm_v6(address: str) -> str:
    return ipaddress.IPv6Address(address.split("%", 1)[0]).compressed


def _read_ipv6(config: Any) -> Ipv6State | None:
    if config is None:
        return None
    addresses = tuple(
        Ipv6Address(_norm_v6(str(a.ipAddress)), int(a.prefixLength), str_or_none(getattr(a, "origin", None)))
        for a in _items(getattr(config, "ipV6Address", None))
        if getattr(a, "ipAddress", None)
    )
    return Ipv6State(
        addresses=addresses,
        autoconf=bool_or_none(getattr(config, "autoConfigurationEnabled", None)),
        dhcp=bool_or_none(getattr(config, "dhcpV6Enabled", None)),
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
        policy=read_policy(getattr(spec, "policy", None)),
    )


def _read_portgroup(portgroup: Any) -> PortGroupState:
    spec = portgroup.spec
    return PortGroupState(
        name=str(spec.name),
        vswitch=str(spec.vswitchName),
        vlan_id=int(spec.vlanId or 0),
        port_types=tuple(str(p.type) for p in _items(getattr(portgroup, "port", None))),
        policy=read_policy(getattr(spec, "policy", None)),
    )


def _read_vmknic(vnic: Any) -> VmknicState:
    spec = vnic.spec
    ip = getattr(spec, "ip", None)
    portgroup = str_or_none(getattr(vnic, "portgroup", None)) or str_or_none(getattr(spec, "portgroup", None))
    dv_port = getattr(spec, "distributedVirtualPort", None)
    distributed = dv_port is not None or getattr(spec, "opaqueNetwork", None) is not None
    return VmknicState(
        device=str(vnic.device),
        portgroup=None if distributed else portgroup,
        mtu=_positive(getattr(spec, "mtu", None)),
        tcpip_stack=str_or_none(getattr(spec, "netStackInstanceKey", None)),
        dhcp=bool(getattr(ip, "dhcp", False)),
        ip_address=str_or_none(getattr(ip, "ipAddress", None)),
        netmask=str_or_none(getattr(ip, "subnetMask", None)),
        ipv6=_read_ipv6(getattr(ip, "ipV6Config", None)),
        mac=str_or_none(getattr(spec, "mac", None)),
        distributed=distributed,
        switch_uuid=str_or_none(getattr(dv_port, "switchUuid", None)),
    )


def _read_pnic(pnic: Any) -> PnicState:
    link = getattr(pnic, "linkSpeed", None)
    duplex: Literal["full", "half"] | None = None
    if link is not None:
        duplex = "full" if getattr(link, "duplex", False) else "half"
    return PnicState(
        device=str(pnic.device),
        driver=str_or_none(getattr(pnic, "driver", None)),
        mac=str_or_none(getattr(pnic, "mac", None)),
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
    uuid = str_or_none(getattr(proxy, "dvsUuid", None))
    name = str_or_none(getattr(proxy, "dvsName", None)) or uuid or str(getattr(proxy, "key", "?"))
    return DistributedSwitchState(name=name, uuid=uuid, uplinks=tuple(dict.fromkeys(devices)))


def _read_opaque_switch(switch: Any, pnic_by_key: Mapping[str, str]) -> DistributedSwitchState:
    name = str_or_none(getattr(switch, "name", None)) or str(getattr(switch, "key", "?"))
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
        ipv6_enabled=bool_or_none(getattr(network_info, "ipV6Enabled", None)),
        other_switches=tuple(others),
        services_error=None if net_configs is not None else services_error,
        netstacks=tuple(stacks) or None,
    )
