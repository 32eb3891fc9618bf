# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The operations a ``esxi_vmknic`` plan is made of (one vSphere API call each, applied by
``_vmknic_apply``), and :class:`Plan` itself.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar, TypeAlias

from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_policy import Policy
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_state import DEFAULT_STACK


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
            if isinstance(value, Ipv4Config | Ipv6Change | Policy):
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


def _policy_text(policy: Policy) -> str:
    return ", ".join(f"{k} {v}" for k, v in policy.as_dict().items())


@dataclass(frozen=True)
class SetVSwitchPolicy(_OpBase):
    """Set the named security / teaming fields of a vSwitch's policy; the rest is kept."""

    kind: ClassVar[str] = "set_vswitch_policy"
    name: str
    policy: Policy

    def describe(self) -> str:
        return f"set the policy of vSwitch {self.name}: {_policy_text(self.policy)}"


@dataclass(frozen=True)
class SetPortGroupPolicy(_OpBase):
    """Override the named security / teaming fields on a port group; the rest stays as it is."""

    kind: ClassVar[str] = "set_portgroup_policy"
    name: str
    policy: Policy

    def describe(self) -> str:
        return f"override the policy of port group {self.name}: {_policy_text(self.policy)}"


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
    | SetVSwitchPolicy
    | RemoveVSwitch
    | AddPortGroup
    | UpdatePortGroup
    | SetPortGroupPolicy
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


def split_v6(text: str) -> tuple[str, int]:
    """Split ``"2001:db8::1/64"`` into ``("2001:db8::1", 64)``."""
    address, prefix = text.split("/", 1)
    return address, int(prefix)


def replace_device(op: Op, device: str) -> Op:
    """Return ``op`` with the new adapter's device filled in (for SelectService on a new vmk)."""
    if isinstance(op, SelectService) and op.device is None:
        return replace(op, device=device)
    return op
