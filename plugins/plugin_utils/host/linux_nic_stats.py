# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where a Linux host counts the packets it did not deliver, beyond ``ip -s link``: ``ethtool -S X`` (the driver's
own statistics) and ``tc -s qdisc show dev X`` (the queueing disciplines' drops).

* ``parse_ethtool_stats()`` reads ``ethtool -S`` (a ``NIC statistics:`` title and ``key: value`` lines) into
  ``{key: int}`` with the driver's own key names, none renamed: their meaning differs by driver, and
  ``report/losses.py`` classifies the keys it knows (the table there);
* ``parse_tc_qdisc()`` reads the ``Sent ... (dropped N, overlimits N requeues N)`` line of each qdisc and keeps
  those of the root qdisc (``dropped``, ``overlimits``, ``requeues``: a classful root counts its children's drops
  there) and of the ingress / clsact qdisc (``ingress_dropped``: what a policer dropped on the way in).

A value is an ``int`` printed by the tool, never a guess; the layouts are those of the recordings in
``tests/fixtures/nic/`` (``SOURCES.md``). Private module: not part of the collection's public API.
"""

from __future__ import annotations

import re

from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.linux_nic import NicParseError

__all__ = ["parse_ethtool_stats", "parse_tc_qdisc"]

_STAT_RE = re.compile(r"^\s+(?P<key>[^:]+?):\s+(?P<value>\d+)\s*$")
_QDISC_RE = re.compile(r"^qdisc\s+(?P<kind>\S+)\s+(?P<handle>\S+)\s*(?P<rest>.*)$")
_SENT_RE = re.compile(
    r"^\s*Sent\s+\d+\s+bytes\s+\d+\s+pkts?\s+\(dropped\s+(?P<dropped>\d+),\s+overlimits\s+(?P<overlimits>\d+)"
    r"\s+requeues\s+(?P<requeues>\d+)\)"
)


def parse_ethtool_stats(text: str) -> dict[str, int]:
    """``{key: value}`` of ``ethtool -S X``; a line whose value is not a whole number is left out (none is known).

    Raises ``NicParseError`` when the output has no ``NIC statistics:`` title (e.g. ``no stats available``: the
    driver exposes none)."""
    lines = text.splitlines()
    titles = [n for n, line in enumerate(lines) if line.strip() == "NIC statistics:"]
    if not titles:
        shown = " ".join(text.split())[:120] or "no output"
        raise NicParseError(f"not the output of ethtool -S (no 'NIC statistics:' line): {shown}")
    stats: dict[str, int] = {}
    for line in lines[titles[0] + 1 :]:
        match = _STAT_RE.match(line)
        if match:
            stats.setdefault(match.group("key").strip(), int(match.group("value")))
    return stats


def parse_tc_qdisc(text: str) -> dict[str, int]:
    """``{dropped, overlimits, requeues, ingress_dropped}`` of ``tc -s qdisc show dev X`` (each key only when the
    qdisc is there: ``ingress_dropped`` needs an ingress or clsact qdisc). Raises ``NicParseError`` when no qdisc
    with its ``Sent`` line is printed."""
    counters: dict[str, int] = {}
    current: str | None = None
    seen = False
    for line in text.splitlines():
        qdisc = _QDISC_RE.match(line)
        if qdisc:
            rest = qdisc.group("rest")
            if qdisc.group("kind") in ("ingress", "clsact"):
                current = "ingress"
            elif re.search(r"(^|\s)root(\s|$)", rest):
                current = "root"
            else:
                current = None  # a child of a classful root: the root counts it
            continue
        sent = _SENT_RE.match(line)
        if sent is None or current is None:
            continue
        seen = True
        if current == "root":
            for key in ("dropped", "overlimits", "requeues"):
                counters[key] = counters.get(key, 0) + int(sent.group(key))
        else:
            counters["ingress_dropped"] = counters.get("ingress_dropped", 0) + int(sent.group("dropped"))
        current = None
    if not seen:
        shown = " ".join(text.split())[:120] or "no output"
        raise NicParseError(f"not the output of tc -s qdisc show (no qdisc with a 'Sent' line): {shown}")
    return counters
