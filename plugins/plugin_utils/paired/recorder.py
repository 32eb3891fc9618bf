# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The record of a run, built in the run's last task (stop), not in a task of its own.

The stop of a run (``esxilab.iperf.paired_test_host`` ``part=stop``) runs on the run's server hosts
at the same time, and on the keeper - one host of the tests that keeps the records. Each host's stop
result (its server stops, its NIC counters after the run) is written to a spool directory on the
controller; the keeper's stop waits for them, builds the record from them and from what the run's
hosts registered in the tasks before (start, clients, the rescue's failure), and returns the records
so far as a fact of its own. So a run is three tasks, and the order of the plan holds: the next run's
include starts only when every host of this one has stopped.

The spool is a directory in Ansible's own private controller directory (``DEFAULT_LOCAL_TMP``,
mode 0700, removed by Ansible when the play ends). Its files are written without following links
and read only when they are regular files of ours; each run's files are removed once read.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

# How long the keeper waits for the other hosts' stop results of a run (seconds). A host's stop is a few
# commands over SSH, each bounded by the connection's timeout; a host whose stop never ran (Ansible could
# not run the task there) is recorded as such after this.
WAIT_SECONDS = 120.0
POLL_SECONDS = 0.01
# Where each piece of a host's report is: the registered results of the role's tasks per run
# (esxilab.iperf.paired_test_host part start / clients) and the rescue's fact; the stop's part is
# the spool's piece.
REGISTERED = {
    "servers": ("__paired_test_start", "servers"),
    "nic_before": ("__paired_test_start", "nic_before"),
    "clients": ("__paired_test_part", "clients"),
    "collects": ("__paired_test_part", "collects"),
    "failure": ("__paired_test_failure", None),
}
STOPPED = {"stops": "stops", "nic_after": "nic_after"}


class SpoolError(RuntimeError):
    """The spool directory cannot be used (not ours, not a directory, not private)."""


def make_spool(parent: str) -> str:
    """A new private directory for one play's stop results, inside ``parent`` (Ansible's local tmp)."""
    return tempfile.mkdtemp(prefix="paired-test-", dir=parent)


def _check_spool(spool: str) -> None:
    try:
        info = os.lstat(spool)
    except OSError as exc:
        raise SpoolError(f"the spool directory {spool} cannot be read: {exc.strerror}") from exc
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise SpoolError(f"the spool directory {spool} is not a private directory of this user")


def _piece_path(spool: str, run: int, host: str) -> str:
    digest = hashlib.sha256(host.encode()).hexdigest()[:32]
    return os.path.join(spool, f"run{int(run)}-{digest}.json")


def write_piece(spool: str, run: int, host: str, piece: Mapping[str, Any]) -> None:
    """Write ``host``'s stop result of ``run`` (atomically: a reader sees all of it or nothing)."""
    _check_spool(spool)
    path = _piece_path(spool, run, host)
    partial = f"{path}.{os.getpid()}.part"
    data = json.dumps({"host": host, "run": run, "piece": piece}, default=str).encode()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(partial, flags, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise


def _read_piece(path: str, run: int, host: str) -> dict[str, Any] | None:
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ELOOP):
            return None
        raise
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            return None
        try:
            data = json.loads(handle.read())
        except ValueError:
            return None
    if not isinstance(data, dict) or data.get("host") != host or data.get("run") != run:
        return None
    piece = data.get("piece")
    return piece if isinstance(piece, dict) else None


def wait_pieces(
    spool: str,
    run: int,
    hosts: Iterable[str],
    *,
    seconds: float = WAIT_SECONDS,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, dict[str, Any]]:
    """The stop results of ``hosts`` in ``run``, waiting up to ``seconds`` for them; a host whose result did
    not come is left out. The files read are removed."""
    _check_spool(spool)
    waiting = set(hosts)
    found: dict[str, dict[str, Any]] = {}
    deadline = clock() + seconds
    while True:
        for host in sorted(waiting):
            path = _piece_path(spool, run, host)
            piece = _read_piece(path, run, host)
            if piece is not None:
                found[host] = piece
                waiting.discard(host)
                with contextlib.suppress(OSError):
                    os.unlink(path)
        if not waiting or clock() >= deadline:
            return found
        sleep(POLL_SECONDS)


def stop_hosts(run: Mapping[str, Any]) -> list[str]:
    """The hosts that take part in the run's stop: its servers, and the hosts whose NIC counters are read after."""
    hosts = set(run.get("server_hosts") or ())
    if run.get("nic_after"):
        hosts |= set(run.get("nic_addresses") or {})
    return sorted(hosts)


def run_hosts(run: Mapping[str, Any]) -> list[str]:
    """Every host of the run."""
    hosts = set(run.get("server_hosts") or ()) | set(run.get("client_hosts") or ()) | set(stop_hosts(run))
    return sorted(hosts)


def reports(
    run: Mapping[str, Any],
    registered: Callable[[str, str], Any],
    stops: Mapping[str, Mapping[str, Any]],
    missing: str,
) -> list[dict[str, Any]]:
    """One report per host of the run, as ``paired.record.build_record`` reads them: the pieces the host registered
    in the run's earlier tasks (``registered(host, variable)``) and its stop result (``stops``; a stop host
    without one gets ``missing`` as the reason)."""
    out: list[dict[str, Any]] = []
    stoppers = set(stop_hosts(run))
    for host in run_hosts(run):
        report: dict[str, Any] = {"host": host}
        for key, (name, field) in REGISTERED.items():
            value = registered(host, name)
            if field is not None:
                value = value.get(field) if isinstance(value, Mapping) else None
            report[key] = value
        piece = stops.get(host)
        for key, field in STOPPED.items():
            if piece is not None:
                report[key] = piece.get(field)
            elif host in stoppers and key == "stops":  # every server of the host: not known to be stopped
                served = [p for p in run.get("pairs") or () if p.get("server") == host and not p.get("external_server")]
                report[key] = {"results": [{"item": p, "failed": True, "msg": missing} for p in served]}
            elif host in stoppers:
                report[key] = {"failed": True, "msg": missing}
            else:
                report[key] = None
        out.append(report)
    return out


def halts(record: Mapping[str, Any], continue_on_error: bool) -> bool:
    """Whether the series stops after this record: the run failed, ``paired_test_continue_on_error`` is not set
    and the run's point does not tolerate the failure (``repeat`` ``max_failures``)."""
    stability = record.get("stability")
    tolerated = bool(stability.get("tolerated")) if isinstance(stability, Mapping) else False
    return not record.get("ok") and not continue_on_error and not tolerated


def recorded(facts: Any) -> list[Any]:
    """The records so far, from the keeper's facts (``__paired_test_recorded``)."""
    value = facts.get("__paired_test_recorded") if isinstance(facts, Mapping) else None
    return list(value) if isinstance(value, Sequence) and not isinstance(value, str | bytes) else []
