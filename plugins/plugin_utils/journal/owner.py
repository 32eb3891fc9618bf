# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Who holds a restore-journal window, and whether the run that holds it is still alive.

A *run* is the one of ``iperf_run/leftover.py`` (the one source of it): the controller's host name,
the pid of the ``ansible-playbook`` process (the parent of every worker an action plugin runs in)
and that process's start time. The journal keeps the holder in its ``owner`` file
(:func:`owner_line`: ``run=<token> owner=<host>:<pid>:<start>``); ``token`` is a short hash of the
run, safe in shell words, that the dead-man carries.

:func:`holder` decides what a run finds on a host:

* ``none`` -- nothing pending, or no owner recorded (a journal of an older release);
* ``mine`` -- this run's window;
* ``live`` -- another run's window, and that run may still be working: on *this* controller its
  process runs (``leftover.holder_state``: same pid, same start time); on *another* controller its
  deadline is still ahead (the dead-man would put the host back then, so until then the window is
  presumed held), or it has no deadline at all (no dead-man: nothing tells when it ends, so only
  ``takeover`` ends it);
* ``gone`` -- another run's window whose run is over (an interrupted run): recovered as before.

Plain data; no Ansible import. Private module: not part of the collection's public API.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.leftover import (
    HolderState,
    RunId,
    holder_state,
    this_run,
)

__all__ = ["RunId", "describe", "holder", "owner_line", "parse_owner", "this_run", "token"]

_LINE = re.compile(r"^run=([0-9a-f]{16}) owner=(\S{1,300})$")


def token(run: RunId) -> str:
    """A short name of ``run`` for shell words and the dead-man's command line."""
    return hashlib.sha256(run.text.encode()).hexdigest()[:16]


def owner_line(run: RunId) -> str:
    """The ``owner`` file's content (one line, no newline)."""
    return f"run={token(run)} owner={run.text}"


def parse_owner(text: str) -> RunId | None:
    """The run an ``owner`` file names; ``None`` when it is not a line :func:`owner_line` writes."""
    match = _LINE.match(text.strip())
    run = RunId.parse(match[2]) if match else None
    return run if run is not None and match is not None and token(run) == match[1] else None


def describe(run: RunId) -> str:
    return f"the run of pid {run.pid} on controller {run.host}"


def holder(
    owner: RunId | None,
    me: RunId,
    *,
    pending: bool,
    now: int | None,
    deadline: int | None,
    state: Callable[[str, RunId], HolderState] = holder_state,
) -> str:
    """``none``, ``mine``, ``live`` or ``gone`` (see the module's docstring)."""
    if not pending or owner is None:
        return "none"
    if owner == me:
        return "mine"
    if owner.host == me.host:
        return {"this": "mine", "gone": "gone"}.get(state(owner.text, me), "live")
    # another controller: alive until its deadline passed; without a deadline (no dead-man) nobody can tell
    return "gone" if deadline is not None and now is not None and deadline <= now else "live"
