# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.paired_test_report`` (deprecated): a thin shim over the report builder.

Documentation: the module file of the same name. The file contents come from the collection's
one report builder, ``plugin_utils/report/`` (the ``results.json``, ``results.csv`` and
``summary.csv`` of ``esxilab.iperf.report_write``, under this module's file names); this file only
validates the arguments and writes the files. Ownership (never overwrite a file that is not ours
unless ``force``) and the manifest are ``plugin_utils/report/files.py``'s ``write_report``.
"""

from __future__ import annotations

import os
import re
from typing import Any

from ansible.plugins.action import ActionBase

from ansible_collections.esxilab.iperf.plugins.modules.paired_test_report import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import (
    ReportError,
    build_report,
    results_csv,
    summary_csv,
    to_json,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.files import ReportDirError, write_report

# The options are those of the module's DOCUMENTATION (one declaration).
ARGUMENT_SPEC = argument_spec(DOCUMENTATION)
_NAME = "esxilab.iperf.paired_test_report"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


def file_mode(value: Any) -> int:
    """``0644``, ``'0644'`` or ``'644'`` -> 0o644 (an int from YAML ``0644`` is already octal)."""
    if isinstance(value, int) and not isinstance(value, bool):
        mode = value
    elif isinstance(value, str) and value.strip().isdigit() and set(value.strip()) <= set("01234567"):
        mode = int(value.strip(), 8)
    else:
        raise ReportError(f"mode must be an octal file mode such as '0644', got {value!r}")
    if not 0 <= mode <= 0o777:
        raise ReportError(f"mode must be a file permission mode between 0000 and 0777, got {oct(mode)}")
    return mode


def report_paths(directory: str, name: str) -> dict[str, str]:
    """``<name>.json``, ``<name>.csv`` and ``<name>-summary.csv`` in ``directory``."""
    if not _NAME_RE.match(name):
        raise ReportError(
            f"report name {name!r} must be a file name of letters, digits and ._+- (no directory, no spaces)"
        )
    base = os.path.join(directory, name)
    return {"json": f"{base}.json", "csv": f"{base}.csv", "summary_csv": f"{base}-summary.csv"}


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """Write the report builder's JSON and CSV files under the names of the paired_test_report files."""

    TRANSFERS_FILES = False

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        self._supports_check_mode = True
        self._supports_async = False
        result: dict[str, Any] = super().run(tmp, task_vars)
        del tmp  # tmp no longer has any effect

        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        check_mode = bool(self._play_context.check_mode)
        dest = self._loader.path_dwim(os.path.expanduser(args["dest"]))
        if os.path.exists(dest) and not os.path.isdir(dest):
            result.update(failed=True, msg=f"dest {dest} exists and is not a directory; choose another directory")
            return result
        if not args["results"]:
            result.update(
                failed=True,
                msg=f"{_NAME}: results is empty: there is no run to report, so no report is written; pass the run "
                "records of paired_test_results (at least one run)",
            )
            return result
        try:
            mode = file_mode(args["mode"])
            files = report_paths(dest, args["name"])
            report = build_report(args["results"], name=args["name"], environment=args["meta"])
            contents = {"json": to_json(report), "csv": results_csv(report), "summary_csv": summary_csv(report)}
        except ReportError as exc:
            result.update(failed=True, msg=f"{_NAME}: {exc}")
            return result
        try:
            outcome = write_report(
                dest,
                args["name"],
                {os.path.basename(path): contents[key].encode("utf-8") for key, path in files.items()},
                mode=mode,
                dir_mode=0o755,
                check_mode=check_mode,
                force=args["force"],
                whole_dir=False,
                prefix=".paired-test-",
            )
        except ReportDirError as exc:
            result.update(
                failed=True,
                msg=f"{_NAME}: {exc} (force=true, or another name / dest; better: esxilab.iperf.report_write)",
                files=files,
            )
            return result
        except OSError as exc:
            result.update(
                failed=True,
                msg=f"could not write the reports in {dest}: {exc}; check that the directory is writable",
                files=files,
            )
            return result
        ignored = [option for option in ("summary", "sweeps", "tests") if args[option]]
        if ignored:
            result.setdefault("warnings", []).append(
                f"{_NAME}: {', '.join(ignored)} ignored: the report builder summarizes the results itself"
            )
        written = outcome.written
        result.update(
            changed=bool(written or outcome.removed or outcome.manifest_changed),
            files=files,
            written=written,
            removed=outcome.removed,
            msg=f"wrote {len(written)} of {len(files)} report file(s) in {dest}"
            if written
            else f"the reports in {dest} are up to date",
        )
        return result
