# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which interface is the vNIC, and what its runtime settings need: the plan of ``guest_network``.

* :func:`find_link` -- the interface with the vNIC's MAC (a VLAN, bridge or bond that shares the MAC
  is not the vNIC);
* :func:`management` -- the interfaces the guest is managed through: the one of a default route, the
  one holding the address the controller's SSH session reached (``SSH_CONNECTION``);
* :func:`plan_runtime` -- refusals, then the changes (MTU, address, up), their ``ip`` commands and
  what the restore journal must record before them (the MTU before, the address added, "was down").

Only what the request names changes: other addresses of the interface stay, an unset MTU stays.
Plain data; no Ansible import, no I/O. Private module: not part of the collection's public API.
"""

from __future__ import annotations

import ipaddress
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.guest.links import Link
from ansible_collections.esxilab.iperf.plugins.plugin_utils.guest.request import GuestNetworkError, Request, option

__all__ = ["RuntimePlan", "find_link", "journal_merge", "management", "plan_runtime"]


@dataclass(frozen=True, slots=True)
class RuntimePlan:
    """The runtime changes of the test interface, in order."""

    link: Link
    #: what changes, e.g. ``mtu 1500 -> 9000``, ``address 198.18.60.12/24 added``, ``down -> up``
    changes: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    #: the journal before the change: ``{mtu: {IF: MTU}, config: {IF: {addr, down}}}`` (empty parts left out)
    journal: dict[str, Any] = field(default_factory=dict)
    before: dict[str, Any] = field(default_factory=dict)
    after: dict[str, Any] = field(default_factory=dict)


def find_link(links: Sequence[Link], mac: str) -> Link:
    """The interface whose MAC is ``mac`` (raises :class:`GuestNetworkError` naming the MACs the guest has)."""
    found = [link for link in links if link.mac == mac]
    own = [link for link in found if link.parent is None and link.master is None] or found
    if not found:
        known = ", ".join(f"{link.name} {link.mac}" for link in links if link.mac) or "none"
        raise GuestNetworkError(
            f"{option('vnics')}/{option('mac')}: no interface of the guest has MAC {mac} (its interfaces: {known})."
            " Fix: check that the vNIC is connected to the guest and the guest OS has a driver for its type"
            " (e1000, e1000e, vmxnet3), and that the MAC is the one esxi_guests reported for this guest"
        )
    if len(own) > 1:
        names = ", ".join(link.name for link in own)
        raise GuestNetworkError(
            f"{option('mac')}: interfaces {names} all have MAC {mac}; the role cannot tell which one is the vNIC."
            " Fix: address it by hand, or remove the duplicate MAC"
        )
    return own[0]


def management(links: Sequence[Link], route_devices: Sequence[str], ssh_address: str | None) -> dict[str, str]:
    """Interface name -> why it is the guest's management interface."""
    out: dict[str, str] = {name: "it carries the guest's default route" for name in route_devices}
    if ssh_address:
        for link in links:
            if any(a.split("/")[0] == ssh_address for a in link.addresses):
                why = f"it holds {ssh_address}, the address the controller's SSH session reached"
                out[link.name] = f"{out[link.name]} and {why}" if link.name in out else why
    # an enslaved vNIC (bridge, bond) manages through its master
    for link in links:
        if link.master in out and link.name not in out:
            out[link.name] = f"it is a port of {link.master}, which {out[link.master].removeprefix('it ')}"
    return out


def _other_holder(links: Sequence[Link], link: Link, request: Request) -> None:
    wanted = request.address
    for other in links:
        for text in other.addresses:
            present = ipaddress.ip_interface(text)
            if present.version != wanted.version:
                continue
            if other.name != link.name and present.ip == wanted.ip:
                raise GuestNetworkError(
                    f"{option('address')}: {wanted.ip} is already on interface {other.name} of the guest. Fix: give"
                    " another test address"
                )
            if other.name != link.name and present.network.overlaps(wanted.network) and not present.ip.is_link_local:
                raise GuestNetworkError(
                    f"{option('address')}: {wanted} overlaps {present} on interface {other.name} (the guest would"
                    f" route part of the test network through {other.name}). Fix: give a test address in a network of"
                    f" its own, not {present.network}"
                )
            if other.name == link.name and present.ip == wanted.ip and present != wanted:
                raise GuestNetworkError(
                    f"{option('address')}: {link.name} has {present}, the same address with another prefix length."
                    f" Fix: give {present} as {option('address')}, or remove {present} from {link.name} by hand"
                )


def plan_runtime(
    request: Request, links: Sequence[Link], route_devices: Sequence[str], ssh_address: str | None
) -> RuntimePlan:
    """The plan for the interface of ``request.mac`` (raises :class:`GuestNetworkError` for a refusal)."""
    if request.mac is None:
        raise GuestNetworkError(f"{option('vnics')}: the vNIC has no MAC address yet")
    link = find_link(links, request.mac)
    managed = management(links, route_devices, ssh_address)
    if link.name in managed and not request.allow_management:
        raise GuestNetworkError(
            f"interface {link.name} (MAC {request.mac}) is the guest's management interface: {managed[link.name]}."
            f" Changing its address or MTU can cut the controller off the guest. Nothing was changed. Fix: give the"
            f" MAC of the test vNIC ({option('vnics')}/{option('mac')}), or set {option('allow_management')}: true if"
            " this is really meant"
        )
    _other_holder(links, link, request)
    q = shlex.quote(link.name)
    plan = RuntimePlan(link=link, before=link.as_dict())
    after = link.as_dict()
    mtu: dict[str, int] = {}
    config: dict[str, str] = {}
    if request.mtu is not None and link.mtu != request.mtu:
        plan.changes.append(f"mtu {link.mtu} -> {request.mtu}")
        plan.commands.append(f"ip link set dev {q} mtu {int(request.mtu)}")
        if link.mtu is not None:
            mtu[link.name] = link.mtu
        after["mtu"] = request.mtu
    address = str(request.address)
    if address not in link.addresses:
        plan.changes.append(f"address {address} added")
        plan.commands.append(f"ip addr add {shlex.quote(address)} dev {q}")
        config["addr"] = address
        after["addresses"] = [*link.addresses, address]
    if not link.up:
        plan.changes.append("down -> up")
        plan.commands.append(f"ip link set dev {q} up")
        config["down"] = "true"
        after["up"] = True
    if mtu:
        plan.journal["mtu"] = mtu
    if config:
        plan.journal["config"] = {link.name: config}
    plan.after.update(after)
    return plan


def journal_merge(*parts: Mapping[str, Any]) -> dict[str, Any]:
    """The journal parts of several plans as one ``{mtu, config}`` (per interface, keys joined)."""
    out: dict[str, Any] = {}
    for part in parts:
        for name, mtu in (part.get("mtu") or {}).items():
            out.setdefault("mtu", {})[name] = mtu
        for name, values in (part.get("config") or {}).items():
            out.setdefault("config", {}).setdefault(name, {}).update(values)
    return out
