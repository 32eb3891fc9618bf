# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What every part of the report shares: its constants, ``ReportError``, units, and number and text formatting
(``md_text`` / ``md_code``: text from the input made safe for ``summary.md``).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

REPORT_FORMAT = "esxilab.iperf.report"
REPORT_VERSION = 1
NA = "n/a"
# The files of a report directory (plots come in addition, named by their specs).
FILES = {
    "json": "results.json",
    "csv": "results.csv",
    "summary_csv": "summary.csv",
    "markdown": "summary.md",
}
# Labels that name the run itself; the other labels are shown as label columns.
RUN_LABELS = ("test", "run", "pair", "streams", "direction", "swapped", "repetition")


class ReportError(ValueError):
    """The input cannot be reported; the message names the item, the cause and the fix."""


# --------------------------------------------------------------------------------------------
# Units and formatting
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unit:
    """A throughput unit: ``Gbit/s`` is ``scale=1e9`` bits per second (SI)."""

    name: str
    scale: float


UNITS = (Unit("Gbit/s", 1e9), Unit("Mbit/s", 1e6), Unit("Kbit/s", 1e3), Unit("bit/s", 1.0))
UNIT_TEXT = {
    "Gbit/s": "1 Gbit/s = 10^9 bit/s",
    "Mbit/s": "1 Mbit/s = 10^6 bit/s",
    "Kbit/s": "1 Kbit/s = 10^3 bit/s",
    "bit/s": "bits per second",
}


def pick_unit(values: Iterable[float | None]) -> Unit:
    """The largest unit in which the largest value is at least 1 (Gbit/s when there is none)."""
    usable = [abs(v) for v in values if v is not None]
    if not usable:
        return UNITS[0]
    top = max(usable)
    for unit in UNITS:
        if top >= unit.scale:
            return unit
    return UNITS[-1]


def _fixed(value: float) -> str:
    """Three significant digits or more: 0.796, 9.410, 24.90, 796.0."""
    size = abs(value)
    if size >= 100:
        return f"{value:.1f}"
    if size >= 10:
        return f"{value:.2f}"
    return f"{value:.3f}"


def format_rate(value: float | None, unit: Unit) -> str:
    """A rate in ``unit`` without the unit name, or ``n/a``."""
    return NA if value is None else _fixed(value / unit.scale)


def pct(value: float | None) -> str:
    return NA if value is None else f"{value:.1f}"


def signed_pct(value: float | None) -> str:
    return NA if value is None else f"{value:+.1f} %"


def rate_with_unit(value: float | None) -> str:
    if value is None:
        return NA
    unit = pick_unit([value])
    return f"{_fixed(value / unit.scale)} {unit.name}"


def label_text(value: Any) -> str:
    if value is None:
        return NA
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(plain_data(value), sort_keys=True, separators=(",", ":"))
    return str(value)


# Bidi overrides, embeddings and isolates (U+202A-U+202E, U+2066-U+2069) and the marks (U+200E, U+200F, U+061C):
# they reorder what is shown, so a label could read as something it is not ("Trojan Source").
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
# Markdown punctuation escaped with a backslash: links and images ([ ]), code spans (`), e-mail autolinks (@).
_MD_ESCAPED = frozenset("\\[]`@|")
_BARE_LINK = re.compile(r"(?i)(://|www\.)")


def _one_line(value: Any) -> str:
    """The text of a value on one line: every run of white space (line breaks included) one space; a control or
    format character (C0, DEL, C1, bidi controls, zero-width characters) shown as its code, ``<U+202E>``, never
    passed on."""
    text = value if isinstance(value, str) else label_text(value)
    return "".join(
        f"<U+{ord(char):04X}>" if char in _BIDI or unicodedata.category(char) in ("Cc", "Cf") else char
        for char in " ".join(text.split())
    )


def md_text(value: Any) -> str:
    """Text from the input (labels, names, messages) for ``summary.md`` - the one function every user-supplied string
    of the Markdown goes through: one line, control and bidi characters shown as their code (``_one_line``); ``&``
    and ``<`` HTML-escaped, so no tag (``<img src=x onerror=...>``), no ``<...>`` autolink and no entity can start;
    ``\\ [ ] ` @ |`` backslash-escaped, so no link, image (``![x](y)``, ``[x](javascript:...)``), reference, code span
    or e-mail autolink can start and ``|`` does not split a table cell; ``://`` and ``www.`` broken (``:\\//``,
    ``www\\.``), so no bare URL is linked. ``>`` is left as it is, so ``vm2 -> vm1`` reads as written."""
    text = "".join(f"\\{char}" if char in _MD_ESCAPED else char for char in _one_line(value))
    text = text.replace("&", "&amp;").replace("<", "&lt;")
    return _BARE_LINK.sub(lambda m: ":\\//" if m.group(1) == "://" else m.group(1)[:3] + "\\.", text)


def md_code(value: Any) -> str:
    """An inline code span: Markdown shows its content literally (no link, no tag), so it is not HTML-escaped; one
    line, control and bidi characters shown as their code, a backtick as ``'`` (it would end the span), ``|`` escaped
    for tables."""
    text = _one_line(value).replace("`", "'").replace("|", "\\|")
    return f"`{text}`"


def field_of(data: Any, path: str) -> Any:
    """A field of a normalized result (or any nested mapping) by dotted path (``sent.bytes``), or ``None``."""
    current = data
    for part in path.split("."):
        if not isinstance(current, Mapping):
            return None
        current = current.get(part)
    return current


def as_number(value: Any) -> float | None:
    """A finite int/float (not bool) as float, else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def plain_data(value: Any) -> Any:
    """Plain JSON types, whatever subclasses came in; non-finite floats become ``None``."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): plain_data(v) for k, v in value.items()}
    if isinstance(value, Sequence | set | frozenset) and not isinstance(value, bytes):
        return [plain_data(v) for v in value]
    return str(value)


def slug(text: str) -> str:
    """A file-name-safe form: ``MTU 9000 / vmxnet3`` -> ``mtu-9000-vmxnet3``."""
    cleaned = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return cleaned or "x"
