# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plain-data views of vSwitches, port groups, adapters and uplinks: the before/after of diff
mode and the module's return values.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_ops import Ipv4Config, Ipv6Change
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_params import DesiredState
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_policy import policy_view
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_state import (
    SERVICE_TAGS,
    HostNetworkState,
    Ipv6State,
    PortGroupState,
    VmknicState,
    VSwitchState,
)


def service_tags(nic_types: Iterable[str] | None) -> list[str] | None:
    if nic_types is None:
        return None
    return sorted(SERVICE_TAGS.get(t, t) for t in nic_types)


def vswitch_view(vswitch: VSwitchState, portgroups: Iterable[str], *, policy: bool = False) -> dict[str, Any]:
    """``policy``: add the security / teaming policy (when the request names it)."""
    out: dict[str, Any] = {
        "name": vswitch.name,
        "mtu": vswitch.mtu,
        "uplinks": list(vswitch.uplinks),
        "portgroups": sorted(portgroups),
    }
    if policy:
        out["policy"] = policy_view(vswitch.policy)
    return out


def portgroup_view(portgroup: PortGroupState, *, policy: bool = False) -> dict[str, Any]:
    """``policy``: add the port group's overrides (null: inherited from the vSwitch)."""
    out: dict[str, Any] = {"name": portgroup.name, "vswitch": portgroup.vswitch, "vlan_id": portgroup.vlan_id}
    if policy:
        out["policy"] = policy_view(portgroup.policy)
    return out


def ipv6_view(ipv6: Ipv6State | None) -> dict[str, Any] | None:
    if ipv6 is None:
        return None
    return {
        "addresses": [a.text for a in ipv6.manual],
        "other_addresses": [a.text for a in ipv6.addresses if a.origin != "manual"],
        "autoconf": ipv6.autoconf,
        "dhcp": ipv6.dhcp,
    }


def vmknic_view(vmknic: VmknicState, services: Iterable[str] | None) -> dict[str, Any]:
    return {
        "device": vmknic.device,
        "portgroup": vmknic.portgroup,
        "distributed": vmknic.distributed,
        "mtu": vmknic.mtu,
        "tcpip_stack": vmknic.tcpip_stack,
        "ipv4": {"dhcp": vmknic.dhcp, "address": vmknic.ip_address, "netmask": vmknic.netmask},
        "ipv6": ipv6_view(vmknic.ipv6),
        "mac": vmknic.mac,
        "services": service_tags(services),
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
    vs_policy = desired.vswitch is not None and desired.vswitch.policy is not None
    pg_policy = desired.portgroup is not None and desired.portgroup.policy is not None
    if vs_name is not None:
        vswitch = state.vswitch(vs_name)
        out["vswitch"] = (
            vswitch_view(vswitch, (p.name for p in state.portgroups_on(vs_name)), policy=vs_policy)
            if vswitch is not None
            else None
        )
    if pg_name is not None:
        portgroup = state.portgroup(pg_name)
        out["portgroup"] = portgroup_view(portgroup, policy=pg_policy) if portgroup is not None else None
    if desired.vmknic is not None:
        name = device or desired.vmknic.device
        vmknic = state.vmknic(name) if name else None
        if vmknic is None and name is None and pg_name is not None:
            on_pg = state.vmknics_on(pg_name)
            vmknic = on_pg[0] if len(on_pg) == 1 else None
        out["vmknic"] = vmknic_view(vmknic, state.services_of(vmknic.device)) if vmknic is not None else None
    return out


def ipv4_text(config: Ipv4Config) -> str:
    if config.dhcp:
        return "dhcp"
    return f"{config.address}/{config.netmask}" if config.address else "none"


def ipv6_change_text(change: Ipv6Change, current: Ipv6State | None) -> list[str]:
    parts = [f"+{a}" for a in change.add] + [f"-{a}" for a in change.remove]
    if change.autoconf is not None and (current is None or change.autoconf != current.autoconf):
        parts.append(f"autoconf {change.autoconf}")
    if change.dhcp is not None and (current is None or change.dhcp != current.dhcp):
        parts.append(f"dhcp {change.dhcp}")
    return parts


def ipv6_after(current: Ipv6State | None, change: Ipv6Change | None) -> dict[str, Any] | None:
    if change is None:
        return ipv6_view(current)
    manual = [a.text for a in (current.manual if current else ()) if a.text not in change.remove]
    manual += [a for a in change.add if a not in manual]
    return {
        "addresses": manual,
        "other_addresses": [a.text for a in (current.addresses if current else ()) if a.origin != "manual"],
        "autoconf": change.autoconf,
        "dhcp": change.dhcp,
    }
