# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's network objects: preflight and safety net, bridge, each host's namespace and veth pair, removal.

Safety: addresses come only from 198.18.0.0/15 (RFC 2544) and are only configured on the
lab bridge and inside the lab namespaces; ``up`` refuses a subnet that overlaps an address
or route the lab does not own. ``up`` also makes sure the machine has the route
``unreachable 198.18.0.0/15`` (the safety net; ``down`` keeps it): the lab's own connected
route is more specific, so lab traffic flows, but a packet for a lab host that has gone (a
namespace removed under a running play) fails at once with "No route to host" instead of
following the default route off the machine. That route is the only one ``up`` accepts
over its subnet. No iptables/nftables rule, no sysctl and no other route is touched. Every
command runs with a timeout.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .common import HOST_IFNAME, LAB_RANGE, JSONDict, LabError, Plan, ip_cmd, run, run_json
from .observe import addrgen_none, kernel_lacks_netem, link_addresses, link_is_up, link_kind, links, list_netns
from .procs import stop_netns_processes
from .shaping import DEFAULT_GSO_MAX_SEGS, Shaping, current_shaping, shaping_commands, shaping_matches
from .spec import HostSpec, LabSpec


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
