# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The search of every frame size over a model link, a trial that fails, and the outputs read from one document."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch import output
from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch.run import search_all
from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch.settings import Settings, check_settings
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.plots import matplotlib_problem, render_all
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.results_json import json_text
from tests.unit.plugins.plugin_utils.ratesearch.iperf_model import shaped, trial_result


def settings(**changes: Any) -> Settings:
    base: dict[str, Any] = {
        "frame_sizes": [64, 512, 1518], "mtu": 1500, "loss_percent": 0.0, "shortfall_percent": 0.5,
        "trial_seconds": 1, "resolution_mbps": 0.5, "min_mbps": 0.0, "max_mbps": 100.0,
    }  # fmt: skip
    return check_settings({**base, **changes})


def test_a_shaped_link_is_found_per_frame_size() -> None:
    """A 50 Mbit/s link counting preamble and gap: 50 * F / (F + 20) Mbit/s of frames, found to 0.5 Mbit/s."""
    seen: list[Any] = []
    results = search_all(settings(), shaped(50.0), seen.append)
    assert [r.frame_size for r in results] == [64, 512, 1518]
    for result in results:
        limit = 50.0 * result.frame_size / (result.frame_size + 20)
        row = result.as_dict()
        assert row["error"] is None and row["bound"] == "resolution"
        assert limit - 0.5 <= row["rate_mbps"] <= limit < row["above_mbps"] <= row["rate_mbps"] + 0.5
        assert row["pps"] == pytest.approx(row["rate_mbps"] * 1e6 / (result.frame_size * 8), rel=1e-5)
        assert row["payload_size"] == result.frame_size - 46
        assert row["loss_percent"] == 0.0 and row["lost_packets"] == 0
        assert row["trials_made"] == len(row["trials"]) <= 1 + 8
        assert row["trials"][0]["verdict"] == "loss" and row["trials"][0]["lost_packets"] > 0
    assert len(seen) == sum(len(r.trials) for r in results)


def test_a_deep_queue_fails_the_rates_above_as_short() -> None:
    """A 1 MB queue absorbs the excess of a 1 s trial: nothing is lost, the receiver gets it late - the search
    still stops at the link, not above it."""
    results = search_all(settings(frame_sizes=[1518]), shaped(50.0, queue_bytes=1 << 20))
    row = results[0].as_dict()
    assert "short" in [t["verdict"] for t in row["trials"]]
    assert 49.35 - 0.5 <= row["rate_mbps"] <= 49.35


def test_a_loss_threshold_admits_the_rates_it_allows() -> None:
    """Excess dropped at once: a trial at r > c loses (r - c) / r; with 10 % allowed the result is about c / 0.9."""
    row = search_all(settings(frame_sizes=[1518], loss_percent=10.0), shaped(50.0))[0].as_dict()
    limit = 50.0 * 1518 / 1538 / 0.9
    assert limit - 0.6 <= row["rate_mbps"] <= limit + 0.1
    assert 5 < row["loss_percent"] <= 10


def test_a_failing_trial_ends_the_search_with_no_rate() -> None:
    calls: list[int] = []

    def dies_at_512(frame: int, payload: int, offered: int) -> dict[str, Any]:
        calls.append(frame)
        if frame == 512 and calls.count(512) == 3:
            return {"failed": True, "msg": "connection refused by 198.19.63.11:25631"}
        return shaped(50.0)(frame, payload, offered)

    results = search_all(settings(), dies_at_512)
    rows = [r.as_dict() for r in results]
    assert rows[0]["error"] is None and rows[0]["rate_mbps"] is not None
    assert rows[1]["rate_mbps"] is None and rows[1]["bound"] is None and rows[1]["trials_made"] == 3
    assert "failed: connection refused by 198.19.63.11:25631" in rows[1]["error"]
    assert rows[2] == {**rows[2], "rate_mbps": None, "trials_made": 0, "trials": []}
    assert rows[2]["error"] == "not searched: the search stopped at frame size 512 (its trial failed)"
    assert 1518 not in calls  # nothing ran after the failure
    doc = output.document(settings(), results, name="t", server="s", client="c", generated_at="2026-12-06T00:00:00Z")
    assert doc["complete"] is False


def test_a_sender_that_falls_short_is_tried_again_once() -> None:
    """A busy sender misses the offered rate once (repeated: the second attempt passes), then twice (a failure)."""
    attempts: dict[int, int] = {}

    def busy(frame: int, payload: int, offered: int) -> dict[str, Any]:
        attempts[offered] = attempts.get(offered, 0) + 1
        if offered < 30e6 and attempts[offered] == 1:
            return trial_result(payload, offered, sent_fraction=0.9)
        if offered >= 30e6:
            return trial_result(payload, offered, sent_fraction=0.9)
        return trial_result(payload, offered)

    row = search_all(settings(frame_sizes=[1518], resolution_mbps=5.0), busy)[0].as_dict()
    verdicts = [(round(t["rate_mbps"], 3), t["verdict"]) for t in row["trials"]]
    assert verdicts[:3] == [(100.0, "sender"), (100.0, "sender"), (50.0, "sender")]
    assert (25.0, "sender") in verdicts and (25.0, "pass") in verdicts
    assert row["rate_mbps"] is not None and row["rate_mbps"] < 30e6 * 1518 / 1472 / 1e6
    assert row["trials_made"] == len(verdicts)


def test_a_receiver_late_once_is_tried_again_and_loss_never() -> None:
    """A busy receiver reads late once (short, repeated, then passes); a loss verdict is never repeated."""
    attempts: dict[int, int] = {}

    def late_once(frame: int, payload: int, offered: int) -> dict[str, Any]:
        attempts[offered] = attempts.get(offered, 0) + 1
        if offered > 60e6:
            return trial_result(payload, offered, lost=10)
        return trial_result(payload, offered, late=0.05 if attempts[offered] == 1 else 0.0)

    row = search_all(settings(frame_sizes=[1518], resolution_mbps=10.0), late_once)[0].as_dict()
    verdicts = [(round(t["rate_mbps"], 3), t["verdict"]) for t in row["trials"]]
    assert verdicts[:3] == [(100.0, "loss"), (50.0, "short"), (50.0, "pass")]
    assert [rate for rate, _verdict in verdicts].count(100.0) == 1


def test_max_mbps_passing_says_so() -> None:
    row = search_all(settings(frame_sizes=[1518], max_mbps=10.0, resolution_mbps=1.0), shaped(50.0))[0].as_dict()
    assert row["bound"] == "max_mbps" and row["rate_mbps"] == 10.0 and row["above_mbps"] is None
    assert row["trials_made"] == 1


def test_nothing_passing_has_no_rate() -> None:
    def lossy(frame: int, payload: int, offered: int) -> dict[str, Any]:
        return trial_result(payload, offered, lost=3)

    row = search_all(settings(frame_sizes=[1518], min_mbps=1.0), lossy)[0].as_dict()
    assert row["rate_mbps"] is None and row["bound"] == "none" and row["pps"] is None and row["error"] is None
    assert row["trials"][-1]["rate_mbps"] == 1.0  # min_mbps tried last


def test_the_outputs_read_one_document() -> None:
    results = search_all(settings(frame_sizes=[64, 1518]), shaped(50.0))
    doc = output.document(
        settings(frame_sizes=[64, 1518]), results, name="vsw <b>", server="198.19.63.11", client="h2",
        generated_at="2026-12-06T00:00:00Z",
    )  # fmt: skip
    assert doc["format"] == "esxilab.iperf.rate-search" and doc["version"] == 1 and doc["complete"] is True
    assert json.loads(json_text(doc)) == doc  # the file is the document
    sizes = list(csv.DictReader(io.StringIO(output.sizes_csv(doc))))
    assert [row["frame_size"] for row in sizes] == ["64", "1518"]
    assert float(sizes[0]["rate_mbps"]) == doc["results"][0]["rate_mbps"]
    assert float(sizes[1]["pps"]) == doc["results"][1]["pps"]
    trials = list(csv.DictReader(io.StringIO(output.trials_csv(doc))))
    assert len(trials) == sum(len(r["trials"]) for r in doc["results"])
    assert trials[0]["trial"] == "1" and trials[0]["verdict"] == "loss"
    specs = output.plot_specs(doc)
    assert [s.file for s in specs] == ["rate-search-mbps.png", "rate-search-pps.png"]
    assert specs[0].series[0].x == (64.0, 1518.0) and specs[0].x_log2 is True
    assert specs[0].series[0].y == tuple(r["rate_mbps"] for r in doc["results"])
    assert specs[1].series[0].y == tuple(r["pps"] for r in doc["results"])
    markdown = output.markdown(doc, specs, None)
    assert "# Rate search: vsw &lt;b>" in markdown  # text from the input is inert
    rate = doc["results"][1]["rate_mbps"]
    assert f"| 1518 | 1472 | {rate:.3f} (< {doc['results'][1]['above_mbps']:.3f}) |" in markdown
    assert "![vsw <b>: highest rate with loss <= 0 %](rate-search-mbps.png)" not in markdown
    assert "](rate-search-mbps.png)" in markdown


def test_no_rate_no_plot() -> None:
    def lossy(frame: int, payload: int, offered: int) -> dict[str, Any]:
        return trial_result(payload, offered, lost=3)

    results = search_all(settings(frame_sizes=[1518]), lossy)
    doc = output.document(settings(frame_sizes=[1518]), results, name="n", server="s", client=None, generated_at="x")
    assert output.plot_specs(doc) == []
    assert "| 1518 | 1472 | none (below " in output.markdown(doc, [], "no frame size has a rate to plot")


@pytest.mark.skipif(matplotlib_problem() is not None, reason="matplotlib is not installed")
def test_the_plots_are_drawn() -> None:
    results = search_all(settings(frame_sizes=[64, 512, 1518]), shaped(50.0))
    doc = output.document(settings(), results, name="n", server="s", client="c", generated_at="x")
    images, problems = render_all(output.plot_specs(doc))
    assert problems == [] and sorted(images) == ["rate-search-mbps.png", "rate-search-pps.png"]
    assert all(image.startswith(b"\x89PNG") for image in images.values())
