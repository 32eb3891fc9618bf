# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Summary statistics, the Student-t quantile and the sweep knee."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.stats import (
    StatsError,
    knee,
    resolve_key,
    summarize,
    t_cdf,
    t_quantile,
)

# Two-sided 95 % critical values t(0.975, df) as printed in every statistics table.
T_TABLE = [
    (1, 12.706),
    (2, 4.303),
    (4, 2.776),
    (9, 2.262),
    (29, 2.045),
    (60, 2.000),
    (100, 1.984),
    (math.inf, 1.960),
]


@pytest.mark.parametrize(("df", "expected"), T_TABLE)
def test_t_quantile_matches_the_printed_table(df: float, expected: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=5e-4)


@pytest.mark.parametrize(
    ("p", "df", "expected"),
    [
        (0.975, 7, 2.3646242516),
        (0.995, 10, 3.1692726726),
        (0.95, 5, 2.0150483733),
        (0.995, 8, 3.3553873313),
        (0.975, math.inf, 1.9599639845),
    ],
)
def test_t_quantile_to_ten_digits(p: float, df: float, expected: float) -> None:
    assert t_quantile(p, df) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("p", [0.6, 0.9, 0.975, 0.995, 0.9995])
def test_t_quantile_closed_forms_for_one_and_two_degrees_of_freedom(p: float) -> None:
    # df=1 is the Cauchy distribution; df=2 has the closed form (2p-1)/sqrt(2p(1-p)).
    assert t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-10)
    assert t_quantile(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-10)


def test_t_quantile_is_antisymmetric_and_zero_at_the_median() -> None:
    assert t_quantile(0.5, 3) == 0.0
    assert t_quantile(0.025, 9) == pytest.approx(-2.2621571628, abs=1e-9)


@given(p=st.floats(min_value=0.001, max_value=0.999), df=st.integers(min_value=1, max_value=500))
def test_t_quantile_inverts_the_distribution_function(p: float, df: int) -> None:
    assert t_cdf(t_quantile(p, df), df) == pytest.approx(p, abs=1e-10)


@pytest.mark.parametrize(("p", "df"), [(0.0, 3), (1.0, 3), (0.5, 0), (0.9, -1)])
def test_t_quantile_refuses_impossible_arguments(p: float, df: float) -> None:
    with pytest.raises(StatsError):
        t_quantile(p, df)


def test_summarize_numbers_every_figure() -> None:
    summary = summarize([2, 4, 4, 4, 5, 5, 7, 9])
    assert summary["count"] == 8
    assert summary["skipped"] == 0
    assert summary["sum"] == 40.0
    assert summary["mean"] == 5.0
    assert summary["median"] == 4.5
    assert summary["min"] == 2
    assert summary["max"] == 9
    # sample variance 32/7
    assert summary["stdev"] == pytest.approx(math.sqrt(32 / 7), rel=1e-12)
    assert summary["cv"] == pytest.approx(math.sqrt(32 / 7) / 5, rel=1e-12)
    # half width = t(0.975, 7) * s / sqrt(8)
    half = 2.3646242516 * math.sqrt(32 / 7) / math.sqrt(8)
    assert summary["ci95"]["half_width"] == pytest.approx(half, rel=1e-9)
    assert summary["ci95"]["low"] == pytest.approx(5 - half, rel=1e-9)
    assert summary["ci95"]["high"] == pytest.approx(5 + half, rel=1e-9)
    assert summary["ci"] == {"level": 0.95, **summary["ci95"]}


def test_summarize_other_confidence_level() -> None:
    summary = summarize([2, 4, 4, 4, 5, 5, 7, 9], confidence=0.99)
    half99 = 3.4994832974 * math.sqrt(32 / 7) / math.sqrt(8)  # t(0.995, 7)
    assert summary["ci"]["level"] == 0.99
    assert summary["ci"]["half_width"] == pytest.approx(half99, rel=1e-9)
    assert summary["ci95"]["half_width"] == pytest.approx(2.3646242516 * math.sqrt(32 / 7) / math.sqrt(8), rel=1e-9)


def _result(bps: float | None, received: float | None = None, lost: float | None = None) -> dict[str, Any]:
    return {
        "bits_per_second": bps,
        "received": None if received is None else {"bytes": 1, "bits_per_second": received},
        "udp": None if lost is None else {"lost_percent": lost},
    }


def test_summarize_results_uses_the_headline_and_skips_unmeasured_runs() -> None:
    runs = [_result(9.41e9), _result(None), _result(9.38e9), _result(9.44e9)]
    summary = summarize(runs)
    assert summary["count"] == 3
    assert summary["skipped"] == 1  # the failed run is not a zero
    assert summary["mean"] == pytest.approx(9.41e9)
    assert summary["min"] == 9.38e9
    assert summary["max"] == 9.44e9
    assert summary["sum"] == pytest.approx(28.23e9)
    assert summary["key"] == "bits_per_second"


def test_summarize_dotted_key() -> None:
    runs = [_result(1.0, received=8.0e9), _result(1.0, received=9.0e9), _result(1.0)]
    summary = summarize(runs, key="received.bits_per_second")
    assert summary["count"] == 2
    assert summary["skipped"] == 1  # received is None in the third
    assert summary["mean"] == 8.5e9


def test_summarize_udp_loss_of_a_tcp_run_is_skipped_not_zero() -> None:
    runs = [_result(1.0, lost=0.5), _result(1.0, lost=1.5), _result(1.0)]
    summary = summarize(runs, key="udp.lost_percent")
    assert (summary["count"], summary["skipped"], summary["mean"]) == (2, 1, 1.0)


def test_summarize_mixed_numbers_and_none() -> None:
    summary = summarize([1.5, None, 2.5])
    assert (summary["count"], summary["skipped"], summary["mean"]) == (2, 1, 2.0)


def test_summarize_single_value_has_no_spread() -> None:
    summary = summarize([9.4e9])
    assert summary["mean"] == 9.4e9
    assert summary["median"] == 9.4e9
    assert summary["stdev"] is None
    assert summary["cv"] is None
    assert summary["ci95"] == {"low": None, "high": None, "half_width": None}


def test_summarize_nothing_gives_nulls_not_zeros() -> None:
    summary = summarize([_result(None), None])
    assert summary["count"] == 0
    assert summary["skipped"] == 2
    for name in ("sum", "mean", "median", "min", "max", "stdev", "cv"):
        assert summary[name] is None, name


def test_summarize_cv_undefined_for_zero_mean() -> None:
    summary = summarize([0.0, 0.0, 0.0])
    assert summary["stdev"] == 0.0
    assert summary["cv"] is None


def test_summarize_misspelt_key_is_an_error_not_an_empty_summary() -> None:
    with pytest.raises(StatsError, match="recieved"):
        summarize([_result(1.0, received=2.0)], key="recieved.bits_per_second")


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([1.0, "2"], "not a number"),
        ([1.0, True], "not a number"),
        ([1.0, math.nan], "not a finite number"),
        ([{"bits_per_second": math.inf}], "not a finite number"),
        ("1,2,3", "expected a list"),
        ({"bits_per_second": 1.0}, "expected a list"),
    ],
)
def test_summarize_refuses_what_is_not_a_number(values: Any, message: str) -> None:
    with pytest.raises(StatsError, match=message):
        summarize(values)


@pytest.mark.parametrize("confidence", [0, 1, 1.5, -0.1, True, "0.95"])
def test_summarize_refuses_bad_confidence(confidence: Any) -> None:
    with pytest.raises(StatsError, match="confidence"):
        summarize([1.0, 2.0], confidence=confidence)


def test_resolve_key_walks_lists_and_stops_at_none() -> None:
    result = {"per_stream": [{"sent": {"bytes": 10}}, {"sent": None}], "udp": None}
    assert resolve_key(result, "per_stream.0.sent.bytes") == 10
    assert resolve_key(result, "per_stream.1.sent.bytes") is None
    assert resolve_key(result, "udp.jitter_ms") is None


def test_knee_is_the_smallest_x_within_tolerance_of_the_best() -> None:
    sweep = {1: 9.1e9, 2: 9.4e9, 4: 9.41e9, 8: 9.3e9}
    assert knee(sweep) == 1  # 9.1 is within 5 % of 9.41
    assert knee(sweep, tolerance=0.01) == 2
    assert knee(sweep, tolerance=0.0) == 4
    assert knee({1: 2.0e9, 2: 4.0e9, 4: 7.9e9, 8: 8.0e9}) == 4


def test_knee_ignores_unmeasured_points() -> None:
    assert knee({1: None, 2: 5.0, 4: None}) == 2
    assert knee({1: None}) is None
    assert knee({}) is None


STRING_KEYS: Any = {"1": 1.0}


def test_knee_refuses_bad_input() -> None:
    with pytest.raises(StatsError, match="tolerance"):
        knee({1: 1.0}, tolerance=1.0)
    with pytest.raises(StatsError, match="not an integer"):
        knee(STRING_KEYS)


@pytest.mark.parametrize(
    ("values", "key", "where"),
    [
        ([9.4e9, -1.0, 9.3e9], None, "item 1 is -1.0"),
        ([{"bits_per_second": 1e9}, {"bits_per_second": -5e8}], None, "item 1 field 'bits_per_second' is -500000000.0"),
        ([{"udp": {"lost_percent": -0.5}}], "udp.lost_percent", "item 0 field 'udp.lost_percent' is -0.5"),
    ],
)
def test_summarize_refuses_a_negative_value_naming_its_index(values: Any, key: str | None, where: str) -> None:
    with pytest.raises(StatsError, match="never negative") as info:
        summarize(values, key=key)
    assert where in str(info.value)


def test_summarize_accepts_zero() -> None:
    assert summarize([0, 0.0])["mean"] == 0.0


def test_knee_refuses_a_negative_mean() -> None:
    with pytest.raises(StatsError, match=r"value at 2 is -1\.0, a negative number"):
        knee({1: 1e9, 2: -1.0})
