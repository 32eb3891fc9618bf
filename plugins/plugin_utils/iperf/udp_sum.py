# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The receiver's totals of a multi-stream iperf2 UDP test, summed from the per-stream receiver figures.

iperf2 prints one ``Server Report`` per UDP stream to the client (text and ``-y C``) and no
summed one, so what was delivered is the sum of those reports. ``sum_udp_receivers()`` adds
them up; ``iperf2_text.py`` and ``iperf2_csv.py`` use it for a sending host's ``received`` and
``udp``, and ``iperf2_text.py`` for a receiving host (a server) whose ``[SUM]`` total lacks the
loss columns (2.1) or is missing. The rules (also in ``docs/schema/README.md``):

* ``received.bytes`` and ``received.bits_per_second`` are the sums of the reports' figures
  (the streams run at the same time, so their rates add up, as iperf's own ``[SUM]`` does);
  ``received.seconds`` is the longest report's (the streams' receiver intervals differ slightly,
  e.g. 0.0-10.0 and 0.0-10.3 s). The text figures are rounded as printed (3 significant digits),
  so the sum carries the rounding of every report.
* ``udp.lost_packets`` and ``udp.packets`` are sums; ``udp.lost_percent`` is recomputed from
  those sums (100 x lost / packets), not averaged; ``udp.jitter_ms`` is the **largest** stream
  jitter (jitters of separate streams do not add; the worst one is what a user of the link sees).
  Each is ``None`` unless every summed report printed it.
* ``complete`` is true only when every stream has its report. With some reports missing the
  sums cover the streams that have one: a lower bound of what was delivered, said in a note
  (and the result's ``complete`` is false). With none, nothing is summed.

Pure Python (stdlib only). Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import StreamTotals, Totals, UdpFigures

__all__ = ["UdpSum", "sum_udp_receivers"]


@dataclass
class UdpSum:
    """The summed receiver figures (``None`` when no stream has a report) and what to say about them."""

    received: Totals | None
    udp: UdpFigures | None
    complete: bool
    notes: list[str] = field(default_factory=list)


def _total_or_none(values: Sequence[int | float | None]) -> float | None:
    if not values or any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None)


def sum_udp_receivers(per_stream: Sequence[StreamTotals]) -> UdpSum:
    """Sum the receiver figures (``received`` + ``udp``) of the UDP streams of one direction."""
    reported = [item for item in per_stream if item.get("received") is not None]
    if not reported:
        return UdpSum(None, None, False)
    received = [item["received"] for item in reported if item["received"] is not None]
    nbytes = _total_or_none([t.get("bytes") for t in received])
    rate = _total_or_none([t.get("bits_per_second") for t in received])
    seconds = [t.get("seconds") for t in received]
    known_seconds = [s for s in seconds if s is not None]
    totals: Totals = {
        "bytes": int(nbytes) if nbytes is not None else None,
        "bits_per_second": rate,
        "seconds": max(known_seconds) if known_seconds else None,
        "retransmits": None,
    }
    figures = [item.get("udp") or {} for item in reported]
    lost = _total_or_none([f.get("lost_packets") for f in figures])
    packets = _total_or_none([f.get("packets") for f in figures])
    jitters = [f.get("jitter_ms") for f in figures]
    udp: UdpFigures = {
        "jitter_ms": None if any(j is None for j in jitters) else max(j for j in jitters if j is not None),
        "lost_packets": int(lost) if lost is not None else None,
        "packets": int(packets) if packets is not None else None,
        "lost_percent": 100.0 * lost / packets if lost is not None and packets else None,
    }
    notes: list[str] = []
    complete = len(reported) == len(per_stream)
    if not complete:
        missing = [str(item["id"]) for item in per_stream if item.get("received") is None]
        notes.append(
            f"only {len(reported)} of {len(per_stream)} streams have a receiver total (Server Report; missing: "
            f"{', '.join(missing)}): received and udp sum those, a lower bound of what was delivered"
        )
    return UdpSum(totals, udp, complete, notes)
