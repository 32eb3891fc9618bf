# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report of repeat {min, max, until_cv} (the verdict per point) and of combine_swapped (seed 002)."""

from __future__ import annotations

import json
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.record import build_record
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import (
    build_report,
    table_lines,
    to_json,
    to_markdown,
)

PAIR = [{"server": "h1", "address": "198.18.0.1", "client": "h2", "client_address": "198.18.0.2"}]


def _reports(run: dict[str, Any], bps: float) -> list[dict[str, Any]]:
    item = {"run": run["run"], "pair": 1}
    client = {"item": item, "started_at": 1.0, "result": {"bits_per_second": bps, "complete": True}}
    return [
        {"host": run["pairs"][0]["server"], "servers": {"results": [{"item": item, "pid": 1}]}},
        {"host": run["pairs"][0]["client"], "clients": {"results": [client]}},
    ]


def _play(tests: list[dict[str, Any]], rate: Any) -> list[Any]:
    """What the role does: run the plan, skipping a point's runs once its record says done."""
    records: list[Any] = []
    for run in build_plan(tests)["runs"]:
        if run["stability"] is not None and any(r["point"] == run["point"] and r["stability"]["done"] for r in records):
            continue
        records.append(build_record(run, _reports(run, rate(run)), previous=records))
    return records


def test_report_says_stable_and_unstable_per_point() -> None:
    tests = [{"name": "t", "pairs": PAIR, "streams": [1, 2], "repeat": {"min": 3, "max": 5, "until_cv": 5}}]
    jumpy = [100e6, 150e6, 90e6, 160e6, 80e6]
    records = _play(
        tests, lambda run: 200e6 + run["repetition"] * 1e6 if run["streams"] == 1 else jumpy[run["repetition"] - 1]
    )
    assert len(records) == 3 + 5
    report = build_report(records, line_rate_bps=1e9)
    document = json.loads(to_json(report))
    verdicts = {g["streams"]: g["stability"] for g in document["summary"]}
    assert verdicts[1] == "stable after 3 runs (cv 0.50 %)"
    assert verdicts[2].startswith("unstable after 5 runs (cv 31.44 %)")
    assert document["runs"][0]["record"]["order"] == "interleaved"
    table = "\n".join(table_lines(report))
    assert "t forward: h2 → h1, 2 stream(s): unstable after 5 runs (cv 31.44 %)" in table
    assert "- forward: h2 → h1, 1 stream(s): stable after 3 runs (cv 0.50 %)" in to_markdown(report)


def test_combine_swapped_adds_one_group_over_both_role_orders() -> None:
    tests = [{"name": "seed002", "pairs": PAIR, "repeat": 3, "swap_roles": True, "combine_swapped": True}]
    records = _play(tests, lambda run: 70e6 if run["swapped"] else 80e6)
    report = build_report(records)
    document = json.loads(to_json(report))
    assert [(g["swapped"], g["stats"]["mean"]) for g in document["summary"]] == [(False, 80e6), (True, 70e6)]
    [combined] = document["combined"]
    assert combined["stats"]["count"] == 6 and combined["stats"]["mean"] == 75e6 and combined["combined"] is True
    assert combined["runs"] == [1, 2, 3, 4, 5, 6]
    assert "seed002 forward (swapped + unswapped), 1 stream(s): mean 75" in "\n".join(table_lines(report))
    assert "Swapped and unswapped runs combined (combine_swapped):" in to_markdown(report)
    # not asked for: no combined group
    tests[0]["combine_swapped"] = False
    assert json.loads(to_json(build_report(_play(tests, lambda run: 1e6))))["combined"] == []
