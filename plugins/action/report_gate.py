# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.report_gate``: baseline vs now, the history and the regression gate.

Documentation: the module file of the same name. The work is ``plugin_utils/report/gate_run.py``'s
``run_gate()``; this file validates the arguments, resolves paths against the playbook's directory
and turns the outcome into the task result. No module runs and the host is not contacted.
"""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.esxilab.iperf.plugins.modules.report_gate import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.controller import begin, controller_path
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.gate import (
    Limits,
    limit_problems,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.gate_run import GateOutcome, run_gate
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history import HistoryError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history_url import parse_target

_NAME = "esxilab.iperf.report_gate"
_display = Display()
ARGUMENT_SPEC = argument_spec(DOCUMENTATION)
ARGUMENT_SPEC["history_password"]["no_log"] = True  # a secret: Ansible masks it in any output


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """Compare a written report with its baseline, record it, and fail on a regression."""

    TRANSFERS_FILES = False

    def _path(self, path: str) -> str:
        return controller_path(self, path)

    @staticmethod
    def _recorded(outcome: GateOutcome, shown: str) -> str:
        if outcome.recorded:
            return f"recorded as run {outcome.run_id} in the history {shown}"
        if outcome.run_id is not None:
            return f"the history {shown} already holds this report (run {outcome.run_id})"
        return f"nothing recorded in the history {shown} (check mode, or no history)"

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result, args = begin(self, tmp, task_vars, ARGUMENT_SPEC)
        if args is None:  # wrong or unknown options
            return result
        check_mode = bool(self._play_context.check_mode)
        baseline = args["baseline"]
        if baseline and baseline != "previous":
            baseline = self._path(baseline)
        limits = Limits(
            max_drop_percent=args["max_drop_percent"],
            min_line_rate_percent=args["min_line_rate_percent"],
            max_retransmits=args["max_retransmits"],
            max_loss_percent=args["max_loss_percent"],
            max_latency_increase_percent=args["max_latency_increase_percent"],
            max_loaded_rtt_ms=args["max_loaded_rtt_ms"],
            latency_percentile=args["latency_percentile"],  # one of its choices, checked with the options above
        )
        problems = [
            f"{problem} (role esxilab.iperf.report: report_{name})"
            for name, value in limits.tolerances().items()
            for problem in limit_problems({name: value})
        ]
        if problems:
            result.update(failed=True, msg=f"{_NAME}: " + "; ".join(problems))
            return result
        try:
            target = parse_target(args["history"], option="history (role: report_history)")
            if target.kind == "sqlite" and target.path is not None:
                path = self._path(target.path)
                target = dataclasses.replace(target, path=path, shown=f"sqlite:///{path}")
            outcome = run_gate(
                self._path(args["report_dir"]),
                target=target,
                password=args["history_password"],
                baseline=baseline,
                limits=limits,
                now=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                check_mode=check_mode,
            )
        except HistoryError as exc:
            result.update(failed=True, msg=f"{_NAME}: {exc}")
            return result
        result.update(
            changed=bool(outcome.written) or outcome.recorded,
            gate=outcome.doc["gate"],
            baseline=outcome.doc["baseline"],
            lines=outcome.lines,
            history_run_id=outcome.run_id,
            msg=outcome.message or (outcome.lines[-1] if outcome.lines else self._recorded(outcome, target.shown)),
        )
        if outcome.lines and (args["print_verdict"] or outcome.message):
            _display.display("\n".join(outcome.lines))
        if outcome.message and not check_mode and args["fail_on_regression"]:
            result["failed"] = True
        return result
