# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gate's latency checks: the loaded RTT of an entry against its baseline row and against a ceiling.

A gate row is an entry (``history.Entry``: one test, direction, swap, stream count, tool, protocol, number of
pairs and identifying labels); its latency figure is the largest loaded ping RTT percentile (``percentile``: 50,
90 or 99) over the entry's pairs and runs - the figure the history stores (migration 5) - and the pair that gave
it is named. Two checks, each only when set:

* ``max_latency_increase_percent``: fails when the figure grew by more than this percentage of the baseline row's
  same figure (no statistics: one worst figure per side);
* ``max_loaded_rtt_ms``: fails when the figure is above this many milliseconds (no baseline needed).

A row without the figure - latency not measured, the pings gave too few replies for the percentile, no baseline
row, a baseline row without it - is ``skip`` with a detail that starts ``not compared`` and says why: never a pass,
and (as for the other tolerances) not a failure either.

Plain data in and out; ``gate.evaluate`` turns each ``LatencyCheck`` into its ``Check``.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from dataclasses import dataclass

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history import Entry

__all__ = ["DEFAULT_PERCENTILE", "PERCENTILES", "LatencyCheck", "latency_checks", "percentile_of", "text_ms"]

#: The loaded RTT percentiles a ping window has (``latency.figures.PERCENTILES``), the gate's choice of them.
PERCENTILES = (50, 90, 99)
DEFAULT_PERCENTILE = 99


@dataclass(frozen=True)
class LatencyCheck:
    limit: str
    status: str  # pass | fail | skip
    detail: str


def percentile_of(value: object) -> int | None:
    """A percentile of ``PERCENTILES`` given as a number or a numeric string (``-e`` gives strings); else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, int | float) and value in PERCENTILES:
        return int(value)
    return None


def text_ms(value: float) -> str:
    return f"{value:g} ms"


def _figure(entry: Entry, key: str) -> float | None:
    value = entry.latency.get(key)
    return None if value is None else float(value)


def _missing(entry: Entry, name: str) -> str:
    """Why the current row has no loaded ``name`` (``p99``)."""
    if not entry.latency_measured:
        return "not compared - latency not measured in this row (no pair pinged, the test setting latency is off)"
    return (
        f"not compared - no loaded {name} in this row (the pings gave too few replies for a {name}, or none - "
        "see the section Latency under load)"
    )


def latency_checks(
    now: Entry,
    baseline: Entry | None,
    *,
    max_increase_percent: float | None,
    max_loaded_rtt_ms: float | None,
    percentile: int = DEFAULT_PERCENTILE,
) -> list[LatencyCheck]:
    """The configured latency checks of one row (``now``) against its baseline row (None: none comparable)."""
    name = f"p{percentile}"
    key = f"loaded_{name}_ms"
    current = _figure(now, key)
    pair = now.latency_pairs.get(key)
    where = f" (worst pair {pair})" if pair else ""
    checks: list[LatencyCheck] = []
    if max_increase_percent is not None:
        limit = f"loaded {name} growth <= {max_increase_percent:g} %"
        base = None if baseline is None else _figure(baseline, key)
        if current is None:
            checks.append(LatencyCheck(limit, "skip", _missing(now, name)))
        elif baseline is None:
            detail = f"not compared - no baseline row; now {text_ms(current)}{where}"
            checks.append(LatencyCheck(limit, "skip", detail))
        elif base is None:
            detail = (
                f"not compared - the baseline row has no loaded {name} (measured without latency, or too few "
                f"replies); now {text_ms(current)}{where}"
            )
            checks.append(LatencyCheck(limit, "skip", detail))
        elif base <= 0.0:
            detail = f"not compared - the baseline's loaded {name} is {text_ms(base)}, no growth in % of it"
            checks.append(LatencyCheck(limit, "skip", detail))
        else:
            growth = 100.0 * (current - base) / base
            failed = growth > max_increase_percent
            detail = f"baseline {text_ms(base)} -> now {text_ms(current)} ({growth:+.1f} %){where}"
            checks.append(LatencyCheck(limit, "fail" if failed else "pass", detail))
    if max_loaded_rtt_ms is not None:
        limit = f"loaded {name} <= {text_ms(max_loaded_rtt_ms)}"
        if current is None:
            checks.append(LatencyCheck(limit, "skip", _missing(now, name)))
        else:
            base = None if baseline is None else _figure(baseline, key)
            before = "" if base is None else f"baseline {text_ms(base)} -> "
            detail = f"{before}now {text_ms(current)}{where}"
            checks.append(LatencyCheck(limit, "fail" if current > max_loaded_rtt_ms else "pass", detail))
    return checks
