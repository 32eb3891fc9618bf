# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The controller-side actions' one rule for a file option: ``~`` expanded, relative to the playbook, normalized."""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.controller import controller_path


def test_a_file_option_is_read_as_a_task_reads_it() -> None:
    seen: list[str] = []

    def path_dwim(path: str) -> str:
        seen.append(path)
        return path if os.path.isabs(path) else os.path.join("/play/dir", path)

    action: Any = SimpleNamespace(_loader=SimpleNamespace(path_dwim=path_dwim))
    assert controller_path(action, "reports/../reports/x") == "/play/dir/reports/x"
    assert controller_path(action, "~/h.sqlite") == os.path.join(os.path.expanduser("~"), "h.sqlite")
    assert seen[1] == os.path.expanduser("~/h.sqlite")  # expanded before Ansible resolves it
