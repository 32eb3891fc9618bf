# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Linux part of the restore journal: an interface's MTU, address, state and persistent setting, over ``sh``.

``link.IF.mtu`` entries (``journal.store.link_entries``) are written by ``esxi_journal``
``mode: record`` before a playbook changes an interface's MTU (``playbooks/mtu-compare.yml``) and
by ``guest_network`` (``guest/run.py``) before it changes a guest's test interface; that one also
writes ``link.IF.addr`` (the address it adds), ``link.IF.down`` (the interface was down) and
``link.IF.persist`` (the persistent setting it creates: a NetworkManager connection or a netplan /
ifupdown file of its own name). ``esxi_journal mode: restore`` puts them back here
(:func:`restore_links`): each entry on its own (best effort), per interface the persistent setting
first, then the address, the MTU and the state; each entry is dropped in the same command that put
its value back. An address or a state of an interface that is gone went with it: the entry is
dropped (nothing is left to put back); a gone interface's MTU is kept and named, as before.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import Execute
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.store import Journal, JournalError, link_entries

__all__ = ["read_mtus", "restore_config", "restore_links", "restore_mtus"]


def _read_mtu(execute: Execute, name: str) -> int | None:
    out = execute(f"cat /sys/class/net/{shlex.quote(name)}/mtu")
    text = out.stdout.strip()
    return int(text) if out.rc == 0 and text.isdigit() else None


def read_mtus(execute: Execute, names: Sequence[str]) -> dict[str, int]:
    """The MTU of each interface now (raises :class:`JournalError` naming one that cannot be read)."""
    link_entries(dict.fromkeys(names, 1500))  # the names are checked before anything runs
    out: dict[str, int] = {}
    for name in names:
        mtu = _read_mtu(execute, name)
        if mtu is None:
            raise JournalError(
                f"links: cannot read the MTU of interface {name!r} (/sys/class/net/{name}/mtu). Fix: name an"
                " interface of this Linux host in links"
            )
        out[name] = mtu
    return out


def restore_mtus(
    execute: Execute, journal: Journal, mtus: Mapping[str, int], *, check_mode: bool
) -> tuple[dict[str, int], list[str], dict[str, str]]:
    """Put every recorded MTU back: (put back, commands, left -> why). Entries already right are dropped."""
    back: dict[str, int] = {}
    commands: list[str] = []
    left: dict[str, str] = {}
    matching: list[str] = []
    for name, mtu in mtus.items():
        key = f"link.{name}.mtu"
        now = _read_mtu(execute, name)
        if now is None:
            left[key] = f"interface {name} is gone or unreadable (/sys/class/net/{name}/mtu)"
            continue
        if now == mtu:
            matching.append(key)
            back[name] = mtu
            continue
        command = f"ip link set dev {shlex.quote(name)} mtu {int(mtu)}"
        commands.append(command)
        if check_mode:
            back[name] = mtu
            continue
        out = execute(journal.dropping(command, [key]))
        if out.rc != 0 or _read_mtu(execute, name) != mtu:
            left[key] = f"'{command}' failed (exit status {out.rc}): {(out.stderr or out.stdout).strip()[:200]}"
            continue
        back[name] = mtu
    if matching and not check_mode:
        journal.clear(keys=matching)
    return back, commands, left


def _gone(execute: Execute, name: str) -> bool:
    return execute(f"[ -e /sys/class/net/{shlex.quote(name)} ]").rc != 0


def config_commands(name: str, config: Mapping[str, str]) -> list[tuple[str, str]]:
    """``(key, command)`` putting back ``config`` of interface ``name``: persistent setting, address, state."""
    q = shlex.quote(name)
    out: list[tuple[str, str]] = []
    persist = config.get("persist")
    if persist is not None:
        kind, _sep, what = persist.partition(":")
        w = shlex.quote(what)
        command = (
            f"if nmcli -g NAME connection show 2>/dev/null | grep -qxF {w}; then nmcli connection delete id {w}; fi"
            if kind == "nm"
            else f"rm -f -- {w}"
        )
        out.append((f"link.{name}.persist", command))
    address = config.get("addr")
    if address is not None:
        a, words = shlex.quote(address), shlex.quote(f" {address} ")
        command = f"if ip -o addr show dev {q} | grep -qF {words}; then ip addr del {a} dev {q}; fi"
        out.append((f"link.{name}.addr", command))
    if config.get("down") == "true":
        out.append((f"link.{name}.down", f"ip link set dev {q} down"))
    return out


def restore_config(
    execute: Execute, journal: Journal, config: Mapping[str, Mapping[str, str]], *, check_mode: bool
) -> tuple[dict[str, dict[str, str]], list[str], dict[str, str]]:
    """Put back every interface's recorded settings besides the MTU: (put back, commands, left -> why)."""
    back: dict[str, dict[str, str]] = {}
    commands: list[str] = []
    left: dict[str, str] = {}
    for name, values in config.items():
        gone = _gone(execute, name)
        for key, command in config_commands(name, values):
            kind = key.rpartition(".")[2]
            if gone and kind != "persist":  # the address and the state went with the interface
                if not check_mode:
                    journal.clear(keys=[key])
                back.setdefault(name, {})[kind] = values[kind]
                continue
            commands.append(command)
            if not check_mode:
                out = execute(journal.dropping(command, [key]))
                if out.rc != 0:
                    left[key] = f"'{command}' failed (exit status {out.rc}): {(out.stderr or out.stdout).strip()[:200]}"
                    continue
            back.setdefault(name, {})[kind] = values[kind]
    return back, commands, left


def restore_links(
    execute: Execute, journal: Journal, link: Mapping[str, Any], *, check_mode: bool
) -> tuple[dict[str, Any], list[str], dict[str, str]]:
    """The ``link`` scope put back (settings, then MTUs): (put back, commands, left -> why)."""
    back: dict[str, Any] = {}
    config, config_cmds, left = restore_config(execute, journal, link.get("config") or {}, check_mode=check_mode)
    mtus, mtu_cmds, mtu_left = restore_mtus(execute, journal, link.get("mtu") or {}, check_mode=check_mode)
    if config:
        back["config"] = config
    if mtus:
        back["mtu"] = mtus
    return back, config_cmds + mtu_cmds, {**left, **mtu_left}
