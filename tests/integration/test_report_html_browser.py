# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``report.html`` in a real headless browser (Debian's ``chromium``), with no network.

The report is written by the action ``report_write`` (real matplotlib plots) from iperf outputs of the fixture
corpus, then gated against an earlier report by ``run_gate`` (what ``report_gate`` runs), so the page holds plots,
a comparison, the baseline and the gate, and raw output links. Chromium runs in a fresh network namespace
(``unshare --net``: only a loopback, down) with ``--dump-dom`` and ``--screenshot``, and writes its network log
(``--log-net-log``):

* it renders: the dumped DOM has the title, every plot as an ``img``, the runs, the gate's verdict, and the
  screenshot is a real picture;
* its numbers are results.json's: every number cell of the *dumped DOM* carries the figure at its path;
* it loads nothing from outside: the DOM has no URL but ``data:`` images and relative links, the CSP meta tag
  is there, and the network log has no request made for the page. The same check on a page with one external
  image finds that image (the check can fail).

No lab and no ansible-playbook: about 5 s. Skipped without ``chromium`` (Makefile ``APT_PACKAGES``) or
``unshare``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.action.report_write import ActionModule
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.gate import Limits
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.gate_run import run_gate
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history_url import parse_target
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.html import CSP
from tests.collection_path import FIXTURES
from tests.html_checks import check_numbers, external_urls, parse_page
from tests.unit.plugins.action_harness import make_action

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium")
UNSHARE = shutil.which("unshare")
BROWSER_TIMEOUT = 60
# Chromium's own background requests (component updater, time, spelling) are turned off; the network log is read
# for the page's requests only (their isolation key is the page's file:// site).
FLAGS = [
    "--headless",
    "--no-sandbox",  # root in CI
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--no-first-run",
    "--no-pings",
    "--disable-features=Translate,OptimizationHints,MediaRouter,SpellCheck",
]
FIXTURE_RUNS = [
    ("iperf3-ge3.2-text-client-basic-tcp-t2-lablog.txt", "e1000"),
    ("iperf3-3.0or3.1-text-client-tcp-attfiber.txt", "vmxnet3"),
    ("iperf3-ge3.2-text-client-tcp-moler.txt", "vmxnet3"),
    ("iperf3-3.17.1-text-client-error-unable-to-connect.txt", "vmxnet3"),
]


def _runs(scale: float) -> list[dict[str, Any]]:
    out = []
    for name, nic in FIXTURE_RUNS:
        result: dict[str, Any] = parse((FIXTURES / name).read_text(), keep_raw=True)
        if isinstance(result.get("bits_per_second"), float):
            result["bits_per_second"] *= scale
        result["labels"] = {"test": "nic", "nic": nic}
        out.append(result)
    return out


def _write(dest: Path, scale: float, generated_at: str) -> dict[str, Any]:
    args = {"runs": _runs(scale), "dest": str(dest), "name": "nic", "compare_by": "nic", "line_rate_bps": 1e10,
            "generated_at": generated_at, "timeseries_min_seconds": 0, "environment": {"mtu": 9000}}  # fmt: skip
    out: dict[str, Any] = make_action(ActionModule, "esxilab.iperf.report_write", args).run(task_vars={})
    assert not out.get("failed"), out.get("msg")
    return out


def _browse(page: Path, work: Path, *extra: str) -> tuple[str, list[str]]:
    """Chromium on ``page`` in a new network namespace: its stdout and the URLs the page asked for (network log)."""
    profile, netlog = work / "profile", work / f"{page.stem}-{len(extra)}.netlog.json"
    shutil.rmtree(profile, ignore_errors=True)
    argv = [str(UNSHARE), "--net", "--", str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}",
            f"--log-net-log={netlog}", *extra, page.as_uri()]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=BROWSER_TIMEOUT, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    events = json.loads(netlog.read_text())["events"]
    asked = sorted(
        {
            str(e["params"]["url"])
            for e in events
            if isinstance(e.get("params"), dict)
            and "url" in e["params"]
            and "file://" in str(e["params"].get("network_isolation_key", ""))
            and not str(e["params"]["url"]).startswith(("file:", "data:"))
        }
    )
    return proc.stdout, asked


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if CHROMIUM is None or UNSHARE is None:
        pytest.skip("chromium and unshare are needed (apt-get install chromium; Makefile APT_PACKAGES)")
    pytest.importorskip("matplotlib")
    if os.geteuid() != 0:
        pytest.skip("unshare --net needs root")
    work = tmp_path_factory.mktemp("html")
    _write(work / "before", 1.25, "2026-12-01T00:00:00Z")
    out = _write(work / "now", 1.0, "2026-12-01T01:00:00Z")
    outcome = run_gate(out["dir"], target=parse_target("none"), password=None,
                       baseline=str(work / "before" / "results.json"), limits=Limits(max_drop_percent=5),
                       now="2026-12-01T02:00:00Z", check_mode=False)  # fmt: skip
    page = Path(out["files"]["html"])
    assert str(page) in outcome.written
    dom, asked = _browse(page, work, "--dump-dom")
    shot = work / "shot.png"
    _shot_out, shot_asked = _browse(page, work, f"--screenshot={shot}", "--window-size=1200,2400")
    document = json.loads((Path(out["dir"]) / "results.json").read_text())
    return {"out": out, "dom": dom, "asked": asked + shot_asked, "shot": shot, "document": document, "work": work}


def test_the_page_renders(written: dict[str, Any]) -> None:
    page = parse_page(written["dom"])
    document = written["document"]
    assert "<h1>iperf report: nic</h1>" in written["dom"]
    assert page.tags.count("img") == len(written["out"]["files"]["plots"]) >= 2  # comparison + time series
    assert page.tags.count("details") == len(document["runs"]) == 4
    assert (
        document["gate"]["checks"]
        and ("Gate: passed" if document["gate"]["passed"] else "Gate: FAILED") in (written["dom"])
    )
    from matplotlib.image import imread

    pixels = imread(written["shot"])
    assert pixels.shape[:2] == (2400, 1200) and pixels.std() > 0.05  # a picture, not a blank page


def test_the_numbers_in_the_dom_are_those_of_results_json(written: dict[str, Any]) -> None:
    page = parse_page(written["dom"])
    assert check_numbers(page, written["document"]) >= 15
    paths = {cell["path"] for cell in page.cells}
    assert {"summary/0/stats/mean", "comparison/rows/0/means/vmxnet3", "baseline/comparisons/0/now/mean"} <= paths
    assert page.cells[0]["text"]  # the browser kept the text


def test_the_page_loads_nothing_from_outside(written: dict[str, Any]) -> None:
    page = parse_page(written["dom"])
    assert page.csp == CSP
    assert external_urls(page) == []
    assert written["asked"] == []
    raw = [u[2] for u in page.urls if u[2].startswith("raw-")]
    assert raw and all((Path(written["out"]["dir"]) / name).is_file() for name in raw)


def test_the_network_check_finds_an_external_image(written: dict[str, Any]) -> None:
    """The control: a page with one external image (a lab address; the namespace has no route anyway)."""
    canary = written["work"] / "canary.html"
    canary.write_text('<!DOCTYPE html><html><body><img src="http://198.18.165.9/x.png"></body></html>\n')
    dom, asked = _browse(canary, written["work"], "--dump-dom")
    assert asked == ["http://198.18.165.9/x.png"]
    assert external_urls(parse_page(dom)) == [("img", "src", "http://198.18.165.9/x.png")]
