# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One trial of the rate search: its verdict from what ``iperf_run`` (a UDP client) returned.

Every figure is the tool's: iperf's receiver-side ``lost_packets`` and ``packets`` (``result.udp``, which
iperf3's client prints from the server's report), the sender's and the receiver's payload rate
(``result.sent`` / ``result.received``). A trial

* **passes** when ``100 * lost / packets <= loss_percent``, the sender sent at least the offered rate less
  ``shortfall_percent``, and the receiver's rate is at most ``shortfall_percent`` below the sender's less the
  packets iperf counted lost (``sent * (packets - lost) / packets``);
* fails with **loss** when more packets were lost than the threshold allows;
* fails as **sender** when the sender did not reach the offered rate (a busy host, a sender's own slower link):
  the rate was not offered, so the trial says nothing of the path;
* fails **short** when the receiver got less than was sent without counting it lost: a queue on the path held the
  excess until the end of the trial (a deep buffer hides a rate above the path's in a short trial; lengthen
  ``trial_seconds`` to let it overflow), or the receiving host was too busy to read in time;

``run.py`` repeats a ``sender`` or ``short`` trial once (a host busy for a moment gives them too), and a second
such trial counts as a failure (the result is then the highest rate the hosts could offer and take and the path
carried);
* is an **error** when iperf failed or printed no loss figures: the search of its frame size ends there,
  with no rate (never a guessed one).

Pure Python; no I/O. Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.validate import RecordError, result_from
from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch.frames import (
    frame_mbps,
    packets_per_second,
    payload_of,
)

__all__ = ["VERDICTS", "Trial", "judge"]

VERDICTS = ("pass", "loss", "sender", "short", "error")


@dataclass(frozen=True)
class Trial:
    """One trial: what was offered, what iperf measured, the verdict."""

    frame_size: int
    rate_mbps: float  # the offered frame rate (the search's variable)
    offered_bps: int  # iperf's -b (payload bits/s)
    verdict: str  # one of VERDICTS
    lost_packets: int | None = None
    packets: int | None = None
    sent_bps: float | None = None  # payload bits/s, as iperf measured
    received_bps: float | None = None
    error: str | None = None

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    @property
    def loss_percent(self) -> float | None:
        """``100 * lost / packets`` of iperf's receiver counts."""
        if self.lost_packets is None or not self.packets:
            return None
        return 100.0 * self.lost_packets / self.packets

    @property
    def payload_size(self) -> int:
        return payload_of(self.frame_size)

    @property
    def offered_pps(self) -> float:
        return packets_per_second(self.offered_bps, self.frame_size)

    @property
    def received_pps(self) -> float | None:
        return None if self.received_bps is None else packets_per_second(self.received_bps, self.frame_size)

    @property
    def received_mbps(self) -> float | None:
        """The received frame rate in Mbit/s (the payload iperf received, as whole frames)."""
        return None if self.received_bps is None else frame_mbps(self.received_bps, self.frame_size)

    def as_dict(self) -> dict[str, Any]:
        """The trial as ``rate-search.json`` gives it."""
        return {
            "rate_mbps": self.rate_mbps,
            "offered_bps": self.offered_bps,
            "offered_pps": self.offered_pps,
            "verdict": self.verdict,
            "loss_percent": self.loss_percent,
            "lost_packets": self.lost_packets,
            "packets": self.packets,
            "sent_bps": self.sent_bps,
            "received_bps": self.received_bps,
            "received_pps": self.received_pps,
            "received_mbps": self.received_mbps,
            "error": self.error,
        }


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _rate(totals: Any) -> float | None:
    if not isinstance(totals, Mapping):
        return None
    value = totals.get("bits_per_second")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def judge(
    step: Mapping[str, Any],
    *,
    frame_size: int,
    rate_mbps: float,
    offered_bps: int,
    loss_percent: float,
    shortfall_percent: float,
) -> Trial:
    """The trial ``iperf_run`` returned as ``step`` (its task result), judged against the thresholds."""
    lost: int | None = None
    packets: int | None = None
    sent: float | None = None
    received: float | None = None

    def trial(verdict: str, error: str | None = None) -> Trial:
        return Trial(frame_size, rate_mbps, offered_bps, verdict, lost, packets, sent, received, error)

    if step.get("failed") or step.get("unreachable"):
        return trial("error", str(step.get("msg") or "iperf_run failed without a message"))
    try:
        result = result_from(step.get("result"), "the trial's result")
    except RecordError as exc:
        return trial("error", f"iperf_run returned no usable result: {exc}")
    if result is None:
        return trial("error", "iperf_run returned no result for the trial")
    udp = result["udp"] or {}
    lost, packets = _count(udp.get("lost_packets")), _count(udp.get("packets"))
    sent, received = _rate(result["sent"]), _rate(result["received"])
    if result["error"]:
        return trial("error", f"iperf: {result['error']}")
    if lost is None or not packets or lost > packets:
        return trial(
            "error",
            f"iperf printed no usable loss figures (lost {lost!r} of {packets!r} packets): is it a UDP test whose "
            "receiver report reached the client?",
        )
    if received is None or sent is None:
        return trial("error", "iperf printed no sender or receiver rate for the trial")
    tolerance = 1 - shortfall_percent / 100.0
    if lost * 100.0 > loss_percent * packets:
        return trial("loss")
    if sent < offered_bps * tolerance:
        return trial("sender")
    if received < sent * (packets - lost) / packets * tolerance:  # what was sent less what iperf counted lost
        return trial("short")
    return trial("pass")
