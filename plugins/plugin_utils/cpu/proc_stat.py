# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Linux ``/proc/stat``: the CPU time counters of the host and of each CPU, and the busy share between two
readings.

A ``cpu`` line holds the time spent in each state since boot, in ``USER_HZ`` ticks (``man 5 proc``)::

    cpu  user nice system idle iowait irq softirq steal guest guest_nice
    cpu0 ...

``guest`` and ``guest_nice`` are already counted in ``user`` and ``nice``, so they are left out of the total.
Busy is the total less ``idle`` and ``iowait``. Between two readings a CPU's use is
``100 * delta(busy) / delta(total)``: the figure ``top`` and ``mpstat`` show, independent of ``USER_HZ``.

A figure is ``None`` with the reason when it cannot be given honestly: a counter that went backwards (a
32-bit counter wrapped, or the host rebooted), a CPU set that changed between the readings (hotplug: a
``cpuN`` line in one reading only), or no time between them.

Plain data; no Ansible import, no I/O. Private module: not part of the collection's public API.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["CpuDelta", "ProcStatError", "cpu_delta", "parse_proc_stat", "parse_uptime"]

# The states summed into a CPU's total (guest and guest_nice are inside user and nice); the idle ones.
_TOTAL_FIELDS = 8  # user nice system idle iowait irq softirq steal
_IDLE = (3, 4)  # idle, iowait
_LINE = re.compile(r"^(cpu\d*)\s+(\d+(?:\s+\d+)*)\s*$")


class ProcStatError(ValueError):
    """The text is not what ``/proc/stat`` (or ``/proc/uptime``) prints."""


def parse_proc_stat(text: str) -> dict[str, tuple[int, ...]]:
    """``{name: counters}`` of the ``cpu`` line (the whole host) and every ``cpuN`` line, as printed.

    Other lines (``intr``, ``ctxt``, ...) are ignored. A ``cpu`` line with fewer than four counters (older
    kernels print four: user nice system idle) or text without the ``cpu`` line is a ``ProcStatError``.
    """
    found: dict[str, tuple[int, ...]] = {}
    for line in text.splitlines():
        if not line.startswith("cpu"):
            continue
        match = _LINE.match(line.strip())
        if match is None:
            raise ProcStatError(f"a cpu line of /proc/stat is not counters: {line.strip()[:80]!r}")
        counters = tuple(int(word) for word in match.group(2).split())
        if len(counters) < 4:
            raise ProcStatError(f"{match.group(1)} has {len(counters)} counters, /proc/stat prints at least 4")
        found[match.group(1)] = counters
    if "cpu" not in found:
        raise ProcStatError("no 'cpu' line: this is not /proc/stat")
    return found


def parse_uptime(text: str) -> float:
    """The seconds since boot, the first field of ``/proc/uptime``."""
    words = text.split()
    try:
        return float(words[0])
    except (IndexError, ValueError):
        raise ProcStatError(f"/proc/uptime does not start with the seconds since boot: {text.strip()[:80]!r}") from None


def _busy_total(counters: tuple[int, ...]) -> tuple[int, int]:
    states = counters[:_TOTAL_FIELDS]
    total = sum(states)
    return total - sum(states[i] for i in _IDLE if i < len(states)), total


@dataclass(frozen=True)
class CpuDelta:
    """The CPU use of a host between two readings; ``None`` figures come with ``reason``."""

    mean_percent: float | None  # the whole host (the ``cpu`` line): 100 % = every CPU busy
    max_core_percent: float | None  # the busiest CPU
    max_core: str | None  # its name (``cpu3``)
    cores: int | None  # the CPUs in both readings
    reason: str | None  # why a figure is None


def _percent(before: tuple[int, ...], after: tuple[int, ...]) -> float | str:
    """The busy share between the two counter tuples; a reason (``str``) when there is none."""
    if len(before) != len(after):
        return f"the number of counters changed ({len(before)} -> {len(after)})"
    if any(b > a for b, a in zip(before, after, strict=True)):
        return "a counter went backwards (a counter wrapped, or the host restarted)"
    busy_before, total_before = _busy_total(before)
    busy_after, total_after = _busy_total(after)
    elapsed = total_after - total_before
    if elapsed <= 0:
        return "no CPU time passed between the readings"
    return round(100.0 * (busy_after - busy_before) / elapsed, 2)


def cpu_delta(before: Mapping[str, tuple[int, ...]], after: Mapping[str, tuple[int, ...]]) -> CpuDelta:
    """The host's mean CPU use and its busiest core between two ``parse_proc_stat`` readings."""
    cores_before = {name for name in before if name != "cpu"}
    cores_after = {name for name in after if name != "cpu"}
    if cores_before != cores_after:
        gone = sorted(cores_before - cores_after, key=_order)
        came = sorted(cores_after - cores_before, key=_order)
        said = "; ".join(
            text
            for text in (
                f"{', '.join(gone)} only in the first reading" if gone else "",
                f"{', '.join(came)} only in the second" if came else "",
            )
            if text
        )
        return CpuDelta(None, None, None, None, f"the set of CPUs changed between the readings (hotplug): {said}")
    mean = _percent(before["cpu"], after["cpu"])
    if isinstance(mean, str):
        return CpuDelta(None, None, None, len(cores_before) or None, f"cpu: {mean}")
    best: tuple[float, str] | None = None
    for name in sorted(cores_before, key=_order):
        share = _percent(before[name], after[name])
        if isinstance(share, str):
            return CpuDelta(mean, None, None, len(cores_before), f"{name}: {share}")
        if best is None or share > best[0]:
            best = (share, name)
    if best is None:
        return CpuDelta(mean, None, None, None, "/proc/stat printed no per-CPU line (cpuN)")
    return CpuDelta(mean, best[0], best[1], len(cores_before), None)


def _order(name: str) -> int:
    return int(name[3:]) if name[3:].isdigit() else -1
