# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time zone abbreviations (as iperf2 prints them: ``on 2025-04-17 17:31:21 (PDT)``) to UTC offsets.

iperf2 2.1+ ``-e`` stamps a connection with the wall time and the C library's zone
abbreviation (``strftime %Z``), which comes from the tz database. An abbreviation names an
offset only when every zone of the tz database that uses it uses it with one offset.

Source of the table: the IANA tz database, release 2025b (Debian package ``tzdata``
2025b-0+deb12u2): every zone in ``/usr/share/zoneinfo`` read week by week from 2019 to 2026,
each abbreviation with the set of offsets it is used with.
``tests/unit/plugins/plugin_utils/iperf/test_zones.py`` repeats that reading against the
machine's own tz database, so the table cannot drift from it unnoticed. ``UTC``, ``GMT``, ``UT``
and ``Z`` are RFC 822 (section 5.1) / ISO 8601 names of offset zero.

Decisions:

* ``EST``/``EDT`` are America's (-05:00/-04:00): the Australian ``EST`` ended with tzdata
  2014f (``AEST`` since), years before iperf 2.1 (2021) printed zone names.
* Ambiguous in that database, so kept local with a warning: ``PST`` (America -08:00, Asia/Manila
  +08:00), ``CST`` (America -06:00, Cuba -05:00, China/Taiwan/Macau +08:00), ``CDT`` (America
  -05:00, Cuba -04:00), ``IST`` (India +05:30, Ireland's standard time +01:00, Israel +02:00).
* Abbreviations not in the table (numeric names such as ``+03`` excepted, which are offsets
  themselves) are unknown: local time and a warning, never a guess.

Pure Python (stdlib only). Private module: not part of the collection's public API.
"""

from __future__ import annotations

import re

__all__ = ["AMBIGUOUS_ZONES", "ZONE_OFFSETS", "zone_offset"]

#: Abbreviation -> offset ("+HH:MM"); each used with exactly this one offset in tz database 2025b.
ZONE_OFFSETS: dict[str, str] = {
    "UTC": "+00:00",
    "GMT": "+00:00",
    "UT": "+00:00",
    "Z": "+00:00",
    "WET": "+00:00",
    "WEST": "+01:00",
    "BST": "+01:00",  # Europe/London summer time (no other zone uses BST in 2025b)
    "CET": "+01:00",
    "CEST": "+02:00",
    "MET": "+01:00",
    "MEST": "+02:00",
    "EET": "+02:00",
    "EEST": "+03:00",
    "SAST": "+02:00",
    "IDT": "+03:00",
    "MSK": "+03:00",
    "PKT": "+05:00",
    "WIB": "+07:00",
    "HKT": "+08:00",
    "AWST": "+08:00",
    "JST": "+09:00",
    "KST": "+09:00",
    "ACST": "+09:30",
    "ACDT": "+10:30",
    "AEST": "+10:00",
    "AEDT": "+11:00",
    "ChST": "+10:00",
    "NZST": "+12:00",
    "NZDT": "+13:00",
    "SST": "-11:00",
    "HST": "-10:00",
    "HDT": "-09:00",
    "AKST": "-09:00",
    "AKDT": "-08:00",
    "PDT": "-07:00",
    "MST": "-07:00",
    "MDT": "-06:00",
    "EST": "-05:00",
    "EDT": "-04:00",
    "AST": "-04:00",
    "ADT": "-03:00",
}

#: Abbreviation -> the offsets it stands for in tz database 2025b (never turned into one).
AMBIGUOUS_ZONES: dict[str, tuple[str, ...]] = {
    "PST": ("-08:00", "+08:00"),
    "CST": ("-06:00", "-05:00", "+08:00"),
    "CDT": ("-05:00", "-04:00"),
    "IST": ("+01:00", "+02:00", "+05:30"),
}

_NUMERIC_RE = re.compile(r"^(?P<sign>[+-])(?P<hh>\d{2}):?(?P<mm>\d{2})?$")


def zone_offset(zone: str) -> tuple[str | None, str | None]:
    """``(offset, None)`` for a zone with one known offset, else ``(None, why)``.

    ``offset`` is ``+HH:MM``; ``why`` says why the zone gives no offset (ambiguous or
    unknown), for the result's warning.
    """
    name = zone.strip()
    numeric = _NUMERIC_RE.match(name)
    if numeric:
        return f"{numeric.group('sign')}{numeric.group('hh')}:{numeric.group('mm') or '00'}", None
    offset = ZONE_OFFSETS.get(name) or ZONE_OFFSETS.get(name.upper())
    if offset is not None:
        return offset, None
    choices = AMBIGUOUS_ZONES.get(name.upper())
    if choices is not None:
        return None, f"time zone {name!r} is ambiguous (it stands for {', '.join(choices)} in the tz database)"
    return None, f"time zone {name!r} is not one this collection knows an offset for"
