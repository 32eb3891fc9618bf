# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run one esxcli command checked: its stdout, or the backend's error naming the command and esxcli's message.

Plain data; no Ansible import, no I/O beyond the ``execute`` callable a caller passes in.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import failure_from_output
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import Execute, HostError

__all__ = ["checked"]


def checked(execute: Execute, command: str, *, name: str, error: type[HostError] = HostError) -> str:
    """Run an esxcli ``command``; its stdout, or ``error`` naming the command and esxcli's message.

    ``name`` (the module's name) starts the message.
    """
    out = execute(command)
    failure = failure_from_output(out.text, out.rc)
    if failure is not None:
        label = f"[{failure.error_class}] " if failure.error_class else ""
        raise error(f"{name}: '{command}' failed (exit status {out.rc}): {label}{failure.message}")
    return out.stdout
