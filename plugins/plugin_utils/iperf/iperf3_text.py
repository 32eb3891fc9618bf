# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parser for the human-readable output of iperf3 3.0 - 3.21 (client and server side).

``parse_iperf3_text(text)`` returns one normalized result (see ``iperf/result.py`` and the
schema). Every figure comes from a line iperf3 printed; what the text does not carry is
``None``. The format facts used here are documented in ``tests/fixtures/iperf/README.md``
section 3 (checked against ``src/iperf_locale.c`` / ``src/iperf_api.c`` of 3.0.11 - 3.21).

How the text is read:

* Lines are ``rstrip``-ed (CRLF, trailing spaces) and any prefix before the first iperf
  token is dropped, so ``--timestamps[=fmt]`` and ``-T title`` prefixes of any format work.
* Data lines are ``[id][role] start-end sec <bytes> <rate> <columns> [tag]``. Lines tagged
  ``sender``/``receiver`` form the summary; untagged UDP lines after the final
  separator + header are the 3.0/3.1 one-line UDP summary. Everything else is an interval.
* ``intervals`` is the ``[SUM]`` series when there are several streams, else the single
  stream's series; for ``--bidir`` it is the client-to-server direction (``[TX-C]`` on the
  client, ``[RX-S]`` on the server) and ``reverse_*`` keys hold the other direction.
* iperf3 < 3.2 prints the side it did not measure as ``0.00 Bytes  0.00 bits/sec``
  (server ``sender`` line, ``-R`` client ``sender`` line, UDP one-line summary of the
  receiving side). Such a zero line next to data that moved is reported as ``None``.
* ``iperf3: getsockopt - Function not implemented`` (ESXi's bundled iperf3) or a ``Cwnd``
  of ``0.00 Bytes`` on an interval that moved data means TCP_INFO is missing: every
  retransmit figure is then ``None``.
* A log holding several tests (server banners) yields the last test, with a warning.
* ``iperf3: error - <message>`` (also ``interrupt - ...``, 3.0/3.1 ``the client has
  terminated``) sets ``error`` to the message without the ``iperf3: error - `` prefix; any
  figures printed before it are kept, ``complete`` is false and a warning says the run was
  cut short. ``raw`` holds the input whenever ``error`` is set or no figure was found.

Keys beyond the schema: ``reverse_sent``/``reverse_received``/``reverse_udp``/
``reverse_intervals`` (``--bidir``, server-to-client), ``server_output`` (the embedded
``--get-server-output`` block, parsed as a server-side result), ``raw``; per-stream items
carry ``role`` for ``--bidir``; ``udp`` carries ``out_of_order`` when iperf3 printed it.

One concern, one file: iperf3's text output (client and server, 3.0 - 3.21, Windows builds,
partial pastes); long because of the many layouts, not because it mixes concerns.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import (
    Interval,
    Side,
    StreamTotals,
    UdpFigures,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.result import (
    IperfResult,
    Totals,
    finalize,
    has_figures,
    make_totals,
    new_result,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.units import UnitError, parse_bytes, parse_rate

__all__ = ["parse_iperf3_text"]

# --------------------------------------------------------------------------------------
# Line recognisers (applied to the line after its prefix was stripped)
# --------------------------------------------------------------------------------------

# The first token of every line iperf3 prints; whatever precedes it is a prefix added by
# --timestamps / -T (or a leading blank that a paste added).
_ANCHOR_RE = re.compile(
    r"\[\s*(?:\d{1,6}|SUM|ID)\]"
    r"|- - - - "
    r"|-{20,}"
    r"|Connecting to host "
    r"|Reverse mode, remote host "
    r"|Accepted connection from "
    r"|Server listening on "
    r"|Server output:"
    r"|iperf Done\."
    r"|iperf 3\.\d"
    r"|Time: "
    r"|Starting Test: "
    r"|Test Complete\."
    r"|CPU Utilization: "
    r"|iperf3: "
    r"|[Ww]arning: "
    r"|too many errors"
    r"|Cookie: "
    r"|TCP MSS: "
    r"|Control connection MSS"
    r"|(?:snd|rcv)_tcp_congestion "
    r"|Increasing socket buffer size"
    r"|Finished omit period"
)
_ELISION_RE = re.compile(r"^\s*\[?\s*(?:\.{2,}|\u2026)\s*\]?\s*$")
_ELIDED = "\x00elided"

_DATA_RE = re.compile(
    r"^\[\s*(?P<id>\d{1,6}|SUM)\](?:\[(?P<role>[TR]X-[CS])\])?\s+"
    r"(?P<start>\d+(?:\.\d+)?)\s*-\s*(?P<end>\d+(?:\.\d+)?)\s+sec\s+"
    r"(?P<bytes>\d+(?:\.\d+)?\s*[KMGTP]?Bytes)\s+"
    r"(?P<rate>\d+(?:\.\d+)?\s*[KMGTP]?(?:bits|Bytes)/sec)"
    r"(?P<rest>.*)$"
)
_DATA_LIKE_RE = re.compile(r"^\[\s*(?:\d{1,6}|SUM)\](?:\[[TR]X-[CS]\])?\s+\S+\s*-\s*\S+\s+sec\s")
_UDP_RX_RE = re.compile(
    r"^(?P<jitter>\S+)\s+ms\s+(?:(?P<lost>-?\d+)|(?P<unknown>Unknown))/(?P<total>-?\d+)"
    r"(?:\s+\((?P<pct>[^)%]*)%\))?$"
)
_TCP_COLS_RE = re.compile(r"^(?P<retr>-?\d+)(?:\s+(?P<cwnd>\d+(?:\.\d+)?\s*[KMGTP]?Bytes))?$")
_INT_RE = re.compile(r"^\d+$")
_UDP_COLUMNS_RE = re.compile(r"\sms\s+(?:-?\d+|Unknown)/-?\d+")

_HEADER_RE = re.compile(r"^\[ ID\](?P<role>\[Role\])?\s+Interval\s+Transfer\s+(?P<word>Bandwidth|Bitrate)(?P<cols>.*)$")
_SEPARATOR_RE = re.compile(r"^- - - - ")
_BANNER_RE = re.compile(r"^-{20,}$")
_CONNECTED_RE = re.compile(
    r"^\[\s*(?P<id>\d+)\]\s+local\s+(?P<lhost>\S+)\s+port\s+(?P<lport>\d+)\s+connected\s+to\s+"
    r"(?P<rhost>\S+)\s+port\s+(?P<rport>\d+)"
)
_CONNECTING_RE = re.compile(r"^Connecting to host (?P<host>\S+), port (?P<port>\d+)")
_ACCEPTED_RE = re.compile(r"^Accepted connection from (?P<host>\S+), port (?P<port>\d+)")
_LISTENING_RE = re.compile(r"^Server listening on \S+")
_REVERSE_RE = re.compile(r"^Reverse mode, remote host \S+ is sending")
_VERSION_RE = re.compile(r"^iperf (?P<version>3\.[0-9A-Za-z.+~_-]*)")
_TIME_RE = re.compile(
    r"^Time: (?:[A-Za-z]{3},\s+)?(?P<day>\d{1,2})\s+(?P<mon>[A-Za-z]{3})\s+(?P<year>\d{4})\s+"
    r"(?P<h>\d{1,2}):(?P<m>\d{2}):(?P<s>\d{2})\s*(?P<zone>GMT|UTC|Z|[+-]\d{2}:?\d{2})?\s*$"
)
_CPU_RE = re.compile(
    r"^CPU Utilization: local/\w+ (?P<local>[\d.]+)%.*?,\s*remote/\w+ (?P<remote>[\d.]+)%",
)
_START_RE = re.compile(r"^Starting Test: protocol: (?P<proto>\w+), (?P<streams>\d+) streams")
_NOT_AVAILABLE_RE = re.compile(
    r"^\[\s*(?P<id>\d+|SUM)\](?:\[(?P<role>[TR]X-[CS])\])?\s+\((?P<which>sender|receiver) statistics not available\)"
)
_SENT_DGRAMS_RE = re.compile(r"^\[\s*(?P<id>\d+|SUM)\]\s+Sent (?P<n>\d+) datagrams")
_OUT_OF_ORDER_RE = re.compile(
    r"^\[\s*(?P<id>\d+|SUM)\](?:\[(?P<role>[TR]X-[CS])\])?\s+\S+\s*-\s*\S+\s+sec\s+"
    r"(?P<n>\d+) datagrams received out-of-order"
)
_IPERF3_MSG_RE = re.compile(r"^iperf3: (?:(?P<kind>error|interrupt|parameter error) - )?(?P<msg>.*)$")
_WARNING_RE = re.compile(r"^[Ww]arning: ")
_KNOWN_PREAMBLE_RE = re.compile(r"^(?:Time: |Control connection MSS|iperf 3\.\d)")

_MONTHS = {
    name: number
    for number, name in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1
    )
}
# iperf3 messages that end the run early although a summary may still be printed.
_CUT_SHORT_PLAIN = ("the client has terminated", "the server has terminated")

_RETR_UNTRUSTED = (
    "TCP_INFO is not available on this host (iperf3 printed 'getsockopt - Function not implemented' "
    "or a Cwnd of 0.00 Bytes while data moved, as ESXi's bundled iperf3 does): every retransmit figure "
    "is reported as null"
)
_SENDER_PLACEHOLDER = (
    "the sender line reads 0.00 Bytes while data moved: iperf3 < 3.2 prints the side it did not "
    "measure as zero, so the sender totals are reported as unknown"
)
_RECEIVER_PLACEHOLDER = (
    "the receiver line reads 0.00 Bytes on a sending server: iperf3 < 3.2 prints the side it did not "
    "measure as zero, so the receiver totals are reported as unknown"
)


@dataclass
class _Data:
    """One parsed data line."""

    index: int
    sid: int | None  # None for [SUM]
    role: str | None  # "TX-C", "RX-C", "TX-S", "RX-S" or None
    start: float
    end: float
    nbytes: int
    bps: float
    tag: str | None  # "sender", "receiver", "omitted" or None
    retr: int | None = None
    cwnd: int | None = None
    packets: int | None = None  # UDP sender columns: datagrams sent
    udp_rx: bool = False  # carries jitter and lost/total columns
    jitter_ms: float | None = None
    lost: int | None = None
    total: int | None = None
    lost_percent: float | None = None
    summary: bool = False

    @property
    def seconds(self) -> float:
        return round(self.end - self.start, 6)


# --------------------------------------------------------------------------------------
# Line preparation
# --------------------------------------------------------------------------------------


def _shape(text: str) -> str:
    return re.sub(r"[A-Za-z]", "a", re.sub(r"\d", "0", text))


def _clean_lines(text: str) -> list[str]:
    """Right-strip every line, mark elisions, and drop prefixes that precede the iperf token."""
    raw = [line.rstrip() for line in text.lstrip("\ufeff").splitlines()]
    out: list[str] = []
    unanchored: list[int] = []
    prefix_shapes: set[str] = set()
    for line in raw:
        if _ELISION_RE.match(line):
            out.append(_ELIDED)
            continue
        match = _ANCHOR_RE.search(line)
        if match is None:
            unanchored.append(len(out))
            out.append(line.strip())
            continue
        prefix = line[: match.start()]
        if prefix.strip():
            prefix_shapes.add(_shape(prefix.strip()))
        out.append(line[match.start() :])
    # With --timestamps an empty iperf line still carries its prefix: treat a line that is
    # nothing but a prefix as empty (matters for the end of a "Server output:" block).
    if prefix_shapes:
        for i in unanchored:
            if out[i] and _shape(out[i]) in prefix_shapes:
                out[i] = ""
    return out


def _split_server_output(lines: list[str]) -> tuple[list[str], list[str] | None]:
    """Move the ``Server output:`` block (``--get-server-output``) out of the client's lines."""
    try:
        begin = next(i for i, line in enumerate(lines) if line.startswith("Server output:"))
    except StopIteration:
        return lines, None
    server: list[str] = []
    seen_summary = False
    end = len(lines)
    for i in range(begin + 1, len(lines)):
        line = lines[i]
        if line.startswith("iperf Done.") or re.match(r"^\[[^\]]*\]\[[TR]X-C\]", line):
            end = i
            break
        if not line and seen_summary:
            end = i
            break
        if _DATA_RE.match(line) and re.search(r"\s(?:sender|receiver)$", line):
            seen_summary = True
        server.append(line)
    return lines[:begin] + lines[end:], server


def _is_preamble(line: str) -> bool:
    """A line iperf3 -V prints before the banner / ``Connecting`` line of the next test."""
    if not line or _BANNER_RE.match(line) or _KNOWN_PREAMBLE_RE.match(line):
        return True
    return _ANCHOR_RE.match(line) is None and not line.startswith(_ELIDED)


def _split_tests(lines: list[str]) -> list[list[str]]:
    """Split a log at each ``Server listening`` banner / ``Connecting to host`` line."""
    starts = [i for i, line in enumerate(lines) if _LISTENING_RE.match(line) or _CONNECTING_RE.match(line)]
    if len(starts) <= 1:
        return [lines]
    cuts = [0]
    for start in starts[1:]:
        k = start
        lowest = cuts[-1] + 1
        version_at: int | None = None
        while k - 1 >= lowest and _is_preamble(lines[k - 1]) and start - (k - 1) <= 6:
            k -= 1
            if _VERSION_RE.match(lines[k]):
                version_at = k
        if version_at is None:
            k = start
            while k - 1 >= lowest and (not lines[k - 1] or _BANNER_RE.match(lines[k - 1])):
                k -= 1
        else:
            k = version_at
        if k > cuts[-1]:
            cuts.append(k)
    cuts.append(len(lines))
    return [lines[a:b] for a, b in itertools.pairwise(cuts)]


# --------------------------------------------------------------------------------------
# Data lines
# --------------------------------------------------------------------------------------


def _parse_float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _parse_data(index: int, line: str, match: re.Match[str], udp: bool, warnings: list[str]) -> _Data | None:
    try:
        nbytes = parse_bytes(match.group("bytes"))
        bps = parse_rate(match.group("rate"))
    except UnitError as exc:
        warnings.append(f"line not understood and skipped ({exc}): {line!r}")
        return None
    start, end = float(match.group("start")), float(match.group("end"))
    if end < start:
        warnings.append(f"line not understood and skipped (interval ends before it starts): {line!r}")
        return None
    sid_text = match.group("id")
    data = _Data(
        index=index,
        sid=None if sid_text == "SUM" else int(sid_text),
        role=match.group("role"),
        start=start,
        end=end,
        nbytes=nbytes,
        bps=bps,
        tag=None,
    )
    rest = match.group("rest").strip()
    for tag, label in (("sender", "sender"), ("receiver", "receiver"), ("(omitted)", "omitted")):
        if rest == tag or rest.endswith((" " + tag, "\t" + tag)):
            data.tag = label
            rest = rest[: -len(tag)].strip()
            break
    if not rest:
        return data
    udp_match = _UDP_RX_RE.match(rest)
    if udp_match is not None:
        data.udp_rx = True
        data.jitter_ms = _parse_float(udp_match.group("jitter"))
        data.total = int(udp_match.group("total"))
        if udp_match.group("lost") is not None:
            data.lost = int(udp_match.group("lost"))
            pct = udp_match.group("pct")
            data.lost_percent = None if pct is None else _parse_float(pct.strip())
        return data
    if udp and _INT_RE.match(rest):
        data.packets = int(rest)
        return data
    tcp_match = _TCP_COLS_RE.match(rest)
    if tcp_match is not None:
        data.retr = int(tcp_match.group("retr"))
        cwnd = tcp_match.group("cwnd")
        if cwnd is not None:
            try:
                data.cwnd = parse_bytes(cwnd)
            except UnitError:
                data.cwnd = None
        return data
    warnings.append(f"columns not understood after the rate, kept bytes and rate only: {line!r}")
    return data


# --------------------------------------------------------------------------------------
# One test
# --------------------------------------------------------------------------------------


@dataclass
class _Pick:
    """The summary lines chosen for one stream or one direction."""

    sender: _Data | None = None
    receiver: _Data | None = None
    combined: _Data | None = None  # 3.0/3.1 UDP one-line summary (sender bytes + receiver loss)
    untagged_as_receiver: bool = False


def _pick_lines(lines: list[_Data]) -> _Pick:
    pick = _Pick()
    for data in lines:
        if data.tag == "sender":
            pick.sender = data
        elif data.tag == "receiver":
            pick.receiver = data
    for data in lines:
        if data.tag is None:
            if pick.sender is not None and pick.receiver is None:
                pick.receiver = data
                pick.untagged_as_receiver = True
            elif pick.sender is None and pick.receiver is None:
                pick.combined = data
    return pick


def _select(lines: list[_Data], role: str | None) -> tuple[list[_Data], int]:
    """Lines of one direction to use as its total: the [SUM] lines, else the single stream's.

    Returns the chosen lines and the number of distinct stream ids in that direction.
    """
    candidates = [d for d in lines if d.role == role]
    ids = {d.sid for d in candidates if d.sid is not None}
    sums = [d for d in candidates if d.sid is None]
    if sums:
        return sums, len(ids)
    if len(ids) == 1:
        return candidates, 1
    return [], len(ids)


class _Segment:
    """State while reading the lines of one test."""

    def __init__(self, lines: list[str], forced_side: Side | None) -> None:
        self.lines = lines
        self.forced_side = forced_side
        self.result = new_result("iperf3", "text")
        self.warnings: list[str] = self.result["warnings"]
        self.data: list[_Data] = []
        self.ids: dict[int, None] = {}
        self.client_signal = False
        self.server_signal = False
        self.header_word: str | None = None
        self.roles_seen: set[str] = set()
        self.errors: list[str] = []
        self.retr_untrusted = False
        self.elided = False
        self.first_connected: tuple[str, int, str, int] | None = None
        self.connecting: tuple[str, int] | None = None
        self.accepted: tuple[str, int] | None = None
        self.start_streams: int | None = None
        self.out_of_order: dict[tuple[int | None, str | None], int] = {}
        self.has_content = False

    # -- first pass helpers ------------------------------------------------------------

    def _is_udp(self) -> bool:
        """UDP when the first column header (or the -V ``Starting Test`` line) says so, else when a
        data line carries jitter and lost/total columns (a paste without headers)."""
        for line in self.lines:
            header = _HEADER_RE.match(line)
            if header:
                return "Jitter" in header.group("cols") or "Datagrams" in header.group("cols")
            start = _START_RE.match(line)
            if start:
                return start.group("proto").upper() == "UDP"
        return any(_UDP_COLUMNS_RE.search(line) and _DATA_RE.match(line) for line in self.lines)

    def _summary_boundary(self) -> int:
        """Index after which untagged UDP lines belong to the summary (last separator + header)."""
        boundary = len(self.lines)
        for i, line in enumerate(self.lines):
            if not _SEPARATOR_RE.match(line):
                continue
            j = i + 1
            while j < len(self.lines) and (not self.lines[j] or self.lines[j].startswith("Test Complete")):
                j += 1
            if j < len(self.lines) and _HEADER_RE.match(self.lines[j]):
                boundary = j
        return boundary

    # -- main ------------------------------------------------------------------------

    def parse(self) -> IperfResult:
        result = self.result
        udp = self._is_udp()
        result["protocol"] = "udp" if udp else "tcp"
        boundary = self._summary_boundary()
        for index, line in enumerate(self.lines):
            self._line(index, line, udp, index > boundary)
        if self.elided:
            self.warnings.append(
                "the output has elided lines ('...'): the interval series may have gaps; totals are the printed ones"
            )
        self._finish(udp)
        return finalize(result)

    def _line(self, index: int, line: str, udp: bool, in_summary: bool) -> None:
        result = self.result
        if not line:
            return
        if line == _ELIDED:
            self.elided = True
            return
        if line.startswith("["):
            self._bracket_line(index, line, udp, in_summary)
            return
        if _SEPARATOR_RE.match(line) or _BANNER_RE.match(line):
            return
        if match := _CONNECTING_RE.match(line):
            self.client_signal = True
            if self.connecting is None:
                self.connecting = (match.group("host"), int(match.group("port")))
            return
        if _REVERSE_RE.match(line):
            self.client_signal = True
            result["reverse"] = True
            return
        if match := _ACCEPTED_RE.match(line):
            self.server_signal = True
            self.has_content = True
            if self.accepted is None:
                self.accepted = (match.group("host"), int(match.group("port")))
            return
        if _LISTENING_RE.match(line):
            self.server_signal = True
            return
        if line.startswith("iperf Done."):
            self.client_signal = True
            return
        if match := _VERSION_RE.match(line):
            if result["tool_version"] is None:
                result["tool_version"] = match.group("version")
            return
        if match := _TIME_RE.match(line):
            if result["timestamp"] is None:
                result["timestamp"] = _iso_time(match)
            return
        if match := _CPU_RE.match(line):
            if result["cpu"] is None:
                result["cpu"] = {
                    "local_percent": float(match.group("local")),
                    "remote_percent": float(match.group("remote")),
                }
            return
        if match := _START_RE.match(line):
            self.start_streams = int(match.group("streams"))
            proto = match.group("proto").upper()
            if proto not in ("TCP", "UDP"):
                self.warnings.append(f"protocol {proto} is reported as 'tcp' (the schema knows tcp and udp only)")
            return
        if match := _IPERF3_MSG_RE.match(line):
            self._iperf3_message(match.group("kind"), match.group("msg").strip())
            return
        if _WARNING_RE.match(line):
            self.warnings.append(f"iperf3 printed: {line}")
            return
        if line.startswith("too many errors"):
            self.warnings.append(f"iperf3 printed: {line}")
            return

    def _iperf3_message(self, kind: str | None, msg: str) -> None:
        self.has_content = True
        if kind == "error":
            self.errors.append(msg)
        elif kind is not None:
            self.errors.append(f"{kind} - {msg}")
        elif msg.startswith("getsockopt"):
            self.retr_untrusted = True
            if f"iperf3 printed: iperf3: {msg}" not in self.warnings:
                self.warnings.append(f"iperf3 printed: iperf3: {msg}")
        elif msg.startswith(_CUT_SHORT_PLAIN):
            self.errors.append(msg)
        elif msg.startswith("exiting"):
            return
        else:
            self.warnings.append(f"iperf3 printed: iperf3: {msg}")

    def _bracket_line(self, index: int, line: str, udp: bool, in_summary: bool) -> None:
        data_match = _DATA_RE.match(line)
        if data_match is not None:
            self._data_line(index, line, data_match, udp, in_summary)
            return
        if match := _HEADER_RE.match(line):
            self.header_word = self.header_word or match.group("word")
            return
        if match := _CONNECTED_RE.match(line):
            self.has_content = True
            self.ids.setdefault(int(match.group("id")), None)
            if self.first_connected is None:
                self.first_connected = (
                    match.group("lhost"),
                    int(match.group("lport")),
                    match.group("rhost"),
                    int(match.group("rport")),
                )
            return
        if match := _NOT_AVAILABLE_RE.match(line):
            self.server_signal = True
            if match.group("id") != "SUM":
                self.ids.setdefault(int(match.group("id")), None)
            return
        if match := _SENT_DGRAMS_RE.match(line):
            self.client_signal = True
            return
        if match := _OUT_OF_ORDER_RE.match(line):
            sid = None if match.group("id") == "SUM" else int(match.group("id"))
            self.out_of_order[(sid, match.group("role"))] = int(match.group("n"))
            return
        if _DATA_LIKE_RE.match(line):
            self.warnings.append(f"line not understood and skipped: {line!r}")

    def _data_line(self, index: int, line: str, match: re.Match[str], udp: bool, in_summary: bool) -> None:
        data = _parse_data(index, line, match, udp, self.warnings)
        if data is None:
            return
        self.has_content = True
        if data.sid is not None:
            self.ids.setdefault(data.sid, None)
        if data.role:
            self.roles_seen.add(data.role)
        data.summary = data.tag in ("sender", "receiver") or (in_summary and data.tag is None and data.udp_rx)
        if (
            not data.summary
            and data.cwnd == 0
            and data.nbytes > 0
            and data.retr is not None
            and not self.retr_untrusted
        ):
            self.retr_untrusted = True
        self.data.append(data)

    # -- assembling ------------------------------------------------------------------

    def _side(self, summary: list[_Data]) -> Side | None:
        if self.forced_side:
            return self.forced_side
        if self.roles_seen:
            return "client" if any(r.endswith("-C") for r in self.roles_seen) else "server"
        if self.client_signal:
            return "client"
        if self.server_signal:
            return "server"
        if self.header_word == "Bitrate":
            # From 3.2 on, only a client prints both a sender and a receiver line for a stream.
            keys = {(d.sid, d.role, d.tag) for d in summary}
            if any((sid, role, "sender") in keys and (sid, role, "receiver") in keys for sid, role, _tag in keys):
                return "client"
        return None

    def _server_is_sending(self, intervals: list[_Data], summary: list[_Data], udp: bool) -> bool:
        local = [d for d in intervals if d.role is None]
        if udp and any(d.packets is not None for d in local):
            return True
        if not udp and any(d.retr is not None or d.cwnd is not None for d in local):
            return True
        tags = {d.tag for d in summary if d.role is None}
        return "sender" in tags and "receiver" not in tags and self.header_word != "Bandwidth"

    def _totals(
        self, pick: _Pick, moved: bool, receiver_placeholder_possible: bool, notes: set[str]
    ) -> tuple[Totals | None, Totals | None]:
        sender = pick.sender or pick.combined
        receiver = pick.receiver
        sent: Totals | None = None
        received: Totals | None = None
        if sender is not None:
            placeholder = (
                sender.nbytes == 0 and sender.bps == 0 and (moved or (receiver is not None and receiver.nbytes > 0))
            )
            if placeholder:
                notes.add(_SENDER_PLACEHOLDER)
            else:
                retr = None if self.retr_untrusted or self.result["protocol"] == "udp" else sender.retr
                sent = make_totals(sender.nbytes, sender.bps, sender.seconds, retr)
        if receiver is not None:
            placeholder = (
                receiver_placeholder_possible
                and receiver.nbytes == 0
                and receiver.bps == 0
                and sender is not None
                and sender.nbytes > 0
            )
            if placeholder:
                notes.add(_RECEIVER_PLACEHOLDER)
            else:
                received = make_totals(receiver.nbytes, receiver.bps, receiver.seconds, None)
        return sent, received

    def _udp(self, pick: _Pick, role: str | None) -> UdpFigures:
        line = pick.receiver if pick.receiver is not None and pick.receiver.udp_rx else None
        if line is None and pick.combined is not None and pick.combined.udp_rx:
            line = pick.combined
        udp: UdpFigures = {
            "jitter_ms": None if line is None else line.jitter_ms,
            "lost_packets": None if line is None else line.lost,
            "packets": None if line is None else line.total,
            "lost_percent": None if line is None else line.lost_percent,
        }
        if line is not None:
            key = (line.sid, role)
            if key in self.out_of_order:
                udp["out_of_order"] = self.out_of_order[key]
        return udp

    def _series(self, intervals: list[_Data], role: str | None) -> list[Interval]:
        chosen, nids = _select(intervals, role)
        if not chosen and nids > 1:
            self.warnings.append("several streams but no [SUM] interval lines: the interval series is left empty")
        series: list[Interval] = []
        for data in chosen:
            series.append(
                {
                    "start": data.start,
                    "end": data.end,
                    "bytes": data.nbytes,
                    "bits_per_second": data.bps,
                    "retransmits": None if self.retr_untrusted else data.retr,
                    "omitted": data.tag == "omitted",
                }
            )
        return series

    def _mark_lost_tags(self) -> None:
        """An untagged line after a stream's sender/receiver line is a summary line whose tag was lost."""
        tagged: set[tuple[int | None, str | None]] = set()
        for data in self.data:
            key = (data.sid, data.role)
            if data.tag in ("sender", "receiver"):
                tagged.add(key)
            elif data.tag is None and key in tagged:
                data.summary = True

    def _finish(self, udp: bool) -> None:
        result = self.result
        self._mark_lost_tags()
        summary = [d for d in self.data if d.summary]
        intervals = [d for d in self.data if not d.summary]
        side = self._side(summary)
        result["side"] = side
        bidir = bool(self.roles_seen)
        result["bidir"] = bidir
        if bidir:
            primary: str | None = "TX-C" if side == "client" else "RX-S"
            other: str | None = "RX-C" if side == "client" else "TX-S"
        else:
            primary = other = None
        if side == "server" and not bidir and self._server_is_sending(intervals, summary, udp):
            result["reverse"] = True
        server_sending = side == "server" and (result["reverse"] or bidir)
        notes: set[str] = set()

        # endpoints
        if self.first_connected is not None:
            lhost, lport, rhost, rport = self.first_connected
            result["local"] = {"host": lhost, "port": lport}
            result["remote"] = {"host": rhost, "port": rport}
        elif self.connecting is not None:
            result["remote"] = {"host": self.connecting[0], "port": self.connecting[1]}
        elif self.accepted is not None:
            result["remote"] = {"host": self.accepted[0], "port": self.accepted[1]}

        result["streams"] = len(self.ids) if self.ids else (self.start_streams or 0)

        # per stream
        summary_by_id: dict[int, list[_Data]] = {}
        for data in summary:
            if data.sid is not None:
                summary_by_id.setdefault(data.sid, []).append(data)
        interval_role: dict[int, str | None] = {}
        moved_ids: set[int] = set()
        for data in intervals:
            if data.sid is not None:
                interval_role.setdefault(data.sid, data.role)
                if data.nbytes > 0:
                    moved_ids.add(data.sid)
        for sid in self.ids:
            lines = summary_by_id.get(sid, [])
            moved = sid in moved_ids
            pick = _pick_lines(lines)
            role = lines[0].role if lines else interval_role.get(sid)
            placeholder_possible = side == "server" and (result["reverse"] or role == "TX-S")
            sent, received = self._totals(pick, moved, placeholder_possible, notes)
            item: StreamTotals = {"id": sid, "sent": sent, "received": received}
            if role is not None:
                item["role"] = role
            result["per_stream"].append(item)

        # totals of each direction
        directions = [(primary, "")] + ([(other, "reverse_")] if bidir else [])
        summary_complete = True
        untagged_note = False
        for role, prefix in directions:
            chosen, nids = _select(summary, role)
            if not chosen and nids > 1:
                self.warnings.append(
                    f"several streams but no [SUM] summary lines for the {'server-to-client' if prefix else 'main'} "
                    "direction: its totals are left unknown"
                )
            pick = _pick_lines(chosen)
            untagged_note = untagged_note or pick.untagged_as_receiver
            moved = any(d.nbytes > 0 for d in intervals if d.role == role)
            placeholder_possible = side == "server" and (result["reverse"] or role == "TX-S")
            sent, received = self._totals(pick, moved, placeholder_possible, notes)
            if prefix:
                result["reverse_sent"], result["reverse_received"] = sent, received
                if udp:
                    result["reverse_udp"] = self._udp(pick, role)
                result["reverse_intervals"] = self._series(intervals, role)
            else:
                result["sent"], result["received"] = sent, received
                if udp:
                    result["udp"] = self._udp(pick, role)
                result["intervals"] = self._series(intervals, role)
            summary_complete = summary_complete and self._expected_lines_present(pick, side, role, server_sending)
        if untagged_note:
            self.warnings.append(
                "a summary line without its 'receiver' tag follows the 'sender' line: it is read as the receiver line"
            )
        for note in sorted(notes):
            self.warnings.append(note)
        if self.retr_untrusted and not udp:
            self.warnings.append(_RETR_UNTRUSTED)

        # completeness, errors
        complete = True
        if not summary:
            complete = False
            if self.data:
                self.warnings.append(
                    "the output has no summary block (it stops during the test: truncated or cut short); "
                    "totals are unknown, the intervals are the printed ones"
                )
            elif not self.errors:
                self.warnings.append("the output holds no measurement")
        elif not summary_complete:
            complete = False
            self.warnings.append("the summary block lacks the sender or receiver line(s) this output should print")
        else:
            missing = [sid for sid in self.ids if sid in interval_role and sid not in summary_by_id]
            if missing:
                complete = False
                self.warnings.append(
                    "the summary block lacks the lines of stream(s) "
                    + ", ".join(str(sid) for sid in missing)
                    + " (partial output); the totals are the printed [SUM] lines"
                )
        if self.errors:
            message = self.errors[-1]
            result["error"] = message
            complete = False
            if len(self.errors) > 1:
                self.warnings.append(f"iperf3 reported {len(self.errors)} errors; 'error' holds the last one")
            if self.data:
                self.warnings.append(f"the run was cut short: iperf3 reported '{message}'")
        result["complete"] = complete

    def _expected_lines_present(self, pick: _Pick, side: str | None, role: str | None, server_sending: bool) -> bool:
        if pick.combined is not None:
            return True
        if side == "server":
            if role == "TX-S" or (role is None and server_sending):
                return pick.sender is not None
            return pick.receiver is not None
        if side == "client":
            return pick.sender is not None and pick.receiver is not None
        return pick.sender is not None or pick.receiver is not None


def _iso_time(match: re.Match[str]) -> str | None:
    month = _MONTHS.get(match.group("mon").title())
    if month is None:
        return None
    zone = match.group("zone")
    tz = UTC
    if zone and zone[0] in "+-":
        digits = zone[1:].replace(":", "")
        offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        tz = timezone(offset if zone[0] == "+" else -offset)
    try:
        moment = datetime(
            int(match.group("year")),
            month,
            int(match.group("day")),
            int(match.group("h")),
            int(match.group("m")),
            int(match.group("s")),
            tzinfo=tz,
        )
    except ValueError:
        return None
    return moment.isoformat()


def _parse_segment(lines: list[str], forced_side: Side | None = None) -> tuple[IperfResult, bool]:
    segment = _Segment(lines, forced_side)
    result = segment.parse()
    return result, segment.has_content


def parse_iperf3_text(text: str) -> IperfResult:
    """Parse the human-readable output of one iperf3 run (client or server side).

    The result follows ``docs/schema/iperf-result.schema.json``; see the module
    docstring for how each figure is found. Output that holds an error but no figure comes
    back with ``error`` set and the input under ``raw``.
    """
    lines = _clean_lines(text)
    main, server_lines = _split_server_output(lines)
    segments = _split_tests(main)
    parsed = [_parse_segment(segment) for segment in segments]
    with_content = [result for result, has in parsed if has]
    if with_content:
        # the last test with figures: a server stopped while idle logs an error after its last banner
        measured = [result for result in with_content if has_figures(result)]
        result = (measured or with_content)[-1]
        if len(with_content) > 1:
            which = "the last one" if result is with_content[-1] else "the last one with figures"
            result["warnings"].append(f"this output holds {len(with_content)} tests; {which} is returned")
            later = with_content[with_content.index(result) + 1 :]
            result["warnings"].extend(f"a later test holds no figures: {r['error']}" for r in later if r["error"])
    elif len(segments) > 1:
        result, _has_content = _parse_segment(main)
    else:
        result = parsed[-1][0]
    if server_lines is not None:
        server_result, _server_has_content = _parse_segment(server_lines, forced_side="server")
        result["server_output"] = server_result
    if result["error"] or not has_figures(result):
        result["raw"] = text
    return result
