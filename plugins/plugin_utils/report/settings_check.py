# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one check of the report's settings (``report_*``: name, knee tolerance, line rate, history, baseline,
the gate's tolerances), every problem at once, one line each naming the option and the fix.

Used by the preflight of ``esxilab.iperf.paired_test`` (``paired/preflight.py``, before the benchmark) and by the
action ``esxilab.iperf.report_check`` (the first check of the role ``esxilab.iperf.report``). It reads the
controller's files only (the baseline, a SQLite history) and connects to a PostgreSQL history to read its schema
version; it writes nothing.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Mapping
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import history
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.gate import (
    LIMIT_BOUNDS,
    limit_problems,
    percentile_problems,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history import HistoryError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history_url import HistoryTarget, parse_target

__all__ = [
    "GATE_OPTIONS",
    "PERCENTILE_OPTION",
    "check_knee_tolerance",
    "check_report",
    "check_report_name",
    "number",
    "report_problems",
    "shown",
]

#: The regression gate's tolerances (role esxilab.iperf.report): a number >= 0 or unset; ``gate.LIMIT_BOUNDS`` is
#: their one list (the role's spec, defaults and tasks are checked against it by tests/unit).
GATE_OPTIONS = tuple(f"report_{name}" for name in LIMIT_BOUNDS)
#: The percentile of the gate's latency checks (unset: 99).
PERCENTILE_OPTION = "report_latency_percentile"
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
_NUMBER = re.compile(r"^[0-9]*[.]?[0-9]+([eE][-+]?[0-9]+)?$")


def number(value: Any) -> float | None:
    """A finite number given as a number or a numeric string (``-e`` gives strings); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(float(value)) else None
    if isinstance(value, str) and _NUMBER.match(value.strip().lstrip("-")):
        found = float(value.strip())
        return found if math.isfinite(found) else None
    return None


def shown(value: Any) -> str:
    """A setting's value as the problem line shows it."""
    return json.dumps(value) if isinstance(value, str | int | float | bool) or value is None else repr(value)


def check_knee_tolerance(value: Any, option: str) -> list[str]:
    """The knee's tolerance: a fraction in [0, 1)."""
    knee = number(value)
    if knee is None or not 0 <= knee < 1:
        return [
            f"{option}={shown(value)} is not a fraction in [0, 1): it is the fraction of the best mean within which "
            "a stream count counts as the plateau (the knee); for 5 % write 0.05"
        ]
    return []


def check_report_name(value: Any, option: str, directory_option: str) -> list[str]:
    """The report's name: it starts the name of the report's directory, so a plain file name."""
    if not isinstance(value, str) or not _PLAIN_NAME.match(value):
        return [
            f"{option}={shown(value)} is not a plain file name: use letters, digits and . _ + - only, starting with a "
            "letter or digit (no directory, no '..', no spaces), for example vswitch-2026-12-01; the reports go to "
            f"{directory_option}"
        ]
    return []


def _writable_ancestor(path: str) -> str | None:
    """The nearest existing directory above ``path`` when it cannot be written (None: it can)."""
    directory = os.path.dirname(os.path.abspath(path))
    while directory and not os.path.exists(directory):
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return None if os.path.isdir(directory) and os.access(directory, os.W_OK | os.X_OK) else directory


def _check_history(
    url: Any, password: str | None, resolve: Callable[[str], str], connect: Callable[..., history.Connection | None]
) -> tuple[list[str], str]:
    """Problems with ``report_history`` and its kind (``none``, ``sqlite``, ``postgresql``)."""
    text = "none" if url is None else url
    if not isinstance(text, str):
        return [f"report_history={shown(url)} must be sqlite:///PATH, postgresql://USER@HOST/DB or none"], "none"
    try:
        target = parse_target(text, option="report_history")
    except HistoryError as exc:
        return [str(exc)], "none"
    if target.kind == "sqlite" and target.path is not None:
        path = resolve(target.path)
        if os.path.islink(path):
            return [f"report_history: {path} is a symbolic link; give the database file itself"], target.kind
        if not os.path.exists(path):
            blocked = _writable_ancestor(path)
            if blocked is not None:
                return [
                    f"report_history: the SQLite history {path} does not exist and cannot be created ({blocked} is "
                    "not a directory this user can write); choose another sqlite:/// path"
                ], target.kind
            return [], target.kind
        if not os.path.isfile(path):
            return [f"report_history: {path} exists and is not a file; choose another sqlite:/// path"], target.kind
        target = HistoryTarget(kind="sqlite", path=path, shown=f"sqlite:///{path}")
    if target.kind == "none":
        return [], target.kind
    try:
        conn = connect(target, password)
    except (HistoryError, ValueError) as exc:
        return [str(exc)], target.kind
    if conn is None:
        return [], target.kind
    try:
        version = history.stored_version(conn)
    except HistoryError as exc:  # the backends turn every driver error into one, naming the store and the fix
        return [str(exc)], target.kind
    finally:
        conn.close()
    if version > history.LATEST:
        return [
            f"report_history={target.shown}: the history's schema is version {version}, newer than this collection's "
            f"{history.LATEST}: upgrade esxilab.iperf, or point report_history at another store"
        ], target.kind
    return [], target.kind


def _check_baseline(value: Any, history_kind: str, resolve: Callable[[str], str]) -> list[str]:
    if value is None or value == "":
        return []
    if value == "previous":
        if history_kind == "none":
            return [
                "report_baseline=previous compares with the last comparable run in the history, but report_history is "
                "none: set report_history (sqlite:///PATH or postgresql://...) or give a results.json"
            ]
        return []
    if not isinstance(value, str) or not value.endswith(".json"):
        return [
            f"report_baseline={shown(value)} must be previous (the last comparable run in report_history) or the "
            "path of a results.json of an earlier report"
        ]
    path = resolve(value)
    try:
        with open(path, encoding="utf-8") as handle:
            document = history.strict_json(handle.read())
    except FileNotFoundError:
        return [
            f"report_baseline={value}: {path} does not exist; give the results.json of an earlier report "
            "(paired_test_report_files.json), or previous with report_history"
        ]
    except (OSError, ValueError) as exc:
        return [f"report_baseline={value}: cannot read {path} as JSON: {exc}"]
    try:
        entries = history.entries_of(document, source=path)
    except HistoryError as exc:
        return [f"report_baseline={value}: {exc}"]
    if not entries:
        return [f"report_baseline={value}: {path} holds no run to compare with; give the results.json of a report"]
    return []


def check_report(
    settings: Mapping[str, Any],
    *,
    resolve: Callable[[str], str] = os.path.abspath,
    connect: Callable[..., history.Connection | None] | None = None,
) -> list[str]:
    """The settings of the report, the history and the gate (``report_*`` names), before the benchmark."""
    problems = []
    rate = settings.get("report_line_rate_bps")
    if rate is not None and ((number(rate) or 0) <= 0):
        problems.append(
            f"report_line_rate_bps={shown(rate)} must be a positive number of bit/s, for example 10000000000 for "
            "10 Gbit/s, or unset for no percentage of line rate"
        )
    problems.extend(limit_problems({name.removeprefix("report_"): settings.get(name) for name in GATE_OPTIONS},
                                   prefix="report_"))  # fmt: skip
    problems.extend(percentile_problems(settings.get(PERCENTILE_OPTION), option=PERCENTILE_OPTION))
    if connect is None:
        from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.gate_run import open_history

        connect = open_history
    found, kind = _check_history(
        settings.get("report_history"), settings.get("report_history_password") or None, resolve, connect
    )
    problems.extend(found)
    problems.extend(_check_baseline(settings.get("report_baseline"), kind, resolve))
    return problems


def report_problems(
    runs: int,
    name: Any,
    knee_tolerance: Any,
    settings: Mapping[str, Any],
    *,
    resolve: Callable[[str], str] = os.path.abspath,
    connect: Callable[..., history.Connection | None] | None = None,
) -> list[str]:
    """Every problem of the role ``esxilab.iperf.report``'s settings (action ``report_check``)."""
    problems = []
    if runs < 1:
        problems.append(
            "report_runs is empty: there is no run to report, so no report is written. Pass paired_test_results of "
            "the role esxilab.iperf.paired_test or normalized results (iperf_parse, iperf_facts, iperf_run), and "
            "check that the runs were registered."
        )
    problems += check_report_name(name, "report_name", "report_base_dir")
    problems += check_knee_tolerance(knee_tolerance, "report_knee_tolerance")
    return problems + check_report(settings, resolve=resolve, connect=connect)
