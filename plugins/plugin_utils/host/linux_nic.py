# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a Linux host prints about one network interface: ``ip -s -s [-j] link show dev X``, ``ethtool -i X``.

The counters get the names of the kernel's ``rtnl_link_stats64`` (``rx_dropped``, ``tx_errors``,
``rx_crc_errors``, ...), as ``esxi/nic.py`` gives ESXi's, so the report treats both hosts alike.

* ``parse_ip_link_json()`` reads iproute2's JSON (``stats64.rx`` / ``stats64.tx``; ``-s -s`` adds the
  error details);
* ``parse_ip_link_text()`` reads the text form (an ``ip`` without ``-j``): the ``RX:`` / ``TX:`` /
  ``RX errors:`` / ``TX errors:`` header lines and the numbers under them, by column name;
* ``parse_ethtool_info()`` reads ``ethtool -i`` (``driver``, ``version``, ``firmware-version``,
  ``bus-info``, the rest kept).

A counter is an ``int`` read from the output or absent; a column this module does not know is kept
under ``other``. Layouts: the recordings in ``tests/fixtures/esxi/``
(``linux-iproute2-6.1.0__*``, ``*ethtool-i*``). Private module: not part of the public API.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["NicParseError", "parse_ethtool_info", "parse_ip_link_json", "parse_ip_link_text"]


class NicParseError(ValueError):
    """The text is not an output this module reads."""


# iproute2 JSON key (under stats64.rx / stats64.tx) -> counter name; the rest is f"{rx|tx}_{key}".
_JSON_NAMES = {
    ("rx", "multicast"): "rx_multicast",
    ("rx", "missed"): "rx_missed_errors",
    ("tx", "collisions"): "tx_collisions",
    ("tx", "carrier_changes"): "carrier_changes",
}
# iproute2 text column -> counter name suffix (rx_/tx_ prefixed by the header it is under).
_TEXT_COLUMNS = {
    "bytes": "bytes",
    "packets": "packets",
    "errors": "errors",
    "dropped": "dropped",
    "missed": "missed_errors",
    "mcast": "multicast",
    "overrun": "over_errors",
    "length": "length_errors",
    "crc": "crc_errors",
    "frame": "frame_errors",
    "fifo": "fifo_errors",
    "carrier": "carrier_errors",
    "collsns": "collisions",
    "aborted": "aborted_errors",
    "window": "window_errors",
    "heartbt": "heartbeat_errors",
    "transns": "carrier_changes",
    "compressed": "compressed",
    "nohandler": "nohandler",
    "otherhost": "otherhost",
}
_HEADER_RE = re.compile(r"^\s*(?P<dir>RX|TX)(?P<errors> errors)?:\s+(?P<columns>.*?)\s*$")


def parse_ip_link_json(text: str) -> dict[str, Any]:
    """``{interface, mtu, operstate, counters, other}`` from ``ip -s [-s] -j link show dev X``."""
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise NicParseError(f"not the JSON of ip -j link ({exc})") from None
    link = document[0] if isinstance(document, list) and document else document
    if not isinstance(link, Mapping) or not isinstance(link.get("ifname"), str):
        raise NicParseError("the JSON of ip -j link has no interface (ifname)")
    counters: dict[str, int] = {}
    other: dict[str, Any] = {}
    stats = link.get("stats64") if isinstance(link.get("stats64"), Mapping) else link.get("stats")
    for direction in ("rx", "tx"):
        block = stats.get(direction) if isinstance(stats, Mapping) else None
        for key, value in (block or {}).items() if isinstance(block, Mapping) else ():
            name = _JSON_NAMES.get((direction, key), f"{direction}_{key}")
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                counters[name] = value
            else:
                other[name] = value
    if not counters:
        raise NicParseError(f"ip -j link printed no counters for {link['ifname']} (run it with -s)")
    mtu = link.get("mtu")
    return {
        "interface": link["ifname"],
        "mtu": mtu if isinstance(mtu, int) else None,
        "operstate": link.get("operstate") if isinstance(link.get("operstate"), str) else None,
        "counters": counters,
        "other": other,
    }


def parse_ip_link_text(text: str) -> dict[str, Any]:
    """``{interface, mtu, operstate, counters, other}`` from ``ip -s [-s] link show dev X`` (no ``-j``)."""
    lines = text.splitlines()
    first = re.match(r"^\d+:\s+(?P<name>[^:@\s]+)(?:@\S+)?:\s+<[^>]*>(?P<rest>.*)$", lines[0] if lines else "")
    if not first:
        raise NicParseError("not the output of ip -s link show (no '<index>: <name>: <FLAGS>' line)")
    rest = first.group("rest")
    mtu = re.search(r"\bmtu (\d+)", rest)
    state = re.search(r"\bstate (\S+)", rest)
    counters: dict[str, int] = {}
    other: dict[str, str] = {}
    for index, line in enumerate(lines[:-1]):
        header = _HEADER_RE.match(line)
        if not header:
            continue
        direction = header.group("dir").lower()
        columns = header.group("columns").split()
        values = lines[index + 1].split()
        for column, value in zip(columns, values, strict=False):
            suffix = _TEXT_COLUMNS.get(column)
            name = f"{direction}_{suffix}" if suffix and suffix != "carrier_changes" else suffix
            if name is None:
                other[f"{direction} {column}"] = value
            elif value.isdigit():
                counters.setdefault(name, int(value))
            else:
                other[name] = value
    if not counters:
        raise NicParseError(f"ip link printed no counters for {first.group('name')} (run it with -s)")
    return {
        "interface": first.group("name"),
        "mtu": int(mtu.group(1)) if mtu else None,
        "operstate": state.group(1) if state else None,
        "counters": counters,
        "other": other,
    }


def parse_ethtool_info(text: str) -> dict[str, Any]:
    """``{driver, version, firmware, bus_info, fields}`` from ``ethtool -i X`` (empty values are ``None``)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and re.fullmatch(r"[a-z][a-z-]*", key.strip()):
            fields.setdefault(key.strip(), value.strip())
    if "driver" not in fields:
        raise NicParseError("not the output of ethtool -i (no 'driver:' line)")

    def text_of(key: str) -> str | None:
        return fields.get(key) or None

    return {
        "driver": text_of("driver"),
        "version": text_of("version"),
        "firmware": text_of("firmware-version"),
        "bus_info": text_of("bus-info"),
        "fields": fields,
    }
