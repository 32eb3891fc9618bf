# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A Linux guest's interfaces as ``ip`` prints them: name, MAC, MTU, admin state, addresses, parent.

* :func:`parse_ip_json` reads ``ip -j addr show`` (iproute2 4.14 and later: the link and its
  addresses in one document);
* :func:`parse_ip_text` reads ``ip -o link show`` and ``ip -o addr show`` (an ``ip`` without ``-j``:
  busybox, old iproute2);
* :func:`default_route_devices` reads ``ip route show default`` / ``ip -6 route show default``.

Addresses are ``ip/prefix`` in ``ipaddress``'s spelling, so they compare with a checked request.
Plain data; no Ansible import, no I/O. Private module: not part of the collection's public API.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Link", "LinkParseError", "default_route_devices", "parse_ip_json", "parse_ip_text"]


class LinkParseError(ValueError):
    """The text is not what ``ip`` prints."""


@dataclass(frozen=True, slots=True)
class Link:
    """One interface of the guest."""

    name: str
    mac: str | None
    mtu: int | None
    #: the administrative state (the ``UP`` flag), not the carrier
    up: bool
    addresses: tuple[str, ...] = ()
    #: a VLAN's parent, a bridge or bond it is enslaved to: an interface that is not the vNIC itself
    parent: str | None = None
    master: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "interface": self.name,
            "mac": self.mac,
            "mtu": self.mtu,
            "up": self.up,
            "addresses": list(self.addresses),
        }


def _address(local: Any, prefix: Any) -> str | None:
    try:
        return str(ipaddress.ip_interface(f"{local}/{prefix}"))
    except ValueError:
        return None


def parse_ip_json(text: str) -> list[Link]:
    """The interfaces of ``ip -j addr show``."""
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise LinkParseError(f"not the JSON of ip -j addr show ({exc})") from None
    if not isinstance(document, list):
        raise LinkParseError("the JSON of ip -j addr show is not a list of interfaces")
    links: list[Link] = []
    for entry in document:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("ifname"), str):
            continue  # an entry without a name is not an interface
        infos: list[Any] = entry["addr_info"] if isinstance(entry.get("addr_info"), list) else []
        addresses = [_address(i.get("local"), i.get("prefixlen")) for i in infos if isinstance(i, Mapping)]
        flags: list[Any] = entry["flags"] if isinstance(entry.get("flags"), list) else []
        mac = entry.get("address")
        mtu = entry.get("mtu")
        links.append(
            Link(
                name=entry["ifname"],
                mac=mac.lower() if isinstance(mac, str) and entry.get("link_type") == "ether" else None,
                mtu=mtu if isinstance(mtu, int) and not isinstance(mtu, bool) else None,
                up="UP" in flags,
                addresses=tuple(a for a in addresses if a),
                parent=entry["link"] if isinstance(entry.get("link"), str) else None,
                master=entry["master"] if isinstance(entry.get("master"), str) else None,
            )
        )
    return links


_LINK_RE = re.compile(r"^\d+:\s+(?P<name>[^:@\s]+)(?:@(?P<at>[^:\s]+))?:\s+<(?P<flags>[^>]*)>(?P<rest>.*)$")
_ADDR_RE = re.compile(r"^\d+:\s+(?P<name>[^:@\s]+)\s+inet6?\s+(?P<address>\S+)")


def parse_ip_text(link_text: str, addr_text: str) -> list[Link]:
    """The interfaces of ``ip -o link show`` with the addresses of ``ip -o addr show``."""
    addresses: dict[str, list[str]] = {}
    for line in addr_text.splitlines():
        match = _ADDR_RE.match(line.strip())
        if match:
            local, _sep, prefix = match["address"].partition("/")
            address = _address(local, prefix or ("32" if ":" not in local else "128"))
            if address:
                addresses.setdefault(match["name"], []).append(address)
    links: list[Link] = []
    for line in link_text.splitlines():
        match = _LINK_RE.match(line.strip())
        if not match:
            continue
        rest = match["rest"]
        mtu = re.search(r"\bmtu (\d+)", rest)
        ether = re.search(r"\blink/ether ([0-9a-fA-F:]{17})\b", rest)
        master = re.search(r"\bmaster (\S+)", rest)
        at = match["at"]
        links.append(
            Link(
                name=match["name"],
                mac=ether[1].lower() if ether else None,
                mtu=int(mtu[1]) if mtu else None,
                up="UP" in match["flags"].split(","),
                addresses=tuple(addresses.get(match["name"], ())),
                # eth0@if5: a veth whose peer is in another namespace (an index), not a parent
                parent=at if at and not re.fullmatch(r"if\d+", at) else None,
                master=master[1] if master else None,
            )
        )
    if not links and link_text.strip():
        raise LinkParseError(f"not the output of ip -o link show: {link_text.strip()[:120]!r}")
    return links


def default_route_devices(text: str) -> list[str]:
    """The devices of the default routes ``ip route show default`` (and ``-6``) printed, in order, each once."""
    devices = [m[1] for m in re.finditer(r"^default\b.*?\bdev (\S+)", text, re.M)]
    return list(dict.fromkeys(devices))
