# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report backend: rows, statistics, % of line rate, Markdown, CSV, JSON, knee, comparison, plot specs.

The runs are assembled from the corpus in ``tests/fixtures/iperf/`` (parsed by the real parser),
in the two input shapes: run records as the paired_test role records them, and plain results
with labels.
Every figure asserted is printed in the fixture files (quoted next to the constants).
"""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
import struct
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import (
    NA,
    ReportError,
    Unit,
    build_report,
    format_rate,
    pick_unit,
    plot_specs,
    results_csv,
    summary_csv,
    table_lines,
    to_json,
    to_markdown,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import plots as _plots
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.plot_data import timeseries_note
from tests.collection_path import FIXTURES

# "[  3] 0.00-5.37 sec   601 MBytes   939 Mbits/sec  4811/0  0 ..." (5 one-second intervals, Rtry 0)
PKB_I1 = "iperf2-2.0.13-text-client-tcp-e-fm-i1-pkb.txt"
# "[  4]  0.0-60.0 sec  6.47 GBytes   926 Mbits/sec" (no Rtry column)
GRACEFUL = "iperf2-2.0.13-text-client-tcp-V-ipv6-t60-gracefullife.txt"
# "[SUM] 0.00-60.01 sec  14095 MBytes  1970 Mbits/sec  112760/0  0" (-P 2)
PKB_P2 = "iperf2-2.0.13-text-client-tcp-e-fm-P2-pkb.txt"
# "unable to connect to server - ...: Connection refused"
REFUSED = "iperf3-3.17.1-text-client-error-unable-to-connect.txt"
# "[SUM]  0.0-10.0 sec  8.43 GBytes  7.24 Gbits/sec" (-P 4, ESXi)
ELATOV = "iperf2-2.0.x-esxi-text-client-tcp-m-w2m-P4-elatov.txt"
# "[SUM]   0.00-10.02  sec   114 MBytes  95.2 Mbits/sec  receiver" (-P 4)
TAST = "iperf3-ge3.2-text-client-tcp-P4-SUMMARY-ONLY-tast.txt"
# "[  5]   0.00-2.01   sec   191 MBytes   796 Mbits/sec  receiver"
LABLOG = "iperf3-ge3.2-text-client-basic-tcp-t2-lablog.txt"
# "[  4]   0.00-10.00  sec   860 MBytes   721 Mbits/sec  receiver", sender Retr 536
ATTFIBER = "iperf3-3.0or3.1-text-client-tcp-attfiber.txt"
# "[  5]   0.00-10.00  sec  29.0 GBytes  24.9 Gbits/sec  receiver" (10 intervals)
MOLER = "iperf3-ge3.2-text-client-tcp-moler.txt"
# iperf 3.6: "[  5]   0.00-10.00  sec  29.9 GBytes  25.7 Gbits/sec  receiver"
MOLER_V = "iperf3-3.6-text-client-tcp-V-verbose-moler.txt"
# 3 "(omitted)" intervals, then 10 intervals restarting at 0.00; 106 Mbits/sec receiver
OMIT = "iperf3-3.9-text-client-tcp-O3-omit-crlf-cloudpilot.txt"
# iperf 3.16 UDP -b 1M: receiver 1000368.3351008452 bit/s, lost_percent 0, jitter_ms 0.0515...
UDP = "iperf3-3.16-json-client-udp-b1M-sarius.json"

T_975_1 = 12.706204736174698  # Student t 0.975 quantile, 1 degree of freedom
TEN_G = 10_000_000_000.0


def result(name: str, **labels: Any) -> dict[str, Any]:
    parsed: dict[str, Any] = parse((FIXTURES / name).read_text())
    if labels:
        parsed["labels"] = labels
    return parsed


def record(
    run: int, streams: int, repetition: int, files: Sequence[str], labels: dict[str, Any], test: str = "sweep"
) -> dict[str, Any]:
    """A run record as esxilab.iperf.paired_test's paired_test_record filter makes it."""
    pairs: list[dict[str, Any]] = []
    for index, name in enumerate(files, start=1):
        parsed = result(name)
        ok = parsed["bits_per_second"] is not None
        pairs.append(
            {
                "pair": index,
                "server": f"vm{index * 2 - 1}",
                "client": f"vm{index * 2}",
                "address": f"198.18.1.{index}",
                "port": 5200 + index,
                "started_at": 1700000000.25 + run,
                "result": {**parsed, "labels": {**labels, "test": test, "run": run, "pair": index}},
                "ok": ok,
                "error": None if ok else f"the client on vm{index * 2} failed: {parsed['error']}",
            }
        )
    ok = all(p["ok"] for p in pairs)
    return {
        "run": run,
        "test": test,
        "streams": streams,
        "sweep": True,
        "direction": "forward",
        "swapped": False,
        "repetition": repetition,
        "labels": labels,
        "pairs": pairs,
        "total_bits_per_second": math.fsum(p["result"]["bits_per_second"] for p in pairs) if ok else None,
        "ok": ok,
        "complete": ok,
        "errors": [] if ok else [f"pair {p['pair']} ({p['client']} -> {p['server']}): {p['error']}" for p in pairs],
        "warnings": [],
    }


def sweep_runs() -> list[dict[str, Any]]:
    """A 1/2/4-stream sweep, two repetitions each; run 4 failed; run 5 has two pairs."""
    labels = {"nic": "vmxnet3", "mtu": 9000}
    return [
        record(1, 1, 1, [PKB_I1], labels),
        record(2, 1, 2, [GRACEFUL], labels),
        record(3, 2, 1, [PKB_P2], labels),
        record(4, 2, 2, [REFUSED], labels),
        record(5, 4, 1, [ELATOV, TAST], labels),
        record(6, 4, 2, [ELATOV], labels),
    ]


@pytest.fixture
def sweep() -> Any:
    return build_report(
        sweep_runs(),
        name="sweep",
        environment={"esxi_version": "8.0.3", "physical_nics": [{"name": "vmnic1", "speed_mbps": 10000}]},
        line_rate_bps=TEN_G,
        generated_at="2025-01-31T12:00:00Z",
    )


def nic_results() -> list[dict[str, Any]]:
    return [
        result(LABLOG, test="e1000", nic="e1000"),
        result(ATTFIBER, test="e1000", nic="e1000"),
        result(MOLER, test="vmxnet3", nic="vmxnet3"),
        result(MOLER_V, test="vmxnet3", nic="vmxnet3"),
    ]


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _table_after(markdown: str, heading: str) -> list[str]:
    """The Markdown table lines of the first table after ``heading``."""
    lines = markdown.splitlines()
    start = lines.index(heading)
    table: list[str] = []
    for line in lines[start + 1 :]:
        if line.startswith("|"):
            table.append(line)
        elif table:
            break
    return table


# -- rows ------------------------------------------------------------------------------------


def test_paired_records_give_one_run_per_record_and_one_row_per_pair(sweep: Any) -> None:
    assert [r.run for r in sweep.runs] == [1, 2, 3, 4, 5, 6]
    assert [r.bits_per_second for r in sweep.runs] == [939e6, 926e6, 1970e6, None, 7240e6 + 95.2e6, 7240e6]
    assert [r.streams for r in sweep.runs] == [1, 1, 2, 2, 4, 4]
    assert [len(r.results) for r in sweep.runs] == [1, 1, 1, 1, 2, 1]
    five = sweep.runs[4]
    assert [(r.pair, r.server, r.client, r.address, r.port) for r in five.results] == [
        (1, "vm1", "vm2", "198.18.1.1", 5201),
        (2, "vm3", "vm4", "198.18.1.2", 5202),
    ]
    assert five.results[1].bits_per_second == 95.2e6
    assert five.results[1].field("sent.bytes") == 120586240  # "115 MBytes" sender
    assert five.results[0].labels == {
        "nic": "vmxnet3",
        "mtu": 9000,
        "test": "sweep",
        "run": 5,
        "pair": 1,
        "streams": 4,
        "direction": "forward",
        "swapped": False,
        "repetition": 1,
    }
    failed = sweep.runs[3]
    assert failed.bits_per_second is None
    assert failed.results[0].bits_per_second is None
    assert failed.errors[0].startswith("pair 1 (vm2 -> vm1): the client on vm2 failed: unable to connect to server")
    # retransmits: iperf2 -e Rtry 0 is a figure; no Rtry column (GRACEFUL, ELATOV) is none
    assert [r.retransmits for r in sweep.runs] == [0, None, 0, None, None, None]


def test_plain_results_take_test_streams_and_direction_from_labels_or_the_result() -> None:
    runs = [
        result(LABLOG, test="loopback", streams=1, repetition=2),
        result(ELATOV),
        result("iperf3-3.9-text-client-tcp-R-reverse-sigitp.txt", test="loopback"),
        result(REFUSED, test="loopback"),
    ]
    report = build_report(runs)
    assert [(r.test, r.streams, r.direction, r.repetition) for r in report.runs] == [
        ("loopback", 1, "forward", 2),
        ("default", 4, "forward", None),  # "-P 4": four streams seen
        ("loopback", 1, "reverse", None),
        ("loopback", None, "forward", None),  # a failed run saw no stream
    ]
    assert [r.bits_per_second for r in report.runs] == [796e6, 7240e6, 4970e6, None]
    assert report.runs[3].errors == [
        "unable to connect to server - server may have stopped running or use a different port, firewall issue, "
        "etc.: Connection refused"
    ]
    assert all(r.source == "result" for r in report.runs)


def test_percent_of_line_rate_from_the_report_and_from_labels(sweep: Any) -> None:
    # run 5 had two pairs at the same time: its line rate is the sum over the pairs (not 73 % of one link)
    assert [r.line_rate_bps for r in sweep.runs] == [TEN_G] * 4 + [2 * TEN_G, TEN_G]
    assert sweep.runs[4].percent_of_line_rate == pytest.approx(7335.2e6 / 2 / TEN_G * 100)
    assert [p.percent_of_line_rate for p in sweep.runs[4].results] == pytest.approx([72.4, 0.952])
    assert sweep.runs[0].percent_of_line_rate == pytest.approx(9.39)
    assert sweep.runs[3].percent_of_line_rate is None  # failed: n/a, never 0
    labelled = build_report(
        [
            result(LABLOG, line_rate_bps=1e9),
            result(ATTFIBER, link_speed_mbps=1000),  # esxi_vmknic speed_mbps
            result(MOLER),
        ],
        line_rate_bps=TEN_G,
    )
    assert [r.line_rate_bps for r in labelled.runs] == [1e9, 1e9, TEN_G]
    assert [r.percent_of_line_rate for r in labelled.runs] == pytest.approx([79.6, 72.1, 249.0])
    unknown = build_report([result(LABLOG)])
    assert unknown.runs[0].percent_of_line_rate is None
    assert not unknown.has_line_rate


# -- statistics, knee --------------------------------------------------------------------------


def test_groups_have_mean_median_stdev_and_student_t_interval(sweep: Any) -> None:
    one, two, four = sweep.groups
    assert (one.streams, two.streams, four.streams) == (1, 2, 4)
    assert one.mean == statistics.fmean([939e6, 926e6])
    assert one.stats["median"] == 932.5e6
    assert one.stats["stdev"] == pytest.approx(13e6 / math.sqrt(2))
    assert one.half_width == pytest.approx(T_975_1 * 6.5e6)
    assert one.percent_of_line_rate == pytest.approx(9.325)
    # run 4 failed: left out (skipped), not counted as 0
    assert (two.stats["count"], two.stats["skipped"], two.mean, two.half_width) == (1, 1, 1970e6, None)
    assert four.mean == pytest.approx((7335.2e6 + 7240e6) / 2)
    assert [g.knee for g in sweep.groups] == [4, 4, 4]
    assert [(s.test, s.knee, s.best_streams) for s in sweep.sweeps] == [("sweep", 4, 4)]
    assert sweep.sweeps[0].best_bits_per_second == four.mean


def test_knee_follows_the_tolerance() -> None:
    # best mean 7287.6e6; within 80 %: >= 1457.52e6, first reached at 2 streams (1970e6)
    report = build_report(sweep_runs(), knee_tolerance=0.8)
    assert report.sweeps[0].knee == 2
    assert build_report(sweep_runs(), knee_tolerance=0.0).sweeps[0].knee == 4


def test_a_single_streams_value_is_no_sweep() -> None:
    report = build_report([result(LABLOG, test="t"), result(ATTFIBER, test="t")])
    assert report.sweeps == []
    assert [g.knee for g in report.groups] == [None]


def test_a_sweep_without_any_figure_has_no_knee() -> None:
    runs = [result(REFUSED, test="t", streams=1), result(REFUSED, test="t", streams=2)]
    report = build_report(runs)
    assert [(s.knee, s.best_streams) for s in report.sweeps] == [(None, None)]
    assert "Knee (forward): n/a - no stream count has a usable figure." in to_markdown(report)
    assert [s.kind for s in plot_specs(report)] == []


# -- Markdown ------------------------------------------------------------------------------------


def test_markdown_summary_tables_and_knee(sweep: Any) -> None:
    text = to_markdown(sweep)
    assert text.startswith("# iperf report: sweep\n")
    assert (
        "Report `sweep`, generated 2025-01-31T12:00:00Z: 6 runs (1 without a usable figure), 7 results, 1 test. "
        "Line rate per pair: 10.00 Gbit/s (a run of several pairs at the same time is compared with the sum over its "
        "pairs)." in text
    )
    assert _table_after(text, "### Test `sweep`") == [
        "| Direction | Streams | Runs | Mean (Gbit/s) | Median | Stdev | 95 % CI | Min | Max | % of line rate |",
        "| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: |",
        "| forward | 1 | 2 | 0.932 | 0.932 | 0.009 | 0.850 - 1.015 | 0.926 | 0.939 | 9.3 |",
        "| forward | 2 | 1 of 2 | 1.970 | 1.970 | n/a | n/a | 1.970 | 1.970 | 19.7 |",
        # run 5 had two pairs (20 Gbit/s of line rate), run 6 one: no common line rate, no percentage
        "| forward | 4 (knee) | 2 | 7.288 | 7.288 | 0.067 | 6.683 - 7.892 | 7.240 | 7.335 | n/a |",
    ]
    assert "Protocol tcp; pairs per run 1, 2; 6 runs." in text
    assert (
        "Knee (forward): **4 streams** - the smallest stream count whose mean is within 5 % of the best mean "
        "(7.288 Gbit/s at 4 streams)." in text
    )


def test_markdown_runs_table_shows_na_for_a_failed_run(sweep: Any) -> None:
    text = to_markdown(sweep)
    runs = _table_after(text, "## Runs")
    assert runs[0] == (
        "| Run | Test | Direction | Streams | Rep. | Pairs | Throughput (Gbit/s) | % of line rate | Retr. "
        "| CPU local/remote % | RTT µs | Status |"
    )
    assert runs[2] == "| 1 | sweep | forward | 1 | 1 | 1 | 0.939 | 9.4 | 0 | n/a | n/a | ok |"
    assert runs[5] == "| 4 | sweep | forward | 2 | 2 | 1 | n/a | n/a | n/a | n/a | n/a | failed |"
    # two pairs at the same time: 7.335 Gbit/s of 2 x 10 Gbit/s (not 73.4 % of one link)
    assert runs[6] == "| 5 | sweep | forward | 4 | 1 | 2 | 7.335 | 36.7 | n/a | n/a | n/a | ok |"
    assert "- run 4 (sweep): pair 1 (vm2 -> vm1): the client on vm2 failed: unable to connect to server" in text
    assert "| 0.000 |" not in text  # nothing shown as zero for the failed run


def test_markdown_environment_and_tools(sweep: Any) -> None:
    text = to_markdown(sweep)
    assert _table_after(text, "## Environment") == ["| Item | Value |", "| --- | --- |", "| esxi_version | 8.0.3 |"]
    assert _table_after(text, "`physical_nics`:") == [
        "| name | speed_mbps |",
        "| --- | --- |",
        "| vmnic1 | 10000 |",
    ]
    assert (
        "Tools in the results: iperf2, version not printed: 5 results; iperf3, version not printed: 2 results." in text
    )
    nested = to_markdown(build_report([result(MOLER_V)], environment={"nic": {"driver": "vmxnet3", "mtu": 9000}}))
    assert "| nic.driver | vmxnet3 |" in nested
    assert "| nic.mtu | 9000 |" in nested
    assert "Tools in the results: iperf3 3.6: 1 result." in nested
    assert "No environment was given" in to_markdown(build_report([result(MOLER_V)]))


def test_markdown_without_line_rate_has_no_percent_column_and_says_why() -> None:
    text = to_markdown(build_report([result(LABLOG), result(ATTFIBER)]))
    assert "% of line rate" not in text
    assert "No line rate is known (set `report_line_rate_bps` or a `line_rate_bps` label)." in text
    assert _table_after(text, "### Test `default`")[2] == (
        "| forward | 1 | 2 | 758.5 | 758.5 | 53.03 | 282.0 - 1235.0 | 721.0 | 796.0 |"
    )


def test_markdown_cells_are_escaped() -> None:
    text = to_markdown(build_report([result(LABLOG, test="a|b")], environment={"note": "x|y\nz"}))
    assert "### Test `a\\|b`" in text
    assert "| note | x\\|y z |" in text


def test_markdown_lists_the_plots_and_why_some_are_missing(sweep: Any) -> None:
    specs = plot_specs(sweep)
    text = to_markdown(sweep, specs[:1], "skipped - matplotlib is not installed")
    assert (
        "![Mean throughput vs parallel streams (forward), error bars: 95 % CI, star: knee, x axis log2 scale (each "
        "doubling of the streams one step)](sweep-forward.png)" in text
    )
    assert "Plots: skipped - matplotlib is not installed" in text
    assert "timeseries-" not in text


def test_no_runs_is_refused_not_an_empty_report() -> None:
    # issue 8: an empty report used to be written ("No runs were given"); refusing is clearer
    with pytest.raises(ReportError, match="runs is empty: there is no run to report, so no report is written"):
        build_report([], name="empty")


# -- comparison -------------------------------------------------------------------------------


def test_comparison_across_tests_when_each_test_is_one_variant() -> None:
    report = build_report(nic_results(), compare_by="nic", line_rate_bps=TEN_G)
    comparison = report.comparison
    assert comparison is not None
    assert (comparison.label, comparison.values, comparison.per_test) == ("nic", ["e1000", "vmxnet3"], False)
    [row] = comparison.rows
    assert row.key == {"direction": "forward", "swapped": False, "streams": 1}
    e1000, vmxnet3 = row.cells["e1000"], row.cells["vmxnet3"]
    assert e1000 is not None and vmxnet3 is not None
    assert e1000.mean == statistics.fmean([796e6, 721e6])
    assert vmxnet3.mean == pytest.approx(statistics.fmean([24.9e9, 25.7e9]))
    assert comparison.delta(row, "vmxnet3") == pytest.approx((25.3e9 / 758.5e6 - 1) * 100)
    text = to_markdown(report)
    assert _table_after(text, "## Comparison by `nic`") == [
        "| Direction | Streams | nic=e1000 | nic=vmxnet3 | vmxnet3 vs e1000 |",
        "| --- | --- | --: | --: | --: |",
        # the difference with Welch's interval, as the gate shows a baseline's
        "| forward | 1 | 0.758 ± 0.476 (n=2, 7.6 %) | 25.30 ± 5.082 (n=2, 253.0 %) | +3235.5 % (95 % CI +2589.4 % "
        ".. +3881.7 %) |",
    ]
    lines = table_lines(report)
    assert (
        lines[-1] == "nic vs e1000 (direction=forward, streams=1): vmxnet3 +3235.5 % (95 % CI +2589.4 % .. +3881.7 %)"
    )


def test_a_comparison_whose_interval_crosses_zero_is_not_significant_in_summary_md_and_csv() -> None:
    """Seed 001's question (is vmxnet3 better than e1000?) gets the gate's statistics, not a bare % (issue 22)."""
    runs = [
        result(LABLOG, test="t", nic="e1000"),
        result(ATTFIBER, test="t", nic="e1000"),
        result(LABLOG, test="t", nic="vmxnet3"),
        result(ATTFIBER, test="t", nic="vmxnet3"),
        result(LABLOG, test="t", nic="vmxnet3"),
    ]
    report = build_report(runs, compare_by="nic")
    assert report.comparison is not None
    [row] = report.comparison.rows
    found = report.comparison.difference(row, "vmxnet3")
    assert found.low is not None and found.high is not None and found.low < 0 < found.high
    assert found.verdict == "not significant" and found.text.endswith(", not significant")
    assert f"| {found.text} |" in to_markdown(report)
    rows = list(csv.DictReader(io.StringIO(summary_csv(report))))
    assert [(r["compare"], r["compared_with"], r["difference_verdict"]) for r in rows] == [
        ("e1000", "", ""),
        ("vmxnet3", "nic=e1000", "not significant"),
    ]
    assert float(rows[1]["difference_ci95_low_percent"]) == pytest.approx(found.low)


def test_comparison_within_a_test_and_runs_without_the_label() -> None:
    runs = [
        result(LABLOG, test="mtu", mtu=1500),
        result(ATTFIBER, test="mtu", mtu=1500),
        result(MOLER, test="mtu", mtu=9000),
        result(MOLER_V, test="other"),  # no mtu label
    ]
    report = build_report(runs, compare_by="mtu")
    comparison = report.comparison
    assert comparison is not None
    assert (comparison.values, comparison.per_test, comparison.left_out) == (["1500", "9000"], True, 1)
    [row] = comparison.rows
    assert row.key == {"test": "mtu", "direction": "forward", "swapped": False, "streams": 1}
    nine = row.cells["9000"]
    assert nine is not None and nine.stats["count"] == 1
    text = to_markdown(report)
    assert "| mtu | forward | 1 | 0.758 ± 0.476 (n=2) | 24.90 (n=1) | +3182.8 % (n=1, no statistics) |" in text
    assert "1 run(s) without the label `mtu` are not in this comparison." in text
    assert [g.compare for g in report.groups] == ["1500", "9000", None]


def test_comparison_keeps_two_tests_with_the_same_value_apart() -> None:
    runs = [
        result(LABLOG, test="a", nic="e1000"),
        result(MOLER, test="b", nic="vmxnet3"),
        result(MOLER_V, test="c", nic="vmxnet3"),  # same conditions and value as test b: not merged
    ]
    comparison = build_report(runs, compare_by="nic").comparison
    assert comparison is not None
    assert comparison.per_test is True
    assert [(row.key["test"], [v for v, g in row.cells.items() if g]) for row in comparison.rows] == [
        ("a", ["e1000"]),
        ("b", ["vmxnet3"]),
        ("c", ["vmxnet3"]),
    ]


def test_comparison_by_test_name() -> None:
    comparison = build_report(nic_results(), compare_by="test").comparison
    assert comparison is not None
    assert (comparison.values, comparison.per_test) == (["e1000", "vmxnet3"], False)
    [row] = comparison.rows
    assert row.key == {"direction": "forward", "swapped": False, "streams": 1}
    assert comparison.delta(row, "vmxnet3") == pytest.approx((25.3e9 / 758.5e6 - 1) * 100)


def test_comparison_with_a_value_without_figures_shows_na() -> None:
    runs = [result(LABLOG, nic="e1000"), result(REFUSED, nic="vmxnet3")]
    report = build_report(runs, compare_by="nic")
    text = to_markdown(report)
    # the refused run saw no stream: a row of its own, n/a and never 0
    assert _table_after(text, "## Comparison by `nic`")[2:] == [
        "| default | forward | 1 | 796.0 (n=1) | - | n/a |",
        "| default | forward | n/a | - | n/a (n=0) | n/a |",
    ]


# -- CSV and JSON -----------------------------------------------------------------------------


def test_results_csv_one_row_per_result_with_exact_figures(sweep: Any) -> None:
    rows = _rows(results_csv(sweep))
    assert len(rows) == 7
    first = rows[0]
    assert first["run"] == "1"
    assert first["pair"] == "1"
    assert first["bits_per_second"] == "939000000.0"
    assert first["sent_bytes"] == "630194176"
    assert first["duration"] == "5.37"
    assert first["retransmits"] == "0"
    assert first["line_rate_bps"] == "10000000000.0"
    assert float(first["percent_of_line_rate"]) == pytest.approx(9.39)
    assert first["started_at"] == "1700000001.25"
    assert first["label.nic"] == "vmxnet3"
    assert first["label.mtu"] == "9000"
    failed = rows[3]
    assert (failed["run"], failed["bits_per_second"], failed["sent_bytes"], failed["percent_of_line_rate"]) == (
        "4",
        "",
        "",
        "",
    )
    assert failed["complete"] == "false"
    assert failed["error"].startswith("the client on vm2 failed: unable to connect to server")
    assert failed["run_bits_per_second"] == ""
    assert [r["run_bits_per_second"] for r in rows[4:6]] == ["7335200000.0", "7335200000.0"]
    assert "label.test" not in rows[0]


def test_results_csv_udp_columns() -> None:
    [row] = _rows(results_csv(build_report([result(UDP)])))
    assert row["protocol"] == "udp"
    assert row["bits_per_second"] == "1000368.3351008452"
    assert row["lost_percent"] == "0.0"
    assert row["jitter_ms"] == "0.05150706013209632"
    assert row["tool_version"] == "3.16"


def test_summary_csv(sweep: Any) -> None:
    rows = _rows(summary_csv(sweep))
    assert [r["streams"] for r in rows] == ["1", "2", "4"]
    assert rows[0]["mean"] == "932500000.0"
    assert float(rows[0]["ci95_half_width"]) == pytest.approx(T_975_1 * 6.5e6)
    assert (rows[1]["count"], rows[1]["skipped"], rows[1]["stdev"], rows[1]["ci95_low"]) == ("1", "1", "", "")
    assert [r["knee"] for r in rows] == ["4", "4", "4"]
    assert "compare" not in rows[0]
    compared = _rows(summary_csv(build_report(nic_results(), compare_by="nic")))
    assert [r["compare"] for r in compared] == ["e1000", "vmxnet3"]


def test_json_holds_every_result_with_labels_and_the_environment(sweep: Any) -> None:
    document = json.loads(to_json(sweep))
    assert (document["format"], document["version"], document["name"]) == ("esxilab.iperf.report", 1, "sweep")
    assert document["environment"] == {
        "esxi_version": "8.0.3",
        "physical_nics": [{"name": "vmnic1", "speed_mbps": 10000}],
    }
    assert document["line_rate_bps"] == TEN_G
    assert len(document["results"]) == 7
    inputs = [p["result"] for r in sweep_runs() for p in r["pairs"]]
    assert [item["result"] for item in document["results"]] == json.loads(json.dumps(inputs))
    assert document["results"][0]["labels"]["nic"] == "vmxnet3"
    assert document["results"][3]["error"].startswith("the client on vm2 failed")
    assert [r["bits_per_second"] for r in document["runs"]] == [939e6, 926e6, 1970e6, None, 7335.2e6, 7240e6]
    assert document["summary"][1]["stats"]["count"] == 1
    assert document["sweeps"][0]["knee"] == 4
    assert [p["streams"] for p in document["sweeps"][0]["points"]] == [1, 2, 4]
    assert document["comparison"] is None


def test_json_turns_non_finite_numbers_into_null() -> None:
    odd = result(LABLOG)
    odd["cpu"] = {"local_percent": float("nan"), "remote_percent": float("inf")}
    document = json.loads(to_json(build_report([odd], environment={"x": float("nan")})))
    assert document["results"][0]["result"]["cpu"] == {"local_percent": None, "remote_percent": None}
    assert document["environment"] == {"x": None}


# -- the printed table ------------------------------------------------------------------------


def test_table_lines(sweep: Any) -> None:
    assert table_lines(sweep, directory="/srv/reports/sweep-1/", plots_note="skipped - no matplotlib") == [
        "iperf report: sweep: 6 run(s), 1 without a usable figure",
        "test   direction  streams  runs  mean Gbit/s  +/-95% CI    min    max  % line  retr",
        "sweep  forward          1   2/2        0.932      0.083  0.926  0.939     9.3     0",
        "sweep  forward          2   1/2        1.970        n/a  1.970  1.970    19.7     0",
        "sweep  forward         4*   2/2        7.288      0.605  7.240  7.335     n/a   n/a",
        "* knee: the smallest stream count within 5 % of the best mean",
        "plots: skipped - no matplotlib",
        "report: /srv/reports/sweep-1/summary.md",
    ]


# -- plot specifications ----------------------------------------------------------------------


def test_sweep_plot_spec(sweep: Any) -> None:
    # the 1-stream run has 5 one-second intervals: no time series (under 10 s and under 10 intervals)
    assert sorted(s.file for s in plot_specs(sweep)) == ["sweep-forward.png"]
    specs = {s.file: s for s in plot_specs(sweep, timeseries_min_seconds=0)}
    assert sorted(specs) == ["sweep-forward.png", "timeseries-sweep-forward-streams-1.png"]
    spec = specs["sweep-forward.png"]
    # 1, 2, 4 streams: a log2 x axis (each doubling one step), and the axis says so
    assert (spec.kind, spec.xlabel, spec.ylabel) == (
        "sweep",
        "Parallel streams per client (log2 scale)",
        "Throughput (Gbit/s)",
    )
    assert spec.x_log2 is True
    assert spec.title == "Throughput vs parallel streams: sweep (forward)"
    [series] = spec.series
    assert series.x == (1.0, 2.0, 4.0)
    assert series.y == pytest.approx((0.9325, 1.97, 7.2876))
    assert series.yerr[0] == pytest.approx(T_975_1 * 6.5e6 / 1e9)
    assert series.yerr[1] is None  # one figure: no interval, no invented bar
    assert series.knee == 4.0
    # the 4-stream runs differ in pairs (20 and 10 Gbit/s of line rate): no common line-rate mark
    assert (spec.line_rate, spec.line_rate_label) == (None, None)
    one_pair = build_report([r for r in sweep_runs() if len(r["pairs"]) == 1], line_rate_bps=TEN_G)
    [marked] = [s for s in plot_specs(one_pair) if s.kind == "sweep"]
    assert (marked.line_rate, marked.line_rate_label) == (10.0, "line rate 10.00 Gbit/s")


def test_timeseries_spec_from_intervals_without_omitted() -> None:
    report = build_report([result(PKB_I1, test="t"), result(OMIT, test="t")])
    # by default only the result with 10 intervals is drawn; run 1 has 5 one-second intervals (5.37 s)
    [default] = [s for s in plot_specs(report) if s.kind == "timeseries"]
    assert [s.label for s in default.series] == ["run 2"]
    assert timeseries_note(report) == (
        "1 result with intervals has no time-series plot: a time series is drawn only when the intervals cover at "
        "least 10 s or number at least 10 (role variable report_timeseries_min_seconds; 0 draws every result with 2 "
        "or more intervals)"
    )
    assert timeseries_note(report, 5) is None  # 0-5 s: 5 s covered
    [spec] = [s for s in plot_specs(report, timeseries_min_seconds=0) if s.kind == "timeseries"]
    assert report.unit == Unit("Mbit/s", 1e6)
    assert spec.ylabel == "Throughput (Mbit/s)"
    first, second = spec.series
    # "0.00-1.00 sec 0.62 MBytes 5.24 Mbits/sec" ... "4.00-5.00 sec 242 MBytes 2026 Mbits/sec"
    assert first.x == (0.0, 1.0, 2.0, 3.0, 4.0, 5.0)
    assert first.y == pytest.approx((5.24, 94.4, 811.0, 2109.0, 2026.0, 2026.0))
    # three "(omitted)" intervals left out; the clock restarts at 0.00 after them
    assert second.x == (0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0)
    assert second.y[:3] == pytest.approx((105.0, 94.4, 115.0))
    assert (first.label, second.label) == ("run 1", "run 2")


def test_compare_plot_spec() -> None:
    report = build_report(nic_results(), compare_by="nic")
    [spec] = [s for s in plot_specs(report) if s.kind == "compare"]
    assert (spec.file, spec.title, spec.categories) == ("compare-nic.png", "Throughput by nic", ("1 stream",))
    assert [s.label for s in spec.series] == ["nic=e1000", "nic=vmxnet3"]
    assert spec.series[0].y == pytest.approx((0.7585,))
    assert spec.series[1].y == pytest.approx((25.3,))
    assert spec.line_rate is None


def test_plot_file_names_are_unique_and_safe() -> None:
    runs = [result(PKB_I1, test="A/B c"), result(PKB_I1, test="a b-c")]
    files = [s.file for s in plot_specs(build_report(runs), timeseries_min_seconds=0)]
    # the axis is spelled: streams-1 is one stream, not one second
    assert files == ["timeseries-a-b-c-forward-streams-1.png", "timeseries-a-b-c-forward-streams-1-2.png"]


# -- units and bad input ------------------------------------------------------------------------


def test_units_and_formatting() -> None:
    assert pick_unit([939e6, 7.24e9]).name == "Gbit/s"
    assert pick_unit([939e6, None]).name == "Mbit/s"
    assert pick_unit([5e3]).name == "Kbit/s"
    assert pick_unit([None]).name == "Gbit/s"
    gbit = Unit("Gbit/s", 1e9)
    assert [format_rate(v, gbit) for v in (939e6, 24.9e9, 123.45e9, None)] == ["0.939", "24.90", "123.5", NA]


@pytest.mark.parametrize(
    ("runs", "options", "message"),
    [
        ("text", {}, "runs must be a list"),
        ([1], {}, "runs[0] must be a dictionary"),
        ([{"a": 1}], {}, "runs[0] is neither a run record of paired_test_results"),
        ([{"pairs": [], "total_bits_per_second": "fast"}], {}, "total_bits_per_second: must be a number or null"),
        ([{"pairs": ["x"], "total_bits_per_second": None}], {}, "runs[0].pairs[0]: must be a dictionary"),
        ([], {"line_rate_bps": 0}, "line_rate_bps must be a positive number"),
        ([], {"line_rate_bps": "10G"}, "line_rate_bps must be a positive number"),
        ([], {"knee_tolerance": 1.5}, "knee_tolerance must be a fraction"),
        ([], {"name": " "}, "name must be a non-empty string"),
        ([], {"environment": ["a"]}, "environment must be a dictionary"),
    ],
)
def test_bad_input_is_named(runs: Any, options: dict[str, Any], message: str) -> None:
    with pytest.raises(ReportError) as caught:
        build_report(runs, **options)
    assert message in str(caught.value)


# -- drawing ------------------------------------------------------------------------------------

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.fixture
def no_matplotlib(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in list(sys.modules):
        if name == "matplotlib" or name.startswith("matplotlib."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    yield


def test_without_matplotlib_nothing_is_drawn_and_the_reason_is_given(sweep: Any, no_matplotlib: None) -> None:
    problem = _plots.matplotlib_problem()
    assert problem is not None
    assert problem.startswith("matplotlib is not installed on the controller (")
    assert problem.endswith("install it on the controller (pip install matplotlib) to get the PNG plots")
    images, problems = _plots.render_all(plot_specs(sweep))
    assert images == {}
    assert problems == [problem]
    assert _plots.render_all([]) == ({}, [])


def test_every_plot_kind_is_drawn_as_a_readable_png(sweep: Any) -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread

    specs = plot_specs(sweep) + plot_specs(build_report(nic_results(), compare_by="nic", line_rate_bps=TEN_G))
    assert {s.kind for s in specs} == {"sweep", "timeseries", "compare", "cpu"}
    images, problems = _plots.render_all(specs)
    assert problems == []
    assert sorted(images) == sorted(s.file for s in specs)
    for data in images.values():
        assert _png_size(data) == (990, 550)  # 9 x 5 in at 110 dpi
        pixels = imread(io.BytesIO(data), format="png")
        assert pixels.shape[:2] == (550, 990)
        assert pixels.std() > 0.05  # not a blank canvas
    assert _plots.render_all(specs[:1])[0] == {specs[0].file: images[specs[0].file]}  # same bytes twice


def test_a_plot_that_fails_is_reported_and_the_others_are_drawn(sweep: Any) -> None:
    pytest.importorskip("matplotlib")
    import dataclasses

    good = plot_specs(sweep)[0]
    bad = dataclasses.replace(good, kind="pie", file="pie.png")
    images, problems = _plots.render_all([bad, good])
    assert list(images) == [good.file]
    assert problems == ["pie.png was not drawn (ValueError: unknown plot kind 'pie')"]


# -- bad input: HTML in labels, formulas in CSV cells -------------------------------------------

HOSTILE = "<img src=x onerror=alert(1)>"


def _hostile_report() -> Any:
    runs = [
        result(LABLOG, test="lo<script>", nic=HOSTILE, note='=HYPERLINK("http://x")', delta="-1.5"),
        result(ATTFIBER, test="lo<script>", nic="+cmd|' /C calc'!A0", note="@SUM(1+1)", delta="-1.5"),
    ]
    return build_report(
        runs,
        name="x",
        title="<b>title</b>",
        compare_by="nic",
        environment={"<k>": "<v>", "table": [{"<col>": "<cell>"}]},
        generated_at="2026-12-01T10:00:00Z",
    )


def test_html_from_the_input_is_escaped_in_the_summary() -> None:
    text = to_markdown(_hostile_report())
    assert "<img" not in text and "<b>" not in text and "<script>" not in text.replace("`lo<script>`", "")
    assert "&lt;img src=x onerror=alert(1)>" in text  # shown as text, never a tag
    assert "# &lt;b>title&lt;/b>" in text
    assert "generated 2026-12-01T10:00:00Z" in text
    assert "| &lt;k> | &lt;v> |" in text
    assert "| &lt;col> |" in text and "| &lt;cell> |" in text
    assert "### Test `lo<script>`" in text  # a code span shows its content literally: no escaping needed
    assert "R&amp;D" in to_markdown(build_report([result(LABLOG, test="t", team="R&D")], compare_by="team"))


def test_formulas_in_csv_cells_are_neutralised_and_numbers_kept() -> None:
    report = _hostile_report()
    rows = _rows(results_csv(report))
    assert [r["label.note"] for r in rows] == ['\'=HYPERLINK("http://x")', "'@SUM(1+1)"]
    assert [r["label.nic"] for r in rows] == [HOSTILE, "'+cmd|' /C calc'!A0"]
    assert [r["label.delta"] for r in rows] == ["-1.5", "-1.5"]  # a plain number stays a number
    summary = _rows(summary_csv(report))
    assert {r["compare"] for r in summary} == {HOSTILE, "'+cmd|' /C calc'!A0"}


# -- figures beside throughput (issue 10), direction labels and line rate of concurrent pairs (issue 13) ---------

# iperf3 3.1.3 JSON: sender "min_rtt": 1875, "mean_rtt": 10175, "max_rtt": 67000; "host_total": 2.18151,
# "remote_total": 4.763802; 159 retransmits
PSCHED = "iperf3-3.1.3-json-client-tcp-pscheduler.json"
# iperf3 3.1.6 JSON: sender "min_rtt": 133798, "mean_rtt": 135056, "max_rtt": 138924; "host_total": 0.8635,
# "remote_total": 1.76867; 281 retransmits
PSCHED_T20 = "iperf3-3.1.6-json-client-tcp-t20-b-pscheduler.json"
# iperf3 3.16 UDP -b 0: "lost_packets": 2744190, "packets": 2981957, "jitter_ms": 0.05129019881009296,
# CPU "host_total": 97.52639922108256, "remote_total": 27.66493455701266
UDP_LOSS = "iperf3-3.16-json-client-udp-b0-92pct-loss-sarius.json"
# iperf3 3.9 --bidir text: "[ 5][TX-C] ... 4.96 Gbits/sec receiver", "[ 7][RX-C] ... 4.93 Gbits/sec receiver"
BIDIR = "iperf3-3.9-text-client-tcp-bidir-sigitp.txt"


def rtt_result(name: str, **labels: Any) -> dict[str, Any]:
    """A parsed result with ``rtt`` (min/mean/max of the senders in µs) as printed in the JSON file; the parser
    keeps it itself once the RTT fields are in the result contract (issue 10), until then it is read here."""
    parsed = result(name, **labels)
    if "rtt" not in parsed:
        senders = [s["sender"] for s in json.loads((FIXTURES / name).read_text())["end"]["streams"]]
        parsed["rtt"] = {
            "min_us": min(s["min_rtt"] for s in senders),
            "mean_us": sum(s["mean_rtt"] for s in senders) // len(senders),
            "max_us": max(s["max_rtt"] for s in senders),
        }
    return parsed


def _table_after_line(markdown: str, start: str, skip: int = 0) -> list[str]:
    """The table lines after the ``skip``-th line that is ``start``."""
    lines = markdown.splitlines()
    index = [i for i, line in enumerate(lines) if line == start][skip]
    table: list[str] = []
    for line in lines[index + 1 :]:
        if line.startswith("|"):
            table.append(line)
        elif table:
            break
    return table


def test_cpu_retransmits_and_rtt_per_group_in_every_table() -> None:
    report = build_report([rtt_result(PSCHED, test="t"), rtt_result(PSCHED_T20, test="t")])
    [group] = report.groups
    figures = group.figures
    assert figures.cpu_local_percent == pytest.approx((2.18151 + 0.8635) / 2)
    assert figures.cpu_remote_percent == pytest.approx((4.763802 + 1.76867) / 2)
    assert figures.retransmits == (159 + 281) / 2  # per run
    # mean of the runs' means; the smallest minimum, the largest maximum
    assert (figures.rtt_min_us, figures.rtt_mean_us, figures.rtt_max_us) == (1875, (10175 + 135056) / 2, 138924)
    text = to_markdown(report)
    assert _table_after_line(text, "Beside throughput:") == [
        "| Direction | Streams | CPU local % | CPU remote % | Retr. | RTT µs mean (min - max) |",
        "| --- | --- | --: | --: | --: | --: |",
        "| forward | 1 | 1.5 | 3.3 | 220 | 72616 (1875 - 138924) |",
    ]
    runs = _table_after(text, "## Runs")
    assert runs[0].endswith("| Retr. | CPU local/remote % | RTT µs | Status |")
    assert runs[2:] == [
        "| 1 | t | forward | 1 | n/a | 1 | 388.7 | 159 | 2.2/4.8 | 10175 | ok |",
        "| 2 | t | forward | 1 | n/a | 1 | 25.49 | 281 | 0.9/1.8 | 135056 | ok |",
    ]
    [row] = _rows(summary_csv(report))
    assert (row["cpu_local_percent"], row["retransmits"], row["rtt_min_us"], row["rtt_max_us"]) == (
        "1.522505",
        "220.0",
        "1875.0",
        "138924.0",
    )
    assert row["rtt_mean_us"] == "72615.5"
    first, second = _rows(results_csv(report))
    assert (first["cpu_local_percent"], first["cpu_remote_percent"]) == ("2.18151", "4.763802")
    assert (first["rtt_min_us"], first["rtt_mean_us"], first["rtt_max_us"]) == ("1875.0", "10175.0", "67000.0")
    assert second["retransmits"] == "281"
    document = json.loads(to_json(report))
    assert document["summary"][0]["figures"]["cpu_local_percent"] == pytest.approx(1.522505)
    assert document["runs"][1]["figures"]["rtt_mean_us"] == 135056
    assert document["results"][0]["figures"]["retransmits"] == 159
    lines = table_lines(report)
    assert lines[1].endswith("retr  cpu % loc/rem")
    assert lines[2].endswith("220        1.5/3.3")


def test_results_without_rtt_or_cpu_show_na_never_zero() -> None:
    report = build_report([result(LABLOG, test="t")])  # iperf3 text without -V: no CPU, no RTT
    figures = report.groups[0].figures
    assert (figures.cpu_local_percent, figures.rtt_mean_us, figures.lost_percent) == (None, None, None)
    assert _table_after_line(to_markdown(report), "Beside throughput:")[2] == "| forward | 1 | n/a | n/a | 0 | n/a |"
    assert "cpu % loc/rem" not in "\n".join(table_lines(report))  # no column without a figure
    failed = build_report([rtt_result(PSCHED, test="t"), result(REFUSED, test="t")])
    assert failed.runs[1].figures.cpu_local_percent is None  # a failed run has no figures


def test_udp_loss_of_concurrent_pairs_is_summed_from_the_datagrams() -> None:
    run = record(1, 1, 1, [UDP_LOSS, UDP], {"line_rate_bps": 1e9})
    report = build_report([run])
    figures = report.runs[0].figures
    assert (figures.lost_packets, figures.packets) == (2744190 + 0, 2981957 + 1789)
    assert figures.lost_percent == pytest.approx(2744190 / (2981957 + 1789) * 100)
    assert figures.jitter_ms == 0.05150706013209632  # the larger of the two
    assert figures.cpu_local_percent == pytest.approx((97.52639922108256 + 100.84258832639009) / 2)
    text = to_markdown(report)
    assert _table_after_line(text, "Beside throughput:")[0].endswith("| Loss % | Jitter ms | Lost/total |")
    assert _table_after_line(text, "Beside throughput:")[2].endswith("| 92.0 | 0.052 | 2744190/2983746 |")
    assert _table_after(text, "## Runs")[0].endswith("| Loss % | Jitter ms | Status |")
    rows = _rows(results_csv(report))
    assert [(r["lost_packets"], r["packets"]) for r in rows] == [("2744190", "2981957"), ("0", "1789")]


def test_reverse_figures_of_bidirectional_runs_are_columns() -> None:
    report = build_report([result(BIDIR, test="b", direction="bidir")])
    figures = report.runs[0].figures
    assert (report.runs[0].bits_per_second, figures.reverse_bits_per_second) == (4.94e9, 4.93e9)
    text = to_markdown(report)
    assert _table_after_line(text, "Beside throughput:")[0].endswith("| Reverse (Gbit/s) | Both (Gbit/s) |")
    assert _table_after_line(text, "Beside throughput:")[2].endswith("| 4.930 | n/a |")  # no sum printed
    assert _table_after(text, "## Runs")[2].endswith("| 4.930 | n/a | ok |")
    assert _rows(results_csv(report))[0]["reverse_bits_per_second"] == "4930000000.0"
    assert _rows(summary_csv(report))[0]["reverse_bits_per_second"] == "4930000000.0"
    assert "Reverse" not in to_markdown(build_report([result(LABLOG)]))  # no column without bidir runs


def _with_hosts(run: dict[str, Any], direction: str = "forward", swapped: bool = False) -> dict[str, Any]:
    """The sender and receiver of each pair as paired_test records them."""
    run.update(direction=direction, swapped=swapped)
    for pair in run["pairs"]:
        if swapped:
            pair["server"], pair["client"] = pair["client"], pair["server"]
        forward = direction == "forward"
        pair["sender"], pair["receiver"] = (
            (pair["client"], pair["server"]) if forward else (pair["server"], pair["client"])
        )
    return run


def test_direction_labels_name_sender_and_receiver() -> None:
    runs = [
        _with_hosts(record(1, 1, 1, [PKB_I1], {})),
        _with_hosts(record(2, 1, 1, [PKB_I1], {}), swapped=True),
        _with_hosts(record(3, 1, 1, [PKB_I1], {}), direction="reverse"),
        _with_hosts(record(4, 1, 1, [PKB_I1], {}), direction="bidir"),
        _with_hosts(record(5, 2, 1, [PKB_I1] * 5, {})),
    ]
    report = build_report(runs)
    assert [r.direction_text for r in report.runs] == [
        "forward: vm2 → vm1",
        "forward, swapped: vm1 → vm2",
        "reverse: vm1 → vm2",
        "bidir: vm2 ⇄ vm1",
        "forward: vm2 → vm1, vm4 → vm3, vm6 → vm5 +2 more",
    ]
    assert [g.direction_text for g in report.groups][:2] == [
        "forward: vm2 → vm1",
        "forward: vm2 → vm1, vm4 → vm3, vm6 → vm5 +2 more",
    ]
    text = to_markdown(report)
    assert "| forward, swapped: vm1 → vm2 | 1 | 1 |" in text
    assert [r["flow"] for r in _rows(results_csv(report))][:2] == ["vm2 → vm1", "vm1 → vm2"]
    assert json.loads(to_json(report))["runs"][1]["flows"] == ["vm1 → vm2"]
    # without hosts (plain results): the bare direction, as before
    assert build_report([result(LABLOG)]).runs[0].direction_text == "forward"


def test_line_rate_of_concurrent_pairs_is_their_sum_or_omitted_with_the_reason() -> None:
    both = build_report([record(1, 1, 1, [PKB_I1, PKB_I1], {})], line_rate_bps=1e9)
    assert both.runs[0].line_rate_bps == 2e9
    assert both.runs[0].percent_of_line_rate == pytest.approx(939e6 * 2 / 2e9 * 100)  # 93.9 %, not 187.8 %
    assert "line rate 2.000 Gbit/s (the sum over the 2 pairs running at the same time, 1.000 Gbit/s each)" in (
        to_markdown(both)
    )
    partial = record(1, 1, 1, [PKB_I1, PKB_I1], {})
    partial["pairs"][0]["result"]["labels"]["line_rate_bps"] = 1e9  # pair 2 has none
    report = build_report([partial])
    assert (report.runs[0].line_rate_bps, report.runs[0].percent_of_line_rate) == (None, None)
    assert report.runs[0].line_rate_note is not None
    assert report.runs[0].line_rate_note.startswith("no line rate for pair 2 (the others have one)")
    assert "% of line rate omitted: no line rate for pair 2 (the others have one)" in to_markdown(report)
    assert json.loads(to_json(report))["runs"][0]["line_rate_note"] == report.runs[0].line_rate_note
    pair_percent = [r["percent_of_line_rate"] for r in _rows(results_csv(report))]
    assert float(pair_percent[0]) == pytest.approx(93.9)
    assert pair_percent[1] == ""  # each pair's own figure stays


def test_cpu_vs_throughput_table_and_plot_of_a_comparison() -> None:
    report = build_report(nic_results(), compare_by="nic")
    text = to_markdown(report)
    assert _table_after(text, "### CPU vs throughput by `nic`") == [
        "| Direction | Streams | nic | Throughput (Gbit/s) | CPU local % | CPU remote % | Gbit/s per CPU % (local) |",
        "| --- | --- | --- | --: | --: | --: | --: |",
        "| forward | 1 | e1000 | 0.758 | n/a | n/a | n/a |",
        # iperf 3.6 -V: "CPU Utilization: local/sender 97.2% ... remote/receiver 64.2%"
        "| forward | 1 | vmxnet3 | 25.30 | 97.2 | 64.2 | 0.260 |",
    ]
    [spec] = [s for s in plot_specs(report) if s.kind == "cpu"]
    assert (spec.file, spec.xlabel, spec.ylabel) == (
        "cpu-vs-throughput-nic.png",
        "CPU use (%), as iperf printed it",
        "Throughput (Gbit/s)",
    )
    assert [(s.label, s.x, s.y, s.hollow) for s in spec.series] == [
        ("nic=vmxnet3, local CPU", (97.2,), (25.7,), False),
        ("nic=vmxnet3, remote CPU", (64.2,), (25.7,), True),
    ]
    assert "![CPU use vs throughput by nic" in to_markdown(report, [spec])
    no_cpu = build_report([result(LABLOG, nic="a"), result(ATTFIBER, nic="b")], compare_by="nic")
    assert [s.kind for s in plot_specs(no_cpu) if s.kind == "cpu"] == []
    assert "CPU vs throughput by `nic`: no CPU figure in the results" in to_markdown(no_cpu)


def test_check_mode_table_says_no_report_was_written(sweep: Any) -> None:
    lines = table_lines(sweep, directory="/srv/reports/sweep-1", check_mode=True)
    assert lines[-1] == "check mode: no report was written (it would be /srv/reports/sweep-1/summary.md)"
    assert not any(line.startswith("report: ") for line in lines)
