# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""History (real SQLite files), migrations, the comparable-run query, Welch's interval and the gate."""

from __future__ import annotations

import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.secrets import mask_text
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.stats import t_cdf, t_quantile
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import history, history_sqlite
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.baseline import compare_entries, welch_interval
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.gate import (
    MARKER,
    Limits,
    evaluate,
    failure_message,
    lines,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.gate_run import GateOutcome, run_gate
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history import HistoryError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history_url import parse_target
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.settings_check import check_report
from tests.collection_path import REPO, ensure_collection_path
from tests.unit.plugins.plugin_utils.history_docs import doc_of, record_as_release_1, run_concurrently

NOW = "2026-12-02T00:00:00Z"
G = 1e9


# --------------------------------------------------------------------------------------------
# Student t and Welch
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("df", "expected"),
    [(1, 12.7062), (2, 4.3027), (3, 3.1824), (4, 2.7764), (5, 2.5706), (10, 2.2281), (30, 2.0423), (120, 1.9799)],
)
def test_t_quantile_matches_the_table(df: int, expected: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=5e-5)


def test_t_quantile_of_a_fractional_df_lies_between_its_neighbours_and_inverts_the_cdf() -> None:
    # Welch's df is fractional: t(0.975, 2.5) between t(.., 3) and t(.., 2), and the CDF gives 0.975 back
    t = t_quantile(0.975, 2.5)
    assert 3.1824 < t < 4.3027
    assert t_cdf(t, 2.5) == pytest.approx(0.975, abs=1e-12)
    # independently: Simpson's rule over the t density from 0 to t gives 0.475
    nu, steps = 2.5, 20000
    norm = math.gamma((nu + 1) / 2) / (math.sqrt(nu * math.pi) * math.gamma(nu / 2))
    h = t / steps
    ys = [norm * (1 + (i * h) ** 2 / nu) ** (-(nu + 1) / 2) for i in range(steps + 1)]
    area = h / 3 * (ys[0] + ys[-1] + 4 * math.fsum(ys[1:-1:2]) + 2 * math.fsum(ys[2:-1:2]))
    assert area == pytest.approx(0.475, abs=1e-9)
    assert t == pytest.approx(3.57465, abs=1e-5)


def test_welch_interval_by_hand() -> None:
    # a: mean 12, var 4; b: mean 9, var 1 -> se = sqrt(4/3 + 1/3), df = (5/3)^2 / ((4/3)^2/2 + (1/3)^2/2)
    interval = welch_interval([10.0, 12.0, 14.0], [8.0, 9.0, 10.0])
    assert interval is not None
    se = math.sqrt(5 / 3)
    df = (5 / 3) ** 2 / ((4 / 3) ** 2 / 2 + (1 / 3) ** 2 / 2)
    assert (interval.difference, interval.standard_error, interval.df) == pytest.approx((-3.0, se, df))
    assert df == pytest.approx(2.941176, abs=1e-6)
    t = t_quantile(0.975, df)
    assert (interval.low, interval.high) == pytest.approx((-3.0 - t * se, -3.0 + t * se))
    assert not interval.significant  # -3 +- 3.2 * 1.29 crosses 0


def test_welch_needs_two_figures_a_side_and_handles_no_spread() -> None:
    assert welch_interval([1.0], [1.0, 2.0]) is None
    flat = welch_interval([5.0, 5.0], [4.0, 4.0, 4.0])
    assert flat is not None and (flat.low, flat.high, flat.df) == (-1.0, -1.0, None) and flat.significant


# --------------------------------------------------------------------------------------------
# Entries and comparable keys
# --------------------------------------------------------------------------------------------


def test_entries_group_runs_by_comparable_key_without_place_or_line_rate_labels() -> None:
    (entry,) = history.entries_of(doc_of([0.9 * G, 0.95 * G, 0.92 * G], link_speed_mbps=1000, nic="vmxnet3"))
    assert (entry.test, entry.direction, entry.swapped, entry.tool, entry.protocol) == (
        "one-pair", "forward", False, "iperf3", "tcp",
    )  # fmt: skip
    assert entry.labels == {"nic": "vmxnet3"}  # repetition, test and link_speed_mbps are no identity
    assert entry.samples == [0.9 * G, 0.95 * G, 0.92 * G] and entry.count == 3
    slower = history.entries_of(doc_of([0.7 * G], link_speed_mbps=800, nic="vmxnet3"))[0]
    other_nic = history.entries_of(doc_of([0.7 * G], nic="e1000"))[0]
    assert slower.key == entry.key  # another line rate: still comparable
    assert other_nic.key != entry.key


def test_a_run_without_a_figure_counts_as_a_run_never_as_zero() -> None:
    (entry,) = history.entries_of(doc_of([0.9 * G, None, 0.92 * G]))
    assert (entry.runs, entry.samples) == (3, [0.9 * G, 0.92 * G])


def test_entries_refuse_what_is_not_a_report() -> None:
    with pytest.raises(HistoryError, match=r"not a results\.json"):
        history.entries_of({"format": "other"}, source="x.json")


@pytest.mark.parametrize(
    ("url", "kind"),
    [("none", "none"), ("sqlite:///rel/h.sqlite", "sqlite"), ("sqlite:////abs/h.sqlite", "sqlite"),
     ("postgresql://u@h/db", "postgresql"), ("postgres:///db?host=/tmp", "postgresql")],
)  # fmt: skip
def test_history_urls(url: str, kind: str) -> None:
    assert parse_target(url).kind == kind
    assert parse_target("sqlite:////abs/h.sqlite").path == "/abs/h.sqlite"


def test_a_bad_url_is_refused_with_the_fix_and_without_its_password() -> None:
    with pytest.raises(HistoryError, match=r"report_history=.*u:\*\*\*@h.*sqlite:///PATH") as caught:
        parse_target("mysql://u:secret@h/db")
    assert "secret" not in str(caught.value)
    assert "secret" not in parse_target("postgresql://u:secret@h:5433/db").shown


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("postgresql://u@db.example:notaport/h", "the port 'notaport' is not a number from 1 to 65535"),
        ("postgresql://u@db.example:70000/h", "the port '70000' is not a number"),
        ("postgresql://u@[::1/h", "the IPv6 address '[::1' has no closing ']'"),
        ("postgresql://u@[::1]x/h", "has text after ']'"),
        ("postgresql://u@[::1]:x/h", "the port 'x' is not a number"),
        ("postgresql://u@h/db?port=abc", "port='abc' in the query"),
        ("postgresql://u:Zq9s3cret@x@db.example/h", "holds an '@' that is not percent-encoded"),
        ("postgresql://u:Zq9/s3cret@db.example/h", "a '/' in the password must be percent-encoded as %2F"),
    ],
)
def test_a_url_libpq_would_misread_is_refused_naming_the_option_and_the_fix(url: str, needle: str) -> None:
    with pytest.raises(HistoryError) as caught:
        parse_target(url, option="history (role: report_history)")
    message = str(caught.value)
    assert message.startswith("history (role: report_history)=postgresql://") and needle in message
    assert "s3cret" not in message


@pytest.mark.parametrize(
    ("url", "password"),
    [
        ("postgresql://u:Zq9s3cret#x@db.example/h", "Zq9s3cret#x"),
        ("postgresql://u:Zq9s3cret?x@db.example/h", "Zq9s3cret?x"),
        ("postgresql://u:Zq9s3cret%2Fx@db.example:5432/h", "Zq9s3cret/x"),
        ("postgresql://u@db.example/h?password=Zq9s3cret", "Zq9s3cret"),
        ("postgresql://u@db.example/h?sslmode=require&sslpassword=Zq9s3cret", "Zq9s3cret"),
    ],
)
def test_every_password_form_is_kept_from_shown_and_repr(url: str, password: str) -> None:
    target = parse_target(url)
    assert target.dsn == url and "s3cret" not in target.shown + repr(target)
    assert "s3cret" not in mask_text(f"libpq: refused password {password}", target.secrets)


def test_preflight_refuses_a_bad_history_url_before_anything_runs() -> None:
    problems = check_report({"report_history": "postgresql://u:Zq9s3cret@[::1/db"})
    assert len(problems) == 1 and problems[0].startswith("report_history=postgresql://u:***@[::1/db: the IPv6")
    assert "s3cret" not in problems[0]


# --------------------------------------------------------------------------------------------
# The SQLite store: migrations, record, previous, atomicity
# --------------------------------------------------------------------------------------------


def _store(path: Path) -> history_sqlite.SqliteConnection:
    conn = history_sqlite.connect(str(path))
    history.migrate(conn, NOW)
    return conn


def test_migrations_apply_in_order_once_and_keep_data(tmp_path: Path) -> None:
    conn = history_sqlite.connect(str(tmp_path / "h.sqlite"))
    assert history.migrate(conn, NOW, upto=1) == [1]
    old = record_as_release_1(conn, doc_of([G, G]), "/r/1")
    assert history.migrate(conn, NOW, upto=2) == [2]
    twice = record_as_release_1(conn, doc_of([G, G]), "/r/1")  # the same report recorded twice (issue 21)
    assert history.migrate(conn, NOW, upto=3) == [3]
    conn.execute("UPDATE history_entries SET comparable_key = 'a key of release 1'")  # no pairs, line_rate_source
    assert history.migrate(conn, NOW) == [4, 5]
    assert history.migrate(conn, NOW) == []
    rows = conn.execute("SELECT version, description FROM schema_version ORDER BY version")
    assert [r[0] for r in rows] == [1, 2, 3, 4, 5]
    # migration 4 made every entry's key again from its report: the old reports are baselines of new ones
    (entry,) = history.entries_of(doc_of([G]))
    assert {r[0] for r in conn.execute("SELECT comparable_key FROM history_entries")} == {entry.key}
    assert history.previous(conn, [entry])[entry.key].run_id == twice
    assert conn.execute("SELECT count(*) FROM history_entries")[0][0] == 2
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"history_entries_by_key", "history_runs_by_report_key"} <= names
    # the oldest copy holds the report's key, the later copy none; recording it again adds nothing
    keys = conn.execute("SELECT id, report_key FROM history_runs ORDER BY id")
    assert keys == [(old, "/r/1 @ 2026-12-01T00:00:00Z"), (twice, None)]
    assert history.record(conn, doc_of([G, G]), now=NOW, report_dir="/r/1") == (old, False)
    assert history.record(conn, doc_of([G, G]), now=NOW, report_dir="/r/2")[1] is True


def test_the_key_has_the_number_of_pairs_and_never_free_text() -> None:
    """A 1-pair run was compared with a 2-pair one (-50 %), and the line_rate_source sentence, which names the slowest
    host and its address, made a run with another slowest host find no baseline (issue 22)."""
    (one,) = history.entries_of(doc_of([G], line_rate_source="host: 1000 Mb/s, the slowest end (h1 198.18.0.1)"))
    (other,) = history.entries_of(doc_of([G], line_rate_source="host: 1000 Mb/s, the slowest end (h3 198.18.0.3)"))
    assert one.key == other.key and "line_rate_source" not in one.labels
    assert one.pairs == 1 and '"one-pair","forward",false,1,"iperf3","tcp",1,{}' in one.key
    two = history.Entry(**{**vars(one), "pairs": 2, "samples": []})
    assert two.key != one.key and two.title == "one-pair forward, 1 stream, 2 pairs"
    (labelled,) = history.entries_of(doc_of([G], nic="e1000"))
    assert labelled.key != one.key and labelled.title == "one-pair forward, 1 stream, nic=e1000"


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    conn = _store(tmp_path / "h.sqlite")
    conn.execute("INSERT INTO schema_version VALUES (99, 'future', ?)", (NOW,))
    with pytest.raises(HistoryError, match="version 99, newer"):
        history.migrate(conn, NOW)


def test_previous_is_the_newest_earlier_comparable_entry(tmp_path: Path) -> None:
    conn = _store(tmp_path / "h.sqlite")
    first, _new = history.record(conn, doc_of([0.90 * G, 0.91 * G]), now=NOW, report_dir="/r/1")
    history.record(conn, doc_of([0.5 * G, 0.5 * G], nic="e1000"), now=NOW, report_dir="/r/x")  # not comparable
    history.record(conn, doc_of([0.5 * G, 0.5 * G], test="other"), now=NOW, report_dir="/r/y")  # not comparable
    second, _new = history.record(conn, doc_of([0.80 * G, 0.81 * G]), now=NOW, report_dir="/r/2")
    now = history.entries_of(doc_of([0.7 * G, 0.71 * G]))
    found = history.previous(conn, now)[now[0].key]
    assert (found.run_id, found.entry.samples, found.report_dir) == (second, [0.80 * G, 0.81 * G], "/r/2")
    assert history.previous(conn, now, before=second)[now[0].key].run_id == first
    assert history.previous(conn, history.entries_of(doc_of([G], test="new"))) == {}


_WRITER = textwrap.dedent(
    """
    import json, sys, time
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import history, history_sqlite
    conn = history_sqlite.connect(sys.argv[1])
    document = json.loads(sys.stdin.read())
    def stop():
        print("between", flush=True)
        time.sleep(60)
    history.record(conn, document, now="t", report_dir="/r/killed", between=stop)
    """
)


def test_a_writer_killed_mid_write_loses_no_earlier_run_and_leaves_no_part_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite"
    conn = _store(path)
    kept = [history.record(conn, doc_of([G * (0.9 + i / 100)] * 2), now=NOW, report_dir=f"/r/{i}")[0] for i in range(3)]
    conn.close()
    env = dict(os.environ, PYTHONPATH=str(ensure_collection_path()))
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=REPO,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(doc_of([0.1 * G, 0.1 * G], test="killed")))
    proc.stdin.close()
    try:
        assert proc.stdout.readline().strip() == "between"  # the history_runs row is in, the entry not yet
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    reader = history_sqlite.connect(str(path))
    assert [r[0] for r in history.iter_runs(reader)] == kept
    assert reader.execute("SELECT count(*) FROM history_entries")[0][0] == 3
    assert reader.execute("PRAGMA integrity_check")[0][0] == "ok"
    # and the store takes the next report
    assert history.record(reader, doc_of([G, G]), now=NOW, report_dir="/r/next")[0] > kept[-1]


def test_a_symlinked_database_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real").write_bytes(b"")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(HistoryError, match="symbolic link"):
        history_sqlite.connect(str(tmp_path / "link"))


def _truncated(path: Path) -> None:
    conn = _store(path)
    for index in range(40):
        history.record(conn, doc_of([G, G], test=f"t{index}"), now=NOW, report_dir=f"/r/{index}")
    conn.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.write_bytes(os.urandom(8192)),
        lambda p: p.write_text("history of my lab\nrun 1: 940 Mbit/s\n" * 40),
        _truncated,
    ],
    ids=["random-bytes", "text-file", "truncated-db"],
)
def test_a_damaged_sqlite_file_is_one_clear_error_naming_the_file_and_the_fix(
    tmp_path: Path, damage: Callable[[Path], None]
) -> None:
    path = tmp_path / "h.sqlite"
    damage(path)
    report = _report(tmp_path, "r1", [G, G], "2026-12-01T00:00:00Z")
    with pytest.raises(HistoryError) as caught:
        run_gate(str(report), target=parse_target(f"sqlite:///{path}"), password=None, baseline="previous",
                 limits=Limits(max_drop_percent=5), now=NOW, check_mode=False)  # fmt: skip
    message = str(caught.value)
    assert message.startswith(f"report_history=sqlite:///{path}: {path} is not a SQLite database or is damaged")
    assert "move the file away" in message and "another sqlite:/// file" in message
    assert check_report({"report_history": f"sqlite:///{path}"}) == [message]  # the preflight: the same words


@pytest.mark.parametrize(
    ("samples", "needle"),
    [("[NaN, 1e9]", "NaN is not a number JSON has"), ("[Infinity]", "Infinity is not a number"),
     ("not json", "Expecting value"), ('{"a": 1}', "are not a JSON list"), ("[1e999]", "inf is not a finite"),
     ('[null]', "a sample is null"), ('["1e9"]', "'1e9' is not a finite number")],
)  # fmt: skip
def test_stored_values_record_never_writes_are_one_clear_error(tmp_path: Path, samples: str, needle: str) -> None:
    conn = _store(tmp_path / "h.sqlite")
    run_id, _new = history.record(conn, doc_of([G, G]), now=NOW, report_dir="/r/1")
    conn.execute("UPDATE history_entries SET samples = ? WHERE run_id = ?", (samples, run_id))
    with pytest.raises(HistoryError) as caught:
        history.previous(conn, history.entries_of(doc_of([G, G])))
    message = str(caught.value)
    assert message.startswith(f"report_history=sqlite:///{tmp_path}/h.sqlite: history run {run_id} (hist, /r/1)")
    assert needle in message and f"DELETE FROM history_runs WHERE id = {run_id}" in message


def test_nan_in_a_stored_figure_and_in_results_json_are_clear_errors(tmp_path: Path) -> None:
    conn = _store(tmp_path / "h.sqlite")
    run_id, _new = history.record(conn, doc_of([G, G]), now=NOW, report_dir="/r/1")
    conn.execute("UPDATE history_entries SET max_retransmits = 'many' WHERE run_id = ?", (run_id,))
    with pytest.raises(HistoryError, match="max_retransmits 'many' is not a whole number"):
        history.previous(conn, history.entries_of(doc_of([G, G])))
    report = _report(tmp_path, "r1", [G, G], "2026-12-01T00:00:00Z")
    text = (report / "results.json").read_text()
    (report / "results.json").write_text(text.replace('"bits_per_second": 1000000000.0', '"bits_per_second": NaN', 1))
    assert "NaN" in (report / "results.json").read_text()
    with pytest.raises(HistoryError, match=r"report_dir: cannot read .*results.json as JSON \(NaN is not a number"):
        run_gate(str(report), target=parse_target("none"), password=None, baseline=None, limits=Limits(), now=NOW,
                 check_mode=False)  # fmt: skip


def test_sqlite_concurrent_first_writers_and_concurrent_gates_of_one_report(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/h.sqlite"
    reports = [_report(tmp_path, f"r{i}", [G, G], f"2026-12-01T0{i}:00:00Z") for i in range(4)]
    outputs = run_concurrently(url, reports)  # 4 first writers on no database
    assert sorted(o.split()[1] for o in outputs) == ["True"] * 4
    same = run_concurrently(url, [reports[0]] * 4)  # the same report gated 4 times at once: recorded before
    assert {o.split()[0] for o in same} == {outputs[0].split()[0]}
    fresh = _report(tmp_path, "r9", [G, G], "2026-12-01T09:00:00Z")
    again = run_concurrently(url, [fresh] * 4)  # a new report gated 4 times at once: recorded once
    assert sorted(o.split()[1] for o in again) == ["False", "False", "False", "True"]
    conn = history_sqlite.connect(f"{tmp_path}/h.sqlite")
    assert conn.execute("SELECT count(*) FROM history_runs")[0][0] == 5
    assert conn.execute("SELECT count(*) FROM schema_version")[0][0] == history.LATEST


# --------------------------------------------------------------------------------------------
# Baseline deltas and the gate
# --------------------------------------------------------------------------------------------


def _deltas(before: list[float], after: list[float]) -> list:  # type: ignore[type-arg]
    base = {e.key: (e, "b") for e in history.entries_of(doc_of(before))}
    return compare_entries(history.entries_of(doc_of(after)), base)


def test_a_significant_drop_beyond_the_limit_fails_and_names_the_test_and_figures() -> None:
    deltas = _deltas([940e6, 941e6, 942e6], [752e6, 753e6, 751e6])
    assert deltas[0].verdict == "significant" and deltas[0].percent == pytest.approx(-20.0, abs=0.1)
    checks = evaluate(deltas, Limits(max_drop_percent=5))
    message = failure_message(checks)
    assert message is not None
    assert "one-pair forward" in message and "drop <= 5 %" in message
    # diff -189 Mbit/s, se = sqrt(2 * 1e12 / 3), df 4, t 2.7764: -20.09 % +- 0.24 %
    assert "941.0 Mbit/s -> 752.0 Mbit/s (3 vs 3 runs): -20.1 % (95 % CI -20.3 % .. -19.8 %)" in message


def test_a_small_or_insignificant_drop_passes() -> None:
    small = evaluate(_deltas([940e6, 941e6, 942e6], [930e6, 931e6, 932e6]), Limits(max_drop_percent=5))
    assert [c.status for c in small] == ["pass"]
    noisy = _deltas([900e6, 500e6, 950e6], [600e6, 700e6, 650e6])
    assert noisy[0].verdict == "not significant"
    assert [c.status for c in evaluate(noisy, Limits(max_drop_percent=5))] == ["pass"]


def test_one_run_a_side_gives_no_statistics_and_is_not_gated() -> None:
    deltas = _deltas([940e6], [500e6])
    assert deltas[0].verdict == "n=1, no statistics"
    (check,) = evaluate(deltas, Limits(max_drop_percent=5))
    assert check.status == "skip" and "n=1, no statistics" in check.detail


def test_line_rate_floor_and_retransmit_ceiling() -> None:
    deltas = _deltas([940e6, 941e6], [500e6, 510e6])
    checks = evaluate(deltas, Limits(min_line_rate_percent=80, max_retransmits=0))
    assert [(c.limit, c.status) for c in checks] == [("line rate >= 80 %", "fail"), ("retransmits <= 0", "pass")]


# --------------------------------------------------------------------------------------------
# One gate run over a report directory (what the action does)
# --------------------------------------------------------------------------------------------


def _report(tmp_path: Path, name: str, values: list[float], generated_at: str) -> Path:
    directory = tmp_path / name
    directory.mkdir()
    (directory / "results.json").write_text(json.dumps(doc_of(values, generated_at=generated_at)))
    (directory / "summary.md").write_text("# report\n")
    return directory


def test_run_gate_finds_the_previous_report_records_writes_and_is_idempotent(tmp_path: Path) -> None:
    target = parse_target(f"sqlite:///{tmp_path}/h.sqlite")
    limits = Limits(max_drop_percent=5)

    def gate(report: Path, check_mode: bool) -> GateOutcome:
        return run_gate(
            str(report),
            target=target,
            password=None,
            baseline="previous",
            limits=limits,
            now=NOW,
            check_mode=check_mode,
        )

    first = _report(tmp_path, "r1", [940e6, 941e6, 942e6], "2026-12-01T00:00:00Z")
    second = _report(tmp_path, "r2", [752e6, 753e6, 751e6], "2026-12-01T01:00:00Z")
    one = run_gate(
        str(first), target=target, password=None, baseline="previous", limits=limits, now=NOW, check_mode=False
    )
    assert one.message is None and one.recorded and "no baseline" in one.lines[1]
    dry = run_gate(
        str(second), target=target, password=None, baseline="previous", limits=limits, now=NOW, check_mode=True
    )
    assert dry.message is not None and not dry.recorded and not dry.written
    two = run_gate(
        str(second), target=target, password=None, baseline="previous", limits=limits, now=NOW, check_mode=False
    )
    assert two.message is not None and "history run 1" in two.doc["baseline"]["comparisons"][0]["baseline_source"]
    again = run_gate(
        str(second), target=target, password=None, baseline="previous", limits=limits, now=NOW, check_mode=False
    )
    assert (again.run_id, again.recorded, again.message) == (two.run_id, False, two.message)  # not its own baseline
    written = json.loads((second / "results.json").read_text())
    assert written["gate"]["passed"] is False and written["baseline"]["comparisons"][0]["verdict"] == "significant"
    markdown = (second / "summary.md").read_text()
    assert markdown.count(MARKER) == 1 and "**Gate: FAILED**" in markdown and markdown.startswith("# report")
    rows = sqlite3.connect(tmp_path / "h.sqlite").execute("SELECT count(*) FROM history_runs").fetchone()
    assert rows == (2,)
    by_file = run_gate(
        str(second), target=parse_target("none"), password=None, baseline=str(first / "results.json"),
        limits=limits, now=NOW, check_mode=False,
    )  # fmt: skip
    assert by_file.message is not None and by_file.run_id is None


def test_previous_without_a_history_is_refused(tmp_path: Path) -> None:
    report = _report(tmp_path, "r1", [G, G], "2026-12-01T00:00:00Z")
    with pytest.raises(HistoryError, match="report_baseline=previous needs a history"):
        run_gate(str(report), target=parse_target("none"), password=None, baseline="previous", limits=Limits(),
                 now=NOW, check_mode=False)  # fmt: skip


def test_printed_lines_say_baseline_now_difference_and_why_a_check_was_not_made() -> None:
    now = history.entries_of(doc_of([950e6, 951e6])) + history.entries_of(doc_of([900e6], test="single"))
    now += history.entries_of(doc_of([900e6, 901e6], test="new"))
    before = history.entries_of(doc_of([949e6, 950e6])) + history.entries_of(doc_of([990e6], test="single"))
    deltas = compare_entries(now, {e.key: (e, "b") for e in before})
    printed = lines(deltas, evaluate(deltas, Limits(max_drop_percent=5)), "b")
    # s^2 = 0.5e12 a side, se = sqrt(0.5e12), df 2, t 4.3027: +1e6 +- 3.04e6 of 949.5e6 = +0.11 % +- 0.32 %
    assert printed == [
        "baseline: b",
        "one-pair forward, 1 stream: baseline 949.5 Mbit/s (n=2) -> now 950.5 Mbit/s (n=2): +0.1 % "
        "(95 % CI -0.2 % .. +0.4 %), not significant",
        "single forward, 1 stream: baseline 990.0 Mbit/s (n=1) -> now 900.0 Mbit/s (n=1): -9.1 % (n=1, no statistics)",
        "new forward, 1 stream: now 900.5 Mbit/s (n=2), no baseline",
        "gate: passed (1 passed, 0 failed, 2 not checked: n=1, no statistics; no baseline)",
    ]


def test_an_incomplete_report_is_recorded_but_never_a_baseline(tmp_path: Path) -> None:
    """Issue 21: a run that is not complete (an implausible figure of a peer outside the inventory) is recorded with
    no sample, so the next honest report has no baseline - neither from the history nor from its results.json."""
    target = parse_target(f"sqlite:///{tmp_path}/h.sqlite")
    limits = Limits(max_drop_percent=5)
    honest = _report(tmp_path, "r0", [940e6, 941e6], "2026-12-01T00:00:00Z")
    hostile = _report(tmp_path, "r1", [9.6e13, 9.7e13], "2026-12-01T01:00:00Z")
    document = json.loads((hostile / "results.json").read_text())
    for run in document["runs"]:
        run["complete"] = False
    (hostile / "results.json").write_text(json.dumps(document))
    later = _report(tmp_path, "r2", [938e6, 939e6], "2026-12-01T02:00:00Z")

    def gate(report: Path, baseline: str) -> GateOutcome:
        return run_gate(str(report), target=target, password=None, baseline=baseline, limits=limits, now=NOW,
                        check_mode=False)  # fmt: skip

    assert gate(hostile, "previous").recorded  # recorded, without a sample
    (comparison,) = gate(later, "previous").doc["baseline"]["comparisons"]
    assert comparison["verdict"] == "no baseline"  # the hostile report is no baseline, and nothing earlier is
    assert gate(honest, "previous").recorded
    next_one = _report(tmp_path, "r3", [937e6, 938e6], "2026-12-01T03:00:00Z")
    outcome = gate(next_one, "previous")
    (comparison,) = outcome.doc["baseline"]["comparisons"]
    assert "history run 3 (hist" in comparison["baseline_source"] and outcome.message is None  # the honest one
    by_file = gate(later, str(hostile / "results.json"))
    (comparison,) = by_file.doc["baseline"]["comparisons"]
    assert comparison["verdict"] == "no baseline" and by_file.message is None
