# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parse the human-readable output of iperf2 (``iperf``, 2.0.x to 2.2.x) into a normalized result.

Formats understood (see ``tests/fixtures/iperf/README.md`` sections 5 and 7):

* legacy 2.0.5-2.0.13 lines ``[  3]  0.0-10.0 sec  1.10 GBytes   943 Mbits/sec`` (``%4.1f``
  intervals, also `` 0.0- 1.0``), 2.1.x ``%4.2f`` and fast-sampling ``%4.4f`` intervals;
* ``-e`` columns: ``Write/Err Rtry Cwnd/RTT NetPwr`` (TCP sender), ``Reads=Dist`` (TCP
  receiver), ``Write/Err PPS`` (UDP sender), ``Jitter Lost/Total Latency ... inP`` (UDP
  receiver, including the literal ``(null)`` iperf prints for inP), bounceback ``BB cnt=...``;
* ``[SUM]``/``[SUM-N]`` sums, ``[ *1]`` role-reversed ids, ``[ CT] final connect times``,
  ``Sent N datagrams``, ``Server Report:``, ``datagrams received out-of-order``,
  ``WARNING: did not receive ack of last datagram``, ``iperf: ignoring extra argument``,
  connected lines printed before the banner, ``-f`` units (``KBytes``, ``Bytes``,
  ``KBytes/sec`` = 1024-based bytes, converted to bit/s).

Reading rules (decisions, documented here because the output itself does not spell them out):

* ``side`` is ``client`` for ``Client connecting to``, ``server`` for ``Server listening on``.
  A dual test (``-d``/``-r``) prints both banners on both hosts. It is the server's output
  when one of its own outgoing connections is marked ``(reverse)`` / ``[ *N]`` (2.1+); an
  output from 2.1+ (which marks them) without such a connection is the client's; for 2.0.x
  (no markers) it is the server's when the first connection printed is inbound (a server
  accepts before it connects back). Callers that know whose output it is may pass ``side=``
  to skip this heuristic.
* Each transfer runs client-to-server (c2s) or server-to-client (s2c). s2c: ids printed
  ``[ *N]``, connections marked ``(reverse)`` (``-R`` and a server's dual-test connection),
  a client's inbound dual-test connection (local port = its ``Server listening`` port) and a
  server's outbound one. Everything else is c2s.
* This host is the sender of c2s transfers when it is the client, of s2c ones when it is the
  server. Its own final line is the sender's (``sent``) or receiver's (``received``) total;
  a UDP ``Server Report:`` is the receiver's view of a transfer this host sent.
* Dual tests / full duplex (both directions in one output): ``bidir`` is true, ``sent`` and
  ``received`` describe client-to-server, ``reverse_sent`` / ``reverse_received`` (and
  ``reverse_per_stream``, ``reverse_udp``) server-to-client. ``[SUM]`` lines that mix both
  directions are kept only under ``bidir_sum``. A ``-R`` run (s2c only) sets ``reverse``.
* A stream's last line is its total when it starts at 0; earlier lines are intervals. With
  more than one stream the ``[SUM]`` total is the total and ``[SUM]`` lines are the interval
  series; iperf2 prints no summed ``Server Report``, so a multi-stream UDP client's
  ``received`` and ``udp`` are the sums of the per-stream reports (``iperf/udp_sum.py``: jitter
  is the largest stream's, loss recomputed from the summed counts; ``complete`` only when every
  stream has its report). A UDP receiver's (server's) ``udp`` is summed the same way from its
  per-stream totals when its ``[SUM]`` total has no loss columns (2.1), and so is ``received``
  when it printed no ``[SUM]`` total at all.
* ``retransmits`` come from the ``-e`` ``Rtry`` column of the sender; ``None`` when not
  printed. Any ``-1`` / ``4294967295`` figure means "unknown" and becomes ``None``.
* ``timestamp`` comes from ``on 2024-02-26 22:16:25.887 (UTC)`` on a connected line (2.1+
  ``-e``), with the offset of its zone abbreviation from ``iperf/zones.py`` (``PDT`` ->
  ``-07:00``); an ambiguous (``IST``, ``CST``, ``PST``) or unknown abbreviation cannot be turned
  into an offset honestly, so ``timestamp`` stays ``None``, the wall time goes to the extra key
  ``timestamp_local`` and a warning names the abbreviation.
* Bounceback (``--bounceback``): iperf's Transfer column counts both directions of the
  bounce, so it is neither ``sent`` nor ``received``; the interval series is kept and the
  final line plus the latencies go to the extra key ``bounceback`` (with a warning).
* Text whose only reports are ``-y C`` lines (after banner lines) is handed to the CSV
  parser (``format`` is then ``csv``, with a warning).
* A server log of several consecutive tests has one banner: ``split_iperf2_text`` splits it;
  ``parse_iperf2_text`` returns the last test with a warning.
* Extra keys: ``reverse_sent``, ``reverse_received``, ``reverse_per_stream``, ``reverse_udp``,
  ``bidir_sum``, ``bounceback``, ``connect_times``, ``peer_version``, ``timestamp_local``;
  ``per_stream`` items and ``udp`` may carry ``out_of_order`` and ``sent_packets``
  (the sender's ``Sent N datagrams``).

One concern, one file: iperf2's text output (2.0.5 - 2.2, client and server, dual tests); long
because of the many layouts, not because it mixes concerns.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf2_csv import parse_iperf2_csv
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import Protocol, StreamTotals, UdpFigures
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.result import (
    IperfResult,
    SpanLine,
    Totals,
    finalize,
    new_result,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.textutil import (
    IPERF2_ERROR_RE,
    IPERF2_VERSION_RE,
    final_of,
    known_count,
    known_float,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.udp_sum import sum_udp_receivers
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.units import UnitError, parse_bytes, parse_rate
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.zones import zone_offset

__all__ = ["parse_iperf2_text", "split_iperf2_text"]

Side = Literal["client", "server"]


def _protocol(word: str) -> Protocol:
    """``TCP`` / ``UDP`` of a banner (the patterns match nothing else)."""
    return "udp" if word.upper() == "UDP" else "tcp"


C2S = "c2s"
S2C = "s2c"

_NUM = r"\d+(?:\.\d+)?"
_DATA_RE = re.compile(
    rf"^\[(?P<id>[^\]]+)\]\s*(?P<start>{_NUM})\s*-\s*(?P<end>{_NUM})\s+sec\s+"
    rf"(?P<xfer>{_NUM}\s*[KMGTP]?Bytes?)\s+(?P<rate>{_NUM}\s*[KMGTP]?(?:bits|Bytes)/sec)(?P<rest>.*)$"
)
_FOUR_DECIMALS_RE = re.compile(r"^\[[^\]]+\]\s*\d+\.\d{4}\s*-\s*\d+\.\d{4}\s+sec\s")
_CSV_LINE_RE = re.compile(r"^(?:[+-]\d{4}:)?\d{14}(?:\.\d+)?,", re.MULTILINE)
_LOOSE_DATA_RE = re.compile(rf"^\[[^\]]+\]\s*{_NUM}\s*-\s*{_NUM}\s+sec\s")
_OOO_RE = re.compile(
    rf"^\[(?P<id>[^\]]+)\]\s*{_NUM}\s*-\s*{_NUM}\s+sec\s+(?P<n>-?\d+)\s+datagrams received out-of-order"
)
_CONNECTED_RE = re.compile(
    r"^\[(?P<id>[^\]]+)\]\s+local\s+(?P<lhost>\S+)\s+port\s+(?P<lport>\d+)\s+connected\s+with\s+"
    r"(?P<rhost>\S+)\s+port\s+(?P<rport>\d+)(?P<rest>.*)$"
)
_CLIENT_BANNER_RE = re.compile(r"^Client connecting to (?P<host>.+), (?P<proto>TCP|UDP) port (?P<port>\d+)")
_SERVER_BANNER_RE = re.compile(
    r"^Server listening on (?P<proto>TCP|UDP)\b.*?\bports? (?P<port>\d+)(?:\s*-\s*(?P<last>\d+))?"
)
_SENT_RE = re.compile(r"^\[(?P<id>[^\]]+)\]\s+Sent (?P<n>-?\d+) datagrams")
_SERVER_REPORT_RE = re.compile(r"^\[(?P<id>[^\]]+)\]\s+Server Report:")
_NO_ACK_RE = re.compile(r"^\[(?P<id>[^\]]+)\]\s+(?P<msg>WARNING: (?:did not receive ack|ack of last datagram).*)$")
_CT_RE = re.compile(
    rf"^\[\s*CT\]\s+final connect times \(min/avg/max/stdev\) = (?P<min>{_NUM})/(?P<avg>{_NUM})/"
    rf"(?P<max>{_NUM})/(?P<stdev>{_NUM}) ms(?: \(tot/err\) = (?P<tot>\d+)/(?P<err>\d+))?"
)
#: How much earlier than the streams' own totals the only [SUM] line from 0 may end and still be the summed
#: total when the streams printed intervals too (see ``_sum_total``; e.g. 0.9989 s for streams ending
#: 0.9987-1.0008 s).
_SUM_END_SLACK = 0.05
_HEADER_RE = re.compile(r"^\[\s*(?:ID|SUM-cnt)\]")
_IGNORED_ARG_RE = re.compile(r"^iperf: ignoring extra argument.*$")
_CONN_TIME_RE = re.compile(
    r"\bon (?P<date>\d{4}-\d{2}-\d{2}) (?P<time>\d{2}:\d{2}:\d{2}(?:\.\d+)?) \((?P<zone>[^)]+)\)"
)
_PEER_VERSION_RE = re.compile(r"\(peer (?P<version>[^)]+)\)")

# Rest-of-line shapes (what follows the rate column).
_UDP_RX_RE = re.compile(
    rf"^\s*(?P<jitter>-?{_NUM})\s*ms\s+(?P<lost>-?\d+)\s*/\s*(?P<total>-?\d+)\s*\(\s*(?P<pct>[^)%]*)%\)"
)
_UDP_SUM_RX_RE = re.compile(r"^\s*(?P<lost>-?\d+)\s*/\s*(?P<total>-?\d+)\s*\(\s*(?P<pct>[^)%]*)%\)")
_UDP_TX_RE = re.compile(r"^\s*(?P<writes>-?\d+)/(?P<werr>-?\d+)\s+(?P<pps>-?\d+)\s*pps")
_BB_RE = re.compile(
    rf"^\s*(?P<cnt>\d+)=(?P<avg>{_NUM})/(?P<min>{_NUM})/(?P<max>{_NUM})/(?P<stdev>{_NUM})\s*ms"
    r"(?:\s+(?P<rtry>-?\d+)(?![\dK]))?(?:.*?\s(?P<rps>\d+)\s*rps)?"
)
_TCP_TX_RE = re.compile(r"^\s*(?P<writes>-?\d+)/(?P<werr>-?\d+)(?:\s+(?P<rtry>-?\d+)(?![\dK]))?")
_TCP_RX_RE = re.compile(r"^\s*(?P<reads>-?\d+)(?:=|\s+)(?P<dist>\d+(?::\d+)+)")


def _known_int(text: str | None) -> int | None:
    """An integer figure, or ``None`` for the ``-1`` / ``4294967295`` iperf prints for "unknown"."""
    if text is None:
        return None
    return known_count(int(text))


@dataclass
class _Line(SpanLine):
    start: float
    end: float
    nbytes: int
    bps: float
    shape: str = "plain"
    retransmits: int | None = None
    omitted: bool = False
    udp: UdpFigures | None = None
    bb: dict[str, Any] | None = None


def _sum_total(sums: list[_Line], transfers: list[_Transfer]) -> _Line | None:
    """The summed total of a multi-stream test: its last ``[SUM]`` line, never a ``[SUM]`` interval line.

    The last ``[SUM]`` line must start at 0 and reach the latest end (``final_of``). Only the first interval
    starts at 0, so that line is the total when an earlier ``[SUM]`` line starts at 0 too, or when no stream
    printed an interval line (no ``-i``: the only ``[SUM]`` is the total), however early it ends: under load
    iperf 2.1.8 ends it up to 0.1 s before every stream's own total (recorded: ``[SUM] 0.0000-1.0461 sec
    214 MBytes`` = the sum of totals ending 1.1101-1.2158 s). Otherwise it is the only ``[SUM]`` from 0 while
    the streams printed intervals: the first interval (iperf2 printed no summed total, as 2.1 servers under
    load sometimes do) unless it ends within ``_SUM_END_SLACK`` of the streams' own totals.
    """
    last = final_of(sums)
    if last is None:
        return None
    if any(abs(ln.start) <= 1e-9 for ln in sums[:-1]):
        return last
    if transfers and all(len(tr.lines) == 1 and tr.final() is not None for tr in transfers):
        return last
    stream_ends = [fin.end for fin in (tr.final() for tr in transfers) if fin is not None]
    if stream_ends and last.end + _SUM_END_SLACK < min(stream_ends):
        return None
    return last


@dataclass
class _Transfer:
    num: int | None
    direction: str
    order: int
    lines: list[_Line] = field(default_factory=list)
    report: _Line | None = None
    report_ooo: int | None = None
    ooo: int | None = None
    sent_packets: int | None = None
    no_ack: str | None = None

    def final(self) -> _Line | None:
        return final_of(self.lines)

    def intervals(self) -> list[_Line]:
        fin = self.final()
        return [ln for ln in self.lines if ln is not fin]


@dataclass
class _Conn:
    num: int | None
    star: bool
    local_host: str | None
    local_port: int
    remote_host: str | None
    remote_port: int
    reverse: bool
    full_duplex: bool
    no_udp_fin: bool
    position: int
    stamp: tuple[str, str, str] | None
    peer_version: str | None


def _parse_id(raw: str) -> tuple[str, int | None, bool]:
    """``(kind, number, starred)``; kind is ``sum``, ``ct`` or ``stream``."""
    text = raw.strip()
    if re.fullmatch(r"SUM(?:-\d+)?", text):
        return "sum", None, False
    if text == "CT":
        return "ct", None, False
    match = re.fullmatch(r"(\*)?\s*(\d+)", text)
    if match:
        return "stream", int(match.group(2)), bool(match.group(1))
    match = re.search(r"\((\d+)\)$", text)  # --permit-key ids: [mytest(1)]
    if match:
        return "stream", int(match.group(1)), False
    return "stream", None, "*" in text


def _host(text: str) -> str | None:
    host = text.split("%", 1)[0]  # 127.0.0.1%lo -> 127.0.0.1
    if not host or "*" in host or "hidden" in host:  # --hide-ips
        return None
    return host


def _parse_rest(rest: str, line: _Line) -> None:
    """Fill ``line`` from the columns that follow the rate."""
    if "(omitted)" in rest:
        line.omitted = True
    match = _UDP_RX_RE.match(rest)
    if match:
        line.shape = "udp_rx"
        line.udp = {
            "jitter_ms": float(match.group("jitter")) if float(match.group("jitter")) >= 0 else None,
            "lost_packets": _known_int(match.group("lost")),
            "packets": _known_int(match.group("total")),
            "lost_percent": known_float(match.group("pct")),
        }
        return
    match = _UDP_SUM_RX_RE.match(rest)
    if match:
        line.shape = "udp_rx"
        line.udp = {
            "jitter_ms": None,
            "lost_packets": _known_int(match.group("lost")),
            "packets": _known_int(match.group("total")),
            "lost_percent": known_float(match.group("pct")),
        }
        return
    match = _UDP_TX_RE.match(rest)
    if match:
        line.shape = "udp_tx"
        return
    match = _BB_RE.match(rest)
    if match:
        line.shape = "bb"
        line.retransmits = _known_int(match.group("rtry"))
        line.bb = {
            "count": int(match.group("cnt")),
            "avg_ms": float(match.group("avg")),
            "min_ms": float(match.group("min")),
            "max_ms": float(match.group("max")),
            "stdev_ms": float(match.group("stdev")),
            "rps": int(match.group("rps")) if match.group("rps") else None,
        }
        return
    match = _TCP_TX_RE.match(rest)
    if match:
        line.shape = "tcp_tx"
        line.retransmits = _known_int(match.group("rtry"))
        return
    if _TCP_RX_RE.match(rest):
        line.shape = "tcp_rx"


class _Parser:
    """Two passes: banners and connections first (they may come late), then the figures."""

    def __init__(self, text: str, side: Side | None) -> None:
        self.lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
        self.result = new_result("iperf2", "text")
        self.warnings: list[str] = self.result["warnings"]
        self.forced_side = side
        self.side: Side | None = side
        self.listen_ports: list[tuple[int, int]] = []
        self.conns: dict[int, _Conn] = {}
        self.conn_list: list[_Conn] = []
        self.transfers: dict[tuple[int | None, str], _Transfer] = {}
        self.sums: list[_Line] = []
        self.sum_sent_packets: int | None = None
        self.sum_report: _Line | None = None
        self.sum_ooo: int | None = None
        self.sum_threads: int | None = None
        self.errors: list[str] = []
        self.protocol: Protocol | None = None
        self.bounceback = False

    # ----------------------------------------------------------------- pass 1
    def scan_context(self) -> None:
        client_pos: int | None = None
        server_pos: int | None = None
        for pos, line in enumerate(self.lines):
            stripped = line.strip()
            match = _CLIENT_BANNER_RE.match(stripped)
            if match:
                if client_pos is None:
                    client_pos = pos
                self.protocol = self.protocol or _protocol(match.group("proto"))
                continue
            match = _SERVER_BANNER_RE.match(stripped)
            if match:
                if server_pos is None:
                    server_pos = pos
                    self.protocol = self.protocol or _protocol(match.group("proto"))
                first = int(match.group("port"))
                last = int(match.group("last")) if match.group("last") else first
                self.listen_ports.append((first, last))
                continue
            match = IPERF2_VERSION_RE.match(stripped)
            if match and self.result["tool_version"] is None:
                self.result["tool_version"] = match.group("version")
                continue
            if stripped.startswith("Bounce-back test") or stripped.startswith("Bursting:"):
                self.bounceback = self.bounceback or stripped.startswith("Bounce-back test")
                continue
            match = _CONNECTED_RE.match(stripped)
            if match:
                _kind, num, star = _parse_id(match.group("id"))
                rest = match.group("rest")
                stamp_match = _CONN_TIME_RE.search(rest)
                peer_match = _PEER_VERSION_RE.search(rest)
                conn = _Conn(
                    num=num,
                    star=star,
                    local_host=_host(match.group("lhost")),
                    local_port=int(match.group("lport")),
                    remote_host=_host(match.group("rhost")),
                    remote_port=int(match.group("rport")),
                    reverse="(reverse)" in rest,
                    full_duplex="(full-duplex)" in rest,
                    no_udp_fin="(no-udp-fin)" in rest,
                    position=pos,
                    stamp=(stamp_match.group("date"), stamp_match.group("time"), stamp_match.group("zone"))
                    if stamp_match
                    else None,
                    peer_version=peer_match.group("version") if peer_match else None,
                )
                self.conn_list.append(conn)
                if num is not None and num not in self.conns:
                    self.conns[num] = conn
        if self.side is None:
            self.side = self._detect_side(client_pos, server_pos)

    def _detect_side(self, client_pos: int | None, server_pos: int | None) -> Side | None:
        if client_pos is not None and server_pos is None:
            return "client"
        if server_pos is not None and client_pos is None:
            return "server"
        if client_pos is None or server_pos is None:
            return None
        # Both banners: a dual test (-d/-r), seen by either host.
        # 2.1+: the server's own connection back to the client is marked (reverse) / [ *N].
        if any((c.reverse or c.star) and not self._is_listen_port(c.local_port) for c in self.conn_list):
            return "server"
        # 2.1+ output carries such markers, so without them it is the client's.
        if self._marked_era():
            return "client"
        # 2.0.x: the server accepts before it connects back, so its first connection is inbound.
        first = min(self.conn_list, key=lambda c: c.position, default=None)
        if first is not None and self._is_listen_port(first.local_port):
            return "server"
        return "client"

    def _marked_era(self) -> bool:
        """Does the output come from an iperf that marks reversed transfers (2.1 and later)?"""
        markers = ("(reverse)", "(full-duplex)", "(sock=", "(icwnd/", "(peer ", "[ *")
        return any(
            any(marker in line for marker in markers) or _FOUR_DECIMALS_RE.match(line.strip()) for line in self.lines
        )

    def _is_listen_port(self, port: int) -> bool:
        return any(first <= port <= last for first, last in self.listen_ports)

    def direction(self, num: int | None, star: bool) -> str:
        if star:
            return S2C
        conn = self.conns.get(num) if num is not None else None
        if conn is None:
            return C2S
        if conn.reverse or conn.star:
            return S2C
        if conn.full_duplex or not self.listen_ports:
            return C2S
        inbound = self._is_listen_port(conn.local_port)
        if self.side == "server":
            return C2S if inbound else S2C
        return S2C if inbound else C2S

    def sends(self, direction: str) -> bool:
        """Is this host the sender of transfers in ``direction``?"""
        if self.side == "server":
            return direction == S2C
        return direction == C2S

    # ----------------------------------------------------------------- pass 2
    def _transfer(self, num: int | None, direction: str) -> _Transfer:
        key = (num, direction)
        if key not in self.transfers:
            self.transfers[key] = _Transfer(num=num, direction=direction, order=len(self.transfers))
        return self.transfers[key]

    def scan_figures(self) -> None:
        pending_report: set[int | None] = set()
        pending_sum_report = False
        last_was_report: dict[tuple[int | None, str], bool] = {}
        unreadable = 0
        for raw in self.lines:
            line = raw.strip()
            if not line or line.startswith("---") or _HEADER_RE.match(line):
                continue
            match = _CT_RE.match(line)
            if match:
                self.result["connect_times"] = {
                    "min_ms": float(match.group("min")),
                    "avg_ms": float(match.group("avg")),
                    "max_ms": float(match.group("max")),
                    "stdev_ms": float(match.group("stdev")),
                    "count": int(match.group("tot")) if match.group("tot") else None,
                    "errors": int(match.group("err")) if match.group("err") else None,
                }
                continue
            if _IGNORED_ARG_RE.match(line):
                self.warnings.append(line)
                continue
            match = _SERVER_REPORT_RE.match(line)
            if match:
                kind, num, _star = _parse_id(match.group("id"))
                if kind == "sum":
                    pending_sum_report = True
                else:
                    pending_report.add(num)
                continue
            match = _SENT_RE.match(line)
            if match:
                kind, num, star = _parse_id(match.group("id"))
                count = _known_int(match.group("n"))
                if kind == "sum":
                    self.sum_sent_packets = count
                else:
                    tr = self._transfer(num, self.direction(num, star))
                    tr.sent_packets = count
                continue
            match = _NO_ACK_RE.match(line)
            if match:
                kind, num, star = _parse_id(match.group("id"))
                msg = f"{match.group('msg')} (no Server Report: the receiver's figures are unknown)"
                if kind != "sum":
                    self._transfer(num, self.direction(num, star)).no_ack = msg
                self.warnings.append(msg)
                continue
            match = _OOO_RE.match(line)
            if match:
                kind, num, star = _parse_id(match.group("id"))
                count = _known_int(match.group("n"))
                if kind == "sum":
                    self.sum_ooo = count
                elif kind == "stream":
                    key = (num, self.direction(num, star))
                    tr = self._transfer(*key)
                    if last_was_report.get(key):
                        tr.report_ooo = count
                    else:
                        tr.ooo = count
                continue
            match = _DATA_RE.match(line)
            if match:
                try:
                    parsed = _Line(
                        start=float(match.group("start")),
                        end=float(match.group("end")),
                        nbytes=parse_bytes(match.group("xfer")),
                        bps=parse_rate(match.group("rate")),
                    )
                except UnitError:
                    unreadable += 1
                    continue
                _parse_rest(match.group("rest"), parsed)
                kind, num, star = _parse_id(match.group("id"))
                if kind == "sum":
                    threads = re.fullmatch(r"\s*SUM-(\d+)\s*", match.group("id"))
                    if threads:
                        self.sum_threads = int(threads.group(1))
                    if pending_sum_report:
                        self.sum_report = parsed
                        pending_sum_report = False
                    else:
                        self.sums.append(parsed)
                    continue
                key = (num, self.direction(num, star))
                tr = self._transfer(*key)
                if num in pending_report:
                    pending_report.discard(num)
                    tr.report = parsed
                    last_was_report[key] = True
                else:
                    tr.lines.append(parsed)
                    last_was_report[key] = False
                continue
            if IPERF2_ERROR_RE.match(line):
                if line not in self.errors:
                    self.errors.append(line)
                continue
            if _LOOSE_DATA_RE.match(line) and "PDF:" not in line and "histogram" not in line.lower():
                unreadable += 1
        if unreadable:
            self.warnings.append(f"{unreadable} report line(s) could not be read and were skipped")

    # ----------------------------------------------------------------- assemble
    def _udp_of(self, line: _Line | None) -> UdpFigures | None:
        if line is None or line.udp is None:
            return None
        return line.udp.copy()

    def _build_direction(
        self, direction: str, transfers: list[_Transfer], sums: list[_Line], *, sums_mixed: bool = False
    ) -> dict[str, Any]:
        """Totals, per-stream items, intervals and UDP figures of one direction."""
        sender = self.sends(direction)
        per_stream: list[StreamTotals] = []
        notes: list[str] = []
        complete = True
        for tr in transfers:
            fin = tr.final()
            own = fin.totals(sender=sender) if fin else None
            peer = tr.report.totals(sender=False) if tr.report else None
            item: StreamTotals = {
                "id": tr.num if tr.num is not None else f"#{tr.order}",
                "sent": own if sender else None,
                "received": peer if sender else own,
            }
            udp = self._udp_of(tr.report if sender else fin)
            if self.protocol == "udp":
                udp = udp or {"jitter_ms": None, "lost_packets": None, "packets": None, "lost_percent": None}
                ooo = tr.report_ooo if sender else tr.ooo
                if ooo is not None:
                    udp["out_of_order"] = ooo
                if tr.sent_packets is not None:
                    udp["sent_packets"] = tr.sent_packets
                item["udp"] = udp
            per_stream.append(item)
            if fin is None:
                complete = False
                notes.append(
                    f"stream {item['id']}: no final summary line (the output was cut short); only intervals are known"
                )
            if sender and self.protocol == "udp" and tr.report is None and tr.no_ack is None and fin is not None:
                complete = False
                why = " (the test ran with no-udp-fin)" if self._no_udp_fin(tr.num) else ""
                notes.append(f"stream {item['id']}: no Server Report{why}, the receiver's figures are unknown")
            if tr.no_ack is not None:
                complete = False
        sum_final = _sum_total(sums, transfers)
        total_line: _Line | None
        if len(transfers) > 1 or (not transfers and sums):
            total_line = sum_final
            if total_line is None and sums_mixed:
                notes.append(
                    "the [SUM] lines add both directions: this direction's total is unknown (see the per-stream totals)"
                )
            elif total_line is None and not sender and self.protocol == "udp" and transfers:
                pass  # a UDP receiver: its per-stream totals are summed below (udp_sum.py)
            elif total_line is None:
                complete = False
                notes.append(
                    "no final [SUM] line: the total is unknown (the output was cut short, or iperf2 printed no summed "
                    "total, as 2.1 servers sometimes do under load; see the per-stream totals)"
                )
        else:
            total_line = transfers[0].final() if transfers else None
        own_total = total_line.totals(sender=sender) if total_line else None
        peer_total: Totals | None = None
        udp_total: UdpFigures | None = None
        if sender:
            if len(transfers) == 1 and transfers[0].report is not None:
                peer_total = transfers[0].report.totals(sender=False)
                udp_total = self._udp_of(transfers[0].report)
            elif self.sum_report is not None:
                peer_total = self.sum_report.totals(sender=False)
                udp_total = self._udp_of(self.sum_report)
            elif len(transfers) > 1 and self.protocol == "udp" and any(tr.report for tr in transfers):
                summed = sum_udp_receivers(per_stream)
                peer_total, udp_total = summed.received, summed.udp
                complete = complete and summed.complete
                notes.extend(summed.notes)
        else:
            udp_total = self._udp_of(total_line)
            if self.protocol == "udp" and len(transfers) > 1:
                summed = sum_udp_receivers(per_stream)
                if total_line is None and not sums_mixed:
                    own_total = summed.received
                    complete = complete and summed.complete
                    notes.append("no final [SUM] line: received and udp are the sums of the per-stream totals")
                    notes.extend(summed.notes)
                if summed.udp is not None and (udp_total is None or udp_total.get("packets") is None):
                    udp_total = summed.udp  # a 2.1 [SUM] total carries no jitter/loss columns
        if self.protocol == "udp":
            udp_total = udp_total or {"jitter_ms": None, "lost_packets": None, "packets": None, "lost_percent": None}
            if len(transfers) == 1:
                ooo = transfers[0].report_ooo if sender else transfers[0].ooo
                if ooo is not None:
                    udp_total["out_of_order"] = ooo
                if transfers[0].sent_packets is not None:
                    udp_total["sent_packets"] = transfers[0].sent_packets
            else:
                if self.sum_sent_packets is not None:
                    udp_total["sent_packets"] = self.sum_sent_packets
                if self.sum_ooo is not None and not sender:
                    udp_total["out_of_order"] = self.sum_ooo
        if len(transfers) > 1 or (not transfers and sums):
            series = [ln for ln in sums if ln is not sum_final]
            if not series and not sums_mixed and any(tr.intervals() for tr in transfers):
                notes.append("per-stream interval lines but no [SUM] interval lines: intervals left empty")
        else:
            series = transfers[0].intervals() if transfers else []
        intervals = [
            {
                "start": ln.start,
                "end": ln.end,
                "bytes": ln.nbytes,
                "bits_per_second": ln.bps,
                "retransmits": ln.retransmits if sender else None,
                "omitted": ln.omitted,
            }
            for ln in series
        ]
        return {
            "sent": own_total if sender else peer_total,
            "received": peer_total if sender else own_total,
            "per_stream": per_stream,
            "intervals": intervals,
            "udp": udp_total if self.protocol == "udp" else None,
            "streams": len(transfers),
            "complete": complete,
            "notes": notes,
        }

    def assemble(self) -> IperfResult:
        result = self.result
        result["side"] = self.forced_side or self._stated_side()
        if self.protocol is None:
            has_udp = any(
                ln.shape in ("udp_rx", "udp_tx")
                for tr in self.transfers.values()
                for ln in [*tr.lines, *([tr.report] if tr.report else [])]
            )
            has_udp = has_udp or any(tr.sent_packets is not None for tr in self.transfers.values())
            self.protocol = "udp" if has_udp else "tcp"
        result["protocol"] = self.protocol
        if self.side is None and self.transfers:
            self.side = self._side_from_shapes()
            self.warnings.append(
                f"the output does not say whether it is the client's or the server's; read as the {self.side}'s view"
            )
        transfers = [tr for tr in self.transfers.values() if tr.lines or tr.report]
        directions = {tr.direction for tr in transfers}
        if not directions and self.sums:
            directions = {C2S}
        main = C2S if C2S in directions or not directions else S2C
        bidir = len(directions) == 2
        result["bidir"] = bidir
        result["reverse"] = main == S2C and not bidir
        main_sums = self.sums if not bidir else []
        if bidir and self.sums:
            fin = final_of(self.sums)
            result["bidir_sum"] = fin.totals(sender=False) if fin else None
            self.warnings.append(
                "the [SUM] lines add both directions of the dual test; they are kept under bidir_sum only"
            )
        main_tr = sorted((tr for tr in transfers if tr.direction == main), key=lambda t: t.order)
        mixed = bidir and bool(self.sums)
        built = self._build_direction(main, main_tr, main_sums, sums_mixed=mixed)
        if self.bounceback or any(ln.shape == "bb" for tr in main_tr for ln in tr.lines):
            self._apply_bounceback(built, main_tr)
        result["sent"] = built["sent"]
        result["received"] = built["received"]
        result["per_stream"] = built["per_stream"]
        result["intervals"] = built["intervals"]
        result["udp"] = built["udp"]
        result["streams"] = built["streams"] or self._conn_count(main) or self.sum_threads or 0
        complete = built["complete"]
        self.warnings.extend(built["notes"])
        if bidir:
            rev_tr = sorted((tr for tr in transfers if tr.direction == S2C), key=lambda t: t.order)
            rev = self._build_direction(S2C, rev_tr, [], sums_mixed=mixed)
            result["reverse_sent"] = rev["sent"]
            result["reverse_received"] = rev["received"]
            result["reverse_per_stream"] = rev["per_stream"]
            if self.protocol == "udp":
                result["reverse_udp"] = rev["udp"]
            complete = complete and rev["complete"]
            self.warnings.extend(f"server-to-client: {note}" for note in rev["notes"])
        self._endpoints(main)
        if self.errors:
            if not transfers and not self.sums:
                result["error"] = self.errors[0]
                self.warnings.extend(self.errors[1:])
            else:
                self.warnings.extend(self.errors)
        if not transfers and not self.sums:
            result["udp"] = None
        if not transfers and not self.sums and not result["error"]:
            complete = False
            self.warnings.append("no transfer was reported: the output holds no measurement")
        peers = {c.peer_version for c in self.conn_list if c.peer_version}
        if peers:
            result["peer_version"] = sorted(peers)[0]
        result["complete"] = complete
        return finalize(result)

    def _stated_side(self) -> Side | None:
        has_client = any(_CLIENT_BANNER_RE.match(ln.strip()) for ln in self.lines)
        has_server = any(_SERVER_BANNER_RE.match(ln.strip()) for ln in self.lines)
        return self.side if (has_client or has_server) else None

    def _side_from_shapes(self) -> Side:
        shapes = {ln.shape for tr in self.transfers.values() for ln in tr.lines}
        has_report = any(tr.report or tr.sent_packets is not None for tr in self.transfers.values())
        if not has_report and shapes & {"udp_rx", "tcp_rx"} and not shapes & {"udp_tx", "tcp_tx", "bb"}:
            return "server"
        return "client"

    def _no_udp_fin(self, num: int | None) -> bool:
        conn = self.conns.get(num) if num is not None else None
        return conn is not None and conn.no_udp_fin

    def _conn_count(self, direction: str) -> int:
        nums = {c.num for c in self.conn_list if c.num is not None and self.direction(c.num, c.star) == direction}
        return len(nums)

    def _apply_bounceback(self, built: dict[str, Any], transfers: list[_Transfer]) -> None:
        fin = transfers[0].final() if len(transfers) == 1 else None
        self.result["bounceback"] = (
            {
                "bytes": fin.nbytes,
                "bits_per_second": fin.bps,
                "seconds": fin.seconds,
                "retransmits": fin.retransmits,
                **(fin.bb or {}),
            }
            if fin
            else None
        )
        built["sent"] = None
        built["received"] = None
        for item in built["per_stream"]:
            item["sent"] = None
            item["received"] = None
        self.warnings.append(
            "bounceback test: iperf's Transfer column counts both directions of the bounce, so it is not "
            "reported as sent/received; the final line and the bounceback latencies are under 'bounceback' "
            "and are not part of the normalized figures"
        )

    def _endpoints(self, main: str) -> None:
        candidates = [c for c in self.conn_list if self.direction(c.num, c.star) == main] or self.conn_list
        if not candidates:
            return
        conn = candidates[0]
        self.result["local"] = {"host": conn.local_host, "port": conn.local_port}
        self.result["remote"] = {"host": conn.remote_host, "port": conn.remote_port}
        stamped = next((c for c in candidates if c.stamp), None) or next((c for c in self.conn_list if c.stamp), None)
        if stamped and stamped.stamp:
            date, clock, zone = stamped.stamp
            wall = f"{date}T{clock}"
            offset, why = zone_offset(zone)
            if offset is not None:
                self.result["timestamp"] = f"{wall}{offset}"
            else:
                self.result["timestamp_local"] = wall
                self.warnings.append(f"connection {why}: timestamp left unknown, wall time in timestamp_local")


def split_iperf2_text(text: str, *, side: Side | None = None) -> list[str]:
    """Split a server log holding several consecutive tests into one text per test.

    An iperf2 server prints its ``Server listening`` banner once, then every test's
    connections and reports. A new test starts at an inbound connection printed after data
    lines when every stream seen so far has printed its total (a line starting at 0). The
    banner lines are repeated at the top of each piece. Client output is returned whole.
    """
    parser = _Parser(text, side)
    parser.scan_context()
    if parser.side != "server":
        return [text]
    lines = parser.lines
    first_conn = next((i for i, ln in enumerate(lines) if _CONNECTED_RE.match(ln.strip())), None)
    if first_conn is None:
        return [text]
    preamble = lines[:first_conn]
    pieces: list[list[str]] = []
    current: list[str] = []
    last_start: dict[tuple[int | None, bool], float] = {}
    data_since_split = False
    for line in lines[first_conn:]:
        stripped = line.strip()
        conn = _CONNECTED_RE.match(stripped)
        if conn:
            _kind, _num, star = _parse_id(conn.group("id"))
            inbound = parser._is_listen_port(int(conn.group("lport"))) and "(reverse)" not in conn.group("rest")
            finished = bool(last_start) and all(abs(start) < 1e-9 for start in last_start.values())
            if inbound and not star and data_since_split and finished:
                pieces.append(current)
                current, last_start, data_since_split = [], {}, False
        else:
            data = _DATA_RE.match(stripped)
            if data:
                kind, num, star = _parse_id(data.group("id"))
                if kind == "stream":
                    last_start[(num, star)] = float(data.group("start"))
                    data_since_split = True
        current.append(line)
    pieces.append(current)
    if len(pieces) == 1:
        return [text]
    return ["\n".join([*preamble, *piece]) + "\n" for piece in pieces]


def split_iperf2_by_peer(text: str) -> list[str]:
    """Split one server test whose connections came from several client addresses (clients that ran at
    the same time) into one text per address, in the order the addresses connected.

    Each piece holds that address's connection and data lines, the lines of no stream (banner, ``[ ID]``
    headers) and the ``[SUM]`` lines when that address is the only one with several streams: an iperf2
    2.1 server sums each client's streams apart, and its ``[SUM]`` lines do not say whose they are. A test
    from one address, or one whose ``[SUM]`` lines could belong to several addresses, is returned whole.
    """
    lines = text.splitlines()
    owner: dict[int, str] = {}
    peers: list[str] = []
    for line in lines:
        conn = _CONNECTED_RE.match(line.strip())
        if conn:
            kind, number, _star = _parse_id(conn.group("id"))
            if kind == "stream" and number is not None:
                owner[number] = conn.group("rhost")
                if conn.group("rhost") not in peers:
                    peers.append(conn.group("rhost"))
    several = [peer for peer in peers if sum(1 for host in owner.values() if host == peer) > 1]
    if len(peers) < 2 or len(several) > 1:
        return [text]
    pieces: dict[str, list[str]] = {peer: [] for peer in peers}
    for line in lines:
        stripped = line.strip()
        match = _CONNECTED_RE.match(stripped) or _DATA_RE.match(stripped)
        kind, number, _star = _parse_id(match.group("id")) if match else ("", None, False)
        if kind == "stream" and number in owner:
            pieces[owner[number]].append(line)
        elif kind == "sum" and several:
            pieces[several[0]].append(line)
        elif kind not in ("stream", "sum"):
            for piece in pieces.values():
                piece.append(line)
    return ["\n".join(piece) + "\n" for piece in pieces.values()]


def parse_iperf2_text(text: str, *, side: Side | None = None) -> IperfResult:
    """Parse iperf2 human-readable output into a normalized result (see the module docstring).

    ``side`` may be given by callers that know whose output this is (it overrides the
    banner-based detection, which is a heuristic for dual tests). A server log holding
    several tests gives the last one, with a warning (``split_iperf2_text`` gives each).
    """
    pieces = split_iperf2_text(text, side=side)
    parser = _Parser(pieces[-1], side)
    parser.scan_context()
    parser.scan_figures()
    if not parser.transfers and not parser.sums and _CSV_LINE_RE.search(text):
        # -y C output after text banner lines (iperf 2.1 prints them for a dual test's server side)
        result = parse_iperf2_csv(text, side=side)
        result["warnings"].append("the text holds iperf2 CSV report lines (-y C): parsed as CSV")
        return result
    result = parser.assemble()
    if len(pieces) > 1:
        result["warnings"].append(
            f"this server log holds {len(pieces)} tests; this result is the last one "
            "(split_iperf2_text gives each test)"
        )
    return result
