# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit conversion for figures printed by iperf2 and iperf3.

Both tools print byte amounts with 1024-based prefixes (``KBytes`` = 2**10 bytes) and bit
rates with 1000-based prefixes (``Kbits/sec`` = 10**3 bit/s). A rate printed in bytes per
second (``-f K|M|G|T``, e.g. ``MBytes/sec``) is 1024-based bytes and is converted to bit/s.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

__all__ = [
    "UnitError",
    "finite_float",
    "parse_bytes",
    "parse_number",
    "parse_rate",
    "positive_float",
]

_BYTE_PREFIX = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}
_BIT_PREFIX = {"": 1, "K": 1000, "M": 1000**2, "G": 1000**3, "T": 1000**4, "P": 1000**5}

# "5.78 GBytes", "1023 KBytes", "224788480 Bytes", "0.00 Bytes", "7047 MBytes", "369 KByte"
_BYTES_RE = re.compile(r"^\s*(?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?P<prefix>[KMGTP]?)Bytes?\s*$")
# "4.96 Gbits/sec", "1798307840 bits/sec", "25846640 Kbits/sec", "112 MBytes/sec"
_RATE_RE = re.compile(
    r"^\s*(?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?P<prefix>[KMGTP]?)(?P<kind>bits|Bytes)/sec\s*$"
)


class UnitError(ValueError):
    """A figure does not have the shape iperf prints."""


def finite_float(value: object) -> float | None:
    """``value`` as a finite float (a number or numeric text that Ansible handed over), else None; never a bool."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def positive_float(value: object) -> float | None:
    """``value`` as a positive finite float (``finite_float``), else None: a speed or a rate that was read."""
    number = finite_float(value)
    return number if number is not None and number > 0 else None


def parse_number(text: str) -> float:
    """Parse a plain decimal number as iperf prints it; ``nan``/``inf`` are refused."""
    try:
        value = float(text)
    except ValueError as exc:
        raise UnitError(f"not a number: {text!r}") from exc
    if not math.isfinite(value):
        raise UnitError(f"not a finite number: {text!r}")
    return value


def parse_bytes(text: str) -> int:
    """Turn ``"5.78 GBytes"`` into a byte count (1024-based prefixes).

    The result is rounded to the nearest byte: the printed figure is itself rounded, so a
    count derived from ``5.78 GBytes`` is only as exact as those three digits.
    """
    match = _BYTES_RE.match(text)
    if not match:
        raise UnitError(f"not a byte amount: {text!r}")
    value = parse_number(match.group("num"))
    if value < 0:
        raise UnitError(f"negative byte amount: {text!r}")
    return round(value * _BYTE_PREFIX[match.group("prefix")])


def parse_rate(text: str) -> float:
    """Turn ``"4.96 Gbits/sec"`` (1000-based) or ``"112 MBytes/sec"`` (1024-based bytes) into bit/s."""
    match = _RATE_RE.match(text)
    if not match:
        raise UnitError(f"not a rate: {text!r}")
    value = parse_number(match.group("num"))
    if value < 0:
        raise UnitError(f"negative rate: {text!r}")
    prefix = match.group("prefix")
    # Decimal keeps "32.2 Gbits/sec" at 32200000000.0 instead of binary-float noise.
    scale = _BIT_PREFIX[prefix] if match.group("kind") == "bits" else _BYTE_PREFIX[prefix] * 8
    return float(Decimal(match.group("num")) * scale)
