# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report_gate action: a damaged history and a bad history URL fail the task with one clear message."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.action.report_gate import ActionModule
from tests.unit.plugins.action_harness import make_action
from tests.unit.plugins.plugin_utils.history_docs import doc_of


def _run(args: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = make_action(ActionModule, "esxilab.iperf.report_gate", args).run(task_vars={})
    return result


def _report(tmp_path: Path) -> Path:
    report = tmp_path / "r1"
    report.mkdir()
    (report / "results.json").write_text(json.dumps(doc_of([1e9, 1e9])))
    return report


def test_a_garbage_sqlite_history_fails_the_task_naming_the_file_and_the_fix(tmp_path: Path) -> None:
    history = tmp_path / "history.sqlite"
    history.write_bytes(os.urandom(4096))
    result = _run({"report_dir": str(_report(tmp_path)), "history": f"sqlite:///{history}", "baseline": "previous"})
    assert result["failed"] is True
    assert result["msg"].startswith(f"esxilab.iperf.report_gate: report_history=sqlite:///{history}: {history} is not")
    assert "move the file away" in result["msg"]


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("postgresql://u:Zq9s3cret@db.example:notaport/h", "the port 'notaport' is not a number from 1 to 65535"),
        ("postgresql://u:Zq9s3cret@[::1/h", "the IPv6 address '[::1' has no closing ']'"),
    ],
)
def test_a_bad_history_url_fails_the_task_naming_the_option_without_the_password(
    tmp_path: Path, url: str, needle: str
) -> None:
    result = _run({"report_dir": str(_report(tmp_path)), "history": url})
    assert result["failed"] is True
    assert result["msg"].startswith("esxilab.iperf.report_gate: history (role: report_history)=postgresql://u:***@")
    assert needle in result["msg"] and "s3cret" not in json.dumps(result)
