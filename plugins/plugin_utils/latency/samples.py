# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The per-packet round-trip times of a ping output, its counts, and nearest-rank percentiles.

Read from what the tools print, one reply a line:

* iputils ``ping`` (Linux): ``64 bytes from 198.18.0.2: icmp_seq=1 ttl=64 time=0.045 ms``, a duplicate with
  `` (DUP!)`` after it; the summary ``N packets transmitted, M received, +D duplicates, +E errors, L% packet loss``;
* busybox ``ping``: ``seq=`` instead of ``icmp_seq=``, the summary ``N packets transmitted, M packets received,
  D duplicates, L% packet loss``;
* ``vmkping`` (ESXi): ``icmp_seq=`` and the summary ``N packets transmitted, M packets received, L% packet loss``
  (``tests/fixtures/esxi/unknown__vmkping__*.txt``).

A reply's RTT is a sample once per sequence number: a duplicate (``DUP!``, or a second reply of the same
sequence) answers a probe already counted, so it is counted in ``duplicates`` and is no sample. Lines that are
not replies (``From ... Destination Host Unreachable``, ``sendto() failed``, ``Request timeout``) are no samples.

``transmitted`` comes from the summary only: a ping stopped before it printed one (``cut``) has sent an unknown
number of probes, so its loss is ``None``, never guessed from the sequence numbers.

Percentiles are nearest-rank (the smallest sample with at least p % of the samples at or below it: the
``ceil(p/100 * n)``-th smallest, a value that was measured, never interpolated), and ``None`` when the samples
are too few for the percentile to differ from the maximum: p50 needs 2 samples, p90 10, p99 100
(``n >= 100 / (100 - p)``). The maximum needs one sample.

Pure Python (stdlib only). Private module: not part of the collection's public API.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["PingSamples", "enough_for", "nearest_rank", "parse_samples"]

_REPLY_RE = re.compile(
    r"^\s*\d+ bytes from (?P<ip>\S+?):? (?:icmp_)?seq=(?P<seq>\d+) "
    r"(?:ttl|hlim)=\d+ time[=<](?P<ms>\d+(?:\.\d+)?) ?ms(?P<rest>.*)$"
)
_SUMMARY_RE = re.compile(
    r"(?P<tx>\d+) packets transmitted, (?P<rx>\d+) (?:packets )?received,"
    r"(?: \+?(?P<dup>\d+) duplicates,)?(?: \+(?P<err>\d+) errors,)? (?P<loss>\d+(?:\.\d+)?)% packet loss"
)


@dataclass(frozen=True, slots=True)
class PingSamples:
    """What one ping output says: the RTT of each answered probe (ms, in the order received) and the counts."""

    rtts_ms: tuple[float, ...]
    transmitted: int | None  # from the summary; None when the output has none (the ping was stopped: cut)
    received: int  # probes answered (one per sequence number)
    duplicates: int  # replies beyond the first of a probe (DUP!)
    errors: int  # the summary's "+E errors" (ICMP errors such as Destination Host Unreachable)

    @property
    def cut(self) -> bool:
        """No summary: the ping was stopped before it ended (or never ran)."""
        return self.transmitted is None

    @property
    def lost(self) -> int | None:
        if self.transmitted is None:
            return None
        return max(0, self.transmitted - self.received)


def parse_samples(text: str) -> PingSamples:
    """The replies and counts of one ping output (iputils, busybox or ``vmkping``; see the module doc)."""
    seen: set[int] = set()
    rtts: list[float] = []
    duplicates = 0
    for line in text.splitlines():
        match = _REPLY_RE.match(line)
        if match is None:
            continue
        seq = int(match.group("seq"))
        if "DUP!" in match.group("rest") or seq in seen:
            duplicates += 1
            continue
        seen.add(seq)
        rtts.append(float(match.group("ms")))
    summary = _SUMMARY_RE.search(text)
    return PingSamples(
        rtts_ms=tuple(rtts),
        transmitted=int(summary.group("tx")) if summary else None,
        received=len(rtts),
        duplicates=max(duplicates, int(summary.group("dup") or 0)) if summary else duplicates,
        errors=int(summary.group("err") or 0) if summary else 0,
    )


def enough_for(percent: float, count: int) -> bool:
    """Whether ``count`` samples give a ``percent`` percentile that can differ from the maximum (see the module)."""
    if percent >= 100:
        return count >= 1
    return count >= math.ceil(100.0 / (100.0 - percent) - 1e-9)


def nearest_rank(samples: Sequence[float], percent: float) -> float | None:
    """The nearest-rank ``percent`` percentile of ``samples`` (any order), or ``None`` when they are too few."""
    if not 0 < percent <= 100:
        raise ValueError(f"percentile {percent} is not above 0 and at most 100")
    if not enough_for(percent, len(samples)):
        return None
    ordered = sorted(samples)
    rank = max(1, math.ceil(percent / 100.0 * len(ordered) - 1e-9))
    return ordered[rank - 1]
