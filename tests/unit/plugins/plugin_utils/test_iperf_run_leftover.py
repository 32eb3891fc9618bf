# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Servers left by an interrupted run (``iperf_run/leftover.py``): found by the start on their port,
stopped (with a warning) only when the run that started them is gone; refused with the holder named
otherwise. Liveness is checked with real processes of this machine."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils import iperf_run as r
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.leftover import (
    RunId,
    holder_state,
    process_start,
    this_run,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.probe import holder_lines
from tests.unit.plugins.plugin_utils.test_iperf_run import SS_OUTPUT, TOKEN, FakeHost, params

ME = this_run(os.getpid())
STARTED = 1_700_000_000  # 2023-11-14T22:13:20Z


def _dead_run() -> RunId:
    """A run whose ansible process has ended (a real process, started and reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    start = process_start(proc.pid)
    proc.wait(timeout=10)
    return RunId(ME.host, proc.pid, start)


def _pidfile(owner: str | None, port: int = 15400) -> str:
    lines = [f"pid=4242\nguard=4243\ntool=iperf3\nport={port}\nbind=\nbinary=/usr/bin/iperf3\n"]
    if owner is not None:
        lines.append(f"owner={owner}\nstarted={STARTED}\nuntil={STARTED + 150}\n")
    return "".join(lines)


def _run(host: FakeHost, *, check_mode: bool = False, **values: Any) -> dict[str, Any]:
    result: dict[str, Any] = r.run(
        params(**values), host, check_mode=check_mode, token=TOKEN, now=lambda: 1_700_000_000.0, run_id=ME
    )
    return result


def test_a_server_left_by_an_interrupted_run_is_stopped_and_said_so() -> None:
    dead = _dead_run()
    host = FakeHost(pidfiles=[(True, _pidfile(dead.text))])
    result = _run(host, mode="server", port=15400)
    assert result["changed"] is True and result["status"] == "listening"
    note = (
        f"stopped a server left by an interrupted run (ansible pid {dead.pid} on {ME.host}, which is gone): "
        "pid 4242, port 15400, started at 2023-11-14T22:13:20Z"
    )
    assert result["leftovers"] == [note] and note in result["warnings"]
    # probe, start (found it), stop (its own checks before the kill), start again
    assert [" stopped pid=" in s for s in host.scripts] == [False, False, True, False]
    stop = host.scripts[2]
    assert "grep -qx 'pid=4242'" in stop and "_isours 4242 /usr/bin/iperf3 15400" in stop
    # the new server's pidfile names this run, its start and its end
    assert f"owner={ME.text}" in host.scripts[3] and '"started=$_t0" "until=$_tu"' in host.scripts[3]


def test_check_mode_says_it_would_stop_the_leftover() -> None:
    host = FakeHost(pidfiles=[(True, _pidfile(_dead_run().text))])
    result = _run(host, check_mode=True, mode="server", port=15400)
    assert result["pid"] is None and result["changed"] is True
    assert result["warnings"][0].startswith("would stop a server left by an interrupted run")
    assert not any(" stopped pid=" in s for s in host.scripts)  # nothing was stopped


@pytest.mark.parametrize(
    ("owner", "needles"),
    [
        (lambda: ME.text, ["a server this run started already runs on port 15400", "mode=stop port=15400"]),
        (
            lambda: this_run(os.getppid()).text,  # a live process of this machine: another run still going
            ["held by a server of another ansible run that is still going on this controller", "wait for that run"],
        ),
        (
            lambda: "other-controller.example:1234:99",
            [
                "started from the controller other-controller.example (ansible pid 1234)",
                "cannot tell whether that run still goes on",
                "ansible <host> -m esxilab.iperf.iperf_run -a 'mode=stop port=15400'",
                "ends it by itself at 2023-11-14T22:15:50Z",
            ],
        ),
        (lambda: None, ["started by a release that did not record its run"]),
        (lambda: f"{ME.host}:1;rm -rf /:", ["did not record its run"]),  # a planted owner is not trusted
    ],
)
def test_a_server_of_a_live_or_unknown_run_is_refused_and_named(owner: Any, needles: list[str]) -> None:
    host = FakeHost(pidfiles=[(True, _pidfile(owner()))])
    with pytest.raises(r.IperfRunError) as err:
        _run(host, mode="server", port=15400)
    assert err.value.result["error_kind"] == "port_in_use"
    for needle in needles:
        assert needle in err.value.message, err.value.message
    assert not any(" stopped pid=" in s for s in host.scripts)  # never killed


def test_holder_state_with_real_processes() -> None:
    assert holder_state(ME.text, ME) == "this"
    assert holder_state(_dead_run().text, ME) == "gone"
    parent = this_run(os.getppid())
    assert holder_state(parent.text, ME) == "live"
    if ME.start:  # /proc: a reused pid (another start time) is gone
        assert holder_state(RunId(ME.host, parent.pid, str(int(parent.start) + 1)).text, ME) == "gone"
    for owner in (None, "", "x", f"other:{os.getpid()}:", f"{ME.host}:0:", f"{ME.host}:12:ab", 42):
        assert holder_state(owner, ME) == "unknown"


def test_port_held_by_another_program_names_it() -> None:
    listing = SS_OUTPUT.replace(
        "127.0.0.1:15430      0.0.0.0:*", '127.0.0.1:15430      0.0.0.0:*    users:(("nc",pid=777,fd=3))'
    )
    with pytest.raises(r.IperfRunError) as err:
        _run(FakeHost(listing=("ss", listing)), mode="server", port=15430, bind="127.0.0.1")
    assert 'held by: tcp LISTEN 0 4096 127.0.0.1:15430 0.0.0.0:* users:(("nc",pid=777,fd=3))' in err.value.message
    conflicts = r.port_conflicts(r.parse_listeners(listing), proto="tcp", port=15432, bind=None)
    assert holder_lines(listing, conflicts) == ["tcp LISTEN 0 4096 *:15432 *:*"]


def test_read_pidfile_reads_owner_and_times_as_written() -> None:
    entry = r.read_pidfile("esxilab-iperf-15400.pid", _pidfile("h:1:2") + "started=x\n")
    assert entry is not None
    assert (entry["owner"], entry["started"], entry["until"]) == ("h:1:2", STARTED, STARTED + 150)
    legacy = r.read_pidfile("esxilab-iperf-15400.pid", _pidfile(None))
    assert legacy is not None and (legacy["owner"], legacy["started"], legacy["until"]) == (None, None, None)
