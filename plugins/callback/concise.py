# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Callback ``esxilab.iperf.concise``: Ansible's default output, a paired_test run in one line, a role validation
failure in a few lines."""

from __future__ import annotations

DOCUMENTATION = r"""
name: concise
type: stdout
short_description: Ansible's default output, with one line per paired_test run and short validation failures
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - The output of C(ansible.builtin.default) in every respect but two.
  - 'A run of the role C(esxilab.iperf.paired_test) is one line (with O(runs=line), the default, at Ansible''s default
    verbosity): the task of the runs (M(esxilab.iperf.paired_test_host), one loop item per run) shows no banner and
    no C(ok:) or C(skipping:) line per run; when the run is recorded, one line says what it measured and
    the time left, as the callback C(esxilab.iperf.progress) words it - for example
    C(run 2/8 sweep 2 streams forward: 954.3 Mbit/s - 48 s left) - and at the end of the play how many runs ran.
    A failure, an unreachable host and a warning are shown as C(ansible.builtin.default) shows them, with the
    task''s banner; the run after which the series stops shows its line, then its message (below C(-vvv) without
    the run''s record, which is in the facts and the report). With C(-v) or O(runs=tasks) every task is shown.'
  - When a role's argument validation (C(ansible.builtin.validate_argument_spec), the first task of every role with
    C(meta/argument_specs.yml)) fails, the failure shows the errors (C(msg)) without C(argument_spec_data), the whole
    argument spec of the role (for C(esxilab.iperf.paired_test) about 14 KB per host after the one useful line), and
    without C(argument_errors) (the same errors again). At verbosity 3 (C(-vvv)) and above the spec is shown as
    C(ansible.builtin.default) shows it.
  - Set it with C(stdout_callback = esxilab.iperf.concise) in the C([defaults]) section of C(ansible.cfg) (or
    C(ANSIBLE_STDOUT_CALLBACK)). AWX uses its own stdout callback, which keeps each failure as a collapsed event.
options:
  runs:
    description:
      - V(line) - one line per paired_test run (see above). V(tasks) - every task of the runs, as
        C(ansible.builtin.default) shows them.
    type: str
    choices: [line, tasks]
    default: line
    env:
      - name: ESXILAB_CONCISE_RUNS
    ini:
      - section: esxilab_iperf_concise
        key: runs
extends_documentation_fragment:
  - ansible.builtin.default_callback
  - ansible.builtin.result_format_callback
requirements:
  - set as stdout in configuration
"""

# Ansible's layout puts DOCUMENTATION above the imports.
# ruff: noqa: E402
import time
from typing import Any

from ansible.plugins.callback.default import CallbackModule as DefaultCallback

from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.progress import (
    Progress,
    playbook_name,
    result_data,
    result_view,
    stdout_prints_runs,
)

# The keys of a failed validate_argument_spec result left out: the whole spec, and the errors
# again (its msg says them).
_DROPPED = ("argument_spec_data", "argument_errors")
# The task of the runs.
_RUN_ACTIONS = frozenset({"esxilab.iperf.paired_test_host"})
# The keys of a failed run's result left out: its record (in paired_test_results and the report), what the callbacks
# read of it, and the run (the item's label says which).
_RUN_DROPPED = ("record", "ansible_facts", "__paired_test_run")


def _task_of(result: Any) -> Any:
    return getattr(result, "task", None) or getattr(result, "_task", None)


class CallbackModule(DefaultCallback):  # type: ignore[misc]  # ansible-core ships no type hints
    """The default callback; a paired_test run in one line, the spec dump of a failed argument validation left out."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "esxilab.iperf.concise"

    def __init__(self) -> None:
        super().__init__()
        self._progress = Progress()
        self._lines = False

    def set_options(self, task_keys: Any = None, var_options: Any = None, direct: Any = None) -> None:
        super().set_options(task_keys=task_keys, var_options=var_options, direct=direct)
        self._lines = str(self.get_option("runs")) == "line" and self._display.verbosity < 1
        stdout_prints_runs(self._lines)

    def _quiet(self, task: Any) -> bool:
        """A task of a run, shown as the run's line."""
        if not self._lines or task is None:
            return False
        return bool({getattr(task, "action", None), getattr(task, "resolved_action", None)} & _RUN_ACTIONS)

    def v2_playbook_on_task_start(self, task: Any, is_conditional: Any) -> None:
        if self._quiet(task):
            self._last_task_name = task.get_name().strip()  # the banner, should a failure need it
            return
        super().v2_playbook_on_task_start(task, is_conditional)

    def v2_runner_on_ok(self, result: Any) -> None:
        data = result_view(result)
        line = self._progress.observe(data.get("ansible_facts"), time.monotonic()) if data is not None else None
        if not self._quiet(_task_of(result)):
            super().v2_runner_on_ok(result)
        elif data is not None and (data.get("warnings") or data.get("deprecations")):
            super().v2_runner_on_ok(result)  # with its banner: what it warns about is seen
        if line and self._lines:
            self._display.display(line)

    def v2_runner_on_skipped(self, result: Any) -> None:
        if not self._quiet(_task_of(result)):
            super().v2_runner_on_skipped(result)

    def v2_runner_item_on_ok(self, result: Any) -> None:
        """A run of the series (an item of the runs' loop): its line."""
        data = result_view(result)
        line = self._progress.observe(data.get("ansible_facts"), time.monotonic()) if data is not None else None
        if not self._quiet(_task_of(result)):
            super().v2_runner_item_on_ok(result)
        elif data is not None and (data.get("warnings") or data.get("deprecations")):
            super().v2_runner_item_on_ok(result)  # what it warns about is seen
        if line and self._lines:
            self._display.display(line)

    def v2_runner_item_on_skipped(self, result: Any) -> None:
        if not self._quiet(_task_of(result)):
            super().v2_runner_item_on_skipped(result)

    def v2_runner_item_on_failed(self, result: Any) -> None:
        """The run after which the series stops: its line, then the failure - its message, not its whole record."""
        data = result_view(result)
        line = self._progress.observe(data.get("ansible_facts"), time.monotonic()) if data is not None else None
        if line and self._lines:
            self._display.display(line)
        shown = result_data(result)
        if self._display.verbosity < 3 and shown is not None and self._quiet(_task_of(result)):
            for key in _RUN_DROPPED:
                shown.pop(key, None)
        super().v2_runner_item_on_failed(result)

    def v2_runner_on_failed(self, result: Any, ignore_errors: bool = False) -> None:
        data = result_data(result)
        if self._display.verbosity < 3 and data is not None:
            for key in _DROPPED:
                data.pop(key, None)
        super().v2_runner_on_failed(result, ignore_errors)

    def v2_playbook_on_start(self, playbook: Any) -> None:
        lines = self._progress.next_playbook(playbook_name(playbook), time.monotonic())
        if self._lines:
            for line in lines:  # the playbook before's
                self._display.display(line)
        super().v2_playbook_on_start(playbook)

    def v2_playbook_on_stats(self, stats: Any) -> None:
        if self._lines:
            for line in self._progress.summary(time.monotonic()):
                self._display.display(line)
        super().v2_playbook_on_stats(stats)
