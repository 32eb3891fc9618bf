# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Figures measured outside the inventory are claims: ``implausible()`` says what in a result cannot be true.

An iperf3 client's ``-J`` output holds what the *server* told it at the end of the test (the receiver's bytes and
time, the server's CPU); an iperf3 server's log holds what the *client* told it (the sender's bytes, the client's
CPU). When that other end is outside the inventory (``external``), nothing here measured those figures: a broken or
hostile peer can claim any number. A claim is refused as implausible when

* a figure is not a finite number or is negative (bytes, rates, CPU, UDP loss and jitter);
* the receiver got more bytes than the sender sent: ``received.bytes > sent.bytes + slack`` - the slack is 0 for
  TCP, one datagram per stream for UDP (``MAX_DATAGRAM`` bytes: the largest UDP payload, whatever ``-l`` was), and
  ``OMIT_SLACK`` of the sent bytes more when intervals were omitted (``-O``: each end restarts its count on its own
  clock, so bytes in flight at the restart are counted by the receiver only);
* the receiver's rate (and the headline) is above the line rate x ``LINE_RATE_MARGIN`` where a line rate is known
  (the sender's rate is not checked: a short test fills the socket buffers faster than the line);
* the peer's CPU (``cpu.remote_percent``) is outside 0 .. ``100 % x (streams + 1)``: iperf3 reports the CPU time of
  its process over the wall time in %, each thread using at most one core - one thread before 3.16, one per stream
  plus the main thread since - so more is not a measurement, whatever the peer's core count;
* UDP loss is outside 0-100 %.

The run of such a result is ``complete: false`` with a warning naming the peer (``paired/record.py``), its figure
and raw output are kept, and an incomplete run is never a sample of the history or a baseline
(``report/history.entries_of``).

Plain data in, plain data out; no Ansible import, no clock, no I/O.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["LINE_RATE_MARGIN", "MAX_DATAGRAM", "OMIT_SLACK", "implausible", "line_rate_of"]

LINE_RATE_MARGIN = 1.05  # a receiver above line rate x 1.05 did not measure that link
MAX_DATAGRAM = 65535  # bytes: one UDP datagram per stream may be counted by the receiver and not the sender
OMIT_SLACK = 0.02  # of the sent bytes, when intervals were omitted (-O)


def _number(value: Any) -> tuple[bool, float | None]:
    """``(given, value)``: whether the figure is there, and its value when it is a number (finite or not)."""
    if value is None:
        return False, None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return True, None
    return True, float(value)


def _get(result: Mapping[str, Any], path: str) -> Any:
    value: Any = result
    for key in path.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


# The figures every claim must give as a finite number not below 0 (when given at all).
_FIGURES = (
    "bits_per_second",
    "sent.bytes",
    "sent.bits_per_second",
    "sent.retransmits",
    "received.bytes",
    "received.bits_per_second",
    "udp.jitter_ms",
    "udp.lost_packets",
    "udp.packets",
    "udp.lost_percent",
    "cpu.remote_percent",
)


def line_rate_of(labels: Mapping[str, Any]) -> float | None:
    """The line rate (bit/s) of a pair from its labels (``line_rate_bps``, else ``link_speed_mbps`` x 10^6)."""
    for key, scale in (("line_rate_bps", 1.0), ("link_speed_mbps", 1e6)):
        given, value = _number(labels.get(key))
        if given and value is not None and math.isfinite(value) and value > 0:
            return value * scale
    return None


def _rate(value: float) -> str:
    return f"{value:.4g} bit/s"


def implausible(result: Mapping[str, Any], *, line_rate_bps: float | None) -> list[str]:
    """What in ``result`` (a normalized iperf result) cannot be a measurement, one phrase each; empty: plausible."""
    problems: list[str] = []
    count = result.get("streams")
    streams = count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 1
    values: dict[str, float] = {}
    for path in _FIGURES:
        given, value = _number(_get(result, path))
        if not given:
            continue
        if value is None or not math.isfinite(value):
            problems.append(f"{path} is {_get(result, path)!r}, not a finite number")
        elif value < 0:
            problems.append(f"{path} is {value:g}, below 0")
        else:
            values[path] = value
    sent, received = values.get("sent.bytes"), values.get("received.bytes")
    if sent is not None and received is not None:
        slack: float = MAX_DATAGRAM * streams if result.get("protocol") == "udp" else 0
        if any(isinstance(i, Mapping) and i.get("omitted") for i in result.get("intervals") or []):
            slack += OMIT_SLACK * sent
        if received > sent + slack:
            problems.append(
                f"the receiver's {received:.0f} bytes are more than the sender's {sent:.0f}"
                + (f" (+ {slack:.0f} allowed)" if slack else "")
            )
    if line_rate_bps is not None:
        limit = line_rate_bps * LINE_RATE_MARGIN
        for path in ("received.bits_per_second", "bits_per_second"):
            rate = values.get(path)
            if rate is not None and rate > limit:
                problems.append(
                    f"{path} {_rate(rate)} is above the line rate {_rate(line_rate_bps)} x {LINE_RATE_MARGIN:g}"
                )
                break
    cpu = values.get("cpu.remote_percent")
    if cpu is not None:
        bound = 100.0 * (streams + 1)
        if cpu > bound:
            problems.append(
                f"the peer's CPU {cpu:g} % is above {bound:g} % (100 % per thread: {streams} stream(s) + 1)"
            )
    loss = values.get("udp.lost_percent")
    if loss is not None and loss > 100:
        problems.append(f"udp.lost_percent {loss:g} is above 100")
    return problems
