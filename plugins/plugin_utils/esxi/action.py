# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The base of the actions that change an ESXi host (and keep the restore journal): ``esxi_firewall``,
``esxi_iperf_install``, ``esxi_journal``.

:class:`EsxiHostAction` is the generic :class:`~..host.action.HostAction` (validate, run the
backend over the plain shell, turn its error into ``failed``/``msg``) plus the restore journal the
options ask for, and the journal's errors, whose message does not name the module, named with it.
The only module of ``esxi/`` that imports Ansible (through ``HostAction``).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.action import HostAction
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import HostError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.store import (
    Journal,
    JournalError,
    journal_from_args,
)

__all__ = ["EsxiHostAction"]


class EsxiHostAction(HostAction):
    """:class:`HostAction` with the host's restore journal."""

    def failure(self, exc: HostError) -> dict[str, Any]:
        if isinstance(exc, JournalError):  # the journal's messages do not name the module
            return {"failed": True, "msg": f"{self.NAME}: {exc.message}"}
        return super().failure(exc)

    def journal(self, args: Mapping[str, Any], task_vars: Mapping[str, Any]) -> Journal | None:
        """The restore journal the options ask for (``None`` when ``journal_dir`` is empty)."""
        return journal_from_args(args, self.execute, str(task_vars.get("inventory_hostname", "host")))
