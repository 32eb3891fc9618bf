# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.iperf_run``: validate the options, run the backend's scripts.

The work (scripts, parsing, diagnosis) is in ``plugin_utils/_iperf_run.py``; this file only
validates the task arguments and lends the backend a way to run a script on the host over
the connection's plain shell (no Python is needed on the host). Documentation: the module
file of the same name.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from ansible.plugins.action import ActionBase

from ansible_collections.esxilab.iperf.plugins.plugin_utils._iperf_run import (
    ARGUMENT_SPEC,
    MUTUALLY_EXCLUSIVE,
    REQUIRED_IF,
    CommandOutput,
    IperfRunError,
    check_raw_args,
    run,
)


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """Run iperf2/iperf3 as server, client or stop it, over the host's shell."""

    TRANSFERS_FILES = False

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        self._supports_check_mode = True
        self._supports_async = False
        result: dict[str, Any] = super().run(tmp, task_vars)
        del tmp  # tmp no longer has any effect

        try:
            # before the conversion: Ansible would turn a string extra_args into a list silently
            check_raw_args(self._task.args)
        except IperfRunError as exc:
            result.update(failed=True, msg=exc.message)
            return result

        _validation, args = self.validate_argument_spec(
            argument_spec=ARGUMENT_SPEC,
            mutually_exclusive=MUTUALLY_EXCLUSIVE,
            required_if=REQUIRED_IF,
        )

        def execute(script: str) -> CommandOutput:
            out = self._low_level_execute_command(script, sudoable=True)
            return CommandOutput(int(out.get("rc", -1)), out.get("stdout", ""), out.get("stderr", ""))

        try:
            result.update(
                run(
                    args,
                    execute,
                    check_mode=bool(self._play_context.check_mode),
                    token=secrets.token_hex(8),
                    now=time.time,
                )
            )
        except IperfRunError as exc:
            result.update(exc.result)
            result.update(failed=True, msg=exc.message)
        return result
