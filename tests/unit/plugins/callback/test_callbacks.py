# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The callbacks: when progress prints, what it reads, the role contract it depends on; concise's failure."""

from __future__ import annotations

import io
import sys
from typing import Any
from unittest.mock import MagicMock

import pytest
import yaml
from ansible.plugins.callback.default import CallbackModule as DefaultCallback

from ansible_collections.esxilab.iperf.plugins.callback import concise, progress
from ansible_collections.esxilab.iperf.plugins.plugin_utils._paired import build_plan
from tests.collection_path import REPO

TASKS = REPO / "roles" / "paired_test" / "tasks"


class _Result:
    """A task result as callbacks get it (``result`` from ansible-core 2.19)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.result = data
        self._host = MagicMock()
        self._task = MagicMock()


@pytest.mark.parametrize(
    ("mode", "tty", "stdout_callback", "shown"),
    [
        ("always", False, "default", True),
        ("never", True, "awx_display", False),
        ("auto", True, "default", True),
        ("auto", False, "default", False),  # CI, a pipe: quiet
        ("auto", False, "awx_display", True),  # AWX / ansible-runner
    ],
)
def test_when_progress_prints(
    monkeypatch: pytest.MonkeyPatch, mode: str, tty: bool, stdout_callback: str, shown: bool
) -> None:
    stream = io.StringIO()
    monkeypatch.setattr(stream, "isatty", lambda: tty)
    monkeypatch.setattr(sys, "stdout", stream)
    monkeypatch.setenv("ANSIBLE_STDOUT_CALLBACK", stdout_callback)
    assert progress._shown(mode) is shown


def test_progress_reads_the_plan_and_the_records_from_the_facts() -> None:
    plugin = progress.CallbackModule()
    plugin._shown = True
    plugin._display = MagicMock()
    plan = build_plan(
        [{"name": "t", "pairs": [{"server": "a", "client": "b", "address": "198.18.0.1"}], "streams": [1, 2]}]
    )
    record = {k: plan["runs"][0][k] for k in ("run", "test", "streams", "direction", "swapped", "repetition")}
    record.update(total_bits_per_second=9.41e9, ok=True, errors=[])
    steps: list[dict[str, Any]] = [
        {"paired_test_plan": plan},
        {"paired_test_results": []},
        {"paired_test_results": [record]},
    ]
    for facts in steps:
        plugin.v2_runner_on_ok(_Result({"ansible_facts": facts}))
    plugin.v2_runner_on_ok(_Result({"changed": False}))  # any other task: nothing
    (call,) = plugin._display.display.call_args_list
    assert call.args[0].startswith("run 1/2 t 1 stream forward: 9.410 Gbit/s \u2014 ")
    plugin.v2_playbook_on_stats(MagicMock())
    assert plugin._display.display.call_args_list[1].args[0].startswith("paired_test: 1 run(s) in ")


def test_quiet_progress_prints_nothing() -> None:
    plugin = progress.CallbackModule()
    plugin._shown = False
    plugin._display = MagicMock()
    plugin.v2_runner_on_ok(_Result({"ansible_facts": {"paired_test_results": []}}))
    plugin.v2_playbook_on_stats(MagicMock())
    plugin._display.display.assert_not_called()


def _set_facts(path: str) -> list[dict[str, Any]]:
    def walk(tasks: Any) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for task in tasks or []:
            for key in ("block", "rescue", "always"):
                found += walk(task.get(key))
            if "ansible.builtin.set_fact" in task:
                found.append(task["ansible.builtin.set_fact"])
        return found

    return walk(yaml.safe_load((TASKS / path).read_text()))


def test_the_role_keeps_the_contract_progress_depends_on() -> None:
    """paired_test_plan set in the preflight; paired_test_results set to [] before the runs, then after each run."""
    assert any("paired_test_plan" in facts for facts in _set_facts("preflight.yml"))
    assert any(facts.get("paired_test_results") == [] for facts in _set_facts("preflight.yml"))
    assert any(
        "paired_test_results" in facts and "+ [" in str(facts["paired_test_results"]) for facts in _set_facts("run.yml")
    )


def test_concise_drops_the_spec_dump_of_a_failed_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, Any]] = []
    monkeypatch.setattr(
        DefaultCallback,
        "v2_runner_on_failed",
        lambda self, result, ignore_errors=False: seen.append(dict(result.result)),
    )
    plugin = concise.CallbackModule()
    plugin._display = MagicMock(verbosity=0)
    data = {"failed": True, "msg": "Validation of arguments failed:\nx.y", "argument_errors": ["x.y"]}
    plugin.v2_runner_on_failed(_Result({**data, "argument_spec_data": {"x": {"type": "str"}}}))
    plugin._display.verbosity = 3
    plugin.v2_runner_on_failed(_Result({**data, "argument_spec_data": {"x": {"type": "str"}}}))
    assert seen[0] == {"failed": True, "msg": "Validation of arguments failed:\nx.y"}
    assert "argument_spec_data" in seen[1]  # -vvv: everything
