# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The rate search's settings: checked once, every problem at once, before anything runs on a host.

The names are the options of the action ``esxilab.iperf.rate_search``; the role ``esxilab.iperf.rate_search``
passes its variable ``rate_search_<name>`` as option ``<name>``, so every message names both (the option and
the role variable) with the fix. ``plan()`` says how many trials the search makes at most and how long the
server must live for them (the role's server start takes that ``server_timeout``).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.role_vars import unknown_keys_text
from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch.frames import (
    MIN_FRAME,
    max_frame,
    payload_of,
)

__all__ = [
    "MTU_RANGE",
    "ROLE_PREFIX",
    "Settings",
    "SettingsError",
    "check_settings",
    "plan",
    "trials_per_size",
    "unknown_options",
]

ROLE_PREFIX = "rate_search_"
MTU_RANGE = (576, 9216)
MAX_MBPS = 400_000.0  # 400 Gbit/s: above any NIC the collection meets; a typo (an extra 0) is caught
MAX_TRIAL_SECONDS = 3600
# Seconds a trial may cost beyond iperf's own (SSH session, iperf's start and result exchange): the server's
# lifetime (server_timeout) is planned with it, so a forgotten server still dies soon after the search.
TRIAL_OVERHEAD = 5
SERVER_SPARE = 60


class SettingsError(ValueError):
    """The settings cannot be searched with; the message lists every problem with its fix."""


@dataclass(frozen=True)
class Settings:
    """The checked settings of one search."""

    frame_sizes: tuple[int, ...]  # ascending, unique
    mtu: int
    loss_percent: float
    shortfall_percent: float
    trial_seconds: int
    resolution_mbps: float
    min_mbps: float
    max_mbps: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "frame_sizes": list(self.frame_sizes),
            "mtu": self.mtu,
            "loss_percent": self.loss_percent,
            "shortfall_percent": self.shortfall_percent,
            "trial_seconds": self.trial_seconds,
            "resolution_mbps": self.resolution_mbps,
            "min_mbps": self.min_mbps,
            "max_mbps": self.max_mbps,
        }


def _name(option: str) -> str:
    return f"{option} (role variable {ROLE_PREFIX}{option})"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def unknown_options(given: Sequence[str], valid: Sequence[str]) -> str | None:
    """The message for options no one knows (each with the closest valid name), or ``None``."""
    unknown = sorted(name for name in given if name not in valid and not name.startswith("_"))
    if not unknown:
        return None
    return (
        f"unknown option(s) {unknown_keys_text(unknown, valid)}; the options are {', '.join(sorted(valid))} "
        f"(the role esxilab.iperf.rate_search names them {ROLE_PREFIX}<option>)"
    )


def check_settings(raw: Mapping[str, Any]) -> Settings:
    """The settings of ``raw`` (the action's options), or ``SettingsError`` naming every problem."""
    problems: list[str] = []
    mtu = _integer(raw.get("mtu"))
    if mtu is None or not MTU_RANGE[0] <= mtu <= MTU_RANGE[1]:
        problems.append(
            f"{_name('mtu')} is {raw.get('mtu')!r}: give the path's IPv4 MTU, an integer from {MTU_RANGE[0]} to "
            f"{MTU_RANGE[1]} (1500, or 9000 for jumbo frames; esxilab.iperf.path_mtu checks what the path carries)"
        )
        mtu = None
    sizes_raw = raw.get("frame_sizes")
    sizes: list[int] = []
    if not isinstance(sizes_raw, (list, tuple)) or not sizes_raw:
        problems.append(
            f"{_name('frame_sizes')} is {sizes_raw!r}: give a list of Ethernet frame sizes in bytes (with FCS), "
            "for example [64, 512, 1518]"
        )
    else:
        top = max_frame(mtu) if mtu is not None else None
        for index, item in enumerate(sizes_raw):
            size = _integer(item)
            where = f"{_name('frame_sizes')} item {index + 1}"
            if size is None:
                problems.append(f"{where} is {item!r}: a frame size is a whole number of bytes, for example 1518")
            elif size < MIN_FRAME:
                problems.append(
                    f"{where} is {size}: the smallest Ethernet frame is {MIN_FRAME} bytes ({payload_of(MIN_FRAME)} "
                    "bytes of UDP payload); frame sizes count the Ethernet header and FCS, not only the payload"
                )
            elif top is not None and size > top:
                problems.append(
                    f"{where} is {size}: above the largest frame of the path, {top} bytes (MTU {mtu} + 18; UDP "
                    f"payload {payload_of(top)}), so its packets would be fragmented; use at most {top}, or raise "
                    f"{_name('mtu')} when the path carries more (check it with esxilab.iperf.path_mtu)"
                )
            elif size in sizes:
                problems.append(f"{where} is {size} again: list each frame size once")
            else:
                sizes.append(size)
    loss = _number(raw.get("loss_percent"))
    if loss is None or not 0 <= loss < 100:
        problems.append(
            f"{_name('loss_percent')} is {raw.get('loss_percent')!r}: the loss a trial may have and still pass, in "
            "percent of the packets, from 0 (zero loss, the default) to below 100, for example 0.1"
        )
    shortfall = _number(raw.get("shortfall_percent"))
    if shortfall is None or not 0 <= shortfall < 100:
        problems.append(
            f"{_name('shortfall_percent')} is {raw.get('shortfall_percent')!r}: how far the received rate may fall "
            "below the offered rate (less the counted loss) in a passing trial, in percent, from 0 to below 100 "
            "(default 0.5)"
        )
    seconds = _integer(raw.get("trial_seconds"))
    if seconds is None or not 1 <= seconds <= MAX_TRIAL_SECONDS:
        problems.append(
            f"{_name('trial_seconds')} is {raw.get('trial_seconds')!r}: the length of one trial, whole seconds from "
            f"1 to {MAX_TRIAL_SECONDS} (RFC 2544 uses 60; 1-5 s for a quick search)"
        )
    low, high, step = (_number(raw.get(n)) for n in ("min_mbps", "max_mbps", "resolution_mbps"))
    if low is None or low < 0:
        problems.append(f"{_name('min_mbps')} is {raw.get('min_mbps')!r}: the lowest rate searched, 0 or more Mbit/s")
        low = None
    if high is None or not 0 < high <= MAX_MBPS:
        problems.append(
            f"{_name('max_mbps')} is {raw.get('max_mbps')!r}: the highest rate searched (the first trial), in Mbit/s "
            f"of frames, above 0 and at most {MAX_MBPS:g}; the link speed is the natural choice, for example 10000"
        )
        high = None
    elif low is not None and high <= low:
        problems.append(f"{_name('max_mbps')} ({high:g}) must be above {_name('min_mbps')} ({low:g})")
        high = None
    if step is None or step <= 0:
        problems.append(
            f"{_name('resolution_mbps')} is {raw.get('resolution_mbps')!r}: the search stops when the highest passing "
            "and the lowest failing rate are this close, in Mbit/s, above 0 (for example 1 or 10)"
        )
    elif low is not None and high is not None and step >= high - low:
        problems.append(
            f"{_name('resolution_mbps')} ({step:g}) must be below max_mbps - min_mbps ({high - low:g}) - else no "
            "rate between them is ever tried; lower it or widen the range"
        )
    if problems:
        raise SettingsError("; ".join(problems))
    if mtu is None or loss is None or shortfall is None or seconds is None or low is None or high is None or not step:
        raise SettingsError("the settings could not be read")  # unreachable: each None above is a problem
    return Settings(tuple(sorted(sizes)), mtu, loss, shortfall, seconds, step, low, high)


def trials_per_size(settings: Settings) -> int:
    """The most trials the search of one frame size makes: max_mbps, the halvings, and min_mbps when above 0."""
    span = settings.max_mbps - settings.min_mbps
    halvings = max(0, math.ceil(math.log2(span / settings.resolution_mbps)))
    return 1 + halvings + (1 if settings.min_mbps > 0 else 0)


def plan(settings: Settings) -> dict[str, Any]:
    """What the search will do at most: trials, seconds, and the server lifetime (``server_timeout``) it needs."""
    per_size = trials_per_size(settings)
    trials = per_size * len(settings.frame_sizes)
    seconds = trials * (settings.trial_seconds + TRIAL_OVERHEAD)
    return {
        "frame_sizes": [{"frame_size": f, "payload_size": payload_of(f)} for f in settings.frame_sizes],
        "trials_per_size": per_size,
        "max_trials": trials,
        "max_seconds": seconds,
        "server_timeout": seconds + SERVER_SPARE,
    }
