# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A hostile iperf3 server outside the inventory: its figures are claims, checked, and never a baseline.

THIS test plays the hostile box: it starts ``tests/integration/hostile_iperf3.py`` (a small server speaking iperf3's
real control protocol) in h1's namespace, outside Ansible, and runs the paired_test play limited to h2 with a pair
whose server is outside the inventory (``external: {server: true}``). The real iperf3 client on h2 sends for 1 s per
run; the server then claims 1000 x the bytes it read, in a 1000 x shorter time, and a CPU of 1e9 %. The run must be
``complete: false`` with a warning naming the server, the client's raw output kept, and the report recorded in the
history (SQLite) without a sample. Then a real ``iperf3 -s`` takes its place: the honest run has no baseline (it is
not compared with the hostile one), so the gate (``report_max_drop_percent``) passes.

Lab: prefix ``xclaim`` (env ``ESXILAB_CLAIMS_PREFIX``), 2 hosts on 198.19.133.0/24 (env ``ESXILAB_CLAIMS_SUBNET``),
500 Mbit/s tbf per host.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.integration.labkit import (
    PAIRED_TEST_PLAYBOOK,
    Lab,
    lab_unavailable,
    listening,
    paired_test_vars,
    run_playbook,
    skip_if,
    wait_no_iperf,
)
from tests.processes import end_process

pytestmark = [pytest.mark.lab, pytest.mark.slow]

PREFIX = os.environ.get("ESXILAB_CLAIMS_PREFIX", "xclaim")
SUBNET = os.environ.get("ESXILAB_CLAIMS_SUBNET", "198.19.133")
HOSTS = ("h1", "h2")
ADDRESS = {f"h{i}": f"{SUBNET}.{10 + i}" for i in range(1, 3)}
PORT = 25931
RUNS = 2  # repeat: two samples a side, so that Welch's interval exists and a comparison could fail the gate
PLAY_TIMEOUT = 150
SERVER_LIFETIME = 120
LISTEN_WAIT = 10.0
HOSTILE = Path(__file__).with_name("hostile_iperf3.py")
LINE_RATE = 500_000_000


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    skip_if(lab_unavailable(("ip", "tc", "ss", "ssh", "iperf3", "timeout")))
    the_lab = Lab(PREFIX, tmp_path_factory.mktemp("xclaim") / "state", timeout=120)
    with the_lab.session("--hosts", "2", "--subnet", f"{SUBNET}.0/24", "--rate", "500mbit"):
        yield the_lab


@contextlib.contextmanager
def outside_server(command: Sequence[str], output: Path) -> Iterator[Path]:
    """``command`` in h1's namespace, outside Ansible, bounded by ``timeout``, its output in ``output``; ended."""
    argv = ["timeout", "-k", "2", str(SERVER_LIFETIME), "ip", "netns", "exec", f"{PREFIX}-h1", *command]
    with output.open("w") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT)
    try:
        end = time.monotonic() + LISTEN_WAIT
        while not listening(f"{PREFIX}-h1", PORT) and time.monotonic() < end:
            time.sleep(0.1)
        assert listening(f"{PREFIX}-h1", PORT), f"the outside server did not listen: {output.read_text()[-500:]}"
        yield output
    finally:
        end_process(process, finish=5)


def _play(lab: Lab, tmp: Path, history: Path) -> tuple[int, str, dict[str, Any]]:
    tmp.mkdir()
    test = {
        "name": "outside-claims",
        "duration": 1,
        "repeat": RUNS,
        "labels": {"line_rate_bps": LINE_RATE},
        "pairs": [{"client": "h2", "address": ADDRESS["h1"], "port": PORT, "external": {"server": True}}],
    }
    variables = paired_test_vars(
        tmp,
        [test],
        report_history=f"sqlite:///{history}",
        report_baseline="previous",
        report_max_drop_percent=10,
    )
    proc = run_playbook(
        "-i", lab.inventory, "--limit", "h2", PAIRED_TEST_PLAYBOOK, "-e", f"@{variables}", timeout=PLAY_TIMEOUT
    )
    output = proc.stdout + proc.stderr
    found = sorted((tmp / "reports").glob("report-*"))
    assert found, output[-4000:]
    return proc.returncode, output, json.loads((found[0] / "results.json").read_text())


def test_a_hostile_external_server_is_incomplete_and_never_a_baseline(lab: Lab, tmp_path: Path) -> None:
    history = tmp_path / "history.sqlite"
    hostile = [sys.executable, str(HOSTILE), "--bind", ADDRESS["h1"], "--port", str(PORT), "--tests", str(RUNS),
               "--lifetime", str(SERVER_LIFETIME)]  # fmt: skip
    started = time.monotonic()
    with outside_server(hostile, tmp_path / "hostile.out") as told:
        rc, output, report = _play(lab, tmp_path / "hostile", history)
    assert rc == 0, output[-4000:]  # a figure came back: the runs are recorded, marked, not failed
    claims = [json.loads(line) for line in told.read_text().splitlines() if line.startswith("{")]
    assert len(claims) == RUNS and all(c["done"] and c["claimed_bytes"] == 1000 * c["read_bytes"] for c in claims)
    assert len(report["runs"]) == RUNS
    for run, result in zip(report["runs"], report["results"], strict=True):
        assert run["complete"] is False, run
        warning = " ".join(run["warnings"])
        assert f"implausible figures claimed by the external server {ADDRESS['h1']}:{PORT}" in warning, warning
        assert "the receiver's" in warning and "the peer's CPU 1e+09 %" in warning
        assert "above the line rate 5e+08 bit/s x 1.05" in warning
        assert '"remote_total"' in result["record"]["raw"]  # the client's raw -J output is kept
        print(f"hostile claim: {result['result']['bits_per_second']:.4g} bit/s, {warning[:200]}")
    # recorded, but without a sample: neither gated now nor a baseline later
    (comparison,) = report["baseline"]["comparisons"]
    assert comparison["now"]["samples"] == [] and comparison["now"]["count"] == 0

    with outside_server(["iperf3", "-s", "-B", ADDRESS["h1"], "-p", str(PORT)], tmp_path / "honest.out"):
        rc, output, report = _play(lab, tmp_path / "honest", history)
    print(f"two plays in {time.monotonic() - started:.1f} s")
    assert rc == 0, output[-4000:]
    assert all(run["complete"] for run in report["runs"]), report["runs"]
    (comparison,) = report["baseline"]["comparisons"]
    assert len(comparison["now"]["samples"]) == RUNS and 0.3e9 < comparison["now"]["mean"] < LINE_RATE
    assert comparison["baseline"] is None and comparison["verdict"] == "no baseline"  # not the hostile report
    assert report["gate"]["passed"] is True
    assert wait_no_iperf(PREFIX, HOSTS) == []
