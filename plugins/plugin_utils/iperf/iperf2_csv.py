# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parse iperf2 CSV output (``-y C`` / ``--reportstyle C``) into a normalized result.

Layouts understood (``tests/fixtures/iperf/README.md`` section 6, checked against the
iperf2 2-1-9 / 2-2-x sources):

======================  ==============================================================
fields                  layout
======================  ==============================================================
9                       ``time,src,sport,dst,dport,id,start-end,bytes,bits_per_sec``
14                      9 + ``jitter_ms,lost,total,lost_pct,out_of_order`` (UDP)
15                      9 + ``writecnt,writeerr,tcpretry,tcpcwnd,tcprtt,tcprttvar`` (2.1.x -e TCP sender)
17                      14 + ``writecnt,writeerr,pps`` (2.1.x -e UDP)
18                      9 + ``readcnt,bin0..bin7`` (2.1.x -e TCP receiver)
header row              2.2.x ``time,srcaddress,...,istart,iend,bytes,speed,...``: columns by name (the
                        header says which columns a line has; the layout must not be guessed from the count)
======================  ==============================================================

Decisions (the CSV itself does not carry these facts):

* **Protocol**: the CSV has no TCP/UDP marker; a line with the UDP columns (14/17 fields,
  or a ``jitter`` header column) makes the result ``udp``, otherwise it is ``tcp``. A 2.0.x
  UDP client whose Server Report line is missing prints TCP-shaped lines only and is
  therefore reported as ``tcp``: nothing in its CSV tells them apart.
* **Side**: the CSV never says whose output it is, so ``side`` is ``None`` unless the caller
  passes ``side=``. Which lines are the sender's: the ``-e`` TCP layouts say it (write
  columns = sender, read columns = receiver); in 2.0.x UDP a 9-field line is the sender's and
  a 14-field line the receiver's; a 2.1.x UDP total whose datagram count is ``-1`` is the
  sender's. A UDP line with write counts is the sender's own unless it carries loss, or a
  datagram count other than its write count: only a receiver counts those, and 2.2 prints
  the receiver's report in the sender's layout (``--sum-only``: ``...,errors,datagrams,...,
  writecnt,...``); it is then the receiver's figures (its write count kept as
  ``udp.sent_packets``). Plain 9-field TCP lines carry no role; what else tells it: 2.1 prints
  the receiving end of a client's full-duplex stream as ``::,0``; a ``-d``/``-r`` server prints
  ``Client connecting to H, TCP port P`` for its connection back to the client even with
  ``-y C``, so the lines towards ``H:P`` are its sending and its inbound connection's its
  receiving; of the two directions of one test, one is sent and one received; with ``side``
  given, the end shared by every full-duplex connection is the server's. Lines still without
  a role are read as the client's (sender's) view with a warning, unless ``side="server"`` is
  passed -- except the two directions of one test: neither is then reported as sent or
  received (the warning lists each direction's figures), as a 2.1.8 server's plain
  full-duplex CSV prints both ends of both directions and nothing says which is its own.
* **Server report**: the client repeats the UDP server's report as a second line for the
  same transfer id (2.0.x: with the endpoints swapped). It is the receiver's view
  (``received`` and ``udp``). With several UDP streams the per-stream reports are summed
  (``iperf/udp_sum.py``), as in the text parser.
* **Totals**: a series' last line is its total when it starts at 0 and reaches the latest
  end; shorter lines are intervals. Transfer id ``-1`` is the SUM line. With several streams
  and no SUM line (iperf 2.1.8 prints none) the total is unknown (``None``, with a warning).
* **Dual tests and full duplex**: every direction is its own transfer (transfer id, and the
  endpoints in the order printed: 2.1+ prints the data sender first; its SUM lines by the
  addresses in that order), never merged with the other direction of the same connection.
  When this host both sends and receives, ``bidir`` is true, ``sent``/``received`` describe
  the direction this host sends in (with ``side="server"``: the client-to-server direction,
  which the server receives) and ``reverse_sent``/``reverse_received`` the other one.
* **-1 / 4294967295** in any field means "unknown" (2.2.x prints u32 ``-1`` as
  4294967295) and becomes ``None``; ``-1,-1,-1,-1,0,0`` (a build without TCP stats) gives
  ``retransmits`` ``None``.
* **Timestamps**: iperf stamps each report line with its own time (the end of the interval,
  or of the test for a total), not the test start. ``timestamp`` is the first line's stamp
  when it carries a zone (2.1.x ``-e``: ``+0000:20240908113035.128`` →
  ``2024-09-08T11:30:35.128+00:00``). Without a zone there is no honest offset:
  ``timestamp`` stays ``None`` and the wall time goes to the extra key ``timestamp_local``
  (``2013-05-10T20:25:55``). ``19700101000000`` (the epoch, printed by 2.1.x servers) is
  ignored.
* **Endpoints**: 2.0.x prints the reporting host first; 2.1.x and later print the data
  sender first (``srcaddress``), so a ``-R`` client's own line starts with the server. Which
  one is this host cannot be told, so ``local``/``remote`` stay ``None``; the printed pair
  of the first line is kept under the extra key ``csv_endpoints`` ([first, second]).
* **-R**: nothing in the CSV marks a reversed run; a ``-R`` client's plain TCP lines are read
  like any other 9-field line (see *Side*).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import StreamTotals, UdpFigures
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
    UNKNOWN_U32,
    final_of,
    known_count,
    known_float,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.udp_sum import sum_udp_receivers

__all__ = ["parse_iperf2_csv"]

Side = Literal["client", "server"]
_TIME_RE = re.compile(r"^(?:(?P<tz>[+-]\d{4}):)?(?P<stamp>\d{14})(?:\.(?P<frac>\d+))?$")
_INTERVAL_RE = re.compile(r"^(?P<start>-?\d+(?:\.\d+)?)-(?P<end>-?\d+(?:\.\d+)?)$")
# A host that connects out prints its banner even with -y C (a -d/-r server's connection back to the client).
_OUTBOUND_RE = re.compile(r"^Client connecting to (?P<host>[^,\s]+), (?:TCP|UDP) port (?P<port>\d+)")
_UNSPECIFIED = frozenset({"::", "0.0.0.0", ""})
_NOISE_RE = re.compile(
    r"^(?:-{5,}|Client connecting to |Server listening on |TCP window size|UDP buffer size|Sending \d+ byte|"
    r"Receiving \d+ byte|Write buffer size|Read buffer size|TOS set to|Binding to|Waiting for server threads|"
    r"iperf: ignoring extra argument|iperf version )"
)

# Column names of the positional layouts, as the 2.2.x header names them.
_BASIC = ["time", "srcaddress", "srcport", "dstaddr", "dstport", "transferid", "interval", "bytes", "speed"]
_UDP = [*_BASIC, "jitter", "errors", "datagrams", "errpercent", "outoforder"]
_LAYOUTS: dict[int, list[str]] = {
    9: _BASIC,
    14: _UDP,
    15: [*_BASIC, "writecnt", "writeerr", "tcpretry", "tcpcwnd", "tcprtt", "tcprttvar"],
    17: [*_UDP, "writecnt", "writeerr", "pps"],
    18: [*_BASIC, "readcnt", "bin0", "bin1", "bin2", "bin3", "bin4", "bin5", "bin6", "bin7"],
}


def _int_or_none(text: str | None) -> int | None:
    """An integer figure, or ``None`` for empty, ``-1`` or ``4294967295`` ("unknown")."""
    if text is None or not text.strip():
        return None
    try:
        value = int(float(text))
    except ValueError:
        return None
    return known_count(value)


@dataclass
class _Row(SpanLine):
    index: int
    fields: dict[str, str]
    stamp: str
    src: tuple[str, int | None]
    dst: tuple[str, int | None]
    transfer_id: int | None
    is_sum: bool
    start: float
    end: float
    nbytes: int | None
    bps: float | None
    udp: bool
    role: str | None  # "sender" / "receiver" when the layout says it
    retransmits: int | None = None
    udp_figures: UdpFigures | None = None


@dataclass
class _Group:
    """All rows of one transfer (id + connection), in output order."""

    key: tuple[Any, ...]
    order: int
    rows: list[_Row] = field(default_factory=list)
    own: list[_Row] = field(default_factory=list)
    report: _Row | None = None
    role: str | None = None


def _split_interval(fields: dict[str, str]) -> tuple[float, float] | None:
    if "interval" in fields:
        match = _INTERVAL_RE.match(fields["interval"].strip())
        if not match:
            return None
        return float(match.group("start")), float(match.group("end"))
    try:
        return float(fields["istart"]), float(fields["iend"])
    except (KeyError, ValueError):
        return None


class _Parser:
    def __init__(self, text: str, side: Side | None) -> None:
        self.text = text
        self.side = side
        self.result = new_result("iperf2", "csv")
        self.warnings: list[str] = self.result["warnings"]
        self.rows: list[_Row] = []
        self.errors: list[str] = []
        self.assumed_sender = False
        self.outbound: set[tuple[str, int | None]] = set()

    # ---------------------------------------------------------------- reading
    def read(self) -> None:
        header: list[str] | None = None
        skipped = 0
        for raw in self.text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            line = raw.strip()
            if not line:
                continue
            if line.startswith("time,"):
                header = [name.strip() for name in line.split(",")]
                continue
            values = line.split(",")
            first = values[0].strip()
            if len(values) < 8 or not _TIME_RE.match(first):
                match = IPERF2_VERSION_RE.match(line)
                outbound = _OUTBOUND_RE.match(line)
                if outbound:
                    self.outbound.add((outbound.group("host"), int(outbound.group("port"))))
                elif match:
                    self.result["tool_version"] = match.group("version")
                elif IPERF2_ERROR_RE.match(line):
                    if line not in self.errors:
                        self.errors.append(line)
                elif not _NOISE_RE.match(line):
                    skipped += 1
                continue
            names = header if header is not None and len(header) == len(values) else None
            if names is None:
                names = self._positional_names(values)
            row = self._row(dict(zip(names, (v.strip() for v in values), strict=False)))
            if row is None:
                skipped += 1
                continue
            self.rows.append(row)
        if skipped:
            self.warnings.append(f"{skipped} line(s) that are not iperf2 CSV reports were skipped")

    def _positional_names(self, values: list[str]) -> list[str]:
        if len(values) > 9 and _INTERVAL_RE.match(values[6].strip()) is None and known_float(values[6]) is not None:
            # 2.2.x layout without its header row: istart, iend as separate columns.
            names = [*_BASIC[:6], "istart", "iend", "bytes", "speed"]
            if len(values) > len(names):
                note = f"{len(values)}-field CSV lines without a header row: only the first 10 columns were read"
                if note not in self.warnings:
                    self.warnings.append(note)
            return names
        layout = _LAYOUTS.get(len(values))
        if layout is None:
            layout = _UDP if len(values) > 14 and "." in values[9] else _BASIC
            note = f"{len(values)}-field CSV lines are not a known iperf2 layout: the first {len(layout)} were read"
            if note not in self.warnings:
                self.warnings.append(note)
        return layout

    def _row(self, fields: dict[str, str]) -> _Row | None:
        interval = _split_interval(fields)
        if interval is None:
            return None
        raw_id = fields.get("transferid", "")
        try:
            transfer_id: int | None = int(raw_id)
        except ValueError:
            transfer_id = None
        is_sum = transfer_id in (-1, UNKNOWN_U32)
        udp = "jitter" in fields
        row = _Row(
            index=len(self.rows),
            fields=fields,
            stamp=fields.get("time", ""),
            src=(fields.get("srcaddress", ""), _int_or_none(fields.get("srcport"))),
            dst=(fields.get("dstaddr", ""), _int_or_none(fields.get("dstport"))),
            transfer_id=None if is_sum else transfer_id,
            is_sum=is_sum,
            start=interval[0],
            end=interval[1],
            nbytes=_int_or_none(fields.get("bytes")),
            bps=known_float(fields.get("speed")),
            udp=udp,
            role=None,
        )
        if udp:
            total = fields.get("datagrams")
            row.udp_figures = {
                "jitter_ms": known_float(fields.get("jitter")),
                "lost_packets": _int_or_none(fields.get("errors")),
                "packets": _int_or_none(total),
                "lost_percent": known_float(fields.get("errpercent")) if _int_or_none(total) else None,
                "out_of_order": _int_or_none(fields.get("outoforder")),
            }
            writes = _int_or_none(fields.get("writecnt"))
            if writes:
                lost, count = _int_or_none(fields.get("errors")), _int_or_none(total)
                if lost or (count is not None and count != writes):
                    # loss, or a datagram count other than this row's writes, is the receiver's to give: 2.2
                    # prints the receiver's report in the sender's layout (its write count beside it)
                    row.role = "receiver"
                    row.udp_figures["sent_packets"] = writes
                else:
                    row.role = "sender"
            elif "readcnt" in fields:
                row.role = "receiver"
            elif total is not None and total.strip() in ("-1", str(UNKNOWN_U32)):
                row.role = "sender"  # 2.1.x sender total: the datagram count is the receiver's to give
        elif "writecnt" in fields or "tcpretry" in fields:
            row.role = "sender"
            row.retransmits = _int_or_none(fields.get("tcpretry"))
        elif "readcnt" in fields:
            row.role = "receiver"
        if row.role is None and not is_sum and _unspecified(row.dst):
            row.role = "receiver"  # 2.1 prints the receiving end of a client's full-duplex stream as ::,0
        return row

    # ----------------------------------------------------------------- grouping
    def groups(self) -> list[_Group]:
        """One group per transfer *and direction*: the two directions of a connection are never merged."""
        groups: dict[tuple[Any, ...], _Group] = {}
        for row in self.rows:
            # 2.1.x zeroes one port of SUM lines: group them by the addresses, in their direction
            key: tuple[Any, ...] = (
                ("sum", row.src[0], row.dst[0]) if row.is_sum else ("id", row.transfer_id, row.src, row.dst)
            )
            if key not in groups:
                groups[key] = _Group(key=key, order=len(groups))
            groups[key].rows.append(row)
        _join_swapped_reports(groups)
        any_udp = any(r.udp for r in self.rows)
        for group in groups.values():
            self._split_group(group, any_udp)
        ordered = sorted(groups.values(), key=lambda g: g.order)
        self._resolve_roles(ordered)
        return ordered

    def _split_group(self, group: _Group, any_udp: bool) -> None:
        """Separate this host's own lines from the peer's repeated report, and find the role."""
        if any_udp:
            for row in group.rows:
                if not row.udp and row.role is None:
                    row.role = "sender"  # 2.0.x UDP: the sender prints the TCP-shaped 9-field line
        roles = {r.role for r in group.rows if r.role}
        if "sender" in roles and any_udp:
            own_final_seen = False
            for row in group.rows:
                at_zero = abs(row.start) < 1e-9
                repeated = (own_final_seen and row.role != "sender") or row.role == "receiver"
                if repeated and row.udp and at_zero and group.report is None:
                    group.report = row  # the receiver's report, repeated by the sender
                    continue
                if at_zero and row.role == "sender":
                    own_final_seen = True
                group.own.append(row)
            group.role = "sender"
            return
        group.own = list(group.rows)
        if "sender" in roles:
            group.role = "sender"
        elif "receiver" in roles or (group.rows and all(r.udp for r in group.rows)):
            group.role = "receiver"  # read columns, or jitter/loss columns without a sender mark
        else:
            group.role = None

    def _resolve_roles(self, groups: list[_Group]) -> None:
        """Roles the rows do not carry, from what the output says around them (module docstring, *Side*)."""
        streams = [g for g in groups if g.key[0] == "id"]
        if self.outbound:
            # a -d/-r server (or a client that printed its banner): it sends on the connection it opened
            touched = False
            for group in streams:
                first = group.rows[0]
                if first.dst in self.outbound:
                    group.role, touched = group.role or "sender", True
                elif first.src in self.outbound:
                    group.role, touched = group.role or "receiver", True
            if touched:
                for group in streams:
                    group.role = group.role or "receiver"  # the inbound connection of the dual test
        for group in streams:
            partner = _partner(group, streams)
            if group.role is None and partner is not None and partner.role in ("sender", "receiver"):
                group.role = "receiver" if partner.role == "sender" else "sender"
        self._roles_from_side(streams)
        for group in streams:
            if group.role is None and _partner(group, streams) is not None:
                group.role = "unknown"  # one of two directions, this host's end not said
        for group in groups:
            if group.key[0] == "sum" and group.role is None:
                same_way = {g.role for g in streams if (g.rows[0].src[0], g.rows[0].dst[0]) == group.key[1:]}
                if len(same_way) == 1:
                    group.role = same_way.pop()

    def _roles_from_side(self, streams: list[_Group]) -> None:
        """Both directions of several connections: the end they all share is the server's."""
        open_pairs = [g for g in streams if g.role is None and _partner(g, streams) is not None]
        if self.side is None or len(open_pairs) < 4:
            return
        shared = set.intersection(*({g.rows[0].src, g.rows[0].dst} for g in open_pairs))
        if len(shared) != 1:
            return
        server = shared.pop()
        for group in open_pairs:
            sends_from_server = group.rows[0].src == server  # 2.1+ prints the data sender first
            group.role = "sender" if sends_from_server == (self.side == "server") else "receiver"

    # ----------------------------------------------------------------- assemble
    def assemble(self) -> IperfResult:
        result = self.result
        result["side"] = self.side
        result["protocol"] = "udp" if any(r.udp for r in self.rows) else "tcp"
        groups = self.groups()
        unknown = [g for g in groups if g.role == "unknown"]
        if unknown:
            self._unknown_directions(unknown)
            groups = [g for g in groups if g.role != "unknown"]
        for group in groups:
            if group.role is None:
                if self.side == "server":
                    group.role = "receiver"
                else:
                    group.role = "sender"
                    self.assumed_sender = True
        if self.assumed_sender and self.side is None:
            self.warnings.append(
                "the CSV does not say whose output it is; its TCP lines were read as the client's (sender's) "
                "view: pass side='server' for a server's CSV"
            )
        stream_groups = [g for g in groups if g.key[0] == "id" and g.own]
        sum_groups = [g for g in groups if g.key[0] == "sum"]
        roles = {g.role for g in stream_groups} or {g.role for g in sum_groups}
        main_role = "sender" if "sender" in roles else "receiver"
        if self.side == "server" and "receiver" in roles:
            main_role = "receiver"
        bidir = len(roles) == 2
        result["bidir"] = bidir
        result["reverse"] = not bidir and (
            (self.side == "client" and main_role == "receiver") or (self.side == "server" and main_role == "sender")
        )
        built = self._direction(
            [g for g in stream_groups if g.role == main_role], [g for g in sum_groups if g.role == main_role], main_role
        )
        result["sent"] = built["sent"]
        result["received"] = built["received"]
        result["per_stream"] = built["per_stream"]
        result["intervals"] = built["intervals"]
        result["udp"] = built["udp"]
        result["streams"] = len(built["per_stream"])
        complete = built["complete"]
        self.warnings.extend(built["notes"])
        if bidir:
            other = "receiver" if main_role == "sender" else "sender"
            rev = self._direction(
                [g for g in stream_groups if g.role == other], [g for g in sum_groups if g.role == other], other
            )
            result["reverse_sent"] = rev["sent"]
            result["reverse_received"] = rev["received"]
            result["reverse_per_stream"] = rev["per_stream"]
            if result["protocol"] == "udp":
                result["reverse_udp"] = rev["udp"]
            complete = complete and rev["complete"]
            self.warnings.extend(f"other direction: {note}" for note in rev["notes"])
        self._stamp_and_endpoints(stream_groups or sum_groups, main_role)
        if not self.rows:
            complete = False
            if self.errors:
                result["error"] = self.errors[0]
                self.warnings.extend(self.errors[1:])
            else:
                self.warnings.append("no CSV report line was found: the output holds no measurement")
        else:
            self.warnings.extend(self.errors)
        result["complete"] = complete and not unknown
        return finalize(result)

    def _unknown_directions(self, groups: list[_Group]) -> None:
        """Say what the CSV holds for directions whose end at this host it does not tell; report none of them."""
        parts = []
        for group in groups:
            fin = final_of(group.rows)
            (src, sport), (dst, dport) = group.rows[0].src, group.rows[0].dst
            figure = f"{fin.nbytes} bytes, {fin.bps} bit/s" if fin else "no total line"
            parts.append(f"{src}:{sport} -> {dst}:{dport} (transfer {group.key[1]}): {figure}")
        self.warnings.append(
            "the CSV holds both directions of a dual/full-duplex test but not which end is this host, so neither "
            f"is reported as sent or received: {'; '.join(parts)}. iperf 2.1.9+ -e CSV (write and read columns) or "
            "the text output (-y omitted) says it"
        )

    def _direction(self, streams: list[_Group], sums: list[_Group], role: str) -> dict[str, Any]:
        sender = role == "sender"
        udp_proto = any(r.udp for r in self.rows)
        notes: list[str] = []
        complete = True
        per_stream: list[StreamTotals] = []
        for group in streams:
            fin = final_of(group.own)
            own = fin.totals(sender=sender) if fin else None
            peer = group.report.totals(sender=False) if group.report else None
            ident = group.key[1] if group.key[1] is not None else f"#{group.order}"
            item: StreamTotals = {
                "id": ident,
                "sent": own if sender else None,
                "received": peer if sender else own,
            }
            if udp_proto:
                source = group.report if sender else fin
                item["udp"] = source.udp_figures.copy() if source and source.udp_figures else _empty_udp()
            per_stream.append(item)
            if fin is None:
                complete = False
                notes.append(f"stream {ident}: no total line (the output was cut short or is partial)")
            elif sender and udp_proto and group.report is None:
                complete = False
                notes.append(f"stream {ident}: no server report line: the receiver's figures are unknown")
        sum_rows = [r for g in sums for r in g.own]
        sum_final = final_of(sum_rows)
        if len(streams) > 1 or (not streams and sum_rows):
            total = sum_final
            if total is None:
                complete = False
                notes.append(
                    "several streams but no total SUM line (transfer id -1): the total is unknown (per_stream only)"
                )
            series = [r for r in sum_rows if r is not sum_final]
            if not series and any(len(g.own) > 1 for g in streams):
                notes.append("per-stream interval lines but no SUM interval lines: intervals left empty")
        else:
            total = final_of(streams[0].own) if streams else None
            series = [r for r in streams[0].own if r is not total] if streams else []
        own_total = total.totals(sender=sender) if total else None
        peer_total: Totals | None = None
        udp: UdpFigures | None = None
        if sender:
            report = streams[0].report if len(streams) == 1 else next((g.report for g in sums if g.report), None)
            if report is not None:
                peer_total = report.totals(sender=False)
                udp = report.udp_figures.copy() if report.udp_figures else None
            elif len(streams) > 1 and udp_proto and any(g.report for g in streams):
                summed = sum_udp_receivers(per_stream)
                peer_total, udp = summed.received, summed.udp
                complete = complete and summed.complete
                notes.extend(summed.notes)
        elif total is not None and total.udp_figures:
            udp = total.udp_figures.copy()
        intervals = [
            {
                "start": r.start,
                "end": r.end,
                "bytes": r.nbytes if r.nbytes is not None else 0,
                "bits_per_second": r.bps if r.bps is not None else 0.0,
                "retransmits": r.retransmits if sender else None,
                "omitted": False,
            }
            for r in series
            if r.nbytes is not None and r.bps is not None
        ]
        return {
            "sent": own_total if sender else peer_total,
            "received": peer_total if sender else own_total,
            "per_stream": per_stream,
            "intervals": intervals,
            "udp": (udp or _empty_udp()) if udp_proto else None,
            "complete": complete,
            "notes": notes,
        }

    def _stamp_and_endpoints(self, groups: list[_Group], main_role: str) -> None:
        rows = [r for g in groups if g.role == main_role for r in g.own] or self.rows
        if not rows:
            return
        first = min(rows, key=lambda r: r.index)
        self.result["csv_endpoints"] = [
            {"host": first.src[0] or None, "port": first.src[1]},
            {"host": first.dst[0] or None, "port": first.dst[1]},
        ]
        stamped = min(self.rows, key=lambda r: r.index)
        match = _TIME_RE.match(stamped.stamp)
        if not match:
            return
        digits = match.group("stamp")
        if digits == "19700101000000":
            self.warnings.append(
                "the CSV time stamps are the epoch (19700101000000), which iperf 2.1.x prints when it has no "
                "report time: ignored"
            )
            return
        wall = f"{digits[0:4]}-{digits[4:6]}-{digits[6:8]}T{digits[8:10]}:{digits[10:12]}:{digits[12:14]}"
        if match.group("frac"):
            wall += f".{match.group('frac')}"
        zone = match.group("tz")
        if zone:
            self.result["timestamp"] = f"{wall}{zone[0]}{zone[1:3]}:{zone[3:5]}"
        else:
            self.result["timestamp_local"] = wall


def _join_swapped_reports(groups: dict[tuple[Any, ...], _Group]) -> None:
    """Put a 2.0.x server report back with its transfer: the sender prints its own 9-field lines and then
    the receiver's 14-field report with the endpoints swapped (2.1+ keeps them in the data's direction)."""
    for key in [k for k in groups if k[0] == "id"]:
        group = groups.get(key)
        mirror = groups.get(("id", key[1], key[3], key[2]))
        if group is None or mirror is None or mirror is group:
            continue
        if all(r.udp for r in group.rows) and not any(r.udp for r in mirror.rows):
            mirror.rows = sorted([*mirror.rows, *group.rows], key=lambda r: r.index)
            del groups[key]


def _partner(group: _Group, streams: list[_Group]) -> _Group | None:
    """The transfer in the opposite direction: the same connection (full duplex; 2.1 prints a client's
    receiving end as ``::,0``) or, between two different addresses, a connection the other way (dual test)."""
    src, dst = group.rows[0].src, group.rows[0].dst
    for other in streams:
        if other is group:
            continue
        osrc, odst = other.rows[0].src, other.rows[0].dst
        if (osrc, odst) == (dst, src) or (src[0] != dst[0] and (osrc[0], odst[0]) == (dst[0], src[0])):
            return other
        if (_unspecified(dst) and odst == src) or (_unspecified(odst) and dst == osrc):
            return other
    return None


def _unspecified(end: tuple[str, int | None]) -> bool:
    return end[0] in _UNSPECIFIED and not end[1]


def _empty_udp() -> UdpFigures:
    return {"jitter_ms": None, "lost_packets": None, "packets": None, "lost_percent": None}


def parse_iperf2_csv(text: str, *, side: Side | None = None) -> IperfResult:
    """Parse iperf2 ``-y C`` output into a normalized result (see the module docstring).

    ``side`` may be given by callers that know whose output this is; the CSV never says.
    """
    parser = _Parser(text, side)
    parser.read()
    return parser.assemble()
