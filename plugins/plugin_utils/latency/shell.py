# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``sh`` text of the latency pings in the client script (POSIX ``sh``; busybox ``ash`` on ESXi).

The client script (``iperf_run/scripts.py``, ``build_client_script``) runs, with ``latency``:

1. **idle**: on arrival, before the barrier, ``ping`` (``vmkping`` on ESXi) of ``idle / interval`` probes in the
   background, its output to a file of the private directory (created under ``set -C``). With a barrier the
   script then waits at the barrier as before - the ping never delays the start time: the paired tests plan the
   idle window into the start delay (``paired/start_delay.py``), and a ping still running when the start time
   comes is stopped there (its window is ``cut``). Without a barrier the script waits for the idle ping to end.
2. **loaded**: right after iperf is started, ``ping`` of ``transfer / interval`` probes in the background; after
   iperf ends the script waits for it - it ends by itself (``-c`` and ``-W 1``: iputils and busybox wait for a
   missing last reply two round-trip times at most, 1 s when none came); when iperf failed or timed out it is
   stopped at once.

Each ping is stopped only by the pid ``$!`` gave when it was started, and only before the ``wait`` that reaps it: a
child the shell has not reaped keeps its pid (a zombie at worst), so the pid cannot belong to another process.
After the ``wait`` the pid variable is cleared, so the traps' ``_stop`` does not signal it again.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping
from typing import Any

__all__ = ["IDLE_FILE", "LOADED_FILE", "ping_argv", "probe_count"]

IDLE_FILE = '"$_pd/esxilab-iperf-$$.idle"'
LOADED_FILE = '"$_pd/esxilab-iperf-$$.loaded"'
# Seconds a probe's reply is waited for (-W): the ping ends at most this long after its last probe.
REPLY_WAIT = 1


def probe_count(seconds: float, interval: float) -> int:
    """Probes that fit into ``seconds`` at one per ``interval`` (at least 1)."""
    return max(1, math.floor(seconds / interval + 1e-9))


def ping_argv(
    *, esxi: bool, target: str, interval: float, count: int, interface: str | None, source: str | None
) -> list[str]:
    """The ping command: ``vmkping -I <interface>`` on ESXi, iputils ``ping -I <source or interface>`` on Linux."""
    shown = f"{interval:g}"
    if esxi:
        argv = ["vmkping", "-c", str(count), "-i", shown, "-W", str(REPLY_WAIT)]
        if interface:
            argv += ["-I", interface]
        return [*argv, target]
    # no -w: with -c, iputils' -w sends until COUNT replies came (more probes than planned after a loss)
    argv = ["ping", "-n", "-c", str(count), "-i", shown, "-W", str(REPLY_WAIT)]
    if source or interface:
        argv += ["-I", str(source or interface)]
    return [*argv, target]


def idle_start(argv: list[str]) -> str:
    """Start the idle ping in the background (before the barrier); ``$_ip`` is its pid."""
    return f"{shlex.join(argv)} >{IDLE_FILE} 2>&1 </dev/null & _ip=$!"


def idle_end(*, barrier: bool) -> str:
    """After the barrier: stop the idle ping if it still runs (``cut``); without one: wait for it to end."""
    stop = 'kill "$_ip" 2>/dev/null; ' if barrier else ""
    return f'{stop}wait "$_ip"; _irc=$?; _ip='


def loaded_start(argv: list[str]) -> str:
    """Start the loaded ping in the background, right after iperf; ``$_lp`` is its pid."""
    return f"{shlex.join(argv)} >{LOADED_FILE} 2>&1 </dev/null & _lp=$!"


def loaded_end() -> str:
    """After iperf: stop the loaded ping when iperf failed or timed out, else wait for it to end by itself."""
    return 'if [ "$_rc" -ne 0 ]; then kill "$_lp" 2>/dev/null; fi; wait "$_lp"; _lrc=$?; _lp='


def output(marker: Any) -> list[str]:
    """The two sections of the ping outputs (``marker(name, args)`` prints a section marker), read never through a
    link."""
    lines = []
    for name, path, rc in (("latency_idle", IDLE_FILE, "$_irc"), ("latency_loaded", LOADED_FILE, "$_lrc")):
        lines += [marker(name, f"rc={rc}"), f"if [ -f {path} ] && [ ! -L {path} ]; then cat {path}; fi"]
    return lines


def plan(latency: Mapping[str, Any], *, esxi: bool, target: str, source: str | None, transfer: float) -> dict[str, Any]:
    """The two ping commands of a client with ``latency`` (``option.read_latency``'s value) and their windows."""
    interval = float(latency["interval"])
    idle = float(transfer if latency.get("idle") is None else latency["idle"])
    interface = latency.get("interface")

    def argv(seconds: float) -> list[str]:
        count = probe_count(seconds, interval)
        return ping_argv(esxi=esxi, target=target, interval=interval, count=count, interface=interface, source=source)

    return {
        "interval": interval,
        "interface": interface,
        "idle_seconds": idle,
        "loaded_seconds": float(transfer),
        "idle_argv": argv(idle) if idle > 0 else None,
        "loaded_argv": argv(transfer),
    }
