# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The rate_search action: bad input refused before any trial, the plan, check mode, and a search over a model link
whose trials come back as iperf_run's results (its steps are counted: one per trial, nothing before the checks)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.esxilab.iperf.plugins.action import rate_search as action
from ansible_collections.esxilab.iperf.plugins.action.rate_search import ActionModule
from ansible_collections.esxilab.iperf.plugins.modules import rate_search as module_doc
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.files import MANIFEST
from tests.unit.plugins.action_harness import assert_docs_only, assert_options_documented, make_action
from tests.unit.plugins.plugin_utils.ratesearch.iperf_model import shaped

BASE: dict[str, Any] = {"server": "198.19.63.11", "max_mbps": 80, "frame_sizes": [1518], "resolution_mbps": 2.5}


class Stepping(ActionModule):
    """The action with its iperf_run steps answered by a model link (and recorded)."""

    steps: list[Mapping[str, Any]]

    def _step(self, name: str, args: Mapping[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        self.steps.append({"name": name, **args})
        frame = int(args["length"]) + 46
        return shaped(50.0)(frame, int(args["length"]), int(args["bandwidth"]))


def run(check_mode: bool = False, **args: Any) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    plugin = make_action(Stepping, "esxilab.iperf.rate_search", args, check_mode=check_mode)
    plugin.steps = []
    result: dict[str, Any] = plugin.run(task_vars={"inventory_hostname": "h2"})
    return result, plugin.steps


def test_documentation_matches_the_argument_spec() -> None:
    assert_docs_only(module_doc)
    assert_options_documented(yaml.safe_load(module_doc.DOCUMENTATION)["options"], action.ARGUMENT_SPEC)


def test_an_unknown_option_is_named_with_the_closest_one_before_anything_runs() -> None:
    result, steps = run(**BASE, loss_precent=0.1)
    assert result["failed"] is True and steps == []
    assert result["msg"].startswith(
        "esxilab.iperf.rate_search: unknown option(s) loss_precent (did you mean loss_percent?); the options are "
    )


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"loss_percent": -0.5}, "loss_percent (role variable rate_search_loss_percent) is -0.5"),
        ({"resolution_mbps": 0}, "resolution_mbps (role variable rate_search_resolution_mbps) is 0.0"),
        ({"frame_sizes": [1518, 2000]}, "frame_sizes (role variable rate_search_frame_sizes) item 2 is 2000: above"),
        ({"frame_sizes": [9018], "mtu": 1500}, "largest frame of the path, 1518 bytes (MTU 1500 + 18"),
    ],
)
def test_bad_settings_fail_before_any_trial(changes: dict[str, Any], expected: str) -> None:
    result, steps = run(**{**BASE, **changes})
    assert result["failed"] is True and steps == [], result
    assert result["msg"].startswith("esxilab.iperf.rate_search: ") and expected in result["msg"]


def test_a_wrong_type_is_ansibles_own_error() -> None:
    result, steps = run(**{**BASE, "trial_seconds": "soon"})
    assert result["failed"] is True and steps == [] and "trial_seconds" in result["msg"]


def test_plan_mode_and_check_mode_run_nothing() -> None:
    planned, steps = run(**BASE, mode="plan")
    assert not planned.get("failed") and steps == [] and planned["changed"] is False
    assert planned["plan"]["trials_per_size"] == 1 + 5 and planned["plan"]["server_timeout"] == 6 * (2 + 5) + 60
    assert planned["msg"] == "the search would make at most 6 trial(s) of 2 s"
    checked, steps = run(check_mode=True, **BASE)
    assert steps == [] and checked["msg"].startswith("check mode: the search would make") and "results" not in checked


def test_a_search_runs_one_iperf_run_client_per_trial_and_writes_the_report(tmp_path: Path) -> None:
    dest = tmp_path / "report"
    result, steps = run(**{**BASE, "frame_sizes": [512, 1518]}, dest=str(dest), port=25631, bind="198.19.63.12")
    assert not result.get("failed"), result
    doc = result["results"]
    assert result["ansible_facts"] == {"rate_search_results": doc}
    assert [row["frame_size"] for row in doc["results"]] == [512, 1518]
    assert len(steps) == sum(row["trials_made"] for row in doc["results"])
    first = steps[0]
    assert first == {
        "name": "iperf_run", "mode": "client", "server": "198.19.63.11", "port": 25631, "protocol": "udp",
        "bandwidth": str(first["bandwidth"]), "length": "466", "duration": 2, "interval": 0, "timeout": 32,
        "state_dir": "/tmp", "labels": {"rate_search": "rate-search", "frame_size": 512}, "bind": "198.19.63.12",
    }  # fmt: skip
    assert int(first["bandwidth"]) == round(80e6 * 466 / 512)  # max_mbps of frames as iperf's payload rate
    assert doc["client"] == "h2" and doc["server"] == "198.19.63.11"
    assert json.loads((dest / "rate-search.json").read_text()) == doc  # the file is what the task returned
    assert (dest / "rate-search.csv").read_text().splitlines()[1].startswith("512,466,")
    assert "rate-search.json" in json.loads((dest / MANIFEST).read_text())["reports"]["rate_search"]
    assert result["files"]["json"] == str(dest / "rate-search.json") and result["changed"] is True
    assert result["msg"].startswith("2 frame size(s) searched in ")


def test_a_failing_trial_fails_the_task_after_writing_what_it_has(tmp_path: Path) -> None:
    class Dies(Stepping):
        def _step(self, name: str, args: Mapping[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
            self.steps.append(args)
            return {"failed": True, "msg": "connection refused by 198.19.63.11:5201"}

    plugin = make_action(Dies, "esxilab.iperf.rate_search", {**BASE, "dest": str(tmp_path)})
    plugin.steps = []
    result = plugin.run(task_vars={})
    assert result["failed"] is True and len(plugin.steps) == 1
    assert result["msg"] == (
        "esxilab.iperf.rate_search: the search did not finish - 1518 B: the trial at 80 Mbit/s failed: connection "
        "refused by 198.19.63.11:5201"
    )
    assert json.loads((tmp_path / "rate-search.json").read_text())["results"][0]["rate_mbps"] is None


def test_a_foreign_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    result, _steps = run(**BASE, dest=str(tmp_path))
    assert result["failed"] is True and "rate_search_report_force" in result["msg"]
    assert (tmp_path / "notes.txt").read_text() == "mine"
