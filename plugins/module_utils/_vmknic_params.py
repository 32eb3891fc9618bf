# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The requested state of ``esxi_vmknic``: :func:`desired_from_params` validates the module's
options into frozen specs, or raises :class:`PlanError` with every problem found.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_policy import Policy, policy_from_params
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_state import (
    BUILTIN_STACKS,
    MTU_MAX,
    SERVICES,
    TCPIP_STACKS,
    PlanError,
    bool_or_none,
    str_or_none,
)


@dataclass(frozen=True)
class VSwitchSpec:
    name: str
    uplinks: tuple[str, ...] | None = None
    mtu: int | None = None
    policy: Policy | None = None  # security and teaming; None: left as it is


@dataclass(frozen=True)
class PortGroupSpec:
    name: str
    vlan_id: int | None = None
    policy: Policy | None = None  # overrides of the vSwitch's policy; None: left as it is


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


# The shortest prefix a test network may have: /0 to /7 would cover other networks (a route to all of them).
MIN_PREFIX = 8


def _netmask_checked(value: str, reasons: list[str]) -> str:
    """A netmask in dotted form (``255.255.255.0``) or as a prefix length (``24``, ``/24``),
    returned dotted: the form the vSphere API takes and reports."""
    text = value.strip()
    prefix = text.removeprefix("/")
    if prefix.isdecimal():
        if MIN_PREFIX <= int(prefix) <= 32:
            return str(ipaddress.IPv4Network(f"0.0.0.0/{int(prefix)}").netmask)
        reasons.append(
            f"vmknic.netmask {value!r} is out of range: a prefix length is {MIN_PREFIX} to 32 (e.g. 24 or /24); "
            f"a shorter one makes the test network cover others, the management network among them"
        )
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
    if network.prefixlen < MIN_PREFIX:
        reasons.append(
            f"vmknic.netmask {value!r} (/{network.prefixlen}) is too wide: give at least /{MIN_PREFIX} "
            f"(255.0.0.0), e.g. 255.255.255.0; a shorter one makes the test network cover others, the management "
            f"network among them"
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

    Whether a custom key exists is checked against the host (:meth:`VmknicPlanner.check_stack`).
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
            f"vmknic.tcpip_stack {text!r} is not a TCP/IP stack name: give one of {STACK_CHOICES}, or the key "
            f"of a custom stack on the host (letters, digits, '-', '_')"
        )
    return _stack_key(text)


STACK_CHOICES: Final = ", ".join([*TCPIP_STACKS, *(k for k in sorted(BUILTIN_STACKS) if k not in TCPIP_STACKS)])
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
            policy=policy_from_params(raw, "vswitch", reasons),
        )
        if not vswitch.name:
            reasons.append("vswitch.name must not be empty")

    raw = _section(params, "portgroup", reasons)
    if raw:
        vlan = raw.get("vlan_id")
        if vlan is not None and not 0 <= int(vlan) <= 4095:
            reasons.append(f"portgroup.vlan_id {vlan} is out of range: give 0 (no tagging) to 4095")
        portgroup = PortGroupSpec(
            name=str(raw.get("name") or ""),
            vlan_id=None if vlan is None else int(vlan),
            policy=policy_from_params(raw, "portgroup", reasons),
        )
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
                autoconf=bool_or_none(raw6.get("autoconf")),
                dhcp=bool_or_none(raw6.get("dhcp")),
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
            device=str_or_none(raw.get("device")),
            ip_address=address,
            netmask=netmask,
            dhcp=bool_or_none(dhcp),
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
