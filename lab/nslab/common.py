# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What every part of the lab shares: its limits and names, the error type, running commands, the plan of actions."""

from __future__ import annotations

import ipaddress
import json
import re
import shlex
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DEFAULT_STATE_DIR = REPO / "lab" / "state"
LAB_RANGE = ipaddress.IPv4Network("198.18.0.0/15")  # RFC 2544 benchmarking range
DEFAULT_SUBNET = "198.18.0.0/24"
HOST_OFFSET = 10  # h1 = .11, h2 = .12, ...
# 64: 32 concurrent pairs on hosts of their own (tests/bench/bench_overhead.py). A /24 holds 243 hosts
# at .11+, but "<name>-v<i>" must fit IFNAMSIZ: 11-char names leave room for 2-digit indices only.
MIN_HOSTS, MAX_HOSTS = 2, 64
MIN_MTU, MAX_MTU = 576, 9216
NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,10}$")  # "<name>-br0" must fit IFNAMSIZ (15)
HOST_IFNAME = "eth0"
CMD_TIMEOUT = 20.0
SCRIPT_NAME = "lab/esxilab_lab.py"
JSONDict = dict[str, Any]


class LabError(Exception):
    """A lab operation failed; the message names the object, the cause and the fix."""


def run(argv: Sequence[str], *, timeout: float = CMD_TIMEOUT, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a command with a timeout; raise LabError on failure (when ``check``)."""
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise LabError(f"`{shlex.join(argv)}` timed out after {timeout:.0f}s") from exc
    except FileNotFoundError as exc:
        raise LabError(f"`{argv[0]}` not found: install it (iproute2, openssh-server, openssh-client)") from exc
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip()
        raise LabError(f"`{shlex.join(argv)}` failed (rc={proc.returncode}): {detail}")
    return proc


def run_json(argv: Sequence[str]) -> list[JSONDict]:
    """Run an ``ip -j``/``tc -j`` command and return its JSON list (empty output = [])."""
    out = run(argv).stdout.strip()
    if not out:
        return []
    data = json.loads(out)
    if not isinstance(data, list):
        raise LabError(f"`{shlex.join(argv)}` did not print a JSON list")
    return [item for item in data if isinstance(item, dict)]


def ip_cmd(netns: str | None, *args: str) -> list[str]:
    return ["ip", *(["-n", netns] if netns else []), *args]


def tc_cmd(netns: str | None, *args: str) -> list[str]:
    return ["tc", *(["-n", netns] if netns else []), *args]


@dataclass
class Plan:
    """Actions taken (or, in check mode, that would be taken)."""

    check: bool
    actions: list[str] = field(default_factory=list)

    def act(self, what: str, *commands: Sequence[str], fn: Callable[[], None] | None = None) -> None:
        self.actions.append(what)
        if self.check:
            return
        for command in commands:
            run(command)
        if fn is not None:
            fn()

    @property
    def changed(self) -> bool:
        return bool(self.actions)


def write_file(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.chmod(mode)
    tmp.replace(path)


def file_differs(path: Path, text: str) -> bool:
    try:
        return path.read_text() != text
    except OSError:
        return True
