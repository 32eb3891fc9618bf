# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.rate_search``: the zero-loss rate search in one task.

Documentation: the module file of the same name. The settings, the bisection, the verdicts and the
outputs are ``plugin_utils/ratesearch/``; this file checks the options, lends the search each trial as the
collection's own ``iperf_run`` action over this task's connection (as ``paired_test_host`` runs its steps),
and writes the files with the report package (``report/files.py``, ``report/plots.py``).
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping
from typing import Any

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.esxilab.iperf.plugins.modules.rate_search import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.controller import begin, controller_path
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.links import HostLink
from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch import output
from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch.run import search_all
from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch.settings import (
    SettingsError,
    check_settings,
    plan,
    unknown_options,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch.trial import Trial
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.files import ReportDirError, write_report
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.plots import render_all
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.results_json import json_text

_NAME = "esxilab.iperf.rate_search"
ARGUMENT_SPEC = argument_spec(DOCUMENTATION)
FILE_MODE = 0o644
DIR_MODE = 0o755
TRIAL_SLACK = 30  # seconds a trial may take beyond its length before iperf_run kills the client
_display = Display()


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """Search the highest rate per frame size with the collection's ``iperf_run`` as the trial."""

    TRANSFERS_FILES = False

    def _step(self, name: str, args: Mapping[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        """Run the action ``esxilab.iperf.<name>`` with ``args`` over this task's connection; its result."""
        host = str(task_vars.get("inventory_hostname"))
        return HostLink(host, self._connection, self._play_context, self._templar, task_vars).step(self, name, args)

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        unknown = unknown_options(list(self._task.args), list(ARGUMENT_SPEC))
        if unknown:  # before Ansible's check, which names no close match
            return {"failed": True, "msg": f"{_NAME}: {unknown}"}
        result, args = begin(self, tmp, task_vars, ARGUMENT_SPEC)
        if args is None:  # wrong options
            return result
        try:
            settings = check_settings(args)
        except SettingsError as exc:
            result.update(failed=True, msg=f"{_NAME}: {exc}")
            return result
        result.update(changed=False, plan=plan(settings))
        if args["mode"] == "plan" or self._play_context.check_mode:
            result["msg"] = (
                f"{'check mode: ' if args['mode'] == 'search' else ''}the search would make at most "
                f"{result['plan']['max_trials']} trial(s) of {settings.trial_seconds} s"
            )
            return result
        variables = task_vars or {}

        def run_trial(frame_size: int, payload_size: int, offered_bps: int) -> Mapping[str, Any]:
            step = {
                "mode": "client",
                "server": args["server"],
                "port": args["port"],
                "protocol": "udp",
                "bandwidth": str(offered_bps),
                "length": str(payload_size),
                "duration": settings.trial_seconds,
                "interval": 0,
                "timeout": settings.trial_seconds + TRIAL_SLACK,
                "state_dir": args["state_dir"],
                "labels": {"rate_search": args["name"], "frame_size": frame_size},
                **{k: args[k] for k in ("bind", "binary") if args[k]},
            }
            return self._step("iperf_run", step, variables)

        def seen(trial: Trial) -> None:
            figures = f" ({trial.lost_packets}/{trial.packets} lost)" if trial.packets is not None else ""
            _display.display(
                f"rate_search {trial.frame_size} B: {trial.rate_mbps:.3f} Mbit/s -> {trial.verdict}{figures}"
            )

        results = search_all(settings, run_trial, seen)
        document = output.document(
            settings,
            results,
            name=args["name"],
            server=args["server"],
            client=args["client"] or variables.get("inventory_hostname"),
            generated_at=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
        result.update(results=document, ansible_facts={"rate_search_results": document})
        found = ", ".join(
            f"{row['frame_size']} B " + ("n/a" if row["rate_mbps"] is None else f"{row['rate_mbps']:.3f} Mbit/s")
            for row in document["results"]
        )
        trials = sum(row["trials_made"] for row in document["results"])
        result["msg"] = f"{len(results)} frame size(s) searched in {trials} trial(s): {found}"
        if args["dest"]:
            problem = self._write(result, args, document)
            if problem:
                result.update(failed=True, msg=f"{_NAME}: {problem}")
                return result
        if not document["complete"]:
            errors = "; ".join(f"{row['frame_size']} B: {row['error']}" for row in document["results"] if row["error"])
            result.update(failed=True, msg=f"{_NAME}: the search did not finish - {errors}")
        return result

    def _write(self, result: dict[str, Any], args: Mapping[str, Any], document: Mapping[str, Any]) -> str | None:
        """Write the files into ``dest``; the problem, or ``None``."""
        dest = controller_path(self, args["dest"])
        specs = output.plot_specs(document)
        images, problems = render_all(specs)
        specs = [spec for spec in specs if spec.file in images]
        note = "; ".join(problems) if problems else (None if specs else "no frame size has a rate to plot")
        contents: dict[str, bytes | None] = {
            output.FILES["json"]: json_text(document).encode(),
            output.FILES["csv"]: output.sizes_csv(document).encode(),
            output.FILES["trials_csv"]: output.trials_csv(document).encode(),
            output.FILES["markdown"]: output.markdown(document, specs, note).encode(),
            **{spec.file: images[spec.file] for spec in specs},
        }
        try:
            outcome = write_report(
                dest,
                output.REPORT_KEY,
                contents,
                mode=FILE_MODE,
                dir_mode=DIR_MODE,
                check_mode=False,
                force=bool(args["force"]),
                prefix=".rate-search-",
                enforce_mode=False,
            )
        except ReportDirError as exc:
            return f"{exc} (option force, role variable rate_search_report_force)"
        except OSError as exc:
            return f"could not write the files in {dest}: {exc}; choose a writable directory (option dest)"
        if problems:
            result["warnings"] = [f"{_NAME}: the files were written without (some) plots: {p}" for p in problems]
        result.update(
            changed=bool(outcome.written or outcome.removed or outcome.manifest_changed),
            files={
                **{key: os.path.join(dest, name) for key, name in output.FILES.items()},
                "plots": [os.path.join(dest, spec.file) for spec in specs],
                "dir": dest,
            },
            plots_skipped=note,
        )
        return None
