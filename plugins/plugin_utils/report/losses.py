# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where the packets went: which counter deltas of a run are drops, errors, pause frames or ring exhaustion.

A NIC's deltas (``report/nic.py``) carry three name spaces, one per source:

* the kernel's ``rtnl_link_stats64`` names (``rx_dropped``, ``rx_missed_errors``, ...) - Linux ``ip -s -s link``
  and ESXi ``esxcli network nic stats get`` (``esxi/nic.py`` maps ESXi's labels to them);
* ``driver.<key>`` - the driver's own statistics under the driver's key (Linux ``ethtool -S``; ESXi ``localcli ...
  networkinternal nic privstats get``, its per-queue fields summed under the names ``esxi/privstats.py`` gives);
* ``qdisc.<key>`` - the queueing disciplines (Linux ``tc -s qdisc``: ``qdisc.dropped`` of the root qdisc,
  ``qdisc.ingress_dropped`` of a policer on the way in).

``KINDS`` is the table, one row per counter name (a driver key without its ``driver.`` prefix): the same key means
the same thing in the drivers that print it (igb, e1000e, ixgbe, i40e, ice, mlx5, virtio_net, veth, bnxt).
A key in no row - and every per-queue key (``rx_queue_0_drops``, ``rx0_drops``, ``tx_queue_3_packets``: they
repeat the totals) - is kept in the deltas under its raw name and never counted here.

``findings()`` gives, per NIC and kind, the counters that grew during the run; ``loss_line()`` the warning line
(``run 3 dropped 1,204 packets on vmnic1 of esx1 (rx_missed_errors)``).

Plain data; no Ansible import, no I/O. Private module: not part of the collection's public API.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["KINDS", "KIND_TEXT", "findings", "kind_of", "loss_line"]

#: The kinds in the order they are told, with the verb of the warning line.
KIND_TEXT = {
    "drop": "dropped {count} packets",
    "ring": "ran out of ring / buffer space {count} times",
    "pause": "counted {count} pause frames",
    "error": "counted {count} errors",
}

#: Counter name (a driver key without ``driver.``) -> kind. Sources: the kernel's ``if_link.h`` comments for the
#: rtnl names; the drivers' ``ethtool -S`` tables (igb ``igb_ethtool.c``, e1000e ``ethtool.c``, ixgbe
#: ``ixgbe_ethtool.c``, i40e ``i40e_ethtool.c``, mlx5 ``en_stats.c``, virtio_net, veth), the recordings in
#: ``tests/fixtures/nic/`` and, for ESXi's driver private statistics (names given by ``esxi/privstats.py``), the
#: privstats recordings in ``tests/fixtures/esxi/``.
KINDS: dict[str, str] = {
    # packets dropped (the host or the NIC had them and threw them away)
    "rx_dropped": "drop",
    "tx_dropped": "drop",
    "rx_drops": "drop",  # virtio_net
    "tx_drops": "drop",
    "rx_discards": "drop",
    "tx_discards": "drop",
    "rx_discards_phy": "drop",  # mlx5: the port dropped for lack of host buffers
    "tx_discards_phy": "drop",
    "rx_dropped_link_down": "drop",  # i40e
    "tx_dropped_link_down": "drop",
    "rx_xdp_drops": "drop",  # virtio_net: dropped by an XDP program
    "tx_xdp_tx_drops": "drop",
    "tx_queue_dropped": "drop",  # ESXi Intel privstats: pktDropped summed over the TX queues
    "qdisc.dropped": "drop",  # tc: the root qdisc (shaper, queue limit)
    "qdisc.ingress_dropped": "drop",  # tc: an ingress policer
    # ring / buffer exhaustion (the NIC had no descriptor or FIFO space for a packet)
    "rx_missed_errors": "ring",
    "rx_no_buffer_count": "ring",  # igb, e1000e, ixgbe
    "rx_fifo_errors": "ring",
    "rx_over_errors": "ring",
    "tx_fifo_errors": "ring",
    "rx_no_dma_resources": "ring",  # igb, ixgbe
    "alloc_rx_buff_failed": "ring",
    "alloc_rx_page_failed": "ring",
    "rx_out_of_buffer": "ring",  # mlx5
    "rx_buff_alloc_err": "ring",  # mlx5
    "tx_busy": "ring",  # ixgbe: the TX ring was full
    "tx_restart_queue": "ring",  # igb, ixgbe: the TX queue was stopped when its ring was full
    "tx_queue_stopped": "ring",
    "tx_queue_full": "ring",  # ESXi Intel privstats: queueFull summed over the TX queues (esxi/privstats.py)
    "rx_alloc_buf_failed": "ring",  # ESXi Intel privstats: allocRxBufFail summed over the RX queues
    # pause frames (IEEE 802.3x flow control and priority flow control)
    "rx_pause": "pause",
    "tx_pause": "pause",
    "rx_pause_ctrl_phy": "pause",  # mlx5
    "tx_pause_ctrl_phy": "pause",
    "rx_flow_control_xon": "pause",  # igb, e1000e, ixgbe
    "rx_flow_control_xoff": "pause",
    "tx_flow_control_xon": "pause",
    "tx_flow_control_xoff": "pause",
    "link_xon_rx": "pause",  # i40e, ice
    "link_xoff_rx": "pause",
    "link_xon_tx": "pause",
    "link_xoff_tx": "pause",
    "rx_xon_pause_rcvd": "pause",  # tg3
    "rx_xoff_pause_rcvd": "pause",
    "tx_xon_sent": "pause",
    "tx_xoff_sent": "pause",
    "rx_pause_frames": "pause",
    "tx_pause_frames": "pause",
    # errors (a frame arrived or left broken)
    "rx_errors": "error",
    "tx_errors": "error",
    "rx_crc_errors": "error",
    "rx_frame_errors": "error",
    "rx_length_errors": "error",
    "rx_long_length_errors": "error",
    "rx_short_length_errors": "error",
    "rx_align_errors": "error",
    "rx_fcs_errors": "error",
    "rx_jabbers": "error",
    "tx_aborted_errors": "error",
    "tx_carrier_errors": "error",
    "tx_heartbeat_errors": "error",
    "tx_window_errors": "error",
    "tx_timeout_count": "error",
    "tx_tx_timeouts": "error",  # virtio_net
    "rx_csum_offload_errors": "error",
    "rx_csum_errors": "error",  # ESXi Intel privstats: csumErr summed over the RX queues
}
# Per-priority pause (PFC) counters: mlx5 and others rx_prio3_pause / tx_prio3_pause; i40e and ESXi Intel privstats
# (``PFC TC[3]: RxXon=...``) priority_3_xon_rx / priority_3_xoff_tx.
_PRIO_PAUSE = re.compile(r"^(rx|tx)_prio\d+_pause$|^priority_\d+_(xon|xoff)_(rx|tx)$")
# Per-queue repeats of the totals: rx_queue_0_drops, tx_queue_3_packets, rx0_drops, tx1_kicks.
_PER_QUEUE = re.compile(r"^(rx|tx)(_queue)?_?\d+_")


def kind_of(name: str) -> str | None:
    """The kind of a delta's counter name (``rx_missed_errors``, ``driver.rx_no_buffer_count``,
    ``qdisc.dropped``), or ``None`` when the table does not know it (it stays raw)."""
    if name.startswith("qdisc."):
        return KINDS.get(name)
    key = name.removeprefix("driver.")
    if _PER_QUEUE.match(key):
        return None
    if _PRIO_PAUSE.match(key):
        return "pause"
    return KINDS.get(key)


def findings(deltas: Mapping[str, int | None]) -> list[dict[str, Any]]:
    """``[{kind, count, counters: {name: delta}}]`` of one NIC's deltas, in ``KIND_TEXT`` order: the counters of a
    kind that grew. ``count`` is the largest of them (the sources overlap - ``rx_dropped`` and ``driver.rx_dropped``
    count the same packets - so they are never added up)."""
    grown: dict[str, dict[str, int]] = {}
    for name, value in deltas.items():
        kind = kind_of(name)
        if kind is not None and isinstance(value, int) and value > 0:
            grown.setdefault(kind, {})[name] = value
    return [
        {"kind": kind, "count": max(grown[kind].values()), "counters": dict(sorted(grown[kind].items()))}
        for kind in KIND_TEXT
        if kind in grown
    ]


def loss_line(where: str, host: str, nic: str, finding: Mapping[str, Any]) -> str:
    """``run 3 dropped 1,204 packets on vmnic1 of esx1 (rx_missed_errors)`` (``where``: ``run 3``); several counters
    are each named with their delta."""
    counters: Mapping[str, int] = finding["counters"]
    if len(counters) == 1:
        detail = next(iter(counters))
    else:
        detail = ", ".join(f"{name} {value:,}" for name, value in counters.items())
    text = KIND_TEXT[finding["kind"]].format(count=f"{finding['count']:,}")
    return f"{where} {text} on {nic} of {host} ({detail})"
