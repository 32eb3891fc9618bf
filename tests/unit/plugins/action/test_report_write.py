# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report_write action: files written on the controller, check mode, idempotency, no matplotlib, docs."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.esxilab.iperf.plugins.action import report_write as action
from ansible_collections.esxilab.iperf.plugins.action.report_write import ActionModule
from ansible_collections.esxilab.iperf.plugins.modules import report_write as module_doc
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse
from tests.collection_path import FIXTURES
from tests.unit.plugins.action_harness import assert_docs_only, assert_options_documented, make_action

# "[  5]   0.00-2.01   sec   191 MBytes   796 Mbits/sec  receiver" (one interval)
LABLOG = "iperf3-ge3.2-text-client-basic-tcp-t2-lablog.txt"
# "[  4]   0.00-10.00  sec   860 MBytes   721 Mbits/sec  receiver" (ten intervals)
ATTFIBER = "iperf3-3.0or3.1-text-client-tcp-attfiber.txt"
REFUSED = "iperf3-3.17.1-text-client-error-unable-to-connect.txt"
# "[  3] 0.00-5.37 sec   601 MBytes   939 Mbits/sec" (5 one-second intervals)
PKB_I1 = "iperf2-2.0.13-text-client-tcp-e-fm-i1-pkb.txt"
# report.html (html: true, the default) and the raw output it links: the refused run's client output (run 3)
BASE_FILES = ["raw-run3-1.txt", "report.html", "results.csv", "results.json", "summary.csv", "summary.md"]
MANIFEST = ".esxilab-iperf-report.json"  # the files of our report, kept beside them


def _result(name: str, **labels: Any) -> dict[str, Any]:
    parsed: dict[str, Any] = parse((FIXTURES / name).read_text())
    parsed["labels"] = labels
    return parsed


def _runs() -> list[dict[str, Any]]:
    return [
        _result(LABLOG, test="lo", nic="e1000"),
        _result(ATTFIBER, test="lo", nic="vmxnet3"),
        _result(REFUSED, test="lo", nic="vmxnet3"),
    ]


def _action(args: dict[str, Any], *, check_mode: bool = False) -> ActionModule:
    return make_action(ActionModule, "esxilab.iperf.report_write", args, check_mode=check_mode)


@pytest.fixture
def no_matplotlib(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(sys.modules):
        if name == "matplotlib" or name.startswith("matplotlib."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)


def test_writes_the_report_then_is_unchanged(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    dest = tmp_path / "reports" / "lo"
    args = {"runs": _runs(), "dest": str(dest), "name": "lo", "compare_by": "nic", "line_rate_bps": 1e9}
    out = _action(args).run(task_vars={})
    assert not out.get("failed"), out.get("msg")
    assert out["changed"] is True
    assert out["dir"] == str(dest)
    # LABLOG has one interval: no time series of e1000 (a single step says nothing; timeseries_min_seconds)
    pngs = ["compare-nic-lo.png", "timeseries-lo-forward-streams-1-vmxnet3.png"]
    assert sorted(p.name for p in dest.iterdir()) == sorted([MANIFEST, *BASE_FILES, *pngs])
    assert out["files"]["json"] == str(dest / "results.json")
    assert out["files"]["plots"] == [str(dest / name) for name in pngs]
    assert sorted(out["written"]) == sorted(str(dest / n) for n in BASE_FILES + pngs)
    assert out["plots_skipped"] is None
    assert "warnings" not in out
    assert stat.S_IMODE((dest / "summary.md").stat().st_mode) == 0o644
    document = json.loads((dest / "results.json").read_text())
    assert [r["bits_per_second"] for r in document["runs"]] == [796e6, 721e6, None]
    assert out["table"][0] == "iperf report: lo: 3 run(s), 1 without a usable figure"
    assert out["table"][-1] == f"report: {dest}/summary.md"
    assert out["table"][-3:-1] == [
        "nic vs e1000 (test=lo, direction=forward, streams=1): vmxnet3 -9.4 % (n=1, no statistics)",  # 721 vs 796
        "nic vs e1000 (test=lo, direction=forward, streams=n/a): vmxnet3 n/a",  # the refused run
    ]
    assert [(g["compare"], g["stats"]["count"], g["stats"]["mean"]) for g in out["report"]["summary"]] == [
        ("e1000", 1, 796e6),
        ("vmxnet3", 1, 721e6),
        ("vmxnet3", 0, None),  # the refused run: its own group (no stream seen), n/a
    ]
    # one shape: what the task returns is exactly what results.json holds (issue 24)
    assert out["report"] == document
    assert out["report"]["format"] == "esxilab.iperf.report"
    assert out["ansible_facts"] == {"report_files": {**out["files"], "dir": str(dest)}}
    assert (
        "![Mean throughput by nic - test lo, error bars: 95 % CI](compare-nic-lo.png)"
        in (dest / "summary.md").read_text()
    )

    again = _action(args).run(task_vars={})
    assert again["changed"] is False
    assert again["written"] == []
    assert again["msg"] == f"the report in {dest} is up to date"


def test_check_mode_writes_nothing_and_tells_what_would_be_written(tmp_path: Path) -> None:
    dest = tmp_path / "new"
    out = _action({"runs": _runs(), "dest": str(dest), "plots": False}, check_mode=True).run(task_vars={})
    assert not out.get("failed"), out.get("msg")
    assert out["changed"] is True
    assert not dest.exists()
    assert sorted(Path(p).name for p in out["written"]) == BASE_FILES
    assert out["msg"] == f"would write 6 file(s) in {dest}"
    assert out["plots_skipped"] == "not drawn (plots=false)"
    assert out["table"][0] == "iperf report: iperf: 3 run(s), 1 without a usable figure"
    # issue 13: check mode used to print a report path it never wrote
    assert out["table"][-1] == f"check mode: no report was written (it would be {dest}/summary.md)"
    # what check mode returns is the results.json the real run writes
    real = _action({"runs": _runs(), "dest": str(dest), "plots": False}).run(task_vars={})
    assert out["report"] == real["report"] == json.loads((dest / "results.json").read_text())


def test_time_series_rule_is_an_option_and_said_in_the_summary(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    dest = tmp_path / "ts"
    runs = [_result(PKB_I1, test="lo", nic="e1000"), _result(ATTFIBER, test="lo", nic="vmxnet3")]
    args = {"runs": runs, "dest": str(dest), "compare_by": "nic"}
    out = _action({**args, "timeseries_min_seconds": 0}).run(task_vars={})
    assert not out.get("failed"), out.get("msg")
    assert sorted(Path(p).name for p in out["files"]["plots"]) == [
        "compare-nic-lo.png",
        "timeseries-lo-forward-streams-1-e1000.png",
        "timeseries-lo-forward-streams-1-vmxnet3.png",
    ]
    assert "no time-series plot" not in (dest / "summary.md").read_text()
    out = _action(args).run(task_vars={})
    assert [Path(p).name for p in out["removed"]] == ["timeseries-lo-forward-streams-1-e1000.png"]
    assert (
        "1 result with intervals has no time-series plot: a time series is drawn only when the intervals cover at "
        "least 10 s or number at least 10" in (dest / "summary.md").read_text()
    )
    bad = _action({"runs": _runs(), "dest": str(tmp_path / "bad"), "timeseries_min_seconds": -1}).run(task_vars={})
    assert bad["failed"] is True
    assert "timeseries_min_seconds must be 0 or more seconds" in bad["msg"]
    assert not (tmp_path / "bad").exists()


def test_without_matplotlib_the_report_is_written_without_plots(tmp_path: Path, no_matplotlib: None) -> None:
    dest = tmp_path / "noplots"
    out = _action({"runs": _runs(), "dest": str(dest)}).run(task_vars={})
    assert not out.get("failed"), out.get("msg")
    assert sorted(p.name for p in dest.iterdir()) == [MANIFEST, *BASE_FILES]
    assert out["files"]["plots"] == []
    assert out["plots_skipped"].startswith("skipped - matplotlib is not installed on the controller")
    assert out["warnings"][0].startswith(
        "esxilab.iperf.report_write: the report was written without (some) plots: matplotlib is not installed"
    )
    summary = (dest / "summary.md").read_text()
    assert "Plots: skipped - matplotlib is not installed on the controller" in summary
    assert "pip install matplotlib" in summary
    assert "![" not in summary
    assert out["table"][-2].startswith("plots: skipped - matplotlib is not installed")


def test_without_matplotlib_check_mode_says_plots_would_be_skipped(tmp_path: Path, no_matplotlib: None) -> None:
    out = _action({"runs": _runs(), "dest": str(tmp_path)}, check_mode=True).run(task_vars={})
    assert out["files"]["plots"] == []
    assert out["plots_skipped"].startswith("skipped - matplotlib is not installed")
    assert sorted(Path(p).name for p in out["written"]) == BASE_FILES
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"runs": [{"a": 1}]}, "esxilab.iperf.report_write: runs[0] is neither a run record"),
        ({"runs": [], "line_rate_bps": -1}, "line_rate_bps must be a positive number"),
        ({"runs": [], "knee_tolerance": 2}, "knee_tolerance must be a fraction"),
        ({"runs": "x"}, "runs"),
        ({"runs": [], "colour": "red"}, "Unsupported parameters"),
        ({"runs": [], "html": "maybe"}, "argument 'html' is of type str and we were unable to convert to bool"),
        # issue 21: free text in generated_at (it may end the directory's name) is refused before anything is written
        (
            {"runs": [], "generated_at": "not a time", "dest_time": True},
            "esxilab.iperf.report_write: generated_at='not a time' is not a date and time: give an ISO 8601 time such "
            "as 2025-01-31T12:00:00Z (the role esxilab.iperf.report gives the time of the task), or leave it unset",
        ),
        ({"runs": [], "generated_at": "2026-13-45T99:00:00Z"}, "generated_at='2026-13-45T99:00:00Z' is not a date"),
        ({"runs": [], "generated_at": "../../etc/x", "dest_time": True}, "generated_at='../../etc/x' is not a date"),
    ],
)
def test_bad_arguments_fail_with_a_message(tmp_path: Path, args: dict[str, Any], message: str) -> None:
    out = _action({"dest": str(tmp_path / "r"), **args}).run(task_vars={})
    assert out["failed"] is True
    assert message in out["msg"]
    assert not (tmp_path / "r").exists()


def test_dest_that_is_a_file_fails(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.write_text("x")
    out = _action({"runs": [], "dest": str(target)}).run(task_vars={})
    assert out["failed"] is True
    assert out["msg"] == f"esxilab.iperf.report_write: dest {target} exists and is not a directory; choose another path"


def test_unwritable_dest_fails_naming_the_directory(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    out = _action({"runs": _runs(), "dest": str(locked / "r"), "plots": False}).run(task_vars={})
    assert out["failed"] is True
    assert f"could not write the report in {locked / 'r'}" in out["msg"]


# -- the documentation matches the action ---------------------------------------------------


def test_documented_options_match_the_argument_spec() -> None:
    doc = yaml.safe_load(module_doc.DOCUMENTATION)
    assert doc["module"] == "report_write"
    assert_options_documented(doc["options"], action.ARGUMENT_SPEC)
    assert yaml.safe_load(module_doc.EXAMPLES)
    returned = yaml.safe_load(module_doc.RETURN)
    assert set(returned) == {
        "dir",
        "files",
        "written",
        "removed",
        "plots_skipped",
        "table",
        "report",
        "ansible_facts",
        "msg",
    }
    assert set(returned["files"]["contains"]) == {"json", "csv", "summary_csv", "markdown", "html", "raw", "plots"}
    assert {"format", "version", "summary", "sweeps"} <= set(returned["report"]["contains"])


def test_docs_only_module_holds_nothing_but_documentation() -> None:
    assert_docs_only(module_doc)


def test_role_defaults_mirror_the_argument_spec() -> None:
    from tests.collection_path import REPO

    role = REPO / "roles" / "report"
    spec = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    defaults = yaml.safe_load((role / "defaults" / "main.yml").read_text())
    assert set(defaults) == set(spec) - {"report_runs"}
    for name, option in spec.items():
        if name in defaults and "{{" in str(defaults[name]):  # computed: told in the description, not templated
            told = " ".join(option["description"])
            assert "default" not in option and "By default (computed" in told, name
            assert ("C(reports)" if name == "report_base_dir" else "C(/history.sqlite)") in told, name
        elif name in defaults:
            assert defaults[name] == option.get("default"), name


# -- bad input: whose directory, stale plots, no runs ----------------------------------------


def test_no_runs_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    out = _action({"runs": [], "dest": str(tmp_path / "r")}).run(task_vars={})
    assert out["failed"] is True
    assert out["msg"].startswith("esxilab.iperf.report_write: runs is empty: there is no run to report")
    assert not (tmp_path / "r").exists()


def test_a_non_empty_directory_that_is_not_a_report_is_refused_unless_forced(tmp_path: Path) -> None:
    dest = tmp_path / "docs"
    dest.mkdir()
    (dest / "summary.md").write_text("my notes")
    out = _action({"runs": _runs(), "dest": str(dest), "plots": False}).run(task_vars={})
    assert out["failed"] is True
    assert out["msg"] == (
        f"esxilab.iperf.report_write: {dest} is not empty (summary.md) and holds no report of ours "
        "(.esxilab-iperf-report.json is missing), so writing the report there could overwrite or mix with other "
        "files; choose a new or empty directory, or set force=true to write the report there anyway (files of the "
        "same names are replaced, others are kept) (role esxilab.iperf.report: report_force=true, or another "
        "report_dir)"
    )
    assert (dest / "summary.md").read_text() == "my notes"
    forced = _action({"runs": _runs(), "dest": str(dest), "plots": False, "force": True}).run(task_vars={})
    assert not forced.get("failed"), forced.get("msg")
    assert (dest / "summary.md").read_text().startswith("# iperf report: iperf")


def test_rewriting_a_report_removes_only_its_stale_plots(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    dest = tmp_path / "lo"
    args = {"runs": _runs(), "dest": str(dest), "name": "lo", "compare_by": "nic"}
    first = _action(args).run(task_vars={})
    assert not first.get("failed"), first.get("msg")
    assert (dest / "compare-nic-lo.png").exists()
    (dest / "notes.txt").write_text("mine")
    again = _action({**args, "compare_by": None}).run(task_vars={})
    assert not again.get("failed"), again.get("msg")
    stale = sorted(set(first["files"]["plots"]) - set(again["files"]["plots"]))
    assert str(dest / "compare-nic-lo.png") in stale
    assert again["removed"] == stale
    assert again["changed"] is True
    assert f"removed {len(stale)} stale file(s) of the previous report" in again["msg"]
    assert not any(Path(p).exists() for p in stale)
    assert all(Path(p).exists() for p in again["files"]["plots"])
    assert (dest / "notes.txt").read_text() == "mine"
    without = _action({**args, "compare_by": None, "plots": False}).run(task_vars={})
    assert sorted(Path(p).name for p in without["removed"]) == sorted(Path(p).name for p in again["files"]["plots"])
    assert sorted(p.name for p in dest.iterdir()) == sorted([MANIFEST, *BASE_FILES, "notes.txt"])


def test_dest_time_ends_the_directory_with_the_report_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = {
        "runs": _runs()[:1],
        "dest": str(tmp_path / "lo"),
        "name": "lo",
        "plots": False,
        "dest_time": True,
        "generated_at": "2026-12-06T12:00:00Z",
        "print_table": True,
    }
    out = _action(args).run(task_vars={})
    assert not out.get("failed"), out.get("msg")
    assert out["dir"] == str(tmp_path / "lo-20261206T120000Z")
    assert json.loads((tmp_path / "lo-20261206T120000Z" / "results.json").read_text())["generated_at"] == (
        "2026-12-06T12:00:00Z"
    )
    printed = capsys.readouterr().out
    assert "iperf report: lo: 1 run(s)" in printed and "[" not in printed.splitlines()[0]  # text, not a JSON list


def test_check_mode_says_where_the_report_would_be(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = {"runs": _runs()[:1], "dest": str(tmp_path / "lo"), "name": "lo", "plots": False}
    out = _action(args, check_mode=True).run(task_vars={})
    assert not out.get("failed"), out.get("msg")
    assert not (tmp_path / "lo").exists()
    assert f"check mode: no report was written (it would be {tmp_path / 'lo'}/summary.md)" in capsys.readouterr().out


def test_compare_by_a_label_no_run_has_warns_naming_the_labels_there_are(tmp_path: Path) -> None:
    """Issue 21: a typo in compare_by is told at report time (the report is still written: the runs are done)."""
    out = _action({"runs": _runs(), "dest": str(tmp_path / "r"), "compare_by": "nicc", "plots": False}).run(
        task_vars={}
    )
    assert not out.get("failed"), out
    (warning,) = out["warnings"]
    assert warning.startswith(
        "esxilab.iperf.report_write: compare_by='nicc': no run has the label 'nicc', so nothing is compared; the "
        "runs' labels are: "
    )
    assert "nic" in warning.split("labels are: ")[1] and warning.endswith("- fix the name, or unset compare_by")
    out = _action({"runs": _runs(), "dest": str(tmp_path / "s"), "compare_by": "nic", "plots": False}).run(task_vars={})
    assert "warnings" not in out
    out = _action({"runs": _runs(), "dest": str(tmp_path / "t"), "generated_at": "2026-12-01T10:00:00Z",
                   "plots": False}).run(task_vars={})  # fmt: skip
    assert not out.get("failed") and "generated 2026-12-01T10:00:00Z" in (tmp_path / "t" / "summary.md").read_text()
