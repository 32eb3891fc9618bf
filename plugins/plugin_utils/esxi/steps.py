# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A planned shell command (what the planners return and the action plugins run), and
:func:`to_dict`: a parsed record or a plan as plain JSON-able data for Ansible results.
"""

from __future__ import annotations

import shlex
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Step:
    """One command for the ESXi shell. ``command`` is ``argv`` quoted for busybox ``sh``."""

    action: str
    description: str
    argv: tuple[str, ...]

    @property
    def command(self) -> str:
        return shlex.join(self.argv)

    def as_dict(self) -> dict[str, Any]:
        return {"action": self.action, "description": self.description, "command": self.command}


def make_step(action: str, description: str, *argv: str) -> Step:
    return Step(action=action, description=description, argv=tuple(argv))


def esxcli_step(action: str, description: str, namespace: str, *args: str) -> Step:
    """``esxcli_step(..., "network firewall set", "--enabled", "false")`` -> an esxcli step."""
    return make_step(action, description, "esxcli", *namespace.split(), *args)


def to_dict(obj: Any) -> dict[str, Any]:
    """A record or plan as plain JSON-able data (tuples become lists) for Ansible results."""
    data = asdict(obj)
    steps = getattr(obj, "steps", None)
    if isinstance(steps, tuple) and all(isinstance(step, Step) for step in steps) and hasattr(obj, "changed"):
        # an InstallPlan or FirewallPlan: each step as its command line, and whether it changes anything
        data["steps"] = [step.as_dict() for step in obj.steps]
        data["changed"] = obj.changed
    result: dict[str, Any] = _listify(data)
    return result


def _listify(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _listify(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_listify(v) for v in value]
    return value
