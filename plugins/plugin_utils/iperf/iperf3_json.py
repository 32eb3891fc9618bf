# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""iperf3 ``-J`` documents and ``--json-stream`` event lines into the normalized result.

Covers iperf3 3.0 to 3.21, client and server side, TCP and UDP, ``-P``, ``-R``, ``-O``,
``--bidir`` and ``--get-server-output``. What the JSON holds, per version, is in
``tests/fixtures/iperf/README.md`` section 4; the points this module relies on:

* Directions. ``end.sum_sent`` / ``end.sum_received`` are the sender's and the receiver's
  totals of the test (with ``-R`` the server sends, so ``sum_sent`` holds the server's
  figures). For ``--bidir``, iperf3 prints the client-to-server direction first and the
  server-to-client direction second, on both sides. 3.11+ names the second set
  ``sum_bidir_reverse`` (intervals, UDP ``end``), ``sum_sent_bidir_reverse`` and
  ``sum_received_bidir_reverse``; 3.7-3.10 repeat the keys ``sum`` / ``sum_sent`` /
  ``sum_received`` in the same object. The decoder keeps such a repeated key under the
  3.11 name, so both layouts read the same. The ``sender`` flag (3.7+) of interval sums, of
  ``sum_sent`` and of UDP ``sum`` is the *local* role of that direction, which confirms the
  order (it is checked, and the pair swapped if a document ever disagrees).
  ``sent``/``received`` are then client-to-server; ``reverse_sent``/``reverse_received``
  (and ``reverse_udp``, ``reverse_intervals``, ``reverse_per_stream``) server-to-client.
* UDP. Before 3.11 the only total is ``end.sum``: the sender's bytes and rate with the
  receiver's jitter and loss; the receiver's byte count is not printed, so ``received`` is
  null. 3.11+ adds ``sum_sent`` / ``sum_received``.
* Server-side documents print the client's figures as zeros (the server reports before it
  learns them): such all-zero peer totals, and an all-zero remote CPU, become null.
* Retransmits are the sender's. They are null when not printed (macOS, Windows, receiver
  side) and when they cannot be trusted: ESXi's bundled iperf3 cannot read ``TCP_INFO``
  and prints garbage (e.g. 8634728, then 0, with ``snd_cwnd`` 0). Rule: a direction whose
  sender is a host whose ``system_info``/``version`` says ``VMkernel``, or whose local
  interval streams all show ``snd_cwnd`` 0 while some retransmit count is non-zero, gets
  null retransmits and a warning saying why. The same holds for the RTT figures
  (``per_stream[].rtt``, ``rtt``; ``iperf/rtt.py``), which come from the same ``TCP_INFO``.
* Undecodable or truncated text never raises: it gives an error result with ``raw`` kept
  and whatever complete top-level members (``start``, ``intervals``) precede the cut.

The iperf3 JSON layouts of 3.0 - 3.21 (and ``--json-stream``) read into the result; decoding the
text (duplicate keys, cut documents) is ``json_decode.py``.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.json_decode import (
    DUP_BIDIR_KEYS,
    REVERSE_SUFFIX,
    decode,
    duplicate_sums_possible,
    salvage_members,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import (
    Endpoint,
    Interval,
    RttFigures,
    StreamTotals,
    UdpFigures,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.result import (
    IperfParseError,
    IperfResult,
    Totals,
    finalize,
    make_totals,
    new_result,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.rtt import drop_rtt, stream_rtt, summarize_rtt

__all__ = ["IPERF3_MEMBERS", "document_problem", "parse_iperf3_json", "parse_iperf3_json_stream"]

_EMPTY: Mapping[str, Any] = {}
_ERROR_PREFIX = re.compile(r"^\s*(?:iperf3:\s*)?error\s*-\s*", re.IGNORECASE)
_TOOL_VERSION = re.compile(r"(\d+(?:\.\d+)+\S*)")
_ESXI_MARK = "vmkernel"
# Top-level members of an iperf3 -J document; a document holds at least one of them (a run
# that failed before starting holds only "error").
IPERF3_MEMBERS = ("start", "intervals", "end", "error", "server_output_json", "server_output_text")


# --------------------------------------------------------------------------- small readers


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else _EMPTY


def _seq(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _num(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _count(value: Any) -> int | None:
    """A non-negative integer figure (3.0.x prints ``%g`` floats such as ``1.2e+07``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value >= 0 else None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and value >= 0:
        return int(value)
    return None


def _rate(value: Any) -> float | int | None:
    number = _num(value)
    return number if number is not None and number >= 0 else None


def _flag(obj: Mapping[str, Any]) -> bool | None:
    value = obj.get("sender")
    return value if isinstance(value, bool) else None


def _totals(obj: Any, *, with_retransmits: bool = False, seconds: Any = None) -> Totals | None:
    """``make_totals`` from an iperf3 sum or stream object; None when it holds no figure."""
    if not isinstance(obj, Mapping):
        return None
    nbytes = _count(obj.get("bytes"))
    bps = _rate(obj.get("bits_per_second"))
    if nbytes is None and bps is None:
        return None
    secs = _num(obj.get("seconds")) if seconds is None else _num(seconds)
    retransmits = _count(obj.get("retransmits")) if with_retransmits else None
    return make_totals(nbytes, bps, secs, retransmits)


def _udp(obj: Any) -> UdpFigures | None:
    if not isinstance(obj, Mapping) or not any(
        k in obj for k in ("jitter_ms", "lost_packets", "packets", "lost_percent")
    ):
        return None
    return {
        "jitter_ms": _rate(obj.get("jitter_ms")),
        "lost_packets": _count(obj.get("lost_packets")),
        "packets": _count(obj.get("packets")),
        "lost_percent": _rate(obj.get("lost_percent")),
    }


def _is_zero_placeholder(obj: Any) -> bool:
    """Bytes and rate both zero: how a server-side document prints the client's side."""
    if not isinstance(obj, Mapping):
        return False
    return obj.get("bytes") == 0 and obj.get("bits_per_second") == 0


def _tool_version(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    match = _TOOL_VERSION.search(value)
    return match.group(1) if match else (value.strip() or None)


def _timestamp(start: Mapping[str, Any]) -> str | None:
    secs = _num(_map(start.get("timestamp")).get("timesecs"))
    if secs is None:
        return None
    try:
        return datetime.fromtimestamp(int(secs), tz=UTC).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


def _endpoint(host: Any, port: Any) -> Endpoint | None:
    if host is None and port is None:
        return None
    return {
        "host": host if isinstance(host, str) else None,
        "port": port if isinstance(port, int) and not isinstance(port, bool) else None,
    }


def _error_text(value: Any) -> str | None:
    if value is None or value == "":
        return None
    text = value if isinstance(value, str) else json.dumps(value)
    return _ERROR_PREFIX.sub("", text.strip()) or text.strip()


def _esxi(start: Mapping[str, Any]) -> bool:
    for key in ("system_info", "version"):
        value = start.get(key)
        if isinstance(value, str) and _ESXI_MARK in value.lower():
            return True
    return False


# --------------------------------------------------------------------------- the parser


class _Doc:
    """One decoded document being turned into a result (keeps the helpers short)."""

    def __init__(self, doc: Mapping[str, Any]) -> None:
        self.doc = doc
        self.result = new_result("iperf3", "json")
        self.warnings: list[str] = self.result["warnings"]
        self.start = _map(doc.get("start"))
        self.end = _map(doc.get("end"))
        self.intervals = _seq(doc.get("intervals"))
        self.test_start = _map(self.start.get("test_start"))
        # True when a 3.7-3.10 --bidir document lost its client-to-server copies (see fix_bidir_order).
        self.lost_forward = False

    def warn(self, note: str) -> None:
        if note not in self.warnings:
            self.warnings.append(note)

    # ----- header

    def header(self) -> None:
        result, start, test_start = self.result, self.start, self.test_start
        result["tool_version"] = _tool_version(start.get("version"))
        if isinstance(start.get("connecting_to"), Mapping):
            result["side"] = "client"
        elif isinstance(start.get("accepted_connection"), Mapping):
            result["side"] = "server"
        result["timestamp"] = _timestamp(start)
        connected = _seq(start.get("connected"))
        if connected and isinstance(connected[0], Mapping):
            first = connected[0]
            result["local"] = _endpoint(first.get("local_host"), first.get("local_port"))
            result["remote"] = _endpoint(first.get("remote_host"), first.get("remote_port"))
        protocol = test_start.get("protocol")
        if isinstance(protocol, str):
            if protocol.upper() == "UDP":
                result["protocol"] = "udp"
            elif protocol.upper() == "SCTP":
                self.warn("iperf3 --sctp run: the schema knows only tcp/udp; protocol says tcp, the figures are SCTP's")
        elif "sum" in self.end and "sum_sent" not in self.end:
            result["protocol"] = "udp"  # pre-3.11 UDP end has only "sum"
        elif any("udp" in _map(s) for s in _seq(self.end.get("streams"))):
            result["protocol"] = "udp"
        elif self.intervals and any(k in _map(_map(self.intervals[0]).get("sum")) for k in ("packets", "jitter_ms")):
            result["protocol"] = "udp"  # bare --json-stream interval lines: UDP sums count datagrams
        result["reverse"] = test_start.get("reverse") in (1, True)
        result["bidir"] = (
            test_start.get("bidir") in (1, True)
            or "sum_sent" + REVERSE_SUFFIX in self.end
            or "sum" + REVERSE_SUFFIX in self.end
            or any("sum" + REVERSE_SUFFIX in _map(iv) for iv in self.intervals[:1])
            or self._mixed_roles()
        )
        cpu = _map(self.end.get("cpu_utilization_percent"))
        if cpu:
            remote = _rate(cpu.get("remote_total"))
            if (
                result["side"] == "server"
                and remote == 0
                and not cpu.get("remote_user")
                and not cpu.get("remote_system")
            ):
                remote = None  # the server prints before it learns the client's CPU
            result["cpu"] = {"local_percent": _rate(cpu.get("host_total")), "remote_percent": remote}

    def _mixed_roles(self) -> bool:
        """Streams of both local roles in one run: --bidir (3.7-3.10 has no bidir flag)."""
        roles: set[bool | None] = set()
        for entry in _seq(self.end.get("streams")):
            entry = _map(entry)
            roles.add(_flag(_map(entry.get("sender") or entry.get("udp"))))
        if not roles and self.intervals:
            roles = {_flag(_map(s)) for s in _seq(_map(self.intervals[-1]).get("streams"))}
        return True in roles and False in roles

    # ----- directions

    @property
    def is_client(self) -> bool:
        # An unknown side is read as a client: the only documents without
        # connecting_to/accepted_connection are failed client runs and bare stream lines.
        return bool(self.result["side"] != "server")

    def local_sends(self, forward: bool) -> bool:
        """Is the local host the sender of the client-to-server (``forward``) direction or of the other one?"""
        if self.result["bidir"]:
            return self.is_client if forward else not self.is_client
        return self.is_client != bool(self.result["reverse"])

    def _pair_order_ok(self, first: Any, second: Any) -> bool:
        """False when the sender flags say the two sums are in server-to-client-first order."""
        if self.result["side"] is None:
            return True
        one, two = _flag(_map(first)), _flag(_map(second))
        return not (one is (not self.is_client) and two is self.is_client)

    def fix_bidir_order(self) -> None:
        """Make ``end`` hold client-to-server under the plain names (see the module doc)."""
        if not self.result["bidir"]:
            return
        end = dict(self.end)
        probe = "sum" if self.result["protocol"] == "udp" else "sum_sent"
        rev = probe + REVERSE_SUFFIX
        if probe in end and rev in end:
            if not self._pair_order_ok(end[probe], end[rev]):
                for key in DUP_BIDIR_KEYS:
                    if key in end or key + REVERSE_SUFFIX in end:
                        end[key], end[key + REVERSE_SUFFIX] = end.get(key), end.get(key + REVERSE_SUFFIX)
                self.warn("bidir sums were in server-to-client-first order (by their sender flags); reordered")
        elif probe in end and rev not in end and _flag(_map(end[probe])) is (not self.is_client):
            # Decoded elsewhere without keeping 3.7-3.10 duplicate keys: the plain names
            # hold the *last* (server-to-client) copy; the client-to-server one is lost.
            for key in DUP_BIDIR_KEYS:
                if key in end:
                    end[key + REVERSE_SUFFIX] = end.pop(key)
            self.warn(
                "iperf3 3.7-3.10 --bidir document decoded without its duplicate keys: the client-to-server "
                "totals and intervals are lost; pass the raw JSON text to keep both directions"
            )
            self.lost_forward = True
        self.end = end

    # ----- totals

    def direction_totals(self, forward: bool) -> tuple[Totals | None, Totals | None, UdpFigures | None]:
        """``(sent, received, udp)`` of the client-to-server (``forward``) or the other direction."""
        end = self.end
        suffix = "" if forward else REVERSE_SUFFIX
        sum_sent = end.get("sum_sent" + suffix)
        sum_received = end.get("sum_received" + suffix)
        old_udp = False
        if self.result["protocol"] != "udp":
            sent = _totals(sum_sent, with_retransmits=True)
            received = _totals(sum_received)
            udp_stats = None
        elif isinstance(sum_sent, Mapping) or isinstance(sum_received, Mapping):  # UDP, 3.11+
            sent = _totals(sum_sent)
            received = _totals(sum_received)
            udp_stats = _udp(sum_received) if isinstance(sum_received, Mapping) else _udp(end.get("sum" + suffix))
        else:  # UDP before 3.11: "sum" = the sender's bytes and rate + the receiver's jitter and loss
            old_udp = True
            sum_sent = end.get("sum" + suffix)
            seconds = self._udp_sender_seconds(forward)
            sent = _totals(sum_sent, seconds=seconds) if seconds is not None else _totals(sum_sent)
            received = None
            udp_stats = _udp(sum_sent)
            if sent is not None:
                self.warn(
                    "iperf3 before 3.11 prints no receiver byte total for UDP: received is null; "
                    "udp holds the receiver's jitter and loss"
                )
        if self.result["side"] == "server":
            name = "" if forward else "reverse_"
            if self.local_sends(forward):
                # The client is the receiver: its figures (and, for UDP, jitter/loss) are not known yet.
                placeholder = (
                    _is_zero_placeholder(sum_received)
                    if not old_udp
                    else udp_stats is not None and not udp_stats["jitter_ms"] and not udp_stats["lost_packets"]
                )
                if placeholder and (received is not None or udp_stats is not None):
                    received = None
                    udp_stats = None
                    what = f"{name}received is" if self.result["protocol"] == "tcp" else f"{name}received and udp are"
                    self.warn(
                        "server-side JSON prints the client's receiver figures as zeros (the server reports "
                        f"before it learns them): {what} null"
                    )
            elif sent is not None and _is_zero_placeholder(sum_sent):
                sent = None
                self.warn(
                    "server-side JSON prints the client's sender totals as zeros (the server reports before "
                    f"it learns them): {name}sent is null"
                )
        return sent, received, udp_stats

    def _udp_sender_seconds(self, forward: bool) -> Any:
        for entry in _seq(self.end.get("streams")):
            obj = _map(_map(entry).get("udp"))
            if obj and self._entry_forward(obj) is forward:
                return obj.get("seconds")
        return None

    def _entry_forward(self, obj: Mapping[str, Any]) -> bool:
        if not self.result["bidir"]:
            return True
        flag = _flag(obj)
        return flag is None or flag is self.is_client

    def per_stream(self) -> tuple[list[StreamTotals], list[StreamTotals]]:
        forward: list[StreamTotals] = []
        reverse: list[StreamTotals] = []
        server = self.result["side"] == "server"
        for entry in _seq(self.end.get("streams")):
            entry = _map(entry)
            udp_obj = entry.get("udp")
            if isinstance(udp_obj, Mapping):
                sid = udp_obj.get("socket")
                is_forward = self._entry_forward(udp_obj)
                sent = _totals(udp_obj)
                if server and not self.local_sends(is_forward) and _is_zero_placeholder(udp_obj):
                    sent = None
                item: StreamTotals = {
                    "id": _stream_id(sid, len(forward) + len(reverse) + 1),
                    "sent": sent,
                    "received": None,
                    "udp": _udp(udp_obj),
                    "rtt": None,  # UDP: no TCP_INFO
                }
            else:
                snd, rcv = _map(entry.get("sender")), _map(entry.get("receiver"))
                first = snd or rcv
                if not first:
                    continue
                sid = first.get("socket")
                is_forward = self._entry_forward(first)
                # A receiver object's "seconds" is the local stream's elapsed time; its
                # bits_per_second is computed over start..end (iperf_api.c), so use that.
                rcv_secs = None
                if _num(rcv.get("end")) is not None and _num(rcv.get("start")) is not None:
                    rcv_secs = rcv["end"] - rcv["start"]
                sent = _totals(snd, with_retransmits=True) if snd else None
                received = _totals(rcv, seconds=rcv_secs) if rcv else None
                if server:
                    if self.local_sends(is_forward):
                        if _is_zero_placeholder(rcv):
                            received = None
                    elif _is_zero_placeholder(snd):
                        sent = None
                item = {
                    "id": _stream_id(sid, len(forward) + len(reverse) + 1),
                    "sent": sent,
                    "received": received,
                    "rtt": self._stream_rtt(snd, sid, is_forward),
                }
            (forward if is_forward else reverse).append(item)
        return forward, reverse

    def _stream_rtt(self, snd: Mapping[str, Any], sid: Any, is_forward: bool) -> RttFigures | None:
        """RTT figures of a stream when this host sent it (see ``iperf/rtt.py``), else None."""
        flag = _flag(snd)
        if not snd or not (flag if flag is not None else self.local_sends(is_forward)):
            return None
        for interval in reversed(self.intervals):
            for entry in _seq(_map(interval).get("streams")):
                entry = _map(entry)
                if entry.get("socket") == sid and _flag(entry) is not False:
                    return stream_rtt(snd, entry)
        return stream_rtt(snd, None)

    # ----- intervals

    def interval_series(self) -> tuple[list[Interval], list[Interval]]:
        bidir = self.result["bidir"]
        forward: list[Interval] = []
        reverse: list[Interval] = []
        skipped = 0
        rev_key = "sum" + REVERSE_SUFFIX
        check_order = bidir and self.result["side"] is not None
        for interval in self.intervals:
            if not isinstance(interval, Mapping):
                skipped += 1
                continue
            fwd = interval.get("sum")
            if fwd is None:
                streams = _seq(interval.get("streams"))
                if len(streams) == 1:
                    fwd = streams[0]
            rev = interval.get(rev_key) if bidir else None
            if check_order and rev is not None and not self._pair_order_ok(fwd, rev):
                fwd, rev = rev, fwd
            if self.lost_forward:
                fwd, rev = None, fwd
            if fwd is not None:
                item = _interval(fwd)
                if item is None:
                    skipped += 1
                else:
                    forward.append(item)
            if rev is not None:
                item = _interval(rev)
                if item is None:
                    skipped += 1
                else:
                    reverse.append(item)
        if skipped:
            self.warn(f"{skipped} interval entr{'y' if skipped == 1 else 'ies'} without usable figures skipped")
        return forward, reverse

    # ----- retransmit trust

    def untrusted_retransmits(self, forward: bool) -> str | None:
        """Why the retransmits of a direction cannot be trusted, or None."""
        if self.local_sends(forward):
            if _esxi(self.start):
                return (
                    "retransmits set to null: start.system_info says VMkernel (ESXi); ESXi's bundled iperf3 "
                    "cannot read TCP_INFO, so its retransmit counts are garbage"
                )
            if self._cwnd_all_zero_with_retransmits(forward):
                return (
                    "retransmits set to null: snd_cwnd is 0 in every interval while retransmits are non-zero; "
                    "iperf3 could not read TCP_INFO (as with ESXi's bundled iperf3), so the counts are garbage"
                )
            return None
        server_out = _map(self.doc.get("server_output_json"))
        if self.is_client and _esxi(_map(server_out.get("start"))):
            return (
                "retransmits of the server's sending set to null: the server's system_info says VMkernel "
                "(ESXi), whose bundled iperf3 cannot read TCP_INFO, so its retransmit counts are garbage"
            )
        return None

    def _cwnd_all_zero_with_retransmits(self, forward: bool) -> bool:
        seen = False
        nonzero_retransmits = False
        bidir = self.result["bidir"]
        for interval in self.intervals:
            for stream in _seq(_map(interval).get("streams")):
                if not isinstance(stream, Mapping):
                    continue
                cwnd = stream.get("snd_cwnd")
                if cwnd is None or (bidir and self._entry_forward(stream) is not forward):
                    continue
                if cwnd != 0:
                    return False
                seen = True
                if stream.get("retransmits"):
                    nonzero_retransmits = True
        if seen:
            return nonzero_retransmits
        # No interval carried snd_cwnd (e.g. -i 0): the end summary's local sender streams.
        for entry in _seq(self.end.get("streams")):
            snd = _map(_map(entry).get("sender"))
            cwnd = snd.get("max_snd_cwnd")
            if cwnd is None or self._entry_forward(snd) is not forward:
                continue
            flag = _flag(snd)
            if flag is not None and flag is not True:
                continue  # 3.7+: not a local sending stream; the peer's cwnd is unknown here
            if cwnd != 0:
                return False
            seen = True
            if snd.get("retransmits"):
                nonzero_retransmits = True
        return seen and nonzero_retransmits


def _stream_id(value: Any, fallback: int) -> int | str:
    """The stream's socket number as iperf3 printed it, else its position (1-based)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        return fallback
    return value


def _interval(obj: Any) -> Interval | None:
    if not isinstance(obj, Mapping):
        return None
    start, end = obj.get("start"), obj.get("end")
    nbytes, bps = obj.get("bytes"), obj.get("bits_per_second")
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
        nbytes = _count(nbytes)
    if not isinstance(bps, float) or not bps >= 0 or bps == math.inf:
        bps = _rate(bps)
    if isinstance(start, bool) or not isinstance(start, float | int):
        start = _num(start)
    if isinstance(end, bool) or not isinstance(end, float | int):
        end = _num(end)
    if nbytes is None or bps is None or start is None or end is None:
        return None
    retransmits = obj.get("retransmits")
    if retransmits is not None and (
        isinstance(retransmits, bool) or not isinstance(retransmits, int) or retransmits < 0
    ):
        retransmits = _count(retransmits)
    return {
        "start": start,
        "end": end,
        "bytes": nbytes,
        "bits_per_second": bps,
        "retransmits": retransmits,
        "omitted": obj.get("omitted") is True,
    }


def _drop_retransmits(items: Iterable[Mapping[str, Any] | None], key: str | None = None) -> None:
    for item in items:
        target = item if key is None else (item or {}).get(key)
        if isinstance(target, dict) and "retransmits" in target:
            target["retransmits"] = None


def _parse_document(doc: Mapping[str, Any], raw: str | None) -> IperfResult:
    p = _Doc(doc)
    result = p.result
    p.header()
    p.fix_bidir_order()

    sent, received, udp_stats = p.direction_totals(True)
    result["sent"], result["received"], result["udp"] = sent, received, udp_stats
    per_fwd, per_rev = p.per_stream()
    result["per_stream"] = per_fwd
    intervals_fwd, intervals_rev = p.interval_series()
    result["intervals"] = intervals_fwd
    streams = len(per_fwd)
    if not streams and p.intervals:
        last = _seq(_map(p.intervals[-1]).get("streams"))
        streams = sum(1 for s in last if isinstance(s, Mapping) and p._entry_forward(s))
    result["streams"] = streams

    if result["bidir"]:
        rsent, rreceived, rudp = p.direction_totals(False)
        result["reverse_sent"], result["reverse_received"] = rsent, rreceived
        result["reverse_intervals"] = intervals_rev
        result["reverse_per_stream"] = per_rev
        if result["protocol"] == "udp":
            result["reverse_udp"] = rudp

    result["rtt"] = summarize_rtt([*per_fwd, *per_rev])
    directions = [(True, result["sent"], result["per_stream"], result["intervals"])]
    if result["bidir"]:
        directions.append((False, result["reverse_sent"], per_rev, intervals_rev))
    if result["protocol"] == "tcp":
        for forward, totals, per, series in directions:
            why = p.untrusted_retransmits(forward)
            if why is None:
                continue
            had_any = (totals.get("retransmits") if totals else None) is not None or any(
                i.get("retransmits") is not None for i in series
            )
            _drop_retransmits([totals])
            _drop_retransmits(per, "sent")
            _drop_retransmits(series)
            if had_any:
                p.warn(why)
            if drop_rtt(result, ["per_stream" if forward else "reverse_per_stream"]):
                p.warn("rtt set to null for the same reason: its figures come from the same TCP_INFO")

    error = _error_text(doc.get("error"))
    if error:
        result["error"] = error
    result["complete"] = _completeness(p)
    _note_byte_limited_receiver(p)

    server_output = doc.get("server_output_json")
    if isinstance(server_output, Mapping):
        result["server_output"] = _parse_document(server_output, None)
    elif isinstance(server_output, str) and server_output.strip():
        result["server_output"] = parse_iperf3_json(None, server_output)
    text_output = doc.get("server_output_text")
    if isinstance(text_output, str) and text_output:
        # The server's own human-readable report (--get-server-output, server without -J).
        result["server_output_text"] = text_output

    if result["error"]:
        result["raw"] = raw if raw is not None else json.dumps(doc, default=str)
    return finalize(result)


def _note_byte_limited_receiver(p: _Doc) -> None:
    """Say what a ``-n``/``-k`` run's rates mean when the receiver did not count every byte.

    iperf3's sender time ends when the last write returns, and the receiver stops counting
    at TEST_END. A transfer that fits in the socket buffers is "sent" in a fraction of a
    millisecond (CloudPilot ``-n 10k``: 39424 bytes in 0.000904 s = 349 Mbit/s, receiver 0
    bytes); on loopback ``-n 10M`` the receiver often counts only part of the bytes.
    """
    sent, received = p.result["sent"], p.result["received"]
    limit = p.test_start.get("bytes") or p.test_start.get("blocks")
    if not limit or not sent or not received:
        return
    sent_bytes, received_bytes = sent["bytes"], received["bytes"]
    if not sent_bytes or received_bytes is None:
        return
    unit = "bytes" if p.test_start.get("bytes") else "blocks"
    if received_bytes == 0:
        p.warn(
            f"byte-limited run (-n/-k {limit} {unit}): the receiver counted 0 bytes; the sender's rate "
            f"({sent_bytes} bytes in {sent.get('seconds')} s) only times the writes into the socket, "
            "not the network"
        )
    elif p.result["protocol"] == "tcp" and received_bytes < sent_bytes:
        p.warn(
            f"byte-limited run (-n/-k {limit} {unit}): the receiver counted {received_bytes} of the "
            f"{sent_bytes} bytes sent before the test ended, so the received rate covers only part "
            "of the transfer"
        )


def _completeness(p: _Doc) -> bool:
    """Whether every total the run should have is there; each gap gets a warning."""
    result = p.result
    if not p.end:
        p.warn("the document has no end summary: the run did not finish")
        return False
    complete = True
    directions = [True]
    if result["bidir"]:
        directions.append(False)
    for forward in directions:
        label = "" if forward else " of the server-to-client direction"
        if p.lost_forward and forward:
            complete = False
            continue
        if forward:
            sent, received = result["sent"], result["received"]
        else:
            sent, received = result.get("reverse_sent"), result.get("reverse_received")
        server_peer_sends = result["side"] == "server" and not p.local_sends(forward)
        if sent is None:
            if not server_peer_sends:  # else the placeholder warning already says why
                p.warn(f"the end summary has no sender totals{label}")
            complete = False
        if received is None:
            old_udp = result["protocol"] == "udp" and "sum_received" not in p.end and sent is not None
            if not old_udp:
                if result["side"] != "server" or server_peer_sends:
                    p.warn(f"the end summary has no receiver totals{label}")
                complete = False
        elif (
            not forward
            and sent
            and not received.get("bytes")
            and not received.get("bits_per_second")
            and (sent.get("bytes") or sent.get("bits_per_second"))
        ):
            p.warn("reverse_received totals are zero while the server sent data: the run was cut short")
            complete = False
    return complete


# --------------------------------------------------------------------------- public API


def document_problem(doc: Any) -> str | None:
    """Why ``doc`` is not an iperf3 ``-J`` document, or ``None`` when it is one.

    A document is a JSON object holding at least one of ``IPERF3_MEMBERS``. The reason names
    what was expected, never the content (a foreign file may hold anything).
    """
    if not isinstance(doc, Mapping):
        return f"the JSON value is a {type(doc).__name__}, not an iperf3 -J document (a JSON object)"
    if any(key in doc for key in IPERF3_MEMBERS):
        return None
    return (
        f"the JSON object has {len(doc)} top-level member(s), none of the iperf3 -J members "
        f"({', '.join(IPERF3_MEMBERS[:4])}): it is not an iperf3 -J document; pass the output of iperf3 -J "
        "(or --json-stream) itself"
    )


def parse_iperf3_json(doc: Mapping[str, Any] | None, raw: str | None, *, strict: bool = False) -> IperfResult:
    """Parse an iperf3 ``-J`` document: ``doc`` already decoded, or ``None`` to decode ``raw``.

    Never raises for bad input: undecodable or truncated text gives a result with ``error``
    set, ``raw`` kept and whatever complete members came before the cut; JSON that is not an
    iperf3 document (``document_problem``) gives a result with that reason as ``error``, or,
    with ``strict``, raises ``IperfParseError`` with it.
    """
    if doc is None:
        text = raw if raw is not None else ""
        try:
            decoded = decode(text)
        except (ValueError, RecursionError) as exc:
            return _broken_document(text, exc)
        problem = document_problem(decoded)
        if problem is not None:
            if strict:
                raise IperfParseError(problem)
            return _not_a_document(text, problem)
        return _parse_document(decoded, text)
    problem = document_problem(doc)
    if problem is not None:
        if strict:
            raise IperfParseError(problem)
        return _not_a_document(raw if raw is not None else json.dumps(doc, default=str), problem)
    if raw is not None and _lost_duplicates(doc) and duplicate_sums_possible(raw):
        try:
            decoded = decode(raw)
        except (ValueError, RecursionError):
            decoded = None
        if isinstance(decoded, Mapping):
            doc = decoded
    return _parse_document(doc, raw)


def _lost_duplicates(doc: Mapping[str, Any]) -> bool:
    """A 3.7-3.10 --bidir document decoded elsewhere, so its duplicate keys are gone."""
    end = _map(doc.get("end"))
    if any(isinstance(k, str) and k.endswith(REVERSE_SUFFIX) for k in end):
        return False
    return _Doc(doc)._mixed_roles()


def _not_a_document(raw: str, message: str) -> IperfResult:
    result = new_result("iperf3", "json")
    result["error"] = message
    result["raw"] = raw
    return finalize(result)


def _broken_document(text: str, exc: Exception) -> IperfResult:
    """A result from text that does not decode: the members before the cut, and an error."""
    members = salvage_members(text) if isinstance(exc, ValueError) else {}
    tool_error = _error_text(members.pop("error", None))
    where = f" at line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
    detail = exc.msg if isinstance(exc, json.JSONDecodeError) else exc.__class__.__name__
    message = f"the iperf3 JSON document is truncated or invalid{where} ({detail})"
    if detail == "Extra data":
        message += (
            ": more than one document follows (a -J server prints one per test); iperf.parse splits them "
            "(iperf_parse with all=true gives each test)"
        )
    # An "end" or server output that did decode belongs to a document we cannot trust whole.
    members.pop("end", None)
    members.pop("server_output_json", None)
    if members:
        result = _parse_document(members, text)
        kept = ", ".join(k for k in ("start", "intervals") if k in members)
        if kept:
            result["warnings"].append(f"kept only the complete members before the cut: {kept}")
    else:
        result = new_result("iperf3", "json")
    if tool_error:
        result["warnings"].append(message)
    result["error"] = tool_error or message
    result["raw"] = text
    result["complete"] = False
    return finalize(result)


def parse_iperf3_json_stream(text: str) -> IperfResult:
    """Parse iperf3 3.17+ ``--json-stream`` output: one ``{"event": ..., "data": ...}`` per line.

    Events ``start``, ``interval``, ``end``, ``error``, ``server_output_json`` and
    ``server_output_text`` are reassembled into one ``-J``-shaped document. A missing ``end``
    (the run was cut short) or undecodable lines make the result incomplete, with a warning.
    """
    doc: dict[str, Any] = {}
    intervals: list[Any] = []
    bad = 0
    unknown: set[str] = set()
    events = 0
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            # Only an embedded 3.7-3.10 server document can repeat keys.
            event = decode(line) if '"server_output_json"' in line[:40] else json.loads(line)
        except (ValueError, RecursionError):
            bad += 1
            continue
        name = event.get("event") if isinstance(event, Mapping) else None
        if not isinstance(name, str):
            bad += 1
            continue
        data = event.get("data")
        if name == "interval":
            intervals.append(data)
        elif name in ("start", "end", "error", "server_output_json", "server_output_text"):
            doc[name] = data
        else:
            unknown.add(name)
            continue
        events += 1
    if not events:
        result = new_result("iperf3", "json")
        result["error"] = "no iperf3 --json-stream event could be decoded"
        result["raw"] = text
        return finalize(result)
    doc["intervals"] = intervals
    result = _parse_document(doc, text)
    notes: list[str] = []
    if unknown:
        notes.append(f"ignored unknown --json-stream event(s): {', '.join(sorted(unknown))}")
    if bad:
        notes.append(f"{bad} line(s) are not --json-stream events (cut or corrupt output); skipped")
        result["complete"] = False
        result.setdefault("raw", text)
    if "end" not in doc:
        result["complete"] = False  # _completeness already said why
    for note in notes:
        if note not in result["warnings"]:
            result["warnings"].append(note)
    return result
