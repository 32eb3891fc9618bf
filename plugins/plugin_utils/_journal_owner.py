# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Who holds a restore-journal window: the run id, and whether the run that holds it is still alive.

A *run* is one ``ansible-playbook`` process on one controller: its id is the controller's host
name, the pid of that process (the parent of every worker an action plugin runs in) and its start
time; ``token`` is a short hash of the three, safe in shell words and file contents. The journal
keeps the holder in its ``owner`` file (:meth:`RunId.line`) and the dead-man carries the token.

:func:`holder` decides what a run finds on a host:

* ``none`` -- nothing pending, or no owner recorded (a journal of an older release);
* ``mine`` -- this run's window;
* ``live`` -- another run's window, and that run may still be working: on *this* controller its
  process runs (same pid, same start time); on *another* controller its deadline is still ahead
  (the dead-man would put the host back then, so until then the window is presumed held), or it
  has no deadline at all (no dead-man: nothing tells when it ends, so only ``takeover`` ends it);
* ``gone`` -- another run's window whose run is over (an interrupted run): recovered as before.

Plain data; no Ansible import. Private module: not part of the collection's public API.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RunId", "current_run", "holder", "process_started"]

_SAFE = re.compile(r"[^A-Za-z0-9._-]")
_LINE = re.compile(r"^run=([0-9a-f]{16}) controller=([A-Za-z0-9._-]{1,64}) pid=(\d{1,10}) started=(\d{1,12})$")


@dataclass(frozen=True, slots=True)
class RunId:
    """One ``ansible-playbook`` run: where, which process, since when; ``token`` names it."""

    controller: str
    pid: int
    started: int

    @property
    def token(self) -> str:
        return hashlib.sha256(f"{self.controller}:{self.pid}:{self.started}".encode()).hexdigest()[:16]

    def line(self) -> str:
        """The ``owner`` file's content (one line, no newline)."""
        return f"run={self.token} controller={self.controller} pid={self.pid} started={self.started}"

    def describe(self) -> str:
        return f"the run of pid {self.pid} on controller {self.controller} (started at epoch {self.started})"

    @classmethod
    def parse(cls, text: str) -> RunId | None:
        """The run an ``owner`` file names; ``None`` when it is not a line :meth:`line` writes."""
        match = _LINE.match(text.strip())
        if match is None:
            return None
        run = cls(match[2], int(match[3]), int(match[4]))
        return run if run.token == match[1] else None


def process_started(pid: int) -> int:
    """Start time of ``pid`` in epoch seconds from ``/proc`` (``0`` when it cannot be read)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        ticks = int(stat.rsplit(")", 1)[1].split()[19])
        lines = Path("/proc/stat").read_text().splitlines()
        boot = next(int(line.split()[1]) for line in lines if line.startswith("btime "))
        return boot + ticks // int(os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, StopIteration):
        return 0


def current_run() -> RunId:
    """This run: the controller's host name and the ``ansible-playbook`` process (the parent of this worker)."""
    pid = os.getppid()
    return RunId(_SAFE.sub("_", socket.gethostname())[:64] or "controller", pid, process_started(pid))


def _alive_here(run: RunId) -> bool:
    try:
        os.kill(run.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return run.started == 0 or process_started(run.pid) in (0, run.started)


def holder(
    owner: RunId | None,
    me: RunId,
    *,
    pending: bool,
    now: int | None,
    deadline: int | None,
    alive_here: Callable[[RunId], bool] = _alive_here,
) -> str:
    """``none``, ``mine``, ``live`` or ``gone`` (see the module's docstring)."""
    if not pending or owner is None:
        return "none"
    if owner.token == me.token:
        return "mine"
    if owner.controller == me.controller:
        return "live" if alive_here(owner) else "gone"
    # another controller: alive until its deadline passed; without a deadline (no dead-man) nobody can tell
    return "gone" if deadline is not None and now is not None and deadline <= now else "live"
