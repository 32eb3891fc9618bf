# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The paired_test_report action (deprecated): writes the report builder's three files on the controller,
idempotently, under the names it always used."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml

import ansible_collections.esxilab.iperf.plugins.modules.paired_test_report as module_doc
from ansible_collections.esxilab.iperf.plugins.action.paired_test_report import (
    ARGUMENT_SPEC,
    ActionModule,
    file_mode,
    report_paths,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import ReportError
from tests.unit.plugins.action_harness import assert_options_documented, make_action

RECORD: dict[str, Any] = {
    "run": 1, "test": "t", "direction": "forward", "swapped": False, "streams": 2, "repetition": 1,
    "total_bits_per_second": 9.56e8,
    "pairs": [{
        "pair": 1, "server": "h1", "client": "h2", "address": "198.18.0.1", "port": 5201, "sender": "h2",
        "receiver": "h1", "started_at": 1.5, "ok": True, "error": None,
        "result": {"bits_per_second": 9.56e8, "complete": True,
                   "received": {"bytes": 358500000, "bits_per_second": 9.56e8, "seconds": 3.0}},
    }],
}  # fmt: skip


def _action(args: dict[str, Any], check_mode: bool = False) -> ActionModule:
    return make_action(ActionModule, "esxilab.iperf.paired_test_report", args, check_mode=check_mode)


def _run(args: dict[str, Any], check_mode: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = _action(args, check_mode).run(task_vars={})
    return result


def test_documentation_matches_the_argument_spec() -> None:
    options = yaml.safe_load(module_doc.DOCUMENTATION)["options"]
    assert_options_documented(options, ARGUMENT_SPEC)


def test_writes_three_files_then_nothing_to_do(tmp_path: Path) -> None:
    dest = tmp_path / "reports" / "deep"
    args = {"dest": str(dest), "name": "lab-1", "results": [RECORD], "meta": {"began": "x"}}
    # check mode first: reports all three, writes nothing
    check = _run(args, check_mode=True)
    assert check["changed"] is True and len(check["written"]) == 3
    assert not dest.exists()

    first = _run(args)
    assert first["changed"] is True
    assert first["files"] == {
        "json": f"{dest}/lab-1.json",
        "csv": f"{dest}/lab-1.csv",
        "summary_csv": f"{dest}/lab-1-summary.csv",
    }
    doc = json.loads((dest / "lab-1.json").read_text())
    # the report builder's results.json; meta is its environment
    assert (doc["format"], doc["environment"]["began"], doc["runs"][0]["bits_per_second"]) == (
        "esxilab.iperf.report", "x", 9.56e8,
    )  # fmt: skip
    assert (doc["results"][0]["record"]["sender"], doc["results"][0]["record"]["receiver"]) == ("h2", "h1")
    rows = (dest / "lab-1.csv").read_text().splitlines()
    assert (
        rows[1]
        == "1,t,forward,false,2,1,1,h1,h2,198.18.0.1,5201,1.5,,,,,956000000.0,,,,,358500000,956000000.0,,,,,true,,"
        "956000000.0,h2 → h1,,,,,,,,,,,,n/a,n/a,n/a,n/a"  # the run was not read around: NIC deltas n/a
    )
    assert (dest / "lab-1-summary.csv").read_text().startswith("test,direction,swapped,streams,")
    assert stat.S_IMODE((dest / "lab-1.json").stat().st_mode) == 0o644
    assert list(dest.glob(".paired-test-*")) == []

    again = _run(args)
    assert again["changed"] is False and again["written"] == []
    assert _run(args, check_mode=True)["changed"] is False

    changed = _run(args | {"meta": {"began": "y"}, "mode": "0600"})
    assert changed["changed"] is True
    assert changed["written"] == [f"{dest}/lab-1.json", f"{dest}/lab-1.csv", f"{dest}/lab-1-summary.csv"]
    assert stat.S_IMODE((dest / "lab-1.csv").stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"name": "../up"}, "report name '../up' must be a file name"),
        ({"mode": "rw"}, "mode must be an octal file mode"),
        ({"results": [{"results": []}]}, "runs[0] is neither a run record of paired_test_results"),
    ],
)
def test_bad_arguments_fail_with_the_cause(tmp_path: Path, extra: dict[str, Any], message: str) -> None:
    result = _run({"dest": str(tmp_path), "name": "r", "results": [RECORD]} | extra)
    assert result["failed"] is True
    assert message in result["msg"]


def test_dest_that_is_a_file_fails(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("")
    result = _run({"dest": str(target), "name": "r", "results": []})
    assert result["failed"] is True
    assert result["msg"] == f"dest {target} exists and is not a directory; choose another directory"


def test_report_paths() -> None:
    assert report_paths("/srv/reports/", "lab-1") == {
        "json": "/srv/reports/lab-1.json",
        "csv": "/srv/reports/lab-1.csv",
        "summary_csv": "/srv/reports/lab-1-summary.csv",
    }
    for bad in ("../x", "a b", "", "x/y"):
        with pytest.raises(ReportError, match="must be a file name"):
            report_paths("/srv", bad)


def test_file_mode() -> None:
    assert (file_mode("0644"), file_mode("600"), file_mode(0o640)) == (0o644, 0o600, 0o640)
    with pytest.raises(ValueError, match="between 0000 and 0777"):
        file_mode(0o7777)


# -- bad input: empty results, files that are not ours --------------------------------------------


def test_empty_results_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    result = _run({"dest": str(tmp_path / "r"), "name": "r", "results": []})
    assert result["failed"] is True
    assert result["msg"].startswith("esxilab.iperf.paired_test_report: results is empty: there is no run to report")
    assert not (tmp_path / "r").exists()


def test_a_file_that_is_not_ours_is_never_overwritten_unless_forced(tmp_path: Path) -> None:
    (tmp_path / "lab-1.csv").write_text("someone else's table")
    (tmp_path / "other.txt").write_text("kept")
    args = {"dest": str(tmp_path), "name": "lab-1", "results": [RECORD]}
    result = _run(args)
    assert result["failed"] is True
    assert "already holds lab-1.csv, not written by a report of ours" in result["msg"]
    assert "force=true" in result["msg"]
    assert (tmp_path / "lab-1.csv").read_text() == "someone else's table"
    assert not (tmp_path / "lab-1.json").exists()
    # another name in the same directory is fine: earlier reports and other files are kept
    assert _run(args | {"name": "lab-2"})["changed"] is True
    forced = _run(args | {"force": True})
    assert forced["changed"] is True and forced["removed"] == []
    assert (tmp_path / "lab-1.csv").read_text().startswith("run,test,")
    assert (tmp_path / "other.txt").read_text() == "kept"
    assert _run(args)["changed"] is False  # ours now: no force needed to write it again
