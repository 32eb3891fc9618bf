# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""iperf3 ``-J`` / ``--json-stream`` parser: every JSON file of the corpus, plus hand-written documents.

Figures asserted for the fixtures were read from the fixture files themselves. The
hand-written documents (built below as dicts, or as text where duplicate keys are needed)
follow the layouts of iperf3's ``src/iperf_api.c`` for the versions named in each test.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf3_json import (
    document_problem,
    parse_iperf3_json,
    parse_iperf3_json_stream,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.json_decode import duplicate_sums_possible
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse_result
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.result import (
    IperfParseError,
    IperfResult,
    Result,
    plain,
)
from tests.collection_path import FIXTURES, SCHEMA

VALIDATOR = Draft202012Validator(json.loads(SCHEMA.read_text()))
JSON_FIXTURES = sorted(FIXTURES.glob("iperf3-*.json")) + sorted(FIXTURES.glob("iperf3-*.jsonl"))
approx = pytest.approx


def _read(name: str) -> str:
    return (FIXTURES / name).read_bytes().decode("utf-8")


def _valid(result: IperfResult) -> Result:
    errors = sorted(VALIDATOR.iter_errors(result), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
    server_output = result.get("server_output")
    if isinstance(server_output, dict):
        _valid(server_output)
    for key in ("reverse_sent", "reverse_received"):
        if key in result:
            sub = VALIDATOR.schema["$defs"]["totals"]
            assert not list(Draft202012Validator(sub).iter_errors(result[key])), key
    return plain(result)


# A -J server's log of several tests: one JSON document per test, one after the other.
SEVERAL_DOCUMENTS = {"iperf3-3.12-json-server-tcp-udp-2-tests-stopped-idle-locallab.json"}


def _parse_file(path: Path) -> dict[str, Any]:
    text = path.read_bytes().decode("utf-8")
    if path.suffix == ".jsonl":
        return _valid(parse_iperf3_json_stream(text))
    if path.name in SEVERAL_DOCUMENTS:
        return _valid(parse_result(text))  # the dispatcher splits the documents (iperf.parse.split_tests)
    return _valid(parse_iperf3_json(None, text))


def _totals(result_totals: dict[str, Any] | None) -> tuple[Any, ...] | None:
    if result_totals is None:
        return None
    return (
        result_totals["bytes"],
        result_totals["bits_per_second"],
        result_totals.get("seconds"),
        result_totals.get("retransmits"),
    )


# --------------------------------------------------------------------------- every fixture

# file -> expected figures (copied from the fixture text).
#   sent/received: (bytes, bits_per_second, seconds, retransmits) or None
#   interval: (index, start, end, bytes, bits_per_second, retransmits, omitted)
EXPECTED: dict[str, dict[str, Any]] = {
    "iperf3-3.1.3-json-client-tcp-pscheduler.json": {
        "tool_version": "3.1.3",
        "side": "client",
        "protocol": "tcp",
        "reverse": False,
        "bidir": False,
        "streams": 1,
        "sent": (486643200, 389274697.967401, 10.001024, 159),
        "received": (485969880, 388736097.120548, 10.001024, None),
        "bits_per_second": 388736097.120548,
        "udp": None,
        "cpu": {"local_percent": 2.18151, "remote_percent": 4.763802},
        "timestamp": "2016-08-16T03:39:47+00:00",
        "local": {"host": "10.0.2.15", "port": 33600},
        "remote": {"host": "10.0.2.4", "port": 5201},
        "n_intervals": 10,
        "interval": (0, 0, 1.000375, 1982312, 15852550.77944, 4, False),
        "per_stream_ids": [4],
        "complete": True,
        "error": None,
    },
    "iperf3-3.1.6-json-client-tcp-t20-b-pscheduler.json": {
        "tool_version": "3.1.6",
        "side": "client",
        "protocol": "tcp",
        "reverse": False,
        "bidir": False,
        "streams": 1,
        "sent": (67980880, 27192153.616692, 20.000146, 281),
        "received": (63723584, 25489247.640428, 20.000146, None),
        "bits_per_second": 25489247.640428,
        "udp": None,
        "cpu": {"local_percent": 0.8635, "remote_percent": 1.76867},
        "timestamp": "2017-02-13T19:29:01+00:00",
        "local": {"host": "150.254.208.65", "port": 40574},
        "remote": {"host": "140.182.44.177", "port": 5201},
        "n_intervals": 20,
        "interval": (1, 1.000098, 2.000288, 2150280, 17198971.858117, 35, False),
        "per_stream_ids": [4],
        "complete": True,
        "error": None,
    },
    "iperf3-3.14-macos-json-client-tcp-opte.json": {
        "tool_version": "3.14",
        "side": "client",
        "protocol": "tcp",
        "reverse": False,
        "bidir": False,
        "streams": 1,
        # macOS has no TCP_INFO before 3.21: no retransmits anywhere -> None
        "sent": (255966968, 204765977.5822317, 10.000371, None),
        "received": (255931304, 204737447.4407, 10.000371, None),
        "bits_per_second": 204737447.4407,
        "udp": None,
        "cpu": {"local_percent": 5.906207383298452, "remote_percent": 0.731671},
        "timestamp": "2023-09-28T10:24:21+00:00",
        "local": {"host": "192.168.1.173", "port": 50634},
        "remote": {"host": "192.168.1.253", "port": 5201},
        "n_intervals": 10,
        "interval": (0, 0, 1.000984, 25934304, 207270487.48337844, None, False),
        "per_stream_ids": [5],
        "complete": True,
        "error": None,
    },
    "iperf3-3.16-json-client-udp-b0-92pct-loss-sarius.json": {
        "tool_version": "3.16",
        "side": "client",
        "protocol": "udp",
        "reverse": False,
        "bidir": False,
        "streams": 1,
        "sent": (4168780080, 1667402400.2921805, 20.001315, None),
        # sum_received, not end.sum (end.sum carries the sender's 4168780080 bytes)
        "received": (332398266, 131580149.06754848, 20.20963, None),
        "bits_per_second": 131580149.06754848,
        "udp": {
            "jitter_ms": 0.05129019881009296,
            "lost_packets": 2744190,
            "packets": 2981957,
            "lost_percent": 92.0263853304538,
        },
        "cpu": {"local_percent": 97.52639922108256, "remote_percent": 27.66493455701266},
        "timestamp": "2024-07-21T13:30:52+00:00",
        "local": {"host": "10.18.5.195", "port": 34976},
        "remote": {"host": "10.30.0.1", "port": 5201},
        "n_intervals": 20,
        "interval": (0, 0, 1.000888, 206857866, 1653394730.017224, None, False),
        "per_stream_ids": [5],
        "complete": True,
        "error": None,
    },
    "iperf3-3.16-json-client-udp-b1M-sarius.json": {
        "tool_version": "3.16",
        "side": "client",
        "protocol": "udp",
        "reverse": False,
        "bidir": False,
        "streams": 1,
        "sent": (2501022, 1000392.8437341424, 20.000319, None),
        "received": (2501022, 1000368.3351008452, 20.000809, None),
        "bits_per_second": 1000368.3351008452,
        "udp": {"jitter_ms": 0.05150706013209632, "lost_packets": 0, "packets": 1789, "lost_percent": 0},
        "cpu": {"local_percent": 100.84258832639009, "remote_percent": 0.359769871676896},
        "timestamp": "2024-07-18T13:29:34+00:00",
        "local": {"host": "10.18.2.195", "port": 53207},
        "remote": {"host": "10.30.0.1", "port": 5201},
        "n_intervals": 20,
        "interval": (19, 19.000066, 20.000319, 125820, 1006305.4428494303, None, False),
        "per_stream_ids": [5],
        "complete": True,
        "error": None,
    },
    "iperf3-3.17.1-json-client-tcp-R-O2-b10M-get-server-output-masquerade.json": {
        "tool_version": "3.17.1",
        "side": "client",
        "protocol": "tcp",
        "reverse": True,
        "bidir": False,
        "streams": 1,
        # -R: sum_sent holds the server's (sender's) figures, retransmits included
        "sent": (18743296, 9966680.63608837, 15.044765, 1),
        "received": (18743296, 9996643.79305386, 14.999671, None),
        "bits_per_second": 9996643.79305386,
        "udp": None,
        "cpu": {"local_percent": 0.27029460739497091, "remote_percent": 0.41437971850028588},
        "timestamp": "2024-09-04T04:43:52+00:00",
        "local": {"host": "10.9.0.2", "port": 48300},
        "remote": {"host": "192.168.0.45", "port": 7070},
        "n_intervals": 16,
        # the 3.17.1 omit-boundary artefact, kept as printed
        "interval": (1, 1.000342, 1.00102, 1310720, 5239311.80509299, None, False),
        "per_stream_ids": [6],
        "complete": True,
        "error": None,
    },
    "iperf3-3.9-json-client-tcp-n10k-TRUNCATED-cloudpilot.json": {
        "tool_version": "3.9",
        "side": "client",
        "protocol": "tcp",
        "reverse": False,
        "bidir": False,
        "streams": 1,
        "sent": None,
        "received": None,
        "bits_per_second": None,
        "udp": None,
        "cpu": None,
        "timestamp": "2021-08-19T14:31:13+00:00",
        "local": {"host": "172.30.209.19", "port": 44582},
        "remote": {"host": "169.57.144.147", "port": 5100},
        "n_intervals": 1,
        "interval": (0, 0, 0.323972, 265608, 6558789.2989784647, 0, False),
        "per_stream_ids": [],
        "complete": False,
        "error": "the iperf3 JSON document is truncated or invalid at line 71 column 2 "
        "(Expecting property name enclosed in double quotes)",
    },
    "iperf3-3.9-json-client-tcp-n10k-cloudpilot.json": {
        "tool_version": "3.9",
        "side": "client",
        "protocol": "tcp",
        "reverse": False,
        "bidir": False,
        "streams": 1,
        "sent": (39424, 348884955.75221241, 0.000904, 0),
        "received": (0, 0, 0.158455, None),
        # the receiver counted 0 bytes: finalize falls back to the sender and marks it incomplete
        "bits_per_second": 348884955.75221241,
        "udp": None,
        "cpu": {"local_percent": 19.702184063145577, "remote_percent": 0.063882432685585563},
        "timestamp": "2021-07-27T11:58:41+00:00",
        "local": {"host": "10.84.2.4", "port": 47100},
        "remote": {"host": "34.142.72.41", "port": 5200},
        "n_intervals": 1,
        "interval": (0, 0, 0.000904, 39424, 348884949.96395683, 0, False),
        "per_stream_ids": [5],
        "complete": False,
        "error": None,
    },
    "iperf3-ge3.17-jsonstream-client-error-server-busy-omnt.jsonl": {
        "tool_version": None,
        "side": None,
        "protocol": "tcp",
        "reverse": False,
        "bidir": False,
        "streams": 0,
        "sent": None,
        "received": None,
        "bits_per_second": None,
        "udp": None,
        "cpu": None,
        "timestamp": None,
        "local": None,
        "remote": None,
        "n_intervals": 0,
        "interval": None,
        "per_stream_ids": [],
        "complete": False,
        "error": "the server is busy running a test. try again later",
    },
    "iperf3-ge3.17-jsonstream-interval-tcp-bidir-omnt.jsonl": {
        "tool_version": None,
        "side": None,
        "protocol": "tcp",
        "reverse": False,
        "bidir": True,
        "streams": 1,
        "sent": None,
        "received": None,
        "bits_per_second": None,
        "udp": None,
        "cpu": None,
        "timestamp": None,
        "local": None,
        "remote": None,
        "n_intervals": 1,
        "interval": (0, 0, 1.000228, 3935043584, 31473171298.031265, 0, False),
        "per_stream_ids": [],
        "complete": False,
        "error": None,
    },
    "iperf3-ge3.17-jsonstream-interval-tcp-ul-omnt.jsonl": {
        "tool_version": None,
        "side": None,
        "protocol": "tcp",
        "reverse": False,
        "bidir": False,
        "streams": 1,
        "sent": None,
        "received": None,
        "bits_per_second": None,
        "udp": None,
        "cpu": None,
        "timestamp": None,
        "local": None,
        "remote": None,
        "n_intervals": 1,
        "interval": (0, 0, 1.001069, 3994157056, 31919136496.636753, 0, False),
        "per_stream_ids": [],
        "complete": False,
        "error": None,
    },
    "iperf3-ge3.17-jsonstream-interval-udp-bidir-omnt.jsonl": {
        "tool_version": None,
        "side": None,
        "protocol": "udp",
        "reverse": False,
        "bidir": True,
        "streams": 1,
        "sent": None,
        "received": None,
        "bits_per_second": None,
        "udp": None,
        "cpu": None,
        "timestamp": None,
        "local": None,
        "remote": None,
        "n_intervals": 1,
        "interval": (0, 0, 1.000089, 135168, 1081247.7156053118, None, False),
        "per_stream_ids": [],
        "complete": False,
        "error": None,
    },
    # issue 22: TCP test, UDP test, then the idle server's SIGINT document (no connection, only an error):
    # the result is the UDP test's (the server side: sum_received; the client's totals printed as zeros)
    "iperf3-3.12-json-server-tcp-udp-2-tests-stopped-idle-locallab.json": {
        "tool_version": "3.12",
        "side": "server",
        "protocol": "udp",
        "reverse": False,
        "bidir": False,
        "streams": 1,
        "sent": None,
        "received": (12494792, 49975070.044256374, 2.000164, None),
        "bits_per_second": 49975070.044256374,
        "udp": {"jitter_ms": 0.014750112297263709, "lost_packets": 0, "packets": 8629, "lost_percent": 0},
        "cpu": {"local_percent": 1.188400768535827, "remote_percent": 1.268041077415167},
        "timestamp": "2026-12-06T15:51:16+00:00",
        "local": {"host": "198.18.150.11", "port": 25222},
        "remote": {"host": "198.18.150.12", "port": 39606},
        "n_intervals": 2,
        "interval": (0, 0, 1.000062, 6245224, 49958695.11891296, None, False),
        "per_stream_ids": [5],
        "complete": False,
        "error": None,
    },
    "iperf3-ge3.17-jsonstream-interval-udp-ul-omnt.jsonl": {
        "tool_version": None,
        "side": None,
        "protocol": "udp",
        "reverse": False,
        "bidir": False,
        "streams": 1,
        "sent": None,
        "received": None,
        "bits_per_second": None,
        "udp": None,
        "cpu": None,
        "timestamp": None,
        "local": None,
        "remote": None,
        "n_intervals": 1,
        "interval": (0, 0, 1.000097, 135168, 1081239.0804935072, None, False),
        "per_stream_ids": [],
        "complete": False,
        "error": None,
    },
}


def test_every_json_fixture_has_expectations() -> None:
    assert {p.name for p in JSON_FIXTURES} == set(EXPECTED), "a new iperf3 JSON fixture needs figures here"
    assert len(JSON_FIXTURES) == 14


@pytest.mark.parametrize("path", JSON_FIXTURES, ids=lambda p: p.name)
def test_fixture_figures(path: Path) -> None:
    want = EXPECTED[path.name]
    result = _parse_file(path)
    assert result["tool"] == "iperf3"
    assert result["format"] == "json"
    for key in ("tool_version", "side", "protocol", "reverse", "bidir", "streams", "timestamp", "local", "remote"):
        assert result[key] == want[key], key
    assert result["error"] == want["error"]
    assert result["complete"] is want["complete"]
    assert _totals(result["sent"]) == (approx(want["sent"]) if want["sent"] else None)
    assert _totals(result["received"]) == (approx(want["received"]) if want["received"] else None)
    assert result["bits_per_second"] == (approx(want["bits_per_second"]) if want["bits_per_second"] else None)
    assert result["udp"] == (approx(want["udp"]) if want["udp"] else None)
    assert result["cpu"] == (approx(want["cpu"]) if want["cpu"] else None)
    assert len(result["intervals"]) == want["n_intervals"]
    if want["interval"] is not None:
        index, start, end, nbytes, bps, retransmits, omitted = want["interval"]
        interval = result["intervals"][index]
        assert (interval["start"], interval["end"], interval["bits_per_second"]) == approx((start, end, bps))
        assert interval["bytes"] == nbytes
        assert interval["retransmits"] == retransmits
        assert interval["omitted"] is omitted
    assert [s["id"] for s in result["per_stream"]] == want["per_stream_ids"]
    if want["error"]:
        assert result["raw"] == path.read_bytes().decode("utf-8")
    else:
        assert "raw" not in result


@pytest.mark.parametrize(
    "path",
    [p for p in JSON_FIXTURES if p.suffix == ".json" and "TRUNCATED" not in p.name and p.name not in SEVERAL_DOCUMENTS],
    ids=lambda p: p.name,
)
def test_decoded_document_gives_the_same_result(path: Path) -> None:
    text = path.read_bytes().decode("utf-8")
    doc = json.loads(text)
    assert _valid(parse_iperf3_json(doc, None)) == parse_iperf3_json(None, text)


def test_masquerade_reverse_with_server_output() -> None:
    result = _parse_file(FIXTURES / "iperf3-3.17.1-json-client-tcp-R-O2-b10M-get-server-output-masquerade.json")
    first = result["intervals"][0]
    assert first == {
        "start": 0,
        "end": approx(1.001013),
        "bytes": 1310720,
        "bits_per_second": approx(10475148.250132844),
        "retransmits": None,  # a -R client receives: its intervals carry no retransmits
        "omitted": True,  # -O 2
    }
    assert [i["omitted"] for i in result["intervals"]].count(True) == 1
    assert result["intervals"][-1]["end"] == approx(14.999671)
    stream = result["per_stream"][0]
    assert _totals(stream["sent"]) == approx((18743296, 9966680.63608837, 15.044765, 1))
    assert _totals(stream["received"]) == approx((18743296, 9996643.79305386, 14.999671, None))
    # The client's end.streams[].sender has max_snd_cwnd 0 (the server's cwnd is unknown to it):
    # that must not be read as the ESXi garbage pattern.
    assert not any("retransmits set to null" in w for w in result["warnings"])

    server = result["server_output"]
    assert server["side"] == "server"
    assert server["tool_version"] == "3.9"
    assert server["reverse"] is True
    assert server["local"] == {"host": "192.168.0.45", "port": 7070}
    assert server["remote"] == {"host": "192.168.0.71", "port": 48300}
    assert _totals(server["sent"]) == approx((18743296, 9966680.63608837, 15.044765, 1))
    # The server printed the client's receiver totals as 0 bytes / 0 bit/s: not a measurement.
    assert server["received"] is None
    assert any("server-side JSON prints the client's receiver figures as zeros" in w for w in server["warnings"])
    assert server["bits_per_second"] == approx(9966680.63608837)
    assert len(server["intervals"]) == 16
    assert server["intervals"][4]["retransmits"] == 1
    assert server["intervals"][4]["bytes"] == 1310720
    assert server["intervals"][1]["start"] == 1 and server["intervals"][1]["end"] == 1
    assert server["cpu"] == approx({"local_percent": 0.4143797185002859, "remote_percent": 25.7280914111033})
    assert server["complete"] is False


def test_n10k_zero_receiver_is_reported_honestly() -> None:
    result = _parse_file(FIXTURES / "iperf3-3.9-json-client-tcp-n10k-cloudpilot.json")
    assert result["complete"] is False
    assert any("receiver totals are zero" in w for w in result["warnings"])
    assert any(w.startswith("byte-limited run (-n/-k 10240 bytes)") and "0.000904 s" in w for w in result["warnings"])
    assert result["duration"] == approx(0.000904)
    # per-stream receiver: "seconds" printed 0.000904 is the local stream time; the rate is over end=0.158455
    assert result["per_stream"][0]["received"]["seconds"] == approx(0.158455)


def test_truncated_fixture_keeps_what_came_before_the_cut() -> None:
    text = _read("iperf3-3.9-json-client-tcp-n10k-TRUNCATED-cloudpilot.json")
    result = _valid(parse_iperf3_json(None, text))
    assert result["raw"] == text
    assert any("kept only the complete members before the cut: start, intervals" in w for w in result["warnings"])
    assert result["intervals"][0]["bytes"] == 265608


def test_server_busy_stream_keeps_raw() -> None:
    text = _read("iperf3-ge3.17-jsonstream-client-error-server-busy-omnt.jsonl")
    result = _valid(parse_iperf3_json_stream(text))
    assert result["raw"] == text
    assert result["bits_per_second"] is None


def test_stream_bidir_interval_lines() -> None:
    tcp = _parse_file(FIXTURES / "iperf3-ge3.17-jsonstream-interval-tcp-bidir-omnt.jsonl")
    assert tcp["reverse_intervals"] == [
        {
            "start": 0,
            "end": approx(1.000228),
            "bytes": 3690070016,
            "bits_per_second": approx(29513829576.759514),
            "retransmits": None,
            "omitted": False,
        }
    ]
    udp = _parse_file(FIXTURES / "iperf3-ge3.17-jsonstream-interval-udp-bidir-omnt.jsonl")
    assert udp["reverse_intervals"][0]["bytes"] == 135168
    assert udp["reverse_intervals"][0]["bits_per_second"] == approx(1081247.7156053118)


# --------------------------------------------------------------------------- hand-written documents


def _start(
    *,
    version: str = "iperf 3.12",
    protocol: str = "TCP",
    streams: int = 1,
    reverse: int = 0,
    omit: int = 0,
    server: bool = False,
    system_info: str = "Linux lab1 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 x86_64",
    bidir: int | None = None,
    nbytes: int = 0,
) -> dict[str, Any]:
    start: dict[str, Any] = {
        "connected": [
            {
                "socket": 5 + 2 * i,
                "local_host": "10.0.0.2" if not server else "10.0.0.1",
                "local_port": 40000 + i if not server else 5201,
                "remote_host": "10.0.0.1" if not server else "10.0.0.2",
                "remote_port": 5201 if not server else 40000 + i,
            }
            for i in range(streams)
        ],
        "version": version,
        "system_info": system_info,
        "timestamp": {"time": "Tue, 27 Jul 2021 14:54:01 GMT", "timesecs": 1627397641},
        "test_start": {
            "protocol": protocol,
            "num_streams": streams,
            "blksize": 131072,
            "omit": omit,
            "duration": 3,
            "bytes": nbytes,
            "blocks": 0,
            "reverse": reverse,
            "tos": 0,
        },
    }
    if bidir is not None:
        start["test_start"]["bidir"] = bidir
    if server:
        start["accepted_connection"] = {"host": "10.0.0.2", "port": 39998}
    else:
        start["connecting_to"] = {"host": "10.0.0.1", "port": 5201}
    return start


def _sum(start: float, end: float, nbytes: int, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "start": start,
        "end": end,
        "seconds": end - start,
        "bytes": nbytes,
        "bits_per_second": nbytes * 8 / (end - start),
    }
    out.update(extra)
    return out


def _tcp_client_p4() -> dict[str, Any]:
    """iperf3 3.12 client, TCP, -P 4, -t 3 (2 full intervals + a short one)."""
    sockets = [5, 7, 9, 11]
    per_socket = [100_000_000, 110_000_000, 120_000_000, 130_000_000]
    intervals = []
    for k, (t0, t1) in enumerate([(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)]):
        streams = [
            _sum(
                t0, t1, per_socket[i] // 3, socket=s, retransmits=k + i, snd_cwnd=64000 + i, omitted=False, sender=True
            )
            for i, s in enumerate(sockets)
        ]
        total = sum(st["bytes"] for st in streams)
        intervals.append(
            {
                "streams": streams,
                "sum": _sum(t0, t1, total, retransmits=sum(k + i for i in range(4)), omitted=False, sender=True),
            }
        )
    end_streams = [
        {
            "sender": _sum(0, 3.0, per_socket[i], socket=s, retransmits=3 * i + 3, max_snd_cwnd=70000, sender=True),
            "receiver": _sum(0, 3.04, per_socket[i] - 1000, socket=s, sender=True),
        }
        for i, s in enumerate(sockets)
    ]
    return {
        "start": _start(streams=4),
        "intervals": intervals,
        "end": {
            "streams": end_streams,
            "sum_sent": _sum(0, 3.0, sum(per_socket), retransmits=30, sender=True),
            "sum_received": _sum(0, 3.04, sum(per_socket) - 4000, sender=True),
            "cpu_utilization_percent": {
                "host_total": 12.5,
                "host_user": 2.5,
                "host_system": 10.0,
                "remote_total": 30.25,
                "remote_user": 5.0,
                "remote_system": 25.25,
            },
            "sender_tcp_congestion": "cubic",
            "receiver_tcp_congestion": "cubic",
        },
    }


def test_parallel_four_streams() -> None:
    doc = _tcp_client_p4()
    result = _valid(parse_iperf3_json(doc, None))
    assert result["streams"] == 4
    assert [s["id"] for s in result["per_stream"]] == [5, 7, 9, 11]
    assert _totals(result["per_stream"][3]["sent"]) == approx((130_000_000, 130_000_000 * 8 / 3.0, 3.0, 12))
    assert _totals(result["per_stream"][3]["received"]) == approx(
        (130_000_000 - 1000, (130_000_000 - 1000) * 8 / 3.04, 3.04, None)
    )
    assert _totals(result["sent"]) == approx((460_000_000, 460_000_000 * 8 / 3.0, 3.0, 30))
    assert _totals(result["received"]) == approx((459_996_000, 459_996_000 * 8 / 3.04, 3.04, None))
    assert result["bits_per_second"] == approx(459_996_000 * 8 / 3.04)
    assert result["duration"] == approx(3.04)
    assert len(result["intervals"]) == 3
    # intervals come from intervals[].sum (not from one stream)
    expected_bytes = sum(n // 3 for n in (100_000_000, 110_000_000, 120_000_000, 130_000_000))
    assert result["intervals"][1] == {
        "start": 1.0,
        "end": 2.0,
        "bytes": expected_bytes,
        "bits_per_second": approx(expected_bytes * 8),
        "retransmits": 1 + 2 + 3 + 4,
        "omitted": False,
    }
    assert result["cpu"] == {"local_percent": 12.5, "remote_percent": 30.25}
    assert result["timestamp"] == "2021-07-27T14:54:01+00:00"
    assert result["complete"] is True
    assert result["warnings"] == []


def test_omitted_intervals_are_kept_and_flagged() -> None:
    doc = _tcp_client_p4()
    doc["start"]["test_start"]["omit"] = 2
    for interval in doc["intervals"][:2]:
        interval["sum"]["omitted"] = True
        for stream in interval["streams"]:
            stream["omitted"] = True
    result = _valid(parse_iperf3_json(doc, None))
    assert [i["omitted"] for i in result["intervals"]] == [True, True, False]
    assert result["intervals"][0]["bytes"] == doc["intervals"][0]["sum"]["bytes"]
    assert result["intervals"][0]["retransmits"] == 6
    assert result["complete"] is True


def _bidir_311_client() -> dict[str, Any]:
    """iperf3 3.12 client, TCP --bidir (the 3.11+ key names), one stream each way."""
    up, down = 11_000_000, 22_000_000
    return {
        "start": _start(version="iperf 3.12", streams=2, bidir=1),
        "intervals": [
            {
                "streams": [
                    _sum(0, 1.0, up, socket=5, retransmits=3, snd_cwnd=90000, omitted=False, sender=True),
                    _sum(0, 1.0, down, socket=7, omitted=False, sender=False),
                ],
                "sum": _sum(0, 1.0, up, retransmits=3, omitted=False, sender=True),
                "sum_bidir_reverse": _sum(0, 1.0, down, omitted=False, sender=False),
            }
        ],
        "end": {
            "streams": [
                {
                    "sender": _sum(0, 1.0, up, socket=5, retransmits=3, max_snd_cwnd=90000, sender=True),
                    "receiver": _sum(0, 1.01, up - 100, socket=5, sender=True),
                },
                {
                    "sender": _sum(0, 1.0, down, socket=7, retransmits=9, max_snd_cwnd=80000, sender=False),
                    "receiver": _sum(0, 1.01, down - 200, socket=7, sender=False),
                },
            ],
            "sum_sent": _sum(0, 1.0, up, retransmits=3, sender=True),
            "sum_received": _sum(0, 1.01, up - 100, sender=True),
            "sum_sent_bidir_reverse": _sum(0, 1.0, down, retransmits=9, sender=False),
            "sum_received_bidir_reverse": _sum(0, 1.01, down - 200, sender=False),
            "cpu_utilization_percent": {"host_total": 5.0, "remote_total": 6.0},
        },
    }


def test_bidir_311_layout() -> None:
    result = _valid(parse_iperf3_json(_bidir_311_client(), None))
    assert result["bidir"] is True
    assert result["reverse"] is False
    assert _totals(result["sent"]) == approx((11_000_000, 88_000_000.0, 1.0, 3))
    assert _totals(result["received"]) == approx((10_999_900, 10_999_900 * 8 / 1.01, 1.01, None))
    assert _totals(result["reverse_sent"]) == approx((22_000_000, 176_000_000.0, 1.0, 9))
    assert _totals(result["reverse_received"]) == approx((21_999_800, 21_999_800 * 8 / 1.01, 1.01, None))
    assert result["bits_per_second"] == approx(10_999_900 * 8 / 1.01)  # client-to-server receiver
    assert result["intervals"][0]["bytes"] == 11_000_000
    assert result["intervals"][0]["retransmits"] == 3
    assert result["reverse_intervals"][0]["bytes"] == 22_000_000
    assert result["reverse_intervals"][0]["retransmits"] is None
    assert result["streams"] == 1
    assert [s["id"] for s in result["per_stream"]] == [5]
    assert [s["id"] for s in result["reverse_per_stream"]] == [7]
    assert result["complete"] is True
    assert result["warnings"] == []


# iperf3 3.9 client, TCP --bidir: iperf_print_intermediate/iperf_print_results emit the
# client-to-server sums first, then the server-to-client ones under the SAME keys.
BIDIR_37_TEXT = """{
\t"start":\t{
\t\t"connected":\t[{"socket":\t5, "local_host":\t"10.0.0.2", "local_port":\t40000,
\t\t\t\t"remote_host":\t"10.0.0.1", "remote_port":\t5201},
\t\t\t{"socket":\t7, "local_host":\t"10.0.0.2", "local_port":\t40002,
\t\t\t\t"remote_host":\t"10.0.0.1", "remote_port":\t5201}],
\t\t"version":\t"iperf 3.9",
\t\t"system_info":\t"Linux lab1 5.10.0-28-amd64 #1 SMP Debian 5.10.209-2 x86_64",
\t\t"timestamp":\t{"time":\t"Tue, 27 Jul 2021 14:54:01 GMT", "timesecs":\t1627397641},
\t\t"connecting_to":\t{"host":\t"10.0.0.1", "port":\t5201},
\t\t"test_start":\t{"protocol":\t"TCP", "num_streams":\t1, "blksize":\t131072, "omit":\t0, "duration":\t1,
\t\t\t"bytes":\t0, "blocks":\t0, "reverse":\t0, "tos":\t0}
\t},
\t"intervals":\t[{
\t\t\t"streams":\t[{"socket":\t5, "start":\t0, "end":\t1.000046, "seconds":\t1.000046, "bytes":\t117833728,
\t\t\t\t"bits_per_second":\t942626437.6, "retransmits":\t2, "snd_cwnd":\t1573600, "rtt":\t1200, "rttvar":\t300,
\t\t\t\t"pmtu":\t1500, "omitted":\t false, "sender":\ttrue},
\t\t\t\t{"socket":\t7, "start":\t0, "end":\t1.000046, "seconds":\t1.000046, "bytes":\t60293120,
\t\t\t\t"bits_per_second":\t482322775.0, "omitted":\tfalse, "sender":\tfalse}],
\t\t\t"sum":\t{"start":\t0, "end":\t1.000046, "seconds":\t1.000046, "bytes":\t117833728,
\t\t\t\t"bits_per_second":\t942626437.6, "retransmits":\t2, "omitted":\tfalse, "sender":\ttrue},
\t\t\t"sum":\t{"start":\t0, "end":\t1.000046, "seconds":\t1.000046, "bytes":\t60293120,
\t\t\t\t"bits_per_second":\t482322775.0, "omitted":\tfalse, "sender":\tfalse}
\t\t}],
\t"end":\t{
\t\t"streams":\t[{
\t\t\t\t"sender":\t{"socket":\t5, "start":\t0, "end":\t1.000046, "seconds":\t1.000046, "bytes":\t117833728,
\t\t\t\t\t"bits_per_second":\t942626437.6, "retransmits":\t2, "max_snd_cwnd":\t1573600, "max_rtt":\t1200,
\t\t\t\t\t"min_rtt":\t1200, "mean_rtt":\t1200, "sender":\ttrue},
\t\t\t\t"receiver":\t{"socket":\t5, "start":\t0, "end":\t1.000511, "seconds":\t1.000046, "bytes":\t117702656,
\t\t\t\t\t"bits_per_second":\t941140500.2, "sender":\ttrue}
\t\t\t}, {
\t\t\t\t"sender":\t{"socket":\t7, "start":\t0, "end":\t1.000046, "seconds":\t1.000046, "bytes":\t60293120,
\t\t\t\t\t"bits_per_second":\t482322775.0, "retransmits":\t7, "max_snd_cwnd":\t0, "max_rtt":\t0,
\t\t\t\t\t"min_rtt":\t0, "mean_rtt":\t0, "sender":\tfalse},
\t\t\t\t"receiver":\t{"socket":\t7, "start":\t0, "end":\t1.000511, "seconds":\t1.000046, "bytes":\t60162048,
\t\t\t\t\t"bits_per_second":\t481047380.9, "sender":\tfalse}
\t\t\t}],
\t\t"sum_sent":\t{"start":\t0, "end":\t1.000046, "seconds":\t1.000046, "bytes":\t117833728,
\t\t\t"bits_per_second":\t942626437.6, "retransmits":\t2, "sender":\ttrue},
\t\t"sum_received":\t{"start":\t0, "end":\t1.000511, "seconds":\t1.000511, "bytes":\t117702656,
\t\t\t"bits_per_second":\t941140500.2, "sender":\ttrue},
\t\t"sum_sent":\t{"start":\t0, "end":\t1.000046, "seconds":\t1.000046, "bytes":\t60293120,
\t\t\t"bits_per_second":\t482322775.0, "retransmits":\t7, "sender":\tfalse},
\t\t"sum_received":\t{"start":\t0, "end":\t1.000511, "seconds":\t1.000511, "bytes":\t60162048,
\t\t\t"bits_per_second":\t481047380.9, "sender":\tfalse},
\t\t"cpu_utilization_percent":\t{"host_total":\t14.1, "host_user":\t1.2, "host_system":\t12.9,
\t\t\t"remote_total":\t9.8, "remote_user":\t0.7, "remote_system":\t9.1},
\t\t"sender_tcp_congestion":\t"cubic",
\t\t"receiver_tcp_congestion":\t"cubic"
\t}
}
"""


def _check_bidir_37(result: dict[str, Any]) -> None:
    assert result["bidir"] is True
    assert result["tool_version"] == "3.9"
    assert _totals(result["sent"]) == approx((117833728, 942626437.6, 1.000046, 2))
    assert _totals(result["received"]) == approx((117702656, 941140500.2, 1.000511, None))
    assert _totals(result["reverse_sent"]) == approx((60293120, 482322775.0, 1.000046, 7))
    assert _totals(result["reverse_received"]) == approx((60162048, 481047380.9, 1.000511, None))
    assert result["bits_per_second"] == approx(941140500.2)
    assert [i["bytes"] for i in result["intervals"]] == [117833728]
    assert [i["bytes"] for i in result["reverse_intervals"]] == [60293120]
    assert result["intervals"][0]["retransmits"] == 2
    assert [s["id"] for s in result["per_stream"]] == [5]
    assert [s["id"] for s in result["reverse_per_stream"]] == [7]
    assert result["streams"] == 1
    assert result["complete"] is True
    assert result["warnings"] == []


def test_bidir_37_duplicate_keys_from_text() -> None:
    # a plain decoder keeps only the last copy of a repeated key: the server-to-client one
    assert json.loads(BIDIR_37_TEXT)["end"]["sum_sent"]["bytes"] == 60293120
    assert duplicate_sums_possible(BIDIR_37_TEXT)
    _check_bidir_37(_valid(parse_iperf3_json(None, BIDIR_37_TEXT)))


def test_bidir_37_decoded_elsewhere_is_not_misread() -> None:
    doc = json.loads(BIDIR_37_TEXT)  # duplicates lost: plain names hold server-to-client
    result = _valid(parse_iperf3_json(doc, None))
    assert result["sent"] is None
    assert result["received"] is None
    assert result["intervals"] == []
    assert _totals(result["reverse_sent"]) == approx((60293120, 482322775.0, 1.000046, 7))
    assert result["reverse_intervals"][0]["bytes"] == 60293120
    assert result["complete"] is False
    assert any("decoded without its duplicate keys" in w for w in result["warnings"])
    # with the raw text beside it, the parser decodes again and keeps both directions
    _check_bidir_37(_valid(parse_iperf3_json(doc, BIDIR_37_TEXT)))


def test_bidir_37_server_side_order_from_sender_flags() -> None:
    # Server side of 3.9 --bidir: first the receiving (client-to-server) sums with
    # sender=false, then the sending ones with sender=true.
    text = (
        '{"start": {"version": "iperf 3.10.1", "accepted_connection": {"host": "10.0.0.2", "port": 39998},'
        ' "test_start": {"protocol": "UDP", "num_streams": 1, "reverse": 0}},'
        ' "intervals": [{"streams": [], '
        '"sum": {"start": 0, "end": 1, "seconds": 1, "bytes": 1000, "bits_per_second": 8000, "jitter_ms": 0.5,'
        ' "lost_packets": 1, "packets": 10, "lost_percent": 10, "omitted": false, "sender": false},'
        ' "sum": {"start": 0, "end": 1, "seconds": 1, "bytes": 2000, "bits_per_second": 16000, "packets": 20,'
        ' "omitted": false, "sender": true}}],'
        ' "end": {"streams": ['
        '{"udp": {"socket": 5, "start": 0, "end": 1, "seconds": 1, "bytes": 0, "bits_per_second": 0,'
        ' "jitter_ms": 0.5, "lost_packets": 1, "packets": 10, "lost_percent": 10, "sender": false}},'
        '{"udp": {"socket": 6, "start": 0, "end": 1, "seconds": 1, "bytes": 2000, "bits_per_second": 16000,'
        ' "jitter_ms": 0, "lost_packets": 0, "packets": 20, "lost_percent": 0, "sender": true}}],'
        ' "sum": {"start": 0, "end": 1, "seconds": 1, "bytes": 0, "bits_per_second": 0, "jitter_ms": 0.5,'
        ' "lost_packets": 1, "packets": 10, "lost_percent": 10, "sender": false},'
        ' "sum": {"start": 0, "end": 1, "seconds": 1, "bytes": 2000, "bits_per_second": 16000, "jitter_ms": 0,'
        ' "lost_packets": 0, "packets": 20, "lost_percent": 0, "sender": true}}}'
    )
    result = _valid(parse_iperf3_json(None, text))
    assert result["side"] == "server"
    assert result["protocol"] == "udp"
    assert result["bidir"] is True
    # client-to-server: the client's sender bytes are a zero placeholder on the server
    assert result["sent"] is None
    assert result["udp"] == {"jitter_ms": 0.5, "lost_packets": 1, "packets": 10, "lost_percent": 10}
    assert _totals(result["reverse_sent"]) == (2000, 16000, 1, None)
    # server-to-client: the client's jitter/loss are not known to the server (printed as 0)
    assert result["reverse_udp"] is None
    assert result["intervals"][0]["bytes"] == 1000
    assert result["reverse_intervals"][0]["bytes"] == 2000
    assert [s["id"] for s in result["per_stream"]] == [5]
    assert [s["id"] for s in result["reverse_per_stream"]] == [6]


def test_duplicate_check_is_skipped_for_versions_without_duplicates() -> None:
    assert not duplicate_sums_possible(json.dumps(_bidir_311_client()))  # 3.12 names the reverse sums
    assert not duplicate_sums_possible(_read("iperf3-3.16-json-client-udp-b1M-sarius.json"))
    # 3.9 without --bidir: one local role only
    assert not duplicate_sums_possible(_read("iperf3-3.9-json-client-tcp-n10k-cloudpilot.json"))
    # A 3.17 client embedding a 3.9 server's output: the embedded part may repeat keys, and the
    # text holds both roles (client receives, server sends), so the careful decode is used.
    masq = _read("iperf3-3.17.1-json-client-tcp-R-O2-b10M-get-server-output-masquerade.json")
    assert duplicate_sums_possible(masq)


def test_pre_311_udp_end_sum_only() -> None:
    doc = {
        "start": _start(version="iperf 3.7", protocol="UDP"),
        "intervals": [
            {
                "streams": [_sum(0, 1.0, 131000, socket=5, packets=100, omitted=False, sender=True)],
                "sum": _sum(0, 1.0, 131000, packets=100, omitted=False, sender=True),
            }
        ],
        "end": {
            "streams": [
                {
                    "udp": _sum(
                        0,
                        1.0,
                        131000,
                        socket=5,
                        jitter_ms=0.25,
                        lost_packets=3,
                        packets=100,
                        lost_percent=3.0,
                        out_of_order=0,
                        sender=True,
                    )
                }
            ],
            # end.sum: the sender's bytes and rate, the receiver's jitter/loss, seconds = receiver time
            "sum": _sum(0, 1.05, 131000, jitter_ms=0.25, lost_packets=3, packets=100, lost_percent=3.0, sender=True)
            | {"bits_per_second": 1048000.0},
            "cpu_utilization_percent": {"host_total": 1.0, "remote_total": 2.0},
        },
    }
    result = _valid(parse_iperf3_json(doc, None))
    assert result["protocol"] == "udp"
    assert _totals(result["sent"]) == (131000, 1048000.0, 1.0, None)  # seconds = sender time (stream udp)
    assert result["received"] is None  # not printed before 3.11
    assert result["udp"] == {"jitter_ms": 0.25, "lost_packets": 3, "packets": 100, "lost_percent": 3.0}
    assert result["bits_per_second"] == 1048000.0
    assert result["complete"] is True
    assert any("before 3.11 prints no receiver byte total" in w for w in result["warnings"])
    assert result["per_stream"][0]["udp"]["lost_packets"] == 3


def test_error_document() -> None:
    doc = {
        "start": {
            "connected": [],
            "version": "iperf 3.9",
            "system_info": "Linux lab1 5.10.0-28-amd64 #1 SMP Debian 5.10.209-2 x86_64",
            "timestamp": {"time": "Tue, 27 Jul 2021 14:54:01 UTC", "timesecs": 1627397641},
            "connecting_to": {"host": "10.0.0.1", "port": 5201},
        },
        "intervals": [],
        "end": {},
        "error": "error - control socket has closed unexpectedly",
    }
    text = json.dumps(doc, indent="\t")
    for result in (parse_iperf3_json(None, text), parse_iperf3_json(doc, None)):
        _valid(result)
        assert result["error"] == "control socket has closed unexpectedly"
        assert result["complete"] is False
        assert result["side"] == "client"
        assert result["tool_version"] == "3.9"
        assert result["timestamp"] == "2021-07-27T14:54:01+00:00"
        assert result["sent"] is None and result["bits_per_second"] is None
        assert result["raw"]
    assert parse_iperf3_json(None, text)["raw"] == text
    assert json.loads(parse_iperf3_json(doc, None)["raw"]) == doc


def test_truncated_text_salvages_complete_members() -> None:
    text = json.dumps(_tcp_client_p4(), indent="\t")
    cut = text[: text.index('"sender_tcp_congestion"')]
    result = _valid(parse_iperf3_json(None, cut))
    assert result["error"].startswith("the iperf3 JSON document is truncated or invalid at line")
    assert result["raw"] == cut
    assert result["complete"] is False
    assert result["sent"] is None  # an end we could not read whole is not trusted
    assert len(result["intervals"]) == 3
    assert result["tool_version"] == "3.12"
    # cut inside the intervals array: the complete intervals before the cut are kept
    inside = text[: text.index('"sum"', text.index('"intervals"')) + 30]
    partial = _valid(parse_iperf3_json(None, inside))
    assert partial["intervals"] == []  # the first interval itself is cut
    second = text.index('"streams"', text.index('"intervals"') + 40)
    partial = _valid(parse_iperf3_json(None, text[: second + 40]))
    assert len(partial["intervals"]) == 1


@pytest.mark.parametrize("text", ["", "{", "not json at all", "[1, 2, 3]", '{"start": ', "null", '"iperf"'])
def test_undecodable_text_never_raises(text: str) -> None:
    result = _valid(parse_iperf3_json(None, text))
    assert result["error"]
    assert result["raw"] == text
    assert result["complete"] is False
    assert result["tool"] == "iperf3" and result["format"] == "json"


def _esxi_doc(system_info: str) -> dict[str, Any]:
    """An ESXi-bundled iperf3 client (3.1-era layout, no sender flags): TCP_INFO unreadable."""
    retrans = [8634728, 0, 0]
    intervals = [
        {
            "streams": [_sum(k, k + 1.0, 717225984, socket=4, retransmits=r, snd_cwnd=0, rtt=0, omitted=False)],
            "sum": _sum(k, k + 1.0, 717225984, retransmits=r, omitted=False),
        }
        for k, r in enumerate(retrans)
    ]
    start = _start(version="iperf 3.1.3", system_info=system_info)
    return {
        "start": start,
        "intervals": intervals,
        "end": {
            "streams": [
                {
                    "sender": _sum(0, 3.0, 2151677952, socket=4, retransmits=8634728, max_snd_cwnd=0),
                    "receiver": _sum(0, 3.0, 2151546880, socket=4),
                }
            ],
            "sum_sent": _sum(0, 3.0, 2151677952, retransmits=8634728),
            "sum_received": _sum(0, 3.0, 2151546880),
            "cpu_utilization_percent": {"host_total": 50.0, "remote_total": 20.0},
        },
    }


@pytest.mark.parametrize(
    ("system_info", "reason"),
    [
        ("VMkernel esxi01 6.7.0 #1 SMP Release build-8169922 Apr  3 2018 14:48:22 x86_64", "says VMkernel"),
        ("Linux lab1 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 x86_64", "snd_cwnd is 0"),
    ],
)
def test_esxi_garbage_retransmits_are_dropped(system_info: str, reason: str) -> None:
    result = _valid(parse_iperf3_json(_esxi_doc(system_info), None))
    assert result["sent"]["retransmits"] is None
    assert result["sent"]["bytes"] == 2151677952
    assert all(i["retransmits"] is None for i in result["intervals"])
    assert result["per_stream"][0]["sent"]["retransmits"] is None
    assert [w for w in result["warnings"] if "retransmits set to null" in w and reason in w]
    assert not any("8634728" in json.dumps(v) for k, v in result.items() if k != "warnings")
    assert result["bits_per_second"] == approx(2151546880 * 8 / 3.0)


def test_retransmits_kept_when_cwnd_is_real() -> None:
    doc = _esxi_doc("Linux lab1 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 x86_64")
    for interval in doc["intervals"]:
        interval["streams"][0]["snd_cwnd"] = 1573600
    result = _valid(parse_iperf3_json(doc, None))
    assert result["sent"]["retransmits"] == 8634728  # implausible, but not provably garbage: kept
    assert result["intervals"][0]["retransmits"] == 8634728
    assert not any("retransmits set to null" in w for w in result["warnings"])


def test_esxi_receiver_keeps_the_linux_senders_retransmits() -> None:
    # -R on an ESXi client: the Linux server sends, its retransmits are real.
    doc = _tcp_client_p4()
    doc["start"]["system_info"] = "VMkernel esxi01 7.0.3 #1 SMP Release build-21686933 x86_64"
    doc["start"]["test_start"]["reverse"] = 1
    result = _valid(parse_iperf3_json(doc, None))
    assert result["reverse"] is True
    assert result["sent"]["retransmits"] == 30
    # the server being ESXi (seen through --get-server-output) drops them
    doc["server_output_json"] = {
        "start": _start(server=True, reverse=1, system_info="VMkernel esxi02 8.0.2 #1 SMP Release build-22380479")
    }
    result = _valid(parse_iperf3_json(doc, None))
    assert result["sent"]["retransmits"] is None
    assert any("server's system_info says VMkernel" in w for w in result["warnings"])


def test_server_side_document_placeholders() -> None:
    # iperf3 3.12 `-s -J`, forward TCP test: the server prints the client's totals as zeros.
    doc = {
        "start": _start(server=True),
        "intervals": [{"streams": [], "sum": _sum(0, 1.0, 12582912, omitted=False, sender=False)}],
        "end": {
            "streams": [
                {
                    "sender": {"socket": 5, "start": 0, "end": 1.00017, "seconds": 1.00017, "bytes": 0,
                               "bits_per_second": 0, "sender": False},
                    "receiver": _sum(0, 1.00017, 12582912, socket=5, sender=False),
                }
            ],
            "sum_sent": {"start": 0, "end": 1.00017, "seconds": 1.00017, "bytes": 0, "bits_per_second": 0,
                         "sender": False},
            "sum_received": _sum(0, 1.00017, 12582912, sender=False),
            "cpu_utilization_percent": {"host_total": 0.73, "host_user": 0.73, "host_system": 0,
                                        "remote_total": 0, "remote_user": 0, "remote_system": 0},
        },
    }  # fmt: skip
    result = _valid(parse_iperf3_json(doc, None))
    assert result["side"] == "server"
    assert result["sent"] is None
    assert _totals(result["received"]) == approx((12582912, 12582912 * 8 / 1.00017, 1.00017, None))
    assert result["per_stream"][0]["sent"] is None
    assert result["cpu"] == {"local_percent": 0.73, "remote_percent": None}
    assert result["bits_per_second"] == approx(12582912 * 8 / 1.00017)
    assert result["complete"] is False  # a side's totals are missing (normative rule)
    assert any("client's sender totals as zeros" in w for w in result["warnings"])


def test_json_stream_full_run() -> None:
    doc = _tcp_client_p4()
    lines = [json.dumps({"event": "start", "data": doc["start"]})]
    lines += [json.dumps({"event": "interval", "data": iv}) for iv in doc["intervals"]]
    lines.append(json.dumps({"event": "end", "data": doc["end"]}))
    text = "\n".join(lines) + "\n"
    result = _valid(parse_iperf3_json_stream(text))
    assert result == parse_iperf3_json(doc, None)
    assert result["complete"] is True

    cut = _valid(parse_iperf3_json_stream("\n".join(lines[:3]) + '\n{"event":"interval","data":{"str'))
    assert cut["complete"] is False
    assert len(cut["intervals"]) == 2
    assert cut["sent"] is None
    assert any("1 line(s) are not --json-stream events" in w for w in cut["warnings"])
    assert any("no end summary" in w for w in cut["warnings"])
    assert cut["raw"].startswith('{"event": "start"')


def test_json_stream_server_output_events() -> None:
    doc = _tcp_client_p4()
    server = {"start": _start(server=True), "intervals": [], "end": {}}
    lines = [
        json.dumps({"event": "start", "data": doc["start"]}),
        json.dumps({"event": "end", "data": doc["end"]}),
        json.dumps({"event": "server_output_json", "data": server}),
        json.dumps({"event": "server_output_text", "data": "Accepted connection from 10.0.0.2\n"}),
        json.dumps({"event": "surprise", "data": {}}),
    ]
    result = _valid(parse_iperf3_json_stream("\n".join(lines)))
    assert result["server_output"]["side"] == "server"
    assert result["server_output_text"].startswith("Accepted connection")
    assert any("surprise" in w for w in result["warnings"])
    assert result["sent"]["bytes"] == 460_000_000


@pytest.mark.parametrize("text", ["", "\n\n", "garbage\nmore garbage", '{"no_event": 1}'])
def test_json_stream_without_events_is_an_error(text: str) -> None:
    result = _valid(parse_iperf3_json_stream(text))
    assert result["error"] == "no iperf3 --json-stream event could be decoded"
    assert result["raw"] == text


def test_mapping_input_is_not_mutated() -> None:
    doc = _bidir_311_client()
    before = copy.deepcopy(doc)
    parse_iperf3_json(doc, None)
    assert doc == before


@pytest.mark.parametrize("doc", [{"foo": [1, 2, 3]}, {}, {"title": "x", "extra_data": "y"}])
def test_json_object_without_iperf3_members_is_not_a_document(doc: dict[str, Any]) -> None:
    problem = document_problem(doc)
    assert problem is not None and "not an iperf3 -J document" in problem
    assert "foo" not in problem  # says what was expected, never what the input holds
    for result in (parse_iperf3_json(None, json.dumps(doc)), parse_iperf3_json(doc, None)):
        _valid(result)
        assert result["error"] == problem
        assert result["complete"] is False and result["bits_per_second"] is None
    with pytest.raises(IperfParseError, match="not an iperf3 -J document"):
        parse_iperf3_json(doc, None, strict=True)
    with pytest.raises(IperfParseError, match="not an iperf3 -J document"):
        parse_iperf3_json(None, json.dumps(doc), strict=True)


@pytest.mark.parametrize("doc", [{"error": "unable to connect to server"}, {"start": {}}, {"end": {}}])
def test_a_document_needs_only_one_iperf3_member(doc: dict[str, Any]) -> None:
    assert document_problem(doc) is None
    parse_iperf3_json(doc, None, strict=True)


# --------------------------------------------------------------------------- RTT (iperf/rtt.py)


def test_rtt_of_the_sending_stream_is_kept() -> None:
    # iperf 3.1.3: end.streams[].sender min/mean/max_rtt; the last interval's rtt (no rttvar before 3.2)
    result = _valid(parse_iperf3_json(None, (FIXTURES / "iperf3-3.1.3-json-client-tcp-pscheduler.json").read_text()))
    assert result["per_stream"][0]["rtt"] == {
        "rtt_us": 2250,
        "min_us": 1875,
        "mean_us": 10175,
        "max_us": 67000,
        "var_us": None,
    }
    assert result["rtt"] == {"min_us": 1875, "mean_us": 10175, "max_us": 67000}


def test_rtt_of_a_received_stream_is_null_and_the_senders_is_in_server_output() -> None:
    # -R: the client received; its end sender objects print 0 rtt with "sender": false
    name = "iperf3-3.17.1-json-client-tcp-R-O2-b10M-get-server-output-masquerade.json"
    result = _valid(parse_iperf3_json(None, (FIXTURES / name).read_text()))
    assert [item["rtt"] for item in result["per_stream"]] == [None]
    assert result["rtt"] is None
    server = result["server_output"]
    assert server is not None
    assert server["rtt"] == {"min_us": 1711, "mean_us": 1814, "max_us": 2153}
    (item,) = server["per_stream"]
    assert item["rtt"] is not None and item["rtt"]["min_us"] == 1711 and item["rtt"]["var_us"] is not None


def test_rtt_summary_over_streams() -> None:
    doc = _tcp_client_p4()
    for k, entry in enumerate(doc["end"]["streams"]):
        entry["sender"].update(min_rtt=100 + k, mean_rtt=200 + 10 * k, max_rtt=900 - k)
    result = _valid(parse_iperf3_json(doc, None))
    means = [200 + 10 * k for k in range(len(doc["end"]["streams"]))]
    assert result["rtt"] == {"min_us": 100, "mean_us": round(sum(means) / len(means)), "max_us": 900}


def test_udp_has_no_rtt() -> None:
    result = _valid(parse_iperf3_json(None, (FIXTURES / "iperf3-3.16-json-client-udp-b1M-sarius.json").read_text()))
    assert result["rtt"] is None
    assert all(item["rtt"] is None for item in result["per_stream"])


@pytest.mark.parametrize(
    ("system_info", "cwnd", "dropped"),
    [
        ("VMkernel esxi01 6.7.0 #1 SMP Release build-8169922 Apr  3 2018 14:48:22 x86_64", 0, True),
        ("Linux lab1 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 x86_64", 0, True),
        ("Linux lab1 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 x86_64", 1573600, False),
    ],
)
def test_rtt_follows_the_retransmit_trust_rule(system_info: str, cwnd: int, dropped: bool) -> None:
    doc = _esxi_doc(system_info)
    for interval in doc["intervals"]:
        interval["streams"][0].update(snd_cwnd=cwnd, rtt=4242, rttvar=17)
    doc["end"]["streams"][0]["sender"].update(min_rtt=11, mean_rtt=4242, max_rtt=987654)
    result = _valid(parse_iperf3_json(doc, None))
    if dropped:
        assert result["per_stream"][0]["rtt"] is None and result["rtt"] is None
        assert [w for w in result["warnings"] if w.startswith("rtt set to null")]
    else:
        assert result["per_stream"][0]["rtt"] == {
            "rtt_us": 4242,
            "min_us": 11,
            "mean_us": 4242,
            "max_us": 987654,
            "var_us": 17,
        }
        assert result["rtt"] == {"min_us": 11, "mean_us": 4242, "max_us": 987654}
