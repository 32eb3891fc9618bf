# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A server start that reports ``listening`` has a listener at that moment -- also under CPU load.

A private lab (``lab/esxilab_lab.py``, prefix ``ESXILAB_RACE_PREFIX`` (default ``elrace``), 3 hosts on
``ESXILAB_RACE_SUBNET`` (default 198.19.245.0/24)) and the ``iperf_run`` backend over real SSH
(the lab's key, ``/bin/sh -s`` as Ansible's connection runs it, no Python on the host side):
each of a few workers starts a server on a port of its own, asks the host's network namespace
(``ss -ltn`` from outside the SSH session, right after the start returned) whether a socket
listens there, ends the server (by its pid, once its command line shows it is ours; its guard
then removes the pidfile) and starts the next one on the *same* port (the previous server's
log is there each time). Busy loops started by the test (one per core, bounded by
``timeout``) load the machine meanwhile. The counts are printed; a ``listening`` start without
a listener fails the test.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import secrets
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.esxilab.iperf.plugins.action.iperf_run import ARGUMENT_SPEC
from ansible_collections.esxilab.iperf.plugins.plugin_utils import iperf_run as backend
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import CommandOutput
from tests.integration.labkit import Lab, lab_unavailable, skip_if

# serial: its busy loops load every core on purpose, so it runs alone, after the parallel tests (Makefile)
pytestmark = [pytest.mark.live, pytest.mark.slow, pytest.mark.lab, pytest.mark.serial]

PREFIX = os.environ.get("ESXILAB_RACE_PREFIX", "elrace")
SUBNET = os.environ.get("ESXILAB_RACE_SUBNET", "198.19.245.0/24")
# make test: 40 starts in at most 40 s; make test-full: 1000 in at most 600 s (ESXILAB_RACE_STARTS/_SECONDS
# override both)
SCALES = [
    pytest.param(40, 40.0, id="40-starts"),
    pytest.param(1000, 600.0, id="1000-starts", marks=pytest.mark.full),
]
OVERRIDE_STARTS = os.environ.get("ESXILAB_RACE_STARTS")
WORKERS = 6
HOSTS = 3
BASE_PORT = 24600  # ports BASE_PORT .. BASE_PORT + WORKERS - 1, one per worker
OVERRIDE_SECONDS = os.environ.get("ESXILAB_RACE_SECONDS")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    skip_if(lab_unavailable(("ip", "ss", "ssh", "ssh-keygen", "iperf3", "timeout"), ansible=False))
    the_lab = Lab(PREFIX, tmp_path_factory.mktemp("race-lab"), timeout=180)
    with the_lab.session("--hosts", str(HOSTS), "--subnet", SUBNET):
        inventory = yaml.safe_load(the_lab.inventory.read_text())
        yield inventory["all"]["children"]["lab"]["hosts"]


def _executor(host: dict[str, Any]) -> Any:
    """Run a script on the lab host as Ansible's ssh connection does: one session, plain sh."""
    argv = [
        "ssh",
        *str(host["ansible_ssh_common_args"]).split(),
        "-i",
        str(host["ansible_ssh_private_key_file"]),
        "-o",
        "BatchMode=yes",
        f"root@{host['ansible_host']}",
        "/bin/sh -s",
    ]

    def execute(script: str) -> CommandOutput:
        proc = subprocess.run(argv, input=script, capture_output=True, text=True, timeout=60, check=False)
        return CommandOutput(proc.returncode, proc.stdout, proc.stderr)

    return execute


def _listens(netns: str, port: int) -> bool:
    out = subprocess.run(
        ["ip", "netns", "exec", netns, "ss", "-Hltn", f"sport = :{port}"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return bool(out.stdout.strip())


@contextlib.contextmanager
def _cpu_load(seconds: float) -> Iterator[int]:
    """One busy loop per core, each bounded by ``timeout``; killed by pid afterwards."""
    cores = os.cpu_count() or 1
    procs = [
        subprocess.Popen(["timeout", str(int(seconds)), "sh", "-c", "while :; do :; done"], start_new_session=True)
        for _core in range(cores)
    ]
    try:
        yield cores
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _end(pid: int | None, port: int) -> None:
    """End the server (same pid namespace) once its command line shows it is ours; wait until it is gone."""
    if pid is None:
        return
    proc = Path(f"/proc/{pid}")
    with contextlib.suppress(OSError):
        if f"-s\0-p\0{port}\0" in proc.joinpath("cmdline").read_text():
            os.kill(pid, signal.SIGTERM)
    limit = time.monotonic() + 5
    while time.monotonic() < limit:
        try:
            if proc.joinpath("stat").read_text().rpartition(")")[2].split()[0] == "Z":
                return
        except OSError:
            return
        time.sleep(0.01)


@pytest.mark.parametrize(("starts", "seconds"), SCALES)
def test_a_listening_start_has_a_listener_under_load(
    lab: dict[str, Any], tmp_path: Path, starts: int, seconds: float
) -> None:
    starts = int(OVERRIDE_STARTS or starts)
    time_limit = float(OVERRIDE_SECONDS or seconds)
    names = sorted(lab)
    state_dir = tmp_path / "state"  # the lab hosts share this machine's file system: a directory of this test's own
    state_dir.mkdir(mode=0o700)
    counts: Counter[str] = Counter()
    lock = threading.Lock()
    deadline = time.monotonic() + time_limit
    false_listening: list[str] = []

    def worker(index: int, count: int) -> None:
        host = lab[names[index % len(names)]]
        execute = _executor(host)
        port = BASE_PORT + index
        common = {"tool": "iperf3", "state_dir": str(state_dir), "port": port}
        for _start in range(count):
            if time.monotonic() > deadline:
                with lock:
                    counts["not started (time limit)"] += 1
                continue
            try:
                result = backend.run(
                    {"mode": "server", "server_timeout": 60, **common},
                    execute,
                    spec=ARGUMENT_SPEC,
                    check_mode=False,
                    token=secrets.token_hex(8),
                    now=time.time,
                )
            except backend.IperfRunError as err:
                with lock:
                    counts[f"failed: {err.message[:80]}"] += 1
                continue
            listens = _listens(str(host["lab_netns"]), port)
            status = f"{result['status']} (listener {result.get('listener')})"
            with lock:
                counts[f"{status}, {'a socket listens' if listens else 'NO socket listens'}"] += 1
                if result["status"] == "listening" and not listens:
                    false_listening.append(f"{host['ansible_host']}:{port} pid {result['pid']}")
            _end(result["pid"], port)

    per_worker = [starts // WORKERS + (1 if i < starts % WORKERS else 0) for i in range(WORKERS)]
    began = time.monotonic()
    with _cpu_load(time_limit + 30) as cores, concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        futures = [pool.submit(worker, i, n) for i, n in enumerate(per_worker)]
        for future in futures:
            future.result(timeout=time_limit + 60)
    took = time.monotonic() - began
    # the guards remove the pidfiles of ended servers within a second or two: nothing is left
    private = state_dir / f"esxilab-iperf-{os.getuid()}"
    limit = time.monotonic() + 15
    while list(private.glob("*.pid")) and time.monotonic() < limit:
        time.sleep(0.2)
    left = [p.name for p in private.glob("*.pid")]
    print(f"\n{starts} server starts on {HOSTS} lab hosts, {WORKERS} at a time, {cores} busy loop(s), {took:.1f} s:")
    for what, count in sorted(counts.items()):
        print(f"  {count:5d}  {what}")
    assert not false_listening, f"reported listening without a listener: {false_listening}"
    assert not left, f"pidfiles left (servers or guards still running?): {left}"
    started = starts - counts["not started (time limit)"]
    assert started >= starts // 4, f"too few starts within {time_limit:g} s (machine overloaded?): {dict(counts)}"
    listening = sum(n for what, n in counts.items() if what.startswith("listening"))
    assert listening >= started * 0.9, f"too few starts reported listening: {dict(counts)}"
