# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit conversion: what iperf prints, parsed back, is the value it printed (within its rounding).

``iperf_format`` re-implements iperf3's ``unit_snprintf`` (``src/units.c``): lower-case
formats print bits (value x 8, 1000-based), upper-case formats print bytes (1024-based);
``a``/``A`` pick the unit adaptively (switching at >= 1000 / >= 1024, so ``1023 KBytes``
exists); numbers use ``%4.2f`` below 9.995, ``%4.1f`` below 99.95, else ``%4.0f``; the
label gets an ``s`` (``KBytes``), rates get ``/sec`` appended by the caller.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.units import UnitError, parse_bytes, parse_rate

_BYTE_LABELS = ("Byte", "KByte", "MByte", "GByte", "TByte")
_BIT_LABELS = ("bit", "Kbit", "Mbit", "Gbit", "Tbit")


def iperf_format(value: float, fmt: str) -> tuple[str, float]:
    """Format ``value`` (bytes, or bytes/s) like iperf3; return the text and its unit multiplier.

    The multiplier converts the printed number back to bytes (upper-case formats) or bits
    (lower-case formats).
    """
    upper = fmt.isupper()
    base = 1024.0 if upper else 1000.0
    number = value if upper else value * 8
    if fmt.upper() == "A":
        conv = 0
        while number >= base and conv < len(_BYTE_LABELS) - 1:
            number /= base
            conv += 1
    else:
        conv = "BKMGT".index(fmt.upper())
        number /= base**conv
    if number < 9.995:
        text = f"{number:4.2f}"
    elif number < 99.95:
        text = f"{number:4.1f}"
    else:
        text = f"{number:4.0f}"
    label = (_BYTE_LABELS if upper else _BIT_LABELS)[conv]
    return f"{text} {label}s", base**conv


def half_last_digit(printed: str) -> float:
    """Half a unit of the last printed digit of the number in ``printed`` (``"5.78 GBytes"`` -> 0.005)."""
    number = printed.split()[0]
    decimals = len(number.split(".")[1]) if "." in number else 0
    return 0.5 * 10.0**-decimals


byte_counts = st.integers(min_value=0, max_value=2**50)
byte_rates = st.floats(min_value=0.0, max_value=2.0**47, allow_nan=False, allow_infinity=False)


@given(byte_counts)
@example(1023 * 1024)
@example(1024 * 1024 - 1)
@example(0)
def test_adaptive_byte_amounts_round_trip(value: int) -> None:
    printed, multiplier = iperf_format(value, "A")
    tolerance = half_last_digit(printed) * multiplier + 0.5  # + rounding to a whole byte
    assert abs(parse_bytes(printed) - value) <= tolerance * (1 + 1e-12), printed


@given(byte_rates, st.sampled_from("akmgt"))
@example(25846640000 / 8, "k")
@example(999.4 / 8, "a")
def test_bit_rates_round_trip(bytes_per_second: float, fmt: str) -> None:
    printed, multiplier = iperf_format(bytes_per_second, fmt)
    bits = bytes_per_second * 8
    tolerance = half_last_digit(printed) * multiplier
    assert abs(parse_rate(printed + "/sec") - bits) <= tolerance * (1 + 1e-9) + 1e-9 * bits, printed


@given(byte_rates, st.sampled_from("KMGT"))
@example(2773516 * 1024, "K")
def test_byte_rates_of_upper_case_formats_round_trip_to_bits(bytes_per_second: float, fmt: str) -> None:
    printed, multiplier = iperf_format(bytes_per_second, fmt)
    assert printed.endswith("Bytes")
    tolerance = half_last_digit(printed) * multiplier * 8
    got = parse_rate(printed + "/sec")
    assert abs(got - bytes_per_second * 8) <= tolerance * (1 + 1e-9) + 1e-9 * bytes_per_second * 8, printed


@given(st.text(max_size=40).filter(lambda t: "Byte" not in t))
def test_text_without_a_byte_unit_is_refused(text: str) -> None:
    with pytest.raises(UnitError):
        parse_bytes(text)


@given(st.text(max_size=40).filter(lambda t: "/sec" not in t))
def test_text_without_per_second_is_refused_as_a_rate(text: str) -> None:
    with pytest.raises(UnitError):
        parse_rate(text)


@pytest.mark.parametrize(
    ("printed", "expected"),
    [
        ("1023 KBytes", 1047552),
        ("5.78 GBytes", round(5.78 * 2**30)),
        ("5.78 GBytes", 6206227743),
        ("0.00 Bytes", 0),
        ("82.8 KBytes", 84787),
        ("224788480 Bytes", 224788480),
        ("1.12 GBytes", round(1.12 * 2**30)),
        ("7047 MBytes", 7047 * 2**20),
    ],
)
def test_byte_examples(printed: str, expected: int) -> None:
    assert parse_bytes(printed) == expected


@pytest.mark.parametrize(
    ("printed", "expected"),
    [
        ("25846640 Kbits/sec", 25846640 * 1000),
        ("4.96 Gbits/sec", 4.96e9),
        ("0.00 bits/sec", 0.0),
        ("1798307840 bits/sec", 1798307840.0),
        ("2773516 KBytes/sec", 2773516 * 1024 * 8),
        ("112 MBytes/sec", 112 * 2**20 * 8),
    ],
)
def test_rate_examples(printed: str, expected: float) -> None:
    assert parse_rate(printed) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "text",
    ["", "KBytes", "-1 KBytes", "nan Bytes", "inf GBytes", "1e999 Bytes", "5.78 GBits", "5.78 XBytes", "12 KBytes/sec"],
)
def test_invalid_byte_amounts_raise(text: str) -> None:
    with pytest.raises(UnitError):
        parse_bytes(text)


@pytest.mark.parametrize(
    "text",
    ["", "Mbits/sec", "1.0 Mbits", "-5 Mbits/sec", "nan bits/sec", "inf Gbits/sec", "5.78 GBytes", "3 Xbits/sec"],
)
def test_invalid_rates_raise(text: str) -> None:
    with pytest.raises(UnitError):
        parse_rate(text)
