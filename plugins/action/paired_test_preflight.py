# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.paired_test_preflight``: every setting of a paired test checked at once.

Documentation: the module file of the same name. The checks are ``plugin_utils/paired/preflight.py``;
this plugin hands them the task's options, the names of the variables defined, Ansible's host lists
and ``forks``, and resolves relative paths as Ansible does (against the playbook directory).
"""

from __future__ import annotations

import os
import time
from typing import Any

from ansible import constants as C
from ansible.plugins.action import ActionBase

from ansible_collections.esxilab.iperf.plugins.modules.paired_test_preflight import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.controller import begin, controller_path, shadowing
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.role_vars import RoleVarsError, known_names
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired import recorder
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.preflight import RoleNames, preflight

_NAME = "esxilab.iperf.paired_test_preflight"
ARGUMENT_SPEC = argument_spec(DOCUMENTATION)


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """Check the tests, the hosts, the role's and the report's settings; fail with every problem found."""

    TRANSFERS_FILES = False

    def _path(self, path: str) -> str:
        return controller_path(self, path)

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result, args = begin(self, tmp, task_vars, ARGUMENT_SPEC)
        if args is None:  # wrong or unknown options
            return result
        variables = task_vars or {}
        role_dir = os.path.normpath(args["role_path"])
        report_dir = os.path.join(os.path.dirname(role_dir), "report")
        try:
            roles = [
                RoleNames("esxilab.iperf.paired_test", "paired_test_", known_names(role_dir) | set(args["known"])),
                RoleNames("esxilab.iperf.report", "report_", known_names(report_dir)),
            ]
        except (RoleVarsError, OSError) as exc:
            fix = "role_path must be the role's directory ({{ role_path }})"
            result.update(failed=True, msg=f"{_NAME}: {exc}; {fix}")
            return result
        forks = variables.get("ansible_forks")
        outcome = preflight(
            args["tests"],
            defaults=args["defaults"],
            role_settings={
                "knee_tolerance": args["knee_tolerance"],
                "report_name": args["report_name"],
                "max_runs": args["max_runs"],
            },
            report_settings=args["report"],
            state_dirs=args["state_dirs"],
            link_speeds=args["link_speeds"],
            defined=list(variables),
            roles=roles,
            unknown_fail=args["unknown_variables"] == "fail",
            addresses=args["addresses"],
            address_var=args["address_var"],
            inventory_hosts=list(variables.get("groups", {}).get("all", [])),
            play_hosts=list(variables.get("ansible_play_batch", [])),
            forks=int(forks) if isinstance(forks, int) and not isinstance(forks, bool) else None,
            reporting=args["reporting"],
            resolve=self._path,
        )
        warnings = list(outcome.warnings)
        shadowed = shadowing()
        if shadowed:
            warnings.append(shadowed)
        if warnings:
            result["warnings"] = warnings
        result.update(changed=False)
        if outcome.problems:  # in the message only: Ansible prints a failed result's keys once more
            count = len(outcome.problems)
            result.update(
                failed=True,
                msg=f"{count} problem(s) with the settings, nothing was run:\n" + "\n".join(outcome.problems),
            )
            return result
        plan = outcome.plan or {}
        result.update(
            plan=plan,
            spool=recorder.make_spool(C.DEFAULT_LOCAL_TMP),  # removed with Ansible's own directory at the end
            # the records of this play's series start empty on every host (facts of an earlier play are cleared)
            ansible_facts={"__paired_test_recorded": [], "__paired_test_halt": False},
            finished_at=round(time.time(), 3),
            msg=f"{plan.get('run_count', 0)} run(s) on {len(plan.get('hosts', []))} host(s), every setting usable",
        )
        return result
