# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The options of ``guest_network``, checked before anything runs on the guest.

The vNIC comes as ``esxi_guests`` reports it: the list of the guest's vNICs on the test port group
(``esxi_guests_vnics[guest]``: ``{mac_address, type, portgroup, label, connected}``), or a MAC given
directly. Every error names the option as the role variable (``guest_network_*``) and the fix.

Plain data; no Ansible import, no I/O. Private module: not part of the collection's public API.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import HostError

__all__ = ["PERSIST_KINDS", "GuestNetworkError", "Request", "check_request", "normalize_mac", "option"]

#: The persistent settings the role writes (``persist_with``; ``auto`` picks what the guest uses).
PERSIST_KINDS = ("networkmanager", "netplan", "ifupdown")
_MAC_RE = re.compile(r"^[0-9a-f]{2}([:-])[0-9a-f]{2}(\1[0-9a-f]{2}){4}$")

Address = ipaddress.IPv4Interface | ipaddress.IPv6Interface


class GuestNetworkError(HostError):
    """Bad input or a refusal: the message names the option (its role variable) and the fix."""


def option(name: str) -> str:
    """How a message names an option: its role variable (the module option of the same name without the prefix)."""
    return f"guest_network_{name}"


@dataclass(frozen=True, slots=True)
class Request:
    """What the guest's test interface must have."""

    #: lower case, colon separated; ``None``: the vNIC is not added yet (check mode of esxi_guests)
    mac: str | None
    address: Address
    mtu: int | None
    persist: str | None
    allow_management: bool


def normalize_mac(value: Any, name: str) -> str:
    """``value`` as ``aa:bb:cc:dd:ee:ff`` (raises :class:`GuestNetworkError` naming ``name``)."""
    text = value.strip().lower() if isinstance(value, str) else ""
    if not _MAC_RE.match(text):
        raise GuestNetworkError(
            f"{name}: {value!r} is not a MAC address. Fix: give six two-digit hex bytes such as 00:50:56:aa:bb:cc"
            " (the mac_address esxi_guests reports for the vNIC)"
        )
    mac = text.replace("-", ":")
    if mac == "00:00:00:00:00:00" or int(mac[:2], 16) & 1:
        raise GuestNetworkError(
            f"{name}: {mac} is not the address of one NIC (all zeros, or a multicast/broadcast address). Fix: give"
            " the vNIC's own MAC address (esxi_guests_vnics)"
        )
    return mac


def _mac_of(args: Mapping[str, Any]) -> str | None:
    if args.get("mac"):
        return normalize_mac(args["mac"], option("mac"))
    vnics = args.get("vnics")
    where = option("vnics")
    if not isinstance(vnics, list) or not vnics:
        raise GuestNetworkError(
            f"{where}: no vNIC of this guest is known (got {vnics!r:.80}). Fix: run esxilab.iperf.esxi_guests first"
            f" (it reports esxi_guests_vnics, guest -> its vNICs on the test port group) and give this guest's list,"
            f" or give {option('mac')}"
        )
    if len(vnics) > 1:
        macs = ", ".join(str(v.get("mac_address") if isinstance(v, Mapping) else v) for v in vnics)
        raise GuestNetworkError(
            f"{where}: the guest has {len(vnics)} vNICs on the test port group ({macs}); the role addresses one."
            f" Fix: give {option('mac')} with the MAC of the one to address"
        )
    vnic = vnics[0]
    if not isinstance(vnic, Mapping) or "mac_address" not in vnic:
        raise GuestNetworkError(
            f"{where}[0]: {vnic!r:.100} is not a vNIC as esxi_guests reports it ({{mac_address, type, portgroup,"
            f" ...}}). Fix: give esxi_guests_vnics[<guest>], or {option('mac')}"
        )
    if vnic["mac_address"] is None:  # esxi_guests in check mode: the vNIC it would add has no MAC yet
        return None
    return normalize_mac(vnic["mac_address"], f"{where}[0].mac_address")


def check_address(value: Any) -> Address:
    """The test address/prefix (raises :class:`GuestNetworkError` naming ``guest_network_address``)."""
    name = option("address")
    text = value.strip() if isinstance(value, str) else ""
    example = "Fix: give the guest's test address with its prefix length, such as 198.18.60.12/24"
    if "/" not in text:
        raise GuestNetworkError(f"{name}: {value!r} has no prefix length. {example}")
    try:
        address = ipaddress.ip_interface(text)
    except ValueError as exc:
        raise GuestNetworkError(f"{name}: {value!r} is not an address/prefix ({exc}). {example}") from None
    ip, net = address.ip, address.network
    kind = (
        "the unspecified address"
        if ip.is_unspecified
        else "a loopback address"
        if ip.is_loopback
        else "a multicast address"
        if ip.is_multicast
        else "a link-local address (the OS assigns those itself)"
        if ip.is_link_local
        else None
    )
    if kind:
        raise GuestNetworkError(f"{name}: {text} is {kind}, not a test address of a host. {example}")
    if ip.version == 4 and net.prefixlen < 31 and ip in (net.network_address, net.broadcast_address):
        which = "network" if ip == net.network_address else "broadcast"
        raise GuestNetworkError(
            f"{name}: {text} is the {which} address of {net}, not a host address in it. Fix: give a host address"
            f" between {net.network_address + 1} and {net.broadcast_address - 1} with /{net.prefixlen}"
        )
    return address


def check_request(args: Mapping[str, Any]) -> Request:
    """The checked options (raises :class:`GuestNetworkError`)."""
    mac = _mac_of(args)
    address = check_address(args.get("address"))
    mtu = args.get("mtu")
    if mtu is not None:
        low = 1280 if address.version == 6 else 68
        if isinstance(mtu, bool) or not isinstance(mtu, int) or not low <= mtu <= 65535:
            raise GuestNetworkError(
                f"{option('mtu')}: {mtu!r} is not an MTU for IPv{address.version}. Fix: give {low}-65535 (for example"
                " 1500 or 9000), or leave it unset to keep the interface's MTU"
            )
    persist = None
    if args.get("persist"):
        kind = str(args.get("persist_with") or "auto")
        if kind not in ("auto", *PERSIST_KINDS):
            raise GuestNetworkError(
                f"{option('persist_with')}: {kind!r} is not a persistent setting the role writes. Fix: give auto or one"
                f" of {', '.join(PERSIST_KINDS)}"
            )
        persist = kind
    return Request(mac, address, mtu, persist, bool(args.get("allow_management")))
