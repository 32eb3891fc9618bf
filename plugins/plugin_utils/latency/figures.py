# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``latency`` of a client result: the idle and the loaded ping outputs read into figures, raw output kept.

Every figure is read from the ping's own output or ``None`` (``samples.py``): percentiles need enough replies,
a loss needs the ping's summary. ``p50_increase_ms`` is the loaded p50 minus the idle p50 (``None`` when either is).

Plain data in, plain data out. Private module: not part of the collection's public API.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import LatencyFigures, LatencyWindow
from ansible_collections.esxilab.iperf.plugins.plugin_utils.latency.samples import nearest_rank, parse_samples

__all__ = ["PERCENTILES", "latency_figures", "window_figures"]

#: The percentiles of each window (``p50_ms``, ``p90_ms``, ``p99_ms``) and the maximum.
PERCENTILES = (50, 90, 99)


def window_figures(raw: str, *, command: list[str] | None, seconds: float, rc: str | None = None) -> LatencyWindow:
    """One window's figures from its ping output (``raw``, kept as it is)."""
    found = parse_samples(raw)
    rtts = found.rtts_ms
    error = None
    if command is not None and not rtts:
        shown = next((line.strip() for line in raw.splitlines() if line.strip()), "no output")[:200]
        error = f"no reply to any probe ({shown})" if found.transmitted else f"the ping printed no reply: {shown}"
    lost = found.lost
    window: LatencyWindow = {
        "command": shlex.join(command) if command is not None else None,
        "seconds": round(float(seconds), 3),
        "rc": int(rc) if rc is not None and rc.lstrip("-").isdigit() else None,
        "transmitted": found.transmitted,
        "received": found.received,
        "duplicates": found.duplicates,
        "lost": lost,
        "lost_percent": round(100.0 * lost / found.transmitted, 3) if lost is not None and found.transmitted else None,
        "cut": found.cut and command is not None,
        "samples": len(rtts),
        "min_ms": min(rtts) if rtts else None,
        "p50_ms": nearest_rank(rtts, 50),
        "p90_ms": nearest_rank(rtts, 90),
        "p99_ms": nearest_rank(rtts, 99),
        "max_ms": max(rtts) if rtts else None,
        "error": error,
        "raw": raw,
    }
    return window


def _increase(idle: LatencyWindow | None, loaded: LatencyWindow) -> float | None:
    if idle is None or idle["p50_ms"] is None or loaded["p50_ms"] is None:
        return None
    return round(loaded["p50_ms"] - idle["p50_ms"], 3)


def latency_figures(
    planned: Mapping[str, Any], *, tool: str, target: str, idle: tuple[str, str], loaded: tuple[str, str]
) -> LatencyFigures:
    """The ``latency`` of a client result from ``shell.plan()``'s ``planned`` and the two sections (args, text)."""
    idle_window = None
    if planned["idle_argv"] is not None:
        idle_window = window_figures(
            idle[1], command=planned["idle_argv"], seconds=planned["idle_seconds"], rc=_rc(idle[0])
        )
    loaded_window = window_figures(
        loaded[1], command=planned["loaded_argv"], seconds=planned["loaded_seconds"], rc=_rc(loaded[0])
    )
    return {
        "tool": tool,
        "target": target,
        "interface": planned["interface"],
        "interval": planned["interval"],
        "idle": idle_window,
        "loaded": loaded_window,
        "p50_increase_ms": _increase(idle_window, loaded_window),
    }


def _rc(args: str) -> str | None:
    for word in args.split():
        if word.startswith("rc="):
            return word[3:] or None
    return None
