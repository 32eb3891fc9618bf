# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The regression gate's tolerances and their bounds (``report/gate.limit_problems``, issue 21): the one check used
by the action ``report_gate`` and by paired_test's preflight (``report_*``); each bad value is a clear error naming
the option and the fix, before a report is read or a history opened."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.action.report_gate import ActionModule
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.gate import LIMIT_BOUNDS, limit_problems
from tests.unit.plugins.action_harness import make_action


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            {"max_drop_percent": math.nan},
            "max_drop_percent=NaN must be a number of at least 0 and at most 100 (a drop is at most 100 % of the "
            "baseline mean (a rate is never below 0)), for example 5, or unset to leave it out",
        ),
        ({"max_drop_percent": math.inf}, "max_drop_percent=Infinity must be a number of at least 0 and at most 100"),
        ({"max_drop_percent": 1000}, "max_drop_percent=1000 must be a number of at least 0 and at most 100"),
        ({"max_drop_percent": -5}, "max_drop_percent=-5 must be a number of at least 0"),
        (
            {"min_line_rate_percent": 150},
            "min_line_rate_percent=150 must be a number of at least 0 and at most 100 (iperf measures goodput, always "
            "below the line rate (headers, gaps), so a bound above 100 % would fail every run)",
        ),
        ({"max_loss_percent": 200}, "max_loss_percent=200 must be a number of at least 0 and at most 100 (at most 100"),
        ({"max_retransmits": 1.5}, "max_retransmits=1.5 must be a number of at least 0, a whole one"),
        ({"max_retransmits": "many"}, 'max_retransmits="many" must be a number of at least 0, a whole one'),
    ],
)
def test_each_bad_tolerance_names_the_option_and_the_fix(values: dict[str, Any], message: str) -> None:
    (problem,) = limit_problems(values)
    assert problem.startswith(message) and problem.endswith(", or unset to leave it out" if "whole" not in problem
                                                            else ", or unset"), problem  # fmt: skip


def test_the_bounds_themselves_and_strings_from_the_command_line_pass() -> None:
    assert limit_problems({name: 0 for name in LIMIT_BOUNDS}) == []
    assert limit_problems({"max_drop_percent": 100, "min_line_rate_percent": "100", "max_loss_percent": 100.0}) == []
    assert limit_problems({"max_retransmits": 10**9, "max_drop_percent": None}) == []
    assert limit_problems({"max_drop_percent": "5"}, prefix="report_") == []
    assert limit_problems({"max_drop_percent": "x"}, prefix="report_")[0].startswith('report_max_drop_percent="x"')


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"max_drop_percent": "nan"}, "esxilab.iperf.report_gate: max_drop_percent=NaN must be a number of at least 0"),
        ({"max_drop_percent": 1000}, "esxilab.iperf.report_gate: max_drop_percent=1000.0 must be a number"),
        ({"min_line_rate_percent": 150}, "min_line_rate_percent=150.0 must be a number of at least 0 and at most 100"),
        ({"max_loss_percent": 200}, "max_loss_percent=200.0 must be a number of at least 0 and at most 100"),
    ],
)
def test_report_gate_refuses_them_before_reading_the_report(tmp_path: Path, args: dict[str, Any], message: str) -> None:
    history = tmp_path / "history.sqlite"
    task = {"report_dir": str(tmp_path / "no-report"), "history": f"sqlite:///{history}", **args}
    out = make_action(ActionModule, "esxilab.iperf.report_gate", task).run(task_vars={})
    assert out["failed"] is True and message in out["msg"], out
    assert out["msg"].endswith(f"(role esxilab.iperf.report: report_{next(iter(args))})"), out["msg"]
    assert not history.exists()  # nothing opened, nothing created
