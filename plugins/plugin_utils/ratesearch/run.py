# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The search of every frame size, one trial after the other, over a ``run_trial`` callable.

``search_all()`` drives a :class:`~.search.Bisection` per frame size (smallest first); each trial is
``run_trial(frame_size, payload_size, offered_bps)`` - the action plugin lends ``iperf_run`` as a UDP client
(``-u -l payload -b offered``) against the server the role started - judged by :func:`~.trial.judge`. A trial
whose verdict rests on timing (``sender``, ``short``) is repeated once (``TIMING_RETRIES``; every attempt is kept
in ``trials``, the last one counts). A trial that errors ends the whole search: its frame size and the ones not
yet searched get no rate and say why (a server that died would fail every later trial the same way).

Pure Python; no I/O. Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch.frames import payload_bps, payload_of
from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch.search import Bisection, Outcome
from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch.settings import Settings
from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch.trial import Trial, judge

__all__ = ["RETRIED", "TIMING_RETRIES", "RunTrial", "SizeResult", "search_all"]

#: Trials repeated when a verdict rests on timing (``sender``, ``short``: a host busy for a moment makes them
#: too): once. ``loss`` rests on iperf's packet counts and is never repeated.
TIMING_RETRIES = 1
RETRIED = ("sender", "short")
#: ``(frame_size, payload_size, offered_bps) -> iperf_run's task result`` for one trial.
RunTrial = Callable[[int, int, int], Mapping[str, Any]]


@dataclass(frozen=True)
class SizeResult:
    """The search of one frame size: its trials, where it ended, or why it has no rate."""

    frame_size: int
    trials: tuple[Trial, ...]
    outcome: Outcome | None  # None: the search ended with an error (or never started)
    error: str | None = None

    @property
    def best(self) -> Trial | None:
        """The passing trial at the found rate (the highest rate that passed)."""
        if self.outcome is None or self.outcome.rate is None:
            return None
        return next(t for t in reversed(self.trials) if t.passed and t.rate_mbps == self.outcome.rate)

    def as_dict(self) -> dict[str, Any]:
        """The frame size's row as ``rate-search.json`` gives it (every output reads this)."""
        best = self.best
        return {
            "frame_size": self.frame_size,
            "payload_size": payload_of(self.frame_size),
            "rate_mbps": best.rate_mbps if best else None,
            "payload_mbps": best.offered_bps / 1e6 if best else None,
            "pps": best.offered_pps if best else None,
            "loss_percent": best.loss_percent if best else None,
            "lost_packets": best.lost_packets if best else None,
            "packets": best.packets if best else None,
            "received_mbps": best.received_mbps if best else None,
            "above_mbps": self.outcome.above if self.outcome else None,
            "bound": self.outcome.bound if self.outcome else None,
            "trials_made": len(self.trials),
            "error": self.error,
            "trials": [t.as_dict() for t in self.trials],
        }


def search_one(settings: Settings, frame_size: int, run_trial: RunTrial, seen: Callable[[Trial], None]) -> SizeResult:
    """The search of one frame size."""
    bisection = Bisection(settings.min_mbps, settings.max_mbps, settings.resolution_mbps)
    trials: list[Trial] = []
    payload = payload_of(frame_size)
    while (rate := bisection.next_rate()) is not None:
        offered = payload_bps(rate, frame_size)
        for _attempt in range(1 + TIMING_RETRIES):
            trial = judge(
                run_trial(frame_size, payload, offered),
                frame_size=frame_size,
                rate_mbps=rate,
                offered_bps=offered,
                loss_percent=settings.loss_percent,
                shortfall_percent=settings.shortfall_percent,
            )
            trials.append(trial)
            seen(trial)
            if trial.verdict not in RETRIED:
                break
        if trial.verdict == "error":
            return SizeResult(frame_size, tuple(trials), None, f"the trial at {rate:g} Mbit/s failed: {trial.error}")
        bisection.record(rate, trial.passed)
    return SizeResult(frame_size, tuple(trials), bisection.outcome())


def search_all(
    settings: Settings, run_trial: RunTrial, seen: Callable[[Trial], None] | None = None
) -> list[SizeResult]:
    """The search of every frame size of ``settings``; ``seen`` is told each trial as it ends (progress)."""
    results: list[SizeResult] = []
    stopped: int | None = None  # the frame size whose trial failed
    for frame_size in settings.frame_sizes:
        if stopped is not None:
            why = f"not searched: the search stopped at frame size {stopped} (its trial failed)"
            results.append(SizeResult(frame_size, (), None, why))
            continue
        results.append(search_one(settings, frame_size, run_trial, seen or _nothing))
        if results[-1].error:
            stopped = frame_size
    return results


def _nothing(trial: Trial) -> None:
    del trial
