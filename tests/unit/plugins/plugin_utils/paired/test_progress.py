# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Progress lines of the paired_test runs: figures, the time left from the plan, the summary."""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.progress import Progress, duration_text

TESTS = [{"name": "sweep", "pairs": [{"server": "h1", "client": "h2", "address": "198.18.0.1"}]}]


def _plan(**settings: Any) -> dict[str, Any]:
    return build_plan([{**TESTS[0], **settings}])


def _record(run: dict[str, Any], bps: float | None = 957e6, **extra: Any) -> dict[str, Any]:
    keys = ("run", "test", "streams", "direction", "swapped", "repetition")
    return {**{k: run[k] for k in keys}, "total_bits_per_second": bps, "ok": True, "errors": [], **extra}


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0 s"), (-3, "0 s"), (44.4, "44 s"), (59.6, "1 min 0 s"), (130, "2 min 10 s"), (3725, "1 h 02 min")],
)
def test_duration_text(seconds: float, text: str) -> None:
    assert duration_text(seconds) == text


def test_lines_and_time_left_from_the_plan_and_the_measured_overhead() -> None:
    plan = _plan(duration=10, streams=[1, 2, 4, 8], start_delay=0)
    progress = Progress()
    progress.plan(plan)
    assert progress.record([], 100.0) is None  # the runs begin
    runs = plan["runs"]
    # each run: 10 s planned, 4 s overhead -> 14 s apart
    lines = [progress.record([_record(r) for r in runs[: i + 1]], 100.0 + 14 * (i + 1)) for i in range(4)]
    assert lines == [
        "run 1/4 sweep 1 stream forward: 957.0 Mbit/s \u2014 42 s left",
        "run 2/4 sweep 2 streams forward: 957.0 Mbit/s \u2014 28 s left",
        "run 3/4 sweep 4 streams forward: 957.0 Mbit/s \u2014 14 s left",
        "run 4/4 sweep 8 streams forward: 957.0 Mbit/s \u2014 last run",
    ]
    assert progress.summary(200.0) == [
        "paired_test: 4 run(s) in 1 min 40 s: 4 with a figure",
        "paired_test: best sweep 1 stream forward: 957.0 Mbit/s",
    ]


def test_the_first_runs_one_off_cost_is_not_counted_for_every_remaining_run() -> None:
    plan = _plan(duration=10, streams=[1, 2, 4, 8], start_delay=0)
    progress = Progress()
    progress.plan(plan)
    progress.record([], 0.0)
    runs = plan["runs"]
    progress.record([_record(runs[0])], 20.0)  # 10 s of iperf, 10 s of one-off costs
    assert progress.eta(20.0) == pytest.approx(3 * 20)  # one run seen: its overhead is all there is to go by
    progress.record([_record(r) for r in runs[:2]], 32.0)  # then 2 s per run
    assert progress.eta(32.0) == pytest.approx(2 * 12)


TWO_PAIRS = [
    {"server": "h1", "client": "h2", "address": "198.18.0.1"},
    {"server": "h3", "client": "h4", "address": "198.18.0.3"},
]


def test_the_time_left_counts_omit_and_the_start_delay_of_a_barrier() -> None:
    plan = build_plan([{"name": "t", "pairs": TWO_PAIRS, "duration": 5, "omit": 2, "start_delay": 1.5, "repeat": 3}])
    progress = Progress()
    progress.plan(plan)
    progress.record([], 0.0)
    progress.record([_record(plan["runs"][0], start_delay=1.5)], 8.5)  # exactly as planned: no overhead
    assert progress.eta(8.5) == pytest.approx(2 * 8.5)
    assert progress.eta(10.5) == pytest.approx(2 * (8.5 + 2))  # 2 s overhead so far, per remaining run


def test_a_one_pair_run_has_no_start_delay() -> None:
    plan = _plan(duration=5, repeat=3)  # automatic start delay 1.4 s planned, but no barrier
    progress = Progress()
    progress.plan(plan)
    progress.record([], 0.0)
    progress.record([_record(plan["runs"][0], start_delay=None)], 5.0)
    assert progress.eta(5.0) == pytest.approx(2 * 5)


def test_a_grown_automatic_start_delay_counts_for_the_remaining_runs() -> None:
    plan = build_plan([{"name": "t", "pairs": TWO_PAIRS, "duration": 5, "repeat": 3}])
    planned_delay = plan["runs"][0]["start_delay"]  # 1 s + 0.4 s per client
    assert planned_delay == pytest.approx(1.8)
    progress = Progress()
    progress.plan(plan)
    progress.record([], 0.0)
    progress.record([_record(plan["runs"][0], start_delay=2.3)], 7.3)  # a late client: 0.5 s more from now on
    assert progress.eta(7.3) == pytest.approx(2 * (5 + 2.3))


def test_a_learnt_shorter_start_delay_counts_for_the_remaining_runs() -> None:
    """mesh.yml on the lab: 2 clients per round, planned 1.8 s, used 0.5 s after the first round; the time left
    counted 1.8 s per round and was 15-20 % high."""
    plan = build_plan([{"name": "t", "pairs": TWO_PAIRS, "duration": 3, "repeat": 4}])
    progress = Progress()
    progress.plan(plan)
    progress.record([], 0.0)
    progress.record([_record(plan["runs"][0], start_delay=1.2)], 4.2)  # the first run: from the probe's dispatch
    assert progress.eta(4.2) == pytest.approx(3 * (3 + 1.2))
    progress.record([_record(plan["runs"][1], start_delay=0.5)], 7.7)  # learnt from run 1's dispatch
    assert progress.eta(7.7) == pytest.approx(2 * (3 + 0.5))


def test_repetitions_show_the_mean_and_its_confidence_interval() -> None:
    plan = _plan(duration=1, repeat=3)
    progress = Progress()
    progress.plan(plan)
    progress.record([], 0.0)
    runs = plan["runs"]
    first = progress.record([_record(runs[0], 950e6)], 3.0)
    assert first is not None and "(mean" not in first
    second = progress.record([_record(runs[0], 950e6), _record(runs[1], 960e6)], 6.0)
    # mean 955 Mbit/s; half width t(0.975, 1) * 7.07 / sqrt(2) = 63.5 Mbit/s = 6.65 %
    assert second == (
        "run 2/3 sweep 1 stream forward repetition 2: 960.0 Mbit/s (mean of 2 955.0 Mbit/s \u00b1 6.7 % CI95)"
        " \u2014 3 s left"
    )


def test_failed_runs_no_figure_and_records_seen_twice() -> None:
    plan = _plan(duration=1, streams=[1, 2, 3], start_delay=0)
    progress = Progress()
    progress.plan(plan)
    progress.record([], 0.0)
    runs = plan["runs"]
    failed = _record(runs[0], None, ok=False, errors=["h2: connection refused"])
    assert (
        progress.record([failed], 2.0)
        == "run 1/3 sweep 1 stream forward: failed (h2: connection refused) \u2014 4 s left"
    )
    assert progress.record([failed], 2.5) is None  # the same record again (another host)
    assert (
        progress.record([failed, _record(runs[1], None)], 4.0)
        == "run 2/3 sweep 2 streams forward: no figure \u2014 2 s left"
    )
    assert progress.summary(5.0) == ["paired_test: 2 run(s) in 5 s: 0 with a figure, 1 failed"]


def test_a_new_plan_counts_its_own_runs_and_the_summary_all() -> None:
    progress = Progress()
    for offset in (0.0, 100.0):
        plan = _plan(duration=1, streams=[1, 2])
        progress.plan(plan)
        progress.record([], offset)
        progress.record([_record(plan["runs"][0])], offset + 2)
        assert progress.record([_record(r) for r in plan["runs"]], offset + 4) == (
            "run 2/2 sweep 2 streams forward: 957.0 Mbit/s \u2014 last run"
        )
    assert progress.summary(104.0)[0] == "paired_test: 4 run(s) in 1 min 44 s: 4 with a figure"


@pytest.mark.parametrize("value", [None, "text", [1, 2], {"runs": "x"}])
def test_what_is_not_a_plan_or_a_record_is_ignored(value: Any) -> None:
    progress = Progress()
    progress.plan(value)
    assert progress.record(value if isinstance(value, list) else [value], 1.0) is None
    assert progress.summary(2.0) == []
