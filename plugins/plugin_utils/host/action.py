# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The base of every SSH action plugin: validate -> execute over the plain shell -> convert the error.

An action subclasses :class:`HostAction`, names its module (``NAME``) and argument spec (read
from the module's ``DOCUMENTATION`` with ``plugin_utils/common/argspec.py`` in the action plugin, which
passes it to its backend where the backend needs it), and implements
:meth:`HostAction.work` with its backend, passing :meth:`HostAction.execute` as the backend's
``execute`` and :attr:`HostAction.check_mode` as its check mode. A
:class:`~.command.HostError` the backend raises becomes ``failed: true`` and ``msg``, with
the error's ``result`` (what is known, ``restore`` above all) merged into the task result.
Option errors Ansible's own validation finds raise ``AnsibleActionFail`` as for any action.
Nothing here knows a host's kind: the ESXi actions extend it in ``esxi/action.py`` (the restore
journal, the journal's error messages).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase

from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import CommandOutput, HostError

__all__ = ["HostAction"]

_SSH_NOTICE = re.compile(r"^Shared connection to \S+ closed\.\s*$")


class HostAction(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """Validate the task arguments, run :meth:`work` over the host's shell, turn a ``HostError`` into ``failed``."""

    TRANSFERS_FILES = False

    #: The module's FQCN; starts the messages this class writes.
    NAME: ClassVar[str] = ""
    #: The options (``argspec.argument_spec(DOCUMENTATION)``) and their relations.
    ARGUMENT_SPEC: ClassVar[Mapping[str, Any]] = {}
    MUTUALLY_EXCLUSIVE: ClassVar[Sequence[Sequence[str]]] = ()
    REQUIRED_IF: ClassVar[Sequence[Sequence[Any]]] = ()
    #: A lost connection is a failed command (exit status 255), so the backend still returns
    #: what it has done (``restore``); when false, Ansible's error goes up (the host is unreachable).
    CONNECTION_LOSS_AS_OUTPUT: ClassVar[bool] = True
    #: Drop OpenSSH's ``Shared connection to HOST closed.`` notice (a pty session) from stderr.
    DROP_SSH_NOTICE: ClassVar[bool] = True

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        self._supports_check_mode = True
        self._supports_async = False
        result: dict[str, Any] = dict(super().run(tmp, task_vars))
        del tmp  # tmp no longer has any effect
        try:
            args = self.validate()
            result.update(self.work(args, task_vars or {}))
        except HostError as exc:
            result.update(self.failure(exc))
        return result

    def failure(self, exc: HostError) -> dict[str, Any]:
        """What a backend's error puts into the task result: its ``result``, ``failed`` and ``msg``.

        A subclass names the errors whose message does not name the module (``esxi.action.EsxiHostAction``).
        """
        return {**exc.result, "failed": True, "msg": exc.message}

    @property
    def check_mode(self) -> bool:
        """The task's check mode: the one source every action reads."""
        return bool(self._task.check_mode)

    def validate(self) -> dict[str, Any]:
        """The task arguments checked against :attr:`ARGUMENT_SPEC` (raises ``AnsibleActionFail``)."""
        _validation, args = self.validate_argument_spec(
            argument_spec=dict(self.ARGUMENT_SPEC),
            mutually_exclusive=[list(names) for names in self.MUTUALLY_EXCLUSIVE],
            required_if=[list(rule) for rule in self.REQUIRED_IF],
        )
        validated: dict[str, Any] = args
        return validated

    def work(self, args: dict[str, Any], task_vars: Mapping[str, Any]) -> dict[str, Any]:
        """Run the backend; the task result (raises :class:`~.command.HostError`)."""
        raise NotImplementedError

    def execute(self, command: str) -> CommandOutput:
        """Run ``command`` with the connection's plain shell (no Python needed on the host)."""
        return self.execute_input(command, None)

    def execute_input(self, command: str, stdin: str | None) -> CommandOutput:
        """``execute`` with ``stdin`` on the command's standard input: a secret kept off the command line."""
        try:
            data = None if stdin is None else stdin.encode()
            out = self._low_level_execute_command(command, sudoable=True, in_data=data)
        except AnsibleError as exc:
            if not self.CONNECTION_LOSS_AS_OUTPUT:
                raise
            return CommandOutput(255, "", f"the connection failed: {exc}")
        stderr = str(out.get("stderr", ""))
        if self.DROP_SSH_NOTICE:
            stderr = "".join(line for line in stderr.splitlines(keepends=True) if not _SSH_NOTICE.match(line))
        return CommandOutput(int(out.get("rc", -1)), str(out.get("stdout", "")), stderr)
