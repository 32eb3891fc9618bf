# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.esxi_journal``: validate the options, run the backend.

The work is in ``plugins/plugin_utils/_esxi_journal_run.py`` (the journal itself in
``_esxi_journal.py``); this file lends the backend the connection's plain shell, so ESXi needs
no Python. Documentation: the module file of the same name.
"""

from __future__ import annotations

from typing import Any

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase

from ansible_collections.esxilab.iperf.plugins.plugin_utils import _esxi_firewall, _esxi_install
from ansible_collections.esxilab.iperf.plugins.plugin_utils._esxi_journal import (
    JournalError,
    journal_from_args,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils._esxi_journal_run import (
    ARGUMENT_SPEC,
    EsxiJournalError,
    run,
)


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """Read, restore or clear the restore journal of an ESXi host."""

    TRANSFERS_FILES = False

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        self._supports_check_mode = True
        self._supports_async = False
        result: dict[str, Any] = super().run(tmp, task_vars)
        del tmp  # tmp no longer has any effect

        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)

        def shell(command: str) -> tuple[int, str, str]:
            try:
                out = self._low_level_execute_command(command, sudoable=True)
            except AnsibleError as exc:  # a lost connection is a failed command
                return 255, "", f"the connection failed: {exc}"
            return int(out.get("rc", -1)), str(out.get("stdout", "")), str(out.get("stderr", ""))

        def firewall_execute(command: str) -> _esxi_firewall.CommandOutput:
            return _esxi_firewall.CommandOutput(*shell(command))

        def install_execute(command: str) -> _esxi_install.CommandOutput:
            return _esxi_install.CommandOutput(*shell(command))

        host = str((task_vars or {}).get("inventory_hostname", "host"))
        try:
            journal = journal_from_args(args, install_execute, host)
            if journal is None:
                raise JournalError("journal_dir is empty: there is no journal to use")
            result.update(run(args, journal, firewall_execute, install_execute, check_mode=bool(self._task.check_mode)))
        except JournalError as exc:
            result.update(failed=True, msg=f"esxilab.iperf.esxi_journal: {exc.message}")
        except EsxiJournalError as exc:
            result.update(exc.result)
            result.update(failed=True, msg=exc.message)
        return result
