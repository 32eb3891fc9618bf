# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``up``, ``down`` and ``status`` of a whole lab.

Idempotence: ``up`` reads the current objects (``ip netns``, ``ip link``, ``ip addr``,
``tc qdisc``, sshd pid + namespace inode + command line, generated files) and changes only
what differs; it reports ``changed=false`` when nothing differs. ``--check`` reports the
actions it would take and changes nothing.
"""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

from .common import HOST_IFNAME, NAME_RE, JSONDict, LabError, Plan, file_differs, write_file
from .network import (
    delete_link,
    delete_netns,
    ensure_safety_net,
    host_netns_re,
    preflight,
    reconcile_bridge,
    reconcile_host,
    remove_extra_hosts,
    verify_gone,
    veth_re,
)
from .observe import link_addresses, link_is_up, link_kind, links, list_netns, netns_inode, tcp_banner
from .procs import netns_pids, stop_netns_processes, stop_pids
from .shaping import current_shaping
from .spec import LabSpec
from .sshd import ensure_client_key, known_hosts_text, orphan_sshd_pids, reconcile_sshd, sshd_running
from .state import inventory_text, state_doc


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
