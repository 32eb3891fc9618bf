# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The bisection of the rate search: monotone and noisy loss curves, the ends of the range, termination."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch.search import Bisection, Outcome, SearchError


def drive(bisection: Bisection, passes: Callable[[float], bool]) -> tuple[Outcome, list[tuple[float, bool]]]:
    """Run the search with the verdicts of ``passes``; the outcome and the trials."""
    trials: list[tuple[float, bool]] = []
    while (rate := bisection.next_rate()) is not None:
        verdict = passes(rate)
        trials.append((rate, verdict))
        bisection.record(rate, verdict)
        assert len(trials) < 100, "the search does not end"
    return bisection.outcome(), trials


def most_trials(low: float, high: float, resolution: float) -> int:
    return 1 + max(0, math.ceil(math.log2((high - low) / resolution))) + (1 if low > 0 else 0)


@pytest.mark.parametrize("low", [0.0, 5.0])
@pytest.mark.parametrize("resolution", [0.1, 1.0, 7.0])
@pytest.mark.parametrize("limit", [0.05, 5.0, 5.01, 12.3, 49.99, 50.0, 73.4, 99.99])
def test_a_monotone_curve_is_found_within_the_resolution(limit: float, resolution: float, low: float) -> None:
    """Rates up to ``limit`` pass, above it fail: the result is the highest passing rate tried, at most a
    resolution below the limit, and the failing rate above it at most a resolution further."""
    outcome, trials = drive(Bisection(low, 100.0, resolution), lambda rate: rate <= limit)
    assert len(trials) <= most_trials(low, 100.0, resolution)
    assert trials[0][0] == 100.0  # max_mbps first
    if limit < low:
        assert outcome == Outcome(None, low, "none")
        assert trials[-1] == (low, False)  # min_mbps tried last
    elif low == 0 and limit < resolution:
        assert outcome.rate is None and outcome.bound == "none" and outcome.above is not None
        assert outcome.above - resolution <= resolution
    else:
        assert outcome.rate is not None and outcome.above is not None and outcome.bound == "resolution"
        assert outcome.rate <= limit < outcome.above
        assert outcome.above - outcome.rate <= resolution
        assert (outcome.rate, True) in trials and (outcome.above, False) in trials
    passed = [rate for rate, ok in trials if ok]
    assert outcome.rate == (max(passed) if passed else None)  # only a rate that passed a trial


def test_max_mbps_passing_ends_the_search_at_once() -> None:
    outcome, trials = drive(Bisection(0, 100, 1), lambda rate: True)
    assert trials == [(100, True)]
    assert outcome == Outcome(100, None, "max_mbps")


def test_nothing_passes_from_zero() -> None:
    outcome, trials = drive(Bisection(0, 64, 1), lambda rate: False)
    assert [rate for rate, _trial in trials] == [64, 32, 16, 8, 4, 2, 1]  # halvings down to the resolution, no 0 trial
    assert outcome == Outcome(None, 1, "none")


def test_min_mbps_is_tried_last_and_may_pass() -> None:
    outcome, trials = drive(Bisection(10, 20, 4), lambda rate: rate <= 10)
    assert trials == [(20, False), (15, False), (12.5, False), (10, True)]
    assert outcome == Outcome(10, 12.5, "resolution")


def test_the_exact_limit_is_a_passing_rate() -> None:
    """A trial exactly at the limit passes (loss <= threshold): the result is the limit itself."""
    outcome, trials = drive(Bisection(0, 100, 1), lambda rate: rate <= 50)
    assert trials[:2] == [(100, False), (50, True)]
    assert outcome == Outcome(50, 50.78125, "resolution")


@pytest.mark.parametrize("seed", range(40))
def test_a_noisy_curve_ends_and_gives_a_rate_that_passed(seed: int) -> None:
    """Loss is random near the limit (a trial may fail below it and pass above it): the search still ends within
    its trial count and reports the highest rate that passed a trial, with a failed rate at most a resolution above."""
    rng = random.Random(seed)
    limit = rng.uniform(10, 90)

    def noisy(rate: float) -> bool:
        return rng.random() < 1 / (1 + math.exp((rate - limit) / 3))  # a soft step around the limit

    outcome, trials = drive(Bisection(0, 100, 0.5), noisy)
    assert len(trials) <= most_trials(0, 100, 0.5)
    passed = [rate for rate, ok in trials if ok]
    assert outcome.rate == (max(passed) if passed else None)
    if outcome.rate is not None and outcome.above is not None:
        assert 0 < outcome.above - outcome.rate <= 0.5
        assert (outcome.above, False) in trials


def test_a_bracket_too_narrow_for_floats_ends() -> None:
    outcome, trials = drive(Bisection(0, 1e-300, 1e-320), lambda rate: rate < 5e-301)
    assert len(trials) < 100 and outcome.rate is not None


def test_driving_it_wrong_is_refused() -> None:
    bisection = Bisection(0, 10, 1)
    with pytest.raises(SearchError, match="search asked for 10"):
        bisection.record(5, True)
    with pytest.raises(SearchError, match="not over"):
        bisection.outcome()
    bisection.record(10, True)
    with pytest.raises(SearchError, match="asked for None"):
        bisection.record(10, True)


@pytest.mark.parametrize(("low", "high", "resolution"), [(-1, 10, 1), (10, 10, 1), (0, 10, 0), (0, 10, -1)])
def test_bad_bounds_are_refused(low: float, high: float, resolution: float) -> None:
    with pytest.raises(SearchError, match="need 0 <= low < high and resolution > 0"):
        Bisection(low, high, resolution)
