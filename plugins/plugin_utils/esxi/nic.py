# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What ``esxcli network nic stats get -n vmnicN`` and ``esxcli network nic get -n vmnicN`` print.

``parse_nic_stats()`` reads the counters block (``NIC statistics for vmnic2`` and indented
``Packets received: 701280499176`` lines) into the counter names of the Linux kernel's
``rtnl_link_stats64`` (``rx_dropped``, ``tx_errors``, ``rx_crc_errors``, ...), the names
``_nic`` and the report use for every host. A counter is an ``int`` read from its line, or absent
(a line the output does not have - e.g. an output cut by ``grep`` - is not guessed); a line this
module does not know is kept under ``other`` with its text.

``parse_nic_get()`` reads the driver and firmware from ``Driver Info:`` (``Driver``, ``Firmware
Version``, ``Version``, ``Bus Info``) and the link and pause settings; every other field is kept
under ``fields`` as printed. ``esxcli network nic get`` prints no pause *counters*: ``Pause RX`` /
``Pause TX`` are settings (flow control on or off).

The layouts are those of the recordings in ``tests/fixtures/esxi/``
(``*network-nic-stats-get*``, ``*network-nic-get*``; ESXi 6.0.0 and 9.0.0 outputs, others with the
version unstated). Private module: not part of the collection's public API.
"""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import EsxiParseError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.tables import parse_bool

__all__ = ["NIC_STATS_FIELDS", "parse_nic_get", "parse_nic_stats"]

#: ``esxcli network nic stats get`` line label -> counter name (the Linux rtnl_link_stats64 names).
NIC_STATS_FIELDS: dict[str, str] = {
    "Packets received": "rx_packets",
    "Packets sent": "tx_packets",
    "Bytes received": "rx_bytes",
    "Bytes sent": "tx_bytes",
    "Receive packets dropped": "rx_dropped",
    "Transmit packets dropped": "tx_dropped",
    "Multicast packets received": "rx_multicast",
    "Broadcast packets received": "rx_broadcast",
    "Multicast packets sent": "tx_multicast",
    "Broadcast packets sent": "tx_broadcast",
    "Total receive errors": "rx_errors",
    "Receive length errors": "rx_length_errors",
    "Receive over errors": "rx_over_errors",
    "Receive CRC errors": "rx_crc_errors",
    "Receive frame errors": "rx_frame_errors",
    "Receive FIFO errors": "rx_fifo_errors",
    "Receive missed errors": "rx_missed_errors",
    "Total transmit errors": "tx_errors",
    "Transmit aborted errors": "tx_aborted_errors",
    "Transmit carrier errors": "tx_carrier_errors",
    "Transmit FIFO errors": "tx_fifo_errors",
    "Transmit heartbeat errors": "tx_heartbeat_errors",
    "Transmit window errors": "tx_window_errors",
}

_TITLE_RE = re.compile(r"^NIC statistics for (?P<nic>\S+)\s*$")
_LINE_RE = re.compile(r"^(?P<indent>[ \t]+)(?P<label>[A-Za-z][A-Za-z0-9 ()/_.-]*?):[ \t]*(?P<value>.*?)[ \t]*$")
_COUNT_RE = re.compile(r"\d+")


def parse_nic_stats(text: str) -> dict[str, Any]:
    """``{nic, counters, other}`` of one ``esxcli network nic stats get -n vmnicN`` output.

    ``nic`` is the name of the title line (``None`` when the output has none, e.g. one filtered
    with ``grep``); ``counters`` maps counter names to the integers printed; ``other`` maps a line
    whose label is not in ``NIC_STATS_FIELDS``, or whose value is not a whole number, to its text.
    Raises ``EsxiParseError`` when no counter line is found at all.
    """
    nic: str | None = None
    counters: dict[str, int] = {}
    other: dict[str, str] = {}
    for line in text.splitlines():
        title = _TITLE_RE.match(line)
        if title:
            nic = title.group("nic")
            continue
        match = _LINE_RE.match(line)
        if not match:
            continue
        label, value = match.group("label").strip(), match.group("value")
        name = NIC_STATS_FIELDS.get(label)
        if name is not None and _COUNT_RE.fullmatch(value):
            counters.setdefault(name, int(value))
        else:
            other.setdefault(label, value)
    if not counters:
        raise EsxiParseError(
            "no counter line (e.g. 'Receive packets dropped: 0') in the esxcli nic stats output", raw=text
        )
    return {"nic": nic, "counters": counters, "other": other}


def parse_nic_get(text: str) -> dict[str, Any]:
    """``{name, driver, firmware, version, bus_info, link_status, pause_rx, pause_tx, fields}`` of one
    ``esxcli network nic get -n vmnicN`` output.

    The four ``Driver Info:`` items are read from the lines indented below it; ``fields`` holds every
    ``Key: value`` line as printed (the ``Driver Info`` items as ``Driver Info/Driver`` ...). Text fields
    that are empty are ``None``. Raises ``EsxiParseError`` when neither a name nor a driver is printed.
    """
    fields: dict[str, str] = {}
    parent: tuple[int, str] | None = None
    for line in text.splitlines():
        match = _LINE_RE.match(line)
        if not match:
            parent = None if line.strip() else parent
            continue
        indent = len(match.group("indent").expandtabs())
        label, value = match.group("label").strip(), match.group("value")
        if parent is not None and indent > parent[0]:
            fields.setdefault(f"{parent[1]}/{label}", value)
            continue
        parent = (indent, label) if not value else None
        fields.setdefault(label, value)

    def text_of(key: str) -> str | None:
        value = fields.get(key)
        return value if value else None

    result: dict[str, Any] = {
        "name": text_of("Name"),
        "driver": text_of("Driver Info/Driver"),
        "firmware": text_of("Driver Info/Firmware Version"),
        "version": text_of("Driver Info/Version"),
        "bus_info": text_of("Driver Info/Bus Info"),
        "link_status": text_of("Link Status"),
        "pause_rx": parse_bool(fields.get("Pause RX")),
        "pause_tx": parse_bool(fields.get("Pause TX")),
        "fields": fields,
    }
    if result["name"] is None and result["driver"] is None:
        raise EsxiParseError("no 'Name:' or 'Driver Info:' field in the esxcli nic get output", raw=text)
    return result
