# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What ``localcli --plugin-dir /usr/lib/vmware/esxcli/int networkinternal nic privstats get -n vmnicN`` prints:
the NIC driver's private statistics, where ring exhaustion and pause frames are counted.

Only the layout recorded from real hosts is read (``tests/fixtures/esxi/*networkinternal-nic-privstats-get*``,
Intel drivers; provenance in that directory's ``SOURCES.md``):

* per-queue lines ``txq0: totalPkts=17 totalBytes=1030 restartQueue=0 txBusy=0 queueFull=0 pktDropped=0`` and
  ``rxq0: totalPkts=30009 totalBytes=1801559 nonEopDescs=0 allocRxBufFail=0 csumErr=0`` - each field is summed
  over the queues of its direction (the report counts totals, never per-queue repeats);
* ``LFC:`` link flow control (802.3x pause) - ``RxXon: 0``, ``RxXoff: 0``, ``TxXon: 0``, ``TxXoff: 0``, on the
  ``LFC:`` line or below it;
* ``PFC TC[n]: RxXon=0 RxXoff=0 TxXon=0 TxXoff=0 Xon2Xoff=0`` - priority flow control per traffic class;
* ``Packets assigned to an invalid queue: 0`` and ``Rx Length Errors: 0``.

The names are those the report's classification (``report/losses.py`` ``KINDS``) knows, Linux i40e's where it has
one for the same counter (``link_xon_rx``, ``priority_3_xoff_tx``, ``tx_restart_queue``, ``tx_busy``,
``rx_length_errors``); see ``PRIVSTATS_FIELDS``. A line of any other layout - another driver prints other lines,
and none of those is recorded - is not read: it stays in the raw text only, and an output without one line of the
recorded layout raises ``EsxiParseError`` (the collection then says the private statistics were not read; nothing
is guessed from key names).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import re

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import EsxiParseError

__all__ = ["PRIVSTATS_COMMAND", "PRIVSTATS_FIELDS", "parse_privstats"]

#: The command, as run on the host (``-n <vmnic>`` appended); ``localcli`` because the ``networkinternal``
#: namespace lives in an internal plugin directory that ``esxcli`` (hostd) does not load.
PRIVSTATS_COMMAND = "localcli --plugin-dir /usr/lib/vmware/esxcli/int networkinternal nic privstats get -n"

#: ``(direction, field)`` of a per-queue line -> the total's name; a field not listed is summed under
#: ``<direction>_<field in snake case>`` (``tx_total_pkts``), which no kind counts.
PRIVSTATS_FIELDS: dict[tuple[str, str], str] = {
    ("tx", "restartQueue"): "tx_restart_queue",  # the queue was stopped and restarted (ring full): ring
    ("tx", "txBusy"): "tx_busy",  # the ring had no free descriptor: ring
    ("tx", "queueFull"): "tx_queue_full",  # ring
    ("tx", "pktDropped"): "tx_queue_dropped",  # drop
    ("rx", "allocRxBufFail"): "rx_alloc_buf_failed",  # no receive buffer could be allocated: ring
    ("rx", "csumErr"): "rx_csum_errors",  # error
    ("rx", "nonEopDescs"): "rx_non_eop_descs",  # a frame spanning several descriptors: not a loss
}
#: ``LFC:`` / ``PFC TC[n]:`` item -> the name's suffix (Linux i40e's ``link_xon_rx``, ``priority_0_xon_rx``).
_FLOW_ITEMS = {"RxXon": "xon_rx", "RxXoff": "xoff_rx", "TxXon": "xon_tx", "TxXoff": "xoff_tx", "Xon2Xoff": "xon_2_xoff"}
#: Single ``Label: N`` lines of the recorded layout.
_LINES = {"Packets assigned to an invalid queue": "rx_invalid_queue_packets", "Rx Length Errors": "rx_length_errors"}

_QUEUE_RE = re.compile(r"^\s*(?P<dir>tx|rx)q(?P<q>\d+):(?P<fields>(?:\s+[A-Za-z]\w*=\d+)+)\s*$")
_FIELD_RE = re.compile(r"([A-Za-z]\w*)=(\d+)")
_LFC_RE = re.compile(r"^(?P<item>RxXon|RxXoff|TxXon|TxXoff):\s*(?P<value>\d+)$")
_PFC_RE = re.compile(r"^\s*PFC TC\[(?P<tc>\d+)\]:(?P<fields>(?:\s+[A-Za-z]\w*=\d+)+)\s*$")
_LINE_RE = re.compile(r"^\s*(?P<label>[A-Za-z][A-Za-z ]*?):\s*(?P<value>\d+)\s*$")
_SNAKE_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _snake(name: str) -> str:
    return _SNAKE_RE.sub("_", name).lower()


def parse_privstats(text: str) -> dict[str, int]:
    """The driver counters of one privstats output (see the module doc), ``{name: int}``.

    Raises ``EsxiParseError`` when the output holds no line of the recorded layout (another driver's, an error
    message, nothing)."""
    counters: dict[str, int] = {}
    in_lfc = False
    read = 0
    for line in text.splitlines():
        stripped = line.strip()
        queue = _QUEUE_RE.match(line)
        if queue:
            direction = queue.group("dir")
            for field, value in _FIELD_RE.findall(queue.group("fields")):
                name = PRIVSTATS_FIELDS.get((direction, field), f"{direction}_{_snake(field)}")
                counters[name] = counters.get(name, 0) + int(value)
            read += 1
            continue
        pfc = _PFC_RE.match(line)
        if pfc:
            for item, value in _FIELD_RE.findall(pfc.group("fields")):
                if item in _FLOW_ITEMS:
                    counters[f"priority_{int(pfc.group('tc'))}_{_FLOW_ITEMS[item]}"] = int(value)
            read += 1
            continue
        if stripped.startswith("LFC:"):  # the block's first item may be on its title line
            in_lfc, stripped = True, stripped[len("LFC:") :].strip()
            if not stripped:
                continue
        lfc = _LFC_RE.match(stripped) if in_lfc else None
        if lfc:
            counters[f"link_{_FLOW_ITEMS[lfc.group('item')]}"] = int(lfc.group("value"))
            read += 1
            continue
        in_lfc = False
        single = _LINE_RE.match(line)
        if single and single.group("label").strip() in _LINES:
            counters[_LINES[single.group("label").strip()]] = int(single.group("value"))
            read += 1
    if not read:
        raise EsxiParseError(
            "no line of the recorded privstats layout (e.g. 'txq0: totalPkts=... pktDropped=0', 'LFC:', "
            "'PFC TC[0]: ...') in the output",
            raw=text,
        )
    return counters
