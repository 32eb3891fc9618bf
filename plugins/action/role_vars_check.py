# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.role_vars_check``: warn about role variables that no role option matches.

Documentation: the module file of the same name. The names come from the task's variables (every
variable defined for the host); the comparison is ``plugin_utils/common/role_vars.py``. The warnings
go into the result's ``warnings``, which Ansible prints as ``[WARNING]`` (once per text, however
many hosts).

It also warns when another copy of this collection is on Ansible's collection search paths
(``plugin_utils/common/shadow.py``): the copy in use is the one this plugin was loaded from. The text is
the same for every host and role, so Ansible prints it once per run.
"""

from __future__ import annotations

import os
from typing import Any

from ansible.plugins.action import ActionBase

from ansible_collections.esxilab.iperf.plugins.modules.role_vars_check import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.controller import begin, shadowing
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.role_vars import (
    RoleVarsError,
    known_names,
    unknown_names,
    warning,
)

_NAME = "esxilab.iperf.role_vars_check"
ARGUMENT_SPEC = argument_spec(DOCUMENTATION)


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """Compare the host's variables with the role's options; warn, never fail, for an unknown one."""

    TRANSFERS_FILES = False

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result, args = begin(self, tmp, task_vars, ARGUMENT_SPEC)
        if args is None:  # wrong or unknown options
            return result
        role_dir = os.path.normpath(args["role_path"])
        base = os.path.basename(role_dir)
        prefix = args["prefix"] or f"{base}_"
        role = args["role_name"] or f"esxilab.iperf.{base}"
        try:
            known = known_names(role_dir) | set(args["known"])
        except (RoleVarsError, OSError) as exc:
            result.update(
                failed=True, msg=f"{_NAME}: {exc}; role_path must be the role's directory ({{{{ role_path }}}})"
            )
            return result
        unknown = unknown_names(task_vars or {}, prefix, known)
        warnings = [warning(role, item) for item in unknown]
        shadowed = shadowing()
        if shadowed:
            warnings.append(shadowed)
        if warnings:
            result["warnings"] = warnings
        result.update(
            changed=False,
            unknown=[{"name": item.name, "suggestion": item.suggestion} for item in unknown],
            shadowing=shadowed,
            msg=f"{len(unknown)} unknown variable(s) of {role}",
        )
        return result
