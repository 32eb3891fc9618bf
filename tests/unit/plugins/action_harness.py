# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the action plugins' unit tests share: an action built as Ansible's task executor would build it,
a connection that runs each command on a stand-in, and the check of a docs-only module file."""

from __future__ import annotations

import ast
import os
import stat
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar
from unittest.mock import MagicMock

from ansible.errors import AnsibleConnectionFailure
from ansible.playbook.task import Task
from ansible.plugins.action import ActionBase

from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import CommandOutput

A = TypeVar("A", bound=ActionBase)
#: What an action's ``_low_level_execute_command`` returns for a command.
Runner = Callable[..., dict[str, Any]]


def make_action(
    cls: type[A], name: str, args: dict[str, Any], *, check_mode: bool = False, runner: Runner | None = None
) -> A:
    """``cls`` for the task ``name: args``; the loader leaves controller paths as they are; ``runner`` (if given)
    stands for the connection's ``_low_level_execute_command``."""
    task = MagicMock(Task)
    task.args = args
    task.async_val = 0
    task.check_mode = check_mode
    task.diff = False
    task.action = name
    play_context = MagicMock()
    play_context.check_mode = check_mode
    loader = MagicMock()
    loader.path_dwim.side_effect = lambda path: path
    plugin: A = cls(
        task=task,
        connection=MagicMock(),
        play_context=play_context,
        loader=loader,
        templar=MagicMock(),
        shared_loader_obj=None,
    )
    plugin._load_name = name
    if runner is not None:
        plugin._low_level_execute_command = runner
    return plugin


def runner_over(execute: Callable[[str], CommandOutput], lost: Callable[[str], bool] = lambda _c: False) -> Runner:
    """A connection running each command with ``execute`` (a stand-in host's); a command for which ``lost``
    is true fails as a lost SSH connection does."""

    def runner(command: str, **_kwargs: Any) -> dict[str, Any]:
        if lost(command):
            raise AnsibleConnectionFailure("Failed to connect to the host via ssh: Connection timed out")
        out = execute(command)
        return {"rc": out.rc, "stdout": out.stdout, "stderr": out.stderr}

    return runner


def assert_docs_only(module: ModuleType) -> None:
    """The module file holds DOCUMENTATION, EXAMPLES and RETURN only (ansible-test validate-modules skips the
    argspec checks only for such a file) and is not executable."""
    path = Path(str(module.__file__))
    tree = ast.parse(path.read_text())
    for node in tree.body:
        assert isinstance(node, ast.Assign | ast.Expr | ast.ImportFrom), ast.dump(node)
        if isinstance(node, ast.ImportFrom):
            assert node.module == "__future__"
    assigned = [
        t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)
    ]
    assert assigned == ["DOCUMENTATION", "EXAMPLES", "RETURN"]
    assert not os.stat(path).st_mode & stat.S_IXUSR


def assert_options_documented(documented: dict[str, Any], spec: dict[str, Any], *, types: bool = True) -> None:
    """The module's documented options are the action's argument spec: the same names, and for each the same
    type and elements (unless ``types`` is false: an action validating options as ``raw`` itself), default,
    required and choices (in any order)."""
    assert set(documented) == set(spec)
    for name, option in spec.items():
        doc = documented[name]
        if types:
            assert doc.get("type", "str") == option.get("type", "str"), name
            assert doc.get("elements") == option.get("elements"), name
        assert doc.get("default") == option.get("default"), name
        assert bool(doc.get("required")) == bool(option.get("required")), name
        assert sorted(doc.get("choices") or []) == sorted(option.get("choices") or []), name
