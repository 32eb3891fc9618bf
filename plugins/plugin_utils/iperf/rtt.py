# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""TCP round-trip times of the sending streams (iperf3 JSON), per stream and summed up.

iperf3 reads the kernel's ``TCP_INFO`` of each socket it *sends* on and prints, in µs:

* per interval stream: ``rtt`` (the smoothed RTT, ``tcpi_rtt``) and ``rttvar`` (3.2+);
* per ``end.streams[].sender``: ``min_rtt``, ``mean_rtt``, ``max_rtt`` over the test (3.1+).

The result carries (all whole µs, each ``None`` when not printed):

* ``per_stream[].rtt`` = ``{"rtt_us", "min_us", "mean_us", "max_us", "var_us"}``: ``rtt_us`` and
  ``var_us`` are the stream's values in its **last** interval (the latest smoothed RTT),
  ``min_us``/``mean_us``/``max_us`` those of its end summary; ``None`` as a whole for a stream
  this host did not send (a receiver has no RTT of the data path: iperf3 prints zeros for it);
* ``rtt`` (top level) = ``{"min_us", "mean_us", "max_us"}`` over every stream this host sent:
  the smallest ``min_us``, the **unweighted mean of the streams' ``mean_us``** (rounded to a
  whole µs), the largest ``max_us``; ``None`` when no stream has a figure.

A ``0`` is iperf3's "TCP_INFO could not be read" (its counters start at 0; a real RTT is never
0 µs) and becomes ``None``. When the sender's ``TCP_INFO`` cannot be trusted at all (ESXi's
iperf3, the rule retransmits follow: ``iperf3_json.untrusted_retransmits``, and ``iperf_run``'s
``peer_is_esxi`` / ``getsockopt`` checks), ``drop_rtt()`` sets every RTT figure to ``None``.
iperf3's text output (also ``-V`` and ``--get-server-output``, 3.0-3.21) prints no RTT, and
iperf2's is not read yet: their results have ``rtt`` ``None``.

Pure Python (stdlib only). Private module: not part of the collection's public API.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, cast

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import RttFigures, RttSummary, StreamTotals

__all__ = ["drop_rtt", "stream_rtt", "summarize_rtt"]


def _us(value: Any) -> int | None:
    """A printed RTT in µs, or ``None`` (absent, not a number, negative, or iperf3's unread 0)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if math.isnan(value) or value <= 0 or math.isinf(value):
        return None
    return round(value)


def stream_rtt(sender: Mapping[str, Any], last_interval: Mapping[str, Any] | None) -> RttFigures | None:
    """The RTT figures of one sending stream: its end ``sender`` object and its last interval entry."""
    last = last_interval or {}
    figures: RttFigures = {
        "rtt_us": _us(last.get("rtt")),
        "min_us": _us(sender.get("min_rtt")),
        "mean_us": _us(sender.get("mean_rtt")),
        "max_us": _us(sender.get("max_rtt")),
        "var_us": _us(last.get("rttvar")),
    }
    return figures if any(v is not None for v in figures.values()) else None


def summarize_rtt(streams: Iterable[StreamTotals]) -> RttSummary | None:
    """Min of the streams' ``min_us``, mean of their ``mean_us``, max of their ``max_us`` (see the module doc)."""
    found = [item["rtt"] for item in streams if item.get("rtt")]
    figures = [f for f in found if f is not None]
    mins = [f["min_us"] for f in figures if f["min_us"] is not None]
    means = [f["mean_us"] for f in figures if f["mean_us"] is not None]
    maxes = [f["max_us"] for f in figures if f["max_us"] is not None]
    if not (mins or means or maxes):
        return None
    return {
        "min_us": min(mins) if mins else None,
        "mean_us": round(sum(means) / len(means)) if means else None,
        "max_us": max(maxes) if maxes else None,
    }


def drop_rtt(result: Mapping[str, Any], per_stream_keys: Iterable[str] = ("per_stream", "reverse_per_stream")) -> bool:
    """Set the RTT of the named per-stream lists to ``None`` and recompute ``rtt``; True if any was set.

    Takes the result as plain data (``iperf_run`` calls it on results that came back through Ansible).
    """
    had_any = False
    for key in per_stream_keys:
        for item in result.get(key) or []:
            if isinstance(item, dict) and item.get("rtt") is not None:
                item["rtt"] = None
                had_any = True
    if had_any and isinstance(result, dict):
        streams = [*(result.get("per_stream") or []), *(result.get("reverse_per_stream") or [])]
        result["rtt"] = summarize_rtt(cast("StreamTotals", item) for item in streams if isinstance(item, dict))
    return had_any
