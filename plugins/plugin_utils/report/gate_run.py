# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One gate run over a written report: read ``results.json``, find the baseline, compare, write, record.

``run_gate()`` is what the action ``report_gate`` does, without Ansible: the report's entries
(``history.entries_of``), the baseline (``previous`` from the history, or an earlier
``results.json``), the deltas (``baseline.compare_entries``), the checks (``gate.evaluate``), then
-- unless in check mode -- the ``baseline``/``gate`` sections into ``results.json``, the section
into ``summary.md`` and ``report.html`` (each file written atomically) and the report into the history (one
transaction; a report already recorded, the same directory and ``generated_at`` -- its
``history.report_key`` --, is not recorded twice, even by two gates at once, and is never its own
baseline). ``results.json`` is read strictly: NaN or Infinity in it is a ``HistoryError``.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import history
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.baseline import compare_entries
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.files import write_if_changed
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.gate import (
    MARKER,
    Limits,
    evaluate,
    failure_message,
    gate_doc,
    lines,
    markdown,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history import Entry, HistoryError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history_url import HistoryTarget
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.html import HTML_FILE, with_gate

__all__ = ["GateOutcome", "open_history", "run_gate"]

FILE_MODE = 0o644


@dataclass(frozen=True)
class GateOutcome:
    doc: dict[str, Any]  # {"baseline": ..., "gate": ...}
    lines: list[str]
    message: str | None  # the failure message, None when the gate passed
    run_id: int | None
    recorded: bool  # recorded in the history by this call
    written: list[str]


def open_history(target: HistoryTarget, password: str | None) -> history.Connection | None:
    """A connection to the history, or None for ``none``."""
    if target.kind == "sqlite" and target.path is not None:
        from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import history_sqlite

        return history_sqlite.connect(target.path)
    if target.kind == "postgresql" and target.dsn is not None:
        from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import history_pg

        return history_pg.connect(target.dsn, target.shown, password, target.secrets)
    if target.kind != "none":  # parse_target gives every other kind its path or DSN
        raise HistoryError(f"report_history: {target.shown} names no database")
    return None


def _read_json(path: str, what: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            document = history.strict_json(handle.read())
    except (OSError, ValueError) as exc:
        raise HistoryError(
            f"{what}: cannot read {path} as JSON ({exc}): write the report again with esxilab.iperf.report_write"
        ) from exc
    if not isinstance(document, dict):
        raise HistoryError(f"{what}: {path} is not a JSON object: give the results.json of a report")
    return document


def run_gate(
    report_dir: str,
    *,
    target: HistoryTarget,
    password: str | None,
    baseline: str | None,
    limits: Limits,
    now: str,
    check_mode: bool,
) -> GateOutcome:
    """Compare, write, record (see the module docstring); ``HistoryError`` names the option and the fix."""
    results_path = os.path.join(report_dir, "results.json")
    gating = baseline is not None or limits.any_set
    if check_mode and not os.path.exists(results_path):
        note = f"check mode: the report in {report_dir} is not written, so it is neither compared nor recorded"
        return GateOutcome({"baseline": None, "gate": None}, [note] if gating else [], None, None, False, [])
    document = _read_json(results_path, "report_dir")
    entries = history.entries_of(document, source=results_path)
    if baseline == "previous" and target.kind == "none":
        raise HistoryError(
            "report_baseline=previous needs a history: set report_history (sqlite:///PATH or postgresql://...)"
        )
    conn = None
    if target.kind == "sqlite" and check_mode and not os.path.exists(str(target.path)):
        conn = None  # check mode creates no database
    else:
        conn = open_history(target, password)
    try:
        ready = False
        if conn is not None:
            if check_mode:
                with conn.transaction():
                    ready = history.stored_version(conn) == history.LATEST
            else:
                history.migrate(conn, now)
                ready = True
        recorded = history.recorded_id(conn, report_dir, document.get("generated_at")) if conn and ready else None
        base: dict[str, tuple[Entry, str]] = {}
        source: str | None = None
        if baseline == "previous":
            source = f"previous comparable run in {target.shown}"
            if conn is not None and ready:
                for key, found in history.previous(
                    conn,
                    entries,
                    before=recorded,
                    excluding=history.report_key(report_dir, document.get("generated_at")),
                ).items():
                    where = f"history run {found.run_id} ({found.name}, {found.generated_at}, {found.report_dir})"
                    base[key] = (found.entry, where)
        elif baseline:
            source = baseline
            for entry in history.entries_of(_read_json(baseline, "report_baseline"), source=baseline):
                if entry.samples:  # an entry whose runs were all incomplete is no baseline (as in the history)
                    base[entry.key] = (entry, baseline)
        deltas = compare_entries(entries, base)
        checks = evaluate(deltas, limits)
        doc = gate_doc(deltas, checks, limits, source, target.shown)
        message = failure_message(checks)
        written: list[str] = []
        run_id, recorded_now = recorded, False
        if not check_mode:
            updated = {**document, **doc}
            text = json.dumps(updated, indent=2, allow_nan=False) + "\n"
            if write_if_changed(results_path, text.encode(), mode=FILE_MODE, check_mode=False, prefix=".gate-"):
                written.append(results_path)
            md_path = os.path.join(report_dir, "summary.md")
            if os.path.isfile(md_path) and not os.path.islink(md_path):
                with open(md_path, encoding="utf-8") as handle:
                    old = handle.read()
                head = old.split(MARKER, 1)[0].rstrip("\n")
                new = f"{head}\n\n{markdown(deltas, checks, source)}"
                if write_if_changed(md_path, new.encode(), mode=FILE_MODE, check_mode=False, prefix=".gate-"):
                    written.append(md_path)
            html_path = os.path.join(report_dir, HTML_FILE)  # report.html: its gate section from the same document
            if os.path.isfile(html_path) and not os.path.islink(html_path):
                with open(html_path, encoding="utf-8") as handle:
                    page = with_gate(handle.read(), updated)
                if write_if_changed(html_path, page.encode(), mode=FILE_MODE, check_mode=False, prefix=".gate-"):
                    written.append(html_path)
            if conn is not None and recorded is None:  # a concurrent gate of this report may record it first
                run_id, recorded_now = history.record(conn, updated, now=now, report_dir=report_dir)
        shown = lines(deltas, checks, source) if gating else []  # history only: nothing to print
        return GateOutcome(doc, shown, message, run_id, recorded_now, written)
    finally:
        if conn is not None:
            conn.close()
