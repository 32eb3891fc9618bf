# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The persistent setting of the test interface (``guest_network_persist``): detected, rendered, planned.

The role writes only settings of its own, named after the interface, and never edits the guest's:

==================  ===============================================  =================================
kind                what                                             chosen (``auto``) when
==================  ===============================================  =================================
``networkmanager``  connection ``esxilab-iperf-IF`` (``nmcli``)      NetworkManager runs and manages IF
``netplan``         ``/etc/netplan/60-esxilab-iperf-IF.yaml``       ``/etc/netplan`` has a ``*.yaml``
``ifupdown``        ``/etc/network/interfaces.d/esxilab-iperf-IF``   ``/etc/network/interfaces`` exists
==================  ===============================================  =================================

The runtime change is made with ``ip`` (``plan.py``) in every case; a netplan or ifupdown file
takes effect at the next boot (or ``netplan apply`` / ``ifup``), a NetworkManager connection is
activated at once (``nmcli connection up``: NetworkManager would otherwise manage the interface
by its own default). What the role creates is journaled (``link.IF.persist``) and removed by a
restore. Plain data; no Ansible import, no I/O. Private module: not part of the collection's public API.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.guest.request import GuestNetworkError, Request, option
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.store import persist_value

__all__ = [
    "NM_FIELDS",
    "PersistPlan",
    "PersistState",
    "detect",
    "nm_values",
    "parse_nm_fields",
    "parse_probe",
    "path_of",
    "plan_persist",
    "probe_script",
    "render_ifupdown",
    "render_netplan",
]

#: The fields of a NetworkManager connection the role sets and compares (``nmcli -g``, in this order).
NM_FIELDS = (
    "connection.interface-name",
    "802-3-ethernet.mac-address",
    "802-3-ethernet.mtu",
    "ipv4.method",
    "ipv4.addresses",
    "ipv6.method",
    "ipv6.addresses",
)
_HEADER = "# esxilab.iperf guest_network: the test address of the vNIC {mac} (removed by playbooks/restore.yml)\n"


@dataclass(frozen=True, slots=True)
class PersistState:
    """What the probe read about the guest's network configuration."""

    nm_running: bool = False
    #: NetworkManager's device -> state (``nmcli -t -f DEVICE,STATE device status``)
    nm_devices: Mapping[str, str] = field(default_factory=dict)
    netplan_files: Sequence[str] = ()
    #: ``/etc/network/interfaces`` exists; the lines of it that source other files
    interfaces: bool = False
    interfaces_sources: Sequence[str] = ()
    #: the content of the role's own files (path -> text)
    files: Mapping[str, str] = field(default_factory=dict)
    #: the role's own NetworkManager connections: name -> the values of NM_FIELDS
    connections: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PersistPlan:
    kind: str
    #: the file or the connection name
    target: str
    changes: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    #: ``link.IF.persist`` to journal before the change (only when the setting is created)
    journal: str | None = None
    before: str | None = None
    after: str | None = None


def path_of(kind: str, name: str) -> str:
    """The role's file (or, for NetworkManager, connection name) for interface ``name``."""
    return persist_value(kind, name).partition(":")[2]


def _sources_interfaces_d(lines: Sequence[str]) -> bool:
    pattern = re.compile(r"^\s*source(-directory)?\s+(/etc/network/)?interfaces\.d(/\*|/)?\s*$")
    return any(pattern.match(line) for line in lines)


def detect(kind: str, state: PersistState, name: str) -> str:
    """The persistent setting to write for interface ``name`` (``kind`` auto or one of them; raises on none)."""
    nm = state.nm_running and state.nm_devices.get(name, "unmanaged") != "unmanaged"
    where = option("persist_with")
    if kind == "auto":
        if nm:
            return "networkmanager"
        if state.netplan_files:
            return "netplan"
        if state.interfaces:
            kind = "ifupdown"
        else:
            raise GuestNetworkError(
                f"{option('persist')}: the guest uses none of the configurations the role writes - NetworkManager does"
                f" not manage {name}, /etc/netplan has no *.yaml, there is no /etc/network/interfaces. Fix: set"
                f" {option('persist')}: false (the runtime setting is made and put back all the same), or make the"
                " interface persistent by hand"
            )
    if kind == "networkmanager" and not nm:
        raise GuestNetworkError(
            f"{where}: NetworkManager {'does not manage ' + name if state.nm_running else 'does not run'} on the guest."
            f" Fix: give {where}: auto (the configuration the guest uses), or let NetworkManager manage {name}"
        )
    if kind == "ifupdown" and not _sources_interfaces_d(state.interfaces_sources):
        raise GuestNetworkError(
            f"{where}: /etc/network/interfaces"
            f" {'does not source' if state.interfaces else 'does not exist, so nothing reads'}"
            " /etc/network/interfaces.d, where the role writes its file. Fix: add the line"
            " 'source /etc/network/interfaces.d/*' to /etc/network/interfaces, or give another"
            f" {where}"
        )
    return kind


def render_netplan(name: str, request: Request) -> str:
    """The netplan file: the vNIC matched by its MAC (the interface name may change across boots)."""
    lines = [
        _HEADER.format(mac=request.mac).rstrip("\n"),
        "network:",
        "  version: 2",
        "  ethernets:",
        f"    esxilab-iperf-{name}:",
        "      match:",
        f'        macaddress: "{request.mac}"',
        "      addresses:",
        f'        - "{request.address}"',
    ]
    if request.mtu is not None:
        lines.append(f"      mtu: {int(request.mtu)}")
    return "\n".join(lines) + "\n"


def render_ifupdown(name: str, request: Request) -> str:
    """The ifupdown stanza of interface ``name`` (``inet`` or ``inet6 static``)."""
    family = "inet6" if request.address.version == 6 else "inet"
    lines = [
        _HEADER.format(mac=request.mac).rstrip("\n"),
        f"allow-hotplug {name}",
        f"iface {name} {family} static",
        f"    address {request.address}",
    ]
    if request.mtu is not None:
        lines.append(f"    mtu {int(request.mtu)}")
    return "\n".join(lines) + "\n"


def nm_values(name: str, request: Request) -> dict[str, str]:
    """The NM_FIELDS the connection must have (the MTU only when one is asked for)."""
    v6 = request.address.version == 6
    values = {
        "connection.interface-name": name,
        "802-3-ethernet.mac-address": str(request.mac).upper(),
        "ipv4.method": "disabled" if v6 else "manual",
        "ipv4.addresses": "" if v6 else str(request.address),
        "ipv6.method": "manual" if v6 else "ignore",
        "ipv6.addresses": str(request.address) if v6 else "",
    }
    if request.mtu is not None:
        values["802-3-ethernet.mtu"] = str(int(request.mtu))
    return values


def parse_nm_fields(text: str) -> dict[str, str]:
    """``nmcli -g NM_FIELDS connection show id NAME``: one value a line, ``\\:`` unescaped."""
    values = [line.replace("\\:", ":") for line in text.split("\n")]
    return dict(zip(NM_FIELDS, values, strict=False))


def _write(path: str, text: str) -> str:
    """Shell: write ``text`` to ``path`` (mode 0600) through a temporary file in its directory, then rename."""
    directory = shlex.quote(path.rsplit("/", 1)[0])
    return (
        f"( umask 077 && mkdir -p {directory} && _t=$(mktemp {directory}/.esxilab-iperf.XXXXXX) &&"
        f' printf \'%s\' {shlex.quote(text)} >"$_t" && chmod 600 "$_t" && mv -f "$_t" {shlex.quote(path)} )'
    )


def plan_persist(kind: str, name: str, request: Request, state: PersistState) -> PersistPlan:
    """What makes the persistent setting of ``kind`` for interface ``name`` what ``request`` asks."""
    target = path_of(kind, name)
    if kind == "networkmanager":
        want = nm_values(name, request)
        now = state.connections.get(target)
        shown = "; ".join(f"{k}={v}" for k, v in want.items())
        nm_args = " ".join(f"{k} {shlex.quote(v)}" for k, v in want.items() if k != "connection.interface-name")
        up = f"nmcli connection up id {shlex.quote(target)}"
        if now is None:
            return PersistPlan(
                kind,
                target,
                [f"NetworkManager connection {target} created and activated"],
                [
                    f"nmcli connection add type ethernet con-name {shlex.quote(target)} ifname {shlex.quote(name)}"
                    f" connection.autoconnect yes {nm_args}",
                    up,
                ],
                journal=persist_value(kind, name),
                after=shown,
            )
        differs = {k: v for k, v in want.items() if now.get(k, "") != v}
        if not differs:
            return PersistPlan(kind, target, before=shown, after=shown)
        before = "; ".join(f"{k}={now.get(k, '')}" for k in want)
        return PersistPlan(
            kind,
            target,
            [
                f"NetworkManager connection {target}: "
                + ", ".join(f"{k} {now.get(k, '')!r} -> {v!r}" for k, v in differs.items())
            ],
            [f"nmcli connection modify id {shlex.quote(target)} {nm_args}", up],
            before=before,
            after=shown,
        )
    text = render_netplan(name, request) if kind == "netplan" else render_ifupdown(name, request)
    now_text = state.files.get(target)
    if now_text == text:
        return PersistPlan(kind, target, before=now_text, after=text)
    return PersistPlan(
        kind,
        target,
        [f"{target} {'written' if now_text is None else 'rewritten'}"],
        [_write(target, text)],
        journal=persist_value(kind, name) if now_text is None else None,
        before=now_text,
        after=text,
    )


def probe_script(marker: Any) -> str:
    """Shell reading :class:`PersistState` (``marker(name, args)`` prints a section's marker line)."""
    return "\n".join(
        [
            'if command -v nmcli >/dev/null 2>&1 && [ "$(nmcli -t -f RUNNING general 2>/dev/null)" = running ]; then',
            "  " + marker("nm-devices"),
            "  nmcli -t -f DEVICE,STATE device status 2>/dev/null",
            "  for _c in $(nmcli -g NAME connection show 2>/dev/null | grep '^esxilab-iperf-[A-Za-z0-9._-]*$'); do",
            "    " + marker("nm-connection", "$_c"),
            f'    nmcli -g {",".join(NM_FIELDS)} connection show id "$_c" 2>/dev/null',
            "  done",
            "fi",
            marker("netplan"),
            'for _f in /etc/netplan/*.yaml; do [ -f "$_f" ] && printf \'%s\\n\' "$_f"; done',
            "if [ -f /etc/network/interfaces ]; then",
            "  " + marker("interfaces"),
            "  grep -E '^[[:space:]]*source' /etc/network/interfaces",
            "fi",
            "for _f in /etc/netplan/60-esxilab-iperf-*.yaml /etc/network/interfaces.d/esxilab-iperf-*; do",
            '  [ -f "$_f" ] && [ ! -L "$_f" ] || continue',
            "  " + marker("file", "$_f"),
            '  head -c 4000 "$_f"',
            "done",
        ]
    )


def parse_probe(sections: Sequence[Any]) -> PersistState:
    """:class:`PersistState` from the sections :func:`probe_script` printed (``name``, ``args``, ``text``)."""
    nm_running = False
    devices: dict[str, str] = {}
    connections: dict[str, dict[str, str]] = {}
    netplan: list[str] = []
    interfaces = False
    sources: list[str] = []
    files: dict[str, str] = {}
    for section in sections:
        if section.name == "nm-devices":
            nm_running = True
            for line in section.text.splitlines():
                device, _sep, rest = line.partition(":")
                devices[device] = rest.split(":")[0]
        elif section.name == "nm-connection":
            connections[section.args] = parse_nm_fields(section.text)
        elif section.name == "netplan":
            netplan = [line for line in section.text.splitlines() if line]
        elif section.name == "interfaces":
            interfaces = True
            sources = section.text.splitlines()
        elif section.name == "file":
            files[section.args] = section.text
    ours = [f for f in netplan if re.search(r"/60-esxilab-iperf-[^/]*\.yaml$", f)]
    return PersistState(
        nm_running=nm_running,
        nm_devices=devices,
        netplan_files=[f for f in netplan if f not in ours],
        interfaces=interfaces,
        interfaces_sources=sources,
        files=files,
        connections=connections,
    )
