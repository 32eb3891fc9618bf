# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Text helpers shared by the iperf2 parsers (``iperf/iperf2_text.py`` and ``iperf/iperf2_csv.py``).

* ``UNKNOWN_U32`` / ``known_count()`` -- iperf2 prints ``-1`` for an unknown figure, and 2.2.x
  prints that ``-1`` as the unsigned 32-bit ``4294967295``; both become ``None``.
* ``known_float()`` -- a finite, non-negative figure from its text, else ``None``.
* ``final_of()`` -- a series' total line: its last line when that line starts at 0 and reaches
  the latest end.
* ``IPERF2_VERSION_RE`` / ``IPERF2_ERROR_RE`` -- iperf2's version banner and error messages.

Pure Python (stdlib only).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

__all__ = ["IPERF2_ERROR_RE", "IPERF2_VERSION_RE", "UNKNOWN_U32", "final_of", "known_count", "known_float"]

UNKNOWN_U32 = 4294967295

IPERF2_VERSION_RE = re.compile(r"^iperf version (?P<version>\d[\w.\-]*)")
IPERF2_ERROR_RE = re.compile(
    r"^(?:(?:tcp |udp |listener )?(?:connect|bind|listen|accept|read|write|recv|recvfrom|send|sendto|"
    r"getaddrinfo|gethostbyname|setsockopt|getsockopt|socket)\s+failed\b.*"
    r"|ERROR: .*|iperf: (?!ignoring extra argument).*|.*\b(?:Unknown host|Name or service not known)\b.*)$"
)


def known_count(value: int) -> int | None:
    """``value``, or ``None`` for a negative figure or ``4294967295`` (iperf's "unknown")."""
    if value < 0 or value == UNKNOWN_U32:
        return None
    return value


def known_float(text: str | None) -> float | None:
    """A finite, non-negative float from ``text``; ``None`` when empty, unparsable, nan, inf or negative."""
    if text is None or not text.strip():
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    if math.isnan(value) or value < 0 or value in (float("inf"), float("-inf")):
        return None
    return value


class _Span(Protocol):
    @property
    def start(self) -> float: ...

    @property
    def end(self) -> float: ...


_SpanT = TypeVar("_SpanT", bound=_Span)


def final_of(lines: Sequence[_SpanT]) -> _SpanT | None:
    """A series' total: its last line when that line starts at 0 and reaches the latest end."""
    if not lines:
        return None
    last = lines[-1]
    if abs(last.start) > 1e-9:
        return None
    if any(ln.end > last.end + 1e-9 for ln in lines[:-1]):
        return None
    return last
