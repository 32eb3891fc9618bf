# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The bisection of one frame size's search: which offered rate to try next, and when to stop.

The search (RFC 2544's throughput search, as a binary search):

1. the first trial offers ``high`` (``max_mbps``); when it passes the search ends there (``bound: max_mbps``:
   the path may carry more - raise ``max_mbps`` to know);
2. else it halves the bracket ``[highest passing rate (or low), lowest failing rate]``: the middle passes ->
   it is the new bottom, fails -> the new top - until the bracket is at most ``resolution`` wide
   (``bound: resolution``: the limit lies in ``[rate, above)``);
3. when no middle passed and ``low`` is above 0, a last trial offers ``low`` itself; when that fails too
   (or ``low`` is 0) no rate passed: ``rate`` is ``None`` (``bound: none``).

The result is the highest rate that *passed a trial*, never a rate interpolated or assumed: on a loss curve
that is not monotone (noise) a rate above it may pass in another trial, which is why every trial is kept.
The number of trials is at most ``1 + ceil(log2((high - low) / resolution)) (+ 1 when low > 0)``.

Pure Python; no I/O. Private module: not part of the collection's public API.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Bisection", "Outcome", "SearchError"]


class SearchError(ValueError):
    """The search was driven wrongly (a rate recorded that was not asked for, bad bounds)."""


@dataclass(frozen=True)
class Outcome:
    """Where a finished search ended."""

    rate: float | None  # the highest rate that passed a trial; None: none did
    above: float | None  # the lowest rate that failed a trial (None: max_mbps passed)
    bound: str  # max_mbps | resolution | none


class Bisection:
    """The state of one search between ``low`` and ``high`` Mbit/s to ``resolution`` Mbit/s."""

    def __init__(self, low: float, high: float, resolution: float) -> None:
        if not (0 <= low < high and resolution > 0):
            raise SearchError(f"bounds {low!r}..{high!r} to {resolution!r}: need 0 <= low < high and resolution > 0")
        self._low, self._high, self._resolution = low, high, resolution
        self._bottom = low  # highest passing rate, or low while none passed
        self._passed = False  # a rate passed (the bottom is a tested rate)
        self._top = high  # lowest failing rate
        self._top_tested = False
        self._low_tested = False
        self._done = False  # max_mbps passed, or the last (low) trial was made

    def _pending(self) -> tuple[float, str] | None:
        """The next trial and its kind (``high``, ``middle``, ``low``), or ``None`` when the search is over."""
        if self._done:
            return None
        if not self._top_tested:
            return self._high, "high"
        if self._top - self._bottom > self._resolution:
            middle = (self._bottom + self._top) / 2
            if self._bottom < middle < self._top:  # else a float bracket too narrow to split: over
                return middle, "middle"
        if not self._passed and self._low > 0 and not self._low_tested:
            return self._low, "low"
        return None

    def next_rate(self) -> float | None:
        """The rate of the next trial, or ``None`` when the search is over."""
        pending = self._pending()
        return None if pending is None else pending[0]

    def record(self, rate: float, passed: bool) -> None:
        """The verdict of the trial at ``rate`` (the rate :meth:`next_rate` gave)."""
        pending = self._pending()
        if pending is None or rate != pending[0]:
            asked = None if pending is None else pending[0]
            raise SearchError(f"a trial at {rate!r} Mbit/s was recorded, but the search asked for {asked!r}")
        kind = pending[1]
        if kind == "high":
            self._top_tested = True
            self._done = passed
        elif kind == "low":
            self._low_tested = True
            self._done = True
        if passed:
            self._bottom, self._passed = rate, True
        else:
            self._top = rate

    def outcome(self) -> Outcome:
        """Where the search ended (call when :meth:`next_rate` returned ``None``)."""
        if self._pending() is not None:
            raise SearchError("the search is not over: ask next_rate() until it returns None")
        if self._passed and self._bottom == self._high:
            return Outcome(self._high, None, "max_mbps")
        if self._passed:
            return Outcome(self._bottom, self._top, "resolution")
        return Outcome(None, self._top, "none")
