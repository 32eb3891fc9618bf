# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.esxi_firewall``: validate the options, run the backend.

The work is in ``plugin_utils/_esxi_firewall.py`` (parsing and planning in
``plugin_utils/esxi/``); this file lends the backend the connection's plain shell, so
ESXi needs no Python. Documentation: the module file of the same name.
"""

from __future__ import annotations

from typing import Any

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase

from ansible_collections.esxilab.iperf.plugins.plugin_utils._esxi_firewall import (
    ARGUMENT_SPEC,
    MUTUALLY_EXCLUSIVE,
    CommandOutput,
    EsxiFirewallError,
    run,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils._esxi_journal import JournalError, journal_from_args


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """Set the ESXi firewall's enabled state, default action and rulesets with esxcli."""

    TRANSFERS_FILES = False

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        self._supports_check_mode = True
        self._supports_async = False
        result: dict[str, Any] = super().run(tmp, task_vars)
        del tmp  # tmp no longer has any effect

        _validation, args = self.validate_argument_spec(
            argument_spec=ARGUMENT_SPEC, mutually_exclusive=MUTUALLY_EXCLUSIVE
        )

        def execute(command: str) -> CommandOutput:
            try:
                out = self._low_level_execute_command(command, sudoable=True)
            except AnsibleError as exc:  # a lost connection is a failed command: the result keeps 'restore'
                return CommandOutput(255, "", f"the connection failed: {exc}")
            return CommandOutput(int(out.get("rc", -1)), out.get("stdout", ""), out.get("stderr", ""))

        host = str((task_vars or {}).get("inventory_hostname", "host"))
        try:
            journal = journal_from_args(args, execute, host)
            result.update(run(args, execute, check_mode=bool(self._task.check_mode), journal=journal))
        except JournalError as exc:
            result.update(failed=True, msg=f"esxilab.iperf.esxi_firewall: {exc.message}")
        except EsxiFirewallError as exc:
            result.update(exc.result)
            result.update(failed=True, msg=exc.message)
        return result
