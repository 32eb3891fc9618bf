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

import os
import sys
from collections.abc import Mapping
from typing import Any

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible.utils.collection_loader import AnsibleCollectionConfig

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.shadow import copies
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.shadow import warning as shadow_warning

__all__ = ["begin", "controller_path", "shadowing"]

#: The root of the copy of the collection this file was loaded from (plugins/plugin_utils/common/ is 3 levels down).
_IN_USE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


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


def controller_path(action: ActionBase, path: str) -> str:
    """``path`` on the controller as a task's file option reads it: ``~`` expanded, relative to the playbook's
    directory (Ansible's ``path_dwim``), normalized."""
    return os.path.normpath(str(action._loader.path_dwim(os.path.expanduser(path))))


def shadowing() -> str | None:
    """The warning about other copies of esxilab.iperf on the collection search paths, or None.

    The paths are Ansible's own, in its order: the playbook's ``collections/``, the configured
    collections paths and, unless ``collections_scan_sys_path`` is false, ``sys.path`` - only where
    Ansible could load a copy from.
    """
    try:
        paths = list(AnsibleCollectionConfig.collection_paths)
    except NotImplementedError:  # no collection finder installed (never under ansible-playbook)
        paths = list(sys.path)
    found = copies(paths, "esxilab", "iperf")
    return shadow_warning("esxilab.iperf", _IN_USE, found)
