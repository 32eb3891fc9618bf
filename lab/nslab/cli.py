# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Local lab: N Linux network namespaces with real OpenSSH servers on a Linux bridge.

The command line of ``lab/esxilab_lab.py``: ``up``, ``status``, ``down`` and what they print.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .common import DEFAULT_STATE_DIR, DEFAULT_SUBNET, MAX_HOSTS, MIN_HOSTS, SCRIPT_NAME, JSONDict, LabError, Plan
from .lifecycle import lab_down, lab_status, lab_up
from .options import build_spec
from .spec import LabSpec
from .state import locked, saved_options


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
