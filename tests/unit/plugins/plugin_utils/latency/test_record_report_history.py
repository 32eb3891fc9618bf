# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Latency figures from recorded ping outputs, through the run record, the report (results.json, results.csv,
summary.md) and the history (migration 5, SQLite here; PostgreSQL in tests/integration/test_history.py)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.validate import RecordError, run_record_from
from ansible_collections.esxilab.iperf.plugins.plugin_utils.latency import shell
from ansible_collections.esxilab.iperf.plugins.plugin_utils.latency.figures import latency_figures, window_figures
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.record import build_record
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import (
    build_report,
    history,
    history_sqlite,
    report_doc,
    results_csv,
    to_markdown,
)
from tests.collection_path import ESXI_RECORDINGS
from tests.unit.plugins.plugin_utils.history_docs import record_as_release_1
from tests.unit.plugins.plugin_utils.paired.test_plan_and_record import (
    BARRIER,
    RESULT_A,
    RESULT_B,
    _client,
    _plan_run,
    _reports,
)

NOW = "2026-12-06T00:00:00Z"
OK = (ESXI_RECORDINGS / "linux-iputils20221126__ping-i__ok.txt").read_text()
LOSS = (ESXI_RECORDINGS / "linux-iputils20221126__ping-i__partial-loss.txt").read_text()
NONE = (ESXI_RECORDINGS / "linux-iputils20221126__ping-i__unreachable.txt").read_text()
PLANNED = shell.plan({"interval": 0.2, "idle": 1.0}, esxi=False, target="198.18.1.1", source=None, transfer=2.0)


def _latency(idle: str, loaded: str) -> dict[str, Any]:
    return dict(
        latency_figures(PLANNED, tool="ping", target="198.18.1.1", idle=("rc=0", idle), loaded=("rc=0", loaded))
    )


def test_window_figures_from_recorded_outputs() -> None:
    idle = window_figures(OK, command=["ping"], seconds=1, rc="0")
    assert (idle["samples"], idle["min_ms"], idle["p50_ms"], idle["p90_ms"], idle["p99_ms"], idle["max_ms"]) == (
        5, 0.037, 0.040, None, None, 0.049,
    )  # fmt: skip
    assert (idle["transmitted"], idle["lost"], idle["lost_percent"], idle["cut"], idle["error"]) == (
        5,
        0,
        0.0,
        False,
        None,
    )
    loss = window_figures(LOSS, command=["ping"], seconds=2, rc="0")
    assert (loss["transmitted"], loss["received"], loss["lost"], loss["lost_percent"]) == (9, 5, 4, 44.444)
    none = window_figures(NONE, command=["ping"], seconds=1, rc="1")
    assert (none["samples"], none["p50_ms"], none["max_ms"], none["lost"], none["rc"]) == (0, None, None, 3, 1)
    assert none["error"] == "no reply to any probe (PING 198.19.64.99 (198.19.64.99) 56(84) bytes of data.)"
    missing = window_figures("sh: 1: ping: not found\n", command=["ping"], seconds=1, rc="127")
    assert missing["error"] == "the ping printed no reply: sh: 1: ping: not found" and missing["cut"]
    assert none["raw"] == NONE  # kept as printed


def test_the_increase_is_loaded_minus_idle_p50_or_null() -> None:
    latency = _latency(OK, LOSS)
    assert latency["p50_increase_ms"] == pytest.approx(0.031 - 0.040)
    assert _latency(OK, NONE)["p50_increase_ms"] is None
    no_idle = latency_figures(
        {**PLANNED, "idle_argv": None}, tool="ping", target="198.18.1.1", idle=("", ""), loaded=("rc=0", OK)
    )
    assert no_idle["idle"] is None and no_idle["p50_increase_ms"] is None


def _record(latency: dict[str, Any] | None) -> dict[str, Any]:
    run = _plan_run()
    first = _client(RESULT_A, 100.0) | ({"latency": latency} if latency is not None else {})
    record: dict[str, Any] = dict(
        build_record(run, _reports(run, {1: first, 2: _client(RESULT_B, 100.0)}), barrier=BARRIER)
    )
    return record


def test_the_record_keeps_the_clients_latency_and_the_report_shows_it(tmp_path: Path) -> None:
    latency = _latency(OK, LOSS)
    record = _record(latency)
    assert record["pairs"][0]["latency"] == latency and "latency" not in record["pairs"][1]
    checked = run_record_from(json.loads(json.dumps(record)))
    assert checked["pairs"][0]["latency"] == latency

    report = build_report([record], name="lat")
    doc = report_doc(report)
    assert doc["results"][0]["record"]["latency"] == latency  # results.json: the figures and the raw output
    assert doc["results"][0]["record"]["latency"]["loaded"]["raw"] == LOSS
    rows = list(csv.DictReader(results_csv(report).splitlines()))
    assert (rows[0]["latency_idle_p50_ms"], rows[0]["latency_loaded_p50_ms"], rows[0]["latency_loaded_lost"]) == (
        "0.04", "0.031", "4",
    )  # fmt: skip
    assert rows[0]["latency_loaded_p99_ms"] == "" and rows[1]["latency_idle_p50_ms"] == ""
    markdown = to_markdown(report)
    assert "## Latency under load" in markdown
    line = next(x for x in markdown.splitlines() if x.startswith("| 1 | vswitch-forwarding | forward | 1 |"))
    assert "| vm2 → 198.18.1.1 | 0.040 | n/a | n/a | 0.049 | 0.031 | n/a | n/a | 0.037 | -0.009 | 5 / 4 |" in line
    assert "## Latency under load" not in to_markdown(build_report([_record(None)], name="plain"))


def test_a_bad_latency_in_a_record_names_its_path() -> None:
    record = json.loads(json.dumps(_record(_latency(OK, OK))))
    record["pairs"][0]["latency"]["loaded"]["p50_ms"] = "fast"
    with pytest.raises(RecordError, match=r"record\.pairs\[0\]\.latency\.loaded\.p50_ms: must be"):
        run_record_from(record)


def _stored(conn: history.Connection) -> list[tuple[Any, ...]]:
    columns = ", ".join(history.LATENCY_COLUMNS)
    return conn.execute(f"SELECT {columns} FROM history_entries ORDER BY id")


def test_the_history_keeps_the_worst_figures_of_an_entry(tmp_path: Path) -> None:
    conn = history_sqlite.connect(str(tmp_path / "h.sqlite"))
    assert history.migrate(conn, NOW) == [1, 2, 3, 4, 5]
    first, second = _record(_latency(OK, LOSS)), _record(_latency(LOSS, OK))
    second["run"], second["repetition"] = 2, 2
    doc = report_doc(build_report([first, second], name="lat"))
    history.record(conn, doc, now=NOW, report_dir="/r/1")
    # the largest of each figure over both runs' pairs: idle p50 0.040 (run 1), loaded p50 0.040 (run 2)
    assert _stored(conn) == [(0.04, None, None, 0.049, 0.04, None, None, 0.049)]
    (entry,) = history.entries_of(doc)
    assert entry.as_doc()["latency"]["loaded_max_ms"] == 0.049


def test_migration_5_fills_the_latency_of_reports_recorded_before(tmp_path: Path) -> None:
    conn = history_sqlite.connect(str(tmp_path / "h.sqlite"))
    history.migrate(conn, NOW, upto=4)
    doc = report_doc(build_report([_record(_latency(OK, LOSS))], name="lat"))
    plain = report_doc(build_report([_record(None)], name="plain", generated_at="2026-12-02T00:00:00Z"))
    record_as_release_1(conn, json.loads(json.dumps(doc)), "/r/old")
    record_as_release_1(conn, json.loads(json.dumps(plain)), "/r/plain")
    assert history.migrate(conn, NOW) == [5]
    assert _stored(conn) == [(0.04, None, None, 0.049, 0.031, None, None, 0.037), (None,) * 8]
    names = {row[1] for row in conn.execute("PRAGMA table_info(history_entries)")}
    assert set(history.LATENCY_COLUMNS) <= names
