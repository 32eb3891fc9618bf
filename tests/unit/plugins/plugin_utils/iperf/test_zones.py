# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``iperf/zones.py`` against the tz database of this machine (its cited source).

Every zone of ``/usr/share/zoneinfo`` is read week by week from 2019 to 2026; each abbreviation
of the table must be used with exactly its one offset, each ambiguous one with exactly its
listed offsets. A tzdata release that changes either fails here, so the table is revisited.
"""

from __future__ import annotations

import zoneinfo
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from functools import cache

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.zones import (
    AMBIGUOUS_ZONES,
    ZONE_OFFSETS,
    zone_offset,
)

# Offset-zero names from RFC 822 / ISO 8601, not abbreviations of tz database zones.
_NOT_TZDATA = {"UT", "Z"}


def _fmt(delta: timedelta) -> str:
    minutes = int(delta.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


@cache
def _tzdata_offsets() -> dict[str, frozenset[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    names = [n for n in zoneinfo.available_timezones() if not n.startswith(("posix/", "right/", "Etc/"))]
    for name in names:
        zone = zoneinfo.ZoneInfo(name)
        when = datetime(2019, 1, 1, tzinfo=UTC)
        while when.year < 2027:
            local = when.astimezone(zone)
            abbr, offset = local.tzname(), local.utcoffset()
            if abbr and abbr[0].isalpha() and offset is not None:
                found[abbr].add(_fmt(offset))
            when += timedelta(days=7)
    return {abbr: frozenset(offsets) for abbr, offsets in found.items()}


needs_tzdata = pytest.mark.skipif(
    "America/Los_Angeles" not in zoneinfo.available_timezones(), reason="no tz database (apt-get install tzdata)"
)


@needs_tzdata
@pytest.mark.parametrize("abbr", sorted(set(ZONE_OFFSETS) - _NOT_TZDATA))
def test_known_abbreviation_has_one_offset_in_the_tz_database(abbr: str) -> None:
    assert _tzdata_offsets().get(abbr) == frozenset({ZONE_OFFSETS[abbr]})


@needs_tzdata
@pytest.mark.parametrize("abbr", sorted(AMBIGUOUS_ZONES))
def test_ambiguous_abbreviation_has_several_offsets_in_the_tz_database(abbr: str) -> None:
    assert _tzdata_offsets().get(abbr) == frozenset(AMBIGUOUS_ZONES[abbr])


def test_the_table_and_the_ambiguous_list_do_not_overlap() -> None:
    assert not set(ZONE_OFFSETS) & set(AMBIGUOUS_ZONES)


@pytest.mark.parametrize(
    ("zone", "offset"),
    [("PDT", "-07:00"), ("cest", "+02:00"), ("Z", "+00:00"), ("+03", "+03:00"), ("-0930", "-09:30")],
)
def test_zone_offset(zone: str, offset: str) -> None:
    assert zone_offset(zone) == (offset, None)


def test_ambiguous_and_unknown_zones_say_why() -> None:
    offset, why = zone_offset("IST")
    assert offset is None and why is not None and "ambiguous" in why and "+05:30" in why
    offset, why = zone_offset("FOO")
    assert offset is None and why is not None and "'FOO'" in why
