# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The state of the series and the records so far, on the controller, between the runs of a play.

Each run is one task (``esxilab.iperf.paired_test_host``, ``paired.engine``): it reads the
state of the series - stopped after a failed run, the ``repeat`` points that are done, the measured
dispatch times the start delay learns from - and the records so far, makes the run, and writes its
record and the state after it. A run the series skips does nothing. The pieces each host's parts
hand over (:data:`REPORT_KEYS`) become the per-host reports :func:`reports` gives the record.

The spool is a directory in Ansible's own private controller directory (``DEFAULT_LOCAL_TMP``,
mode 0700, removed by Ansible when the play ends). Its files are written atomically without
following links and read only when they are regular files of ours with the expected run.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable, Mapping, Sequence
from typing import Any

# The parts of a run, each giving a piece per host; and which keys of a host's report come from which piece.
KINDS = ("start", "clients", "stop")
REPORT_KEYS = {
    "servers": "start",
    "nic_before": "start",
    "clients": "clients",
    "collects": "clients",
    "stops": "stop",
    "nic_after": "stop",
    "cpu_before": "start",
    "cpu_after": "stop",
}
#: The readings after the run, made by the stop or, on a host that only runs a client, by its client after the test.
READ_AFTER = ("nic_after", "cpu_after")
STATE_FILE = "series.json"
_RECORD_FILE = re.compile(r"record([0-9]{1,9})\.json")


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


def _write_json(spool: str, path: str, document: Mapping[str, Any]) -> None:
    _check_spool(spool)
    partial = f"{path}.{os.getpid()}.part"
    data = json.dumps(document, default=str).encode()
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


def _read_json(path: str) -> Any:
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
            return json.loads(handle.read())
        except ValueError:
            return None


def stop_hosts(run: Mapping[str, Any], read: Mapping[str, Any] | None = None) -> list[str]:
    """The hosts that take part in the run's stop: its servers, and the hosts whose NIC counters or CPU are read
    after - but those whose piece of the clients (``read``: the host's piece) has them already."""
    hosts = set(run.get("server_hosts") or ()) | set(run.get("cpu_hosts") or ())
    if run.get("nic_after"):
        hosts |= set(run.get("nic_addresses") or {})
    done = {h for h, piece in (read or {}).items() if isinstance(piece, Mapping) and set(READ_AFTER) & set(piece)}
    return sorted(hosts - (done - set(run.get("server_hosts") or ())))


def run_hosts(run: Mapping[str, Any]) -> list[str]:
    """Every host of the run."""
    hosts = set(run.get("server_hosts") or ()) | set(run.get("client_hosts") or ()) | set(stop_hosts(run))
    return sorted(hosts)


def clients_hosts(run: Mapping[str, Any]) -> list[str]:
    """The hosts that take part in the run's clients task: its clients, and the servers waiting for external clients."""
    hosts = set(run.get("client_hosts") or ())
    if run.get("external"):
        hosts |= set(run.get("server_hosts") or ())
    return sorted(hosts)


def reports(
    run: Mapping[str, Any],
    pieces: Mapping[str, Mapping[str, Mapping[str, Any]]],
    failure: Callable[[str], Any],
    missing: str,
) -> list[dict[str, object]]:
    """One report per host of the run, as ``paired.record.build_record`` reads them, from the run's pieces
    (``pieces[kind][host]``). A host that lacks a piece of a part it takes part in gets what the rescue saw
    (``failure(host)``: the role's ``__paired_test_failure``); a stop host without a stop piece gets ``missing`` as
    the reason (its servers are not known to be stopped)."""
    out: list[dict[str, object]] = []
    takes_part = {
        "start": set(run.get("server_hosts") or ()) | set(run.get("client_hosts") or ()),
        "clients": set(clients_hosts(run)),
        "stop": set(stop_hosts(run)),
    }
    for host in run_hosts(run):
        report: dict[str, object] = {"host": host, "failure": None}
        lacking = False
        for key, kind in REPORT_KEYS.items():
            piece = pieces.get(kind, {}).get(host)
            if key in READ_AFTER and key in (pieces.get("clients", {}).get(host) or {}):
                piece = pieces["clients"][host]  # read by its client, after the test (paired.parts.rides)
            if piece is not None:
                report[key] = piece.get(key)
                continue
            report[key] = None
            if host not in takes_part[kind]:
                continue
            if kind != "stop":
                lacking = True
            elif key == "stops":
                served = [p for p in run.get("pairs") or () if p.get("server") == host and not p.get("external_server")]
                report[key] = {"results": [{"item": p, "failed": True, "msg": missing} for p in served]}
            else:
                report[key] = {"failed": True, "msg": missing}
        if lacking:
            report["failure"] = failure(host)
        out.append(report)
    return out


def halts(record: Mapping[str, Any], continue_on_error: bool) -> bool:
    """Whether the series stops after this record: the run failed, ``paired_test_continue_on_error`` is not set
    and the run's point does not tolerate the failure (``repeat`` ``max_failures``)."""
    stability = record.get("stability")
    tolerated = bool(stability.get("tolerated")) if isinstance(stability, Mapping) else False
    return not record.get("ok") and not continue_on_error and not tolerated


def write_record(spool: str, record: Mapping[str, Any]) -> None:
    """Keep ``record`` with the records so far (one file per run, written atomically)."""
    _write_json(spool, os.path.join(spool, f"record{int(record['run'])}.json"), record)


def read_records(spool: str) -> list[dict[str, Any]]:
    """The records kept so far, in the order of their runs (a file that is not a record of ours is ignored)."""
    _check_spool(spool)
    numbers = sorted(int(m.group(1)) for name in os.listdir(spool) if (m := _RECORD_FILE.fullmatch(name)))
    found = [(n, _read_json(os.path.join(spool, f"record{n}.json"))) for n in numbers]
    return [record for n, record in found if isinstance(record, dict) and record.get("run") == n]


# --------------------------------------------------------------------------------------------
# The state of the series: written after each record, read by the next run
# --------------------------------------------------------------------------------------------


def new_state() -> dict[str, object]:
    """The state before the first run: not stopped, no point done, nothing measured."""
    return {"halt_after": None, "done_points": [], "dispatch": []}


def read_state(spool: str) -> dict[str, object]:
    """The state of the series (``new_state()`` before the first record)."""
    _check_spool(spool)
    data = _read_json(os.path.join(spool, STATE_FILE))
    state = new_state()
    if isinstance(data, dict):
        state.update({key: data[key] for key in state if key in data})
    return state


def next_state(state: Mapping[str, Any], record: Mapping[str, Any], halt: bool) -> dict[str, object]:
    """The state after ``record``: stopped after it (``halt``), its point done (``stability.done``), its dispatch time
    (the start delay of the next runs with as many clients learns from it)."""
    updated = {**new_state(), **state}
    if halt:
        updated["halt_after"] = record.get("run")
    stability = record.get("stability")
    if isinstance(stability, Mapping) and stability.get("done") and record.get("point") is not None:
        updated["done_points"] = [*updated["done_points"], record["point"]]
    if isinstance(record.get("dispatch_time"), int | float):
        clients = sorted({str(p.get("client")) for p in record.get("pairs") or () if isinstance(p, Mapping)})
        entry = {
            "run": record.get("run"),
            "dispatch_time": record["dispatch_time"],
            "pairs": [{"client": c} for c in clients],
        }
        updated["dispatch"] = [*updated["dispatch"], entry][-20:]
    return updated


def write_state(spool: str, state: Mapping[str, Any]) -> None:
    _write_json(spool, os.path.join(spool, STATE_FILE), state)


def skip_reason(state: Mapping[str, Any], run: Mapping[str, Any]) -> str | None:
    """Why the series does not make ``run``: it stopped after a failed run, or the run's point is done."""
    if state.get("halt_after") is not None:
        return f"not run: the series stopped after run {state['halt_after']} failed"
    if run.get("stability") is not None and run.get("point") in (state.get("done_points") or ()):
        return "not run: its point is done (repeat: stable, or given up)"
    return None


def ready_times(pieces: Mapping[str, Mapping[str, Any]]) -> list[float]:
    """When each host of the run was ready: the ``ready_at`` of its start piece (a host without one is left out)."""
    return [float(p["ready_at"]) for p in pieces.values() if isinstance(p.get("ready_at"), int | float)]


def start_at(ready: Sequence[float], delay: float, now: float) -> float:
    """The clients' common start time: when the last host of the run was ready (``ready_times``; now when none is
    known), plus ``delay``."""
    return round((max(ready) if ready else now) + delay, 3)
