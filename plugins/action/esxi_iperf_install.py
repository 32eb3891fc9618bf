# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.esxi_iperf_install``: validate the options, run the backend.

The work is in ``plugins/plugin_utils/_esxi_install.py`` (parsing and planning in
``plugin_utils/esxi/``); this file lends the backend the connection's plain shell and, for
``vib_upload``, an upload into a temporary directory on the host that is removed afterwards.
ESXi needs no Python. Documentation: the module file of the same name.
"""

from __future__ import annotations

import os
import re
from typing import Any

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase

from ansible_collections.esxilab.iperf.plugins.plugin_utils._esxi_install import (
    ARGUMENT_SPEC,
    MUTUALLY_EXCLUSIVE,
    CommandOutput,
    EsxiInstallError,
    run,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils._esxi_journal import JournalError, journal_from_args

_SSH_NOTICE = re.compile(r"^Shared connection to \S+ closed\.\s*$")


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """Make iperf runnable on an ESXi host with esxcli and cp, and undo it."""

    # False: the temporary directory is made only when a vib_upload file must be uploaded,
    # not on every run (ActionBase makes one up front for TRANSFERS_FILES plugins)
    TRANSFERS_FILES = False

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        self._supports_check_mode = True
        self._supports_async = False
        result: dict[str, Any] = super().run(tmp, task_vars)
        del tmp  # tmp no longer has any effect

        _validation, args = self.validate_argument_spec(
            argument_spec=ARGUMENT_SPEC, mutually_exclusive=MUTUALLY_EXCLUSIVE
        )
        local_upload: str | None = None
        if args.get("vib_upload"):
            try:
                local_upload = str(self._find_needle("files", args["vib_upload"]))
            except AnsibleError as exc:
                result.update(failed=True, msg=f"esxilab.iperf.esxi_iperf_install: vib_upload: {exc.message}")
                return result

        def execute(command: str) -> CommandOutput:
            try:
                out = self._low_level_execute_command(command, sudoable=True)
            except AnsibleError as exc:  # a lost connection is a failed command: the result keeps 'restore'
                return CommandOutput(255, "", f"the connection failed: {exc}")
            # OpenSSH's own notice on a pty session is not the command's output
            stderr = "".join(
                line for line in str(out.get("stderr", "")).splitlines(keepends=True) if not _SSH_NOTICE.match(line)
            )
            return CommandOutput(int(out.get("rc", -1)), out.get("stdout", ""), stderr)

        def upload(local: str) -> str:
            remote_dir = self._connection._shell.tmpdir or self._make_tmp_path()
            remote = str(self._connection._shell.join_path(remote_dir, os.path.basename(local)))
            self._transfer_file(local, remote)
            return remote

        host = str((task_vars or {}).get("inventory_hostname", "host"))
        try:
            journal = journal_from_args(args, execute, host)
            result.update(
                run(
                    args,
                    execute,
                    check_mode=bool(self._task.check_mode),
                    upload=upload,
                    local_upload=local_upload,
                    journal=journal,
                )
            )
        except JournalError as exc:
            result.update(failed=True, msg=f"esxilab.iperf.esxi_iperf_install: {exc.message}")
        except EsxiInstallError as exc:
            result.update(exc.result)
            result.update(failed=True, msg=exc.message)
        finally:
            # the uploaded bundle (if any) goes with the temporary directory
            self._remove_tmp_path(self._connection._shell.tmpdir)
        return result
