# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Servers left by an interrupted run (``iperf_run/leftover.py``): found by the start on their port,
stopped (with a warning) only when the run that started them is gone; refused with the holder named
otherwise. Liveness is checked with real processes of this machine."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.action.iperf_run import ARGUMENT_SPEC as SPEC
from ansible_collections.esxilab.iperf.plugins.plugin_utils import iperf_run as r
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.leftover import (
    RunId,
    holder_state,
    process_start,
    this_run,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.probe import holder_lines
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.scripts import _GUARD
from tests.unit.plugins.plugin_utils.test_iperf_run import GNU_CAPS, SS_OUTPUT, TOKEN, FakeHost, params

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
        params(**values), host, spec=SPEC, check_mode=check_mode, token=TOKEN, now=lambda: 1_700_000_000.0, run_id=ME
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
    assert "\n_stop1 4242 4243 /usr/bin/iperf3 15400 esxilab-iperf-15400.pid\n" in stop  # its pid, guard, binary
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


# ------------------------------------------------------------------------------------------
# A one-off server that has just ended, in a real shell: gone, never "reused" or "notours"
# ------------------------------------------------------------------------------------------

RUN_SHELLS = [shell for shell in (["/bin/sh", "-c"], ["busybox", "sh", "-c"]) if shutil.which(shell[0])]


def _private(tmp_path: Path) -> tuple[Path, Path]:
    base = tmp_path / "state"
    base.mkdir()
    base.chmod(0o1777)
    private = base / f"esxilab-iperf-{os.getuid()}"
    private.mkdir(mode=0o700)
    return base, private


@pytest.mark.parametrize("shell", RUN_SHELLS)
def test_an_ended_server_is_gone_whether_a_zombie_or_its_pidfile_removed(tmp_path: Path, shell: list[str]) -> None:
    base, private = _private(tmp_path)
    zombie = subprocess.Popen(["true"])  # ends at once; not reaped until wait(): a zombie, as an unreaped server
    other = subprocess.Popen(["sleep", "30"])
    try:
        time.sleep(0.3)
        targets = []
        for port, pid in ((15991, zombie.pid), (15992, 4_000_000), (15993, other.pid)):
            content = f"pid={pid}\nguard=\ntool=iperf3\nport={port}\nbind=\nbinary=/usr/bin/iperf3\n"
            entry = r.read_pidfile(f"esxilab-iperf-{port}.pid", content)
            assert entry is not None
            targets.append(entry)
            if port == 15991:
                (private / entry["name"]).write_text(content)  # 15992: its guard removed it already
            if port == 15993:  # another start's pidfile now: not ours to touch
                (private / entry["name"]).write_text(content.replace(f"pid={pid}", "pid=1"))
        script = r.build_stop_script(TOKEN, targets, caps=GNU_CAPS, state_dir=str(base))
        out = subprocess.run([*shell, script], capture_output=True, text=True, timeout=30, check=False)
        stopped = {
            r.parse_kv(s.args)["pid"]: r.parse_kv(s.args)["status"]
            for s in r.parse_sections(out.stdout, TOKEN)
            if s.name == "stopped"
        }
        assert stopped == {str(zombie.pid): "gone", "4000000": "gone", str(other.pid): "notours"}, out.stderr
        assert other.poll() is None  # never killed
    finally:
        zombie.wait(timeout=10)
        other.kill()
        other.wait(timeout=10)


@pytest.mark.parametrize("shell", RUN_SHELLS)
def test_a_process_whose_name_looks_like_a_state_is_alive(tmp_path: Path, shell: list[str]) -> None:
    # /proc/PID/stat is "PID (NAME) STATE ...": the state follows the last ") " (the shell's own read of it, as sed's
    # greedy 's/^.*) //' did), so a program named "x) Z" is not taken for a zombie
    base, _private_dir = _private(tmp_path)
    program = tmp_path / "x) Z"
    program.symlink_to(shutil.which("sleep") or "/bin/sleep")
    named = subprocess.Popen([str(program), "30"])
    zombie = subprocess.Popen(["true"])
    try:
        time.sleep(0.3)
        assert Path(f"/proc/{named.pid}/stat").read_text().startswith(f"{named.pid} (x) Z) ")
        head = r.build_stop_script(TOKEN, [], caps=GNU_CAPS, state_dir=str(base)).rsplit("\n", 1)[0]
        script = (
            f'{head}\nfor p in {named.pid} {zombie.pid} 4000000; do if _alive "$p"; then echo 1; else echo 0; fi; done'
        )
        out = subprocess.run([*shell, script], capture_output=True, text=True, timeout=30, check=False)
        assert out.stdout.split()[-3:] == ["1", "0", "0"], out.stdout + out.stderr  # after the state line
    finally:
        zombie.wait(timeout=10)
        named.kill()
        named.wait(timeout=10)


def test_the_guard_ends_with_its_server_even_a_zombie(tmp_path: Path) -> None:
    _base, private = _private(tmp_path)
    zombie = subprocess.Popen(["true"])
    pidfile = private / "esxilab-iperf-15994.pid"
    pidfile.write_text(f"pid={zombie.pid}\n")
    try:
        time.sleep(0.2)
        started = time.monotonic()
        guard = subprocess.run(
            ["/bin/sh", "-c", _GUARD, "esxilab-iperf-guard", str(zombie.pid), str(pidfile), "600"],
            timeout=30,
            check=False,
        )
        assert guard.returncode == 0 and time.monotonic() - started < 5  # not the 600 s of its limit
        assert not pidfile.exists()
    finally:
        zombie.wait(timeout=10)
