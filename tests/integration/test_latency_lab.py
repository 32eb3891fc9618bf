# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Latency under load, for real, on the local lab (``lab/esxilab_lab.py``; issue 25).

One lab for the module: prefix ``lulw``, 2 hosts on 198.19.64.0/24 (``ESXILAB_LATENCY_PREFIX`` /
``ESXILAB_LATENCY_SUBNET``). The hosts send unshaped; what each host *receives* passes a ``tbf`` of 20 Mbit/s on
the bridge side of its link (``<prefix>-v<i>``, in the root namespace) with a deep queue (``limit`` 1 MiB: 420 ms
at 20 Mbit/s) - a bottleneck after the sender's own qdisc, so TCP small queues do not keep it short (a ``tbf`` on
the sender's own ``eth0`` only grew the RTT by about 10 ms). A TCP transfer fills that queue, and the ping that
shares the link waits behind it: the loaded RTT grows by tens of milliseconds over the idle RTT (measured: loaded
p50 60-73 ms, p90 100-115 ms; idle p50 0.04 ms), in both directions.

The role ``esxilab.iperf.paired_test`` with ``latency: {interval: 0.05}``, 2 s runs, both directions: each pair's
record, ``results.json``, ``results.csv``, ``summary.md`` and the SQLite history carry the idle and loaded
figures, read from the pings' own output (kept raw beside them), and no ping is left running.
"""

from __future__ import annotations

import csv
import json
import os
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.labkit import (
    PAIRED_TEST_PLAYBOOK,
    Lab,
    ansible_env,
    lab_unavailable,
    live_cmdline,
    netns_pids,
    paired_test_vars,
    run_playbook,
    skip_if,
)

pytestmark = [pytest.mark.lab, pytest.mark.slow]

# What each host receives: 20 Mbit/s behind a 1 MiB queue (burst: 5 ms at that rate, at least 16 KiB)
QUEUE = ("tbf", "rate", "20mbit", "burst", "16384", "limit", str(1 << 20))
PREFIX = os.environ.get("ESXILAB_LATENCY_PREFIX", "lulw")
SUBNET = os.environ.get("ESXILAB_LATENCY_SUBNET", "198.19.64")
HOSTS = ("h1", "h2")
PORT_BASE = 26401
PLAY_TIMEOUT = 120
INTERVAL = 0.05
DURATION = 2
# The loaded p50 must exceed the idle p50 by this much: a full 1 MiB queue at 20 Mbit/s is 420 ms, a quarter of it
# still 100 ms; an idle RTT between two namespaces is about 0.05 ms.
MARGIN_MS = 20.0


def _pings_left() -> list[str]:
    found = []
    for host in HOSTS:
        for pid in netns_pids(f"{PREFIX}-{host}"):
            cmdline = live_cmdline(pid)
            if cmdline and cmdline.split(" ", 1)[0].endswith(("ping", "iperf3")):
                found.append(f"{host} pid {pid}: {cmdline}")
    return found


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    skip_if(lab_unavailable(("ip", "tc", "ssh", "iperf3", "ping")))
    the_lab = Lab(PREFIX, tmp_path_factory.mktemp(PREFIX) / "state")
    with the_lab.session("--hosts", "2", "--subnet", f"{SUBNET}.0/24"):
        for index in range(1, len(HOSTS) + 1):  # the lab's own bridge-side links only, removed with the lab
            device = f"{PREFIX}-v{index}"
            subprocess.run(["tc", "qdisc", "replace", "dev", device, "root", *QUEUE], check=True, timeout=10)
            shown = subprocess.run(
                ["tc", "qdisc", "show", "dev", device], capture_output=True, text=True, timeout=10, check=True
            )
            assert "tbf" in shown.stdout and "rate 20Mbit" in shown.stdout, shown.stdout
        yield the_lab


def _window(pair: dict[str, Any], name: str) -> dict[str, Any]:
    window = pair["record"]["latency"][name]
    assert isinstance(window, dict), pair["record"]["latency"]
    return window


def test_the_loaded_rtt_grows_over_the_idle_rtt_behind_a_full_queue(lab: Lab, tmp_path: Path) -> None:
    history = tmp_path / "history.sqlite"
    tests = [
        {
            "name": "queue",
            "duration": DURATION,
            "direction": "both",
            "latency": {"interval": INTERVAL},
            # the machine's default is BBR, which keeps the queue short by design; CUBIC fills it (bufferbloat)
            "client_extra_args": ["-C", "cubic"],
            "pairs": [{"server": "h1", "client": "h2"}],
        }
    ]
    settings = {"paired_test_port_base": PORT_BASE, "report_history": f"sqlite:///{history}"}
    variables = paired_test_vars(tmp_path, tests, **settings)
    started = time.monotonic()
    proc = run_playbook(
        "-i", lab.inventory, PAIRED_TEST_PLAYBOOK, "-e", f"@{variables}", timeout=PLAY_TIMEOUT, env=ansible_env()
    )
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    assert _pings_left() == []

    (results_json,) = (tmp_path / "reports").rglob("results.json")
    doc = json.loads(results_json.read_text())
    assert [(r["labels"]["direction"], r["pair"]) for r in doc["results"]] == [("forward", 1), ("reverse", 1)]
    increases = []
    for pair in doc["results"]:
        latency = pair["record"]["latency"]
        assert (latency["tool"], latency["target"], latency["interval"]) == ("ping", pair["address"], INTERVAL)
        idle, loaded = _window(pair, "idle"), _window(pair, "loaded")
        for window in (idle, loaded):
            # 2 s at one probe per 50 ms: 40 probes, every one answered, each a sample read from the ping's output
            assert window["transmitted"] == 40 and window["received"] == window["samples"] >= 38, window
            assert window["samples"] == window["raw"].count(" bytes from ")
            assert not window["cut"] and window["error"] is None and window["rc"] == 0
            assert window["p90_ms"] is not None and window["p99_ms"] is None  # p99 needs 100 samples
            assert window["min_ms"] <= window["p50_ms"] <= window["p90_ms"] <= window["max_ms"]
        assert loaded["p50_ms"] > idle["p50_ms"] + MARGIN_MS, (pair["labels"]["direction"], idle, loaded)
        assert latency["p50_increase_ms"] == pytest.approx(loaded["p50_ms"] - idle["p50_ms"], abs=1e-3)
        increases.append(latency["p50_increase_ms"])
        assert pair["result"]["bits_per_second"] > 10e6  # the transfer filled the 20 Mbit/s link

    # results.csv and summary.md show the record's figures
    rows = list(csv.DictReader((results_json.parent / "results.csv").read_text().splitlines()))
    assert [float(r["latency_p50_increase_ms"]) for r in rows] == pytest.approx(increases, abs=1e-9)
    assert [int(r["latency_loaded_samples"]) for r in rows] == [_window(p, "loaded")["samples"] for p in doc["results"]]
    markdown = (results_json.parent / "summary.md").read_text()
    assert "## Latency under load" in markdown
    for pair in doc["results"]:
        assert f"| {_window(pair, 'loaded')['p50_ms']:.3f} |" in markdown

    # the history holds the largest figure of the entry (one pair, one run per direction: that pair's)
    with sqlite3.connect(history) as conn:
        stored = dict(
            conn.execute("SELECT direction, loaded_p50_ms - idle_p50_ms FROM history_entries ORDER BY id").fetchall()
        )
        assert max(v for (v,) in conn.execute("SELECT version FROM schema_version")) == 5
    assert stored == pytest.approx({"forward": increases[0], "reverse": increases[1]}, abs=1e-9)
    # two runs of 2 s idle + 2 s loaded, plus Ansible's own time on a busy 2-core machine
    assert elapsed < 60, elapsed
