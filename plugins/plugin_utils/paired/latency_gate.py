# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gate's latency checks against the plan, in the preflight: a check set that could compare nothing is refused.

``report_max_latency_increase_percent`` / ``report_max_loaded_rtt_ms`` compare the loaded ping RTT percentile
``report_latency_percentile`` of each row (``report/gate_latency.py``). Before any host is contacted this says when
they could never compare: no planned run pings (no test has the setting ``latency``), or a test's loaded window
sends fewer probes than the percentile needs (nearest-rank: p99 needs 100 replies; ``latency/samples.py``), so
every row of it would be ``not compared``. The values themselves are checked by ``report/settings_check.py``.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.latency.samples import enough_for
from ansible_collections.esxilab.iperf.plugins.plugin_utils.latency.shell import probe_count
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.gate_latency import (
    DEFAULT_PERCENTILE,
    PERCENTILES,
    percentile_of,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.settings_check import PERCENTILE_OPTION, shown

__all__ = ["LATENCY_GATE_OPTIONS", "check_latency_gate"]

#: The gate's latency tolerances (role esxilab.iperf.report).
LATENCY_GATE_OPTIONS = ("report_max_latency_increase_percent", "report_max_loaded_rtt_ms")


def _needed(percentile: int) -> int:
    """The fewest replies of a window that give the percentile."""
    return next(n for n in itertools.count(1) if enough_for(percentile, n))


def check_latency_gate(settings: Mapping[str, Any], plan: Mapping[str, Any]) -> list[str]:
    """One line per way the configured latency checks could compare nothing (see the module docstring)."""
    given = {name: settings.get(name) for name in LATENCY_GATE_OPTIONS if settings.get(name) not in (None, "")}
    if not given:
        return []
    named = " and ".join(f"{name}={shown(value)}" for name, value in given.items())
    unset = " and ".join(given)
    runs = [run for run in plan.get("runs") or [] if isinstance(run.get("latency"), Mapping)]
    if not runs:
        return [
            f"{named} gate the loaded ping RTT, but no test of paired_test_tests measures it, so every row would be "
            f"not compared: set latency: true on the tests to gate (docs/latency.md), or unset {unset}"
        ]
    chosen = settings.get(PERCENTILE_OPTION)
    percentile = DEFAULT_PERCENTILE if chosen in (None, "") else percentile_of(chosen)
    if percentile is None:  # settings_check names the bad value
        return []
    need = _needed(percentile)
    lower = [p for p in PERCENTILES if p < percentile]
    problems: list[str] = []
    seen: set[str] = set()
    for run in runs:
        test, duration = str(run.get("test")), run.get("duration")
        if test in seen or not isinstance(duration, int | float):  # bytes instead of a duration: the count is unknown
            continue
        seen.add(test)
        transfer = float(duration) + float(run.get("omit") or 0)
        interval = float(run["latency"]["interval"])
        probes = probe_count(transfer, interval)
        if probes >= need:
            continue
        other = f", or set {PERCENTILE_OPTION} to {lower[-1]}" if lower and enough_for(lower[-1], probes) else ""
        problems.append(
            f"{PERCENTILE_OPTION}={percentile}: test '{test}' sends {probes} probes in its loaded window ({transfer:g} "
            f"s every {interval:g} s), too few for a p{percentile} (it needs {need} replies), so {unset} would compare "
            f"none of its rows: lower the test's latency.interval to {transfer / need:g} s or less, make its duration "
            f"{need * interval:g} s or longer{other}"
        )
    return problems
