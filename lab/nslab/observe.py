# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reading what exists: namespaces, links and their addresses, an SSH banner, the kernel's netem support."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from typing import Any

from .common import JSONDict, ip_cmd, run_json


def list_netns() -> set[str]:
    return {str(item["name"]) for item in run_json(["ip", "-j", "netns", "list"]) if "name" in item}


def netns_inode(netns: str) -> int | None:
    try:
        return os.stat(f"/run/netns/{netns}").st_ino
    except OSError:
        return None


def links(netns: str | None) -> dict[str, JSONDict]:
    """Links (with details and addresses) of a namespace, by name."""
    details = {str(item["ifname"]): item for item in run_json(ip_cmd(netns, "-d", "-j", "link", "show"))}
    for item in run_json(ip_cmd(netns, "-j", "addr", "show")):
        name = str(item.get("ifname"))
        if name in details:
            details[name]["addr_info"] = item.get("addr_info", [])
    return details


def link_kind(link: Mapping[str, Any]) -> str | None:
    info = link.get("linkinfo")
    return str(info.get("info_kind")) if isinstance(info, dict) and info.get("info_kind") else None


def link_is_up(link: Mapping[str, Any]) -> bool:
    return "UP" in link.get("flags", [])


def link_addresses(link: Mapping[str, Any]) -> list[str]:
    return [f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info", []) if "local" in a]


def addrgen_none(link: Mapping[str, Any]) -> bool:
    mode = link.get("inet6_addr_gen_mode")
    return mode is None or mode == "none"  # None: IPv6 disabled, nothing is generated


def tcp_banner(address: str, port: int = 22, timeout: float = 2.0) -> str | None:
    """The SSH banner of address:port, or None when nothing answers."""
    try:
        with socket.create_connection((address, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            data = sock.recv(256)
    except OSError:
        return None
    line = data.decode(errors="replace").strip()
    return line if line.startswith("SSH-") else None


def kernel_lacks_netem() -> bool:
    """True only when /proc/config.gz says sch_netem is absent (unknown counts as present)."""
    import gzip

    try:
        with gzip.open("/proc/config.gz", "rt") as handle:
            config = handle.read()
    except OSError:
        return False
    if "CONFIG_NET_SCH_NETEM=y" in config or "CONFIG_NET_SCH_NETEM=m" in config:
        return False
    return "# CONFIG_NET_SCH_NETEM is not set" in config
