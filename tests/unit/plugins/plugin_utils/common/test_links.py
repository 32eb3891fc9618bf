# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""common.links: a step's task is the running task alone, on the same parent (the lab runs the steps themselves)."""

from __future__ import annotations

from typing import Any
from unittest.mock import MagicMock

from ansible.playbook.block import Block
from ansible.playbook.task import Task

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.links import HostLink


def test_a_step_copies_the_task_alone_and_keeps_its_parent() -> None:
    """A step's task was a full copy: every block above it duplicated with all its tasks, for every step of a run."""
    block = Block()
    running = Task(block=block)
    running.action, running.args, running.no_log = "esxilab.iperf.paired_test_host", {"part": "run"}, True
    block.block = [Task(block=block), running, Task(block=block)]
    seen: dict[str, Any] = {}

    class Handler:
        def __init__(self, task: Task) -> None:
            self.task = task

        def run(self, task_vars: Any) -> dict[str, Any]:
            seen.update(task=self.task, variables=task_vars)
            return {"changed": False}

        def cleanup(self) -> None:
            seen["cleaned"] = True

    action = MagicMock()
    action._task = running
    action._shared_loader_obj.action_loader.get.side_effect = lambda _name, task, **_kw: Handler(task)
    own = HostLink("h1", MagicMock(), MagicMock(), MagicMock(), {"inventory_hostname": "h1"})
    assert own.step(action, "iperf_run", {"mode": "probe"}) == {"changed": False}
    task = seen["task"]
    assert task is not running and task._parent is block  # the same parent, not a copy of the role's tree
    assert task.args == {"mode": "probe"} and task.action == "esxilab.iperf.iperf_run"
    assert task.no_log is True and running.args == {"part": "run"}  # its own attributes kept; the task unchanged
    assert seen["variables"] == {"inventory_hostname": "h1"} and seen["cleaned"] is True
