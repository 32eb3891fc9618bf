# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Servers left by an interrupted run: which run a server belongs to, and whether that run is gone.

Every server start writes into its pidfile (in the private directory, see ``state.py``) the run that
started it, ``owner=<controller>:<pid>:<start>`` (the controller's host name, the process id of the
``ansible-playbook`` / ``ansible`` process whose worker ran the task, and that process's start time in
clock ticks from ``/proc/<pid>/stat``, empty where the controller has no ``/proc``), the host's time of
the start (``started``, epoch seconds) and when its guard ends it at the latest (``until``, 0 = never).

When a start finds a server of ours still running on its port (the start script's ``busy``: the
pidfile of that port lists a live pid whose command line is ``<binary> -s -p <port>``), the
controller decides with :func:`holder_state`:

- ``gone``: the run that started it was on this controller and its process is gone (or the pid now
  belongs to a process started at another time): a leftover of an interrupted run (Ctrl-C, a killed
  controller). It is stopped - the stop script checks the pidfile and the command line again right
  before the ``kill`` - and the task says so (a warning naming pid, port and start time).
- ``this``: this very run started it (a play that starts two servers on one port): refused.
- ``live``: another run on this controller that still runs: refused, naming it.
- ``unknown``: another controller, or a pidfile without an owner (a release before this one): this
  controller cannot tell whether that run still goes on; refused, naming it and the ad-hoc command that
  stops it.

Nothing here trusts the pidfile: an owner that does not match :data:`OWNER_RE` is ``unknown``.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import datetime
import os
import re
import socket
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["OWNER_RE", "HolderState", "RunId", "holder_state", "leftover_note", "refusal", "this_run"]

HolderState = Literal["this", "live", "gone", "unknown"]

OWNER_RE = re.compile(r"^(?P<host>[A-Za-z0-9._-]{1,253}):(?P<pid>[0-9]{1,10}):(?P<start>[0-9]{0,20})$")


@dataclass(frozen=True)
class RunId:
    """The run a server belongs to: controller host name, controller process id, its start time (ticks)."""

    host: str
    pid: int
    start: str  # clock ticks since boot (/proc/<pid>/stat field 22); "" where unknown

    @property
    def text(self) -> str:
        return f"{self.host}:{self.pid}:{self.start}"

    @classmethod
    def parse(cls, text: Any) -> RunId | None:
        match = OWNER_RE.match(text) if isinstance(text, str) else None
        if match is None:
            return None
        return cls(match.group("host"), int(match.group("pid")), match.group("start"))


def _host_name() -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname())[:253] or "controller"


def process_start(pid: int, proc: str = "/proc") -> str:
    """The start time of process ``pid`` in clock ticks since boot (``/proc/<pid>/stat`` field 22), or ""."""
    try:
        with open(f"{proc}/{int(pid)}/stat", encoding="ascii", errors="replace") as handle:
            stat = handle.read()
    except OSError:
        return ""
    fields = stat.rpartition(")")[2].split()  # the name (field 2) may hold spaces and parentheses
    return fields[19] if len(fields) > 19 and fields[19].isdigit() else ""


def this_run(pid: int | None = None) -> RunId:
    """This run: Ansible runs an action in a worker process forked by ``ansible-playbook``; its parent is the run."""
    run_pid = os.getppid() if pid is None else pid
    return RunId(_host_name(), run_pid, process_start(run_pid))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: it exists
    except OSError:
        return False
    return True


def holder_state(owner: Any, me: RunId) -> HolderState:
    """Whether the run named by a pidfile's ``owner`` is this one, another live one, gone, or cannot be told."""
    other = RunId.parse(owner)
    if other is None or other.host != me.host or other.pid == 0:
        return "unknown"
    if other == me:
        return "this"
    if not _alive(other.pid):
        return "gone"
    if other.start and me.start:  # both read from /proc: a reused pid has another start time
        return "live" if process_start(other.pid) == other.start else "gone"
    return "live"


def _when(epoch: Any) -> str:
    try:
        seconds = int(epoch)
    except (TypeError, ValueError):
        return "an unknown time"
    if seconds <= 0:
        return "an unknown time"
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def leftover_note(entry: dict[str, Any], status: str) -> str:
    """The warning of a leftover: ``stopped a server left by an interrupted run: pid N, port P, started at T``."""
    verb = {"stopped": "stopped", "killed": "killed (SIGKILL after SIGTERM)", "gone": "found ended"}.get(
        status, f"found ({status})"
    )
    owner = RunId.parse(entry.get("owner"))
    by = f" (ansible pid {owner.pid} on {owner.host}, which is gone)" if owner else ""
    return (
        f"{verb} a server left by an interrupted run{by}: pid {entry.get('pid')}, port {entry.get('port')}, "
        f"started at {_when(entry.get('started'))}"
    )


def refusal(entry: dict[str, Any], state: HolderState, *, log: str | None) -> str:
    """Why a start on a port that a server of ours holds is refused (``this``/``live``/``unknown``), and the fix."""
    port = entry.get("port")
    owner = RunId.parse(entry.get("owner"))
    until = entry.get("until")
    ends = (
        f"; its guard ends it by itself at {_when(until)} at the latest" if isinstance(until, int) and until > 0 else ""
    )
    what = f"pid {entry.get('pid')}, {entry.get('tool')}, started at {_when(entry.get('started'))}, log {log}{ends}"
    stop_task = f"an esxilab.iperf.iperf_run task with mode=stop port={port}"
    adhoc = f"ansible <host> -m esxilab.iperf.iperf_run -a 'mode=stop port={port}'"
    if state == "this":
        return (
            f"a server this run started already runs on port {port} ({what}); stop it first ({stop_task}), "
            "or use another port"
        )
    if state == "live" and owner is not None:
        return (
            f"port {port} is held by a server of another ansible run that is still going on this controller "
            f"(ansible pid {owner.pid}; {what}); wait for that run to end, or use another port"
        )
    who = (
        f"started from the controller {owner.host} (ansible pid {owner.pid})"
        if owner
        else "started by a release that did not record its run"
    )
    return (
        f"port {port} is held by a server of this collection {who} ({what}); this controller cannot tell whether that "
        f"run still goes on. If it was interrupted, stop the server ({adhoc}, or {stop_task}) and run again; "
        "otherwise wait for it or use another port"
    )
