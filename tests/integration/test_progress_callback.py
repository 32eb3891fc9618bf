# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The progress callback (``esxilab.iperf.progress``) during a real sweep on the local lab.

The repository's ``ansible.cfg`` enables the callback; ``ESXILAB_PROGRESS=always`` makes it
print although the output is a pipe (in ``auto`` it is quiet there, as in CI). An 8-run sweep of
1 s runs (streams 1..8) on lab ``fu1`` (2 hosts on 198.19.110.0/24, 1 Gbit/s tbf): each line is
stamped as it arrives. Every figure is printed. The lab is removed afterwards.

The time left is the remaining runs' planned seconds plus, per remaining run, the overhead the
finished runs took so far - from the second run on, the runs after the first, whose one-off costs
would otherwise count for every remaining run (``plugins/plugin_utils/paired/progress.py``). Every run
here plans the same 1 s, so line 1 shows (N - 1) x the time since the runs began, which must lie
between the start of the play and line 1 less run 1's planned second; line k >= 2 shows (N - k) x
(the time since line 1) / (k - 1), within the rounding of the shown time and the lines' stamps.
That checks the forecast against its own clock. It is not compared with the time the remaining runs
really took: that is a forecast against the future, which a machine whose load changes during the
sweep (CI on a shared 2-core machine) misses by any margin (measured under load: -30.6 % at the
midpoint), and for the same reason the time left need not fall from line to line.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.collection_path import REPO
from tests.integration.labkit import (
    ANSIBLE_PLAYBOOK,
    PAIRED_TEST_PLAYBOOK,
    Lab,
    lab_unavailable,
    paired_test_vars,
    repo_ansible_env,
    skip_if,
)

pytestmark = [pytest.mark.lab, pytest.mark.slow]

PLAYBOOK = PAIRED_TEST_PLAYBOOK
# overridable so that parallel sessions can run this file on their own lab prefix and subnet
PREFIX = os.environ.get("ESXILAB_PROGRESS_PREFIX", "fu1")
SUBNET = os.environ.get("ESXILAB_PROGRESS_SUBNET", "198.19.110")
PORT_BASE = 25711
PLAY_TIMEOUT = 300
# How much later a line may be stamped than the callback read its clock (a pipe and a busy machine's
# scheduler between them); a forecast off by one run's overhead (>= 2 s here) moves the implied start by more.
STAMP_JITTER = 0.3
RUNS = 8
LINE = re.compile(
    r"^run (?P<run>\d+)/(?P<count>\d+) sweep (?P<streams>\d+) streams? forward: (?P<figure>[0-9.]+ [A-Za-z]+/s)"
    r" \u2014 (?:(?P<left>.+) left|last run)$"
)


def _seconds(text: str) -> float:
    """``2 min 10 s`` / ``44 s`` / ``1 h 02 min`` as seconds."""
    total = 0.0
    for value, unit in re.findall(r"(\d+) (h|min|s)\b", text):
        total += int(value) * {"h": 3600, "min": 60, "s": 1}[unit]
    return total


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    skip_if(lab_unavailable(("ip", "tc", "ssh", "iperf3"), sshd=False, ansible=False))
    the_lab = Lab(PREFIX, tmp_path_factory.mktemp(PREFIX) / "state", timeout=120)
    with the_lab.session("--hosts", "2", "--subnet", f"{SUBNET}.0/24", "--rate", "1gbit"):
        yield the_lab.inventory


def _stamped_play(argv: list[str], env: dict[str, str]) -> tuple[int, list[tuple[float, str]]]:
    """Run the play; every output line with the monotonic time it arrived."""
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=REPO, bufsize=1
    )
    timer = threading.Timer(PLAY_TIMEOUT, proc.kill)  # our own child only
    timer.start()
    lines: list[tuple[float, str]] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append((time.monotonic(), line.rstrip("\n")))
        rc = proc.wait()
    finally:
        timer.cancel()
    return rc, lines


def test_progress_lines_with_a_time_left_from_the_overhead_measured_so_far(lab: Path, tmp_path: Path) -> None:
    tests = [{"name": "sweep", "pairs": [{"server": "h1", "client": "h2"}], "duration": 1}]
    streams = list(range(1, RUNS + 1))
    settings = {"paired_test_streams": streams, "paired_test_port_base": PORT_BASE, "paired_test_report_name": "sweep"}
    variables = paired_test_vars(tmp_path, tests, **settings)
    env = repo_ansible_env(ANSIBLE_FORKS="10", ESXILAB_PROGRESS="always")  # the repository's ansible.cfg (cwd)
    argv = [str(ANSIBLE_PLAYBOOK), "-i", str(lab), str(PLAYBOOK), "-e", f"@{variables}"]
    started = time.monotonic()
    rc, lines = _stamped_play(argv, env)
    output = "\n".join(text for _at, text in lines)
    assert rc == 0, output[-4000:]

    progress = [(at, m) for at, text in lines if (m := LINE.match(text))]
    assert [int(m["run"]) for _at, m in progress] == list(range(1, RUNS + 1)), output[-4000:]
    assert {int(m["count"]) for _at, m in progress} == {RUNS}
    assert [int(m["streams"]) for _at, m in progress] == list(range(1, RUNS + 1))
    end = progress[-1][0]  # the last run's line: the runs are over
    print(f"\n{'line':<60} {'at':>7} {'left (shown)':>13} {'left (real)':>12}")
    for at, m in progress:
        left = "" if m["left"] is None else f"{_seconds(m['left']):.0f} s"
        print(f"{m.group(0)[:60]:<60} {at - started:6.1f}s {left:>13} {end - at:11.1f}s")
    assert progress[-1][1]["left"] is None  # the last run says so
    # each line against the forecast's own clock (see the module docstring), +- its uncertainty: the shown time is
    # rounded to the second (+- 0.5 s) and each line is stamped when it arrives, not when the callback read its clock
    # (STAMP_JITTER, for each of the two stamps a line's forecast depends on)
    first_at, first = progress[0]
    began = first_at - _seconds(first["left"]) / (RUNS - 1)  # line 1: (N - 1) x the time run 1 took
    print(f"runs began (from line 1): {began - started:.2f} s")
    assert started - 0.5 - STAMP_JITTER <= began <= first_at - 1.0 + 0.5 + STAMP_JITTER, began - started
    for k, (at, m) in enumerate(progress[1:-1], start=2):  # line k: (N - k) x the time per run after run 1
        expected = (RUNS - k) * (at - first_at) / (k - 1)
        tolerance = 0.5 + 2 * STAMP_JITTER * (RUNS - k) / (k - 1)
        print(f"line {k}: shown {_seconds(m['left']):.0f} s, its clock says {expected:.1f} +- {tolerance:.1f} s")
        assert abs(_seconds(m["left"]) - expected) <= tolerance, (k, m.group(0), expected)

    summary = [text for _at, text in lines if text.startswith(f"paired_test ({PLAYBOOK.name}): ")]
    print("\n".join(summary))
    assert summary and re.match(rf"paired_test \(\S+\): {RUNS} run\(s\) in .+: {RUNS} with a figure$", summary[0]), (
        summary
    )
    assert "is not an option of the role" not in output  # a clean play: no typo warning
