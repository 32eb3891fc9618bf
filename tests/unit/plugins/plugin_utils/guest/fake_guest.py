# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A Linux guest for the unit tests of ``plugin_utils/guest``: its interfaces in a dict, ``ip`` answered from them.

The probe script is answered with the sections it prints (``ip -j addr show`` or, with ``json=False``, only the
text forms), ``ip link set`` / ``ip addr add|del`` change the dict, and everything else - the restore journal's
scripts and the ``rm`` of its entries - runs in a real ``sh`` on a directory under the test's ``tmp_path``.
Nothing here touches a real interface.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import CommandOutput


@dataclass
class Iface:
    mac: str
    mtu: int = 1500
    up: bool = False
    addresses: list[str] = field(default_factory=list)
    master: str | None = None


@dataclass
class FakeGuest:
    ifaces: dict[str, Iface]
    routes: list[str] = field(default_factory=lambda: ["eth0"])
    ssh: str = "198.18.60.1 50000 198.18.60.11 22"
    uid: int = 0
    tools: list[str] = field(default_factory=lambda: ["apt-get"])
    json: bool = True
    fail: str | None = None  # a command prefix that fails
    log: list[str] = field(default_factory=list)
    config: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)

    # -- what ip prints ------------------------------------------------------------------------
    def ip_json(self) -> str:
        out: list[dict[str, Any]] = []
        for index, (name, i) in enumerate(self.ifaces.items(), 2):
            entry: dict[str, Any] = {
                "ifindex": index, "ifname": name, "flags": ["BROADCAST", "MULTICAST"] + (["UP"] if i.up else []),
                "mtu": i.mtu, "operstate": "UP" if i.up else "DOWN", "link_type": "ether", "address": i.mac,
                "addr_info": [
                    {"family": "inet6" if ":" in a else "inet", "local": a.split("/")[0],
                     "prefixlen": int(a.split("/")[1])}
                    for a in i.addresses
                ],
            }  # fmt: skip
            if i.master:
                entry["master"] = i.master
            out.append(entry)
        return json.dumps(out)

    def ip_link(self) -> str:
        lines = []
        for index, (name, i) in enumerate(self.ifaces.items(), 2):
            flags = "BROADCAST,MULTICAST" + (",UP,LOWER_UP" if i.up else "")
            master = f" master {i.master}" if i.master else ""
            lines.append(
                f"{index}: {name}@if{index + 10}: <{flags}> mtu {i.mtu} qdisc noqueue{master} state"
                f" {'UP' if i.up else 'DOWN'} mode DEFAULT group default qlen 1000\\    link/ether {i.mac} brd"
                " ff:ff:ff:ff:ff:ff link-netnsid 0"
            )
        return "\n".join(lines) + "\n"

    def ip_addr(self) -> str:
        lines = []
        for index, (name, i) in enumerate(self.ifaces.items(), 2):
            for a in i.addresses:
                family = "inet6" if ":" in a else "inet"
                lines.append(f"{index}: {name}    {family} {a} scope global {name}\\       valid_lft forever")
        return "\n".join(lines) + ("\n" if lines else "")

    def probe(self, tag: str, script: str) -> str:
        def section(name: str, args: str = "", text: str = "") -> str:
            return f"\n{tag} {name}{' ' + args if args else ''}\n{text}"

        routes = "".join(f"default via 198.18.60.254 dev {r} proto static\n" for r in self.routes)
        parts = [
            section("ssh", self.ssh),
            section("uid", str(self.uid)),
            section("ipjson", text=self.ip_json() if self.json else ""),
            section("iplink", text=self.ip_link()),
            section("ipaddr", text=self.ip_addr()),
            section("route", text=routes),
            section("tools", text="".join(f"{t}\n" for t in self.tools)),
        ]
        if "nm-devices" in script:  # the persistent part: a guest with /etc/network/interfaces sourcing interfaces.d
            parts.append(section("netplan"))
            parts.append(section("interfaces", text="source /etc/network/interfaces.d/*\n"))
            parts += [section("file", path, text) for path, text in self.files.items()]
        parts.append(section("ok"))
        return "".join(parts)

    # -- the shell -----------------------------------------------------------------------------
    def _ip(self, command: str) -> int:
        words = command.split()
        if words[:4] == ["ip", "link", "set", "dev"]:
            iface = self.ifaces.get(words[4])
            if iface is None:
                return 1
            if words[5] == "mtu":
                iface.mtu = int(words[6])
            else:
                iface.up = words[5] == "up"
            return 0
        if words[:3] == ["ip", "addr", "add"]:
            self.ifaces[words[5]].addresses.append(words[3])
            return 0
        if words[:3] == ["ip", "addr", "del"]:
            self.ifaces[words[5]].addresses.remove(words[3])
            return 0
        raise AssertionError(f"unexpected ip command {command!r}")

    def _sh(self, command: str) -> CommandOutput:
        proc = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, timeout=30, check=False)
        return CommandOutput(proc.returncode, proc.stdout, proc.stderr)

    def _simulated(self, head: str) -> int | None:
        """The exit status of ``head`` when it is a command this guest answers itself, else ``None``."""
        present = re.match(
            r"if ip -o addr show dev (\S+) \| grep -qF ' (\S+) '; then (ip addr del \S+ dev \S+); fi$", head
        )
        if present:
            return self._ip(present[3]) if present[2] in self.ifaces[present[1]].addresses else 0
        if head.startswith("ip "):
            return self._ip(head)
        if "/etc/" in head or "nmcli" in head:  # the persistent settings: recorded and kept in files, never run here
            self.config.append(head)
            written = re.search(
                r"printf '%s' (.*) >\"\$_t\" && chmod 600 \"\$_t\" && mv -f \"\$_t\" (\S+) \)$", head, re.S
            )
            if written:
                self.files[written[2]] = shlex.split(written[1])[0]
            elif head.startswith("rm -f -- "):
                self.files.pop(head.split()[-1], None)
            return 0
        return None

    def execute(self, command: str) -> CommandOutput:
        self.log.append(command)
        tag = re.search(r"(esxilab-guest-[0-9a-f]{12}) ok", command)
        if tag:
            return CommandOutput(0, self.probe(tag[1], command), "")
        if "esxilab-journal-" in command:  # the restore journal's scripts: a real sh on the test's directory
            return self._sh(command)
        if self.fail and command.startswith(self.fail):
            return CommandOutput(2, "", "RTNETLINK answers: Operation not permitted")
        gone = re.fullmatch(r"\[ -e /sys/class/net/(\S+) \]", command)
        if gone:
            return CommandOutput(0 if gone[1] in self.ifaces else 1, "", "")
        mtu = re.fullmatch(r"cat /sys/class/net/(\S+)/mtu", command)
        if mtu:
            iface = self.ifaces.get(mtu[1])
            return CommandOutput(0, f"{iface.mtu}\n", "") if iface else CommandOutput(1, "", "No such file")
        # a command put back together with the removal of its journal entry: "CMD && { rm -f -- ...; :; }"
        head, sep, rest = command.partition(" && { rm -f -- ")
        status = self._simulated(head if sep else command)
        if status is None:
            return self._sh(command)
        if status != 0:
            return CommandOutput(status, "", "Cannot find device")
        return self._sh("{ rm -f -- " + rest) if sep else CommandOutput(0, "", "")


def guest(**kwargs: Any) -> FakeGuest:
    """eth0 the management interface (default route, SSH address), eth1 the test vNIC: down, no address."""
    ifaces = {
        "eth0": Iface("00:50:56:00:00:01", up=True, addresses=["198.18.60.11/24"]),
        "eth1": Iface("00:50:56:aa:bb:cc"),
    }
    return FakeGuest(ifaces=kwargs.pop("ifaces", ifaces), **kwargs)
