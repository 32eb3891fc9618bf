# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Ctrl-C in a paired_test play, then the same play again at once (issue 21), on the local lab.

A lab of two hosts (prefix ``ESXILAB_LEFTOVER_PREFIX``, default ``lftov``; subnet
``ESXILAB_LEFTOVER_SUBNET``, default 198.19.126.0/24), two pairs (h2 -> h1, h1 -> h2) of 1 s tests whose
clients wait 8 s at their barrier: the play is interrupted like Ctrl-C (SIGINT to the process group of
``ansible-playbook``) as soon as both servers listen, before any client connects, so the servers are left
(one-off iperf3 servers that nobody connected to: they would wait for their idle timeout). The same play run
again at once must stop them itself - saying so - and succeed; afterwards no iperf process is left on
the lab and no pidfile in the state directory.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration import labkit
from tests.integration.labkit import ANSIBLE_PLAYBOOK, iperf_processes, paired_test_vars, skip_if, wait_no_iperf

# make test-full's: on the loaded 2-core CI machine ansible-playbook once took over 60 s to end after the SIGINT (a
# worker in the keeper's wait for the other stop pieces), and the file costs about a minute of make test's 20
pytestmark = [pytest.mark.lab, pytest.mark.slow, pytest.mark.full]

PREFIX = os.environ.get("ESXILAB_LEFTOVER_PREFIX", "lftov")
SUBNET = os.environ.get("ESXILAB_LEFTOVER_SUBNET", "198.19.126")
HOSTS = ("h1", "h2")
PORT_BASE = 25601
PLAY_TIMEOUT = 150
TESTS = [
    {
        "name": "quick",
        "pairs": [{"server": "h1", "client": "h2"}, {"server": "h2", "client": "h1"}],
        "duration": 1,
        "start_delay": 8,  # the clients wait at their barrier: the window for the Ctrl-C
    }
]


class Lab(labkit.Lab):
    def up(self) -> None:
        self.cli("up", "--hosts", "2", "--subnet", f"{SUBNET}.0/24", "--rate", "100mbit")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    skip_if(labkit.lab_unavailable(("ip", "tc", "ssh", "iperf3"), probe_netns=True))
    the_lab = Lab(PREFIX, tmp_path_factory.mktemp("leftover") / "state")
    with the_lab.session():
        the_lab.up()
        yield the_lab


def _servers() -> list[str]:
    return [p for p in iperf_processes(PREFIX, HOSTS) if " -s " in f"{p} "]


def _settled(seconds: float = 40.0) -> list[str]:
    """The lab's iperf servers once what the interrupted run left on the hosts has settled: no client for 3 s in a
    row (up to ``seconds``). A run dispatches its clients right after its servers started. Killed then, the run's
    task process (a process group of its own) used to outlive the play with its SSH sessions, and the clients waiting
    on their hosts ran their test at the start time - against the rerun's one-off servers; the task now ends itself
    when the play is gone (paired_test_host: _end_with_the_play), the hosts hang up on the clients' scripts."""
    deadline, quiet_since = time.monotonic() + seconds, None
    while time.monotonic() < deadline:
        if [p for p in iperf_processes(PREFIX, HOSTS) if " -c " in f"{p} "]:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= 3.0:
            break
        time.sleep(0.1)
    return _servers()


def _interrupt(argv: list[str], env: dict[str, str], log_path: Path, sig: signal.Signals) -> str:
    """Start the play, send ``sig`` to its whole process group once both servers run, return its output."""
    with log_path.open("w") as log:
        first = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + PLAY_TIMEOUT
        while len(_servers()) < 2 and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_servers()) == 2, log_path.read_text()[-3000:]
        os.killpg(first.pid, sig)  # Ctrl-C: the whole foreground process group; SIGKILL: a controller killed
        first.wait(timeout=60)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(timeout=10)
    assert first.returncode != 0, log_path.read_text()[-3000:]
    return log_path.read_text()


def test_ctrl_c_or_a_killed_controller_then_a_rerun_stops_the_leftovers(lab: Lab, tmp_path: Path) -> None:
    """Ctrl-C, then the controller killed outright (SIGKILL): whatever each left on the hosts once settled, the next
    run stops it, saying so, and runs."""
    vars_file = paired_test_vars(tmp_path, TESTS, paired_test_port_base=PORT_BASE)
    argv = [str(ANSIBLE_PLAYBOOK), "-i", str(lab.inventory), str(labkit.PAIRED_TEST_PLAYBOOK), "-e", f"@{vars_file}"]
    env = labkit.ansible_env(ANSIBLE_FORKS="10")
    interrupted = _interrupt(argv, env, tmp_path / "interrupted.log", signal.SIGINT)
    after_ctrl_c = _settled()
    print(f"servers left by Ctrl-C: {len(after_ctrl_c)}")
    assert len(after_ctrl_c) in (0, 2), (after_ctrl_c, interrupted[-3000:])
    if after_ctrl_c:
        again = subprocess.run(argv, capture_output=True, text=True, timeout=PLAY_TIMEOUT, check=False, env=env)
        assert again.returncode == 0, again.stdout[-4000:]
    assert wait_no_iperf(PREFIX, HOSTS) == []

    interrupted = _interrupt(argv, env, tmp_path / "killed.log", signal.SIGKILL)
    left = _settled()
    assert len(left) == 2, (left, interrupted[-3000:])  # what the killed controller left: both servers

    started = time.monotonic()
    again = subprocess.run(argv, capture_output=True, text=True, timeout=PLAY_TIMEOUT, check=False, env=env)
    seconds = time.monotonic() - started
    output = " ".join((again.stdout + again.stderr).split())
    assert again.returncode == 0, output[-4000:]
    for port in (PORT_BASE, PORT_BASE + 1):
        assert "stopped a server left by an interrupted run (ansible pid" in output, output[-4000:]
        assert f"port {port}, started at " in output, output[-4000:]
    assert wait_no_iperf(PREFIX, HOSTS) == []
    assert sorted(p.name for p in (tmp_path / "remote").rglob("*.pid")) == []
    print(f"rerun after Ctrl-C: {seconds:.1f} s")
