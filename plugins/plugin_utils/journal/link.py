# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Linux part of the restore journal: an interface's MTU, read and put back with ``ip link`` over ``sh``.

``link.IF.mtu`` entries (``journal.store.link_entries``) are written by ``esxi_journal``
``mode: record`` before a playbook changes an interface's MTU (``playbooks/mtu-compare.yml``),
and put back here by ``esxi_journal mode: restore``: each interface on its own (best effort), the
entry dropped in the same command that put the value back.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import Execute
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.store import Journal, JournalError, link_entries

__all__ = ["read_mtus", "restore_mtus"]


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
