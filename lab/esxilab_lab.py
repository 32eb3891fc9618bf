# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Local lab: N Linux network namespaces with real OpenSSH servers on a Linux bridge.

``up`` builds (or converges) the lab, ``down`` removes every object it created, ``status``
reports what exists. Each lab host is a network namespace ``<name>-h<i>`` whose ``eth0`` is
one end of a veth pair; the other end ``<name>-v<i>`` is a port of the bridge ``<name>-br0``
(the software vSwitch). The controller (this machine's root namespace) has the first
address of the lab subnet on the bridge. Each namespace runs its own ``sshd`` (own config,
own host key, root login with the generated lab key only) in its own UTS namespace, so
``uname -n`` answers the namespace name. Sessions start no rc file, as on ESXi: no
``~/.ssh/rc`` and no ``~/.bashrc`` (``SHLVL=1``; see ``sshd_config_text``). iperf/iperf3
are the Debian binaries: namespaces share the root filesystem.

Shaping (``--rate``/``--delay``) uses tc on both ends of every host's veth:

* ``--rate R`` puts a ``tbf`` qdisc on the host's ``eth0`` (what the host sends) and on the
  bridge-side ``<name>-v<i>`` (what the host receives), so each host has an access link
  of R in each direction, like a NIC of that speed.
* ``--flow-rate F`` (with ``--rate``) limits every flow a host sends to F as well: the host's
  ``eth0`` gets an ``htb`` root instead of ``tbf`` - one class at R for the link with
  ``FLOW_CLASSES`` leaf classes at F under it, chosen by a ``u32`` hash of the source port
  (IPv4 without options; TCP and UDP) - so throughput rises with parallel streams (1 stream
  = F) and plateaus at R, like a path whose single flows are limited (window, per-flow
  policer) below the link. Parallel streams of one client get distinct classes (consecutive
  ephemeral ports); two flows whose ports fall into one class share F. ``fq`` with
  ``maxrate`` would be the natural qdisc, but not every kernel has it (``sch_fq``);
  ``htb`` + ``u32`` are everywhere ``tc`` shaping is.
* ``--host-rate HOST=R`` gives one host an access link of R instead (both directions, as
  ``--rate`` does for every host; with ``--flow-rate`` R must be above it), e.g. ``h4=300mbit``
  beside ``--rate 1gbit``, so concurrent pairs run at different rates. The host's inventory
  variables ``lab_rate``/``lab_rate_bps`` say its rate.
* The inventory gives every shaped host ``paired_test_link_speed_mbps`` (its rate in Mbit/s):
  ``esxilab.iperf.paired_test`` takes it for the line rate instead of the 10000 Mb/s a veth reports.
* ``--delay D`` puts a ``netem`` qdisc on the host's ``eth0`` only (root ``netem``, ``tbf``
  as its child when a rate is set): every packet a host sends is delayed by D, so the RTT
  between two hosts is 2*D and between the controller and a host D. It needs
  ``sch_netem`` in the kernel; ``up`` refuses early when the kernel lacks it.

Safety: addresses come only from 198.18.0.0/15 (RFC 2544) and are only configured on the
lab bridge and inside the lab namespaces; ``up`` refuses a subnet that overlaps an address
or route the lab does not own. ``up`` also makes sure the machine has the route
``unreachable 198.18.0.0/15`` (the safety net; ``down`` keeps it): the lab's own connected
route is more specific, so lab traffic flows, but a packet for a lab host that has gone (a
namespace removed under a running play) fails at once with "No route to host" instead of
following the default route off the machine. That route is the only one ``up`` accepts
over its subnet. No iptables/nftables rule, no sysctl and no other route is touched. Every
command runs with a timeout.

Idempotence: ``up`` reads the current objects (``ip netns``, ``ip link``, ``ip addr``,
``tc qdisc``, sshd pid + namespace inode + command line, generated files) and changes only
what differs; it reports ``changed=false`` when nothing differs. ``--check`` reports the
actions it would take and changes nothing.

Stdlib only; python3 >= 3.11; must run as root.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import functools
import ipaddress
import itertools
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_STATE_DIR = REPO / "lab" / "state"
LAB_RANGE = ipaddress.IPv4Network("198.18.0.0/15")  # RFC 2544 benchmarking range
DEFAULT_SUBNET = "198.18.0.0/24"
HOST_OFFSET = 10  # h1 = .11, h2 = .12, ...
# 64: 32 concurrent pairs on hosts of their own (tests/bench/bench_overhead.py). A /24 holds 243 hosts
# at .11+, but "<name>-v<i>" must fit IFNAMSIZ: 11-char names leave room for 2-digit indices only.
MIN_HOSTS, MAX_HOSTS = 2, 64
MIN_MTU, MAX_MTU = 576, 9216
NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,10}$")  # "<name>-br0" must fit IFNAMSIZ (15)
HOST_IFNAME = "eth0"
NO_RC_ENV = "SHLVL=1"  # see sshd_config_text: sessions start no rc file
CMD_TIMEOUT = 20.0
SSHD_READY_TIMEOUT = 10.0
KILL_WAIT = 3.0
TBF_MIN_LIMIT = 1 << 20  # bytes; see tbf_limit()
NETEM_LIMIT = 10000
ETHERNET_OVERHEAD = 24  # preamble+SFD 8, FCS 4, inter-frame gap 12: bytes on the wire not in the skb
DEFAULT_GSO_MAX_SEGS = 65535
FLOW_CLASSES = 64  # --flow-rate: htb leaf classes 1:100.. chosen by bits 1-6 of the source port
FLOW_CLASS_BASE = 0x100
HTB_DEFAULT_CLASS = 2  # unhashed traffic (non-IP): at most the link rate, no flow limit
HTB_QUANTUM = 65536  # bytes; set so htb does not warn about rate/r2q quanta at Gbit rates
STATE_VERSION = 1
SCRIPT_NAME = "lab/esxilab_lab.py"

JSONDict = dict[str, Any]


class LabError(Exception):
    """A lab operation failed; the message names the object, the cause and the fix."""


# --------------------------------------------------------------------------------------
# Running commands
# --------------------------------------------------------------------------------------


def run(argv: Sequence[str], *, timeout: float = CMD_TIMEOUT, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a command with a timeout; raise LabError on failure (when ``check``)."""
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise LabError(f"`{shlex.join(argv)}` timed out after {timeout:.0f}s") from exc
    except FileNotFoundError as exc:
        raise LabError(f"`{argv[0]}` not found: install it (iproute2, openssh-server, openssh-client)") from exc
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip()
        raise LabError(f"`{shlex.join(argv)}` failed (rc={proc.returncode}): {detail}")
    return proc


def run_json(argv: Sequence[str]) -> list[JSONDict]:
    """Run an ``ip -j``/``tc -j`` command and return its JSON list (empty output = [])."""
    out = run(argv).stdout.strip()
    if not out:
        return []
    data = json.loads(out)
    if not isinstance(data, list):
        raise LabError(f"`{shlex.join(argv)}` did not print a JSON list")
    return [item for item in data if isinstance(item, dict)]


def ip_cmd(netns: str | None, *args: str) -> list[str]:
    return ["ip", *(["-n", netns] if netns else []), *args]


def tc_cmd(netns: str | None, *args: str) -> list[str]:
    return ["tc", *(["-n", netns] if netns else []), *args]


# --------------------------------------------------------------------------------------
# Parsing user input
# --------------------------------------------------------------------------------------

_RATE_RE = re.compile(r"^(?P<num>\d+(?:\.\d+)?)(?P<prefix>[kmgt]?)(?P<unit>bit|bps)$", re.IGNORECASE)
_DELAY_RE = re.compile(r"^(?P<num>\d+(?:\.\d+)?)(?P<unit>us|ms|s)$", re.IGNORECASE)
_SI = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}


def parse_rate(text: str) -> int:
    """``"100mbit"`` -> 100000000 bit/s. tc units: ``bit`` (SI prefixes) or ``bps`` (bytes/s)."""
    match = _RATE_RE.match(text.strip())
    if not match:
        raise LabError(f"rate {text!r}: use a tc rate such as 100mbit, 1gbit, 500kbit")
    bits = float(match["num"]) * _SI[match["prefix"].lower()] * (8 if match["unit"].lower() == "bps" else 1)
    if bits < 10**6 or bits > 100 * 10**9:
        raise LabError(f"rate {text!r}: must be between 1mbit and 100gbit")
    return int(bits)


def parse_delay(text: str) -> int:
    """``"1ms"`` -> 1000 microseconds."""
    match = _DELAY_RE.match(text.strip())
    if not match:
        raise LabError(f"delay {text!r}: use a time such as 500us, 1ms, 0.2s")
    usec = float(match["num"]) * {"us": 1, "ms": 1000, "s": 1_000_000}[match["unit"].lower()]
    if usec < 1 or usec > 10_000_000:
        raise LabError(f"delay {text!r}: must be between 1us and 10s")
    return round(usec)


def format_rate(bits: int) -> str:
    for prefix, factor in (("g", 10**9), ("m", 10**6), ("k", 10**3)):
        if bits % factor == 0:
            return f"{bits // factor}{prefix}bit"
    return f"{bits}bit"


def format_delay(usec: int) -> str:
    return f"{usec // 1000}ms" if usec % 1000 == 0 else f"{usec}us"


# --------------------------------------------------------------------------------------
# Desired state
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shaping:
    """tc shaping of one veth end: rate in bit/s, tbf burst and per-frame overhead in bytes, netem delay in µs."""

    rate_bps: int | None = None
    burst: int | None = None
    limit: int | None = None
    overhead: int = 0
    delay_us: int | None = None
    flow_rate_bps: int | None = None  # --flow-rate: htb + u32 per-flow classes instead of tbf

    @property
    def empty(self) -> bool:
        return self.rate_bps is None and self.delay_us is None

    def describe(self) -> str:
        parts = []
        if self.rate_bps is not None and self.flow_rate_bps is not None:
            parts.append(
                f"htb rate {format_rate(self.rate_bps)} burst {self.burst}"
                f" with {FLOW_CLASSES} flow classes of {format_rate(self.flow_rate_bps)}"
            )
        elif self.rate_bps is not None:
            extra = f" overhead {self.overhead}" if self.overhead else ""
            parts.append(f"tbf rate {format_rate(self.rate_bps)} burst {self.burst} limit {self.limit}{extra}")
        if self.delay_us is not None:
            parts.append(f"netem delay {format_delay(self.delay_us)}")
        return " + ".join(parts) or "none"


def mac_for(first_octet: int, address: ipaddress.IPv4Address) -> str:
    """A locally administered unicast MAC that embeds the IPv4 address (02:00:c6:12:00:0b)."""
    return ":".join(f"{octet:02x}" for octet in (first_octet, 0, *address.packed))


def tbf_limit(rate_bps: int) -> int:
    """Queue size: 50 ms at line rate, at least 1 MiB.

    The host-side tbf is the host's own NIC queue: TCP in the namespace queues into it
    directly (TSQ allows up to tcp_limit_output_bytes, 4 MiB), and a short queue there makes
    the sender drop its own packets (measured: ~600 retransmits per 5 s at 10mbit with a
    20 ms queue, none with 1 MiB), which no physical NIC does.
    """
    return max(rate_bps // 8 // 20, TBF_MIN_LIMIT)


def tbf_burst(rate_bps: int, mtu: int) -> int:
    """Bucket size: 5 ms at line rate, at least four full frames and 16 KiB."""
    return max(rate_bps // 8 // 200, 4 * (mtu + 14), 16 * 1024)


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


# --host-env / --host-bind: make a lab host look like another system to the SSH sessions Ansible
# opens (e.g. the ESXi stand-ins of tests/esxi_standin on PATH, ESXi paths bound to a temp dir).
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
ENV_VALUE_RE = re.compile(r"^[^\s\"'\\#]*$")  # one sshd_config word: no blanks, quotes, backslash or '#'
RESERVED_ENV = ("LAB_HOST", "LAB_NETNS", "SHLVL")
BIND_PATH_RE = re.compile(r"^/[^\s,:\"'\\]*$")  # ',' and ':' would break the overlay mount options
BIND_FORBIDDEN = ("/proc", "/sys", "/dev", "/run")  # the session and sshd itself need these


def _split_host_item(item: str, option: str, usage: str, hosts: int) -> tuple[str, str]:
    host, sep, rest = item.partition("=")
    if not sep or not re.fullmatch(r"h[1-9]\d*", host) or not rest:
        raise LabError(f"{option} {item!r}: use {usage}")
    if int(host[1:]) > hosts:
        raise LabError(f"{option} {item!r}: the lab has only h1..h{hosts}")
    return host, rest


def parse_host_env(items: Sequence[str], hosts: int) -> dict[str, tuple[tuple[str, str], ...]]:
    """``h1=PATH=/x:/usr/bin:/bin`` -> {"h1": (("PATH", "/x:/usr/bin:/bin"),)}; a later item wins per name."""
    usage = "HOST=NAME=VALUE, e.g. h1=PATH=/opt/standin:/usr/bin:/bin"
    found: dict[str, dict[str, str]] = {}
    for item in items:
        host, rest = _split_host_item(item, "--host-env", usage, hosts)
        name, sep, value = rest.partition("=")
        if not sep or not ENV_NAME_RE.match(name):
            raise LabError(f"--host-env {item!r}: use {usage}")
        if name in RESERVED_ENV:
            raise LabError(f"--host-env {item!r}: {name} is set by the lab itself")
        if not ENV_VALUE_RE.match(value):
            raise LabError(f"--host-env {item!r}: the value may not contain blanks, quotes, backslashes or '#'")
        found.setdefault(host, {})[name] = value
    return {host: tuple(values.items()) for host, values in found.items()}


def parse_host_bind(items: Sequence[str], hosts: int) -> dict[str, tuple[tuple[str, str], ...]]:
    """``h1=/tmp/x:/usr/lib/vmware`` -> {"h1": (("/tmp/x", "/usr/lib/vmware"),)}, in the order given."""
    usage = "HOST=SRC:DST with absolute paths, e.g. h1=/tmp/h1-vmware:/usr/lib/vmware"
    found: dict[str, list[tuple[str, str]]] = {}
    for item in items:
        host, rest = _split_host_item(item, "--host-bind", usage, hosts)
        src, sep, dst = rest.partition(":")
        if not sep or not BIND_PATH_RE.match(src) or not BIND_PATH_RE.match(dst):
            raise LabError(f"--host-bind {item!r}: use {usage} (no blanks, quotes, ',' or ':' in the paths)")
        src, dst = os.path.normpath(src), os.path.normpath(dst)
        if dst == "/" or any(dst == f or dst.startswith(f + "/") for f in BIND_FORBIDDEN):
            raise LabError(f"--host-bind {item!r}: {dst} cannot be replaced (/, /proc, /sys, /dev and /run are needed)")
        found.setdefault(host, []).append((src, dst))
    return {host: tuple(pairs) for host, pairs in found.items()}


def check_flow_rate(flow_rate: str, rate_bps: int | None, delay: str | None, ethernet_overhead: bool) -> int:
    """--flow-rate: a rate below --rate, on a lab without --delay/--ethernet-overhead."""
    if rate_bps is None:
        raise LabError(f"--flow-rate {flow_rate}: needs --rate (the link the flows share), e.g. --rate 1gbit")
    if delay or ethernet_overhead:
        raise LabError(f"--flow-rate {flow_rate}: cannot be combined with --delay or --ethernet-overhead; drop one")
    flow_rate_bps = parse_rate(flow_rate)
    if flow_rate_bps >= rate_bps:
        raise LabError(
            f"--flow-rate {flow_rate}: must be below --rate {format_rate(rate_bps)} (a flow limit at or above"
            " the link rate changes nothing); omit it or lower it"
        )
    return flow_rate_bps


def build_spec(
    *,
    name: str,
    hosts: int,
    state_dir: Path,
    subnet: str = DEFAULT_SUBNET,
    mtu: int = 1500,
    host_mtu: Sequence[str] = (),
    rate: str | None = None,
    flow_rate: str | None = None,
    delay: str | None = None,
    ethernet_overhead: bool = False,
    host_env: Sequence[str] = (),
    host_bind: Sequence[str] = (),
    host_rate: Sequence[str] = (),
) -> LabSpec:
    """Validate the options and compute every object of the lab."""
    if not NAME_RE.match(name):
        raise LabError(f"--name {name!r}: use 1-11 lowercase letters/digits starting with a letter")
    if not MIN_HOSTS <= hosts <= MAX_HOSTS:
        raise LabError(f"--hosts {hosts}: must be between {MIN_HOSTS} and {MAX_HOSTS}")
    try:
        net = ipaddress.IPv4Network(subnet, strict=True)
    except ValueError as exc:
        raise LabError(f"--subnet {subnet!r}: {exc}") from exc
    if not net.subnet_of(LAB_RANGE):
        raise LabError(f"--subnet {net}: must lie inside {LAB_RANGE} (RFC 2544 benchmarking range)")
    if net.num_addresses < HOST_OFFSET + hosts + 2:
        raise LabError(f"--subnet {net}: too small for the controller and {hosts} hosts at .{HOST_OFFSET + 1}+")

    def check_mtu(value: int, what: str) -> int:
        if not MIN_MTU <= value <= MAX_MTU:
            raise LabError(f"{what} {value}: MTU must be between {MIN_MTU} and {MAX_MTU}")
        return value

    check_mtu(mtu, "--mtu")
    overrides: dict[str, int] = {}
    for item in host_mtu:
        host, sep, value = item.partition("=")
        if not sep or not re.fullmatch(r"h[1-9]\d*", host) or not value.isdigit():
            raise LabError(f"--host-mtu {item!r}: use HOST=MTU, e.g. h2=9000")
        if int(host[1:]) > hosts:
            raise LabError(f"--host-mtu {item!r}: the lab has only h1..h{hosts}")
        overrides[host] = check_mtu(int(value), f"--host-mtu {host}")
    rate_bps = parse_rate(rate) if rate else None
    flow_rate_bps = check_flow_rate(flow_rate, rate_bps, delay, ethernet_overhead) if flow_rate else None
    host_rates: dict[str, int] = {}
    for item in host_rate:
        host, sep, value = item.partition("=")
        if not sep or not re.fullmatch(r"h[1-9]\d*", host) or not value:
            raise LabError(f"--host-rate {item!r}: use HOST=RATE, e.g. h4=300mbit")
        if int(host[1:]) > hosts:
            raise LabError(f"--host-rate {item!r}: the lab has only h1..h{hosts}")
        host_rates[host] = parse_rate(value)
        if flow_rate_bps is not None and host_rates[host] <= flow_rate_bps:
            raise LabError(
                f"--host-rate {item!r}: must be above --flow-rate {format_rate(flow_rate_bps)} (the flows share the "
                "host's link); raise it or lower --flow-rate"
            )
    delay_us = parse_delay(delay) if delay else None
    envs = parse_host_env(host_env, hosts)
    binds = parse_host_bind(host_bind, hosts)

    state_dir = state_dir.resolve()
    base = int(net.network_address)
    specs = []
    controller = ipaddress.IPv4Interface(f"{ipaddress.IPv4Address(base + 1)}/{net.prefixlen}")
    for index in range(1, hosts + 1):
        host_name = f"h{index}"
        host_mtu_value = overrides.get(host_name, mtu)
        link_bps = host_rates.get(host_name, rate_bps)
        burst = tbf_burst(link_bps, host_mtu_value) if link_bps else None
        limit = tbf_limit(link_bps) if link_bps else None
        overhead = ETHERNET_OVERHEAD if ethernet_overhead and link_bps else 0
        specs.append(
            HostSpec(
                index=index,
                name=host_name,
                netns=f"{name}-{host_name}",
                veth=f"{name}-v{index}",
                address=ipaddress.IPv4Interface(f"{ipaddress.IPv4Address(base + HOST_OFFSET + index)}/{net.prefixlen}"),
                mac=mac_for(0x02, ipaddress.IPv4Address(base + HOST_OFFSET + index)),
                veth_mac=mac_for(0x06, ipaddress.IPv4Address(base + HOST_OFFSET + index)),
                mtu=host_mtu_value,
                egress=Shaping(
                    rate_bps=link_bps,
                    burst=burst,
                    limit=limit,
                    overhead=overhead,
                    delay_us=delay_us,
                    flow_rate_bps=flow_rate_bps if link_bps else None,
                ),
                ingress=Shaping(rate_bps=link_bps, burst=burst, limit=limit, overhead=overhead),
                gso_max_segs=1 if overhead else DEFAULT_GSO_MAX_SEGS,
                env=envs.get(host_name, ()),
                binds=binds.get(host_name, ()),
            )
        )
    return LabSpec(
        name=name,
        bridge=f"{name}-br0",
        subnet=net,
        controller=controller,
        bridge_mac=mac_for(0x02, controller.ip),
        mtu=mtu,
        rate_bps=rate_bps,
        flow_rate_bps=flow_rate_bps,
        delay_us=delay_us,
        ethernet_overhead=bool(ethernet_overhead and (rate_bps or host_rates)),
        hosts=tuple(specs),
        state_dir=state_dir,
    )


# --------------------------------------------------------------------------------------
# Observing current state
# --------------------------------------------------------------------------------------


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


def parse_htb_classes(text: str) -> list[JSONDict]:
    """``tc class show`` of htb classes (iproute2 prints no JSON for them): handle, rate/ceil bit/s, burst bytes."""
    found: list[JSONDict] = []
    for line in text.splitlines():
        words = line.split()
        if words[:2] != ["class", "htb"] or len(words) < 3:
            continue
        item: JSONDict = {"handle": words[2]}
        for key, value in itertools.pairwise(words[3:]):
            if key in ("rate", "ceil"):
                with contextlib.suppress(LabError):
                    item[key] = parse_rate(value.lower())
            elif key == "burst" and value.endswith("b") and value[:-1].isdigit():
                item[key] = int(value[:-1])
        found.append(item)
    return found


def observe_htb(classes: Sequence[Mapping[str, Any]]) -> Shaping | None:
    """The --flow-rate layout (link class 1:1, flow classes 1:100..) from parse_htb_classes(); None otherwise."""
    by_handle = {str(c.get("handle", "")): c for c in classes}
    link = by_handle.get("1:1", {})
    flow = by_handle.get(f"1:{FLOW_CLASS_BASE:x}", {})
    flows = [h for h in by_handle if re.fullmatch(r"1:[0-9a-f]+", h) and int(h[2:], 16) >= FLOW_CLASS_BASE]
    if len(flows) != FLOW_CLASSES or not {"rate", "burst"} <= link.keys() or "ceil" not in flow:
        return None
    return Shaping(rate_bps=int(link["rate"]), burst=int(link["burst"]), flow_rate_bps=int(flow["ceil"]))


def observe_shaping(qdiscs: Sequence[Mapping[str, Any]], classes: Sequence[Mapping[str, Any]] = ()) -> Shaping | None:
    """Read back the layout this script installs; None when it is something else."""
    root = next((q for q in qdiscs if q.get("root")), None)
    if root is None or root.get("kind") in ("noqueue", "noop", "pfifo_fast", "mq"):
        return Shaping()

    def tbf(q: Mapping[str, Any], delay_us: int | None = None) -> Shaping | None:
        options = q.get("options", {})
        if q.get("kind") != "tbf" or "rate" not in options or "burst" not in options:
            return None
        rate_bytes, burst = int(options["rate"]), int(options["burst"])
        # tc reports the queue as "lat" (µs at rate after the burst), not as the byte limit
        limit = round(float(options["lat"]) * rate_bytes / 1e6) + burst if "lat" in options else None
        return Shaping(
            rate_bps=rate_bytes * 8,
            burst=burst,
            limit=limit,
            overhead=int(options.get("overhead", 0)),
            delay_us=delay_us,
        )

    if root.get("kind") == "tbf":
        return tbf(root)
    if root.get("kind") == "htb":
        return observe_htb(classes)
    if root.get("kind") == "netem":
        raw = root.get("options", {}).get("delay")
        if isinstance(raw, dict):
            raw = raw.get("delay")
        if not isinstance(raw, int | float):
            return None
        handle = str(root.get("handle", ""))
        child = next((q for q in qdiscs if q is not root and str(q.get("parent", "")) == f"{handle}1"), None)
        delay_us = round(float(raw) * 1_000_000)
        if child is None:
            return Shaping(delay_us=delay_us)
        return tbf(child, delay_us)
    return None


def shaping_matches(current: Shaping | None, desired: Shaping) -> bool:
    if current is None:
        return False
    if (current.rate_bps is None) != (desired.rate_bps is None):
        return False
    if current.flow_rate_bps != desired.flow_rate_bps:
        if current.flow_rate_bps is None or desired.flow_rate_bps is None:
            return False
        if abs(current.flow_rate_bps - desired.flow_rate_bps) > 8:
            return False
    if (current.delay_us is None) != (desired.delay_us is None):
        return False
    if desired.rate_bps is not None and current.rate_bps is not None:
        if abs(current.rate_bps - desired.rate_bps) > 8:
            return False
        if current.burst is None or desired.burst is None or abs(current.burst - desired.burst) > desired.burst // 50:
            return False
        if desired.flow_rate_bps is None and (
            current.limit is None or desired.limit is None or abs(current.limit - desired.limit) > desired.limit // 50
        ):
            return False
        if current.overhead != desired.overhead:
            return False
    return not (
        desired.delay_us is not None and current.delay_us is not None and abs(current.delay_us - desired.delay_us) > 1
    )


def qdiscs(netns: str | None, dev: str) -> list[JSONDict]:
    return run_json(tc_cmd(netns, "-j", "qdisc", "show", "dev", dev))


def current_shaping(netns: str | None, dev: str) -> Shaping | None:
    """The shaping of one veth end as this script would have installed it; None for a foreign layout."""
    found = qdiscs(netns, dev)
    root = next((q for q in found if q.get("root")), {})
    if root.get("kind") != "htb":
        return observe_shaping(found)
    return observe_shaping(found, parse_htb_classes(run(tc_cmd(netns, "class", "show", "dev", dev)).stdout))


def proc_alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def proc_cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def proc_netns_inode(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}/ns/net").st_ino
    except OSError:
        return None


def netns_pids(netns: str) -> list[int]:
    proc = run(["ip", "netns", "pids", netns], check=False)
    return [int(tok) for tok in proc.stdout.split() if tok.isdigit()]


def read_pid(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def sshd_running(spec: LabSpec, host: HostSpec) -> int | None:
    """PID of this host's sshd when it runs in the host's namespace with our config."""
    pid = read_pid(spec.pid_file(host))
    inode = netns_inode(host.netns)
    if pid is None or inode is None or not proc_alive(pid):
        return None
    if proc_netns_inode(pid) != inode or str(spec.sshd_config(host)) not in proc_cmdline(pid):
        return None
    return pid


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


# --------------------------------------------------------------------------------------
# Reconciling
# --------------------------------------------------------------------------------------


@dataclass
class Plan:
    """Actions taken (or, in check mode, that would be taken)."""

    check: bool
    actions: list[str] = field(default_factory=list)

    def act(self, what: str, *commands: Sequence[str], fn: Callable[[], None] | None = None) -> None:
        self.actions.append(what)
        if self.check:
            return
        for command in commands:
            run(command)
        if fn is not None:
            fn()

    @property
    def changed(self) -> bool:
        return bool(self.actions)


def write_file(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.chmod(mode)
    tmp.replace(path)


def file_differs(path: Path, text: str) -> bool:
    try:
        return path.read_text() != text
    except OSError:
        return True


def sshd_config_text(spec: LabSpec, host: HostSpec) -> str:
    sftp = "/usr/lib/openssh/sftp-server"
    lines = [
        f"# Generated by {SCRIPT_NAME} for lab host {host.name} ({host.netns}); rewritten by `up`.",
        f"ListenAddress {host.address.ip}:22",
        f"HostKey {spec.host_key(host)}",
        f"PidFile {spec.pid_file(host)}",
        f"AuthorizedKeysFile {spec.authorized_keys}",
        "AllowUsers root",
        "PermitRootLogin prohibit-password",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "UsePAM no",
        "StrictModes no",
        "UseDNS no",
        "PrintMotd no",
        "PrintLastLog no",
        "X11Forwarding no",
        "AllowTcpForwarding no",
        "PermitTunnel no",
        "MaxSessions 64",
        "MaxStartups 64:30:128",
        "LogLevel INFO",
        # No rc file per session, as on ESXi (busybox sh -c reads none): sshd runs no ~/.ssh/rc,
        # and SHLVL=1 makes the session's bash a nested shell, which skips ~/.bashrc (Debian's
        # bash sources it for a top-level `bash -c` started by sshd: ~0.15 s a session here).
        "PermitUserRC no",
        # sshd honours only the first SetEnv line: --host-env values go on this one
        f"SetEnv LAB_HOST={host.name} LAB_NETNS={host.netns} {NO_RC_ENV}" + "".join(f" {k}={v}" for k, v in host.env),
        # listed so that a changed --host-bind changes this file, which restarts sshd
        *(f"# --host-bind: {src} on {dst} (private mount namespace of this sshd)" for src, dst in host.binds),
    ]
    if Path(sftp).exists():
        lines.append(f"Subsystem sftp {sftp}")
    return "\n".join(lines) + "\n"


def known_hosts_text(spec: LabSpec) -> str | None:
    lines = []
    for host in spec.hosts:
        try:
            keytype, blob = spec.host_key(host).with_suffix(".pub").read_text().split()[:2]
        except (OSError, ValueError):
            return None
        lines.append(f"{host.address.ip} {keytype} {blob}")
    return "\n".join(lines) + "\n"


def _q(value: object) -> str:
    """A YAML scalar: JSON strings/numbers/null are valid YAML flow scalars."""
    return json.dumps(value)


def inventory_text(spec: LabSpec) -> str:
    common_args = " ".join(spec.ssh_options())
    lines = [
        f"# Generated by {SCRIPT_NAME} up --name {spec.name}; do not edit (rerun `up`).",
        "# Connection settings are inventory variables: no ansible.cfg is needed.",
        "all:",
        "  children:",
        "    lab:",
        "      hosts:",
    ]
    for host in spec.hosts:
        lines += [
            f"        {host.name}:",
            f"          ansible_host: {_q(str(host.address.ip))}",
            "          ansible_user: root",
            f"          ansible_ssh_private_key_file: {_q(str(spec.key))}",
            f"          ansible_ssh_common_args: {_q(common_args)}",
            "          ansible_python_interpreter: /usr/bin/python3",
            f"          lab_address: {_q(str(host.address.ip))}",
            f"          lab_prefixlen: {host.address.network.prefixlen}",
            f"          lab_mtu: {host.mtu}",
            f"          lab_netns: {_q(host.netns)}",
            f"          lab_ifname: {_q(HOST_IFNAME)}",
            f"          lab_veth: {_q(host.veth)}",
        ]
        if host.egress.rate_bps:  # the line rate of the shaped link, not the veth's 10000 Mb/s (% of line rate)
            lines.append(f"          paired_test_link_speed_mbps: {_q(host.egress.rate_bps / 1e6)}")
        if host.egress.rate_bps != spec.rate_bps:  # --host-rate: this host's own link rate
            rate_bps = host.egress.rate_bps
            lines += [
                f"          lab_rate: {_q(format_rate(rate_bps) if rate_bps else None)}",
                f"          lab_rate_bps: {_q(rate_bps)}",
            ]
    lines += [
        "      vars:",
        f"        lab_name: {_q(spec.name)}",
        f"        lab_bridge: {_q(spec.bridge)}",
        f"        lab_subnet: {_q(str(spec.subnet))}",
        f"        lab_controller_address: {_q(str(spec.controller.ip))}",
        f"        lab_rate: {_q(format_rate(spec.rate_bps) if spec.rate_bps else None)}",
        f"        lab_rate_bps: {_q(spec.rate_bps)}",
        f"        lab_flow_rate: {_q(format_rate(spec.flow_rate_bps) if spec.flow_rate_bps else None)}",
        f"        lab_flow_rate_bps: {_q(spec.flow_rate_bps)}",
        f"        lab_delay: {_q(format_delay(spec.delay_us) if spec.delay_us else None)}",
        f"        lab_ethernet_overhead: {_q(spec.ethernet_overhead)}",
        f"        lab_known_hosts: {_q(str(spec.known_hosts))}",
    ]
    return "\n".join(lines) + "\n"


def host_options(spec: LabSpec) -> JSONDict:
    """--host-env/--host-bind/--host-rate as given (only when used, so lab.json of other labs stays the same)."""
    options: JSONDict = {}
    rates = [f"{h.name}={format_rate(h.egress.rate_bps)}" for h in spec.hosts
             if h.egress.rate_bps is not None and h.egress.rate_bps != spec.rate_bps]  # fmt: skip
    if rates:
        options["host_rate"] = rates
    env = [f"{h.name}={k}={v}" for h in spec.hosts for k, v in h.env]
    binds = [f"{h.name}={src}:{dst}" for h in spec.hosts for src, dst in h.binds]
    if env:
        options["host_env"] = env
    if binds:
        options["host_bind"] = binds
    return options


def state_doc(spec: LabSpec) -> JSONDict:
    return {
        "version": STATE_VERSION,
        "name": spec.name,
        "bridge": spec.bridge,
        "subnet": str(spec.subnet),
        "controller_address": str(spec.controller.ip),
        "mtu": spec.mtu,
        "rate": format_rate(spec.rate_bps) if spec.rate_bps else None,
        "rate_bps": spec.rate_bps,
        "delay": format_delay(spec.delay_us) if spec.delay_us else None,
        "options": {
            "hosts": len(spec.hosts),
            "subnet": str(spec.subnet),
            "mtu": spec.mtu,
            "host_mtu": [f"{h.name}={h.mtu}" for h in spec.hosts if h.mtu != spec.mtu],
            "rate": format_rate(spec.rate_bps) if spec.rate_bps else None,
            "delay": format_delay(spec.delay_us) if spec.delay_us else None,
            "ethernet_overhead": spec.ethernet_overhead,
            **host_options(spec),
            **({"flow_rate": format_rate(spec.flow_rate_bps)} if spec.flow_rate_bps else {}),
        },
        "private_key": str(spec.key),
        "known_hosts": str(spec.known_hosts),
        "inventory": str(spec.inventory),
        "ssh": ["ssh", "-F", "/dev/null", "-i", str(spec.key), *spec.ssh_options(), "-l", "root"],
        "hosts": [
            {
                "name": host.name,
                "netns": host.netns,
                "netns_inode": netns_inode(host.netns),
                "address": str(host.address.ip),
                "prefixlen": host.address.network.prefixlen,
                "ifname": HOST_IFNAME,
                "veth": host.veth,
                "mtu": host.mtu,
                "egress": host.egress.describe(),
                "ingress": host.ingress.describe(),
                "sshd_config": str(spec.sshd_config(host)),
                "pid_file": str(spec.pid_file(host)),
            }
            for host in spec.hosts
        ],
    }


def shaping_commands(netns: str | None, dev: str, current: Shaping | None, desired: Shaping) -> list[list[str]]:
    commands: list[list[str]] = []
    if current is None or not current.empty:
        commands.append(tc_cmd(netns, "qdisc", "del", "dev", dev, "root"))
    tbf_args = []
    if desired.rate_bps is not None and desired.burst is not None and desired.limit is not None:
        tbf_args = ["tbf", "rate", f"{desired.rate_bps}bit", "burst", str(desired.burst), "limit", str(desired.limit)]
        if desired.overhead:
            tbf_args += ["overhead", str(desired.overhead)]
    if desired.delay_us is not None:
        netem = ["netem", "delay", f"{desired.delay_us}us", "limit", str(NETEM_LIMIT)]
        commands.append(tc_cmd(netns, "qdisc", "add", "dev", dev, "root", "handle", "1:", *netem))
        if tbf_args:
            commands.append(tc_cmd(netns, "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", *tbf_args))
    elif desired.flow_rate_bps is not None and desired.rate_bps is not None and desired.burst is not None:
        commands += flow_limit_commands(netns, dev, desired.rate_bps, desired.burst, desired.flow_rate_bps)
    elif tbf_args:
        commands.append(tc_cmd(netns, "qdisc", "add", "dev", dev, "root", "handle", "1:", *tbf_args))
    return commands


def flow_limit_commands(netns: str | None, dev: str, rate_bps: int, burst: int, flow_rate_bps: int) -> list[list[str]]:
    """htb root: link class 1:1 at rate, FLOW_CLASSES leaves at flow rate, a u32 hash of the source port picks one."""

    def htb_class(classid: str, rate: int, ceil: int, class_burst: int) -> list[str]:
        return tc_cmd(
            netns, "class", "add", "dev", dev, "parent", "1:" if classid == "1:1" else "1:1", "classid", classid,
            "htb", "rate", f"{rate}bit", "ceil", f"{ceil}bit", "burst", str(class_burst), "cburst", str(class_burst),
            "quantum", str(HTB_QUANTUM),
        )  # fmt: skip

    flow_burst = max(burst * flow_rate_bps // rate_bps, 16 * 1024)
    u32 = ("filter", "add", "dev", dev, "parent", "1:", "prio", "1", "protocol", "ip")
    commands = [
        tc_cmd(netns, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", str(HTB_DEFAULT_CLASS)),
        htb_class("1:1", rate_bps, rate_bps, burst),
        htb_class(f"1:{HTB_DEFAULT_CLASS}", max(rate_bps // 100, 8000), rate_bps, burst),
        *(
            htb_class(f"1:{FLOW_CLASS_BASE + i:x}", flow_rate_bps, flow_rate_bps, flow_burst)
            for i in range(FLOW_CLASSES)
        ),
        tc_cmd(netns, *u32, "handle", "2:", "u32", "divisor", str(FLOW_CLASSES)),
        # bits 1-6 of the source port (the word at offset 20 of an IPv4 header without options:
        # source port << 16 | destination port); connect() hands out even ports, so bit 0 is skipped
        tc_cmd(
            netns,
            *u32,
            "u32",
            "ht",
            "800::",
            "match",
            "u8",
            "0",
            "0",
            "hashkey",
            "mask",
            f"0x{(FLOW_CLASSES - 1) << 17:08x}",
            "at",
            "20",
            "link",
            "2:",
        ),
        *(
            tc_cmd(
                netns, *u32, "u32", "ht", f"2:{i:x}:", "match", "u8", "0", "0", "flowid", f"1:{FLOW_CLASS_BASE + i:x}"
            )
            for i in range(FLOW_CLASSES)
        ),
    ]
    return commands


LAB_RANGE = ipaddress.IPv4Network("198.18.0.0/15")


def is_safety_net(route: Mapping[str, Any]) -> bool:
    """The ``unreachable 198.18.0.0/15`` route the lab installs and keeps (see the module doc)."""
    return route.get("type") == "unreachable" and str(route.get("dst", "")) == str(LAB_RANGE)


def ensure_safety_net(plan: Plan) -> None:
    """Install ``unreachable 198.18.0.0/15`` in the main table unless it is there (idempotent)."""
    if any(is_safety_net(route) for route in run_json(["ip", "-j", "-4", "route", "show", "table", "main"])):
        return
    plan.act(
        f"add route unreachable {LAB_RANGE} (traffic to a vanished lab host fails here)",
        ["ip", "route", "replace", "unreachable", str(LAB_RANGE)],
    )


def preflight(spec: LabSpec, root_links: Mapping[str, JSONDict]) -> None:
    """Refuse to build on an address space the lab does not own."""
    for tool in ("ip", "tc", "ssh-keygen", "unshare", "hostname"):
        if shutil.which(tool) is None:
            raise LabError(f"`{tool}` not found in PATH: install iproute2/openssh-client/util-linux")
    if not Path("/usr/sbin/sshd").exists():
        raise LabError("/usr/sbin/sshd not found: apt-get install -y openssh-server")
    if spec.delay_us is not None and kernel_lacks_netem():
        raise LabError("--delay needs the sch_netem qdisc, which this kernel lacks (CONFIG_NET_SCH_NETEM is not set)")
    for name, link in root_links.items():
        if name == spec.bridge:
            continue
        for addr in link.get("addr_info", []):
            if addr.get("family") != "inet":
                continue
            theirs = ipaddress.IPv4Interface(f"{addr['local']}/{addr['prefixlen']}").network
            if theirs.overlaps(spec.subnet):
                raise LabError(
                    f"subnet {spec.subnet} overlaps {addr['local']}/{addr['prefixlen']} on {name}, which this lab "
                    "does not own; choose another --subnet inside 198.18.0.0/15 (or `down` the other lab)"
                )
    for route in run_json(["ip", "-j", "-4", "route", "show", "table", "all"]):
        dst, dev = str(route.get("dst", "")), str(route.get("dev", ""))
        if dev == spec.bridge or dst in ("", "default") or route.get("type") in ("local", "broadcast"):
            continue
        if is_safety_net(route):
            continue
        try:
            net = ipaddress.IPv4Network(dst if "/" in dst else f"{dst}/32", strict=False)
        except ValueError:
            continue
        if net.overlaps(spec.subnet) and net.prefixlen > 0:
            where = f"{route.get('type', 'unicast')} {dst}" + (f" dev {dev}" if dev else "")
            raise LabError(f"subnet {spec.subnet} overlaps route {where}; choose another --subnet")


def ensure_client_key(spec: LabSpec, plan: Plan) -> None:
    if not spec.key.exists() or not spec.key.with_suffix(".pub").exists():
        plan.act(
            f"generate lab client key {spec.key}",
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"{spec.name}-lab-controller", "-f", str(spec.key)],
        )
    pub = spec.key.with_suffix(".pub")
    text = pub.read_text() if pub.exists() else None
    if text is None or file_differs(spec.authorized_keys, text):
        plan.act(
            f"write {spec.authorized_keys}",
            fn=lambda: write_file(spec.authorized_keys, spec.key.with_suffix(".pub").read_text(), 0o600),
        )


def reconcile_bridge(spec: LabSpec, root: Mapping[str, JSONDict], plan: Plan) -> None:
    bridge = root.get(spec.bridge)
    if bridge is not None and link_kind(bridge) != "bridge":
        raise LabError(f"{spec.bridge} exists but is a {link_kind(bridge)}, not a bridge; remove it by hand")
    want = str(spec.controller)
    if bridge is None:
        plan.act(
            f"create bridge {spec.bridge} mtu {spec.mtu} with {want}",
            ["ip", "link", "add", "name", spec.bridge, "address", spec.bridge_mac, "type", "bridge", "stp_state", "0"],
            ["ip", "link", "set", "dev", spec.bridge, "addrgenmode", "none"],
            ["ip", "link", "set", "dev", spec.bridge, "mtu", str(spec.mtu)],
            ["ip", "addr", "add", want, "dev", spec.bridge],
            ["ip", "link", "set", "dev", spec.bridge, "up"],
        )
        return
    if not addrgen_none(bridge):
        plan.act(
            f"disable IPv6 address generation on {spec.bridge}",
            ["ip", "link", "set", "dev", spec.bridge, "addrgenmode", "none"],
        )
    if bridge.get("address") != spec.bridge_mac:
        plan.act(
            f"set MAC {bridge.get('address')} -> {spec.bridge_mac} on {spec.bridge}",
            ["ip", "link", "set", "dev", spec.bridge, "address", spec.bridge_mac],
            fn=functools.partial(flush_neighbors, spec, spec.controller.ip),
        )
    fix_addresses(None, spec.bridge, bridge, want, plan)
    if not link_is_up(bridge):
        plan.act(f"set {spec.bridge} up", ["ip", "link", "set", "dev", spec.bridge, "up"])


def flush_neighbors(spec: LabSpec, address: ipaddress.IPv4Address, older: set[str] | None = None) -> None:
    """Forget a re-plumbed lab address in the lab's own neighbour tables (bridge and host namespaces).

    ``older``: the namespaces that existed before this ``up`` (None: every existing one). A
    namespace created by this ``up`` has no entry to forget; skipping those keeps building
    N hosts at N flushes instead of N*N.
    """
    run(["ip", "neigh", "flush", "to", str(address), "dev", spec.bridge], check=False)
    existing = list_netns() if older is None else older & list_netns()
    for host in spec.hosts:
        if host.netns in existing and host.address.ip != address:
            run(ip_cmd(host.netns, "neigh", "flush", "to", str(address)), check=False)


def fix_addresses(netns: str | None, dev: str, link: Mapping[str, Any], want: str, plan: Plan) -> None:
    current = link_addresses(link)
    where = f"{netns}:{dev}" if netns else dev
    for addr in current:
        if addr != want:
            plan.act(f"remove address {addr} from {where}", ip_cmd(netns, "addr", "del", addr, "dev", dev))
    if want not in current:
        plan.act(f"add address {want} to {where}", ip_cmd(netns, "addr", "add", want, "dev", dev))


def reconcile_host(
    spec: LabSpec, host: HostSpec, root: Mapping[str, JSONDict], existing_ns: set[str], plan: Plan
) -> bool:
    """Converge one host's namespace, veth pair, addresses and shaping; True when re-plumbed."""
    fresh = False
    if host.netns not in existing_ns:
        plan.act(
            f"create namespace {host.netns}",
            ["ip", "netns", "add", host.netns],
            ip_cmd(host.netns, "link", "set", "lo", "up"),
        )
        inner: dict[str, JSONDict] = {}
        fresh = True
    else:
        inner = links(host.netns)
        lo = inner.get("lo")
        if lo is None or not link_is_up(lo):
            plan.act(f"set lo up in {host.netns}", ip_cmd(host.netns, "link", "set", "lo", "up"))

    outer = root.get(host.veth)
    eth = inner.get(HOST_IFNAME)
    if outer is not None and link_kind(outer) != "veth":
        raise LabError(f"{host.veth} exists but is a {link_kind(outer)}, not a veth; remove it by hand")
    paired = (
        outer is not None
        and eth is not None
        and link_kind(eth) == "veth"
        and outer.get("link_index") == eth.get("ifindex")
        and eth.get("link_index") == outer.get("ifindex")
    )
    if not paired:
        if outer is not None:
            plan.act(f"delete unpaired {host.veth}", ["ip", "link", "del", "dev", host.veth])
        if eth is not None:
            plan.act(
                f"delete unpaired {host.netns}:{HOST_IFNAME}", ip_cmd(host.netns, "link", "del", "dev", HOST_IFNAME)
            )
        mtu = str(host.mtu)
        peer = ["peer", "name", HOST_IFNAME, "address", host.mac, "netns", host.netns]
        plan.act(
            f"create veth {host.veth} <-> {host.netns}:{HOST_IFNAME} mtu {host.mtu} address {host.address}",
            ["ip", "link", "add", "name", host.veth, "address", host.veth_mac, "type", "veth", *peer],
            ["ip", "link", "set", "dev", host.veth, "addrgenmode", "none"],
            ip_cmd(host.netns, "link", "set", "dev", HOST_IFNAME, "addrgenmode", "none"),
            ["ip", "link", "set", "dev", host.veth, "mtu", mtu, "gso_max_segs", str(host.gso_max_segs)],
            ip_cmd(host.netns, "link", "set", "dev", HOST_IFNAME, "mtu", mtu, "gso_max_segs", str(host.gso_max_segs)),
            ["ip", "link", "set", "dev", host.veth, "master", spec.bridge],
            ip_cmd(host.netns, "addr", "add", str(host.address), "dev", HOST_IFNAME),
            ["ip", "link", "set", "dev", host.veth, "up"],
            ip_cmd(host.netns, "link", "set", "dev", HOST_IFNAME, "up"),
            fn=functools.partial(flush_neighbors, spec, host.address.ip, existing_ns),
        )
        fresh = True
    else:
        assert outer is not None and eth is not None
        for netns, dev, link, mac in (
            (None, host.veth, outer, host.veth_mac),
            (host.netns, HOST_IFNAME, eth, host.mac),
        ):
            where = f"{netns}:{dev}" if netns else dev
            if link.get("address") != mac:
                plan.act(
                    f"set MAC {link.get('address')} -> {mac} on {where}",
                    ip_cmd(netns, "link", "set", "dev", dev, "address", mac),
                    fn=functools.partial(flush_neighbors, spec, host.address.ip),
                )
            if not addrgen_none(link):
                plan.act(
                    f"disable IPv6 address generation on {where}",
                    ip_cmd(netns, "link", "set", "dev", dev, "addrgenmode", "none"),
                )
            if link.get("gso_max_segs", DEFAULT_GSO_MAX_SEGS) != host.gso_max_segs:
                plan.act(
                    f"set gso_max_segs {link.get('gso_max_segs')} -> {host.gso_max_segs} on {where}",
                    ip_cmd(netns, "link", "set", "dev", dev, "gso_max_segs", str(host.gso_max_segs)),
                )
            if link.get("mtu") != host.mtu:
                plan.act(
                    f"set mtu {link.get('mtu')} -> {host.mtu} on {where}",
                    ip_cmd(netns, "link", "set", "dev", dev, "mtu", str(host.mtu)),
                )
        if outer.get("master") != spec.bridge:
            plan.act(
                f"attach {host.veth} to {spec.bridge}", ["ip", "link", "set", "dev", host.veth, "master", spec.bridge]
            )
        fix_addresses(host.netns, HOST_IFNAME, eth, str(host.address), plan)
        for netns, dev, link in ((None, host.veth, outer), (host.netns, HOST_IFNAME, eth)):
            if not link_is_up(link):
                where = f"{netns}:{dev}" if netns else dev
                plan.act(f"set {where} up", ip_cmd(netns, "link", "set", "dev", dev, "up"))

    for netns, dev, desired in ((host.netns, HOST_IFNAME, host.egress), (None, host.veth, host.ingress)):
        current: Shaping | None = Shaping() if fresh else current_shaping(netns, dev)
        if not shaping_matches(current, desired):
            where = f"{netns}:{dev}" if netns else dev
            was = current.describe() if current is not None else "foreign qdisc"
            plan.act(f"shape {where}: {was} -> {desired.describe()}", *shaping_commands(netns, dev, current, desired))
    return fresh


def stop_pids(pids: Sequence[int], what: str) -> None:
    """SIGTERM, then SIGKILL; raise when something survives."""
    remaining = [p for p in pids if proc_alive(p)]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in remaining:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + KILL_WAIT
        while remaining and time.monotonic() < deadline:
            time.sleep(0.05)
            remaining = [p for p in remaining if proc_alive(p)]
        if not remaining:
            return
    raise LabError(f"{what}: processes {remaining} survived SIGKILL")


def sshd_listeners(netns: str) -> list[int]:
    """Every sshd listener in the namespace: ours, a stale one, or one from another state dir.

    Listeners show their command line ("sshd: /usr/sbin/sshd -f ..."); sessions do not
    ("sshd: root@notty") and are left alone.
    """
    return [
        pid for pid in netns_pids(netns) if proc_cmdline(pid).startswith(("sshd: /usr/sbin/sshd", "/usr/sbin/sshd"))
    ]


def mount_points_below(path: str) -> list[str]:
    """Mount points strictly below ``path`` (an overlay on ``path`` would hide them)."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    prefix = path.rstrip("/") + "/"
    points = (line.split()[4].encode().decode("unicode_escape") for line in lines if len(line.split()) > 4)
    return sorted({p for p in points if p.startswith(prefix)})


def mount_commands(spec: LabSpec, host: HostSpec) -> list[str]:
    """Shell commands that give the host's sshd its --host-bind mounts (run in its new mount namespace).

    A destination that does not exist on this machine gets a mount point without touching the real
    file system: its nearest existing parent is overlaid (in that namespace only) with a fresh
    upper dir under ``hosts/hN/overlay`` that holds the missing directories; writes elsewhere
    below that parent also land in the upper dir. Binds are applied in the order given.
    """
    base = spec.overlay_dir(host)
    shutil.rmtree(base, ignore_errors=True)
    missing: dict[Path, list[tuple[Path, bool]]] = {}
    for src, dst in host.binds:
        if not Path(src).exists():
            raise LabError(f"--host-bind {host.name}={src}:{dst}: {src} does not exist; create it first")
        target = Path(dst)
        if not target.exists():
            anchor = next(parent for parent in target.parents if parent.exists())
            if str(anchor) == "/" or mount_points_below(str(anchor)):
                raise LabError(
                    f"--host-bind {host.name}={src}:{dst}: {dst} does not exist and its parent {anchor} holds other"
                    " mounts (or is /), so it cannot be overlaid; bind onto an existing path instead"
                )
            missing.setdefault(anchor, []).append((target, Path(src).is_dir()))
    commands = []
    for index, (anchor, targets) in enumerate(sorted(missing.items())):
        upper, work = base / str(index) / "upper", base / str(index) / "work"
        work.mkdir(parents=True, exist_ok=True)
        upper.mkdir(parents=True, exist_ok=True)
        for target, is_dir in targets:
            point = upper / target.relative_to(anchor)
            if is_dir:
                point.mkdir(parents=True, exist_ok=True)
            else:
                point.parent.mkdir(parents=True, exist_ok=True)
                point.touch()
        options = f"lowerdir={anchor},upperdir={upper},workdir={work}"
        commands.append(shlex.join(["mount", "-t", "overlay", "overlay", "-o", options, str(anchor)]))
    commands += [shlex.join(["mount", "--bind", src, dst]) for src, dst in host.binds]
    return commands


def start_sshd(spec: LabSpec, host: HostSpec) -> None:
    run(["/usr/sbin/sshd", "-t", "-f", str(spec.sshd_config(host))])
    spec.pid_file(host).unlink(missing_ok=True)
    script = 'hostname "$0" && exec /usr/sbin/sshd -f "$1" -E "$2"'
    unshare = ["unshare", "--uts"]
    if host.binds:
        # own mount namespace, private propagation: the binds are seen by this sshd and its sessions only
        script = "set -e; " + "; ".join(mount_commands(spec, host)) + "; " + script
        unshare += ["--mount", "--propagation", "private"]
    config, log = str(spec.sshd_config(host)), str(spec.sshd_log(host))
    run(["ip", "netns", "exec", host.netns, *unshare, "--", "/bin/sh", "-c", script, host.netns, config, log])
    deadline = time.monotonic() + SSHD_READY_TIMEOUT
    while time.monotonic() < deadline:
        if sshd_running(spec, host) is not None and tcp_banner(str(host.address.ip), timeout=1.0):
            return
        time.sleep(0.05)
    log = spec.sshd_log(host).read_text()[-500:] if spec.sshd_log(host).exists() else ""
    raise LabError(
        f"sshd for {host.netns} did not answer on {host.address.ip}:22 within {SSHD_READY_TIMEOUT:.0f}s: {log}"
    )


def reconcile_sshd(spec: LabSpec, host: HostSpec, replumbed: bool, plan: Plan) -> None:
    key = spec.host_key(host)
    new_key = not key.exists() or not key.with_suffix(".pub").exists()
    if new_key:

        def keygen() -> None:
            spec.host_dir(host).mkdir(parents=True, exist_ok=True)
            key.unlink(missing_ok=True)
            key.with_suffix(".pub").unlink(missing_ok=True)
            run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"root@{host.netns}", "-f", str(key)])

        plan.act(f"generate host key for {host.netns}", fn=keygen)
    config = sshd_config_text(spec, host)
    config_changed = file_differs(spec.sshd_config(host), config)
    if config_changed:
        plan.act(f"write {spec.sshd_config(host)}", fn=lambda: write_file(spec.sshd_config(host), config, 0o600))
    pid = sshd_running(spec, host) if host.netns in list_netns() else None
    reachable = pid is not None and tcp_banner(str(host.address.ip), timeout=1.0) is not None
    if pid is not None and not config_changed and not replumbed and not new_key and reachable:
        return
    if pid is None:
        reason = "not running"
    elif config_changed:
        reason = "config changed"
    elif new_key:
        reason = "new host key"
    else:
        reason = "re-plumbed" if replumbed else "not answering"

    def restart() -> None:
        old = sshd_listeners(host.netns)
        if old:
            stop_pids(old, f"old sshd in {host.netns}")
        start_sshd(spec, host)

    plan.act(f"{'restart' if pid else 'start'} sshd in {host.netns} on {host.address.ip}:22 ({reason})", fn=restart)


def remove_extra_hosts(spec: LabSpec, root: Mapping[str, JSONDict], existing_ns: set[str], plan: Plan) -> None:
    wanted_ns = {h.netns for h in spec.hosts}
    wanted_veth = {h.veth for h in spec.hosts}
    for netns in sorted(n for n in existing_ns if host_netns_re(spec.name).match(n) and n not in wanted_ns):
        plan.act(f"remove extra host {netns}", fn=functools.partial(remove_netns, netns))
    for name in sorted(n for n in root if veth_re(spec.name).match(n) and n not in wanted_veth):
        plan.act(f"remove extra veth {name}", fn=functools.partial(delete_link, name))


def host_netns_re(name: str) -> re.Pattern[str]:
    return re.compile(rf"^{re.escape(name)}-h[1-9][0-9]*$")


def veth_re(name: str) -> re.Pattern[str]:
    return re.compile(rf"^{re.escape(name)}-v[1-9][0-9]*$")


def remove_netns(netns: str) -> None:
    stop_netns_processes(netns)
    delete_netns(netns)


def stop_netns_processes(netns: str) -> None:
    """Stop every process in the namespace (re-reading: a dying sshd may have forked)."""
    for _attempt in range(3):
        pids = [p for p in netns_pids(netns) if proc_alive(p)]
        if not pids:
            return
        stop_pids(pids, f"namespace {netns}")
    left = netns_pids(netns)
    if left:
        raise LabError(f"namespace {netns}: processes {left} keep coming back")


@contextlib.contextmanager
def locked(state_dir: Path) -> Iterator[None]:
    """Serialize up/down on one state dir (waits up to CMD_TIMEOUT)."""
    state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(state_dir / ".lock", "w") as handle:
        deadline = time.monotonic() + CMD_TIMEOUT
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError as exc:
                if time.monotonic() > deadline:
                    raise LabError(f"{state_dir} is locked by another run of {SCRIPT_NAME}") from exc
                time.sleep(0.1)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def lab_up(spec: LabSpec, check: bool) -> Plan:
    plan = Plan(check=check)
    root = links(None)
    preflight(spec, root)
    existing_ns = list_netns()

    if not check:
        spec.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not Path("/run/sshd").is_dir():
        plan.act(
            "create /run/sshd (sshd privilege separation directory)", fn=lambda: Path("/run/sshd").mkdir(mode=0o755)
        )
    ensure_safety_net(plan)
    ensure_client_key(spec, plan)
    reconcile_bridge(spec, root, plan)
    replumbed = {host.name: reconcile_host(spec, host, root, existing_ns, plan) for host in spec.hosts}
    remove_extra_hosts(spec, root, existing_ns, plan)

    # The bridge MTU is set explicitly (the controller's MTU on the lab network); an auto-MTU
    # bridge follows the smallest port, so look again after the ports changed.
    bridge = links(None).get(spec.bridge) if not check else root.get(spec.bridge)
    if bridge is not None and bridge.get("mtu") != spec.mtu:
        plan.act(
            f"set mtu {bridge.get('mtu')} -> {spec.mtu} on {spec.bridge}",
            ["ip", "link", "set", "dev", spec.bridge, "mtu", str(spec.mtu)],
        )

    for host in spec.hosts:
        reconcile_sshd(spec, host, replumbed[host.name], plan)

    known = known_hosts_text(spec)
    if known is None or file_differs(spec.known_hosts, known):
        plan.act(
            f"write {spec.known_hosts}", fn=lambda: write_file(spec.known_hosts, known_hosts_text(spec) or "", 0o644)
        )
    inventory = inventory_text(spec)
    if file_differs(spec.inventory, inventory):
        plan.act(f"write {spec.inventory}", fn=lambda: write_file(spec.inventory, inventory, 0o644))
    doc = json.dumps(state_doc(spec), indent=2) + "\n"
    if file_differs(spec.state_file, doc):
        plan.act(
            f"write {spec.state_file}",
            fn=lambda: write_file(spec.state_file, json.dumps(state_doc(spec), indent=2) + "\n"),
        )
    return plan


def orphan_sshd_pids(state_dir: Path, skip_netns: set[int]) -> list[int]:
    """sshd listeners started from this state dir outside the namespaces being deleted (e.g. one deleted by hand)."""
    marker = f"{state_dir}/hosts/"
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        cmdline = proc_cmdline(pid)
        ours = cmdline.startswith("sshd: /usr/sbin/sshd") and marker in cmdline
        if ours and proc_alive(pid) and proc_netns_inode(pid) not in skip_netns:
            found.append(pid)
    return found


def lab_down(name: str, state_dir: Path, check: bool, purge: bool) -> Plan:
    if not NAME_RE.match(name):
        raise LabError(f"--name {name!r}: use 1-11 lowercase letters/digits starting with a letter")
    state_dir = state_dir.resolve()
    plan = Plan(check=check)
    root = links(None)
    ns_re, v_re = host_netns_re(name), veth_re(name)
    lab_ns = sorted(n for n in list_netns() if ns_re.match(n))
    lab_inodes = {inode for n in lab_ns if (inode := netns_inode(n)) is not None}
    orphans = orphan_sshd_pids(state_dir, lab_inodes)
    for netns in lab_ns:
        pids = netns_pids(netns)
        if pids:
            plan.act(f"stop {len(pids)} process(es) in {netns}", fn=functools.partial(stop_netns_processes, netns))
        plan.act(f"delete namespace {netns}", fn=functools.partial(delete_netns, netns))
    if orphans:
        plan.act(f"stop orphaned sshd {orphans}", fn=lambda: stop_pids(orphans, "orphaned sshd"))
    for link_name in sorted(n for n in root if v_re.match(n) and link_kind(root[n]) == "veth"):
        plan.act(f"delete veth {link_name}", fn=functools.partial(delete_link, link_name))
    bridge = f"{name}-br0"
    if bridge in root and link_kind(root[bridge]) == "bridge":
        plan.act(f"delete bridge {bridge}", fn=lambda: delete_link(bridge))

    generated = [state_dir / n for n in ("inventory.yml", "known_hosts", "lab.json")]
    hosts_dir = state_dir / "hosts"
    if hosts_dir.is_dir():
        for host_dir in sorted(hosts_dir.iterdir()):
            generated += [host_dir / n for n in ("sshd_config", "sshd.pid", "sshd.log")]
            overlay = host_dir / "overlay"  # --host-bind upper dirs; their mounts died with the processes
            if overlay.is_dir() and not purge:
                plan.act(f"remove {overlay}", fn=functools.partial(shutil.rmtree, overlay))
    if purge and state_dir.exists():
        plan.act(f"remove state dir {state_dir}", fn=lambda: shutil.rmtree(state_dir))
    else:
        for path in generated:
            if path.exists():
                plan.act(f"remove {path}", fn=functools.partial(path.unlink, missing_ok=True))

    if not check:
        verify_gone(name)
    return plan


def delete_netns(netns: str) -> None:
    """Delete the veth from the root side first (synchronous), then the namespace."""
    for link_name in links(netns):
        if link_name != "lo":
            run(ip_cmd(netns, "link", "del", "dev", link_name), check=False)
    run(["ip", "netns", "del", netns])


def delete_link(name: str) -> None:
    proc = run(["ip", "link", "del", "dev", name], check=False)
    if proc.returncode != 0 and "Cannot find device" not in proc.stderr:
        raise LabError(f"`ip link del dev {name}` failed: {proc.stderr.strip()}")


def verify_gone(name: str, timeout: float = 5.0) -> None:
    """Namespace cleanup is asynchronous in the kernel: wait until nothing with the prefix remains."""
    ns_re, v_re = host_netns_re(name), veth_re(name)
    deadline = time.monotonic() + timeout
    while True:
        left = sorted(n for n in list_netns() if ns_re.match(n))
        left += sorted(n for n in links(None) if v_re.match(n) or n == f"{name}-br0")
        if not left:
            return
        if time.monotonic() > deadline:
            raise LabError(f"still present after down: {', '.join(left)}")
        time.sleep(0.1)


def lab_status(spec: LabSpec) -> JSONDict:
    root = links(None)
    existing = list_netns()
    bridge = root.get(spec.bridge)
    hosts = []
    for host in spec.hosts:
        present = host.netns in existing
        inner = links(host.netns) if present else {}
        eth = inner.get(HOST_IFNAME)
        pid = sshd_running(spec, host) if present else None
        hosts.append(
            {
                "name": host.name,
                "netns": host.netns,
                "present": present,
                "address": link_addresses(eth) if eth else [],
                "mtu": eth.get("mtu") if eth else None,
                "up": bool(eth and link_is_up(eth)),
                "egress": (s.describe() if (s := current_shaping(host.netns, HOST_IFNAME)) else "foreign")
                if eth
                else None,
                "ingress": (s.describe() if (s := current_shaping(None, host.veth)) else "foreign")
                if host.veth in root
                else None,
                "sshd_pid": pid,
                "ssh_banner": tcp_banner(str(host.address.ip), timeout=1.0) if pid else None,
                "processes": len(netns_pids(host.netns)) if present else 0,
            }
        )
    healthy = bridge is not None and all(h["present"] and h["up"] and h["ssh_banner"] for h in hosts)
    return {
        "name": spec.name,
        "bridge": {
            "name": spec.bridge,
            "present": bridge is not None,
            "mtu": bridge.get("mtu") if bridge else None,
            "addresses": link_addresses(bridge) if bridge else [],
        },
        "hosts": hosts,
        "extra_namespaces": sorted(
            n for n in existing if host_netns_re(spec.name).match(n) and n not in {h.netns for h in spec.hosts}
        ),
        "inventory": str(spec.inventory) if spec.inventory.exists() else None,
        "healthy": healthy,
    }


# --------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--name", default="esxilab", help="lab prefix: namespaces NAME-h1.., bridge NAME-br0")
    common.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR, help="keys, configs, inventory.yml")
    common.add_argument("--json", action="store_true", help="print a JSON document")
    shape = argparse.ArgumentParser(add_help=False)
    shape.add_argument("--hosts", type=int, help=f"number of hosts ({MIN_HOSTS}-{MAX_HOSTS}; default 4)")
    shape.add_argument("--subnet", help=f"lab subnet inside 198.18.0.0/15 (default {DEFAULT_SUBNET})")
    shape.add_argument("--mtu", type=int, help="MTU of the bridge and of every host (default 1500)")
    shape.add_argument("--host-mtu", action="append", default=[], metavar="HOST=MTU", help="per-host MTU, e.g. h2=9000")
    shape.add_argument("--rate", help="tbf rate per host and direction, e.g. 1gbit")
    shape.add_argument(
        "--host-rate",
        action="append",
        default=[],
        metavar="HOST=RATE",
        help="per-host rate instead of --rate (both directions), e.g. h4=300mbit",
    )
    shape.add_argument(
        "--flow-rate", help="with --rate: limit every flow a host sends to this rate too (htb + u32), e.g. 300mbit"
    )
    shape.add_argument("--delay", help="netem delay on what each host sends, e.g. 1ms")
    shape.add_argument(
        "--host-env",
        action="append",
        default=[],
        metavar="HOST=NAME=VALUE",
        help="environment variable of every SSH session on HOST (sshd SetEnv; PATH too), e.g. h1=PATH=/x:/usr/bin:/bin",
    )
    shape.add_argument(
        "--host-bind",
        action="append",
        default=[],
        metavar="HOST=SRC:DST",
        help="bind SRC on DST in HOST's sshd mount namespace only (a missing DST is overlaid, never created)",
    )
    shape.add_argument(
        "--ethernet-overhead",
        action="store_true",
        help="with --rate: charge 24 bytes/frame (preamble, FCS, gap) like a physical link; disables GSO on lab veths",
    )

    top = argparse.ArgumentParser(prog=SCRIPT_NAME, description=(__doc__ or "").split("\n\n", maxsplit=1)[0])
    sub = top.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", parents=[common, shape], help="build or converge the lab")
    up.add_argument("--check", action="store_true", help="report what would change; change nothing")
    down = sub.add_parser("down", parents=[common], help="remove every lab object and process")
    down.add_argument("--check", action="store_true", help="report what would be removed; change nothing")
    down.add_argument("--purge", action="store_true", help="also remove the generated keys (the whole state dir)")
    sub.add_parser("status", parents=[common, shape], help="report the lab (exit 0 when healthy)")
    return top


def saved_options(state_dir: Path, name: str) -> JSONDict:
    """The options of the last `up` (for `status` without options)."""
    try:
        doc = json.loads((state_dir / "lab.json").read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict) or doc.get("name") != name:
        return {}
    options = doc.get("options", {})
    return options if isinstance(options, dict) else {}


def require_root() -> None:
    if os.geteuid() != 0:
        raise LabError("must run as root (network namespaces, bridge, tc)")


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        require_root()
        state_dir: Path = args.state_dir.resolve()
        if args.command == "down":
            # Never create the state dir just to lock it: `down` on nothing must leave nothing.
            use_lock = not args.check and state_dir.is_dir()
            with locked(state_dir) if use_lock else contextlib.nullcontext():
                plan = lab_down(args.name, state_dir, args.check, args.purge)
            return report(args, plan, None)
        saved = saved_options(state_dir, args.name) if args.command == "status" else {}
        spec = build_spec(
            name=args.name,
            hosts=args.hosts if args.hosts is not None else int(saved.get("hosts", 4)),
            state_dir=state_dir,
            subnet=args.subnet or str(saved.get("subnet", DEFAULT_SUBNET)),
            mtu=args.mtu if args.mtu is not None else int(saved.get("mtu", 1500)),
            host_mtu=args.host_mtu or list(saved.get("host_mtu", [])),
            rate=args.rate or saved.get("rate"),
            flow_rate=args.flow_rate or saved.get("flow_rate"),
            delay=args.delay or saved.get("delay"),
            ethernet_overhead=args.ethernet_overhead or bool(saved.get("ethernet_overhead")),
            host_env=args.host_env or list(saved.get("host_env", [])),
            host_bind=args.host_bind or list(saved.get("host_bind", [])),
            host_rate=args.host_rate or list(saved.get("host_rate", [])),
        )
        if args.command == "status":
            status = lab_status(spec)
            if args.json:
                print(json.dumps(status, indent=2))
            else:
                print_status(status)
            return 0 if status["healthy"] else 1
        with locked(spec.state_dir) if not args.check else contextlib.nullcontext():
            plan = lab_up(spec, args.check)
        return report(args, plan, spec)
    except LabError as exc:
        if getattr(args, "json", False):
            print(json.dumps({"failed": True, "msg": str(exc)}))
        else:
            print(f"{SCRIPT_NAME}: error: {exc}", file=sys.stderr)
        return 2


def report(args: argparse.Namespace, plan: Plan, spec: LabSpec | None) -> int:
    doc: JSONDict = {
        "command": args.command,
        "name": args.name,
        "changed": plan.changed,
        "check": plan.check,
        "actions": plan.actions,
    }
    if spec is not None:
        doc["inventory"] = str(spec.inventory)
        doc["state_file"] = str(spec.state_file)
        doc["hosts"] = [
            {"name": h.name, "netns": h.netns, "address": str(h.address.ip), "mtu": h.mtu} for h in spec.hosts
        ]
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    verb = "would" if plan.check else "did"
    for action in plan.actions:
        print(f"{verb}: {action}")
    tail = f" inventory={spec.inventory}" if spec is not None and not (args.command == "up" and plan.check) else ""
    print(
        f"{args.command} {args.name}: changed={str(plan.changed).lower()}{' (check mode)' if plan.check else ''}{tail}"
    )
    return 0


def print_status(status: Mapping[str, Any]) -> None:
    bridge = status["bridge"]
    print(
        f"bridge {bridge['name']}: {'present' if bridge['present'] else 'absent'} "
        f"mtu={bridge['mtu']} addresses={bridge['addresses']}"
    )
    for h in status["hosts"]:
        print(
            f"{h['name']} {h['netns']}: {'present' if h['present'] else 'absent'} addr={h['address']} mtu={h['mtu']} "
            f"egress={h['egress']} ingress={h['ingress']} sshd={h['sshd_pid']} banner={h['ssh_banner']}"
        )
    if status["extra_namespaces"]:
        print(f"extra namespaces: {', '.join(status['extra_namespaces'])}")
    print(f"healthy={str(status['healthy']).lower()}")


if __name__ == "__main__":
    sys.exit(main())
