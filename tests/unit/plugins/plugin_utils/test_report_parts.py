# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs split by a pair label (``report/parts.py``): one concurrent run whose pairs carry different values of
``compare_by`` gives per value the sum over that value's pairs, beside the whole run's sum, never counted twice.

The runs come the way the role makes them: ``build_plan`` (pair labels), then ``build_record`` from registered
client results parsed from the corpus (``tests/fixtures/iperf/``, each carrying the labels iperf_run was given).
"""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.planned import PlannedRun
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.record import build_record
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import (
    build_report,
    plot_specs,
    report_doc,
    summary_csv,
    table_lines,
    to_json,
    to_markdown,
)
from tests.collection_path import FIXTURES

# "[  5]   0.00-2.01   sec   191 MBytes   796 Mbits/sec  receiver"
LABLOG = "iperf3-ge3.2-text-client-basic-tcp-t2-lablog.txt"
# "[  4]   0.00-10.00  sec   860 MBytes   721 Mbits/sec  receiver"
ATTFIBER = "iperf3-3.0or3.1-text-client-tcp-attfiber.txt"
# "[SUM]   0.00-10.02  sec   114 MBytes  95.2 Mbits/sec  receiver"
TAST = "iperf3-ge3.2-text-client-tcp-P4-SUMMARY-ONLY-tast.txt"
# "[  3] 0.00-5.37 sec   601 MBytes   939 Mbits/sec ..."
PKB_I1 = "iperf2-2.0.13-text-client-tcp-e-fm-i1-pkb.txt"
# "unable to connect to server - ...: Connection refused"
REFUSED = "iperf3-3.17.1-text-client-error-unable-to-connect.txt"
ADDRESSES = {f"vm{i}": f"198.18.1.{i}" for i in range(1, 9)}
GBIT = 1e9


def _rate(name: str) -> float:
    rate = parse((FIXTURES / name).read_text())["bits_per_second"]
    assert isinstance(rate, float)
    return rate


def _plan(pair_labels: Sequence[Mapping[str, Any] | None], repeat: int = 2, **test: Any) -> dict[str, Any]:
    pairs = []
    for index, labels in enumerate(pair_labels):
        pair: dict[str, Any] = {"server": f"vm{2 * index + 1}", "client": f"vm{2 * index + 2}"}
        if labels is not None:
            pair["labels"] = dict(labels)
        pairs.append(pair)
    spec = {"name": "fwd", "pairs": pairs, "repeat": repeat, "labels": {"line_rate_bps": GBIT}, **test}
    plan: dict[str, Any] = build_plan([spec], addresses=ADDRESSES)
    return plan


def _record(run: PlannedRun, files: Sequence[str]) -> dict[str, Any]:
    """The run's record from what its hosts registered; each client's result is the fixture of its pair."""
    reports: dict[str | None, dict[str, Any]] = {}
    for pair, name in zip(run["pairs"], files, strict=True):
        server = reports.setdefault(pair["server"], {"host": pair["server"]})
        client = reports.setdefault(pair["client"], {"host": pair["client"]})
        server.setdefault("servers", {"results": []})["results"].append({"item": pair, "pid": 100 + pair["pair"]})
        server.setdefault("stops", {"results": []})["results"].append({"item": pair, "stopped": []})
        result = {**parse((FIXTURES / name).read_text()), "labels": pair["labels"]}
        client.setdefault("clients", {"results": []})["results"].append(
            {"item": pair, "result": result, "started_at": 1000.0 + run["run"]}
        )
    record: dict[str, Any] = dict(build_record(run, list(reports.values())))
    return record


OS_LABELS = [{"os": "a"}, {"os": "a"}, {"os": "b"}, None]  # the fourth pair has no os: "(none)"
FILES = {1: [LABLOG, ATTFIBER, TAST, PKB_I1], 2: [ATTFIBER, LABLOG, PKB_I1, TAST]}


@pytest.fixture
def records() -> list[dict[str, Any]]:
    plan = _plan(OS_LABELS)
    return [_record(run, FILES[run["run"]]) for run in plan["runs"]]


def test_a_run_whose_pairs_differ_gets_one_part_per_value_and_keeps_its_own_total(
    records: list[dict[str, Any]],
) -> None:
    report = build_report(records, compare_by="os")
    assert [run.run for run in report.runs] == [1, 2]  # the runs are the runs: parts are not added to them
    for run, record in zip(report.runs, records, strict=True):
        assert run.bits_per_second == record["total_bits_per_second"]  # unchanged
        assert run.compare is None and [p.compare for p in run.parts] == ["a", "b", "(none)"]
        assert [[r.pair for r in p.results] for p in run.parts] == [[1, 2], [3], [4]]
    assert report.parts == [p for run in report.runs for p in run.parts]
    assert len(report.results) == 8  # each pair once


def test_the_parts_of_a_run_add_up_to_the_run_when_every_pair_has_a_figure(records: list[dict[str, Any]]) -> None:
    report = build_report(records, compare_by="os")
    first = report.runs[0]
    a, b, none = first.parts
    assert a.bits_per_second == math.fsum([_rate(LABLOG), _rate(ATTFIBER)])  # each pair's own iperf figure
    assert b.bits_per_second == _rate(TAST)
    assert none.bits_per_second == _rate(PKB_I1)
    for run in report.runs:
        parts = [p.bits_per_second for p in run.parts]
        assert all(v is not None for v in parts)
        assert run.bits_per_second is not None
        assert math.isclose(math.fsum(v for v in parts if v is not None), run.bits_per_second, rel_tol=1e-15)


def test_a_part_sums_only_its_pairs_and_its_line_rate_is_theirs(records: list[dict[str, Any]]) -> None:
    report = build_report(records, compare_by="os")
    first = report.runs[0]
    assert first.line_rate_bps == 4 * GBIT  # the whole run: 4 pairs of 1 Gbit/s
    a, b, none = first.parts
    assert (a.line_rate_bps, b.line_rate_bps, none.line_rate_bps) == (2 * GBIT, GBIT, GBIT)
    assert a.percent_of_line_rate == pytest.approx(100 * (_rate(LABLOG) + _rate(ATTFIBER)) / (2 * GBIT))
    assert a.labels["os"] == "a" and "os" not in none.labels
    assert a.whole is first and a.run == first.run
    assert a.direction_text == "forward: vm2 → vm1, vm4 → vm3"


def test_part_groups_have_statistics_over_the_repetitions(records: list[dict[str, Any]]) -> None:
    report = build_report(records, compare_by="os")
    by_value = {g.compare_text: g for g in report.groups}
    assert list(by_value) == ["(all pairs)", "a", "b", "(none)"]  # the whole run first, then its parts
    whole, a, b = by_value["(all pairs)"], by_value["a"], by_value["b"]
    assert (whole.part, whole.split, a.part, a.split) == (False, True, True, False)
    assert whole.stats["count"] == a.stats["count"] == 2
    sums_a = [math.fsum([_rate(LABLOG), _rate(ATTFIBER)]), math.fsum([_rate(ATTFIBER), _rate(LABLOG)])]
    assert a.mean == pytest.approx(statistics.fmean(sums_a), rel=1e-15)
    assert b.mean == pytest.approx(statistics.fmean([_rate(TAST), _rate(PKB_I1)]), rel=1e-15)
    assert whole.mean == pytest.approx(statistics.fmean([r["total_bits_per_second"] for r in records]), rel=1e-15)
    assert a.percent_of_line_rate == pytest.approx(100 * a.mean / (2 * GBIT))  # type: ignore[operator]
    assert a.stability is None  # the repeat verdict is on the whole run


def test_the_comparison_is_by_the_values_of_the_parts(records: list[dict[str, Any]]) -> None:
    comparison = build_report(records, compare_by="os").comparison
    assert comparison is not None
    assert comparison.values == ["a", "b", "(none)"]
    assert comparison.left_out == 0  # the split runs are compared through their parts
    (row,) = comparison.rows
    assert [g.part for g in row.cells.values() if g is not None] == [True, True, True]


def test_a_failed_pair_leaves_its_part_and_the_run_without_a_figure_and_the_other_parts_whole() -> None:
    plan = _plan([{"os": "a"}, {"os": "b"}], repeat=1)
    (record,) = [_record(run, [LABLOG, REFUSED]) for run in plan["runs"]]
    report = build_report([record], compare_by="os")
    (run,) = report.runs
    a, b = run.parts
    assert run.bits_per_second is None  # never a partial sum
    assert a.bits_per_second == _rate(LABLOG) and a.complete
    assert b.bits_per_second is None and b.errors and b.errors[0].startswith("pair 2: ")
    assert not b.complete


def test_a_label_every_pair_shares_is_a_test_label_no_parts() -> None:
    """Pair labels alike on every pair of a run give the report of the same label set on the test."""
    by_pairs = [_record(r, [LABLOG, TAST]) for r in _plan([{"os": "a"}, {"os": "a"}])["runs"]]
    plan = _plan([None, None], labels={"line_rate_bps": GBIT, "os": "a"})
    by_test = [_record(r, [LABLOG, TAST]) for r in plan["runs"]]
    one, other = build_report(by_pairs, compare_by="os"), build_report(by_test, compare_by="os")
    assert one.parts == other.parts == []
    assert [r.compare for r in one.runs] == [r.compare for r in other.runs] == ["a", "a"]
    assert [report_doc(one)[k] for k in ("summary", "sweeps", "combined")] == [
        report_doc(other)[k] for k in ("summary", "sweeps", "combined")
    ]
    assert to_markdown(one) == to_markdown(other)
    assert summary_csv(one) == summary_csv(other)
    assert "part" not in next(csv.reader(io.StringIO(summary_csv(one))))


def test_results_json_holds_the_parts_once_with_the_run_they_belong_to(records: list[dict[str, Any]]) -> None:
    report = build_report(records, compare_by="os", line_rate_bps=None)
    doc = json.loads(to_json(report))
    assert [run["parts"] for run in doc["runs"]] == [["a", "b", "(none)"], ["a", "b", "(none)"]]
    assert [(p["part_of"], p["compare"], p["pairs"]) for p in doc["parts"]] == [
        (1, "a", [1, 2]), (1, "b", [3]), (1, "(none)", [4]),
        (2, "a", [1, 2]), (2, "b", [3]), (2, "(none)", [4]),
    ]  # fmt: skip
    assert doc["parts"][0]["bits_per_second"] == math.fsum([_rate(LABLOG), _rate(ATTFIBER)])
    assert doc["parts"][0]["line_rate_bps"] == 2 * GBIT
    assert len(doc["results"]) == 8 and [r["labels"].get("os") for r in doc["results"][:4]] == ["a", "a", "b", None]
    assert [r["record"]["labels"].get("os") for r in doc["results"][:4]] == ["a", "a", "b", None]
    assert [(s["compare"], s["part"]) for s in doc["summary"]] == [
        (None, False), ("a", True), ("b", True), ("(none)", True),
    ]  # fmt: skip
    assert doc["comparison"]["values"] == ["a", "b", "(none)"]


def test_summary_csv_markdown_and_console_mark_the_parts(records: list[dict[str, Any]]) -> None:
    report = build_report(records, compare_by="os")
    rows = list(csv.DictReader(io.StringIO(summary_csv(report))))
    assert [(r["compare"], r["part"]) for r in rows] == [
        ("(all pairs)", "false"), ("a", "true"), ("b", "true"), ("(none)", "true"),
    ]  # fmt: skip
    markdown = to_markdown(report)
    assert "Runs whose pairs differ in `os` are split" in markdown
    assert "### Parts of the runs by `os`" in markdown
    assert "| 1 | fwd | forward: vm2 → vm1, vm4 → vm3 | a | 1, 2 |" in markdown
    assert "| (all pairs) |" in markdown
    table = table_lines(report)
    assert any(line.startswith("fwd ") and " (all pairs) " in line for line in table)
    assert (
        "os=<value>: per run the sum over its pairs with that value; (all pairs): the whole run ((none): pairs "
        "without the label)" in table
    )


def test_part_groups_draw_no_second_time_series(records: list[dict[str, Any]]) -> None:
    report = build_report(records, compare_by="os")
    specs = plot_specs(report, timeseries_min_seconds=0)
    assert [(s.kind, s.file) for s in specs] == [
        ("compare", "compare-os-fwd.png"),  # the parts' values side by side
        ("timeseries", "timeseries-fwd-forward-streams-1.png"),  # the whole runs' results only
    ]
    (compare,) = (s for s in specs if s.kind == "compare")
    assert [s.label for s in compare.series] == ["os=a", "os=b", "os=(none)"]


def test_without_compare_by_nothing_is_split(records: list[dict[str, Any]]) -> None:
    report = build_report(records)
    assert report.parts == [] and all(not run.parts for run in report.runs)
    doc = json.loads(to_json(report))  # written as before parts existed
    assert "parts" not in doc
    assert all("part" not in s for s in doc["summary"]) and all("parts" not in r for r in doc["runs"])
    assert "part" not in next(csv.reader(io.StringIO(summary_csv(report))))
