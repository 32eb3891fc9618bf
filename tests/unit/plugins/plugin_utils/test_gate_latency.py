# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gate's latency checks (issue 25): the loaded ping RTT percentile of a row against its baseline row
(``max_latency_increase_percent``) and against a ceiling (``max_loaded_rtt_ms``); a row without the figure is
``not compared`` with the reason, never a pass; the values are refused with the full option name and the fix.

The comparison on rows built here, then on real documents: the ``results.json`` of two runs of
``tests/integration/test_latency_lab.py`` (``tests/fixtures/report/latency-lab/``, see its ``SOURCES.md``), a
link without a queue (before) and the same link behind a 20 Mbit/s ``tbf`` with a 1 MiB queue (after).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.esxilab.iperf.plugins.action.report_gate import ActionModule
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.latency_gate import check_latency_gate
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.baseline import compare_entries
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.gate import (
    LIMIT_BOUNDS,
    Limits,
    evaluate,
    failure_message,
    limit_problems,
    lines,
    markdown,
    percentile_problems,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.gate_latency import latency_checks
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.gate_run import run_gate
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history import Entry, entries_of
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history_url import parse_target
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.html import gate_section
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.latency import worst_latency
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.settings_check import check_report
from tests.collection_path import REPO
from tests.unit.plugins.action_harness import make_action

LAB = REPO / "tests" / "fixtures" / "report" / "latency-lab"
NOW = "2026-12-07T00:00:00Z"


def _row(p99: float | None, *, measured: bool = True, p90: float | None = None, direction: str = "forward") -> Entry:
    latency = worst_latency(())
    latency["loaded_p99_ms"], latency["loaded_p90_ms"] = p99, p90
    pairs = {key: "h2 -> h1" for key in ("loaded_p99_ms", "loaded_p90_ms") if latency[key] is not None}
    return Entry(
        test="nic", direction=direction, swapped=False, streams=1, tool="iperf3", protocol="tcp", labels={}, pairs=1,
        samples=[9.4e8], runs=1, latency=latency, latency_measured=measured, latency_pairs=pairs,
    )  # fmt: skip


def _check(now: Entry, base: Entry | None, **limits: Any) -> tuple[str, str, str]:
    (check,) = latency_checks(
        now,
        base,
        max_increase_percent=limits.get("increase"),
        max_loaded_rtt_ms=limits.get("ceiling"),
        percentile=limits.get("percentile", 99),
    )
    return check.limit, check.status, check.detail


# --------------------------------------------------------------------------------------------
# The comparison
# --------------------------------------------------------------------------------------------


def test_a_growth_within_the_limit_passes_and_beyond_it_fails_naming_both_figures_and_the_pair() -> None:
    assert _check(_row(12.0), _row(10.0), increase=50) == (
        "loaded p99 growth <= 50 %", "pass", "baseline 10 ms -> now 12 ms (+20.0 %) (worst pair h2 -> h1)",
    )  # fmt: skip
    assert _check(_row(16.0), _row(10.0), increase=50) == (
        "loaded p99 growth <= 50 %", "fail", "baseline 10 ms -> now 16 ms (+60.0 %) (worst pair h2 -> h1)",
    )  # fmt: skip
    assert _check(_row(15.0), _row(10.0), increase=50)[1] == "pass"  # at the limit: not more than it
    assert _check(_row(5.0), _row(10.0), increase=0)[1] == "pass"  # a lower RTT never fails


def test_the_ceiling_needs_no_baseline() -> None:
    assert _check(_row(72.5), None, ceiling=50) == (
        "loaded p99 <= 50 ms", "fail", "now 72.5 ms (worst pair h2 -> h1)",
    )  # fmt: skip
    assert _check(_row(0.4), _row(0.3), ceiling=50) == (
        "loaded p99 <= 50 ms", "pass", "baseline 0.3 ms -> now 0.4 ms (worst pair h2 -> h1)",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("now", "base", "reason"),
    [
        (_row(None, measured=False), _row(10.0), "not compared - latency not measured in this row"),
        (_row(None), _row(10.0), "not compared - no loaded p99 in this row (the pings gave too few replies"),
        (_row(12.0), None, "not compared - no baseline row; now 12 ms (worst pair h2 -> h1)"),
        (_row(12.0), _row(None, measured=False), "not compared - the baseline row has no loaded p99"),
        (_row(12.0), _row(0.0), "not compared - the baseline's loaded p99 is 0 ms"),
    ],
)
def test_a_row_without_both_figures_is_not_compared_with_the_reason(
    now: Entry, base: Entry | None, reason: str
) -> None:
    _limit, status, detail = _check(now, base, increase=50)
    assert status == "skip" and detail.startswith(reason), detail


def test_the_ceiling_of_a_row_without_the_figure_is_not_compared_never_passed() -> None:
    assert _check(_row(None, measured=False), None, ceiling=50)[1:] == (
        "skip", "not compared - latency not measured in this row (no pair pinged, the test setting latency is off)",
    )  # fmt: skip


def test_the_chosen_percentile_is_compared() -> None:
    assert _check(_row(None, p90=30.0), _row(None, p90=10.0), increase=50, percentile=90)[:2] == (
        "loaded p90 growth <= 50 %", "fail",
    )  # fmt: skip
    assert _check(_row(None, p90=30.0), _row(None, p90=10.0), increase=50)[1] == "skip"  # p99: none


def test_the_verdict_lines_name_the_row_the_direction_the_figures_and_the_limit() -> None:
    now = [_row(16.0), _row(None, measured=False, direction="reverse")]
    deltas = compare_entries(now, {now[0].key: (_row(10.0), "history run 3")})
    checks = evaluate(deltas, Limits(max_latency_increase_percent=50, max_loaded_rtt_ms=100))
    assert [(c.title, c.status) for c in checks] == [
        ("nic forward, 1 stream", "fail"), ("nic forward, 1 stream", "pass"),
        ("nic reverse, 1 stream", "skip"), ("nic reverse, 1 stream", "skip"),
    ]  # fmt: skip
    printed = lines(deltas, checks, "previous")
    assert (
        "FAIL nic forward, 1 stream: loaded p99 growth <= 50 % - baseline 10 ms -> now 16 ms (+60.0 %) (worst pair "
        "h2 -> h1)" in printed
    )
    assert "pass nic forward, 1 stream: loaded p99 <= 100 ms - baseline 10 ms -> now 16 ms (worst pair h2 -> h1)" in (
        printed
    )
    assert "skip nic reverse, 1 stream: loaded p99 growth <= 50 % - not compared - latency not measured" in "\n".join(
        printed
    )
    assert printed[-1] == (
        "gate: FAILED (1 passed, 1 failed, 2 not checked: not compared - latency not measured in this row (no pair "
        "pinged, the test setting latency is off) x2)"
    )
    message = failure_message(checks)
    assert message == (
        "regression gate failed: nic forward, 1 stream: loaded p99 growth <= 50 % breached - baseline 10 ms -> now 16 "
        "ms (+60.0 %) (worst pair h2 -> h1)"
    )
    section = markdown(deltas, checks, "previous")
    assert "| nic forward, 1 stream | loaded p99 growth &lt;= 50 % | fail | baseline 10 ms -> now 16 ms" in section


def test_a_latency_tolerance_alone_gates_and_the_percentile_alone_does_not() -> None:
    assert Limits(max_loaded_rtt_ms=5).any_set and not Limits(latency_percentile=90).any_set
    assert Limits(latency_percentile=90).as_doc()["latency_percentile"] == 90


# --------------------------------------------------------------------------------------------
# Bad values: the full option name and the fix
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"report_max_latency_increase_percent": -5},
            "report_max_latency_increase_percent=-5 must be a number of at least 0 (the growth of the loaded ping RTT "
            "percentile over the baseline row's, in % of the baseline's), for example 5, or unset to leave it out",
        ),
        (
            {"report_max_latency_increase_percent": "fast"},
            'report_max_latency_increase_percent="fast" must be a number',
        ),
        ({"report_max_loaded_rtt_ms": "nan"}, 'report_max_loaded_rtt_ms="nan" must be a number of at least 0 (the '),
        ({"report_max_loaded_rtt_ms": True}, "report_max_loaded_rtt_ms=true must be a number of at least 0"),
        ({"report_max_loaded_rtt_ms": "-1"}, 'report_max_loaded_rtt_ms="-1" must be a number of at least 0'),
        (
            {"report_latency_percentile": 95},
            "report_latency_percentile=95 must be one of 50, 90, 99 (the loaded ping RTT percentiles a run records; "
            "p99 needs 100 replies per window, see docs/latency.md), for example 99, or unset for 99",
        ),
        ({"report_latency_percentile": "p99"}, 'report_latency_percentile="p99" must be one of 50, 90, 99'),
        ({"report_latency_percentile": -1}, "report_latency_percentile=-1 must be one of 50, 90, 99"),
        ({"report_latency_percentile": True}, "report_latency_percentile=true must be one of 50, 90, 99"),
    ],
)
def test_each_bad_latency_setting_is_refused_with_the_option_and_the_fix(
    settings: dict[str, Any], message: str
) -> None:
    (problem,) = check_report({**settings, "report_history": "none"})
    assert problem.startswith(message), problem


def test_good_latency_settings_pass_also_as_strings_from_the_command_line() -> None:
    good = {"report_max_latency_increase_percent": "250", "report_max_loaded_rtt_ms": 0.5, "report_history": "none"}
    assert check_report({**good, "report_latency_percentile": "90"}) == []
    assert check_report({**good, "report_latency_percentile": 50.0}) == []
    assert limit_problems({"max_latency_increase_percent": 10**6, "max_loaded_rtt_ms": 10**5}) == []  # no upper bound
    assert percentile_problems(None) == [] and percentile_problems(99) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"max_loaded_rtt_ms": -3}, "esxilab.iperf.report_gate: max_loaded_rtt_ms=-3.0 must be a number of at least 0"),
        ({"max_latency_increase_percent": "nan"}, "max_latency_increase_percent=NaN must be a number of at least 0"),
        ({"latency_percentile": 95}, "latency_percentile must be one of: 50, 90, 99, got: 95"),
        ({"latency_percentile": "p99"}, "latency_percentile"),
    ],
)
def test_report_gate_refuses_them_before_reading_the_report(tmp_path: Path, args: dict[str, Any], message: str) -> None:
    history = tmp_path / "history.sqlite"
    task = {"report_dir": str(tmp_path / "no-report"), "history": f"sqlite:///{history}", **args}
    out = make_action(ActionModule, "esxilab.iperf.report_gate", task).run(task_vars={})
    assert out["failed"] is True and message in out["msg"], out
    assert not history.exists()  # nothing opened, nothing created


# --------------------------------------------------------------------------------------------
# The preflight: a latency check that could compare nothing is refused before any host runs
# --------------------------------------------------------------------------------------------


def _plan(*runs: dict[str, Any]) -> dict[str, Any]:
    return {"runs": [{"test": "t", "duration": 10, "omit": 0, "latency": None, **run} for run in runs]}


def test_no_test_measures_latency() -> None:
    (problem,) = check_latency_gate({"report_max_loaded_rtt_ms": 20}, _plan({}))
    assert problem == (
        "report_max_loaded_rtt_ms=20 gate the loaded ping RTT, but no test of paired_test_tests measures it, so every "
        "row would be not compared: set latency: true on the tests to gate (docs/latency.md), or unset "
        "report_max_loaded_rtt_ms"
    )


def test_too_few_probes_for_the_percentile() -> None:
    plan = _plan({"latency": {"interval": 0.2, "idle": None}}, {"test": "long", "latency": {"interval": 0.1}})
    (problem,) = check_latency_gate({"report_max_latency_increase_percent": 50}, plan)
    assert problem == (
        "report_latency_percentile=99: test 't' sends 50 probes in its loaded window (10 s every 0.2 s), too few for "
        "a p99 (it needs 100 replies), so report_max_latency_increase_percent would compare none of its rows: lower "
        "the test's latency.interval to 0.1 s or less, make its duration 20 s or longer, or set "
        "report_latency_percentile to 90"
    )
    settings = {"report_max_latency_increase_percent": 50, "report_latency_percentile": "90"}
    assert check_latency_gate(settings, plan) == []
    assert check_latency_gate({"report_latency_percentile": 99}, _plan({})) == []  # no latency check set
    assert check_latency_gate({"report_max_loaded_rtt_ms": 5, "report_latency_percentile": 95}, plan) == []  # named


# --------------------------------------------------------------------------------------------
# One source of truth: the role's spec, defaults and tasks name every tolerance of LIMIT_BOUNDS
# --------------------------------------------------------------------------------------------


def test_the_roles_and_the_module_name_every_tolerance_of_the_one_list() -> None:
    report = REPO / "roles" / "report"
    spec = yaml.safe_load((report / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    defaults = yaml.safe_load((report / "defaults" / "main.yml").read_text())
    (check,) = [t for t in yaml.safe_load((report / "tasks" / "preflight.yml").read_text()) if "report_check" in str(t)]
    paired = yaml.safe_load((REPO / "roles" / "paired_test" / "tasks" / "preflight.yml").read_text())
    given = paired[0]["esxilab.iperf.paired_test_preflight"]["report"]
    gate = [t for t in yaml.safe_load((report / "tasks" / "write.yml").read_text()) if "esxilab.iperf.report_gate" in t]
    from ansible_collections.esxilab.iperf.plugins.modules.report_gate import DOCUMENTATION

    options = yaml.safe_load(DOCUMENTATION)["options"]
    for name in [*LIMIT_BOUNDS, "latency_percentile"]:
        role_name = f"report_{name}"
        assert role_name in spec and role_name in defaults, role_name
        assert role_name in check["esxilab.iperf.report_check"]["settings"] and role_name in given, role_name
        assert name in options and name in gate[0]["esxilab.iperf.report_gate"], name
        if name in LIMIT_BOUNDS:
            assert f"{role_name} is not none" in gate[0]["when"], name  # a tolerance alone runs the gate
    assert spec["report_latency_percentile"]["choices"] == options["latency_percentile"]["choices"] == [50, 90, 99]
    assert defaults["report_latency_percentile"] == options["latency_percentile"]["default"] == 99


# --------------------------------------------------------------------------------------------
# Real documents: the results.json of two runs of tests/integration/test_latency_lab.py
# --------------------------------------------------------------------------------------------


def _report(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    target.mkdir()
    shutil.copy(LAB / f"{name}.results.json", target / "results.json")
    (target / "summary.md").write_text("# report\n")
    return target


def test_real_documents_a_queue_that_grew_the_loaded_rtt_fails_the_gate(tmp_path: Path) -> None:
    before, after = _report(tmp_path, "before"), _report(tmp_path, "after")
    rows = entries_of(json.loads((after / "results.json").read_text()))
    assert [(e.direction, e.latency_measured, e.latency_pairs.get("loaded_p90_ms")) for e in rows] == [
        ("forward", True, "h2 -> h1"), ("reverse", True, "h2 -> h1"),
    ]  # fmt: skip
    limits = Limits(max_latency_increase_percent=100, max_loaded_rtt_ms=50, latency_percentile=90)
    outcome = run_gate(
        str(after), target=parse_target("none", option="report_history"), password=None,
        baseline=str(before / "results.json"), limits=limits, now=NOW, check_mode=False,
    )  # fmt: skip
    gate = outcome.doc["gate"]
    assert gate["passed"] is False and gate["limits"]["latency_percentile"] == 90
    statuses = [(c["test"].split(",")[0], c["limit"], c["status"]) for c in gate["checks"]]
    assert statuses == [
        ("queue forward", "loaded p90 growth <= 100 %", "fail"), ("queue forward", "loaded p90 <= 50 ms", "fail"),
        ("queue reverse", "loaded p90 growth <= 100 %", "fail"), ("queue reverse", "loaded p90 <= 50 ms", "fail"),
    ]  # fmt: skip
    base_rows = {e.direction: e for e in entries_of(json.loads((before / "results.json").read_text()))}
    for check, row in zip(gate["checks"][::2], rows, strict=True):
        figure, base = row.latency["loaded_p90_ms"], base_rows[row.direction].latency["loaded_p90_ms"]
        assert figure is not None and base is not None and figure > 2 * base and figure > 50
        assert check["detail"].startswith(f"baseline {base:g} ms -> now {figure:g} ms (+"), check
        assert check["detail"].endswith("(worst pair h2 -> h1)")
    written = json.loads((after / "results.json").read_text())
    assert written["gate"] == gate
    summary = (after / "summary.md").read_text()
    assert "| queue reverse, 1 stream | loaded p90 &lt;= 50 ms | fail | baseline " in summary
    assert "loaded p90 growth <= 100 % breached" in (outcome.message or "")
    assert "loaded p90 growth &lt;= 100 %" in gate_section(written)  # report.html's gate section, from results.json


def test_real_documents_p99_has_too_few_replies_and_is_not_compared(tmp_path: Path) -> None:
    before, after = _report(tmp_path, "before"), _report(tmp_path, "after")
    outcome = run_gate(
        str(after), target=parse_target("none", option="report_history"), password=None,
        baseline=str(before / "results.json"), limits=Limits(max_loaded_rtt_ms=50), now=NOW, check_mode=False,
    )  # fmt: skip
    gate = outcome.doc["gate"]
    assert gate["passed"] is True  # as for the other tolerances: a row with nothing to compare is not a failure
    assert [c["status"] for c in gate["checks"]] == ["skip", "skip"]
    assert all(c["detail"].startswith("not compared - no loaded p99 in this row") for c in gate["checks"])
    assert outcome.lines[-1].startswith("gate: passed (0 passed, 0 failed, 2 not checked: not compared - no loaded p99")


def test_real_documents_the_unqueued_run_compared_with_itself_passes(tmp_path: Path) -> None:
    before = _report(tmp_path, "before")
    limits = Limits(max_latency_increase_percent=0, max_loaded_rtt_ms=50, latency_percentile=50)
    outcome = run_gate(
        str(before), target=parse_target("none", option="report_history"), password=None,
        baseline=str(LAB / "before.results.json"), limits=limits, now=NOW, check_mode=False,
    )  # fmt: skip
    assert outcome.message is None and [c["status"] for c in outcome.doc["gate"]["checks"]] == ["pass"] * 4


def test_real_documents_the_baseline_from_the_history_carries_its_latency(tmp_path: Path) -> None:
    """baseline=previous reads the stored latency columns (migration 5) back: the same verdict as from the file."""
    before, after = _report(tmp_path, "before"), _report(tmp_path, "after")
    target = parse_target(f"sqlite:///{tmp_path}/history.sqlite", option="report_history")
    limits = Limits(max_latency_increase_percent=100, latency_percentile=90)
    first = run_gate(str(before), target=target, password=None, baseline=None, limits=limits, now=NOW, check_mode=False)
    assert first.recorded and [c["status"] for c in first.doc["gate"]["checks"]] == ["skip", "skip"]  # no baseline
    outcome = run_gate(
        str(after), target=target, password=None, baseline="previous", limits=limits, now=NOW, check_mode=False
    )
    from_file = {e.direction: e for e in entries_of(json.loads((LAB / "before.results.json").read_text()))}
    for check, comparison in zip(outcome.doc["gate"]["checks"], outcome.doc["baseline"]["comparisons"], strict=True):
        assert comparison["baseline"]["latency"] == from_file[comparison["direction"]].latency
        base = comparison["baseline"]["latency"]["loaded_p90_ms"]
        assert check["status"] == "fail" and check["detail"].startswith(f"baseline {base:g} ms -> now "), check
