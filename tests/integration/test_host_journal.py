# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A Linux peer's MTU after an interrupted ``playbooks/mtu-compare.yml``: put back by ``restore.yml`` and by the
next run, which restores it before it journals the MTU again.

Real parts: the local lab (``lab/esxilab_lab.py``, prefix ``elhj``, 198.19.214.0/24; h3 and h4 with MTU 9000 as
in ``inventories/lab``), real ``ansible-playbook`` over SSH, ``ip link`` in the hosts' namespaces. The play is
killed (SIGKILL to its process group: no ``always:`` runs) once the first phase has set the peers to MTU 1500.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.collection_path import REPO
from tests.integration import labkit
from tests.integration.labkit import skip_if

pytestmark = [pytest.mark.lab]

# overridable so that parallel sessions can run this file on their own lab prefix and subnet
PREFIX = os.environ.get("ESXILAB_HOSTJOURNAL_PREFIX", "elhj")
SUBNET = os.environ.get("ESXILAB_HOSTJOURNAL_SUBNET", "198.19.214")
OVERLAY = REPO / "inventories" / "lab"
PLAYBOOKS = REPO / "playbooks"
PEERS = ("h3", "h4")
PLAY_TIMEOUT = 150


def _mtu(host: str) -> int:
    link = labkit.ip_json("-n", f"{PREFIX}-{host}", "link", "show", "eth0")
    return int(link[0]["mtu"])


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[labkit.Lab]:
    skip_if(labkit.lab_unavailable(("ip", "tc", "ssh", "ssh-keygen", "iperf3"), probe_netns=True))
    the_lab = labkit.Lab(PREFIX, tmp_path_factory.mktemp(PREFIX) / "lab", timeout=180)
    args = ["--hosts", "4", "--subnet", f"{SUBNET}.0/24", "--rate", "100mbit"]
    with the_lab.session(*args, "--host-mtu", "h3=9000", "--host-mtu", "h4=9000") as up:
        try:
            yield up
        finally:
            shutil.rmtree(f"/tmp/esxilab-lab-{PREFIX}", ignore_errors=True)  # the hosts' journals (inventories/lab)


def _argv(lab: labkit.Lab, tmp: Path, playbook: str, **variables: object) -> list[str]:
    vars_file = tmp / f"vars-{time.monotonic_ns()}.json"
    vars_file.write_text(json.dumps({"esxilab_reports_dir": str(tmp / "reports"), **variables}))
    return [
        str(labkit.ANSIBLE_PLAYBOOK),
        *("-i", str(lab.inventory), "-i", str(OVERLAY), str(PLAYBOOKS / playbook), "-e", f"@{vars_file}"),
    ]


def _play(lab: labkit.Lab, tmp: Path, playbook: str, **variables: object) -> subprocess.CompletedProcess[str]:
    argv = _argv(lab, tmp, playbook, **variables)
    env = labkit.ansible_env(ANSIBLE_FORKS="4")
    return subprocess.run(argv, capture_output=True, text=True, timeout=PLAY_TIMEOUT, check=False, env=env)


def _interrupt_mtu_compare(lab: labkit.Lab, tmp: Path) -> None:
    """Start mtu-compare.yml with long runs; kill it once both peers are at MTU 1500 (its first phase)."""
    log = (tmp / "interrupted.log").open("w")
    proc = subprocess.Popen(
        _argv(lab, tmp, "mtu-compare.yml", esxilab_mtu_duration=30, paired_test_port_base=5311),
        stdout=log,
        stderr=subprocess.STDOUT,
        env=labkit.ansible_env(ANSIBLE_FORKS="4"),
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None:
            if all(_mtu(h) == 1500 for h in PEERS):
                break
            time.sleep(0.1)
        assert proc.poll() is None, (tmp / "interrupted.log").read_text()[-3000:]
        assert all(_mtu(h) == 1500 for h in PEERS), (tmp / "interrupted.log").read_text()[-3000:]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        log.close()
    # the killed run's iperf processes (in this lab's namespaces only) are not what this test is about
    for line in labkit.iperf_processes(PREFIX, PEERS):
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(line.split()[2].rstrip(":")), signal.SIGKILL)
    assert all(_mtu(h) == 1500 for h in PEERS)  # left changed, nothing put it back


def test_restore_yml_puts_back_the_mtu_an_interrupted_mtu_compare_left(lab: labkit.Lab, tmp_path: Path) -> None:
    _interrupt_mtu_compare(lab, tmp_path)
    proc = _play(lab, tmp_path, "restore.yml", esxilab_restore_hosts="h1:h3:h4")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    assert [_mtu(h) for h in PEERS] == [9000, 9000]
    for host in PEERS:
        assert f"{host}: put back" in output and "with: ip link set dev eth0 mtu 9000" in output, output[-3000:]
    assert "h1: nothing pending" in output
    again = _play(lab, tmp_path, "restore.yml", esxilab_restore_hosts="h3:h4")
    assert again.returncode == 0 and all(f"{h}: nothing pending" in again.stdout for h in PEERS), again.stdout


@pytest.mark.full
def test_the_next_mtu_compare_restores_before_it_records(lab: labkit.Lab, tmp_path: Path) -> None:
    _interrupt_mtu_compare(lab, tmp_path)
    proc = _play(lab, tmp_path, "mtu-compare.yml", paired_test_port_base=5321)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    assert "recorded changes that were not put back" in output and "put back now: link mtu={'eth0': 9000}" in output
    # had the run journaled the 1500 it found, its always: would have left 1500
    assert [_mtu(h) for h in PEERS] == [9000, 9000]
