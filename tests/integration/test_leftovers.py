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


def test_ctrl_c_then_an_immediate_rerun_stops_the_leftovers(lab: Lab, tmp_path: Path) -> None:
    vars_file = paired_test_vars(tmp_path, TESTS, paired_test_port_base=PORT_BASE)
    argv = [str(ANSIBLE_PLAYBOOK), "-i", str(lab.inventory), str(labkit.PAIRED_TEST_PLAYBOOK), "-e", f"@{vars_file}"]
    env = labkit.ansible_env(ANSIBLE_FORKS="10")
    with (tmp_path / "interrupted.log").open("w") as log:
        first = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + PLAY_TIMEOUT
        while len(_servers()) < 2 and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_servers()) == 2, (tmp_path / "interrupted.log").read_text()[-3000:]
        os.killpg(first.pid, signal.SIGINT)  # Ctrl-C: the whole foreground process group
        first.wait(timeout=60)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(timeout=10)
    interrupted = (tmp_path / "interrupted.log").read_text()
    assert first.returncode != 0, interrupted[-3000:]
    left = _servers()
    assert len(left) == 2, (left, interrupted[-3000:])  # what the Ctrl-C left: both servers

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
