# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The host CPU in the report: runs recorded with CPU readings, compared by vNIC type as ``vnic-compare.yml`` plans
them (seed 001's CPU of e1000 vs vmxnet3) - results.json, results.csv, summary.csv and summary.md; a host without a
figure is n/a with its reason, and a run that read no CPU is n/a, never 0."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.record import build_record
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import build_report, to_json
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.csv_tables import results_csv, summary_csv
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.host_cpu import GroupHostCpu, group_host_cpu
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.markdown import to_markdown
from tests.unit.plugins.plugin_utils.paired.test_plan_and_record import RESULT_A, RESULT_B, _client, _reports


def _reading(busy: int, idle: int, uptime: float) -> dict[str, Any]:
    """A /proc/stat reading of a 2-CPU host: cpu1 busy ``busy`` and idle ``idle`` ticks since the first reading,
    cpu0 idle throughout (as many ticks as cpu1 in all)."""
    rest = 100 + busy + idle
    cpu = (f"cpu  {busy} 0 0 {rest + idle} 0 0 0 0 0 0\ncpu0 0 0 0 {rest} 0 0 0 0 0 0\n"
           f"cpu1 {busy} 0 0 {idle} 0 0 0 0 0 0\n")  # fmt: skip
    return {"kind": "linux", "source": "/proc/stat", "stat": cpu, "uptime": uptime, "reason": None}


def _records() -> list[dict[str, Any]]:
    tests = [
        {"name": f"vnic-{kind}-{guest}", "labels": {"nic": kind, "guest": guest}, "repeat": 2,
         "pairs": [{"server": "srv", "address": "198.19.61.1", "client": guest, "client_address": address}]}
        for kind, guest, address in (("e1000", "g1", "198.19.61.2"), ("vmxnet3", "g2", "198.19.61.3"))
    ]  # fmt: skip
    runs = build_plan(tests)["runs"]
    records: list[dict[str, Any]] = []
    for run in runs:
        reports = _reports(run, {1: _client(RESULT_A if run["test"].endswith("g1") else RESULT_B, 100.0)})
        guest = run["pairs"][0]["client"]
        # the e1000 guest: cpu1 busy 60 then 80 of 100 ticks; the vmxnet3 guest 20 of 100; the server 50 of 100
        busy = {"g1": 60 + 20 * (run["repetition"] - 1), "g2": 20}[guest]
        for report in reports:
            if report is None:
                continue
            ticks = busy if report["host"] == guest else 50
            report["cpu_before"] = _reading(0, 0, 10.0)
            report["cpu_after"] = _reading(ticks, 100 - ticks, 11.5)
        if run["run"] == 4:  # the last run: the server's reading after the stop was lost
            next(r for r in reports if r and r["host"] == "srv")["cpu_after"] = {"error": "lost the connection"}
        records.append(dict(build_record(run, reports)))
    return records


def test_the_record_holds_the_figures_and_the_raw_readings() -> None:
    first = _records()[0]
    assert first["schema_version"] == 2
    srv, g1 = first["cpu"]["srv"], first["cpu"]["g1"]
    # the host: 60 of 200 ticks of its 2 CPUs busy (30 %), its busiest core cpu1 at 60 %
    assert (g1["mean_percent"], g1["max_core_percent"], g1["max_core"], g1["cores"], g1["seconds"]) == (
        30.0, 60.0, "cpu1", 2, 1.5,
    )  # fmt: skip
    assert srv["mean_percent"] == 25.0 and srv["before"].startswith("cpu  0 0 0 100")


def test_results_json_and_the_csv_tables_carry_the_host_cpu() -> None:
    report = build_report(_records(), compare_by="nic")
    doc = json.loads(to_json(report))
    run1 = doc["runs"][0]
    assert run1["host_cpu"]["g1"] == {
        "mean_percent": 30.0,
        "max_core_percent": 60.0,
        "max_core": "cpu1",
        "reason": None,
    }
    last = doc["runs"][3]["host_cpu"]["srv"]
    assert last["mean_percent"] is None and last["reason"] == "the CPU read after the run failed: lost the connection"
    groups = {g["compare"]: g["host_cpu"] for g in doc["summary"]}
    assert groups["e1000"]["g1"] == {"mean_percent": 35.0, "max_core_percent": 80.0, "runs": 2}
    assert groups["vmxnet3"]["srv"] == {"mean_percent": 25.0, "max_core_percent": 50.0, "runs": 1}  # one run lost it
    rows = list(csv.DictReader(io.StringIO(results_csv(report))))
    assert (rows[0]["client"], rows[0]["client_host_cpu_percent"], rows[0]["client_host_max_core_percent"]) == (
        "g1", "30.0", "60.0",
    )  # fmt: skip
    assert rows[0]["server_host_cpu_percent"] == "25.0" and rows[3]["server_host_cpu_percent"] == ""  # no figure
    summary = list(csv.DictReader(io.StringIO(summary_csv(report))))
    assert json.loads(summary[0]["host_cpu"])["g1"]["mean_percent"] == 35.0


def test_summary_md_has_the_host_cpu_per_run_and_by_vnic_type() -> None:
    text = to_markdown(build_report(_records(), compare_by="nic"))
    assert "## Host CPU" in text and "### Host CPU by `nic`" in text
    by_type = text.split("### Host CPU by `nic`", 1)[1].split("\n## ", 1)[0]
    e1000 = [line for line in by_type.splitlines() if "| e1000 |" in line and "| g1 |" in line]
    vmxnet3 = [line for line in by_type.splitlines() if "| vmxnet3 |" in line and "| g2 |" in line]
    assert len(e1000) == 1 and "| 35.0 | 80.0 | 2 |" in e1000[0]
    assert len(vmxnet3) == 1 and "| 10.0 | 20.0 | 2 |" in vmxnet3[0]
    assert "the CPU read after the run failed: lost the connection" in text


def test_runs_that_read_no_cpu_are_not_in_the_host_cpu() -> None:
    """An older record (version 1: no ``cpu``) or host_cpu off: n/a in the CSV, no section in summary.md."""
    old = [dict(r, schema_version=1) for r in _records()]
    for record in old:
        del record["cpu"]
    report = build_report(old)
    assert all(run.host_cpu is None for run in report.runs) and "## Host CPU" not in to_markdown(report)
    assert next(csv.DictReader(io.StringIO(results_csv(report))))["client_host_cpu_percent"] == "n/a"
    assert group_host_cpu([None, None]) is None
    assert group_host_cpu([{}]) == {}
    assert isinstance(GroupHostCpu("h", None, None, 0).as_dict(), dict)
