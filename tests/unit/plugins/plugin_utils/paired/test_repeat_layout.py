# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run layouts: ``repeat: {forward: 3, swapped: 1}`` (seed 002's 3 runs + 1 with the roles swapped, the mean of the 4).

The plan (counts per kind of point, the order), the checks against the test's direction and swap_roles (each
bad input names the option's full path and the fix), and the report's one row over the 4 runs.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.checks import PairedTestError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan, run_order
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.record import build_record
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.stability import RepeatSpec, read_repeat
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import build_report, table_lines, to_json
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.csv_tables import summary_csv

PAIR = [{"server": "h1", "address": "198.18.0.1", "client": "h2", "client_address": "198.18.0.2"}]
SEED002 = {"name": "seed002", "pairs": PAIR, "swap_roles": True, "repeat": {"forward": 3, "swapped": 1}}


def _layout(plan: dict[str, Any]) -> list[tuple[str, bool, int]]:
    return [(run["direction"], run["swapped"], run["repetition"]) for run in plan["runs"]]


def test_seed002_plans_three_runs_then_one_swapped_interleaved() -> None:
    plan = build_plan([SEED002])
    assert _layout(plan) == [("forward", False, 1), ("forward", True, 1), ("forward", False, 2), ("forward", False, 3)]
    assert [run["repeat"] for run in plan["runs"]] == [3, 1, 3, 3]  # each run's point count
    assert all(run["stability"] is None for run in plan["runs"])  # plain counts: every run is made
    assert plan["tests"][0]["repeat"] == {"forward": 3, "swapped": 1}
    sequential = build_plan([{**SEED002, "order": "sequential"}])
    assert _layout(sequential) == [
        ("forward", False, 1),
        ("forward", False, 2),
        ("forward", False, 3),
        ("forward", True, 1),
    ]


def test_layout_over_both_directions_and_a_sweep() -> None:
    test = {
        "name": "t",
        "pairs": PAIR,
        "swap_roles": True,
        "direction": "both",
        "streams": [1, 2],
        "order": "sequential",
        "repeat": {"forward": 2, "reverse": 1, "swapped": 1, "max_failures": 1},
    }
    plan = build_plan([test])
    counts: dict[tuple[int, str, bool], int] = {}
    for run in plan["runs"]:
        key = (run["streams"], run["direction"], run["swapped"])
        counts[key] = counts.get(key, 0) + 1
    # forward unswapped 2, reverse unswapped 1, swapped 1 each way; per streams value
    assert counts == {
        (1, "forward", False): 2,
        (1, "forward", True): 1,
        (1, "reverse", False): 1,
        (1, "reverse", True): 1,
        (2, "forward", False): 2,
        (2, "forward", True): 1,
        (2, "reverse", False): 1,
        (2, "reverse", True): 1,
    }
    # max_failures goes with each point's own count: assess() decides with min = max = that count
    first = plan["runs"][0]
    assert first["stability"] == {"min": 2, "max": 2, "until_cv": None, "ci_percent": None, "max_failures": 1}
    assert plan["tests"][0]["repeat"] == {"forward": 2, "reverse": 1, "swapped": 1, "max_failures": 1}


def test_the_run_count_check_counts_a_layout_per_point() -> None:
    with pytest.raises(
        PairedTestError,
        match=r"2 role order\(s\) with repeat \{forward: 3, swapped: 1\} runs each = 4\), more than the 3 allowed",
    ):
        build_plan([SEED002], max_runs=3)


def test_run_order_takes_a_count_per_point() -> None:
    points = [(1, "forward", False), (1, "forward", True)]
    assert run_order(points, [3, 1], "interleaved", None) == [
        (1, "forward", False, 1),
        (1, "forward", True, 1),
        (1, "forward", False, 2),
        (1, "forward", False, 3),
    ]
    shuffled = run_order(points, [3, 1], "shuffled", 7)
    assert sorted(shuffled) == sorted(run_order(points, [3, 1], "sequential", None))
    assert run_order(points, 2, "sequential", None) == run_order(points, [2, 2], "sequential", None)


def test_layout_spec() -> None:
    spec = read_repeat({"forward": "3", "swapped": 1}, "test 't'")  # -e gives strings
    assert spec == RepeatSpec(1, 3, layout=(("forward", 3), ("swapped", 1)))
    assert spec.runs_of("forward", False) == 3 and spec.runs_of("reverse", True) == 1
    assert spec.for_point("forward", True) == RepeatSpec(1, 1)
    assert "layout" not in spec.as_dict()  # what a run hands back to assess() as RepeatSpec(**spec)
    assert RepeatSpec(4, 4).for_point("forward", True) == RepeatSpec(4, 4)


R = r"paired_test_tests\[0\]\.repeat"


@pytest.mark.parametrize(
    ("test", "message"),
    [
        (
            {"repeat": {"forwrd": 3, "swapped": 1}},
            rf"{R}.forwrd \(test 't'\): unknown key - did you mean forward\?",
        ),
        ({"repeat": {"forward": 3, "swaped": 1}}, rf"{R}.swaped \(test 't'\): unknown key - did you mean swapped\?"),
        (
            {"repeat": {"forward": 3}},
            rf"{R}.swapped \(test 't'\) is missing: swap_roles is true, so swapped runs are planned - give {R}.swapped",
        ),
        (
            {"repeat": {"forward": 3, "swapped": 1}, "swap_roles": False},
            rf"{R}.swapped \(test 't'\) is set but swap_roles is false, so no swapped run is planned - set swap_roles",
        ),
        (
            {"repeat": {"forward": 3, "swapped": 1}, "direction": "both"},
            rf"{R}.reverse \(test 't'\) is missing: the test's direction plans reverse runs - give {R}.reverse",
        ),
        (
            {"repeat": {"forward": 3, "reverse": 1, "swapped": 1}},
            rf"{R}.reverse \(test 't'\) is set but the test's direction plans only forward runs - set direction: both",
        ),
        (
            {"repeat": {"swapped": 1, "reverse": 2}, "direction": "forward"},
            rf"{R}.forward \(test 't'\) is missing",
        ),
        ({"repeat": {"forward": 3, "swapped": 0}}, rf"{R}.swapped \(test 't'\) must be a whole number of at least 1"),
        ({"repeat": {"forward": 3, "swapped": True}}, rf"{R}.swapped \(test 't'\) must be a whole number"),
        (
            {"repeat": {"forward": 3, "swapped": 1, "until_cv": 5}},
            rf"{R}.until_cv \(test 't'\): {R} has forward, swapped .* and until_cv .* do not go together",
        ),
    ],
)
def test_bad_layout_names_the_option_and_the_fix(test: dict[str, Any], message: str) -> None:
    with pytest.raises(PairedTestError, match=message):
        build_plan([{"name": "t", "pairs": PAIR, "swap_roles": True, **test}])


def test_a_layout_from_the_role_variable_names_it() -> None:
    with pytest.raises(
        PairedTestError, match=r"paired_test_repeat.swapped \(test 't'\) is set but swap_roles is false"
    ):
        build_plan([{"name": "t", "pairs": PAIR}], {"repeat": {"forward": 3, "swapped": 1}})
    with pytest.raises(
        PairedTestError, match=r"paired_test_repeat.forwad \(the role variable\): unknown key - did you"
    ):
        build_plan([{"name": "t", "pairs": PAIR}], {"repeat": {"forwad": 3}})
    plan = build_plan([{"name": "t", "pairs": PAIR, "swap_roles": True}], {"repeat": {"forward": 2, "swapped": 1}})
    assert len(plan["runs"]) == 3


def _reports(run: dict[str, Any], bps: float) -> list[dict[str, Any]]:
    item = {"run": run["run"], "pair": 1}
    client = {"item": item, "started_at": 1.0, "result": {"bits_per_second": bps, "complete": True}}
    return [
        {"host": run["pairs"][0]["server"], "servers": {"results": [{"item": item, "pid": 1}]}},
        {"host": run["pairs"][0]["client"], "clients": {"results": [client]}},
    ]


def test_seed002_report_gives_the_mean_of_the_4_in_one_row() -> None:
    rates = iter([80e6, 60e6, 82e6, 78e6])  # in run order: forward, swapped, forward, forward
    records: list[Any] = []
    for run in build_plan([{**SEED002, "combine_swapped": True}])["runs"]:
        records.append(build_record(run, _reports(run, next(rates)), previous=records))
    report = build_report(records)
    document = json.loads(to_json(report))
    assert [(g["swapped"], g["stats"]["count"], g["stats"]["mean"]) for g in document["summary"]] == [
        (False, 3, 80e6),
        (True, 1, 60e6),
    ]
    [combined] = document["combined"]
    assert combined["stats"]["count"] == 4 and combined["stats"]["mean"] == 75e6 and combined["runs"] == [1, 2, 3, 4]
    assert "seed002 forward (swapped + unswapped), 1 stream(s): mean 75" in "\n".join(table_lines(report))
    rows = list(csv.DictReader(io.StringIO(summary_csv(report))))
    assert [(row["swapped"], row["count"], row["combined"]) for row in rows] == [
        ("false", "3", "false"),
        ("true", "1", "false"),
        ("false", "4", "true"),
    ]
    assert float(rows[-1]["mean"]) == 75e6
    # without combine_swapped no combined row, and no combined column
    records = []
    for run in build_plan([SEED002])["runs"]:
        records.append(build_record(run, _reports(run, 1e6), previous=records))
    assert "combined" not in summary_csv(build_report(records)).splitlines()[0].split(",")
