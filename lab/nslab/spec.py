# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The desired lab: every host's names, addresses, MTU and shaping, and where its files live."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from .shaping import Shaping


def mac_for(first_octet: int, address: ipaddress.IPv4Address) -> str:
    """A locally administered unicast MAC that embeds the IPv4 address (02:00:c6:12:00:0b)."""
    return ":".join(f"{octet:02x}" for octet in (first_octet, 0, *address.packed))


@dataclass(frozen=True)
class HostSpec:
    index: int
    name: str  # "h1"
    netns: str  # "esxilab-h1"
    veth: str  # bridge-side end, in the root namespace: "esxilab-v1"
    address: ipaddress.IPv4Interface
    mac: str  # eth0, derived from the address: re-plumbing never leaves stale ARP entries
    veth_mac: str  # bridge-side end
    mtu: int
    egress: Shaping  # on eth0 inside the namespace (what the host sends)
    ingress: Shaping  # on the bridge-side end (what the host receives)
    gso_max_segs: int  # 1 with --ethernet-overhead: every frame reaches tbf on its own
    env: tuple[tuple[str, str], ...] = ()  # --host-env: set in every SSH session (sshd SetEnv)
    binds: tuple[tuple[str, str], ...] = ()  # --host-bind: (src, dst) in sshd's private mount namespace


@dataclass(frozen=True)
class LabSpec:
    name: str
    bridge: str
    subnet: ipaddress.IPv4Network
    controller: ipaddress.IPv4Interface
    bridge_mac: str
    mtu: int
    rate_bps: int | None
    flow_rate_bps: int | None
    delay_us: int | None
    ethernet_overhead: bool
    hosts: tuple[HostSpec, ...]
    state_dir: Path

    @property
    def key(self) -> Path:
        return self.state_dir / "id_ed25519"

    @property
    def authorized_keys(self) -> Path:
        return self.state_dir / "authorized_keys"

    @property
    def known_hosts(self) -> Path:
        return self.state_dir / "known_hosts"

    @property
    def inventory(self) -> Path:
        return self.state_dir / "inventory.yml"

    @property
    def state_file(self) -> Path:
        return self.state_dir / "lab.json"

    def host_dir(self, host: HostSpec) -> Path:
        return self.state_dir / "hosts" / host.name

    def sshd_config(self, host: HostSpec) -> Path:
        return self.host_dir(host) / "sshd_config"

    def host_key(self, host: HostSpec) -> Path:
        return self.host_dir(host) / "ssh_host_ed25519_key"

    def pid_file(self, host: HostSpec) -> Path:
        return self.host_dir(host) / "sshd.pid"

    def sshd_log(self, host: HostSpec) -> Path:
        return self.host_dir(host) / "sshd.log"

    def overlay_dir(self, host: HostSpec) -> Path:
        return self.host_dir(host) / "overlay"

    def ssh_options(self) -> list[str]:
        return [
            "-o",
            f"UserKnownHostsFile={self.known_hosts}",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "IdentitiesOnly=yes",
        ]
