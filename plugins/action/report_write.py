# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.report_write``: write an iperf report directory on the controller.

Documentation: the module file of the same name. The content comes from
``plugin_utils/report/`` (tables, Markdown, CSV, plot specifications, and ``plots.py``:
PNG with matplotlib, optional); this file validates the
arguments and writes the files. No module runs and the host is not contacted.
The directory is the report: ``plugin_utils/report/files.py``'s ``write_report`` refuses a non-empty
directory that holds no report of ours unless ``force``, and removes the files (PNG plots) the
previous report there wrote and this one does not.
"""

from __future__ import annotations

import datetime
import os
from typing import Any

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.esxilab.iperf.plugins.modules.report_write import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.controller import begin, controller_path

_NAME = "esxilab.iperf.report_write"
_display = Display()

# The options are those of the module's DOCUMENTATION (one declaration).
ARGUMENT_SPEC = argument_spec(DOCUMENTATION)
FILE_MODE = 0o644
DIR_MODE = 0o755
# The report's key in the directory's manifest: the directory holds one report.
_REPORT_KEY = "report"


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """Write results.json, results.csv, summary.csv, summary.md, the PNG plots and report.html of a report."""

    TRANSFERS_FILES = False

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        # The builder is imported when the task runs: the play's process loads this class for the task before it
        # knows the task is skipped (Ansible's linear strategy), and a play that writes no report should not compile
        # the builder's twenty modules from source (Ansible's collection loader keeps no bytecode).
        from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import (
            FILES,
            ReportError,
            build_report,
            json_text,
            plot_specs,
            report_doc,
            results_csv,
            summary_csv,
            table_lines,
            to_markdown,
        )
        from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.build import (
            check_generated_at,
            compare_by_warning,
        )
        from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.files import ReportDirError, write_report
        from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.html import HTML_FILE, html_files, raw_files
        from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.plot_data import timeseries_note
        from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.plots import matplotlib_problem, render_all

        result, args = begin(self, tmp, task_vars, ARGUMENT_SPEC)
        if args is None:  # wrong or unknown options
            return result
        check_mode = bool(self._play_context.check_mode)
        try:
            generated_at = check_generated_at(args["generated_at"])
        except ReportError as exc:
            result.update(failed=True, msg=f"{_NAME}: {exc}")
            return result
        dest = controller_path(self, args["dest"])
        if args["dest_time"]:
            stamp = generated_at or datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            dest = f"{dest}-{stamp.replace('-', '').replace(':', '')}"
        if os.path.exists(dest) and not os.path.isdir(dest):
            result.update(failed=True, msg=f"{_NAME}: dest {dest} exists and is not a directory; choose another path")
            return result
        try:
            report = build_report(
                args["runs"],
                name=args["name"],
                title=args["title"],
                environment=args["environment"],
                line_rate_bps=args["line_rate_bps"],
                compare_by=args["compare_by"],
                knee_tolerance=args["knee_tolerance"],
                generated_at=generated_at,
            )
        except ReportError as exc:
            result.update(failed=True, msg=f"{_NAME}: {exc}")
            return result

        min_seconds = args["timeseries_min_seconds"]
        if min_seconds < 0:
            result.update(
                failed=True,
                msg=f"{_NAME}: timeseries_min_seconds must be 0 or more seconds (10: time series of runs of 10 s or "
                f"more), got {min_seconds!r}",
            )
            return result
        specs = plot_specs(report, timeseries_min_seconds=min_seconds) if args["plots"] else []
        rule = timeseries_note(report, min_seconds) if args["plots"] else None
        problems: list[str] = []
        images: dict[str, bytes] = {}
        if specs and check_mode:
            problem = matplotlib_problem()
            if problem is not None:
                problems.append(problem)
                specs = []
        elif specs:
            images, problems = render_all(specs)
            specs = [spec for spec in specs if spec.file in images]
        note: str | None = None  # why plots are missing, for summary.md, the table and plots_skipped
        if not args["plots"]:
            note = "not drawn (plots=false)"
        elif problems:
            note = f"{'some were skipped' if specs else 'skipped'} - {'; '.join(problems)}"

        document = report_doc(report)  # results.json, written and returned: one shape, nothing read back
        contents: dict[str, bytes | None] = {
            FILES["json"]: json_text(document).encode(),
            FILES["csv"]: results_csv(report).encode(),
            FILES["summary_csv"]: summary_csv(report).encode(),
            FILES["markdown"]: to_markdown(report, specs, note, [rule] if rule else []).encode(),
        }
        # In check mode no plot is drawn: it would be written, its content is unknown.
        contents.update({spec.file: None if check_mode else images[spec.file] for spec in specs})
        if args["html"]:  # report.html and the raw outputs it links, from the same document as results.json
            shown = [] if check_mode else [(spec.caption or spec.title, images[spec.file]) for spec in specs]
            beside = [*FILES.values(), *(spec.file for spec in specs)]
            contents.update(html_files(document, shown, files=beside, plots_note=note))
        paths = {key: os.path.join(dest, name) for key, name in FILES.items()}
        plot_paths = [os.path.join(dest, spec.file) for spec in specs]
        html_path = os.path.join(dest, HTML_FILE) if args["html"] else None
        raw_paths = [os.path.join(dest, name) for name, _text in raw_files(document).values()] if args["html"] else []
        try:
            outcome = write_report(
                dest,
                _REPORT_KEY,
                contents,
                mode=FILE_MODE,
                dir_mode=DIR_MODE,
                check_mode=check_mode,
                force=args["force"],
                prefix=".report-",
                enforce_mode=False,
            )
        except ReportDirError as exc:
            result.update(
                failed=True,
                msg=f"{_NAME}: {exc} (role esxilab.iperf.report: report_force=true, or another report_dir)",
            )
            return result
        except OSError as exc:
            result.update(
                failed=True,
                msg=f"{_NAME}: could not write the report in {dest}: {exc}; check that the directory is writable "
                "or choose another one (role variable report_dir)",
            )
            return result

        warnings = [f"{_NAME}: the report was written without (some) plots: {p}" for p in problems]
        unused = compare_by_warning(report)
        if unused:
            warnings.append(f"{_NAME}: {unused}")
        warnings += [f"{_NAME}: {line}" for line in report.loss_warnings]  # where the packets went
        if warnings:
            result["warnings"] = warnings
        table = table_lines(report, directory=dest, plots_note=note, check_mode=check_mode)
        if args["print_table"]:
            _display.display("\n".join(table))
        elif check_mode:
            _display.display(f"check mode: no report was written (it would be {dest}/{FILES['markdown']})")
        verb = "would write" if check_mode else "wrote"
        written = outcome.written
        result.update(
            changed=bool(written or outcome.removed or outcome.manifest_changed),
            dir=dest,
            files={**paths, "html": html_path, "raw": raw_paths, "plots": plot_paths},
            written=written,
            removed=outcome.removed,
            plots_skipped=note,
            table=table,
            report=document,  # exactly what results.json holds
            ansible_facts={
                "report_files": {**paths, "html": html_path, "raw": raw_paths, "plots": plot_paths, "dir": dest}
            },
            msg=(f"{verb} {len(written)} file(s) in {dest}" if written else f"the report in {dest} is up to date")
            + (
                f"; {'would remove' if check_mode else 'removed'} {len(outcome.removed)} stale file(s) of the "
                "previous report"
                if outcome.removed
                else ""
            ),
        )
        return result
