# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The start delay of a run with a barrier: planned for the first run with a number of clients, then learnt.

Plain data in, plain data out; no Ansible import, no clock, no I/O.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.units import finite_float

__all__ = [
    "DISPATCH_FACTOR",
    "DISPATCH_MARGIN",
    "DISPATCH_WINDOW",
    "FIRST_RUN_FACTOR",
    "FIRST_RUN_MARGIN",
    "FIRST_RUN_MINIMUM",
    "START_DELAY_BASE",
    "START_DELAY_PER_CLIENT",
    "auto_start_delay",
]

# Automatic start delay of a run with a barrier: Ansible hands the client task to the hosts one
# after the other, so the last client reaches the barrier later the more clients there are
# (measured on the 2-CPU lab controller: 0.7-1.8 s after the barrier was set for 8 clients,
# 3.3 s under load). The first run with a number of clients waits START_DELAY_BASE +
# START_DELAY_PER_CLIENT per client; later runs with as many clients wait what the last
# DISPATCH_WINDOW of them measured (dispatch_time, see build_record) times DISPATCH_FACTOR plus
# DISPATCH_MARGIN (see auto_start_delay): shorter or longer, as measured.
START_DELAY_BASE = 1.0
START_DELAY_PER_CLIENT = 0.4
DISPATCH_WINDOW = 3
DISPATCH_FACTOR = 1.5
DISPATCH_MARGIN = 0.1
# The first run with a number of clients, when the run estimated how long handing its clients to their hosts takes
# (``probe_dispatch``; the role: ``paired.engine.first_dispatch`` from the run's start - its time per step times the
# clients, at least one step's latency): FIRST_RUN_FACTOR x that + FIRST_RUN_MARGIN, at least FIRST_RUN_MINIMUM, and
# never more than the planned START_DELAY_BASE + START_DELAY_PER_CLIENT per client. A step of the start - a server's
# start with its reading, a reading - takes longer than handing a client over: on the 2-core lab the estimate was
# 1.9-3.3x the clients' measured dispatch (2, 4, 8, 16 pairs: 0.10 / 0.15 / 0.22 / 0.41 s for 0.03 / 0.055 / 0.12 /
# 0.22 s), and with a factor of 1, a margin of 0.2 s and at least 0.3 s the clients of every first run idled 0.27-0.40 s
# at their barrier. Hence 0.6 x the estimate + 0.1 s, at least 0.15 s: 0.16 / 0.19 / 0.23 / 0.35 s, the slowest
# client still 0.11-0.13 s ahead; a late client shows in the run's warnings and start_spread, and the next run with as
# many clients waits 1.5 x what it measured + 0.1 s.
FIRST_RUN_FACTOR = 0.6
FIRST_RUN_MARGIN = 0.1
FIRST_RUN_MINIMUM = 0.15


def auto_start_delay(run: Mapping[str, Any], records: Sequence[Any], probe_dispatch: Any = None) -> float:
    """The automatic start delay of ``run``: from the measured ``dispatch_time`` of the last
    ``DISPATCH_WINDOW`` earlier runs with as many clients (``records``: the run records so far),
    their maximum times ``DISPATCH_FACTOR`` plus ``DISPATCH_MARGIN``; when there is none yet, from
    ``probe_dispatch`` (seconds it took to hand a first command to every host of the
    tests; see ``FIRST_RUN_MARGIN``), else the plan's delay. A late client shows as a long dispatch
    time, so the next delay grows; a quick series shrinks it.

    A run with ``latency`` waits its idle window longer (``latency_idle``): the clients ping while they wait."""
    return round(_dispatch_delay(run, records, probe_dispatch) + float(run.get("latency_idle") or 0), 3)


def _dispatch_delay(run: Mapping[str, Any], records: Sequence[Any], probe_dispatch: Any) -> float:
    if not run.get("start_delay_auto"):
        return float(run["start_delay"])
    clients = len(run.get("client_hosts") or ())
    measured = [
        float(r["dispatch_time"])
        for r in records
        if isinstance(r, Mapping)
        and isinstance(r.get("dispatch_time"), int | float)
        and len({p.get("client") for p in r.get("pairs") or []}) == clients
    ][-DISPATCH_WINDOW:]
    if not measured:
        planned = float(run["start_delay"])
        probe = finite_float(probe_dispatch)
        if probe is None or probe < 0:
            return planned
        return round(min(planned, max(FIRST_RUN_MINIMUM, probe * FIRST_RUN_FACTOR + FIRST_RUN_MARGIN)), 3)
    return round(max(measured) * DISPATCH_FACTOR + DISPATCH_MARGIN, 3)
