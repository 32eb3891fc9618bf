# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The iperf2 ``-y C`` parser against every iperf2 CSV fixture and hand-written snippets.

CSV figures are exact integers (bytes, bit/s), so expected values are the fields as printed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import pytest
from jsonschema import Draft202012Validator

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf2_csv import parse_iperf2_csv
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.result import IperfResult, Result, plain
from tests.collection_path import FIXTURES, SCHEMA

VALIDATOR = Draft202012Validator(json.loads(SCHEMA.read_text()))

# (bytes, bits/s, seconds, retransmits)
Tot: TypeAlias = tuple[int, float, float, int | None]
# (start, end, bytes, bits/s, retransmits)
Iv: TypeAlias = tuple[float, float, int, float, int | None]
# (jitter_ms, lost_packets, packets, lost_percent)
Udp: TypeAlias = tuple[float | None, int | None, int | None, float | None]


def totals(value: Tot | None) -> dict[str, Any] | None:
    if value is None:
        return None
    return {"bytes": value[0], "bits_per_second": value[1], "seconds": value[2], "retransmits": value[3]}


def udp(value: Udp) -> dict[str, Any]:
    return {"jitter_ms": value[0], "lost_packets": value[1], "packets": value[2], "lost_percent": value[3]}


def valid(result: IperfResult) -> Result:
    errors = sorted(VALIDATOR.iter_errors(result), key=str)
    assert not errors, [e.message for e in errors]
    return plain(result)


def _udp_core(value: dict[str, Any] | None) -> dict[str, Any] | None:
    if value is None:
        return None
    return {k: value[k] for k in ("jitter_ms", "lost_packets", "packets", "lost_percent")}


@dataclass
class Case:
    file: str
    protocol: str
    complete: bool
    sent: Tot | None
    received: Tot | None
    intervals: list[Iv]
    streams: int = 1
    bidir: bool = False
    udp: Udp | None = None
    reverse_received: Tot | None = None
    reverse_udp: Udp | None = None
    timestamp: str | None = None
    timestamp_local: str | None = None
    endpoints: tuple[tuple[str, int], tuple[str, int]] | None = None
    per_stream_ids: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return self.file


CASES = [
    Case(
        "iperf2-2.0.4-csv-client-udp-dualtest-PARTIAL-autotest.txt",
        protocol="udp",
        complete=True,
        bidir=True,
        # line 1: the client's sender line (id 4); line 3: the server's report for id 4
        sent=(395430, 1048592.0, 3.0, None),
        received=(395430, 1048711.0, 3.0, None),
        udp=(0.007, 0, 269, 0.0),
        # line 2: the client's own listener receiving the reverse direction (id 3)
        reverse_received=(395430, 1048656.0, 3.0, None),
        reverse_udp=(0.004, 0, 269, 0.0),
        intervals=[],
        timestamp_local="2008-08-07T09:42:52",
        endpoints=(("10.75.222.14", 32807), ("10.75.222.13", 5001)),
        per_stream_ids=[4],
    ),
    Case(
        "iperf2-2.0.5era-csv-client-tcp-single-line-overlord.txt",
        protocol="tcp",
        complete=True,
        sent=(46052278272, 36841295787.0, 10.0, None),
        received=None,
        intervals=[],
        timestamp_local="2013-05-10T20:25:55",
        endpoints=(("127.0.0.1", 50469), ("127.0.0.1", 5001)),
        per_stream_ids=[3],
        warnings=["read as the client's (sender's) view"],
    ),
    Case(
        "iperf2-2.0.x-csv-client-udp-bidirectional-tast.txt",
        protocol="udp",
        complete=True,
        bidir=True,
        sent=(393577800, 314824870.0, 10.0, None),
        received=(392785470, 320693067.0, 9.8, None),  # the server's report, 0.0-9.8
        udp=(0.114, 539, 267740, 0.201),
        reverse_received=(368989110, 295186328.0, 10.0, None),
        reverse_udp=(0.060, 3822, 254835, 1.5),
        intervals=[],
        timestamp_local="2024-07-18T03:01:19",
        endpoints=(("192.168.0.8", 59608), ("172.16.60.140", 5001)),
        per_stream_ids=[3],
    ),
    Case(
        # recorded by tests/integration/test_live_figures.py: 4 x 10 Mbit/s over a lossy 20 Mbit/s link.
        # iperf 2.1.8's client CSV carries its own lines only (datagram count -1), no Server Report
        # lines and no SUM line: nothing to sum, nothing made up.
        "iperf2-2.1.8-csv-client-udp-P4-lossy-locallab.txt",
        protocol="udp",
        complete=False,
        streams=4,
        sent=None,
        received=None,
        udp=(None, None, None, None),
        intervals=[],
        endpoints=(("198.19.101.11", 45316), ("198.19.101.12", 5001)),
        per_stream_ids=[2, 1, 4, 3],
        warnings=["stream 2: no server report line", "no total SUM line", "epoch (19700101000000)"],
    ),
    # ---- issue 22: the two directions of a dual / full-duplex test are never one transfer (recorded, he lab)
    Case(
        # the client's receiving end is printed ::,0: its sending direction and its receiving one are told apart
        "iperf2-2.1.8-csv-client-tcp-full-duplex-i1-locallab.txt",
        protocol="tcp",
        complete=True,
        bidir=True,
        sent=(239992892, 959753703.0, 2.0, None),
        received=None,
        reverse_received=(241565696, 957740806.0, 2.0, None),
        intervals=[(0.0, 1.0, 120455228, 963641824.0, None), (1.0, 2.0, 119406592, 955252736.0, None)],
        timestamp_local="2026-12-06T15:51:54",
        endpoints=(("198.18.150.12", 45510), ("198.18.150.11", 25302)),
        per_stream_ids=[1],
    ),
    Case(
        # both directions with both ends printed: which end is this host is not said, so neither is claimed
        "iperf2-2.1.8-csv-server-tcp-full-duplex-i1-locallab.txt",
        protocol="tcp",
        complete=False,
        streams=0,
        sent=None,
        received=None,
        intervals=[],
        timestamp_local="2026-12-06T15:51:54",
        endpoints=(("198.18.150.12", 45510), ("198.18.150.11", 25302)),
        warnings=[
            "not which end is this host",
            "198.18.150.12:45510 -> 198.18.150.11:25302 (transfer 1): 239992892 bytes",
            "198.18.150.11:25302 -> 198.18.150.12:45510 (transfer 1): 241565696 bytes",
        ],
    ),
    Case(
        "iperf2-2.1.8-csv-server-tcp-full-duplex-P2-i1-locallab.txt",
        protocol="tcp",
        complete=False,
        streams=0,
        sent=None,
        received=None,
        intervals=[],
        timestamp_local="2026-12-06T15:51:59",
        endpoints=(("198.18.150.11", 25303), ("198.18.150.12", 53610)),
        warnings=["not which end is this host", "(transfer 2): 121634876 bytes"],
    ),
    Case(
        # its banner names the connection it opened back to the client: that one it sends on (id 2)
        "iperf2-2.1.8-csv-server-tcp-d-dualtest-i1-locallab.txt",
        protocol="tcp",
        complete=True,
        bidir=True,
        sent=(241434624, 945885772.0, 2.0, None),
        received=None,
        reverse_received=(241696828, 956055115.0, 2.0, None),
        intervals=[(0.0, 1.0, 121896960, 975175680.0, None), (1.0, 2.0, 119406592, 955252736.0, None)],
        timestamp_local="2026-12-06T15:52:03",
        endpoints=(("198.18.150.11", 36376), ("198.18.150.12", 25304)),
        per_stream_ids=[2],
    ),
    Case(
        "iperf2-2.1.8-csv-server-tcp-r-tradeoff-i1-locallab.txt",
        protocol="tcp",
        complete=True,
        bidir=True,
        sent=(242614272, 958617680.0, 2.0, None),
        received=None,
        reverse_received=(241827900, 958700076.0, 2.0, None),
        intervals=[(0.0, 1.0, 121765888, 974127104.0, None), (1.0, 2.0, 120717312, 965738496.0, None)],
        timestamp_local="2026-12-06T15:52:09",
        endpoints=(("198.18.150.11", 38296), ("198.18.150.12", 25305)),
        per_stream_ids=[2],
    ),
    Case(
        # the sending direction's total has datagram count -1; no report of the client's receiving reached it
        "iperf2-2.1.8-csv-server-udp-d-dualtest-i1-locallab.txt",
        protocol="udp",
        complete=False,
        bidir=True,
        sent=(5246430, 20976668.0, 2.0, None),
        received=None,
        udp=(None, None, None, None),
        reverse_received=(5247900, 20983101.0, 2.0, None),
        reverse_udp=(0.001, 0, 3570, 0.0),
        intervals=[(0.0, 1.0, 2622480, 20979840.0, None), (1.0, 2.0, 2621010, 20968080.0, None)],
        timestamp_local="2026-12-06T15:52:35",
        endpoints=(("198.18.150.11", 39066), ("198.18.150.12", 25308)),
        per_stream_ids=[2],
        warnings=["stream 2: no server report line"],
    ),
    Case(
        # issue 22: a line with write counts that carries loss is the receiver's report (2.2 -e layout)
        "iperf2-2.2.0-csv-client-udp-e-sum-only-header-PARTIAL-benchwrapper.txt",
        protocol="udp",
        complete=True,
        streams=0,
        sent=None,
        received=(7844390400, 6275636577.0, 10.0, None),
        udp=(0.0, 179685, 5516005, 3.258),
        intervals=[],
        timestamp="2024-06-22T14:10:50.655+02:00",
        endpoints=(("192.168.64.2", 0), ("0.0.0.0", 5001)),
    ),
    Case(
        "iperf2-2.1.9-csv-client-tcp-e-i1-PARTIAL-k8s.txt",
        protocol="tcp",
        complete=False,  # two 1 s intervals, no total line
        sent=None,
        received=None,
        intervals=[
            (0.0, 1.0, 5220466748, 41763733984.0, None),  # tcpretry -1: no TCP stats
            (1.0, 2.0, 5127667712, 41021341696.0, None),
        ],
        timestamp="2024-09-08T11:30:35.128+00:00",
        endpoints=(("192.168.9.3", 58256), ("192.168.9.4", 5001)),
        per_stream_ids=[1],
        warnings=["no total line"],
    ),
    Case(
        "iperf2-2.2.x-csv-client-tcp-e-header-final-ovneip.txt",
        protocol="tcp",
        complete=True,
        sent=(110755904, 86754824.0, 10.2, None),  # tcpretry 4294967295 = unknown
        received=None,
        intervals=[(0.0, 1.0, 57278528, 458228224.0, None)],
        timestamp="2026-09-08T08:31:14.550+00:00",
        endpoints=(("10.0.0.2", 37818), ("172.23.0.12", 20288)),
        per_stream_ids=[1],
    ),
    Case(
        "iperf2-lt2.1.9-csv-client-tcp-e-i1-ms-timestamp-PARTIAL-k8s.txt",
        protocol="tcp",
        complete=False,
        sent=None,
        received=None,
        intervals=[
            (0.0, 1.0, 1677852672, 13422821376.0, None),
            (1.0, 2.0, 1980760064, 15846080512.0, None),
            (2.0, 3.0, 1886650368, 15093202944.0, None),
        ],
        timestamp_local="2020-12-10T14:18:00.884",
        endpoints=(("10.244.2.24", 47880), ("10.96.114.79", 6789)),
        per_stream_ids=[3],
        warnings=["no total line", "read as the client's (sender's) view"],
    ),
]


def test_every_iperf2_csv_fixture_has_a_case() -> None:
    on_disk = {p.name for p in FIXTURES.glob("iperf2-*.txt") if "-csv-" in p.name}
    assert on_disk == {c.file for c in CASES}
    assert len(on_disk) == 14


@pytest.mark.parametrize("case", CASES, ids=str)
def test_fixture(case: Case) -> None:
    result = valid(parse_iperf2_csv((FIXTURES / case.file).read_text()))
    assert result["tool"] == "iperf2"
    assert result["format"] == "csv"
    assert result["tool_version"] is None
    assert result["side"] is None  # the CSV never says
    assert result["local"] is None and result["remote"] is None
    assert result["protocol"] == case.protocol
    assert result["complete"] is case.complete
    assert result["bidir"] is case.bidir
    assert result["reverse"] is False
    assert result["error"] is None
    assert result["streams"] == case.streams
    assert result["sent"] == totals(case.sent)
    assert result["received"] == totals(case.received)
    headline = case.received or case.sent
    assert result["bits_per_second"] == (headline[1] if headline else None)
    assert result["duration"] == (headline[2] if headline else None)
    assert [
        (iv["start"], iv["end"], iv["bytes"], iv["bits_per_second"], iv["retransmits"]) for iv in result["intervals"]
    ] == case.intervals
    assert all(iv["omitted"] is False for iv in result["intervals"])
    if case.protocol == "udp":
        assert case.udp is not None
        assert _udp_core(result["udp"]) == pytest.approx(udp(case.udp))
    else:
        assert result["udp"] is None
    if case.bidir:
        assert result["reverse_received"] == totals(case.reverse_received)
        assert result["reverse_sent"] is None
        if case.protocol == "udp":
            assert case.reverse_udp is not None
            assert _udp_core(result["reverse_udp"]) == pytest.approx(udp(case.reverse_udp))
        else:
            assert "reverse_udp" not in result
    else:
        assert "reverse_sent" not in result
    assert result["timestamp"] == case.timestamp
    assert result.get("timestamp_local") == case.timestamp_local
    if case.endpoints:
        (h1, p1), (h2, p2) = case.endpoints
        assert result["csv_endpoints"] == [{"host": h1, "port": p1}, {"host": h2, "port": p2}]
    assert [item["id"] for item in result["per_stream"]] == case.per_stream_ids
    for needle in case.warnings:
        assert any(needle in w for w in result["warnings"]), (needle, result["warnings"])
    if not case.warnings:
        assert result["warnings"] == []


def test_tast_per_stream_sender_and_receiver_views() -> None:
    result = parse_iperf2_csv((FIXTURES / "iperf2-2.0.x-csv-client-udp-bidirectional-tast.txt").read_text())
    (item,) = result["per_stream"]
    assert item["sent"] == totals((393577800, 314824870.0, 10.0, None))
    assert item["received"] == totals((392785470, 320693067.0, 9.8, None))
    udp = item["udp"]
    assert udp is not None
    assert udp["out_of_order"] == 0
    (rev,) = result["reverse_per_stream"]
    assert rev["id"] == 4
    reverse_udp = rev["udp"]
    assert reverse_udp is not None
    assert reverse_udp["lost_packets"] == 3822


# --------------------------------------------------------------------------- snippets

HEADER_22_UDP_READ = """\
time,srcaddress,srcport,dstaddr,dstport,transferid,istart,iend,bytes,speed,jitter,errors,datagrams,errpercent,outoforder,readcnt,readtimeo,readerrlen,pps
+0000:20250101120001.000,10.0.0.1,40000,10.0.0.2,5001,1,0.0,1.0,1311240,10489920,0.012,0,892,0.000,0,892,0,0,892.000000
+0000:20250101120002.000,10.0.0.1,40000,10.0.0.2,5001,1,1.0,2.0,1309770,10478160,0.010,1,892,0.112,0,891,0,0,891.000000
+0000:20250101120002.001,10.0.0.1,40000,10.0.0.2,5001,1,0.0,2.0,2621010,10484040,0.010,1,1784,0.056,0,1783,0,0,891.500000
"""


def test_2_2_header_udp_receiver_with_separate_istart_iend() -> None:
    result = valid(parse_iperf2_csv(HEADER_22_UDP_READ))
    assert result["protocol"] == "udp"
    assert result["sent"] is None
    assert result["received"] == totals((2621010, 10484040.0, 2.0, None))
    assert _udp_core(result["udp"]) == udp((0.010, 1, 1784, 0.056))
    assert [(iv["start"], iv["end"], iv["bytes"]) for iv in result["intervals"]] == [
        (0.0, 1.0, 1311240),
        (1.0, 2.0, 1309770),
    ]
    assert result["timestamp"] == "2025-01-01T12:00:01.000+00:00"
    assert result["complete"] is True
    assert result["warnings"] == []


HEADER_22_TCP_P2 = """\
time,srcaddress,srcport,dstaddr,dstport,transferid,istart,iend,bytes,speed,writecnt,writeerr,tcpretry,tcpcwnd,tcppcwnd,tcprtt,tcprttvar
-0500:20250101070001.000,10.0.0.1,40000,10.0.0.2,5001,1,0.0,1.0,500000000,4000000000,3815,0,2,1024,4294967295,120,15
-0500:20250101070001.000,10.0.0.1,40002,10.0.0.2,5001,2,0.0,1.0,400000000,3200000000,3052,0,4294967295,900,4294967295,130,20
-0500:20250101070001.000,10.0.0.1,0,10.0.0.2,5001,-1,0.0,1.0,900000000,7200000000,6867,0,4294967295,-1,4294967295,0,0
-0500:20250101070002.001,10.0.0.1,40000,10.0.0.2,5001,1,0.0,2.0,1000000000,4000000000,7630,0,5,1024,4294967295,125,16
-0500:20250101070002.001,10.0.0.1,40002,10.0.0.2,5001,2,0.0,2.0,800000000,3200000000,6104,0,1,900,4294967295,131,22
-0500:20250101070002.001,10.0.0.1,0,10.0.0.2,5001,-1,0.0,2.0,1800000000,7200000000,13734,0,6,-1,4294967295,0,0
"""


def test_2_2_header_tcp_sum_lines_and_unknown_u32() -> None:
    result = valid(parse_iperf2_csv(HEADER_22_TCP_P2, side="client"))
    assert result["side"] == "client"
    assert result["streams"] == 2
    assert result["sent"] == totals((1800000000, 7200000000.0, 2.0, 6))
    assert result["intervals"] == [
        {
            "start": 0.0,
            "end": 1.0,
            "bytes": 900000000,
            "bits_per_second": 7200000000.0,
            "retransmits": None,  # 4294967295
            "omitted": False,
        }
    ]
    by_id = {item["id"]: item for item in result["per_stream"]}
    assert by_id[1]["sent"] == totals((1000000000, 4000000000.0, 2.0, 5))
    assert by_id[2]["sent"] == totals((800000000, 3200000000.0, 2.0, 1))
    assert result["timestamp"] == "2025-01-01T07:00:01.000-05:00"
    assert result["warnings"] == []


# 2.1.9 -e with TCP stats: 15 fields (writecnt,writeerr,tcpretry,tcpcwnd,tcprtt,tcprttvar).
CSV_219_TCP_STATS = """\
+0000:20240908113035.128,192.168.9.3,58256,192.168.9.4,5001,1,0.0-1.0,5220466748,41763733984,39829,0,12,2301,45,7
+0000:20240908113036.128,192.168.9.3,58256,192.168.9.4,5001,1,1.0-2.0,5127667712,41021341696,39121,0,0,2301,44,6
+0000:20240908113036.130,192.168.9.3,58256,192.168.9.4,5001,1,0.0-2.0,10348134460,41392537840,78950,0,12,2301,51,9
"""


def test_2_1_9_tcp_retransmits_from_tcpretry() -> None:
    result = valid(parse_iperf2_csv(CSV_219_TCP_STATS))
    assert result["sent"] == totals((10348134460, 41392537840.0, 2.0, 12))
    assert [iv["retransmits"] for iv in result["intervals"]] == [12, 0]
    assert result["complete"] is True
    # write columns say "sender": no role assumption needed
    assert result["warnings"] == []


# 2.1.9 -e TCP server: 18 fields (readcnt + 8 histogram bins).
CSV_219_TCP_READ = """\
+0000:20240908113036.130,192.168.9.3,58256,192.168.9.4,5001,1,0.0-2.0,10348134460,41392537840,227306,9316,22088,21792,7096,22893,17193,6138,120790
"""


def test_2_1_9_tcp_read_enhanced_is_the_receiver() -> None:
    result = valid(parse_iperf2_csv(CSV_219_TCP_READ))
    assert result["sent"] is None
    assert result["received"] == totals((10348134460, 41392537840.0, 2.0, None))
    assert result["warnings"] == []


# 2.1.9 -e UDP: 17 fields (14 + writecnt,writeerr,pps); the second total is the server's report.
CSV_219_UDP_ENHANCED = """\
+0000:20240908113035.128,192.168.9.3,40000,192.168.9.4,5001,1,0.0-1.0,1311240,10489920,0.000,0,892,0.000,0,892,0,891.998
+0000:20240908113036.128,192.168.9.3,40000,192.168.9.4,5001,1,0.0-1.0,1311240,10489920,0.000,0,-1,-0.000,0,892,0,891.998
+0000:20240908113036.131,192.168.9.3,40000,192.168.9.4,5001,1,0.0-1.0,1309770,10478160,0.021,1,892,0.112,2,0,0,0.000
"""


def test_2_1_9_udp_enhanced_sender_and_report() -> None:
    result = valid(parse_iperf2_csv(CSV_219_UDP_ENHANCED))
    assert result["protocol"] == "udp"
    assert result["sent"] == totals((1311240, 10489920.0, 1.0, None))
    assert result["received"] == totals((1309770, 10478160.0, 1.0, None))
    assert _udp_core(result["udp"]) == udp((0.021, 1, 892, 0.112))
    assert result["udp"]["out_of_order"] == 2
    assert result["bits_per_second"] == 10478160.0
    assert result["complete"] is True


# Debian iperf 2.1.8 `-u -b 20M -y C -i 0.5` client: no server report line in CSV.
CSV_218_UDP_CLIENT = """\
20261130060559,127.0.0.1,40969,127.0.0.1,15308,1,0.0-0.5,1312710,21003360,0.000,0,893,0.000,0
20261130060559,127.0.0.1,40969,127.0.0.1,15308,1,0.5-1.0,1311240,20979840,0.000,0,892,0.000,0
20261130060559,127.0.0.1,40969,127.0.0.1,15308,1,0.0-1.0,2626890,20992490,0.000,0,-1,-0.000,0
"""


def test_2_1_8_udp_client_total_minus_one_is_the_sender() -> None:
    result = valid(parse_iperf2_csv(CSV_218_UDP_CLIENT))
    assert result["sent"] == totals((2626890, 20992490.0, 1.0, None))
    assert result["received"] is None
    assert _udp_core(result["udp"]) == udp((None, None, None, None))
    assert len(result["intervals"]) == 2
    assert result["intervals"][0]["bytes"] == 1312710
    assert result["complete"] is False
    assert any("no server report line" in w for w in result["warnings"])
    assert result["timestamp_local"] == "2026-11-30T06:05:59"


# Debian iperf 2.1.8 server (`iperf -s -y C`): epoch time stamps, client first.
CSV_218_SERVER_P2 = """\
19700101000000,127.0.0.1,52180,127.0.0.1,15307,2,0.0-1.0,2511863868,20051719540
19700101000000,127.0.0.1,52182,127.0.0.1,15307,1,0.0-1.0,2187329596,17421459701
"""


def test_server_side_argument_and_missing_sum_line() -> None:
    result = valid(parse_iperf2_csv(CSV_218_SERVER_P2, side="server"))
    assert result["side"] == "server"
    assert result["streams"] == 2
    assert result["sent"] is None and result["received"] is None  # 2.1.8 prints no SUM line
    by_id = {item["id"]: item for item in result["per_stream"]}
    assert by_id[2]["received"] == totals((2511863868, 20051719540.0, 1.0, None))
    assert by_id[1]["received"] == totals((2187329596, 17421459701.0, 1.0, None))
    assert result["complete"] is False
    assert result["timestamp"] is None and "timestamp_local" not in result
    assert any("epoch" in w for w in result["warnings"])
    assert any("no total SUM line" in w for w in result["warnings"])


def test_legacy_udp_client_with_intervals_and_server_report() -> None:
    text = """\
20130510202545,10.0.0.1,50000,10.0.0.2,5001,3,0.0-1.0,131250,1050000
20130510202546,10.0.0.1,50000,10.0.0.2,5001,3,1.0-2.0,131250,1050000
20130510202546,10.0.0.1,50000,10.0.0.2,5001,3,0.0-2.0,262500,1050000
20130510202546,10.0.0.2,5001,10.0.0.1,50000,3,0.0-2.0,261030,1044120,0.031,1,179,0.559,0
"""
    result = valid(parse_iperf2_csv(text))
    assert result["protocol"] == "udp"
    assert result["bidir"] is False
    assert result["sent"] == totals((262500, 1050000.0, 2.0, None))
    assert result["received"] == totals((261030, 1044120.0, 2.0, None))
    assert _udp_core(result["udp"]) == udp((0.031, 1, 179, 0.559))
    assert len(result["intervals"]) == 2
    assert result["complete"] is True
    assert result["warnings"] == []


def test_noise_lines_and_errors() -> None:
    text = """\
------------------------------------------------------------
Client connecting to 127.0.0.1, TCP port 15322
TCP window size: 4.00 MByte (default)
------------------------------------------------------------
19700101000000,127.0.0.1,37912,127.0.0.1,15316,1,0.0-1.0,2170945596,17345328057
"""
    result = valid(parse_iperf2_csv(text, side="server"))
    assert result["received"] == totals((2170945596, 17345328057.0, 1.0, None))
    assert not any("skipped" in w for w in result["warnings"])
    failed = valid(parse_iperf2_csv("tcp connect failed: Connection refused\n"))
    assert failed["error"] == "tcp connect failed: Connection refused"
    assert failed["complete"] is False
    assert failed["bits_per_second"] is None


def test_unknown_field_count_reads_the_basic_columns() -> None:
    text = "20130510202555,127.0.0.1,50469,127.0.0.1,5001,3,0.0-10.0,46052278272,36841295787,7,8\n"
    result = valid(parse_iperf2_csv(text))
    assert result["sent"] == totals((46052278272, 36841295787.0, 10.0, None))
    assert any("11-field" in w for w in result["warnings"])


def test_multi_stream_udp_server_reports_are_summed() -> None:
    """Where the CSV repeats each stream's Server Report (2.0.x layout), they are summed (iperf/udp_sum.py).

    Constructed in the layout of ``iperf2-2.0.x-csv-client-udp-bidirectional-tast.txt``: per
    stream the client's 9-field line, then the server's 14-field report with the endpoints swapped.
    """
    text = "\n".join(
        [
            "20240718030119,192.168.0.8,59608,172.16.60.140,5001,3,0.0-10.0,13107200,10485760",
            "20240718030119,192.168.0.8,59610,172.16.60.140,5001,4,0.0-10.0,13107200,10485760",
            "20240718030119,192.168.0.8,5001,172.16.60.140,59608,-1,0.0-20.0,26214400,20971520",
            "20240718030129,172.16.60.140,5001,192.168.0.8,59608,3,0.0-10.0,6553600,5242880,0.500,4458,8916,50.000,0",
            "20240718030129,172.16.60.140,5001,192.168.0.8,59610,4,0.0-10.1,4369066,3460646,2.250,5944,8916,66.667,3",
        ]
    )
    result = valid(parse_iperf2_csv(text, side="client"))
    assert result["protocol"] == "udp" and result["streams"] == 2
    assert result["received"] == {
        "bytes": 6553600 + 4369066,
        "bits_per_second": 5242880.0 + 3460646.0,
        "seconds": 10.1,
        "retransmits": None,
    }
    assert _udp_core(result["udp"]) == pytest.approx(udp((2.25, 4458 + 5944, 2 * 8916, 100 * 10402 / 17832)))
    assert result["bits_per_second"] == 5242880.0 + 3460646.0  # delivered, not the 20.97 Mbit/s offered
    assert result["complete"] is True
    # one report missing: the sum of the other is a lower bound, said so; incomplete
    partial = valid(parse_iperf2_csv("\n".join(text.splitlines()[:4]), side="client"))
    assert partial["received"] is not None and partial["received"]["bytes"] == 6553600
    assert partial["complete"] is False
    assert any("only 1 of 2 streams have a receiver total" in w for w in partial["warnings"])


# --------------------------------------------------------------------------- issue 22


def test_full_duplex_server_directions_told_by_the_end_every_connection_shares() -> None:
    text = (FIXTURES / "iperf2-2.1.8-csv-server-tcp-full-duplex-P2-i1-locallab.txt").read_text()
    result = valid(parse_iperf2_csv(text, side="server"))
    assert result["bidir"] is True
    # 198.18.150.11:25303 is in both connections: the server's; its sending is server-to-client
    received = {item["id"]: item["received"]["bytes"] for item in result["per_stream"]}
    sent = {item["id"]: item["sent"]["bytes"] for item in result["reverse_per_stream"]}
    assert received == {1: 122159164, 2: 121634876}
    assert sent == {1: 123994112, 2: 118489088}
    assert result["sent"] is None and result["received"] is None  # 2.1.8 prints no SUM line: no total made up
    assert result["complete"] is False
    # one connection: nothing shared to tell by, even with the side given
    single = (FIXTURES / "iperf2-2.1.8-csv-server-tcp-full-duplex-i1-locallab.txt").read_text()
    alone = valid(parse_iperf2_csv(single, side="server"))
    assert alone["per_stream"] == [] and alone["bits_per_second"] is None
    assert any("not which end is this host" in w for w in alone["warnings"])


# 2.2 -e UDP client with --sum-only and -i 1: the sender's own sum intervals (no loss, datagrams = writes) and
# then the receiver's report in the same layout (loss, its datagram count); built on the recorded 2.2.0 line.
HEADER_22_UDP_WRITE_SUM_ONLY = """\
time,srcaddress,srcport,dstaddr,dstport,transferid,istart,iend,bytes,speed,jitter,errors,datagrams,errpercent,outoforder,writecnt,writeerr,pps
+0200:20240622141041.655,192.168.64.2,0,0.0.0.0,5001,-1,0.0,5.0,3922195200,6275512320,0.000,0,2668160,0.000,0,2668160,0,533632.000000
+0200:20240622141046.655,192.168.64.2,0,0.0.0.0,5001,-1,5.0,10.0,3922196670,6275514672,0.000,0,2668161,0.000,0,2668161,0,533632.200000
+0200:20240622141050.655,192.168.64.2,0,0.0.0.0,5001,-1,0.0,10.0,7844390400,6275636577,0.000,179685,5516005,3.258,0,5336321,0,533642.566123
"""


def test_2_2_write_layout_rows_with_loss_are_the_receivers_report() -> None:
    result = valid(parse_iperf2_csv(HEADER_22_UDP_WRITE_SUM_ONLY))
    assert result["received"] == totals((7844390400, 6275636577.0, 10.0, None))
    assert _udp_core(result["udp"]) == udp((0.0, 179685, 5516005, 3.258))
    assert result["bits_per_second"] == 6275636577.0  # delivered
    assert [(iv["start"], iv["end"]) for iv in result["intervals"]] == [(0.0, 5.0), (5.0, 10.0)]
    assert not any("no receiver total" in w or "no server report" in w for w in result["warnings"])
    name = "iperf2-2.2.0-csv-client-udp-e-sum-only-header-PARTIAL-benchwrapper.txt"
    recorded = valid(parse_iperf2_csv((FIXTURES / name).read_text()))
    assert recorded["udp"] is not None and recorded["udp"]["sent_packets"] == 5336321  # its write count, kept beside
