# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Decoding iperf3 ``-J`` text: ``json.loads`` that keeps the 3.7-3.10 ``--bidir`` duplicate keys
under their 3.11 names, and the complete members of a document that was cut (``iperf3_json.py``
reads what these return).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["DUP_BIDIR_KEYS", "REVERSE_SUFFIX", "decode", "duplicate_sums_possible", "salvage_members"]

#: The 3.11 suffix of the server-to-client sums of ``--bidir``.
REVERSE_SUFFIX = "_bidir_reverse"
# Keys iperf3 3.7-3.10 repeat in one object for --bidir (second = server-to-client).
DUP_BIDIR_KEYS = frozenset({"sum", "sum_sent", "sum_received"})
_VERSION_VALUE = '"iperf 3.'
_SENDER_TRUE = re.compile(r'"sender"\s*:\s*true')
_SENDER_FALSE = re.compile(r'"sender"\s*:\s*false')


def duplicate_sums_possible(text: str) -> bool:
    """Cheap test: can ``text`` hold the 3.7-3.10 ``--bidir`` duplicate keys?

    Only iperf3 3.7 to 3.10 write them, and only for ``--bidir``, where one document holds
    streams of both local roles (``"sender": true`` and ``"sender": false``). A document
    without any ``"iperf 3.x"`` version is treated as possibly affected. The scans are
    substring searches, far cheaper than decoding; the slower duplicate-keeping decode is
    paid only when this returns true.
    """
    found_version = False
    affected = False
    pos = text.find(_VERSION_VALUE)
    while pos != -1:
        found_version = True
        cut = pos + len(_VERSION_VALUE)
        digits = text[cut : cut + 3]
        minor = ""
        for char in digits:
            if not char.isdigit():
                break
            minor += char
        if minor and 7 <= int(minor) <= 10:
            affected = True
            break
        pos = text.find(_VERSION_VALUE, cut)
    if found_version and not affected:
        return False
    return _SENDER_TRUE.search(text) is not None and _SENDER_FALSE.search(text) is not None


def _keep_bidir_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    # A key repeats. iperf3 3.7-3.10 --bidir: keep the second sum under the 3.11 name;
    # any other repeated key (e.g. start.target_bitrate of 3.9) keeps its last value.
    obj = {}
    for key, value in pairs:
        if key in obj and key in DUP_BIDIR_KEYS and key + REVERSE_SUFFIX not in obj:
            obj[key + REVERSE_SUFFIX] = value
        else:
            obj[key] = value
    return obj


def decode(text: str) -> Any:
    """``json.loads`` that keeps 3.7-3.10 ``--bidir`` duplicate keys (see the module doc)."""
    if duplicate_sums_possible(text):
        return json.loads(text, object_pairs_hook=_keep_bidir_duplicates)
    return json.loads(text)


_WS = re.compile(r"[ \t\r\n]*")


def _skip_ws(text: str, pos: int) -> int:
    match = _WS.match(text, pos)
    return pos if match is None else match.end()


def salvage_members(text: str) -> dict[str, Any]:
    """Top-level members of a cut JSON object that are complete before the cut.

    A member whose value is a cut array keeps the array's complete items (e.g. the
    ``intervals`` printed before the cut).
    """
    decoder = json.JSONDecoder(object_pairs_hook=_keep_bidir_duplicates)
    out: dict[str, Any] = {}
    text = text.lstrip("\ufeff")
    pos = _skip_ws(text, 0)
    if not text.startswith("{", pos):
        return out
    pos += 1
    while True:
        pos = _skip_ws(text, pos)
        try:
            key, pos = decoder.raw_decode(text, pos)
        except ValueError:
            return out
        pos = _skip_ws(text, pos)
        if not isinstance(key, str) or not text.startswith(":", pos):
            return out
        pos = _skip_ws(text, pos + 1)
        try:
            value, pos = decoder.raw_decode(text, pos)
        except ValueError:
            if text.startswith("[", pos):
                items = _salvage_array(decoder, text, pos + 1)
                if items:
                    out[key] = items
            return out
        out[key] = value
        pos = _skip_ws(text, pos)
        if not text.startswith(",", pos):
            return out
        pos += 1


def _salvage_array(decoder: json.JSONDecoder, text: str, pos: int) -> list[Any]:
    items: list[Any] = []
    while True:
        pos = _skip_ws(text, pos)
        try:
            value, pos = decoder.raw_decode(text, pos)
        except ValueError:
            return items
        items.append(value)
        pos = _skip_ws(text, pos)
        if not text.startswith(",", pos):
            return items
        pos += 1
