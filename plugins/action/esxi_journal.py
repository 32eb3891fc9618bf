# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.esxi_journal``: validate the options, run the backend.

The work is in ``plugins/plugin_utils/esxi/journal_run.py`` (the journal itself in
``journal/store.py``); the ``EsxiHostAction`` base (``plugin_utils/esxi/action.py``) lends the backend
the connection's plain shell, so ESXi needs no Python. Documentation: the module file of the
same name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ansible_collections.esxilab.iperf.plugins.modules.esxi_journal import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi import journal_run as backend
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.action import EsxiHostAction
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.store import JournalError

ARGUMENT_SPEC = argument_spec(DOCUMENTATION)  # the options of the module's DOCUMENTATION


class ActionModule(EsxiHostAction):
    """Read, restore or clear the restore journal of an ESXi host."""

    NAME = "esxilab.iperf.esxi_journal"
    ARGUMENT_SPEC = ARGUMENT_SPEC

    def work(self, args: dict[str, Any], task_vars: Mapping[str, Any]) -> dict[str, Any]:
        journal = self.journal(args, task_vars)
        if journal is None:
            raise JournalError("journal_dir is empty: there is no journal to use")
        return backend.run(args, journal, self.execute, check_mode=self.check_mode)
