# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The iperf2 human-readable parser against every iperf2 text fixture and hand-written snippets.

Expected figures were copied by hand from the fixture files. Printed amounts are written as
printed (``"6.47 GBytes"``, ``"926 Mbits/sec"``) and converted here by the unit rule
(bytes 1024-based, bit rates 1000-based, byte rates 1024-based bytes x 8), independently of
``iperf/units.py``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import pytest
from jsonschema import Draft202012Validator

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf2_text import (
    parse_iperf2_text,
    split_iperf2_text,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.result import IperfResult, Result, plain
from tests.collection_path import FIXTURES, SCHEMA

VALIDATOR = Draft202012Validator(json.loads(SCHEMA.read_text()))

_BYTE_PREFIX = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_BIT_PREFIX = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def nbytes(printed: str | int) -> int:
    """``"6.47 GBytes"`` -> bytes, 1024-based (an int is a sum of such figures already)."""
    if isinstance(printed, int):
        return printed
    number, unit = printed.split()
    return round(float(number) * _BYTE_PREFIX[unit[: -len("Bytes")]])


def rate(printed: str) -> float:
    """``"926 Mbits/sec"`` -> bit/s (1000-based); ``"1701362 KBytes/sec"`` -> bit/s (1024-based x 8)."""
    number, unit = printed.split()
    if "bits/sec" in unit:
        return float(number) * _BIT_PREFIX[unit[: -len("bits/sec")]]
    return float(number) * _BYTE_PREFIX[unit[: -len("Bytes/sec")]] * 8


# (printed bytes, printed rate, seconds, retransmits)
Tot: TypeAlias = tuple[str | int, str, float, int | None]
# (index, start, end, printed bytes, printed rate, retransmits)
Iv: TypeAlias = tuple[int, float, float, str, str, int | None]
# (jitter_ms, lost_packets, packets, lost_percent)
Udp: TypeAlias = tuple[float | None, int | None, int | None, float | None]


def tot(b: str, r: str, s: float, retr: int | None = None) -> Tot:
    return (b, r, s, retr)


def check_totals(actual: dict[str, Any] | None, expected: Tot | None) -> None:
    if expected is None:
        assert actual is None
        return
    assert actual is not None
    b, r, s, retr = expected
    assert actual["bytes"] == nbytes(b)
    assert actual["bits_per_second"] == pytest.approx(rate(r))
    assert actual["seconds"] == pytest.approx(s)
    assert actual["retransmits"] == retr


def check_udp(actual: dict[str, Any] | None, expected: Udp | None) -> None:
    if expected is None:
        assert actual is None
        return
    assert actual is not None
    jitter, lost, packets, pct = expected
    assert actual["jitter_ms"] == (pytest.approx(jitter) if jitter is not None else None)
    assert actual["lost_packets"] == lost
    assert actual["packets"] == packets
    assert actual["lost_percent"] == (pytest.approx(pct) if pct is not None else None)


def dig(result: dict[str, Any], path: str) -> Any:
    value: Any = result
    for part in path.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def valid(result: IperfResult) -> Result:
    errors = sorted(VALIDATOR.iter_errors(result), key=str)
    assert not errors, [e.message for e in errors]
    return plain(result)


@dataclass
class Case:
    file: str
    side: str | None
    protocol: str
    streams: int
    complete: bool
    sent: Tot | None
    received: Tot | None
    n_intervals: int
    intervals: list[Iv] = field(default_factory=list)
    udp: Udp | None = None
    per_stream: list[tuple[int, Tot | None, Tot | None]] = field(default_factory=list)
    n_per_stream: int | None = None
    local: tuple[str | None, int] | None = None
    remote: tuple[str | None, int] | None = None
    timestamp: str | None = None
    reverse: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return self.file


CASES = [
    Case(
        "iperf2-2.0.13-text-client-tcp-V-ipv6-t60-gracefullife.txt",
        side="client",
        protocol="tcp",
        streams=1,
        complete=True,
        sent=tot("6.47 GBytes", "926 Mbits/sec", 60.0),
        received=None,
        n_intervals=0,
        per_stream=[(4, tot("6.47 GBytes", "926 Mbits/sec", 60.0), None)],
        local=("2001:db8:dead:beaf::2", 64153),
        remote=("2001:db8:dead:beaf::3", 5001),
    ),
    Case(
        "iperf2-2.0.13-text-client-tcp-e-fm-P2-pkb.txt",
        side="client",
        protocol="tcp",
        streams=2,
        complete=True,
        sent=tot("14095 MBytes", "1970 Mbits/sec", 60.01, 0),
        received=None,
        n_intervals=0,
        per_stream=[
            (4, tot("7047 MBytes", "985 Mbits/sec", 60.01, 0), None),
            (3, tot("7048 MBytes", "985 Mbits/sec", 60.0, 0), None),
        ],
        local=("10.128.0.2", 54718),
        remote=("10.128.0.3", 20000),
    ),
    Case(
        "iperf2-2.0.13-text-client-tcp-e-fm-i1-pkb.txt",
        side="client",
        protocol="tcp",
        streams=1,
        complete=True,
        sent=tot("601 MBytes", "939 Mbits/sec", 5.37, 0),
        received=None,
        n_intervals=5,
        intervals=[
            (0, 0.0, 1.0, "0.62 MBytes", "5.24 Mbits/sec", 0),
            (2, 2.0, 3.0, "96.6 MBytes", "811 Mbits/sec", 0),
            (4, 4.0, 5.0, "242 MBytes", "2026 Mbits/sec", 0),
        ],
        local=("10.160.0.44", 34540),
        remote=("10.128.0.69", 20000),
    ),
    Case(
        "iperf2-2.0.13-text-client-tcp-e-fm-pkb.txt",
        side="client",
        protocol="tcp",
        streams=1,
        complete=True,
        sent=tot("14063 MBytes", "1966 Mbits/sec", 60.0, 0),
        received=None,
        n_intervals=0,
    ),
    Case(
        "iperf2-2.0.13-text-client-udp-e-fm-P2-pkb.txt",
        side="client",
        protocol="udp",
        streams=2,
        complete=True,
        sent=tot("15.0 MBytes", "2.10 Mbits/sec", 60.0),
        # iperf2 prints no summed Server Report: the two streams' reports summed (udp_sum.py)
        received=tot("15.0 MBytes", "2.10 Mbits/sec", 60.0),
        n_intervals=0,
        udp=(0.039, 1, 10700, 100 * 1 / 10700),  # jitter: the larger stream's; loss from the summed counts
        per_stream=[
            (3, tot("7.50 MBytes", "1.05 Mbits/sec", 60.0), tot("7.50 MBytes", "1.05 Mbits/sec", 60.0)),
            (4, tot("7.50 MBytes", "1.05 Mbits/sec", 60.0), tot("7.50 MBytes", "1.05 Mbits/sec", 60.0)),
        ],
        extra={
            "udp.sent_packets": 10700,
            "per_stream.0.udp.jitter_ms": 0.026,
            "per_stream.0.udp.lost_packets": 1,
            "per_stream.0.udp.packets": 5350,
            "per_stream.0.udp.lost_percent": 0.019,
            "per_stream.0.udp.sent_packets": 5350,
            "per_stream.1.udp.jitter_ms": 0.039,
            "per_stream.1.udp.lost_packets": 0,
            "per_stream.1.udp.out_of_order": 1,
        },
    ),
    Case(
        "iperf2-2.0.13-text-client-udp-e-fm-pkb.txt",
        side="client",
        protocol="udp",
        streams=1,
        complete=True,
        sent=tot("7.50 MBytes", "1.05 Mbits/sec", 60.0),
        received=tot("7.50 MBytes", "1.05 Mbits/sec", 60.0),
        n_intervals=0,
        udp=(0.017, 0, 5350, 0.0),
        extra={"udp.sent_packets": 5350, "bits_per_second": 1.05e6},
        local=("10.128.0.3", 37350),
        remote=("10.128.0.2", 25000),
    ),
    Case(
        "iperf2-2.0.x-esxi-text-client-tcp-m-w2m-P4-elatov.txt",
        side="client",
        protocol="tcp",
        streams=4,
        complete=True,
        sent=tot("8.43 GBytes", "7.24 Gbits/sec", 10.0),
        received=None,
        n_intervals=0,
        per_stream=[
            (6, tot("2.10 GBytes", "1.81 Gbits/sec", 10.0), None),
            (4, tot("2.10 GBytes", "1.81 Gbits/sec", 10.0), None),
            (5, tot("2.11 GBytes", "1.81 Gbits/sec", 10.0), None),
            (3, tot("2.11 GBytes", "1.81 Gbits/sec", 10.0), None),
        ],
        local=("10.1.0.10", 14778),
        remote=("10.1.0.3", 5001),
    ),
    Case(
        "iperf2-2.0.x-text-client-tcp-P3-i1-m-pscheduler.txt",
        side="client",
        protocol="tcp",
        streams=3,
        complete=True,
        sent=tot("2.02 GBytes", "1.73 Gbits/sec", 10.0),
        received=None,
        n_intervals=10,
        intervals=[
            (0, 0.0, 1.0, "201 MBytes", "1.68 Gbits/sec", None),
            (5, 5.0, 6.0, "205 MBytes", "1.72 Gbits/sec", None),
            (9, 9.0, 10.0, "211 MBytes", "1.77 Gbits/sec", None),
        ],
        per_stream=[
            (5, tot("701 MBytes", "588 Mbits/sec", 10.0), None),
            (4, tot("663 MBytes", "556 Mbits/sec", 10.0), None),
            (3, tot("702 MBytes", "589 Mbits/sec", 10.0), None),
        ],
    ),
    Case(
        "iperf2-2.0.x-text-client-tcp-i1-fb-pscheduler.txt",
        side="client",
        protocol="tcp",
        streams=1,
        complete=True,
        sent=tot("2169110528 Bytes", "1735167481 bits/sec", 10.0),
        received=None,
        n_intervals=10,
        intervals=[
            (0, 0.0, 1.0, "224788480 Bytes", "1798307840 bits/sec", None),
            (2, 2.0, 3.0, "150339584 Bytes", "1202716672 bits/sec", None),
            (9, 9.0, 10.0, "226492416 Bytes", "1811939328 bits/sec", None),
        ],
        local=("10.0.2.4", 50338),
        remote=("10.0.2.15", 5001),
    ),
    Case(
        "iperf2-2.0.x-text-client-udp-P2-fk-moler.txt",
        side="client",
        protocol="udp",
        streams=2,
        complete=True,
        sent=tot("735 KBytes", "1999 Kbits/sec", 3.0),
        received=tot("735 KBytes", "1998 Kbits/sec", 3.0),  # 369 + 366 KBytes, 1003 + 995 Kbits/sec
        n_intervals=2,
        intervals=[
            (0, 0.0, 1.0, "247 KBytes", "2023 Kbits/sec", None),
            (1, 1.0, 2.0, "247 KBytes", "2023 Kbits/sec", None),
        ],
        udp=(0.188, 1, 512, 100 * 1 / 512),
        per_stream=[
            (3, tot("368 KBytes", "999 Kbits/sec", 3.0), tot("369 KBytes", "1003 Kbits/sec", 3.0)),
            (4, tot("368 KBytes", "999 Kbits/sec", 3.0), tot("366 KBytes", "995 Kbits/sec", 3.0)),
        ],
        extra={
            "udp.sent_packets": 512,
            "per_stream.0.udp.jitter_ms": 0.188,
            "per_stream.0.udp.packets": 256,
            "per_stream.0.udp.out_of_order": 1,
            "per_stream.1.udp.jitter_ms": 0.097,
            "per_stream.1.udp.lost_packets": 1,
            "per_stream.1.udp.lost_percent": 0.39,
        },
    ),
    Case(
        # issue #10: 10 UDP streams at 65-74 % loss; the sender offered 291 Mbit/s, the receivers got 95.4
        "iperf2-2.0.5era-text-client-udp-b110m-P10-65pct-loss-edgecloud.txt",
        side="client",
        protocol="udp",
        streams=10,
        complete=True,
        sent=tot("347 MBytes", "291 Mbits/sec", 10.0),
        # the ten Server Reports summed (each figure as printed), over the longest report's 0.0-10.3 s
        received=(
            sum(nbytes(f"{mb} MBytes") for mb in (12.1, 12.1, 12.2, 12.1, 12.1, 9.14, 12.1, 9.17, 12.0, 12.1)),
            "95.44 Mbits/sec",
            10.3,
            None,
        ),
        n_intervals=0,
        udp=(16.419, 165741, 247762, 100 * 165741 / 247762),
        per_stream=[
            (3, tot("35.1 MBytes", "29.4 Mbits/sec", 10.0), tot("12.1 MBytes", "10.1 Mbits/sec", 10.0)),
            (9, tot("34.9 MBytes", "29.3 Mbits/sec", 10.0), tot("9.17 MBytes", "7.50 Mbits/sec", 10.3)),
        ],
        extra={"bits_per_second": 95.44e6, "per_stream.0.udp.lost_packets": 16255, "per_stream.0.udp.out_of_order": 1},
        local=("1.2.3.4", 48228),
        remote=("5.6.7.8", 5001),
    ),
    Case(
        "iperf2-2.0.x-text-client-udp-b1000M-no-ack-warning-trema203.txt",
        side="client",
        protocol="udp",
        streams=1,
        complete=False,
        sent=tot("484 MBytes", "406 Mbits/sec", 10.0),
        received=None,
        n_intervals=0,
        udp=(None, None, None, None),
        extra={"udp.sent_packets": 345142, "bits_per_second": 406e6},
        warnings=["WARNING: did not receive ack of last datagram after 10 tries."],
    ),
    Case(
        "iperf2-2.0.x-text-server-tcp-P3-fk-moler.txt",
        side="server",
        protocol="tcp",
        streams=3,
        complete=True,
        sent=None,
        received=tot("6920960 KBytes", "11325398 Kbits/sec", 5.0),
        n_intervals=0,
        per_stream=[
            (4, None, tot("2398848 KBytes", "3926238 Kbits/sec", 5.0)),
            (5, None, tot("2160256 KBytes", "3535024 Kbits/sec", 5.0)),
            (6, None, tot("2361856 KBytes", "3864920 Kbits/sec", 5.0)),
        ],
        local=("192.168.0.12", 5016),
        remote=("192.168.0.10", 42520),
    ),
    Case(
        "iperf2-2.0.x-text-server-udp-P3-fk-moler.txt",
        side="server",
        protocol="udp",
        streams=3,
        complete=True,
        sent=None,
        received=tot("2199 KBytes", "3596 Kbits/sec", 5.0),
        n_intervals=0,  # no [SUM] interval lines in the file
        udp=(1.556, 0, 1532, 0.0),
        per_stream=[
            (3, None, tot("612 KBytes", "1000 Kbits/sec", 5.0)),
            (6, None, tot("612 KBytes", "1000 Kbits/sec", 5.0)),
            (4, None, tot("612 KBytes", "1000 Kbits/sec", 5.0)),
        ],
        extra={
            "per_stream.0.udp.jitter_ms": 0.821,
            "per_stream.0.udp.packets": 426,
            "per_stream.2.udp.jitter_ms": 1.273,
        },
        warnings=["no [SUM] interval lines"],
    ),
    Case(
        "iperf2-2.0.x-text-server-udp-listening-only-trema203.txt",
        side="server",
        protocol="udp",
        streams=0,
        complete=False,
        sent=None,
        received=None,
        n_intervals=0,
        n_per_stream=0,
        warnings=["no transfer was reported"],
        extra={"bits_per_second": None},
    ),
    Case(
        # recorded by tests/integration/test_live_figures.py: 4 x 10 Mbit/s through a 20 Mbit/s tbf
        # with a 32 KiB queue; the four Server Reports (23-69 % loss) summed: 19.49 of 42.0 Mbit/s
        "iperf2-2.1.8-text-client-udp-e-P4-lossy-locallab.txt",
        side="client",
        protocol="udp",
        streams=4,
        complete=True,
        sent=tot("15.0 MBytes", "42.0 Mbits/sec", 3.0001),
        received=(
            sum(nbytes(f"{mb} MBytes") for mb in (2.88, 1.56, 1.40, 1.16)),
            "19.49 Mbits/sec",  # 8.02 + 4.36 + 3.90 + 3.21
            3.0245,
            None,
        ),
        n_intervals=0,
        udp=(1.204, 622 + 1563 + 1677 + 1853, 2678 + 2678 + 2679 + 2678, 100 * 5715 / 10713),
        per_stream=[
            (3, tot("3.75 MBytes", "10.5 Mbits/sec", 3.0013), tot("2.88 MBytes", "8.02 Mbits/sec", 3.0136)),
            (4, tot("3.75 MBytes", "10.5 Mbits/sec", 3.0001), tot("1.16 MBytes", "3.21 Mbits/sec", 3.0245)),
        ],
        extra={"udp.sent_packets": 10715, "per_stream.2.udp.out_of_order": 2, "per_stream.0.udp.lost_percent": 58.0},
        local=("198.19.101.11", 38417),
        remote=("198.19.101.12", 5001),
        timestamp="2026-12-02T03:52:17+00:00",
    ),
    Case(
        # the server's side of the run above: its [SUM] total is printed in the Write/Err layout (lost/total
        # in that column, no jitter), so udp is summed from its four per-stream lines (udp_sum.py)
        "iperf2-2.1.8-text-server-udp-e-P4-lossy-locallab.txt",
        side="server",
        protocol="udp",
        streams=4,
        complete=True,
        sent=None,
        received=tot("7.01 MBytes", "19.4 Mbits/sec", 3.0245),
        n_intervals=0,
        udp=(1.204, 5715, 10713, 100 * 5715 / 10713),
        per_stream=[
            (2, None, tot("2.88 MBytes", "8.02 Mbits/sec", 3.0136)),
            (1, None, tot("1.16 MBytes", "3.21 Mbits/sec", 3.0245)),
        ],
        extra={"peer_version": "2.1.8", "per_stream.1.udp.jitter_ms": 0.296},
        local=("198.19.101.12", 5001),
        remote=("198.19.101.11", 38177),
        timestamp="2026-12-02T03:52:17+00:00",
    ),
    Case(
        # recorded under load (load average 10-17 on 2 cores): the final [SUM] (85.6 MBytes = 26.3 + 30.3 +
        # 29.1) ends at 1.0442 s, 0.27 s before every stream's own total (1.3134-1.3488 s); it is the second
        # [SUM] line from 0, and only the first interval starts at 0, so it is the total (not an interval)
        "iperf2-2.1.8-text-client-tcp-P3-i05-late-sum-under-load-locallab.txt",
        side="client",
        protocol="tcp",
        streams=3,
        complete=True,
        sent=tot("85.6 MBytes", "688 Mbits/sec", 1.0442),
        received=None,
        n_intervals=2,
        intervals=[
            (0, 0.0, 0.5, "48.4 MBytes", "812 Mbits/sec", None),
            (1, 0.5, 1.0, "36.9 MBytes", "619 Mbits/sec", None),
        ],
        per_stream=[
            (3, tot("26.3 MBytes", "165 Mbits/sec", 1.3337), None),
            (2, tot("30.3 MBytes", "193 Mbits/sec", 1.3134), None),
            (1, tot("29.1 MBytes", "181 Mbits/sec", 1.3488), None),
        ],
    ),
    Case(
        # recorded under load: the server printed the first [SUM] interval only, no summed total; the
        # streams' own totals end at 0.97-1.04 s, so the 0-0.5 s [SUM] is an interval and the total is unknown
        "iperf2-2.1.8-text-server-tcp-P3-i05-no-final-sum-under-load-locallab.txt",
        side="server",
        protocol="tcp",
        streams=3,
        complete=False,
        sent=None,
        received=None,
        n_intervals=1,
        intervals=[(0, 0.0, 0.5, "81.3 MBytes", "1.36 Gbits/sec", None)],
        per_stream=[
            (1, None, tot("66.8 MBytes", "561 Mbits/sec", 0.9983)),
            (3, None, tot("64.8 MBytes", "558 Mbits/sec", 0.9741)),
            (2, None, tot("53.0 MBytes", "429 Mbits/sec", 1.0367)),
        ],
        extra={"bits_per_second": None, "duration": None},
        warnings=["no final [SUM] line: the total is unknown"],
    ),
    Case(
        "iperf2-2.1.9-text-client-tcp-e-fb-i2-P2-pscheduler.txt",
        side="client",
        protocol="tcp",
        streams=2,
        complete=True,
        sent=tot("58089668728 Bytes", "77452452740 bits/sec", 6.0, 4),
        received=None,
        n_intervals=3,
        intervals=[
            (0, 0.0, 2.0, "19742064760 Bytes", "78968259040 bits/sec", 1),
            (1, 2.0, 4.0, "19869597696 Bytes", "79478390784 bits/sec", 0),
            (2, 4.0, 6.0, "18477219840 Bytes", "73908879360 bits/sec", 2),
        ],
        per_stream=[
            (1, tot("27737194556 Bytes", "36857799987 bits/sec", 6.02, 1), None),
            (2, tot("30352474172 Bytes", "40332659745 bits/sec", 6.02, 3), None),
        ],
        local=("127.0.0.1", 55778),
        remote=("127.0.0.1", 5001),
        timestamp="2024-02-23T15:51:57.435+00:00",
        extra={"connect_times.avg_ms": 0.106, "connect_times.count": 2, "connect_times.errors": 0},
    ),
    Case(
        "iperf2-2.1.9-text-client-tcp-e-fb-i2-pscheduler.txt",
        side="client",
        protocol="tcp",
        streams=1,
        complete=True,
        sent=tot("33292419132 Bytes", "44297878100 bits/sec", 6.01, 17),
        received=None,
        n_intervals=3,
        intervals=[
            (0, 0.0, 2.0, "10924589116 Bytes", "43698356464 bits/sec", 11),
            (1, 2.0, 4.0, "11269832704 Bytes", "45079330816 bits/sec", 4),
            (2, 4.0, 6.0, "11097866240 Bytes", "44391464960 bits/sec", 2),
        ],
        local=("127.0.0.1", 47358),
        remote=("127.0.0.1", 5001),
        timestamp="2024-02-26T22:16:25.887+00:00",
    ),
    Case(
        "iperf2-2.1.9-text-client-udp-e-fb-i2-pscheduler.txt",
        side="client",
        protocol="udp",
        streams=1,
        complete=True,
        sent=tot("790860 Bytes", "1052461 bits/sec", 6.01),
        received=tot("790860 Bytes", "1052469 bits/sec", 6.01),
        n_intervals=3,
        intervals=[
            (0, 0.0, 2.0, "264600 Bytes", "1058400 bits/sec", None),
            (2, 4.0, 6.0, "261660 Bytes", "1046640 bits/sec", None),
        ],
        udp=(0.013, 0, 538, 0.0),
        extra={"udp.sent_packets": 539, "bits_per_second": 1052469.0},
        timestamp="2024-02-26T22:22:07.973+00:00",
    ),
    Case(
        "iperf2-2.1.x-text-client-tcp-V-ipv6-P12-interleaved-40g.txt",
        side="client",
        protocol="tcp",
        streams=12,
        complete=True,
        sent=tot("43.0 GBytes", "36.4 Gbits/sec", 10.1677),
        received=None,
        n_intervals=0,
        per_stream=[
            (3, tot("4.34 GBytes", "3.73 Gbits/sec", 10.0075), None),
            (12, tot("2.90 GBytes", "2.45 Gbits/sec", 10.1856), None),
            (2, tot("2.90 GBytes", "2.48 Gbits/sec", 10.0241), None),
        ],
        n_per_stream=12,
        local=("2008::4", 54744),  # first connected line, printed before the banner
        remote=("2008::5", 9999),
        extra={"connect_times.min_ms": 0.122, "connect_times.avg_ms": 0.217, "connect_times.count": 12},
    ),
    Case(
        "iperf2-2.1.x-text-client-tcp-e-reverse-star-id-TRUNCATED-trirematics.txt",
        side="client",
        protocol="tcp",
        streams=1,
        complete=False,
        sent=None,
        received=None,
        n_intervals=13,
        intervals=[
            (0, 0.0, 1.0, "3.28 MBytes", "27.5 Mbits/sec", None),
            (8, 8.0, 9.0, "8.23 MBytes", "69.0 Mbits/sec", None),
            (12, 12.0, 13.0, "8.18 MBytes", "68.6 Mbits/sec", None),
        ],
        per_stream=[(1, None, None)],
        reverse=True,
        local=("12.1.1.2", 49813),
        remote=("12.1.1.1", 5001),
        timestamp="2023-11-22T15:20:59.814+00:00",
        extra={"bits_per_second": None, "duration": None},
        warnings=["no final summary line"],
    ),
    Case(
        "iperf2-2.1.x-text-server-tcp-P8-40g.txt",
        side="server",
        protocol="tcp",
        streams=8,
        complete=True,
        sent=None,
        received=tot("42.9 GBytes", "36.8 Gbits/sec", 10.0119),
        n_intervals=0,
        per_stream=[
            (8, None, tot("4.71 GBytes", "4.04 Gbits/sec", 10.0014)),
            (1, None, tot("4.60 GBytes", "3.95 Gbits/sec", 10.0073)),
            (7, None, tot("5.29 GBytes", "4.54 Gbits/sec", 10.0065)),
        ],
        local=("10.10.15.135", 9999),
        remote=("10.10.15.134", 39454),
        warnings=["iperf: ignoring extra argument -- 10.10.15.135"],
    ),
    Case(
        # two clients from two addresses at the same time (the external-peer mode): the one [SUM] is h2's two
        # streams only, so the whole log's total is h2's (split_iperf2_by_peer gives each client its own)
        "iperf2-2.1.8-text-server-tcp-2-clients-concurrent-2-addresses-locallab.txt",
        side="server",
        protocol="tcp",
        streams=3,
        complete=True,
        sent=None,
        received=tot("152 MBytes", "629 Mbits/sec", 2.0319),
        n_intervals=0,
        per_stream=[
            (1, None, tot("81.0 MBytes", "333 Mbits/sec", 2.042)),
            (2, None, tot("74.1 MBytes", "306 Mbits/sec", 2.0319)),
            (3, None, tot("78.1 MBytes", "322 Mbits/sec", 2.036)),
        ],
        local=("198.19.187.11", 25813),
        remote=("198.19.187.13", 32786),
    ),
    Case(
        # three client tests in one server log (the external-peer mode); the whole log gives the last one:
        # two single-stream clients that ran at the same time, which the server reports like one -P 2 client
        "iperf2-2.1.8-text-server-tcp-3-clients-P2-concurrent-locallab.txt",
        side="server",
        protocol="tcp",
        streams=2,
        complete=True,
        sent=None,
        received=tot("232 MBytes", "960 Mbits/sec", 2.024),
        n_intervals=0,
        per_stream=[
            (4, None, tot("115 MBytes", "474 Mbits/sec", 2.028)),
            (5, None, tot("117 MBytes", "485 Mbits/sec", 2.024)),
        ],
        local=("198.19.181.11", 25812),
        remote=("198.19.181.12", 55310),
        warnings=["holds 3 tests"],
    ),
    Case(
        "iperf2-doc-manpage-2.1.9-text-client-tcp-bounceback.txt",
        side="client",
        protocol="tcp",
        streams=1,
        complete=True,
        sent=None,  # the bounceback Transfer column counts both directions
        received=None,
        n_intervals=10,
        intervals=[
            (0, 0.0, 1.0, "1.95 KBytes", "16.0 Kbits/sec", 0),
            (9, 9.0, 10.0, "1.95 KBytes", "16.0 Kbits/sec", 0),
        ],
        per_stream=[(1, None, None)],
        local=(None, 38044),  # --hide-ips
        remote=(None, 5001),
        extra={
            "bits_per_second": None,
            "bounceback.bytes": nbytes("19.5 KBytes"),
            "bounceback.bits_per_second": 16000.0,
            "bounceback.seconds": 10.02,
            "bounceback.count": 100,
            "bounceback.avg_ms": 10.878,
            "bounceback.min_ms": 9.651,
            "bounceback.max_ms": 19.597,
            "bounceback.stdev_ms": 1.743,
            "bounceback.rps": 91,
        },
        warnings=["bounceback test"],
    ),
    Case(
        "iperf2-doc-manpage-2.1.9-text-client-udp-e-server-report.txt",
        side="client",
        protocol="udp",
        streams=1,
        complete=True,
        sent=tot("11.9 MBytes", "10.0 Mbits/sec", 10.0),
        received=tot("11.9 MBytes", "10.0 Mbits/sec", 10.0),
        n_intervals=9,
        intervals=[
            (0, 0.0, 1.0, "1.19 MBytes", "10.0 Mbits/sec", None),
            (8, 8.0, 9.0, "1.19 MBytes", "10.0 Mbits/sec", None),
        ],
        udp=(0.047, 0, 8504, 0.0),
        extra={"udp.sent_packets": 8504},
        local=("45.56.85.133", 32943),
        remote=("45.33.58.123", 5001),
    ),
    Case(
        "iperf2-doc-manpage-2.1.9-text-server-tcp-e-reads-dist.txt",
        side="server",
        protocol="tcp",
        streams=1,
        complete=True,
        sent=None,
        received=tot("1.25 GBytes", "1.07 Gbits/sec", 10.02),
        n_intervals=10,
        intervals=[
            (0, 0.0, 1.0, "124 MBytes", "1.04 Gbits/sec", None),
            (4, 4.0, 5.0, "117 MBytes", "984 Mbits/sec", None),
            (9, 9.0, 10.0, "133 MBytes", "1.11 Gbits/sec", None),
        ],
        local=("45.33.58.123", 5001),
        remote=("45.56.85.133", 49960),
    ),
    Case(
        "iperf2-doc-manpage-2.1.9-text-server-udp-e-latency-null-inP.txt",
        side="server",
        protocol="udp",
        streams=1,
        complete=True,
        sent=None,
        received=tot("449 MBytes", "374 Mbits/sec", 10.08),
        n_intervals=11,
        intervals=[
            (0, 0.0, 1.0, "44.5 MBytes", "373 Mbits/sec", None),
            (10, 10.0, 10.08, "3.53 MBytes", "367 Mbits/sec", None),
        ],
        udp=(0.129, 592717, 913046, 65.0),
        extra={"peer_version": "2.0.14-alpha"},
        local=("192.168.1.4", 5001),
        remote=("192.168.1.1", 60027),
    ),
]


def test_every_iperf2_text_fixture_has_a_case() -> None:
    on_disk = {p.name for p in FIXTURES.glob("iperf2-*.txt") if "-csv-" not in p.name}
    assert on_disk == {c.file for c in CASES}
    assert len(on_disk) == 31


@pytest.mark.parametrize("case", CASES, ids=str)
def test_fixture(case: Case) -> None:
    result = valid(parse_iperf2_text((FIXTURES / case.file).read_text()))
    assert result["tool"] == "iperf2"
    assert result["format"] == "text"
    assert result["tool_version"] is None  # none of these outputs prints "iperf version"
    assert result["side"] == case.side
    assert result["protocol"] == case.protocol
    assert result["streams"] == case.streams
    assert result["complete"] is case.complete
    assert result["reverse"] is case.reverse
    assert result["bidir"] is False
    assert result["error"] is None
    check_totals(result["sent"], case.sent)
    check_totals(result["received"], case.received)
    if case.protocol == "udp" and case.n_per_stream != 0:
        check_udp(result["udp"], case.udp)
    else:
        assert result["udp"] is None
    headline = case.received or case.sent
    if "bits_per_second" not in case.extra:
        assert headline is not None
        assert result["bits_per_second"] == pytest.approx(rate(headline[1]))
        assert result["duration"] == pytest.approx(headline[2])
    assert len(result["intervals"]) == case.n_intervals
    for index, start, end, b, r, retr in case.intervals:
        interval = result["intervals"][index]
        assert (interval["start"], interval["end"]) == (pytest.approx(start), pytest.approx(end))
        assert interval["bytes"] == nbytes(b)
        assert interval["bits_per_second"] == pytest.approx(rate(r))
        assert interval["retransmits"] == retr
        assert interval["omitted"] is False
    starts = [iv["start"] for iv in result["intervals"]]
    assert starts == sorted(starts)
    assert len(result["per_stream"]) == (case.n_per_stream if case.n_per_stream is not None else case.streams)
    by_id = {item["id"]: item for item in result["per_stream"]}
    for ident, sent, received in case.per_stream:
        check_totals(by_id[ident]["sent"], sent)
        check_totals(by_id[ident]["received"], received)
    if case.local is not None:
        assert result["local"] == {"host": case.local[0], "port": case.local[1]}
    if case.remote is not None:
        assert result["remote"] == {"host": case.remote[0], "port": case.remote[1]}
    assert result["timestamp"] == case.timestamp
    for path, expected in case.extra.items():
        value = dig(result, path)
        assert value == (pytest.approx(expected) if isinstance(expected, float) else expected), path
    for needle in case.warnings:
        assert any(needle in w for w in result["warnings"]), (needle, result["warnings"])
    if case.complete and not case.warnings:
        assert result["warnings"] == []


# --------------------------------------------------------------------------- snippets

LEGACY_205 = """\
iperf version 2.0.5 (08 Jul 2010) pthreads
------------------------------------------------------------
Client connecting to 192.168.1.3, TCP port 5001
TCP window size: 22.9 KByte (default)
------------------------------------------------------------
[  3] local 192.168.1.2 port 63919 connected with 192.168.1.3 port 5001
[ ID] Interval       Transfer     Bandwidth
[  3]  0.0-10.0 sec  1.10 GBytes   943 Mbits/sec
"""


def test_legacy_2_0_5_single_stream() -> None:
    result = valid(parse_iperf2_text(LEGACY_205))
    assert result["tool_version"] == "2.0.5"
    assert result["side"] == "client"
    assert result["streams"] == 1
    check_totals(result["sent"], tot("1.10 GBytes", "943 Mbits/sec", 10.0))
    assert result["sent"]["bytes"] == 1181116006
    assert result["received"] is None
    assert result["bits_per_second"] == 943e6
    assert result["duration"] == 10.0
    assert result["intervals"] == []
    assert result["complete"] is True
    assert result["warnings"] == []
    assert result["local"] == {"host": "192.168.1.2", "port": 63919}


def test_legacy_interval_with_space_padding_and_crlf() -> None:
    text = LEGACY_205.replace(
        "[  3]  0.0-10.0 sec", "[  3]  0.0- 1.0 sec  112 MBytes   940 Mbits/sec\n[  3]  0.0-10.0 sec"
    )
    result = valid(parse_iperf2_text(text.replace("\n", "\r\n")))
    assert len(result["intervals"]) == 1
    assert result["intervals"][0]["end"] == 1.0
    assert result["intervals"][0]["bytes"] == nbytes("112 MBytes")
    check_totals(result["sent"], tot("1.10 GBytes", "943 Mbits/sec", 10.0))


# Debian iperf 2.1.8 over loopback, `iperf -c 127.0.0.1 -p 15311 -t 1 -f b`.
FORMAT_B = """\
------------------------------------------------------------
Client connecting to 127.0.0.1, TCP port 15311
TCP window size: 16384 Byte (default)
------------------------------------------------------------
[  1] local 127.0.0.1 port 41362 connected with 127.0.0.1 port 15311 (icwnd/mss/irtt=319/32741/31)
[ ID] Interval       Transfer     Bandwidth
[  1] 0.0000-1.0503 sec  1381367868 Bytes  10521621223 bits/sec
"""


def test_format_b_exact_bytes_and_bits() -> None:
    result = valid(parse_iperf2_text(FORMAT_B))
    assert result["sent"] == {
        "bytes": 1381367868,
        "bits_per_second": 10521621223.0,
        "seconds": 1.0503,
        "retransmits": None,
    }


# Debian iperf 2.1.8, `iperf -c 127.0.0.1 -p 15312 -t 1 -f K -P 2`: byte rates.
FORMAT_K = """\
------------------------------------------------------------
Client connecting to 127.0.0.1, TCP port 15312
TCP window size: 16.0 KByte (default)
------------------------------------------------------------
[  1] local 127.0.0.1 port 35072 connected with 127.0.0.1 port 15312 (icwnd/mss/irtt=319/32741/18)
[  2] local 127.0.0.1 port 35074 connected with 127.0.0.1 port 15312 (icwnd/mss/irtt=319/32741/9)
[ ID] Interval       Transfer     Bandwidth
[  1] 0.0000-1.0044 sec  1708928 KBytes  1701362 KBytes/sec
[  2] 0.0000-1.0210 sec  1689856 KBytes  1655058 KBytes/sec
[SUM] 0.0000-1.0012 sec  3398784 KBytes  3394721 KBytes/sec
"""


def test_format_upper_k_byte_rates_are_1024_based_bytes() -> None:
    result = valid(parse_iperf2_text(FORMAT_K))
    assert result["streams"] == 2
    assert result["sent"]["bytes"] == 3398784 * 1024
    assert result["sent"]["bits_per_second"] == 3394721 * 1024 * 8
    assert result["per_stream"][0]["sent"]["bits_per_second"] == 1701362 * 8192
    assert result["duration"] == pytest.approx(1.0012)


def test_unknown_u32_and_minus_one_fields_are_none() -> None:
    text = """\
------------------------------------------------------------
Client connecting to 10.0.0.2, TCP port 5001 with pid 4242 (1 flows)
------------------------------------------------------------
[  1] local 10.0.0.1 port 40000 connected with 10.0.0.2 port 5001 (sock=3)
[ ID] Interval        Transfer    Bandwidth       Write/Err  Rtry     Cwnd/RTT        NetPwr
[  1] 0.00-1.00 sec  1.10 GBytes  9.45 Gbits/sec  9012/0  4294967295       -1K/0 us  -1
[  1] 0.00-2.00 sec  2.20 GBytes  9.45 Gbits/sec  18024/0        -1       -1K/0 us  -1
"""
    result = valid(parse_iperf2_text(text))
    assert result["intervals"][0]["retransmits"] is None
    assert result["sent"]["retransmits"] is None
    check_totals(result["sent"], tot("2.20 GBytes", "9.45 Gbits/sec", 2.0))
    udp_text = """\
Client connecting to 10.0.0.2, UDP port 5001
[  3] local 10.0.0.1 port 40000 connected with 10.0.0.2 port 5001
[  3]  0.0-10.0 sec  1.25 MBytes  1.05 Mbits/sec
[  3] Sent -1 datagrams
[  3] Server Report:
[  3]  0.0-10.0 sec  1.25 MBytes  1.05 Mbits/sec  -1.000 ms   -1/   -1 (nan%)
"""
    result = valid(parse_iperf2_text(udp_text))
    assert result["udp"] == {"jitter_ms": None, "lost_packets": None, "packets": None, "lost_percent": None}


# A 2.0.x dual test (-d): no (reverse) markers, ids are socket fds.
DUAL_20_CLIENT = """\
------------------------------------------------------------
Server listening on TCP port 5001
TCP window size: 85.3 KByte (default)
------------------------------------------------------------
------------------------------------------------------------
Client connecting to 10.0.0.2, TCP port 5001
TCP window size: 85.0 KByte (default)
------------------------------------------------------------
[  5] local 10.0.0.1 port 54321 connected with 10.0.0.2 port 5001
[  4] local 10.0.0.1 port 5001 connected with 10.0.0.2 port 45678
[ ID] Interval       Transfer     Bandwidth
[  5]  0.0-10.0 sec  1.09 GBytes   937 Mbits/sec
[  4]  0.0-10.0 sec  1.05 GBytes   901 Mbits/sec
"""

DUAL_20_SERVER = """\
------------------------------------------------------------
Server listening on TCP port 5001
TCP window size: 85.3 KByte (default)
------------------------------------------------------------
[  4] local 10.0.0.2 port 5001 connected with 10.0.0.1 port 54321
------------------------------------------------------------
Client connecting to 10.0.0.1, TCP port 5001
TCP window size: 85.0 KByte (default)
------------------------------------------------------------
[  6] local 10.0.0.2 port 45678 connected with 10.0.0.1 port 5001
[ ID] Interval       Transfer     Bandwidth
[  6]  0.0-10.0 sec  1.05 GBytes   902 Mbits/sec
[  4]  0.0-10.0 sec  1.09 GBytes   936 Mbits/sec
[SUM]  0.0-10.0 sec  2.14 GBytes  1.84 Gbits/sec
"""


def test_dual_test_client_legacy() -> None:
    result = valid(parse_iperf2_text(DUAL_20_CLIENT))
    assert result["side"] == "client"
    assert result["bidir"] is True
    assert result["reverse"] is False
    check_totals(result["sent"], tot("1.09 GBytes", "937 Mbits/sec", 10.0))
    assert result["received"] is None
    assert result["reverse_sent"] is None
    check_totals(result["reverse_received"], tot("1.05 GBytes", "901 Mbits/sec", 10.0))
    assert [item["id"] for item in result["per_stream"]] == [5]
    assert [item["id"] for item in result["reverse_per_stream"]] == [4]
    assert result["local"] == {"host": "10.0.0.1", "port": 54321}
    assert result["streams"] == 1
    assert result["complete"] is True


def test_dual_test_server_legacy_sum_mixes_directions() -> None:
    result = valid(parse_iperf2_text(DUAL_20_SERVER))
    assert result["side"] == "server"
    assert result["bidir"] is True
    assert result["sent"] is None
    check_totals(result["received"], tot("1.09 GBytes", "936 Mbits/sec", 10.0))
    check_totals(result["reverse_sent"], tot("1.05 GBytes", "902 Mbits/sec", 10.0))
    assert result["reverse_received"] is None
    check_totals(result["bidir_sum"], tot("2.14 GBytes", "1.84 Gbits/sec", 10.0))
    assert result["bits_per_second"] == 936e6
    assert any("bidir_sum" in w for w in result["warnings"])


def test_side_argument_overrides_detection() -> None:
    result = valid(parse_iperf2_text(DUAL_20_CLIENT, side="server"))
    assert result["side"] == "server"
    # the server's view: its outbound connection (local port not 5001) is server-to-client
    check_totals(result["received"], tot("1.05 GBytes", "901 Mbits/sec", 10.0))


# Debian iperf 2.1.8, `iperf -c 127.0.0.1 -p 15312 -t 1 -d -L 15318` and its server.
DUAL_21_CLIENT = """\
------------------------------------------------------------
Server listening on TCP port 15318
TCP window size:  128 KByte (default)
------------------------------------------------------------
------------------------------------------------------------
Client connecting to 127.0.0.1, TCP port 15312
TCP window size: 16.0 KByte (default)
------------------------------------------------------------
[  1] local 127.0.0.1 port 56892 connected with 127.0.0.1 port 15312 (icwnd/mss/irtt=319/32741/28)
[  2] local 127.0.0.1 port 15318 connected with 127.0.0.1 port 33504
[ ID] Interval       Transfer     Bandwidth
[  2] 0.0000-0.9984 sec  1.80 GBytes  15.5 Gbits/sec
[  1] 0.0000-1.0155 sec  1.35 GBytes  11.4 Gbits/sec
"""

DUAL_21_SERVER = """\
------------------------------------------------------------
Server listening on TCP port 15312
TCP window size:  128 KByte (default)
------------------------------------------------------------
[  1] local 127.0.0.1 port 15312 connected with 127.0.0.1 port 56892 (icwnd/mss/irtt=320/32768/18)
------------------------------------------------------------
Client connecting to 127.0.0.1, TCP port 15318
TCP window size: 4.00 MByte (default)
------------------------------------------------------------
[ *2] local 127.0.0.1 port 33504 connected with 127.0.0.1 port 15318 (reverse) (icwnd/mss/irtt=319/32741/13)
[ ID] Interval       Transfer     Bandwidth
[  1] 0.0000-1.0021 sec  1.35 GBytes  11.6 Gbits/sec
[ *2] 0.0000-1.0115 sec  1.80 GBytes  15.3 Gbits/sec
[SUM] 0.0000-1.0019 sec  3.15 GBytes  27.0 Gbits/sec
"""


def test_dual_test_2_1_client_and_server_agree() -> None:
    client = valid(parse_iperf2_text(DUAL_21_CLIENT))
    server = valid(parse_iperf2_text(DUAL_21_SERVER))
    assert (client["side"], server["side"]) == ("client", "server")
    assert client["bidir"] is server["bidir"] is True
    check_totals(client["sent"], tot("1.35 GBytes", "11.4 Gbits/sec", 1.0155))
    check_totals(client["reverse_received"], tot("1.80 GBytes", "15.5 Gbits/sec", 0.9984))
    check_totals(server["received"], tot("1.35 GBytes", "11.6 Gbits/sec", 1.0021))
    check_totals(server["reverse_sent"], tot("1.80 GBytes", "15.3 Gbits/sec", 1.0115))
    assert client["sent"]["bytes"] == server["received"]["bytes"]
    assert client["reverse_received"]["bytes"] == server["reverse_sent"]["bytes"]
    assert server["reverse_per_stream"][0]["id"] == 2


# Debian iperf 2.1.8 --full-duplex client: [ *1] is the server-to-client half.
FULL_DUPLEX = """\
------------------------------------------------------------
Client connecting to 127.0.0.1, TCP port 15315
TCP window size: 16.0 KByte (default)
------------------------------------------------------------
[  1] local 127.0.0.1 port 56818 connected with 127.0.0.1 port 15315 (full-duplex) (icwnd/mss/irtt=319/32741/38)
[ ID] Interval       Transfer     Bandwidth
[ *1] 0.0000-0.5000 sec   312 MBytes  5.23 Gbits/sec
[  1] 0.0000-0.5000 sec   306 MBytes  5.13 Gbits/sec
[  1] 0.5000-1.0000 sec   308 MBytes  5.17 Gbits/sec
[ *1] 0.5000-1.0000 sec   488 MBytes  8.19 Gbits/sec
[  1] 0.0000-1.0023 sec   614 MBytes  5.14 Gbits/sec
[ *1] 0.0000-1.0109 sec   807 MBytes  6.69 Gbits/sec
"""


def test_full_duplex() -> None:
    result = valid(parse_iperf2_text(FULL_DUPLEX))
    assert result["bidir"] is True
    check_totals(result["sent"], tot("614 MBytes", "5.14 Gbits/sec", 1.0023))
    check_totals(result["reverse_received"], tot("807 MBytes", "6.69 Gbits/sec", 1.0109))
    assert [(iv["start"], iv["end"], iv["bytes"]) for iv in result["intervals"]] == [
        (0.0, 0.5, nbytes("306 MBytes")),
        (0.5, 1.0, nbytes("308 MBytes")),
    ]


# Debian iperf 2.1.8 `-u -b 10M -R`: client receives, server sends (no-udp-fin).
UDP_REVERSE_CLIENT = """\
------------------------------------------------------------
Client connecting to 127.0.0.1, UDP port 15316
Sending 1470 byte datagrams, IPG target: 1121.52 us (kalman adjust)
UDP buffer size:  208 KByte (default)
------------------------------------------------------------
[  1] local 127.0.0.1 port 51007 connected with 127.0.0.1 port 15316 (reverse)
[ ID] Interval       Transfer     Bandwidth        Jitter   Lost/Total Datagrams
[ *1] 0.0000-1.0014 sec  1.25 MBytes  10.5 Mbits/sec   0.001 ms 0/894 (0%)
"""

UDP_REVERSE_SERVER = """\
------------------------------------------------------------
Server listening on UDP port 15316
UDP buffer size:  208 KByte (default)
------------------------------------------------------------
[  1] local 127.0.0.1 port 15316 connected with 127.0.0.1 port 51007 (reverse) (no-udp-fin)
[ ID] Interval       Transfer     Bandwidth
[  1] 0.0000-1.0017 sec  1.25 MBytes  10.5 Mbits/sec
[  1] Sent 895 datagrams
"""


def test_reverse_udp_client_and_server() -> None:
    client = valid(parse_iperf2_text(UDP_REVERSE_CLIENT))
    assert client["reverse"] is True and client["bidir"] is False
    assert client["sent"] is None
    check_totals(client["received"], tot("1.25 MBytes", "10.5 Mbits/sec", 1.0014))
    check_udp(client["udp"], (0.001, 0, 894, 0.0))
    assert client["complete"] is True
    server = valid(parse_iperf2_text(UDP_REVERSE_SERVER))
    assert server["reverse"] is True and server["side"] == "server"
    check_totals(server["sent"], tot("1.25 MBytes", "10.5 Mbits/sec", 1.0017))
    assert server["received"] is None
    assert server["udp"]["sent_packets"] == 895
    assert server["complete"] is False
    assert any("no-udp-fin" in w for w in server["warnings"])


def test_sum_only_counts_threads_from_sum_label() -> None:
    text = """\
------------------------------------------------------------
Client connecting to 127.0.0.1, TCP port 15314
TCP window size: 4.00 MByte (default)
------------------------------------------------------------
[SUM-cnt] Interval       Transfer     Bandwidth
[SUM-2] 0.0000-0.5000 sec  1.17 GBytes  20.0 Gbits/sec
[SUM-2] 0.5000-1.0000 sec  1.71 GBytes  29.4 Gbits/sec
[SUM-2] 0.0000-1.0005 sec  2.88 GBytes  24.7 Gbits/sec
"""
    result = valid(parse_iperf2_text(text))
    assert result["streams"] == 2
    check_totals(result["sent"], tot("2.88 GBytes", "24.7 Gbits/sec", 1.0005))
    assert len(result["intervals"]) == 2
    assert result["complete"] is True


def test_connection_refused_is_an_error() -> None:
    text = """\
------------------------------------------------------------
Client connecting to 127.0.0.1, TCP port 15329
TCP window size: 16.0 KByte (default)
------------------------------------------------------------
tcp connect failed: Connection refused
[  1] local 0.0.0.0 port 0 connected with 127.0.0.1 port 15329
"""
    result = valid(parse_iperf2_text(text))
    assert result["error"] == "tcp connect failed: Connection refused"
    assert result["complete"] is False
    assert result["sent"] is None and result["bits_per_second"] is None


def _stamped(zone: str) -> dict[str, Any]:
    stamp = f"port 5001 (sock=3) on 2025-04-17 17:31:21.123 ({zone})\n[ ID]"
    return valid(parse_iperf2_text(LEGACY_205.replace("port 5001\n[ ID]", stamp)))


@pytest.mark.parametrize(
    ("zone", "iso"),
    [
        ("PDT", "2025-04-17T17:31:21.123-07:00"),
        ("CET", "2025-04-17T17:31:21.123+01:00"),
        ("AEST", "2025-04-17T17:31:21.123+10:00"),
        ("UTC", "2025-04-17T17:31:21.123+00:00"),
        ("+0530", "2025-04-17T17:31:21.123+05:30"),
    ],
)
def test_connection_time_with_a_known_zone_gets_its_offset(zone: str, iso: str) -> None:
    result = _stamped(zone)
    assert result["timestamp"] == iso
    assert "timestamp_local" not in result
    assert not [w for w in result["warnings"] if "time zone" in w]


@pytest.mark.parametrize("zone", ["IST", "CST", "PST", "XYZT"])
def test_ambiguous_or_unknown_zone_stays_local_with_a_warning(zone: str) -> None:
    result = _stamped(zone)
    assert result["timestamp"] is None
    assert result["timestamp_local"] == "2025-04-17T17:31:21.123"
    assert [w for w in result["warnings"] if f"time zone '{zone}'" in w], result["warnings"]


def test_truncated_multi_stream_without_sum_total() -> None:
    lines = (FIXTURES / "iperf2-2.0.x-text-client-tcp-P3-i1-m-pscheduler.txt").read_text().splitlines()
    cut = "\n".join(lines[: lines.index("[SUM]  4.0- 5.0 sec   206 MBytes  1.73 Gbits/sec") + 1])
    result = valid(parse_iperf2_text(cut))
    assert result["complete"] is False
    assert result["sent"] is None
    assert len(result["intervals"]) == 5
    assert result["intervals"][-1]["bytes"] == nbytes("206 MBytes")


def test_no_banner_reads_receiver_columns_as_server() -> None:
    text = "\n".join(
        (FIXTURES / "iperf2-doc-manpage-2.1.9-text-server-udp-e-latency-null-inP.txt").read_text().splitlines()[5:]
    )
    result = valid(parse_iperf2_text(text))
    assert result["side"] is None
    check_totals(result["received"], tot("449 MBytes", "374 Mbits/sec", 10.08))
    assert any("does not say whether" in w for w in result["warnings"])


# Debian iperf 2.1.8 server (`iperf -s -t 5`) that served two clients in a row: one banner.
TWO_TESTS_SERVER = """\
------------------------------------------------------------
Server listening on TCP port 15325
TCP window size:  128 KByte (default)
------------------------------------------------------------
[  1] local 127.0.0.1 port 15325 connected with 127.0.0.1 port 37942 (icwnd/mss/irtt=320/32768/14)
[ ID] Interval       Transfer     Bandwidth
[  1] 0.0000-1.0039 sec  1.89 GBytes  16.2 Gbits/sec
[  2] local 127.0.0.1 port 15325 connected with 127.0.0.1 port 37946 (icwnd/mss/irtt=320/32768/13)
[  3] local 127.0.0.1 port 15325 connected with 127.0.0.1 port 37954 (icwnd/mss/irtt=320/32768/8)
[ ID] Interval       Transfer     Bandwidth
[  2] 0.0000-1.0027 sec   928 MBytes  7.76 Gbits/sec
[  3] 0.0000-1.0001 sec  1.82 GBytes  15.6 Gbits/sec
[SUM] 0.0000-1.0001 sec  2.72 GBytes  23.4 Gbits/sec
"""


def test_server_log_with_two_tests_is_split() -> None:
    first, second = split_iperf2_text(TWO_TESTS_SERVER)
    assert first.startswith("----") and second.startswith("----")  # the banner heads each piece
    one = valid(parse_iperf2_text(first))
    assert one["streams"] == 1
    check_totals(one["received"], tot("1.89 GBytes", "16.2 Gbits/sec", 1.0039))
    last = valid(parse_iperf2_text(TWO_TESTS_SERVER))
    assert last["streams"] == 2
    assert [item["id"] for item in last["per_stream"]] == [2, 3]
    check_totals(last["received"], tot("2.72 GBytes", "23.4 Gbits/sec", 1.0001))
    assert any("holds 2 tests" in w for w in last["warnings"])


@pytest.mark.parametrize("case", [c for c in CASES if "-clients-" not in c.file], ids=str)
def test_fixtures_hold_one_test_each(case: Case) -> None:
    text = (FIXTURES / case.file).read_text()
    assert split_iperf2_text(text) == [text]


def test_dual_test_server_is_not_split() -> None:
    assert split_iperf2_text(DUAL_20_SERVER) == [DUAL_20_SERVER]
    assert split_iperf2_text(DUAL_21_SERVER) == [DUAL_21_SERVER]
    assert split_iperf2_text(DUAL_21_CLIENT) == [DUAL_21_CLIENT]


# Debian iperf 2.1.8 `iperf -c 127.0.0.1 -p 15326 -t 1 -d -L 15327 -P 2`: one connection line
# is printed between the two banners of the client; [SUM] adds both directions.
DUAL_P2_CLIENT = """\
------------------------------------------------------------
Server listening on TCP port 15327
TCP window size:  128 KByte (default)
------------------------------------------------------------
[  2] local 127.0.0.1 port 54856 connected with 127.0.0.1 port 15326 (icwnd/mss/irtt=319/32741/13)
------------------------------------------------------------
Client connecting to 127.0.0.1, TCP port 15326
TCP window size: 4.00 MByte (default)
------------------------------------------------------------
[  1] local 127.0.0.1 port 54846 connected with 127.0.0.1 port 15326 (icwnd/mss/irtt=319/32741/23)
[  3] local 127.0.0.1 port 15327 connected with 127.0.0.1 port 45216
[  4] local 127.0.0.1 port 15327 connected with 127.0.0.1 port 45232
[ ID] Interval       Transfer     Bandwidth
[  1] 0.0000-1.0116 sec   933 MBytes  7.74 Gbits/sec
[  4] 0.0000-0.9990 sec   877 MBytes  7.37 Gbits/sec
[  3] 0.0000-0.9969 sec   524 MBytes  4.41 Gbits/sec
[  2] 0.0000-1.0140 sec   514 MBytes  4.26 Gbits/sec
[SUM] 0.0000-1.0020 sec  2.78 GBytes  23.8 Gbits/sec
"""

DUAL_P2_SERVER = """\
------------------------------------------------------------
Server listening on TCP port 15326
TCP window size:  128 KByte (default)
------------------------------------------------------------
[  1] local 127.0.0.1 port 15326 connected with 127.0.0.1 port 54846 (icwnd/mss/irtt=320/32768/19)
------------------------------------------------------------
Client connecting to 127.0.0.1, TCP port 15327
TCP window size: 4.00 MByte (default)
------------------------------------------------------------
------------------------------------------------------------
Client connecting to 127.0.0.1, TCP port 15327
TCP window size: 4.00 MByte (default)
------------------------------------------------------------
[  3] local 127.0.0.1 port 15326 connected with 127.0.0.1 port 54856 (icwnd/mss/irtt=320/32768/13)
[ *2] local 127.0.0.1 port 45216 connected with 127.0.0.1 port 15327 (reverse) (icwnd/mss/irtt=319/32741/11)
[ *4] local 127.0.0.1 port 45232 connected with 127.0.0.1 port 15327 (reverse) (icwnd/mss/irtt=319/32741/10)
[ ID] Interval       Transfer     Bandwidth
[  1] 0.0000-1.0033 sec   933 MBytes  7.80 Gbits/sec
[  3] 0.0000-1.0025 sec   514 MBytes  4.30 Gbits/sec
[ *2] 0.0000-1.0104 sec   524 MBytes  4.35 Gbits/sec
[ *4] 0.0000-1.0084 sec   877 MBytes  7.30 Gbits/sec
[SUM] 0.0000-1.0036 sec  2.78 GBytes  23.8 Gbits/sec
"""


def test_dual_test_two_streams_each_way() -> None:
    client = valid(parse_iperf2_text(DUAL_P2_CLIENT))
    server = valid(parse_iperf2_text(DUAL_P2_SERVER))
    assert (client["side"], server["side"]) == ("client", "server")
    assert client["streams"] == server["streams"] == 2
    # the [SUM] line adds both directions: no per-direction total, each stream is kept
    assert client["sent"] is None and server["received"] is None
    check_totals(client["bidir_sum"], tot("2.78 GBytes", "23.8 Gbits/sec", 1.0020))
    sent = {item["id"]: item["sent"] for item in client["per_stream"]}
    assert set(sent) == {1, 2}
    check_totals(sent[1], tot("933 MBytes", "7.74 Gbits/sec", 1.0116))
    check_totals(sent[2], tot("514 MBytes", "4.26 Gbits/sec", 1.0140))
    back = {item["id"]: item["received"] for item in client["reverse_per_stream"]}
    check_totals(back[4], tot("877 MBytes", "7.37 Gbits/sec", 0.9990))
    check_totals(back[3], tot("524 MBytes", "4.41 Gbits/sec", 0.9969))
    served = {item["id"]: item["sent"] for item in server["reverse_per_stream"]}
    check_totals(served[2], tot("524 MBytes", "4.35 Gbits/sec", 1.0104))
    check_totals(served[4], tot("877 MBytes", "7.30 Gbits/sec", 1.0084))
    assert any("add both directions" in w for w in client["warnings"])


def test_csv_lines_after_text_banner_are_parsed_as_csv() -> None:
    # Debian iperf 2.1.8 server side of `iperf -c ... -d -L 15322 -y C`
    text = """\
------------------------------------------------------------
Client connecting to 127.0.0.1, TCP port 15322
TCP window size: 4.00 MByte (default)
------------------------------------------------------------
19700101000000,127.0.0.1,37912,127.0.0.1,15316,1,0.0-1.0,2170945596,17345328057
19700101000000,127.0.0.1,35296,127.0.0.1,15322,2,0.0-1.0,2620522496,20643829029
"""
    result = valid(parse_iperf2_text(text))
    assert result["format"] == "csv"
    # the server's own connection (to the client's -L port, its banner) sends; the inbound one receives:
    # two directions, never one transfer read as the sender's (issue 22)
    assert result["bidir"] is True
    assert [(item["id"], item["sent"]["bytes"]) for item in result["per_stream"]] == [(2, 2620522496)]
    assert [(item["id"], item["received"]["bytes"]) for item in result["reverse_per_stream"]] == [(1, 2170945596)]
    assert any("parsed as CSV" in w for w in result["warnings"])
    as_server = valid(parse_iperf2_text(text, side="server"))  # sent/received: client to server
    assert as_server["received"] is not None and as_server["received"]["bytes"] == 2170945596
    assert as_server["reverse_sent"] is not None and as_server["reverse_sent"]["bytes"] == 2620522496


# A real iperf 2.1.8 server log (Debian, loopback, `iperf -s -i 0.5` against `-c -t 1 -P 3 -i 0.5`).
_SERVER_P3 = """\
------------------------------------------------------------
Server listening on TCP port 15999
TCP window size:  128 KByte (default)
------------------------------------------------------------
[  1] local 127.0.0.1 port 15999 connected with 127.0.0.1 port 37324 (icwnd/mss/irtt=320/32768/27)
[  2] local 127.0.0.1 port 15999 connected with 127.0.0.1 port 37338 (icwnd/mss/irtt=320/32768/11)
[  3] local 127.0.0.1 port 15999 connected with 127.0.0.1 port 37342 (icwnd/mss/irtt=320/32768/10)
[ ID] Interval       Transfer     Bandwidth
[  1] 0.0000-0.5000 sec   514 MBytes  8.62 Gbits/sec
[  3] 0.0000-0.5000 sec   586 MBytes  9.83 Gbits/sec
[  2] 0.0000-0.5000 sec   555 MBytes  9.32 Gbits/sec
[SUM] 0.0000-0.5000 sec  1.62 GBytes  27.8 Gbits/sec
[  1] 0.5000-1.0000 sec   777 MBytes  13.0 Gbits/sec
[  3] 0.5000-0.9987 sec  1.17 GBytes  20.2 Gbits/sec
[  3] 0.0000-0.9987 sec  1.74 GBytes  15.0 Gbits/sec
[  2] 0.5000-0.9989 sec   642 MBytes  10.8 Gbits/sec
[  2] 0.0000-0.9989 sec  1.17 GBytes  10.1 Gbits/sec
[  1] 0.0000-1.0008 sec  1.26 GBytes  10.8 Gbits/sec
[SUM] 0.5000-0.9989 sec  2.56 GBytes  44.1 Gbits/sec
[SUM] 0.0000-0.9989 sec  4.18 GBytes  35.9 Gbits/sec
"""


def test_server_parallel_total_is_the_final_sum_line() -> None:
    result = parse_iperf2_text(_SERVER_P3)
    assert result["received"] is not None
    assert result["received"]["seconds"] == pytest.approx(0.9989)
    assert result["received"]["bits_per_second"] == pytest.approx(35.9e9)
    assert [(iv["start"], iv["end"]) for iv in result["intervals"]] == [(0.0, 0.5), (0.5, 0.9989)]
    assert result["complete"] is True


def test_server_parallel_without_a_final_sum_never_takes_an_interval_for_the_total() -> None:
    # 2.1 servers under load sometimes print only the first [SUM] interval: the streams' own totals
    # reach 1 s, so the 0-0.5 s [SUM] line is an interval, and the summed total is unknown (never 28 Gbit/s)
    text = "".join(line for line in _SERVER_P3.splitlines(keepends=True) if not line.startswith("[SUM] 0.0000-0.9989"))
    text = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("[SUM] 0.5000"))
    result = parse_iperf2_text(text)
    assert result["received"] is None
    assert result["complete"] is False
    assert any("no final [SUM] line" in w for w in result["warnings"])
    assert [(iv["start"], iv["end"]) for iv in result["intervals"]] == [(0.0, 0.5)]
    received = [item["received"] for item in result["per_stream"]]
    assert len(received) == 3 and all(r is not None and (r["bytes"] or 0) > 0 for r in received)


_LATE_SUM = "iperf2-2.1.8-text-client-tcp-P3-i05-late-sum-under-load-locallab.txt"


def test_late_final_sum_without_interval_lines_is_the_total() -> None:
    # the recorded output without its interval lines (as a run without -i prints it): the only [SUM] line is
    # the total, however early iperf ends it (1.0442 s, streams' totals 1.3134-1.3488 s)
    lines = (FIXTURES / _LATE_SUM).read_text().splitlines(keepends=True)
    text = "".join(line for line in lines if not re.match(r"\[[^\]]+\] (?:0\.0000-0\.5000|0\.5000-|1\.0000-)", line))
    assert text.count("[SUM]") == 1 and text.count(" sec ") == 4
    result = valid(parse_iperf2_text(text))
    assert result["sent"] is not None
    assert result["sent"]["bytes"] == nbytes("85.6 MBytes")
    assert result["sent"]["seconds"] == pytest.approx(1.0442)
    assert result["complete"] is True
    assert result["intervals"] == []


def test_late_output_cut_before_its_final_sum_never_takes_an_interval() -> None:
    # without its last line the recorded output's last [SUM] is the 0.5-1.0 s interval: no total
    text = "".join((FIXTURES / _LATE_SUM).read_text().splitlines(keepends=True)[:-1])
    result = valid(parse_iperf2_text(text))
    assert result["sent"] is None
    assert result["complete"] is False
    assert any("no final [SUM] line" in w for w in result["warnings"])
    assert [(iv["start"], iv["end"]) for iv in result["intervals"]] == [(0.0, 0.5), (0.5, 1.0)]


def test_summed_server_reports_equal_the_servers_own_lines_of_the_same_run() -> None:
    """The recorded lossy -P 4 run (tests/integration/test_live_figures.py), both ends."""
    client = valid(parse_iperf2_text((FIXTURES / "iperf2-2.1.8-text-client-udp-e-P4-lossy-locallab.txt").read_text()))
    server = valid(parse_iperf2_text((FIXTURES / "iperf2-2.1.8-text-server-udp-e-P4-lossy-locallab.txt").read_text()))
    client_rx = sorted((i["received"]["bytes"], i["received"]["bits_per_second"]) for i in client["per_stream"])
    server_rx = sorted((i["received"]["bytes"], i["received"]["bits_per_second"]) for i in server["per_stream"])
    assert client_rx == server_rx  # each Server Report is the server's own total line
    assert client["received"]["bytes"] == sum(b for b, _r in server_rx)
    assert client["received"]["bits_per_second"] == pytest.approx(sum(r for _b, r in server_rx))
    for key in ("lost_packets", "packets", "lost_percent", "jitter_ms"):
        assert client["udp"][key] == pytest.approx(server["udp"][key]), key
    # the server's own [SUM] total (7.01 MBytes, 19.4 Mbits/sec) agrees within its rounding
    assert server["received"]["bits_per_second"] == pytest.approx(client["received"]["bits_per_second"], rel=0.005)


def test_udp_receiver_without_a_sum_total_sums_its_streams() -> None:
    text = (FIXTURES / "iperf2-2.1.8-text-server-udp-e-P4-lossy-locallab.txt").read_text()
    result = valid(parse_iperf2_text("\n".join(ln for ln in text.splitlines() if not ln.startswith("[SUM]"))))
    assert result["received"] is not None
    assert result["received"]["bytes"] == sum(nbytes(f"{mb} MBytes") for mb in (1.56, 2.88, 1.40, 1.16))
    assert result["received"]["bits_per_second"] == pytest.approx(19.49e6)
    assert result["udp"]["lost_packets"] == 5715 and result["complete"] is True
    assert any("sums of the per-stream totals" in w for w in result["warnings"])
