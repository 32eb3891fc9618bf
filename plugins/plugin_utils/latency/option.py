# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``latency`` option: one reader for the ``paired_test`` setting and the ``iperf_run`` option.

``latency: true`` (or ``{}``) pings every ``DEFAULT_INTERVAL`` s; a dictionary sets ``interval`` (seconds between
probes, ``MIN_INTERVAL`` to ``MAX_INTERVAL``) and ``idle`` (seconds of the idle window before the transfer;
unset - as long as the transfer, ``duration`` + ``omit``). ``iperf_run`` also takes ``interface`` (``vmkping -I``
on ESXi, ``ping -I`` on Linux; the paired tests fill it in from the host's link speed facts). ``false`` or null:
no ping. Plain data in, plain data out: ``None`` or ``{"interval", "idle"[, "interface"]}``.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "DEFAULT_INTERVAL",
    "MAX_IDLE",
    "MAX_INTERVAL",
    "MIN_INTERVAL",
    "LatencyOptionError",
    "idle_seconds",
    "read_latency",
]

DEFAULT_INTERVAL = 0.2  # the shortest interval iputils ping allows an unprivileged user before 20210202
MIN_INTERVAL = 0.01
MAX_INTERVAL = 10.0
MAX_IDLE = 3600.0
_KEYS = ("interval", "idle")
_INTERFACE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:%-]*$")
_FIX = "set latency to true, false or a dictionary such as {interval: 0.2, idle: 10}"


class LatencyOptionError(ValueError):
    """A ``latency`` value that cannot be used; the message names the option path and the fix."""


def _seconds(value: Any, where: str, lowest: float, highest: float) -> float:
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = float(value.strip())
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise LatencyOptionError(f"{where} must be a number of seconds, got {value!r}; {_FIX}")
    if not lowest <= value <= highest:
        raise LatencyOptionError(f"{where} must be from {lowest:g} to {highest:g} seconds, got {value!r}; {_FIX}")
    return float(value)


def read_latency(value: Any, where: str, *, interface: bool = False) -> dict[str, Any] | None:
    """The ``latency`` value checked and normalized (``None``: no ping); ``LatencyOptionError`` names ``where``.

    ``interface``: the key ``interface`` is allowed (``iperf_run``; a paired test takes it from the host).
    """
    if value is None or value is False:
        return None
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "on", "false", "no", "off", ""):
        return read_latency(value.strip().lower() in ("true", "yes", "on"), where, interface=interface)
    if value is True:
        value = {}
    if not isinstance(value, Mapping):
        raise LatencyOptionError(f"{where} must be true, false or a dictionary, got {type(value).__name__}; {_FIX}")
    keys = (*_KEYS, "interface") if interface else _KEYS
    unknown = sorted(str(k) for k in value if k not in keys)
    if unknown:
        raise LatencyOptionError(f"{where} has unknown key(s) {', '.join(unknown)}; known: {', '.join(keys)}; {_FIX}")
    interval = value.get("interval")
    idle = value.get("idle")
    result: dict[str, Any] = {
        "interval": DEFAULT_INTERVAL
        if interval is None
        else _seconds(interval, f"{where}.interval", MIN_INTERVAL, MAX_INTERVAL),
        "idle": None if idle is None else _seconds(idle, f"{where}.idle", 0.0, MAX_IDLE),
    }
    name = value.get("interface")
    if name is not None:
        if not isinstance(name, str) or not _INTERFACE_RE.match(name):
            raise LatencyOptionError(
                f"{where}.interface={name!r} is not an interface name (vmk1) or address; give the VMkernel adapter "
                "(ESXi) or the source interface or address (Linux), or leave it out"
            )
        result["interface"] = name
    return result


def idle_seconds(latency: Mapping[str, Any] | None, transfer: float) -> float:
    """The idle window of a run with ``latency`` (0 without): its ``idle``, else as long as the ``transfer``."""
    if not latency:
        return 0.0
    idle = latency.get("idle")
    return float(transfer) if idle is None else float(idle)


def with_interface(client: Mapping[str, Any] | None, link_speeds: Any, addresses: Any) -> dict[str, Any]:
    """A paired client's ``latency`` with the ``interface`` of its address (``{}`` without ``latency``).

    ``client`` holds the run's ``iperf_client`` arguments; ``link_speeds`` is the host's ``iperf_link_speeds`` fact
    (``{address: {interface, ...}}``, read in the preflight: on ESXi the VMkernel adapter holding the address, for
    ``vmkping -I``); ``addresses`` the client's source address first, then its other test addresses. The first of
    them with a known interface gives it; none - the ping goes by the routing table (``interface`` unset).
    """
    latency = (client or {}).get("latency")
    if not isinstance(latency, Mapping):
        return {}
    speeds = link_speeds if isinstance(link_speeds, Mapping) else {}
    for address in addresses or ():
        entry = speeds.get(address)
        name = entry.get("interface") if isinstance(entry, Mapping) else None
        if isinstance(name, str) and _INTERFACE_RE.match(name):
            return {"latency": {**latency, "interface": name}}
    return {"latency": dict(latency)}
