# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Figures measured outside the inventory are claims (``paired/claims.py``): each implausible figure is named, an
honest result passes, and the record of a pair with an end outside the inventory becomes incomplete with a warning
naming the peer (``paired/record.py``) - and such a run is never a sample of the history (``report/history.py``)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.claims import implausible, line_rate_of
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.planned import PlannedRun
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.record import build_record
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history import entries_of
from tests.collection_path import FIXTURES

CLIENT_JSON = (FIXTURES / "iperf3-3.1.3-json-client-tcp-pscheduler.json").read_text()
OUTSIDE = {"client": "h2", "address": "198.18.1.50", "port": 5301, "external": {"server": True}}


def honest() -> dict[str, Any]:
    return {
        "protocol": "tcp",
        "streams": 2,
        "bits_per_second": 9.4e8,
        "sent": {"bytes": 1_180_000_000, "bits_per_second": 9.45e8, "retransmits": 3},
        "received": {"bytes": 1_175_000_000, "bits_per_second": 9.4e8},
        "cpu": {"local_percent": 30.0, "remote_percent": 55.0},
        "udp": None,
        "intervals": [],
    }


def with_(path: str, value: Any) -> dict[str, Any]:
    result = honest()
    *parents, key = path.split(".")
    target: dict[str, Any] = result
    for name in parents:
        target = target[name]
    target[key] = value
    return result


def test_an_honest_result_is_plausible() -> None:
    assert implausible(honest(), line_rate_bps=1e9) == []
    assert implausible(honest(), line_rate_bps=None) == []
    assert implausible(parse(CLIENT_JSON), line_rate_bps=None) == []


@pytest.mark.parametrize(
    ("path", "value", "needle"),
    [
        ("received.bytes", 1_175_000_000_000, "the receiver's 1175000000000 bytes are more than the sender's"),
        ("bits_per_second", float("nan"), "bits_per_second is nan, not a finite number"),
        ("received.bits_per_second", float("inf"), "received.bits_per_second is inf, not a finite number"),
        ("sent.bytes", -5, "sent.bytes is -5, below 0"),
        ("received.bits_per_second", 7e19, "received.bits_per_second 7e+19 bit/s is above the line rate 1e+09 bit/s"),
        ("bits_per_second", 1.06e9, "bits_per_second 1.06e+09 bit/s is above the line rate"),
        ("cpu.remote_percent", 1e9, "the peer's CPU 1e+09 % is above 300 % (100 % per thread: 2 stream(s) + 1)"),
        ("cpu.remote_percent", -1.0, "cpu.remote_percent is -1, below 0"),
        ("sent.retransmits", "many", "sent.retransmits is 'many', not a finite number"),
    ],
)
def test_each_implausible_figure_is_named(path: str, value: Any, needle: str) -> None:
    problems = implausible(with_(path, value), line_rate_bps=1e9)
    assert any(needle in p for p in problems), problems


def test_the_bounds_are_inclusive_and_udp_gets_one_datagram_per_stream() -> None:
    assert implausible(with_("bits_per_second", 1.05e9), line_rate_bps=1e9) == []
    assert implausible(with_("cpu.remote_percent", 300.0), line_rate_bps=None) == []
    udp = {**honest(), "protocol": "udp"}
    udp["udp"] = {"lost_percent": 0.0, "jitter_ms": 0.01, "packets": 10, "lost_packets": 0}
    udp["received"] = {"bytes": udp["sent"]["bytes"] + 2 * 65535, "bits_per_second": 9.4e8}
    assert implausible(udp, line_rate_bps=1e9) == []
    udp["received"]["bytes"] += 1
    assert any("(+ 131070 allowed)" in p for p in implausible(udp, line_rate_bps=1e9))
    udp["udp"]["lost_percent"] = 200.0
    assert any("udp.lost_percent 200 is above 100" in p for p in implausible(udp, line_rate_bps=1e9))


def test_omitted_intervals_allow_bytes_in_flight() -> None:
    result = with_("received.bytes", 1_190_000_000)  # 0.8 % more than sent: the receiver restarted its count first
    assert implausible(result, line_rate_bps=None)
    result["intervals"] = [{"start": 0.0, "end": 1.0, "bytes": 1, "bits_per_second": 8.0, "omitted": True}]
    assert implausible(result, line_rate_bps=None) == []


def test_the_line_rate_comes_from_the_labels() -> None:
    assert line_rate_of({"line_rate_bps": 1e9, "link_speed_mbps": 10}) == 1e9
    assert line_rate_of({"link_speed_mbps": 100}) == 1e8
    assert line_rate_of({"line_rate_bps": 0}) is None and line_rate_of({}) is None


# ------------------------------------------------------------------------------------------
# The record and the history
# ------------------------------------------------------------------------------------------


def _run() -> PlannedRun:
    plan = build_plan(
        [{"name": "win", "pairs": [OUTSIDE], "labels": {"line_rate_bps": 1e9}}],
        addresses={"h1": "198.18.0.11", "h2": "198.18.0.12"},
        address_var="lab_address",
        inventory_hosts=["h1", "h2"],
        play_hosts=["h1", "h2"],
    )
    run: PlannedRun = plan["runs"][0]
    return run


def _record(raw: str) -> dict[str, Any]:
    run = _run()
    item = {"item": {"run": run["run"], "pair": 1}, "started_at": 1.0, "command": "iperf3 -c", "result": parse(raw),
            "raw": raw}  # fmt: skip
    return dict(build_record(run, [{"host": "h2", "clients": {"results": [item]}}]))


def hostile_json() -> str:
    """The recorded client output with what a hostile server claims: 1000 x the bytes, its CPU at 1e9 %."""
    doc = json.loads(CLIENT_JSON)
    end = doc["end"]
    end["sum_received"]["bytes"] *= 1000
    end["sum_received"]["bits_per_second"] *= 1000
    for stream in end["streams"]:
        stream["receiver"]["bytes"] *= 1000
        stream["receiver"]["bits_per_second"] *= 1000
    end["cpu_utilization_percent"]["remote_total"] = 1e9
    return json.dumps(doc)


def test_an_implausible_external_server_makes_the_run_incomplete_and_is_named() -> None:
    honest_record = _record(CLIENT_JSON)
    assert honest_record["complete"] and honest_record["warnings"] == []
    raw = hostile_json()
    record = _record(raw)
    (pair,) = record["pairs"]
    assert pair["ok"] and pair["raw"] == raw  # the figure and the raw output are kept
    assert record["complete"] is False and record["ok"] is True
    (warning,) = record["warnings"]
    assert warning.startswith("pair 1: the result is incomplete (implausible figures claimed by the external server "
                              "198.18.1.50:5301 (outside the inventory): the receiver's ")  # fmt: skip
    assert "the peer's CPU 1e+09 %" in warning and "above the line rate 1e+09 bit/s x 1.05" in warning
    assert "never a baseline" in warning


def test_an_implausible_external_client_claim_is_named() -> None:
    """Clients outside the inventory: the server's log holds the sender's bytes as the client claimed them."""
    spec = {"server": "esx1", "address": "198.18.0.10", "external": {"count": 1, "deadline": 60}}
    run = build_plan([{"name": "win", "pairs": [spec]}], inventory_hosts=["esx1"], play_hosts=["esx1"])["runs"][0]
    item = {"run": run["run"], "pair": 1}
    result = {**honest(), "side": "server", "complete": True, "warnings": [], "raw": "the server's log"}
    result["sent"] = {"bytes": 0, "bits_per_second": 0.0}  # the client claims it sent nothing
    test = {"peer": "198.18.0.77", "counted": True, "ended": True, "group": 1, "result": result}
    collect = {"item": item, "came": 1, "reason": "all_came", "server_stop": "stopped", "tests": [test]}
    reports = [{"host": "esx1", "servers": {"results": [{"item": item, "pid": 1}]}, "collects": {"results": [collect]}}]
    record = build_record(run, reports)
    (pair,) = record["pairs"]
    assert record["complete"] is False and pair["raw"] == "the server's log"
    assert any("claimed by the external client 198.18.0.77 (outside the inventory)" in w for w in record["warnings"])


def test_an_incomplete_run_is_never_a_sample_of_the_history() -> None:
    def document(complete: bool) -> dict[str, Any]:
        run = {"test": "t", "direction": "forward", "swapped": False, "streams": 1, "protocol": "tcp", "pairs": 0,
               "labels": {}, "bits_per_second": 1e14, "complete": complete}  # fmt: skip
        return {"format": "esxilab.iperf.report", "runs": [run], "results": []}

    (entry,) = entries_of(document(False))
    assert entry.runs == 1 and entry.samples == [] and entry.mean is None
    (entry,) = entries_of(document(True))
    assert entry.samples == [1e14]
    old = copy.deepcopy(document(True))
    del old["runs"][0]["complete"]  # a results.json written before the key existed: its runs count
    assert entries_of(old)[0].samples == [1e14]
