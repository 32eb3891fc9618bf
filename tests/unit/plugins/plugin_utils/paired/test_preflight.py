# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one preflight of paired_test: every problem at once, one line each, naming the option and the fix.

The refusals the role used to make in Jinja asserts (knee tolerance, report name, run limit, state
directory) and the report settings checked only after the benchmark (baseline, history, gate values,
an unknown gate variable) are proven here on the Python that makes them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.preflight import (
    Outcome,
    RoleNames,
    check_report,
    check_role_settings,
    check_state_dirs,
    preflight,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import history, history_sqlite
from tests.unit.plugins.plugin_utils.history_docs import doc_of

NOW = "2026-12-06T00:00:00Z"
PAIRS = [{"server": "h1", "address": "198.18.0.1", "client": "h2"}]
ROLES = [
    RoleNames("esxilab.iperf.paired_test", "paired_test_", frozenset({"paired_test_tests", "paired_test_streams"})),
    RoleNames("esxilab.iperf.report", "report_", frozenset({"report_max_drop_percent", "report_history"})),
]


def _run(tests: Any, *, defined: tuple[str, ...] = (), report: dict[str, Any] | None = None, **kwargs: Any) -> Outcome:
    settings = {"knee_tolerance": 0.05, "report_name": None, "max_runs": 1000, **kwargs.pop("role", {})}
    return preflight(
        tests,
        defaults={},
        role_settings=settings,
        report_settings=report or {},
        state_dirs=kwargs.pop("state_dirs", {"h1": "/tmp", "h2": "/tmp"}),
        defined=defined,
        roles=ROLES,
        inventory_hosts=["h1", "h2"],
        play_hosts=["h1", "h2"],
        **kwargs,
    )


def test_good_settings_give_the_plan_and_no_problem() -> None:
    outcome = _run([{"name": "t", "pairs": PAIRS}], defined=("paired_test_tests",))
    assert outcome.problems == [] and outcome.warnings == []
    assert outcome.plan is not None and outcome.plan["run_count"] == 1 and outcome.plan["hosts"] == ["h1", "h2"]


def test_a_link_speed_that_would_not_be_used_is_not_read() -> None:
    tests = [{"name": "t", "pairs": [{**PAIRS[0], "client_address": "198.18.0.2"}]}]
    read = _run(tests, defined=("paired_test_tests",))
    assert read.plan is not None and read.plan["addresses_by_host"] == {"h1": ["198.18.0.1"], "h2": ["198.18.0.2"]}
    given = _run(tests, defined=("paired_test_tests",), link_speeds={"h1": 100})  # h1's given speed wins there
    assert given.plan is not None and given.plan["addresses_by_host"] == {"h2": ["198.18.0.2"]}
    for rate, hosts in ((1e9, []), ("not a rate", ["h1", "h2"])):  # report_line_rate_bps wins everywhere
        outcome = _run(tests, defined=("paired_test_tests",), report={"report_line_rate_bps": rate}, reporting=False)
        assert outcome.plan is not None and sorted(outcome.plan["addresses_by_host"]) == hosts


def test_every_problem_is_listed_at_once_with_its_path_and_a_did_you_mean(tmp_path: Path) -> None:
    """Typos in a test, a pair, repeat and a role variable; bad values; the baseline missing - all in one go."""
    tests = [
        {"name": "a", "pairs": PAIRS, "strams": 2, "duration": 0},
        {"name": "b", "pairs": [{"server": "h1", "adress": "198.18.0.1", "client": "h2"}], "repeat": {"mn": 1}},
        {"name": "c", "pairs": [{"server": "h1", "address": "198.18.0.1", "client": "h2"}], "streams": 0},
    ]
    outcome = _run(
        tests,
        defined=("paired_test_tests", "paired_test_stream", "report_max_drop_percnt"),
        role={"knee_tolerance": 5, "report_name": "../x"},
        report={"report_baseline": str(tmp_path / "nothing.json"), "report_max_drop_percent": "-3"},
    )
    problems = outcome.problems
    expected = [
        "paired_test_stream is not an option of esxilab.iperf.paired_test (did you mean paired_test_streams?)",
        "report_max_drop_percnt is not an option of esxilab.iperf.report (did you mean report_max_drop_percent?)",
        "paired_test_knee_tolerance=5 is not a fraction in [0, 1)",
        'paired_test_report_name="../x" is not a plain file name',
        "paired_test_tests[0]: test 'a': unknown key(s) strams (did you mean streams?)",
        "paired_test_tests[0]: test 'a': duration must be at least 1, got 0",
        "paired_test_tests[1].pairs[0]: test 'b' pair 1: unknown key(s) adress (did you mean address?)",
        "paired_test_tests[1].repeat.mn (test 'b'): unknown key - did you mean min?",
        "paired_test_tests[2]: test 'c': streams must be a whole number from 1 to 128",
        f"report_baseline={tmp_path / 'nothing.json'}: {tmp_path / 'nothing.json'} does not exist",
        'report_max_drop_percent="-3" must be a number of at least 0',
    ]
    for needle in expected:
        assert sum(needle in line for line in problems) == 1, (needle, problems)
    assert len(problems) == len(expected), problems
    assert outcome.plan is None


def test_an_unknown_variable_is_a_warning_when_asked() -> None:
    outcome = _run([{"name": "t", "pairs": PAIRS}], defined=("report_max_drop_percnt",), unknown_fail=False)
    assert outcome.problems == []
    assert outcome.warnings == [
        "report_max_drop_percnt is not an option of esxilab.iperf.report (did you mean report_max_drop_percent?); "
        "fix the name or remove it"
    ]


def test_the_hosts_and_addresses_are_problems_of_the_plan() -> None:
    outcome = _run([{"name": "t", "pairs": [{"server": "h1", "client": "h9"}]}], address_var="lab_address")
    assert any("h9" in line and "inventory" in line for line in outcome.problems), outcome.problems
    assert any("no address for the server h1" in line for line in outcome.problems), outcome.problems


@pytest.mark.parametrize(
    ("knee", "name", "runs", "needles"),
    [
        (0.05, None, 1000, []),
        ("0.1", "vswitch-2026-12-01", "5", []),
        (1, None, 1000, ["paired_test_knee_tolerance=1 is not a fraction"]),
        (True, None, 1000, ["paired_test_knee_tolerance=true is not a fraction"]),
        ("-0.1", None, 1000, ['paired_test_knee_tolerance="-0.1" is not a fraction']),
        (0.05, "a b", 1000, ['paired_test_report_name="a b" is not a plain file name']),
        (0.05, ".hidden", 1000, ["is not a plain file name"]),
        (0.05, None, 0, ["paired_test_max_runs=0 must be a whole number of at least 1"]),
        (0.05, None, 1.5, ["paired_test_max_runs=1.5 must be a whole number"]),
    ],
)
def test_role_settings(knee: Any, name: Any, runs: Any, needles: list[str]) -> None:
    problems = check_role_settings(knee, name, runs)
    assert len(problems) == len(needles), problems
    for needle, line in zip(needles, problems, strict=True):
        assert needle in line


def test_state_dirs_must_be_absolute_on_every_host_of_the_tests() -> None:
    problems = check_state_dirs({"h1": "/tmp", "h2": "state", "h3": "relative"}, ["h1", "h2"])
    assert problems == [
        'paired_test_state_dir="state" on h2 is not an absolute path: the servers\' pidfiles and logs go there on '
        "the host, and a relative path would depend on the connection's working directory; set an absolute "
        "directory that exists on the host, such as /tmp (per host in host_vars if needed)"
    ]


def _history(path: Path, *, version: int | None = None) -> None:
    conn = history_sqlite.connect(str(path))
    history.migrate(conn, NOW)
    history.record(conn, doc_of([1e9, 1e9]), now=NOW, report_dir="/r/1")
    if version is not None:
        conn.execute("INSERT INTO schema_version VALUES (?, 'future', ?)", (version, NOW))
    conn.close()


def test_the_history_is_opened_and_its_schema_read_without_writing(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    _history(path)
    before = path.read_bytes()
    assert check_report({"report_history": f"sqlite:///{path}", "report_baseline": "previous"}) == []
    assert path.read_bytes() == before
    fresh = tmp_path / "new" / "h.sqlite"
    assert check_report({"report_history": f"sqlite:///{fresh}"}) == []
    assert not fresh.exists() and not fresh.parent.exists()  # created by the report, not by the check


def test_a_history_of_a_newer_schema_is_refused_before_the_runs(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    _history(path, version=99)
    problems = check_report({"report_history": f"sqlite:///{path}"})
    assert problems == [
        f"report_history=sqlite:///{path}: the history's schema is version 99, newer than this collection's "
        f"{history.LATEST}: upgrade esxilab.iperf, or point report_history at another store"
    ]


def test_an_empty_database_has_schema_version_zero(tmp_path: Path) -> None:
    conn = history_sqlite.connect(str(tmp_path / "empty.sqlite"))
    try:
        assert history.stored_version(conn) == 0
        assert conn.execute("SELECT COUNT(*) FROM sqlite_master")[0][0] == 0  # nothing created
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("report", "needle"),
    [
        ({"report_history": "mysql://h/db"}, "report_history='mysql://h/db' is not a history"),
        ({"report_history": "sqlite:///{tmp}"}, "exists and is not a file"),
        ({"report_history": "sqlite:///{tmp}/bad.json/h.sqlite"}, "does not exist and cannot be created"),
        ({"report_baseline": "previous"}, "report_baseline=previous compares with the last comparable run in the "),
        ({"report_baseline": "base.txt"}, 'report_baseline="base.txt" must be previous'),
        ({"report_baseline": "{tmp}/bad.json"}, "cannot read"),
        ({"report_baseline": "{tmp}/other.json"}, "is not a results.json of esxilab.iperf.report"),
        ({"report_line_rate_bps": 0}, "report_line_rate_bps=0 must be a positive number of bit/s"),
        ({"report_max_retransmits": "many"}, 'report_max_retransmits="many" must be a number of at least 0'),
        ({"report_max_loss_percent": True}, "report_max_loss_percent=true must be a number"),
        # issue 21: the gate's bounds, before any host runs (nan crashed the gate after the runs)
        ({"report_max_drop_percent": float("nan")}, "report_max_drop_percent=NaN must be a number of at least 0"),
        ({"report_max_drop_percent": "nan"}, 'report_max_drop_percent="nan" must be a number of at least 0'),
        ({"report_max_drop_percent": 1000}, "report_max_drop_percent=1000 must be a number of at least 0 and at most"),
        ({"report_min_line_rate_percent": "150"}, 'report_min_line_rate_percent="150" must be a number of at least 0 '),
        (
            {"report_max_loss_percent": 200},
            "report_max_loss_percent=200 must be a number of at least 0 and at most 100",
        ),
    ],
)
def test_report_settings_are_refused_with_the_option_and_the_fix(
    tmp_path: Path, report: dict[str, Any], needle: str
) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "other.json").write_text(json.dumps({"format": "something else"}))
    report = {k: v.replace("{tmp}", str(tmp_path)) if isinstance(v, str) else v for k, v in report.items()}
    problems = check_report(report)
    assert len(problems) == 1 and needle in problems[0], problems


def test_a_baseline_that_is_a_report_passes(tmp_path: Path) -> None:
    base = tmp_path / "results.json"
    base.write_text(json.dumps(doc_of([1e9, 1.1e9])))
    assert check_report({"report_baseline": str(base), "report_max_drop_percent": 5}) == []


def test_without_a_report_its_settings_are_not_checked(tmp_path: Path) -> None:
    outcome = _run([{"name": "t", "pairs": PAIRS}], report={"report_baseline": "x.json"}, reporting=False)
    assert outcome.problems == []


def test_a_compare_by_label_no_planned_run_has_is_refused_before_the_runs() -> None:
    """It was a warning after the benchmark, and the report had no comparison (issue 21)."""
    labelled = [{**PAIRS[0], "labels": {"nic": "e1000"}}]
    tests = [{"name": "t", "pairs": labelled, "labels": {"os": "linux"}}]
    for good in ("nic", "os", "test", "streams", "line_rate_bps", None, ""):
        assert _run(tests, report={"report_compare_by": good}, reporting=True).problems == [], good
    (problem,) = _run(tests, report={"report_compare_by": "nics"}, reporting=True).problems
    assert problem.startswith('report_compare_by="nics": no planned run or pair has the label nics, so nothing')
    assert (
        "(did you mean nic?)" in problem
        and "repetition, os, nic - fix" in problem
        and "unset report_compare_by" in problem
    )
    assert _run(tests, report={"report_compare_by": "nics"}, reporting=False).problems == []  # no report, no check


def test_a_latency_gate_that_could_compare_nothing_is_refused_before_the_runs() -> None:
    """issue 25: report_max_loaded_rtt_ms / report_max_latency_increase_percent need a test that pings, with enough
    probes in its loaded window for report_latency_percentile (the plan's own runs are read)."""
    gate = {"report_max_loaded_rtt_ms": 20}
    (problem,) = _run([{"name": "t", "pairs": PAIRS}], report=gate).problems
    assert problem.startswith("report_max_loaded_rtt_ms=20 gate the loaded ping RTT, but no test of paired_test_tests")
    (problem,) = _run([{"name": "t", "pairs": PAIRS, "latency": True}], report=gate).problems
    assert problem.startswith(
        "report_latency_percentile=99: test 't' sends 50 probes in its loaded window (10 s every 0.2 s), too few for "
        "a p99 (it needs 100 replies)"
    ), problem
    assert _run([{"name": "t", "pairs": PAIRS, "latency": {"interval": 0.1}}], report=gate).problems == []
    assert (
        _run(
            [{"name": "t", "pairs": PAIRS, "latency": True}], report={**gate, "report_latency_percentile": 90}
        ).problems
        == []
    )
