# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``report.html`` (``report/html.py``): rendered from the results.json document - every number cell is the
figure at its path -, self-contained (data: images, a CSP meta tag, no script, no external URL, hostile labels
inert), its raw outputs linked, and its gate section rendered anew by ``run_gate`` from the document it writes.
The same page in a real browser: ``tests/integration/test_report_html_browser.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import build_report
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.gate import Limits
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.gate_run import run_gate
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history_url import parse_target
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.html import (
    CSP,
    GATE_BEGIN,
    HTML_FILE,
    html_files,
    raw_files,
    to_html,
    with_gate,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.results_json import json_text, report_doc
from tests.collection_path import FIXTURES
from tests.html_checks import check_numbers, external_urls, parse_page

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
HOSTILE = '<img src="https://evil.example/x.png" onerror=alert(1)> \u202eevil'


def _runs() -> list[dict[str, Any]]:
    out = []
    for name, nic in (
        ("iperf3-ge3.2-text-client-basic-tcp-t2-lablog.txt", "e1000"),
        ("iperf3-3.0or3.1-text-client-tcp-attfiber.txt", "vmxnet3"),
        ("iperf3-3.17.1-text-client-error-unable-to-connect.txt", "vmxnet3"),
    ):
        result: dict[str, Any] = parse((FIXTURES / name).read_text(), keep_raw=True)
        result["labels"] = {"test": "lo", "nic": nic, "note": HOSTILE}
        out.append(result)
    return out


def _document() -> dict[str, Any]:
    environment = {"site": "http://wiki.example/lab", "nics": [{"name": "vmnic1", "speed": 10000}]}
    report = build_report(_runs(), name="lo", compare_by="nic", line_rate_bps=1e9, environment=environment)
    return report_doc(report)


def test_every_number_on_the_page_is_the_figure_at_its_path() -> None:
    document = _document()
    page = parse_page(to_html(document, [("throughput", PNG)], files=["results.json", "summary.md"]))
    figures = check_numbers(page, document)
    assert figures >= 12  # summary, comparison and runs hold figures (not only n/a)
    paths = {cell["path"] for cell in page.cells}
    assert {"summary/0/stats/mean", "runs/0/bits_per_second", "comparison/rows/0/means/vmxnet3"} <= paths
    assert document["summary"][0]["stats"]["mean"] == 796e6


def test_the_page_is_self_contained_and_hostile_text_is_inert() -> None:
    text = to_html(_document(), [("throughput", PNG)], files=["results.json", "summary.md"])
    page = parse_page(text)
    assert page.csp == CSP and "default-src 'none'" in CSP and "img-src data:" in CSP
    assert external_urls(page) == []
    assert [u for u in page.urls if u[0] == "img"] == [
        ("img", "src", "data:image/png;base64,iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAA")
    ]
    assert not {"script", "link", "iframe", "object", "embed", "base"} & set(page.tags)
    assert "url(" not in text and "@import" not in text
    # the hostile label is text: no tag of it, the bidi override shown as its escape
    assert page.tags.count("img") == 1
    assert "&lt;img src=&quot;https://evil.example/x.png&quot; onerror=alert(1)&gt;" in text
    assert "\u202e" not in text and "\\u202eevil" in text
    assert "http://wiki.example/lab" in "".join(page.texts)  # shown as text, never as a link
    assert ("a", "href", "results.json") in page.urls and ("a", "href", "summary.md") in page.urls


def test_raw_outputs_are_written_beside_and_linked() -> None:
    document = _document()
    raws = raw_files(document)
    assert sorted(name for name, _text in raws.values()) == ["raw-run1-1.txt", "raw-run2-1.txt", "raw-run3-1.txt"]
    name, raw = raws[1]
    assert raw == document["results"][1]["result"]["raw"] and "721 Mbits/sec" in raw
    files = html_files(document)
    assert set(files) == {HTML_FILE, "raw-run1-1.txt", "raw-run2-1.txt", "raw-run3-1.txt"}
    assert files[name] == raw.encode()
    assert ("a", "href", "raw-run2-1.txt") in parse_page(files[HTML_FILE].decode()).urls


def test_the_gate_fills_in_its_section_of_the_page(tmp_path: Path) -> None:
    first, second = tmp_path / "r1", tmp_path / "r2"
    for directory, scale, when in ((first, 1.0, "2026-12-01T00:00:00Z"), (second, 0.5, "2026-12-01T01:00:00Z")):
        runs = _runs()[:2]
        for run in runs:
            run["bits_per_second"] *= scale
        document = report_doc(build_report(runs, name="lo", generated_at=when))
        directory.mkdir()
        (directory / "results.json").write_text(json_text(document))
        (directory / "summary.md").write_text("# report\n")
        (directory / HTML_FILE).write_text(to_html(document))
    before = (second / HTML_FILE).read_text()
    assert "Not compared" in before and before.count(GATE_BEGIN) == 1
    outcome = run_gate(str(second), target=parse_target("none"), password=None,
                       baseline=str(first / "results.json"), limits=Limits(max_drop_percent=5),
                       now="2026-12-01T02:00:00Z", check_mode=False)  # fmt: skip
    assert str(second / HTML_FILE) in outcome.written
    after = (second / HTML_FILE).read_text()
    written = json.loads((second / "results.json").read_text())
    verdict = "Gate: passed" if written["gate"]["passed"] else "Gate: FAILED"
    assert after.count(GATE_BEGIN) == 1 and verdict in after and "Not compared" not in after
    assert written["gate"]["checks"][0]["limit"] == "drop <= 5 %" and "drop &lt;= 5 %" in after
    assert external_urls(parse_page(after)) == []  # the gate's text (labels) stays text
    page = parse_page(after)
    check_numbers(page, written)
    assert any(c["path"].startswith("baseline/comparisons/0/") for c in page.cells)
    # the rest of the page is the page report_write wrote; a page without the section is left alone
    assert after.split(GATE_BEGIN)[0] == before.split(GATE_BEGIN)[0]
    assert with_gate("<p>not ours</p>", written) == "<p>not ours</p>"
