# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The paired_test_* filters: registration, documentation, and thin glue over paired/plan.py and paired/record.py."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.filter import paired_test_plan as plan_plugin
from ansible_collections.esxilab.iperf.plugins.filter import paired_test_record as record_plugin
from ansible_collections.esxilab.iperf.plugins.filter import paired_test_seconds as seconds_plugin
from ansible_collections.esxilab.iperf.plugins.filter.paired_test_plan import paired_test_plan
from ansible_collections.esxilab.iperf.plugins.filter.paired_test_record import paired_test_record
from ansible_collections.esxilab.iperf.plugins.filter.paired_test_seconds import paired_test_seconds
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import RunRecord
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import (
    build_report,
    results_csv,
    summary_csv,
    to_json,
)
from tests.collection_path import REPO

PLUGINS = [
    (plan_plugin, "paired_test_plan"),
    (record_plugin, "paired_test_record"),
    (seconds_plugin, "paired_test_seconds"),
]
TESTS = [{"name": "t", "pairs": [{"server": "h1", "address": "198.18.0.1", "client": "h2"}], "streams": [1, 2]}]


@pytest.mark.parametrize(("plugin", "name"), PLUGINS)
def test_filter_is_registered_under_its_file_name_and_documented(plugin: ModuleType, name: str) -> None:
    assert list(plugin.FilterModule().filters()) == [name]
    doc = yaml.safe_load(plugin.DOCUMENTATION)
    assert doc["name"] == name
    assert doc["version_added"] == "1.0.0"
    assert doc["options"]["_input"]["required"] is True
    assert doc["short_description"]
    assert yaml.safe_load(plugin.RETURN)["_value"]
    examples = yaml.safe_load(plugin.EXAMPLES)
    assert all(task["name"] for task in examples)
    assert f"esxilab.iperf.{name}" in plugin.EXAMPLES


def test_no_filter_of_the_collection_is_deprecated_or_routed() -> None:
    """The deprecated shims paired_test_summary and paired_test_csv are gone (issue 24): no file, no routing."""
    runtime = yaml.safe_load((REPO / "meta" / "runtime.yml").read_text())
    assert "plugin_routing" not in runtime
    for name in ("paired_test_summary", "paired_test_csv", "paired_test_shims"):
        assert not list((REPO / "plugins" / "filter").glob(f"{name}.*"))


def test_plan_filter_passes_the_inventory_checks_through() -> None:
    plan = paired_test_plan(TESTS, {"duration": 3}, inventory_hosts=("h1",), play_hosts=["h1"])
    assert [(r["run"], r["streams"], r["duration"]) for r in plan["runs"]] == [(1, 1, 3), (2, 2, 3)]
    assert plan["problems"]["unknown_hosts"][0].startswith("h2 is not in the inventory")


def test_plan_filter_errors_are_filter_errors() -> None:
    with pytest.raises(
        AnsibleFilterError,
        match=r"^esxilab.iperf.paired_test_plan: paired_test_tests\[0\]: test 't': unknown key\(s\) x;",
    ):
        paired_test_plan([{"name": "t", "pairs": TESTS[0]["pairs"], "x": 1}])


def _record(index: int = 0) -> RunRecord:
    run = paired_test_plan(TESTS)["runs"][index]
    client = {"item": run["pairs"][0], "started_at": 10.0, "result": {"bits_per_second": 5.0e8, "complete": True}}
    reports = [
        {"host": "h1", "servers": {"results": [{"item": run["pairs"][0], "pid": 7}]}, "stops": None},
        {"host": "h2", "clients": {"results": [client]}},
        None,
    ]
    return paired_test_record(run, reports, barrier={"run": 1, "start_at": "12.5"})


def test_record_filter_makes_records_the_report_reads() -> None:
    record = _record()
    assert (record["total_bits_per_second"], record["pairs"][0]["server_pid"], record["start_at"]) == (5.0e8, 7, None)
    # a sweep is a test, direction and swap with more than one streams value: both runs of the plan
    document = json.loads(to_json(build_report([record, _record(1)], knee_tolerance=0.1)))
    assert document["summary"][0]["stats"]["mean"] == 5.0e8
    assert document["sweeps"][0]["knee"] == 1
    text = results_csv(build_report([record]))  # no tool, version, protocol or side here
    assert text.splitlines()[1].startswith("1,t,forward,false,1,1,1,h1,h2,198.18.0.1,5201,10.0,,,,,500000000.0,")
    # summary.csv (test, direction, swapped, streams, runs, count, skipped, mean, ...), from the run records
    assert summary_csv(build_report([record])).splitlines()[1].startswith("t,forward,false,1,1,1,0,500000000.0,")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: paired_test_record({"run": 1}, []), "not a run of the plan"),
        (lambda: paired_test_record(paired_test_plan(TESTS)["runs"][0], "h1"), "reports must be a list"),
    ],
)
def test_wrong_input_names_the_filter(call: Any, message: str) -> None:
    with pytest.raises(AnsibleFilterError, match=r"^esxilab\.iperf\.paired_test_") as info:
        call()
    assert message in str(info.value)


def test_seconds_filter_adds_up_the_planned_runs() -> None:
    # 2 streams values x 2 directions = 4 runs of 10 s; one pair: start delay 1.4 s (auto) -> 2 s; 15 s per run
    tests = [{**TESTS[0], "direction": "both", "duration": 10}]
    assert paired_test_seconds(tests) == 4 * (10 + 2 + 15)
    # swapped roles and repetitions multiply the runs; omit adds to each run; per_run is the caller's
    tests = [{**TESTS[0], "streams": 1, "swap_roles": True, "repeat": 3, "duration": 5, "omit": 2}]
    assert paired_test_seconds(tests, per_run=0) == 2 * 3 * (5 + 2 + 2)
    # a role default fills what a test leaves out (strings, as from -e, are read as numbers)
    assert paired_test_seconds([{**TESTS[0], "streams": 1}], {"duration": "20"}, per_run=0) == 20 + 2


@pytest.mark.parametrize(
    ("tests", "per_run", "message"),
    [
        (TESTS, -1, "per_run must be a whole number of seconds"),
        (TESTS, True, "per_run must be a whole number of seconds"),
        ("not a list", 15, "paired_test_tests must be a list of tests"),
    ],
)
def test_seconds_filter_refuses_bad_input(tests: Any, per_run: Any, message: str) -> None:
    with pytest.raises(AnsibleFilterError, match=message):
        paired_test_seconds(tests, per_run=per_run)
