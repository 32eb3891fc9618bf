# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The start every controller-only action plugin shares (report_write, report_gate, role_vars_check).

:func:`begin` sets check mode support, runs ``ActionBase.run`` and validates the task's options
against the module's argument spec: it returns the task result and the options, or the result
with Ansible's validation failure and ``None`` (the action returns that result as it is).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

__all__ = ["begin"]


def begin(
    action: ActionBase, tmp: str | None, task_vars: dict[str, Any] | None, spec: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The result so far and the validated options, or the failed result and ``None`` (wrong or unknown options)."""
    action._supports_check_mode = True
    action._supports_async = False
    result: dict[str, Any] = ActionBase.run(action, tmp, task_vars)
    try:
        _validation, args = action.validate_argument_spec(argument_spec=spec)
    except AnsibleActionFail as exc:
        result.update(exc.result)
        return result, None
    return result, args
