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
from ansible.executor.task_result import CallbackTaskResult
from ansible.inventory.host import Host
from ansible.playbook.task import Task
from ansible.plugins.callback.default import CallbackModule as DefaultCallback

from ansible_collections.esxilab.iperf.plugins.callback import concise, progress
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.progress import planned, result_view
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
        # the preflight: what the progress reads of the plan, and no run yet (the clock starts)
        {"__paired_test_planned": planned(plan), "__paired_test_recorded": [], "__paired_test_halt": False},
        {"__paired_test_recorded": [record], "__paired_test_halt": False},  # run 1's task
    ]
    for facts in steps:
        plugin.v2_runner_on_ok(_Result({"ansible_facts": facts}))
    plugin.v2_runner_on_ok(_Result({"changed": False}))  # any other task: nothing
    # the role's publish at the end (set_fact): the whole plan and records - no new plan, no line again
    plugin.v2_runner_on_ok(_Result({"ansible_facts": {"paired_test_plan": plan, "paired_test_results": [record]}}))
    (call,) = plugin._display.display.call_args_list
    assert call.args[0].startswith("run 1/2 t 1 stream forward: 9.410 Gbit/s \u2014 ")
    plugin.v2_playbook_on_stats(MagicMock())
    assert plugin._display.display.call_args_list[1].args[0].startswith("paired_test: 1 run(s) in ")


def test_quiet_progress_prints_nothing() -> None:
    plugin = progress.CallbackModule()
    plugin._shown = False
    plugin._display = MagicMock()
    plugin.v2_runner_on_ok(_Result({"ansible_facts": {"__paired_test_recorded": []}}))
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


def _recording_tasks(path: str) -> list[dict[str, Any]]:
    def walk(tasks: Any) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for task in tasks or []:
            for key in ("block", "rescue", "always"):
                found += walk(task.get(key))
            action = task.get("esxilab.iperf.paired_test_host")
            if isinstance(action, dict) and "run" in action:
                found.append(action)
        return found

    return walk(yaml.safe_load((TASKS / path).read_text()))


def test_the_role_keeps_the_contract_progress_depends_on() -> None:
    """The preflight, right before the runs, returns __paired_test_planned and __paired_test_recorded = [] as facts
    (tests/unit/plugins/action/test_paired_test_preflight.py); after each run the run's task returns its record
    (__paired_test_recorded, tests/unit/plugins/action/test_paired_test_host.py); no set_fact of the role sets them."""
    preflight = yaml.safe_load((TASKS / "preflight.yml").read_text())
    assert [task.get("register") for task in preflight] == ["__paired_test_preflight"]  # the one task before the runs
    assert len(_recording_tasks("series.yml")) == 1
    for path in ("main.yml", "preflight.yml", "series.yml", "report.yml"):
        assert not any({"__paired_test_planned", "__paired_test_recorded"} & set(facts) for facts in _set_facts(path))


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


class _Task:
    def __init__(self, action: str, name: str = "a task") -> None:
        self.action = action
        self.resolved_action = action
        self._uuid = name
        self.name = name

    def get_name(self) -> str:
        return self.name


class _TaskResult(_Result):
    def __init__(self, data: dict[str, Any], action: str) -> None:
        super().__init__(data)
        self.task = _Task(action)


def test_concise_shows_a_run_as_one_line_and_its_failures_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[tuple[str, str]] = []
    for name in ("v2_runner_on_ok", "v2_runner_on_skipped", "v2_runner_on_failed", "v2_playbook_on_task_start"):
        monkeypatch.setattr(
            DefaultCallback, name, lambda self, item, *args, _name=name: shown.append((_name, str(item)))
        )
    monkeypatch.setattr(DefaultCallback, "v2_playbook_on_stats", lambda self, stats: None)
    plugin = concise.CallbackModule()
    plugin._display = MagicMock(verbosity=0)
    plugin._lines = True
    plan = build_plan(
        [{"name": "t", "pairs": [{"server": "a", "client": "b", "address": "198.18.0.1"}], "streams": [1, 2]}]
    )
    record = {k: plan["runs"][0][k] for k in ("run", "test", "streams", "direction", "swapped", "repetition")}
    record.update(total_bits_per_second=9.41e9, ok=True, errors=[])
    host = "esxilab.iperf.paired_test_host"
    preflight = {"ansible_facts": {"__paired_test_planned": planned(plan), "__paired_test_recorded": []}}
    plugin.v2_runner_on_ok(_TaskResult(preflight, "esxilab.iperf.paired_test_preflight"))
    plugin.v2_playbook_on_task_start(_Task(host), False)
    plugin.v2_runner_on_skipped(_TaskResult({"skipped": True}, host))
    plugin.v2_runner_on_ok(_TaskResult({"msg": "run 1: start done on a"}, host))
    plugin.v2_runner_on_ok(_TaskResult({"ansible_facts": {"__paired_test_recorded": [record]}}, host))
    assert [name for name, _item in shown] == ["v2_runner_on_ok"]  # the preflight's ok line only
    (line,) = [call.args[0] for call in plugin._display.display.call_args_list]
    assert line.startswith("run 1/2 t 1 stream forward: 9.410 Gbit/s \u2014 ")
    plugin.v2_runner_on_failed(_TaskResult({"failed": True, "msg": "lost"}, host))
    plugin.v2_runner_on_ok(_TaskResult({"msg": "ok", "warnings": ["careful"]}, host))
    assert [name for name, _item in shown][1:] == ["v2_runner_on_failed", "v2_runner_on_ok"]  # in full, a banner
    plugin.v2_playbook_on_stats(MagicMock())
    assert plugin._display.display.call_args_list[-2].args[0].startswith("paired_test: 1 run(s) in ")
    # -v or runs=tasks: every task as the default callback shows it
    plugin._lines = False
    plugin.v2_runner_on_skipped(_TaskResult({"skipped": True}, host))
    assert shown[-1][0] == "v2_runner_on_skipped"


def test_progress_is_quiet_when_concise_prints_the_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    plugin = progress.CallbackModule()
    plugin._shown = True
    plugin._display = MagicMock()
    monkeypatch.setattr(progress, "stdout_prints_runs", lambda: True)
    plugin.v2_runner_on_ok(_Result({"ansible_facts": {"__paired_test_recorded": []}}))
    plugin.v2_playbook_on_stats(MagicMock())
    plugin._display.display.assert_not_called()


def test_the_callbacks_read_a_run_without_converting_its_record() -> None:
    """ansible-core's task result for callbacks converts the whole result on first use of ``result`` (its records: 0.2 s
    for 16 pairs); the callbacks read the facts and warnings they need from the result as received."""
    record = {"run": 1, "pairs": [{"raw": "x" * 1000, "intervals": list(range(100))} for _pair in range(4)]}
    facts = {"__paired_test_recorded": [{"run": 1}], "__paired_test_halt": False}
    data = {"ansible_facts": facts, "record": record, "warnings": ["careful"], "changed": False}
    result = CallbackTaskResult(Host("a"), Task(), data, {})
    assert result_view(result) == {"ansible_facts": facts, "warnings": ["careful"]}
    assert "result" not in vars(result)  # the cached conversion was not made
    assert result_view(_Result({"ansible_facts": facts})) == {"ansible_facts": facts}  # another result: as it is
