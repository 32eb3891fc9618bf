# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One command's output and the one backend error type.

Plain data; no Ansible import, no I/O beyond the ``execute`` callable a caller passes in.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

__all__ = ["CommandOutput", "Execute", "HostError"]


class CommandOutput(NamedTuple):
    """What running one command (or script) on the host gave back."""

    rc: int
    stdout: str
    stderr: str

    @property
    def text(self) -> str:
        """stdout, then stderr on a line of its own (when there is any): what esxcli printed."""
        return self.stdout + ("\n" + self.stderr if self.stderr else "")


#: Runs one command on the host; the action plugin lends it (``HostAction.execute``).
Execute = Callable[[str], CommandOutput]


class HostError(Exception):
    """Stop the task: ``message`` names the cause and the fix.

    ``result`` holds what is known anyway (the command, raw output, ``changed``, and above all
    ``restore``, so an ``always:`` can undo what was done before the failure); it goes into the
    failed task result.
    """

    def __init__(self, message: str, result: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.result: dict[str, Any] = dict(result or {})
