# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Processes of the lab: is a pid alive and whose is it (command line, network namespace), and stopping them."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path

from .common import LabError, run

KILL_WAIT = 3.0


def proc_alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def proc_cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def proc_netns_inode(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}/ns/net").st_ino
    except OSError:
        return None


def netns_pids(netns: str) -> list[int]:
    proc = run(["ip", "netns", "pids", netns], check=False)
    return [int(tok) for tok in proc.stdout.split() if tok.isdigit()]


def read_pid(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def stop_pids(pids: Sequence[int], what: str) -> None:
    """SIGTERM, then SIGKILL; raise when something survives."""
    remaining = [p for p in pids if proc_alive(p)]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in remaining:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + KILL_WAIT
        while remaining and time.monotonic() < deadline:
            time.sleep(0.05)
            remaining = [p for p in remaining if proc_alive(p)]
        if not remaining:
            return
    raise LabError(f"{what}: processes {remaining} survived SIGKILL")


def stop_netns_processes(netns: str) -> None:
    """Stop every process in the namespace (re-reading: a dying sshd may have forked)."""
    for _attempt in range(3):
        pids = [p for p in netns_pids(netns) if proc_alive(p)]
        if not pids:
            return
        stop_pids(pids, f"namespace {netns}")
    left = netns_pids(netns)
    if left:
        raise LabError(f"namespace {netns}: processes {left} keep coming back")
