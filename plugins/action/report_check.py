# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.report_check``: every setting of a report checked at once, on the controller.

Documentation: the module file of the same name. The checks are ``plugin_utils/report/settings_check.py`` (the
same the preflight of ``paired_test`` makes).
"""

from __future__ import annotations

from typing import Any

from ansible.plugins.action import ActionBase

from ansible_collections.esxilab.iperf.plugins.modules.report_check import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.controller import begin, controller_path
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.settings_check import report_problems

ARGUMENT_SPEC = argument_spec(DOCUMENTATION)


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """Check the report's settings; fail with every problem found."""

    TRANSFERS_FILES = False

    def _path(self, path: str) -> str:
        return controller_path(self, path)

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result, args = begin(self, tmp, task_vars, ARGUMENT_SPEC)
        if args is None:  # wrong or unknown options
            return result
        problems = report_problems(
            args["runs"], args["name"], args["knee_tolerance"], args["settings"] or {}, resolve=self._path
        )
        result.update(changed=False, problems=problems)
        if problems:  # in the message only: Ansible prints a failed result's keys once more
            result.update(
                failed=True,
                msg=f"{len(problems)} problem(s) with the settings of the report, nothing was written:\n"
                + "\n".join(problems),
            )
        else:
            result["msg"] = "every setting of the report is usable"
        return result
