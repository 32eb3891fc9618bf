# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""repeat {min, max, until_cv, ci_percent, max_failures}: the option, the stop decision, the run order."""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.checks import PairedTestError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan, run_order
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.record import build_record
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.stability import (
    RepeatSpec,
    StabilityError,
    assess,
    read_repeat,
)

PAIR = [{"server": "h1", "address": "198.18.0.1", "client": "h2", "client_address": "198.18.0.2"}]


# -- the option ------------------------------------------------------------------------------


def test_repeat_forms() -> None:
    assert read_repeat(3, "t") == RepeatSpec(3, 3)
    assert read_repeat("4", "t") == RepeatSpec(4, 4)  # -e paired_test_repeat=4
    assert read_repeat({"min": 3, "max": 6, "until_cv": 5}, "t") == RepeatSpec(3, 6, 5.0)
    spec = read_repeat({"min": "2", "max": 10, "ci_percent": "2.5", "max_failures": 1}, "t")
    assert spec == RepeatSpec(2, 10, None, 2.5, 1) and spec.adaptive
    assert not RepeatSpec(3, 3).adaptive


R = r"paired_test_tests\[0\]\.repeat"  # the option's full path in every message


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, rf"{R} \(test 't'\) must be at least 1, got 0"),
        ({"min": 5, "max": 3, "until_cv": 5}, rf"{R}.min \(test 't'\) is 5, more than {R}.max \(3\)"),
        ({"min": 3, "max": 6, "until_cv": -1}, rf"{R}.until_cv \(test 't'\) must be a percentage above 0 .*got -1"),
        ({"min": 3, "max": 6, "until_cv": 0}, rf"{R}.until_cv \(test 't'\) must be a percentage above 0"),
        ({"min": 3, "max": 6, "ci_percent": "x"}, rf"{R}.ci_percent \(test 't'\) must be a percentage above 0"),
        ({"min": 3, "max": 6, "until_cv": 500}, rf"{R}.until_cv \(test 't'\) must be at most 100 \(% of the mean\)"),
        ({"min": 3, "max": 6, "until_cv": 1e9}, rf"{R}.until_cv .* must be at most 100 .* give a limit such as 5"),
        ({"min": 3, "max": 6, "ci_percent": 1e9}, rf"{R}.ci_percent \(test 't'\) must be at most 100"),
        ({"min": 3, "max": 6, "until_cv": 5, "stddev": 5}, rf"{R}.stddev \(test 't'\): unknown key; repeat takes"),
        ({"max": 6, "until_cv": 5}, rf"{R}.min \(test 't'\) is missing"),
        ({"min": 0, "max": 6, "until_cv": 5}, rf"{R}.min \(test 't'\) must be a whole number of at least 1, got 0"),
        ({"min": 3, "max": 6}, "neither until_cv nor ci_percent, so every point would run 6 times"),
        ({"min": 1, "max": 1, "until_cv": 5}, rf"{R}.max \(test 't'\) must be at least 2 with until_cv"),
        ({"min": 2, "max": 4, "until_cv": 5, "max_failures": -1}, rf"{R}.max_failures \(test 't'\) must be a whole"),
        ([3, 6], rf"{R} \(test 't'\) must be a whole number or a dictionary"),
        (True, rf"{R} \(test 't'\) must be a whole number or a dictionary"),
        # the run layout: runs per kind of point (seed 002's 3 + 1)
        ({"forwrd": 3}, rf"{R}.forwrd \(test 't'\): unknown key - did you mean forward\?"),
        ({"forward": 0}, rf"{R}.forward \(test 't'\) must be a whole number of at least 1 .* leave the kind out"),
        ({"forward": "three"}, rf"{R}.forward \(test 't'\) must be a whole number of at least 1"),
        ({"forward": 3, "min": 2}, rf"{R}.min \(test 't'\): {R} has forward .* do not go together"),
        ({"forward": 3, "max_failures": -2}, rf"{R}.max_failures \(test 't'\) must be a whole number"),
    ],
)
def test_bad_repeat_names_the_option(value: Any, message: str) -> None:
    with pytest.raises(StabilityError, match=message):
        read_repeat(value, "test 't'", "paired_test_tests[0].repeat")
    # the plan says the same (and changes nothing: it raises before any run)
    with pytest.raises(PairedTestError, match=message):
        build_plan([{"name": "t", "pairs": PAIR, "repeat": value}])


def test_bad_order_and_seed_name_the_option() -> None:
    with pytest.raises(PairedTestError, match="order must be one of interleaved, sequential, shuffled; got 'random'"):
        build_plan([{"name": "t", "pairs": PAIR, "order": "random"}])
    with pytest.raises(PairedTestError, match="shuffle_seed must be at least 0, got -3"):
        build_plan([{"name": "t", "pairs": PAIR, "order": "shuffled", "shuffle_seed": -3}])


# -- the decision ----------------------------------------------------------------------------

SPEC = RepeatSpec(3, 6, until_cv=5.0)


def test_stable_after_min_runs() -> None:
    assert assess([100e6, 101e6], SPEC)["done"] is False  # below min, even though close
    state = assess([100e6, 101e6, 99e6], SPEC)
    assert state["stable"] is True and state["done"] is True
    assert state["cv_percent"] == pytest.approx(1.0)
    assert state["verdict"] == "stable after 3 runs (cv 1.00 %)"


def test_unstable_runs_to_max_and_says_so() -> None:
    samples: list[float | None] = [100e6, 150e6, 80e6]
    for more in (120e6, 90e6):
        samples.append(more)
        state = assess(samples, SPEC)
        assert state["stable"] is False and state["done"] is False and state["verdict"] is None
    state = assess([*samples, 140e6], SPEC)
    assert state["done"] is True and state["stable"] is False
    assert state["verdict"] == f"unstable after 6 runs (cv {state['cv_percent']:.2f} %)"
    assert 20 < state["cv_percent"] < 30


def test_ci_target_is_checked_too() -> None:
    spec = RepeatSpec(3, 10, until_cv=5.0, ci_percent=1.0)
    # cv 1 % is within 5 %, but the 95 % half-width of 3 samples is t(0.975, 2) * 1 % / sqrt(3) = 2.48 %
    state = assess([100.0, 101.0, 99.0], spec)
    assert state["stable"] is False and state["ci_percent"] == pytest.approx(2.4841, abs=1e-3)
    assert assess([100.0, 100.1, 99.9], spec)["verdict"] == "stable after 3 runs (cv 0.10 %, 95 % CI ±0.25 %)"


def test_failures_are_not_samples_and_max_failures_ends_the_point() -> None:
    spec = RepeatSpec(3, 6, until_cv=5.0, max_failures=1)
    state = assess([100.0, None], spec)
    assert state["tolerated"] is True and state["done"] is False and state["samples"] == 1
    assert assess([100.0, None, 100.0, 100.0], spec)["verdict"] == "stable after 4 runs (cv 0.00 %)"
    state = assess([100.0, None, None], spec)
    assert state["done"] is True and state["tolerated"] is False
    assert state["verdict"] == "gave up after 2 failed runs of 3 (max_failures 1; cv n/a)"
    # without max_failures a failed run is never tolerated (the play stops unless continue_on_error)
    assert assess([None], SPEC)["tolerated"] is False


def test_plain_repeat_decides_nothing() -> None:
    state = assess([1.0, 5.0], RepeatSpec(2, 2))
    assert state["stable"] is None and state["done"] is True and state["verdict"] is None


# -- the order -------------------------------------------------------------------------------

POINTS = [(1, "forward", False), (4, "forward", False), (1, "reverse", False)]


def test_interleaved_is_round_robin() -> None:
    assert run_order(POINTS, 2, "interleaved", None) == [
        (1, "forward", False, 1), (4, "forward", False, 1), (1, "reverse", False, 1),
        (1, "forward", False, 2), (4, "forward", False, 2), (1, "reverse", False, 2),
    ]  # fmt: skip


def test_sequential_is_back_to_back() -> None:
    assert [(*r[0:2], r[3]) for r in run_order(POINTS[:2], 2, "sequential", None)] == [
        (1, "forward", 1), (1, "forward", 2), (4, "forward", 1), (4, "forward", 2),
    ]  # fmt: skip


def test_shuffled_keeps_rounds_and_replays_with_its_seed() -> None:
    points = [(s, "forward", False) for s in range(1, 9)]
    order = run_order(points, 3, "shuffled", 42)
    assert order == run_order(points, 3, "shuffled", 42)  # the recorded seed replays the order
    assert order != run_order(points, 3, "shuffled", 43)
    for rep in (1, 2, 3):  # every round holds every point once
        assert sorted(r[0] for r in order if r[3] == rep) == list(range(1, 9))
    assert [r[0] for r in order[:8]] != list(range(1, 9))


def test_plan_records_order_seed_and_stability() -> None:
    tests = [
        {"name": "a", "pairs": PAIR, "streams": [1, 2], "repeat": {"min": 3, "max": 6, "until_cv": 5},
         "order": "shuffled"},
        {"name": "b", "pairs": PAIR, "repeat": 2, "order": "shuffled", "shuffle_seed": 7},
    ]  # fmt: skip
    plan = build_plan(tests, random_seed=1234)
    assert plan["run_count"] == 2 * 6 + 2
    a, b = plan["runs"][0], plan["runs"][-1]
    assert (a["order"], a["shuffle_seed"]) == ("shuffled", 1234) and (b["order"], b["shuffle_seed"]) == ("shuffled", 7)
    assert a["stability"] == {"min": 3, "max": 6, "until_cv": 5.0, "ci_percent": None, "max_failures": None}
    assert b["stability"] is None and b["repeat"] == 2
    assert plan["tests"][0]["repeat"] == a["stability"] and plan["tests"][1]["repeat"] == 2
    assert a["point"] == f"a|forward|{a['streams']}|unswapped"


def _report(run: dict[str, Any], bps: float | None) -> list[dict[str, Any]]:
    pair = run["pairs"][0]
    client: dict[str, Any] = {"item": {"run": run["run"], "pair": 1}, "started_at": 1.0}
    if bps is None:
        client.update(failed=True, msg="connection refused")
    else:
        client["result"] = {"bits_per_second": bps, "complete": True}
    servers = {"results": [{"item": {"run": run["run"], "pair": 1}, "pid": 1}]}
    return [
        {"host": pair["server"], "servers": servers, "clients": None, "stops": None, "failure": None},
        {"host": pair["client"], "servers": None, "clients": {"results": [client]}, "stops": None, "failure": None},
    ]


def test_records_carry_the_points_stability_over_interleaved_runs() -> None:
    plan = build_plan([{"name": "t", "pairs": PAIR, "streams": [1, 2], "repeat": {"min": 2, "max": 4, "until_cv": 5}}])
    rates = {1: [100.0, 101.0], 2: [100.0, 150.0, 100.0, 150.0]}
    records: list[Any] = []
    skipped = []
    for run in plan["runs"]:
        if any(r["point"] == run["point"] and r["stability"]["done"] for r in records):
            skipped.append(run["run"])  # what the role's `when:` does
            continue
        bps = rates[run["streams"]][run["repetition"] - 1]
        records.append(build_record(run, _report(run, bps), previous=records))
    # 1 stream: stable after 2; 2 streams: unstable after 4 -- runs 5 and 7 (1 stream, reps 3, 4) skipped
    assert skipped == [5, 7]
    last = {r["streams"]: r["stability"] for r in records}
    assert last[1]["verdict"] == "stable after 2 runs (cv 0.70 %)"
    assert last[2]["verdict"].startswith("unstable after 4 runs (cv 23.")
    assert records[0]["stability"]["verdict"] is None and records[0]["order"] == "interleaved"
