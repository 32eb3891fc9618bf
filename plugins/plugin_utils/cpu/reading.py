# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A host's CPU reading (``iperf_facts`` option ``cpu_times``) and its figures over a run.

``iperf_facts`` runs ``CPU_SCRIPT``'s ``cputimes`` in its one command: ``/proc/uptime`` then the ``cpu``
lines of ``/proc/stat``, each framed with its exit status. ``cpu_times_fact`` turns them into the fact
``iperf_cpu_times``::

    {kind: linux|null, source: "/proc/stat", stat: the cpu lines as printed, uptime: seconds since boot,
     reason: why nothing was read (null when read)}

The run record keeps, per host, ``host_cpu(before, after)``: the figures (``proc_stat.cpu_delta``) beside
the two raw readings::

    {kind, source, mean_percent, max_core_percent, max_core, cores, seconds, reason, before, after}

A host without a readable ``/proc/stat``, and an ESXi host (``uname -s`` prints ``VMkernel``: its CPU comes
from the vSphere API, ``vsphere.py``), gets ``kind: null`` and the reason; a figure is never guessed. In a
network namespace ``/proc/stat`` is the machine's, not the namespace's: a lab host's CPU is the whole machine's.

Plain data; no Ansible import, no I/O. Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.cpu.proc_stat import (
    ProcStatError,
    cpu_delta,
    parse_proc_stat,
    parse_uptime,
)

__all__ = ["CPU_SCRIPT", "ESXI_HOST", "NO_PROC_STAT", "Output", "cpu_times_fact", "host_cpu", "split_reading"]

#: ``(text, status)`` of one read the script made: its exit status, or ``missing`` (no readable file) or
#: ``vmkernel`` (an ESXi host: ``uname -s`` says ``VMkernel``), as printed.
Output = tuple[str, str]

# Shell function of the iperf_facts script (its ``$M`` marker is used): the uptime first, then the cpu lines - read
# by the shell itself (``read``; the ``cpu`` lines come first in /proc/stat), not by ``cat`` and ``sed``: two processes
# fewer in every reading, made before and after every run on every host. Where /proc/uptime cannot be read, ``cat``
# says why. The kernel's name (``Linux``; ESXi's ``VMkernel``) is read from ``/proc/sys/kernel/ostype`` - what ``uname
# -s`` prints on Linux - and asked of ``uname -s`` only where that file cannot be read: a process fewer again.
CPU_SCRIPT = r"""cputimes() {
  printf '\n%%s CPUUPTIME\n' "$M"
  if [ -r /proc/uptime ] && IFS= read -r _cu </proc/uptime; then printf '%%s\n' "$_cu"; _r=0
  else cat /proc/uptime 2>&1; _r=$?; fi
  printf '\n%%s CPUUPTIMEEND %%s\n' "$M" "$_r"
  printf '\n%%s CPUSTAT\n' "$M"
  { IFS= read -r _co </proc/sys/kernel/ostype; } 2>/dev/null || _co=$(uname -s 2>/dev/null)
  case $_co in
    VMkernel) _r=vmkernel ;;
    *) if [ -r /proc/stat ]; then _r=0
         while IFS= read -r _cl; do case $_cl in cpu*) printf '%%s\n' "$_cl" ;; *) break ;; esac
         done 2>&1 </proc/stat || _r=$?
       else _r=missing; fi ;;
  esac
  printf '\n%%s CPUSTATEND %%s\n' "$M" "$_r"
  return 0
}
"""

NO_PROC_STAT = "no readable /proc/stat on the host"
ESXI_HOST = (
    "an ESXi host (uname -s: VMkernel): its CPU is not in /proc/stat; the vSphere API's PerformanceManager "
    "reads it (docs/host-cpu.md)"
)


def _shown(text: str) -> str:
    return " ".join(text.split())[:200] or "no output"


def cpu_times_fact(stat: Output | None, uptime: Output | None) -> dict[str, Any]:
    """``iperf_cpu_times`` from the script's two reads (``None``: the script printed no such section)."""
    out: dict[str, Any] = {"kind": None, "source": None, "stat": None, "uptime": None, "reason": None}
    if stat is None:
        out["reason"] = "the host's command printed no /proc/stat section"
        return out
    text, status = stat[0], stat[1].strip()
    if status in ("missing", "vmkernel"):
        out["reason"] = NO_PROC_STAT if status == "missing" else ESXI_HOST
        return out
    if status != "0":
        out["reason"] = f"/proc/stat could not be read (status {status}): {_shown(text)}"
        return out
    try:
        parse_proc_stat(text)
        seconds = parse_uptime(uptime[0]) if uptime is not None and uptime[1].strip() == "0" else None
    except ProcStatError as exc:
        out["reason"] = f"{exc}"
        return out
    out.update(kind="linux", source="/proc/stat", stat=text.strip("\n") + "\n", uptime=seconds)
    return out


def _problem(reading: object, when: str) -> str | None:
    """Why ``reading`` (a fact ``iperf_cpu_times``, or ``{error}`` when the read failed) is no usable reading."""
    if not isinstance(reading, Mapping):
        return f"the CPU was not read {when} the run"
    if reading.get("error"):
        return f"the CPU read {when} the run failed: {reading['error']}"
    if not isinstance(reading.get("stat"), str):
        return f"{when} the run: {reading.get('reason') or 'no /proc/stat text'}"
    return None


def host_cpu(before: object, after: object) -> dict[str, Any]:
    """The run record's entry of one host: its CPU use from the reading at the run's start to the one after its
    stop, the raw text of both beside the figures."""
    out: dict[str, Any] = {
        "kind": None,
        "source": None,
        "mean_percent": None,
        "max_core_percent": None,
        "max_core": None,
        "cores": None,
        "seconds": None,
        "reason": None,
        "before": before.get("stat") if isinstance(before, Mapping) else None,
        "after": after.get("stat") if isinstance(after, Mapping) else None,
    }
    problems = [p for p in (_problem(before, "before"), _problem(after, "after")) if p]
    if problems:
        out["reason"] = "; ".join(problems)
        return out
    if not isinstance(before, Mapping) or not isinstance(after, Mapping):  # _problem said so; for the type checker
        return out
    out.update(kind="linux", source="/proc/stat")
    try:
        delta = cpu_delta(parse_proc_stat(before["stat"]), parse_proc_stat(after["stat"]))
    except ProcStatError as exc:
        out["reason"] = f"{exc}"
        return out
    up_before, up_after = before.get("uptime"), after.get("uptime")
    if isinstance(up_before, int | float) and isinstance(up_after, int | float) and up_after >= up_before:
        out["seconds"] = round(float(up_after) - float(up_before), 2)
    out.update(
        mean_percent=delta.mean_percent,
        max_core_percent=delta.max_core_percent,
        max_core=delta.max_core,
        cores=delta.cores,
        reason=delta.reason,
    )
    return out


def split_reading(found: Mapping[str, Any], *, nic: bool, cpu: bool) -> tuple[dict[str, Any] | None, Any]:
    """One ``iperf_facts`` result that read the NIC counters and/or the CPU, split: ``(the result for the NIC
    reading, without the CPU fact; the CPU reading - the fact ``iperf_cpu_times``, or ``{error}`` when the read
    failed)``, each ``None`` when not asked for."""
    facts = found.get("ansible_facts")
    facts = dict(facts) if isinstance(facts, Mapping) else {}
    times = facts.pop("iperf_cpu_times", None)
    reading: Any = None
    if cpu:
        reading = dict(times) if isinstance(times, Mapping) else {"error": str(found.get("msg") or "no CPU reading")}
    return ({**found, "ansible_facts": facts} if nic else None), reading
