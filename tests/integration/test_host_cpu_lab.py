# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Host CPU on the local lab: the paired_test role reads ``/proc/stat`` of each host of a run at its start and after
its stop (``paired_test_host_cpu``), under a real load - a busy loop started by the test in h1's namespace during the
run - and the record and the report carry the figures beside the raw readings.

One lab for the module: prefix ``hcpuw`` (env ``ESXILAB_HOST_CPU_PREFIX``), 2 hosts on 198.19.61.0/24 (env
``ESXILAB_HOST_CPU_SUBNET``), torn down with ``down --purge`` by the fixture's finalizer.

What it shows, honestly: a network namespace has no CPU of its own - ``/proc/stat`` in every lab host is the
machine's. So the busy loop in h1 shows in h2's reading as well (the same CPUs), which is what the docs say.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.labkit import (
    PAIRED_TEST_PLAYBOOK,
    Lab,
    lab_unavailable,
    paired_test_vars,
    run_playbook,
    skip_if,
)

pytestmark = [pytest.mark.lab, pytest.mark.slow]

PREFIX = os.environ.get("ESXILAB_HOST_CPU_PREFIX", "hcpuw")
SUBNET = os.environ.get("ESXILAB_HOST_CPU_SUBNET", "198.19.61")
PORT_BASE = 26101
PLAY_TIMEOUT = 180


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    skip_if(lab_unavailable(("ip", "ssh", "iperf3"), needs="network namespaces, bridge"))
    the_lab = Lab(PREFIX, tmp_path_factory.mktemp("hostcpu") / "state")
    with the_lab.session("--hosts", "2", "--subnet", f"{SUBNET}.0/24"):
        yield the_lab


def _mean_of(before: str, after: str, name: str) -> float:
    """The busy share of one cpu line between two raw readings, computed here (not with the collection's code)."""

    def line(text: str) -> list[int]:
        (found,) = [[int(w) for w in row.split()[1:9]] for row in text.splitlines() if row.split()[0] == name]
        return found

    first, second = line(before), line(after)
    total = sum(second) - sum(first)
    idle = second[3] + second[4] - first[3] - first[4]
    return 100.0 * (total - idle) / total


def test_a_busy_loop_in_a_lab_host_shows_in_the_record_and_the_report(lab: Lab, tmp_path: Path) -> None:
    tests = [{"name": "busy", "pairs": [{"server": "h1", "client": "h2"}], "duration": 3}]
    variables = paired_test_vars(tmp_path, tests, paired_test_port_base=PORT_BASE, report_history="",
                                 paired_test_nic_counters="none", paired_test_host_cpu=True)  # fmt: skip
    # one core kept busy in h1's namespace for the whole play (bounded: timeout), ended by its pid after
    busy = subprocess.Popen(
        [
            "ip",
            "netns",
            "exec",
            f"{PREFIX}-h1",
            "timeout",
            "-k",
            "1",
            str(PLAY_TIMEOUT),
            "sh",
            "-c",
            "while :; do :; done",
        ],
        start_new_session=True,
    )
    try:
        proc = run_playbook("-i", lab.inventory, PAIRED_TEST_PLAYBOOK, "-e", f"@{variables}", timeout=PLAY_TIMEOUT)
    finally:
        os.killpg(busy.pid, signal.SIGTERM)  # our own process group (start_new_session): the loop and its timeout
        busy.wait(timeout=10)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    (report_dir,) = sorted(p for p in (tmp_path / "reports").glob("report-*") if p.is_dir())
    document = json.loads((report_dir / "results.json").read_text())
    (run,) = document["runs"]
    cpu: dict[str, Any] = run["record"]["cpu"]
    assert sorted(cpu) == ["h1", "h2"]
    for host in ("h1", "h2"):
        entry = cpu[host]
        assert entry["kind"] == "linux" and entry["source"] == "/proc/stat" and entry["reason"] is None, entry
        # the raw readings are the machine's /proc/stat: one line per CPU of this machine and the total
        assert entry["cores"] == os.cpu_count() == entry["before"].count("\ncpu")
        # the figures are those of the raw text beside them
        assert entry["mean_percent"] == pytest.approx(_mean_of(entry["before"], entry["after"], "cpu"), abs=0.01)
        core = entry["max_core"]
        assert entry["max_core_percent"] == pytest.approx(_mean_of(entry["before"], entry["after"], core), abs=0.01)
        # the busy loop kept one core busy over the run (from the start part to the stop part: more than -t 3)
        assert entry["max_core_percent"] >= 80.0, entry
        # the total line and the core lines are separate counters of the kernel: with every core near 100 % (the
        # busy loop on one, the play on the other) the total can come out a tick above the busiest core (97.40
        # against 97.39 once) - not more than half a point
        assert 0.0 < entry["mean_percent"] <= entry["max_core_percent"] + 0.5, entry
        assert 3.0 <= entry["seconds"] <= 60.0
    # a namespace has no CPU of its own: h1 and h2 read the same machine (readings moments apart)
    assert abs(cpu["h1"]["mean_percent"] - cpu["h2"]["mean_percent"]) <= 25.0
    assert run["host_cpu"]["h1"]["mean_percent"] == cpu["h1"]["mean_percent"]
    (row,) = csv.DictReader((report_dir / "results.csv").read_text().splitlines())
    assert float(row["server_host_cpu_percent"]) == cpu["h1"]["mean_percent"]
    assert float(row["client_host_max_core_percent"]) == cpu["h2"]["max_core_percent"]
    summary = (report_dir / "summary.md").read_text()
    assert "## Host CPU" in summary and f"| {cpu['h1']['mean_percent']:.1f} |" in summary
