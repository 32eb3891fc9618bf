# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Frame size, UDP payload and rates: the one place for the arithmetic of the rate search.

A **frame size** is the Ethernet frame as RFC 2544 counts it: destination and source MAC, EtherType,
the IPv4 packet and the FCS - 64 to 1518 bytes on a 1500-byte MTU, without VLAN tag, preamble or
inter-frame gap. Its UDP payload (iperf's ``-l``) is the frame less 46 bytes: Ethernet header 14,
FCS 4, IPv4 header 20 (no options), UDP header 8. So 64 -> 18, 1518 -> 1472 (MTU 1500), 9018 -> 8972
(MTU 9000). The largest frame a path carries unfragmented is its MTU + 18.

Rates: the search offers a **frame rate** (bits of whole frames per second, ``rate_mbps``); iperf is
given the **payload rate** (``-b``, what iperf counts) of the same packets per second. On the wire each
frame also takes 20 bytes of preamble and gap (``WIRE_EXTRA``): a 1 Gbit/s link carries at most
1e9 / ((F + 20) * 8) frames of F bytes per second (1 488 095 at 64 bytes).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

__all__ = [
    "ETHERNET_HEADER",
    "FCS",
    "FRAME_OVERHEAD",
    "IPV4_HEADER",
    "MIN_FRAME",
    "UDP_HEADER",
    "WIRE_EXTRA",
    "frame_mbps",
    "max_frame",
    "packets_per_second",
    "payload_bps",
    "payload_of",
]

ETHERNET_HEADER = 14
FCS = 4
IPV4_HEADER = 20
UDP_HEADER = 8
FRAME_OVERHEAD = ETHERNET_HEADER + FCS + IPV4_HEADER + UDP_HEADER  # 46
WIRE_EXTRA = 20  # preamble + start delimiter 8, inter-frame gap 12
MIN_FRAME = 64  # Ethernet's minimum frame (18 bytes of UDP payload)


def payload_of(frame: int) -> int:
    """The UDP payload (iperf's ``-l``) of a frame of ``frame`` bytes."""
    return frame - FRAME_OVERHEAD


def max_frame(mtu: int) -> int:
    """The largest frame (with FCS) of an IPv4 packet of ``mtu`` bytes."""
    return mtu + ETHERNET_HEADER + FCS


def payload_bps(frame_rate_mbps: float, frame: int) -> int:
    """iperf's ``-b`` (payload bits/s, a whole number) for a frame rate of ``frame_rate_mbps`` at ``frame`` bytes."""
    return round(frame_rate_mbps * 1e6 * payload_of(frame) / frame)


def packets_per_second(payload_rate_bps: float, frame: int) -> float:
    """Packets (frames) per second of a payload rate at ``frame`` bytes."""
    return payload_rate_bps / (payload_of(frame) * 8)


def frame_mbps(payload_rate_bps: float, frame: int) -> float:
    """The frame rate in Mbit/s (whole frames with FCS) of a payload rate at ``frame`` bytes."""
    return packets_per_second(payload_rate_bps, frame) * frame * 8 / 1e6
