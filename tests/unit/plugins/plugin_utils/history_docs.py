# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""results.json documents for the history and gate tests, made by the collection's own report builder
from a real parsed iperf3 output whose headline figure is set to the value under test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import build_report, history, to_json
from tests.collection_path import FIXTURES, REPO, ensure_collection_path

# "[  5]   0.00-2.01   sec   191 MBytes   796 Mbits/sec  receiver"
LABLOG = "iperf3-ge3.2-text-client-basic-tcp-t2-lablog.txt"


def runs_of(values: Sequence[float | None], test: str = "one-pair", **labels: Any) -> list[dict[str, Any]]:
    base: dict[str, Any] = parse((FIXTURES / LABLOG).read_text())
    runs = []
    for repetition, value in enumerate(values, start=1):
        result = json.loads(json.dumps(base))
        result["bits_per_second"] = value
        result["labels"] = {"test": test, "repetition": repetition, **labels}
        runs.append(result)
    return runs


def doc_of(
    values: Sequence[float | None], test: str = "one-pair", generated_at: str = "2026-12-01T00:00:00Z", **labels: Any
) -> dict[str, Any]:
    """The results.json of a report of one test with these run figures (bit/s)."""
    report = build_report(
        runs_of(values, test, **labels),
        name="hist",
        title=None,
        environment={},
        line_rate_bps=1e9,
        compare_by=None,
        knee_tolerance=0.05,
        generated_at=generated_at,
    )
    document: dict[str, Any] = json.loads(to_json(report))
    return document


def record_as_release_1(conn: history.Connection, document: dict[str, Any], report_dir: str) -> int:
    """What a collection of schema 1 or 2 wrote for a report: no report_key (and a report could be written twice),
    no latency columns (migration 5)."""
    rows = conn.execute(
        "INSERT INTO history_runs (name, title, generated_at, recorded_at, report_dir, document) "
        "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        (
            document["name"],
            document["title"],
            document["generated_at"],
            "2026-12-02T00:00:00Z",
            report_dir,
            json.dumps(document),
        ),
    )
    for entry in history.entries_of(document):
        history._insert_entry(conn, int(rows[0][0]), entry, latency=False)  # pylint: disable=protected-access
    return int(rows[0][0])


_CONCURRENT = textwrap.dedent(
    """
    import sys, time
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.gate import Limits
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.gate_run import run_gate
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history_url import parse_target
    while time.time() < float(sys.argv[3]):  # start together
        time.sleep(0.001)
    outcome = run_gate(sys.argv[2], target=parse_target(sys.argv[1]), password=sys.argv[4] or None,
                       baseline="previous", limits=Limits(max_drop_percent=5), now="t", check_mode=False)
    print(outcome.run_id, outcome.recorded)
    """
)


def run_concurrently(url: str, reports: list[Path], password: str = "", timeout: float = 60) -> list[str]:
    """Gate each of ``reports`` in its own process, all starting at the same instant; their outputs."""
    env = dict(os.environ, PYTHONPATH=str(ensure_collection_path()))
    start = str(time.time() + 1.5)
    procs = [
        subprocess.Popen([sys.executable, "-c", _CONCURRENT, url, str(report), start, password],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
        for report in reports
    ]  # fmt: skip
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, err[-2000:]
        outputs.append(out.strip())
    return outputs
