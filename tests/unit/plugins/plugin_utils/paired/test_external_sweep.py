# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A guided external sweep (seed 000): a client outside the inventory runs a stream list in one play - one run per
stream count, each with its own printed command - and the report has the sweep, its knee and its plateau."""

from __future__ import annotations

import json
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.collect import server_tests, task_tests
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.record import build_record
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import (
    build_report,
    table_lines,
    to_json,
    to_markdown,
)
from tests.collection_path import FIXTURES

SERVER = {"server": "esx1", "address": "198.18.0.10", "external": {"count": 1, "deadline": 120}}
SWEEP = {"name": "win10-1g", "pairs": [SERVER], "streams": [1, 2, 3, 4, 5], "duration": 10}


def test_each_step_of_the_sweep_is_a_run_with_its_own_command() -> None:
    plan = build_plan([SWEEP])
    assert [run["streams"] for run in plan["runs"]] == [1, 2, 3, 4, 5]
    assert all(run["sweep"] and run["external"] and run["client_hosts"] == [] for run in plan["runs"])
    assert [run["pairs"][0]["external"]["command"] for run in plan["runs"]] == [
        f"iperf3 -c 198.18.0.10 -p 5201 -t 10 -P {n}" for n in (1, 2, 3, 4, 5)
    ]
    # one client test per step: each step's iperf3 server ends after it (--one-off)
    assert all(run["pairs"][0]["one_off"] for run in plan["runs"])


# one client test of the recorded iperf3 server log (a real normalized result); each step gets its own rate
LOG = (FIXTURES / "iperf3-3.12-text-server-tcp-3-clients-P2-cut-locallab.txt").read_text()
ONE = LOG[: LOG.index("Server listening on 25811 (test #2)")]


def _registered(run: dict[str, Any], bps: float) -> list[Any]:
    """What the server host registered for one step: its server, the collect of the one client test, the stop."""
    pair = run["pairs"][0]
    item = {"run": run["run"], "pair": pair["pair"]}
    tests = task_tests(server_tests(ONE, exited=True, peer=None), 1, {"test": run["test"]})
    result = tests[0]["result"]
    result["bits_per_second"] = result["received"]["bits_per_second"] = bps
    result["streams"] = run["streams"]  # as the person ran the printed -P
    collect = {"came": 1, "reason": "server_exited", "server_stop": "exited", "tests": tests}
    return [
        {
            "host": "esx1",
            "servers": {"results": [{"item": item, "pid": 4242, "tool_version": "3.12"}]},
            "collects": {"results": [{"item": item, **collect}]},
            "stops": {"results": [{"item": item, "stopped": []}]},
        }
    ]


def test_the_report_has_the_sweep_its_knee_and_plateau() -> None:
    rates = {1: 420e6, 2: 800e6, 3: 930e6, 4: 950e6, 5: 940e6}
    records: list[Any] = []
    for run in build_plan([SWEEP])["runs"]:
        records.append(build_record(run, _registered(run, rates[run["streams"]]), previous=records))
    assert all(r["ok"] and r["pairs"][0]["measured_by"] == "server" for r in records), records[0]
    report = build_report(records)
    [sweep] = json.loads(to_json(report))["sweeps"]
    assert [p["streams"] for p in sweep["points"]] == [1, 2, 3, 4, 5]
    # 5 % of the best (950) is 902.5: 3 streams is the knee; 3, 4, 5 the plateau at their mean
    assert (sweep["knee"], sweep["best_streams"], sweep["best_bits_per_second"]) == (3, 4, 950e6)
    assert sweep["plateau_streams"] == [3, 4, 5]
    assert sweep["plateau_bits_per_second"] == (930e6 + 950e6 + 940e6) / 3
    # the printed table: one row per step, the knee starred, measured by the server from the person's client
    row = "win10-1g  forward: external 198.19.181.12 → esx1       3*   1/1        930.0"
    assert any(line.startswith(row) for line in table_lines(report)), table_lines(report)
    assert "Plateau: 940.0 Mbit/s, the mean over 3, 4, 5 streams" in to_markdown(report)


def test_a_count_above_the_knee_that_falls_is_not_on_the_plateau() -> None:
    rates = {1: 400e6, 2: 910e6, 3: 950e6, 4: 700e6}
    records: list[Any] = []
    for run in build_plan([{**SWEEP, "streams": [1, 2, 3, 4]}])["runs"]:
        records.append(build_record(run, _registered(run, rates[run["streams"]]), previous=records))
    [sweep] = json.loads(to_json(build_report(records)))["sweeps"]
    assert (sweep["knee"], sweep["plateau_streams"]) == (2, [2, 3])
