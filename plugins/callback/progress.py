# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Callback ``esxilab.iperf.progress``: one line per finished paired_test run with the time left.

The lines and the time left come from ``plugin_utils/paired/progress.py``; this file hands it the
facts the role sets (``__paired_test_planned``, ``__paired_test_recorded``) and prints what it returns.
"""

from __future__ import annotations

DOCUMENTATION = r"""
name: progress
type: aggregate
short_description: One line per finished paired_test run, with its figure and the time left
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - 'Prints one line each time a run of the role C(esxilab.iperf.paired_test) finishes, for example
    C(run 3/8 sweep 4 streams forward: 957.0 Mbit/s — 12 s left), and a plain summary at the end of the
    playbook (runs, time taken, the best figure).'
  - The figure is the run's own total (its record's C(total_bits_per_second)); from the second repetition of the same
    test, streams value and direction on, the mean of the repetitions so far and its 95 % confidence interval (as a
    percentage of the mean) follow in parentheses. A failed run shows C(failed) and its errors.
  - 'The time left comes from the plan: the planned seconds of the remaining runs (C(duration) + C(omit) + the
    clients'' start delay when the run has several pairs, with what an automatic start delay has grown by) plus, per
    remaining run, the overhead measured so far (the time taken by the finished runs beyond their seconds in iperf
    and in their start delay, per run).'
  - An aggregate callback - it prints beside the stdout callback (C(ansible.builtin.default), AWX's own), so it works
    in a terminal and in AWX job output alike. Enable it with C(callbacks_enabled = esxilab.iperf.progress) in the
    C([defaults]) section of C(ansible.cfg) (or C(ANSIBLE_CALLBACKS_ENABLED)).
  - 'It depends on these facts of the role, and on nothing else (task names may change): C(__paired_test_planned),
    what it reads of the plan, with its C(runs) (each with C(run), C(duration), C(omit), C(start_delay), C(barrier),
    C(start_delay_auto), C(client_hosts), C(external_wait), C(latency_idle)), and C(__paired_test_recorded) set to an
    empty list, both by the preflight right before the first run; after each run, what it reads of the
    record of the run (a list, the new one last) in the fact C(__paired_test_recorded) the recording task returns
    (C(run), C(test), C(streams), C(direction), C(swapped), C(repetition), C(start_delay),
    C(total_bits_per_second), C(ok), C(errors)).'
requirements:
  - enabled in callbacks_enabled
options:
  mode:
    description:
      - V(auto) - print when the output is a terminal or the play runs under AWX / ansible-runner (stdout callback
        C(awx_display)); quiet otherwise, so CI logs and redirected output stay as they were.
      - V(always) - always print. V(never) - never print.
      - With the stdout callback C(esxilab.iperf.concise) (its O(esxilab.iperf.concise#callback:runs=line), the
        default) this callback prints nothing - C(concise) prints the same lines in place of the runs' tasks.
    type: str
    choices: [auto, always, never]
    default: auto
    env:
      - name: ESXILAB_PROGRESS
    ini:
      - section: esxilab_iperf_progress
        key: mode
"""

# Ansible's layout puts DOCUMENTATION above the imports.
# ruff: noqa: E402
import os
import sys
import time
from typing import Any

from ansible import constants as C
from ansible.plugins.callback import CallbackBase

from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.progress import (
    Progress,
    playbook_name,
    result_view,
    stdout_prints_runs,
)

_AWX_STDOUT = "awx_display"


def _shown(mode: str) -> bool:
    if mode == "always":
        return True
    if mode == "never":
        return False
    stdout_callback = os.environ.get("ANSIBLE_STDOUT_CALLBACK") or str(C.DEFAULT_STDOUT_CALLBACK)
    return sys.stdout.isatty() or stdout_callback == _AWX_STDOUT


class CallbackModule(CallbackBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """Watch for the paired_test facts; print the progress lines and the summary."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "esxilab.iperf.progress"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self) -> None:
        super().__init__()
        self._progress = Progress()
        self._shown = False

    def set_options(self, task_keys: Any = None, var_options: Any = None, direct: Any = None) -> None:
        super().set_options(task_keys=task_keys, var_options=var_options, direct=direct)
        self._shown = _shown(str(self.get_option("mode")))

    def v2_runner_on_ok(self, result: Any) -> None:
        if not self._shown or stdout_prints_runs():
            return
        data = result_view(result)
        if data is None:
            return
        line = self._progress.observe(data.get("ansible_facts"), time.monotonic())
        if line:
            self._display.display(line)

    def v2_runner_item_on_ok(self, result: Any) -> None:
        self.v2_runner_on_ok(result)  # a run of the series is an item of the runs' loop

    def v2_runner_item_on_failed(self, result: Any) -> None:
        self.v2_runner_on_ok(result)  # the run after which the series stops: recorded all the same

    def v2_playbook_on_start(self, playbook: Any) -> None:
        lines = self._progress.next_playbook(playbook_name(playbook), time.monotonic())
        if self._shown and not stdout_prints_runs():
            for line in lines:  # the playbook before's
                self._display.display(line)

    def v2_playbook_on_stats(self, stats: Any) -> None:
        if not self._shown or stdout_prints_runs():
            return
        for line in self._progress.summary(time.monotonic()):
            self._display.display(line)
