# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report_check action: the report role's settings checked in Python, every problem at once (issue 24: each check
in one place - the role's Jinja asserts that restated these checks are gone)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from ansible_collections.esxilab.iperf.plugins.action import report_check as action
from ansible_collections.esxilab.iperf.plugins.action.report_check import ActionModule
from ansible_collections.esxilab.iperf.plugins.modules import report_check as module_doc
from tests.collection_path import REPO
from tests.unit.plugins.action_harness import assert_docs_only, assert_options_documented, make_action


def _run(**args: Any) -> dict[str, Any]:
    plugin = make_action(ActionModule, "esxilab.iperf.report_check", args)
    result: dict[str, Any] = plugin.run(task_vars={})
    return result


def test_documentation_matches_the_argument_spec() -> None:
    assert_docs_only(module_doc)
    assert_options_documented(yaml.safe_load(module_doc.DOCUMENTATION)["options"], action.ARGUMENT_SPEC)


def test_usable_settings_pass(tmp_path: Path) -> None:
    settings = {"report_history": f"sqlite:///{tmp_path}/h.sqlite", "report_baseline": "previous"}
    result = _run(runs=2, name="vswitch-forwarding", knee_tolerance="0.05", settings=settings)
    assert not result.get("failed") and result["problems"] == [] and result["changed"] is False, result


def test_every_problem_at_once_one_line_each_naming_the_option(tmp_path: Path) -> None:
    settings = {
        "report_history": "postgresql://u:s3cret@[::1/db",
        "report_baseline": str(tmp_path / "gone" / "results.json"),
        "report_line_rate_bps": -1,
        "report_max_drop_percent": "five",
    }
    result = _run(runs=0, name="../up", knee_tolerance=1.5, settings=settings)
    assert result["failed"] is True
    lines = result["msg"].splitlines()
    assert lines[0] == "7 problem(s) with the settings of the report, nothing was written:"
    starts = [line.split("=")[0].split(":")[0].split(" ")[0] for line in lines[1:]]
    assert starts == [
        "report_runs",
        "report_name",
        "report_knee_tolerance",
        "report_line_rate_bps",
        "report_max_drop_percent",
        "report_history",
        "report_baseline",
    ], lines
    assert "s3cret" not in json.dumps(result)  # a password in a URL never shows
    assert result["problems"] == lines[1:]


def test_the_role_checks_only_through_the_action() -> None:
    """The role's preflight restates no check in Jinja: one task of the role calls the action."""
    tasks = yaml.safe_load((REPO / "roles" / "report" / "tasks" / "preflight.yml").read_text())
    modules = [next(k for k in task if k.startswith(("esxilab.", "ansible."))) for task in tasks]
    assert modules == ["esxilab.iperf.role_vars_check", "esxilab.iperf.report_check"]
