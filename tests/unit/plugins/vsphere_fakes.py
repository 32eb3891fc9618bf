# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Recording fakes of ``HostNetworkSystem`` and ``HostVirtualNicManager`` over real pyVmomi data.

The fakes hold a real ``vim.host.NetworkInfo`` built from real pyVmomi data objects and change
it the way the vSphere API documentation says the host does (not the way the module under test
expects). That covers the traps: ``UpdateVirtualSwitch`` with no ``bridge`` detaches every
uplink, ``UpdateVirtualNic`` without an IP configuration is refused, a port group holds one
VMkernel adapter, removals of objects in use fail with ``ResourceInUse``. Every call is
recorded, with the spec objects it was given, in the shared ``calls`` list.

The lab host built by :func:`lab_host` (documentation addresses only, RFC 5737 / RFC 3849):

* vSwitch0 (MTU 1500, uplink vmnic0): "Management Network" with vmk0 (192.0.2.10/24, tagged
  management), "VM Network" (one VM port);
* vSwitch1 (MTU 1500, uplinks vmnic1 + vmnic2, vmnic2 standby): "iperf" (VLAN 30) with vmk1
  (198.51.100.21/24, tagged vmotion, IPv6 2001:db8:30::21/64 static + a link-local address);
* vmnic3 unused with its link down;
* TCP/IP stacks defaultTcpipStack, vmotion and vSphereProvisioning.

:func:`join_dvs` makes the host a member of a vSphere Distributed Switch (a real
``HostProxySwitch``) and can move an adapter onto it, the way a host managed by vCenter looks.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from pyVmomi import vim, vmodl

HOST_NAME = "esxi01.lab.example"


def new(data_type: Any, **properties: Any) -> Any:
    """Build a pyVmomi data object (its constructors are untyped)."""
    return data_type(**properties)


@dataclass
class Call:
    method: str
    args: dict[str, Any]


@dataclass
class Recorder:
    calls: list[Call] = field(default_factory=list)

    def record(self, method: str, **args: Any) -> None:
        # Keep a copy: the caller must not be able to change what was sent afterwards.
        self.calls.append(Call(method, copy.deepcopy(args)))

    def methods(self) -> list[str]:
        return [c.method for c in self.calls]

    def of(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]


def fault(kind: str, message: str) -> Exception:
    """A real vim/vmodl fault object, raisable like the ones pyVmomi deserializes."""
    module, name = kind.rsplit(".", 1)
    owner = vim.fault if module == "vim.fault" else vmodl.fault
    error: Exception = getattr(owner, name)(msg=message)
    return error


def policy(active: list[str], standby: list[str] | None = None) -> Any:
    return new(
        vim.host.NetworkPolicy,
        security=new(vim.host.NetworkPolicy.SecurityPolicy, allowPromiscuous=False, macChanges=False),
        nicTeaming=new(
            vim.host.NetworkPolicy.NicTeamingPolicy,
            policy="loadbalance_srcid",
            notifySwitches=True,
            rollingOrder=False,
            nicOrder=new(vim.host.NetworkPolicy.NicOrderPolicy, activeNic=active, standbyNic=standby or []),
        ),
    )


def pnic(device: str, mac: str, speed: int | None, driver: str = "ixgben", duplex: bool = True) -> Any:
    link = None if speed is None else new(vim.host.PhysicalNic.LinkSpeedDuplex, speedMb=speed, duplex=duplex)
    return new(
        vim.host.PhysicalNic,
        key=f"key-vim.host.PhysicalNic-{device}",
        device=device,
        pci="0000:00:00.0",
        driver=driver,
        linkSpeed=link,
        mac=mac,
        wakeOnLanSupported=False,
        spec=new(vim.host.PhysicalNic.Specification),
    )


def vswitch(name: str, mtu: int | None, uplinks: list[str], standby: list[str] | None = None) -> Any:
    active = [u for u in uplinks if u not in (standby or [])]
    bridge = new(vim.host.VirtualSwitch.BondBridge, nicDevice=uplinks) if uplinks else None
    spec = new(vim.host.VirtualSwitch.Specification, numPorts=128, bridge=bridge, policy=policy(active, standby))
    if mtu is not None:
        spec.mtu = mtu
    return new(
        vim.host.VirtualSwitch,
        name=name,
        key=f"key-vim.host.VirtualSwitch-{name}",
        numPorts=128,
        numPortsAvailable=120,
        mtu=mtu,
        portgroup=[],
        pnic=[f"key-vim.host.PhysicalNic-{u}" for u in uplinks],
        spec=spec,
    )


def portgroup(name: str, vswitch_name: str, vlan: int = 0, ports: list[str] | None = None) -> Any:
    return new(
        vim.host.PortGroup,
        key=f"key-vim.host.PortGroup-{name}",
        port=[new(vim.host.PortGroup.Port, key=f"port-{i}", type=t) for i, t in enumerate(ports or [])],
        vswitch=f"key-vim.host.VirtualSwitch-{vswitch_name}",
        computedPolicy=new(vim.host.NetworkPolicy),
        spec=new(
            vim.host.PortGroup.Specification,
            name=name,
            vlanId=vlan,
            vswitchName=vswitch_name,
            policy=new(vim.host.NetworkPolicy),
        ),
    )


def ipv6_config(static: list[str], link_local: str | None = None, autoconf: bool = False, dhcp: bool = False) -> Any:
    addresses = []
    for text in static:
        address, prefix = text.split("/", 1)
        addresses.append(
            new(vim.host.IpConfig.IpV6Address, ipAddress=address, prefixLength=int(prefix), origin="manual")
        )
    if link_local:
        address, prefix = link_local.split("/", 1)
        addresses.append(
            new(vim.host.IpConfig.IpV6Address, ipAddress=address, prefixLength=int(prefix), origin="linklayer")
        )
    return new(
        vim.host.IpConfig.IpV6AddressConfiguration,
        ipV6Address=addresses,
        autoConfigurationEnabled=autoconf,
        dhcpV6Enabled=dhcp,
    )


def vmknic(
    device: str,
    portgroup_name: str,
    address: str | None,
    netmask: str | None,
    mtu: int = 1500,
    stack: str = "defaultTcpipStack",
    ipv6: Any = None,
) -> Any:
    ip = new(vim.host.IpConfig, dhcp=address is None, ipAddress=address, subnetMask=netmask, ipV6Config=ipv6)
    return new(
        vim.host.VirtualNic,
        device=device,
        key=f"key-vim.host.VirtualNic-{device}",
        portgroup=portgroup_name,
        spec=new(
            vim.host.VirtualNic.Specification,
            ip=ip,
            mac=f"00:50:56:6a:00:{int(device[3:]):02x}",
            portgroup=portgroup_name,
            mtu=mtu,
            netStackInstanceKey=stack,
        ),
    )


def netstack(key: str) -> Any:
    return new(vim.host.NetStackInstance, key=key, name=key)


def proxy_switch(name: str, uuid: str, uplinks: list[str], *, in_spec: bool = True, bridged: bool = True) -> Any:
    """A ``HostProxySwitch`` (the host's side of a vDS): uplinks in ``spec.backing.pnicSpec``
    (``in_spec``) and/or in ``pnic`` as PhysicalNic keys (``bridged``)."""
    specs = [
        new(vim.dvs.HostMember.PnicSpec, pnicDevice=u, uplinkPortKey=str(i), uplinkPortgroupKey="dvportgroup-up")
        for i, u in enumerate(uplinks)
    ]
    return new(
        vim.host.HostProxySwitch,
        dvsUuid=uuid,
        dvsName=name,
        key=f"key-vim.host.ProxySwitch-{uuid}",
        numPorts=512,
        numPortsAvailable=500,
        mtu=1500,
        pnic=[f"key-vim.host.PhysicalNic-{u}" for u in uplinks] if bridged else [],
        spec=new(
            vim.host.HostProxySwitch.Specification,
            backing=new(vim.dvs.HostMember.PnicBacking, pnicSpec=specs if in_spec else []),
        ),
    )


def join_dvs(
    host: FakeHost, name: str, uuid: str, uplinks: list[str], *, move: str | None = None, **kwargs: Any
) -> None:
    """Make ``host`` a member of distributed switch ``name`` with ``uplinks``; ``move`` puts that
    adapter on one of its ports (off its standard port group, which stays)."""
    info = host.network_system.networkInfo
    info.proxySwitch = [*(info.proxySwitch or []), proxy_switch(name, uuid, uplinks, **kwargs)]
    for vnic in info.vnic:
        if vnic.device == move:
            vnic.portgroup = ""
            vnic.spec.portgroup = None
            vnic.spec.distributedVirtualPort = new(
                vim.dvs.PortConnection, switchUuid=uuid, portgroupKey="dvportgroup-mgmt", portKey="10"
            )
            for pg in info.portgroup:
                pg.port = [p for p in pg.port if not (pg.spec.name == "Management Network" and p.type == "host")]


def lab_network_info() -> Any:
    info = new(vim.host.NetworkInfo, ipV6Enabled=True, atBootIpV6Enabled=True)
    info.netStackInstance = [netstack(k) for k in ("defaultTcpipStack", "vmotion", "vSphereProvisioning")]
    info.pnic = [
        pnic("vmnic0", "00:30:93:0c:05:c0", 1000, driver="ntg3"),
        pnic("vmnic1", "00:30:93:0c:05:c6", 10000),
        pnic("vmnic2", "00:30:93:0c:05:c7", 10000),
        pnic("vmnic3", "00:30:93:0c:05:c8", None, duplex=False),
    ]
    vs0 = vswitch("vSwitch0", 1500, ["vmnic0"])
    vs1 = vswitch("vSwitch1", 1500, ["vmnic1", "vmnic2"], standby=["vmnic2"])
    info.vswitch = [vs0, vs1]
    info.portgroup = [
        portgroup("Management Network", "vSwitch0", 0, ["host"]),
        portgroup("VM Network", "vSwitch0", 0, ["virtualMachine"]),
        portgroup("iperf", "vSwitch1", 30, ["host"]),
    ]
    vs0.portgroup = ["key-vim.host.PortGroup-Management Network", "key-vim.host.PortGroup-VM Network"]
    vs1.portgroup = ["key-vim.host.PortGroup-iperf"]
    info.vnic = [
        vmknic("vmk0", "Management Network", "192.0.2.10", "255.255.255.0"),
        vmknic(
            "vmk1",
            "iperf",
            "198.51.100.21",
            "255.255.255.0",
            ipv6=ipv6_config(["2001:db8:30::21/64"], link_local="fe80::250:56ff:fe6a:1/64"),
        ),
    ]
    return info


class FakeNetworkSystem:
    """``HostNetworkSystem`` over a real ``vim.host.NetworkInfo``, changed as the host would."""

    def __init__(self, info: Any, recorder: Recorder, *, ignore_mtu: bool = False) -> None:
        self.networkInfo = info
        self.recorder = recorder
        self.ignore_mtu = ignore_mtu  # behave like govmomi's simulator: accept the spec, drop the MTU
        self.fail_on: dict[str, Exception] = {}

    # -- lookups -------------------------------------------------------------------------------

    def _vswitch(self, name: str) -> Any:
        for item in self.networkInfo.vswitch:
            if item.name == name:
                return item
        raise fault("vim.fault.NotFound", f"vSwitch {name} not found")

    def _portgroup(self, name: str) -> Any:
        for item in self.networkInfo.portgroup:
            if item.spec.name == name:
                return item
        raise fault("vim.fault.NotFound", f"port group {name} not found")

    def _vnic(self, device: str) -> Any:
        for item in self.networkInfo.vnic:
            if item.device == device:
                return item
        raise fault("vim.fault.NotFound", f"{device} not found")

    def _check(self, method: str) -> None:
        if method in self.fail_on:
            raise self.fail_on[method]

    def _claim_uplinks(self, name: str, bridge: Any) -> list[str]:
        nics = list(getattr(bridge, "nicDevice", None) or [])
        for proxy in self.networkInfo.proxySwitch or []:
            if set(nics) & {p.pnicDevice for p in proxy.spec.backing.pnicSpec}:
                raise fault("vim.fault.ResourceInUse", f"uplink already used by distributed switch {proxy.dvsName}")
        for other in self.networkInfo.vswitch:
            if other.name != name and set(nics) & set(other.spec.bridge.nicDevice if other.spec.bridge else []):
                raise fault("vim.fault.ResourceInUse", f"uplink already used by {other.name}")
        return nics

    # -- vSwitch -------------------------------------------------------------------------------

    def AddVirtualSwitch(self, vswitchName: str, spec: Any = None) -> None:
        self.recorder.record("AddVirtualSwitch", vswitchName=vswitchName, spec=spec)
        self._check("AddVirtualSwitch")
        if any(v.name == vswitchName for v in self.networkInfo.vswitch):
            raise fault("vim.fault.AlreadyExists", vswitchName)
        nics = self._claim_uplinks(vswitchName, spec.bridge if spec else None)
        mtu = None if self.ignore_mtu else (spec.mtu if spec and spec.mtu else 1500)
        created = vswitch(vswitchName, mtu, nics)
        # The default policy of a new vSwitch (no policy in the spec) lists no NIC order here, so
        # the module's "make the uplinks active" follow-up call is exercised.
        created.spec.policy.nicTeaming.nicOrder.activeNic = []
        self.networkInfo.vswitch = [*self.networkInfo.vswitch, created]

    def UpdateVirtualSwitch(self, vswitchName: str, spec: Any) -> None:
        self.recorder.record("UpdateVirtualSwitch", vswitchName=vswitchName, spec=spec)
        self._check("UpdateVirtualSwitch")
        current = self._vswitch(vswitchName)
        nics = self._claim_uplinks(vswitchName, spec.bridge)  # bridge None: every uplink detached
        old_policy = current.spec.policy
        current.spec = copy.deepcopy(spec)
        if spec.policy is None:  # "the policy will be unchanged"
            current.spec.policy = old_policy
        order = current.spec.policy.nicTeaming.nicOrder
        order.activeNic = [n for n in order.activeNic if n in nics]  # removed NICs leave the order
        order.standbyNic = [n for n in order.standbyNic if n in nics]
        if spec.mtu and not self.ignore_mtu:
            current.mtu = spec.mtu
        current.spec.mtu = current.mtu
        current.pnic = [f"key-vim.host.PhysicalNic-{n}" for n in nics]

    def RemoveVirtualSwitch(self, vswitchName: str) -> None:
        self.recorder.record("RemoveVirtualSwitch", vswitchName=vswitchName)
        self._check("RemoveVirtualSwitch")
        self._vswitch(vswitchName)
        pgs = [p for p in self.networkInfo.portgroup if p.spec.vswitchName == vswitchName]
        if any(v.portgroup in {p.spec.name for p in pgs} for v in self.networkInfo.vnic):
            raise fault("vim.fault.ResourceInUse", f"{vswitchName} has VMkernel adapters")
        self.networkInfo.portgroup = [p for p in self.networkInfo.portgroup if p not in pgs]
        self.networkInfo.vswitch = [v for v in self.networkInfo.vswitch if v.name != vswitchName]

    # -- port groups ---------------------------------------------------------------------------

    def AddPortGroup(self, portgrp: Any) -> None:
        self.recorder.record("AddPortGroup", portgrp=portgrp)
        self._check("AddPortGroup")
        if any(p.spec.name == portgrp.name for p in self.networkInfo.portgroup):
            raise fault("vim.fault.AlreadyExists", portgrp.name)
        owner = self._vswitch(portgrp.vswitchName)
        if not 0 <= portgrp.vlanId <= 4095:
            raise fault("vmodl.fault.InvalidArgument", "vlanId")
        created = portgroup(portgrp.name, portgrp.vswitchName, portgrp.vlanId)
        created.spec = copy.deepcopy(portgrp)
        self.networkInfo.portgroup = [*self.networkInfo.portgroup, created]
        owner.portgroup = [*owner.portgroup, created.key]

    def UpdatePortGroup(self, pgName: str, portgrp: Any) -> None:
        self.recorder.record("UpdatePortGroup", pgName=pgName, portgrp=portgrp)
        self._check("UpdatePortGroup")
        current = self._portgroup(pgName)
        current.spec = copy.deepcopy(portgrp)

    def RemovePortGroup(self, pgName: str) -> None:
        self.recorder.record("RemovePortGroup", pgName=pgName)
        self._check("RemovePortGroup")
        current = self._portgroup(pgName)
        if any(v.portgroup == pgName for v in self.networkInfo.vnic) or current.port:
            raise fault("vim.fault.ResourceInUse", f"{pgName} is in use")
        self.networkInfo.portgroup = [p for p in self.networkInfo.portgroup if p is not current]
        for item in self.networkInfo.vswitch:
            item.portgroup = [k for k in item.portgroup if k != current.key]

    # -- VMkernel adapters ---------------------------------------------------------------------

    def _set_ip(self, target: Any, ip: Any) -> None:
        target.ip.dhcp = ip.dhcp
        target.ip.ipAddress = None if ip.dhcp else ip.ipAddress
        target.ip.subnetMask = None if ip.dhcp else ip.subnetMask
        wanted = ip.ipV6Config
        if wanted is None:
            return
        if target.ip.ipV6Config is None:
            target.ip.ipV6Config = ipv6_config([])
        config = target.ip.ipV6Config
        for item in wanted.ipV6Address or []:
            same = [
                a for a in config.ipV6Address if (a.ipAddress, a.prefixLength) == (item.ipAddress, item.prefixLength)
            ]
            if item.operation == "remove":
                config.ipV6Address = [a for a in config.ipV6Address if a not in same]
            elif item.operation == "add" and not same:
                config.ipV6Address = [
                    *config.ipV6Address,
                    new(
                        vim.host.IpConfig.IpV6Address,
                        ipAddress=item.ipAddress,
                        prefixLength=item.prefixLength,
                        origin="manual",
                    ),
                ]
        if wanted.autoConfigurationEnabled is not None:
            config.autoConfigurationEnabled = wanted.autoConfigurationEnabled
        if wanted.dhcpV6Enabled is not None:
            config.dhcpV6Enabled = wanted.dhcpV6Enabled

    def _attach(self, device: str, pg_name: str) -> None:
        target = self._portgroup(pg_name)
        target.port = [*target.port, new(vim.host.PortGroup.Port, key=f"port-{device}", type="host")]

    def _detach(self, device: str, pg_name: str) -> None:
        for item in self.networkInfo.portgroup:
            if item.spec.name == pg_name:
                item.port = [p for p in item.port if p.key != f"port-{device}" and p.type != "host"]

    def AddVirtualNic(self, portgroup: str, nic: Any) -> str:
        self.recorder.record("AddVirtualNic", portgroup=portgroup, nic=nic)
        self._check("AddVirtualNic")
        try:
            self._portgroup(portgroup)
        except vim.fault.NotFound:
            raise fault("vmodl.fault.InvalidArgument", f"port group {portgroup} does not exist") from None
        if nic.ip is None:
            raise fault("vmodl.fault.InvalidArgument", "IP configuration is required")
        if any(v.portgroup == portgroup for v in self.networkInfo.vnic):
            raise fault("vim.fault.AlreadyExists", f"{portgroup} already has a virtual network adapter")
        used = {v.device for v in self.networkInfo.vnic}
        device = next(f"vmk{i}" for i in range(64) if f"vmk{i}" not in used)
        created = vmknic(device, portgroup, None, None, mtu=nic.mtu or 1500, stack=nic.netStackInstanceKey or "")
        created.spec.netStackInstanceKey = nic.netStackInstanceKey or "defaultTcpipStack"
        self._set_ip(created.spec, nic.ip)
        self.networkInfo.vnic = [*self.networkInfo.vnic, created]
        self._attach(device, portgroup)
        return device

    def UpdateVirtualNic(self, device: str, nic: Any) -> None:
        self.recorder.record("UpdateVirtualNic", device=device, nic=nic)
        self._check("UpdateVirtualNic")
        current = self._vnic(device)
        if nic.ip is None:
            raise fault("vmodl.fault.InvalidArgument", "IP configuration is required")
        if nic.netStackInstanceKey and nic.netStackInstanceKey != current.spec.netStackInstanceKey:
            raise fault("vmodl.fault.InvalidArgument", "the TCP/IP stack cannot be changed")
        if nic.portgroup and nic.portgroup != current.portgroup:
            if any(v.portgroup == nic.portgroup for v in self.networkInfo.vnic):
                raise fault("vim.fault.AlreadyExists", f"{nic.portgroup} already has a virtual network adapter")
            self._portgroup(nic.portgroup)
            self._detach(device, current.portgroup)
            current.portgroup = current.spec.portgroup = nic.portgroup
            self._attach(device, nic.portgroup)
        self._set_ip(current.spec, nic.ip)
        if nic.mtu:
            current.spec.mtu = nic.mtu

    def RemoveVirtualNic(self, device: str) -> None:
        self.recorder.record("RemoveVirtualNic", device=device)
        self._check("RemoveVirtualNic")
        current = self._vnic(device)
        self._detach(device, current.portgroup)
        self.networkInfo.vnic = [v for v in self.networkInfo.vnic if v.device != device]


class FakeVirtualNicManager:
    """``HostVirtualNicManager``: service tags per nicType, exposed as ``info.netConfig``."""

    def __init__(self, network_system: FakeNetworkSystem, recorder: Recorder, tags: dict[str, set[str]]) -> None:
        self.network_system = network_system
        self.recorder = recorder
        self.tags = tags  # nicType -> devices
        self.broken = False  # raise like govmomi's simulator does (no such managed object)

    @property
    def info(self) -> Any:
        if self.broken:
            raise fault("vmodl.fault.ManagedObjectNotFound", "no HostVirtualNicManager")
        configs = []
        for nic_type in sorted(set(self.tags) | {"vmotion", "management", "vsan"}):
            candidates = []
            for vnic in self.network_system.networkInfo.vnic:
                candidate = copy.deepcopy(vnic)
                candidate.key = f"VirtualNicManagerNetConfig.{nic_type}.{vnic.device}"
                candidates.append(candidate)
            selected = [c.key for c in candidates if c.device in self.tags.get(nic_type, set())]
            configs.append(
                new(
                    vim.host.VirtualNicManager.NetConfig,
                    nicType=nic_type,
                    multiSelectAllowed=True,
                    candidateVnic=candidates,
                    selectedVnic=selected,
                )
            )
        return new(vim.host.VirtualNicManagerInfo, netConfig=configs)

    def QueryNetConfig(self, nicType: str) -> Any:
        raise fault("vmodl.fault.ManagedObjectNotFound", "no HostVirtualNicManager")

    def SelectVnicForNicType(self, nicType: str, device: str) -> None:
        self.recorder.record("SelectVnicForNicType", nicType=nicType, device=device)
        self.network_system._vnic(device)
        self.tags.setdefault(nicType, set()).add(device)

    def DeselectVnicForNicType(self, nicType: str, device: str) -> None:
        self.recorder.record("DeselectVnicForNicType", nicType=nicType, device=device)
        self.tags.setdefault(nicType, set()).discard(device)


@dataclass
class FakeHost:
    """A ``vim.HostSystem`` stand-in: ``name``, ``configManager`` and ``config.network``."""

    network_system: FakeNetworkSystem
    nic_manager: FakeVirtualNicManager
    recorder: Recorder
    name: str = HOST_NAME

    @property
    def configManager(self) -> Any:
        return SimpleNamespace(networkSystem=self.network_system, virtualNicManager=self.nic_manager)

    @property
    def config(self) -> Any:
        return SimpleNamespace(network=self.network_system.networkInfo)


def lab_host(*, ignore_mtu: bool = False) -> FakeHost:
    recorder = Recorder()
    network_system = FakeNetworkSystem(lab_network_info(), recorder, ignore_mtu=ignore_mtu)
    nic_manager = FakeVirtualNicManager(network_system, recorder, {"management": {"vmk0"}, "vmotion": {"vmk1"}})
    return FakeHost(network_system, nic_manager, recorder)


MUTATING = {
    "AddVirtualSwitch",
    "UpdateVirtualSwitch",
    "RemoveVirtualSwitch",
    "AddPortGroup",
    "UpdatePortGroup",
    "RemovePortGroup",
    "AddVirtualNic",
    "UpdateVirtualNic",
    "RemoveVirtualNic",
    "SelectVnicForNicType",
    "DeselectVnicForNicType",
}
