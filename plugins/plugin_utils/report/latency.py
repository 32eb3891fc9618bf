# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Latency under load in the report: each pair's ping round-trip times idle vs loaded (``PairRecord.latency``).

One reader (``result_latency``) for every output: ``results.csv`` (``LATENCY_COLUMNS``), ``summary.md`` (the
section "Latency under load", one row per pair and run, so per direction) and the history (``worst_latency``:
the largest of each figure over the runs of an entry). Figures are the record's, never recomputed.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import LatencyFigures, PairRecord

__all__ = [
    "LATENCY_COLUMNS",
    "LATENCY_FIGURES",
    "WINDOWS",
    "latency_cells",
    "note_worst_pair",
    "pair_name",
    "result_latency",
    "worst_latency",
]

#: The ping windows of a pair: before the transfer and during it.
WINDOWS = ("idle", "loaded")

#: The window figures shown and stored, per window (``idle``, ``loaded``).
LATENCY_FIGURES = ("p50_ms", "p90_ms", "p99_ms", "max_ms")
#: results.csv columns: ``latency_<window>_<figure>``, the samples and lost probes of each window, the p50 increase.
LATENCY_COLUMNS = (
    *(f"latency_{window}_{name}" for window in WINDOWS for name in (*LATENCY_FIGURES, "samples", "lost")),
    "latency_p50_increase_ms",
)


def result_latency(record: PairRecord | Mapping[str, Any] | None) -> LatencyFigures | None:
    """The latency figures of a pair record (``None``: not measured)."""
    if not isinstance(record, Mapping):
        return None
    value = record.get("latency")
    return value if isinstance(value, Mapping) else None  # type: ignore[return-value]


def latency_cells(latency: LatencyFigures | None) -> dict[str, object]:
    """The ``LATENCY_COLUMNS`` cells of one result (all ``None`` without latency)."""
    cells: dict[str, object] = dict.fromkeys(LATENCY_COLUMNS)
    if latency is None:
        return cells
    for window in WINDOWS:
        figures = latency.get(window)
        if not isinstance(figures, Mapping):
            continue
        for name in (*LATENCY_FIGURES, "samples", "lost"):
            cells[f"latency_{window}_{name}"] = figures.get(name)
    cells["latency_p50_increase_ms"] = latency.get("p50_increase_ms")
    return cells


def _larger(current: float | None, value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return current
    return float(value) if current is None else max(current, float(value))


def worst_latency(items: Iterable[LatencyFigures | None]) -> dict[str, float | None]:
    """``{idle_p50_ms, ..., loaded_max_ms}``: the largest of each figure over ``items`` (``None`` where none has it)."""
    worst: dict[str, float | None] = {f"{window}_{name}": None for window in WINDOWS for name in LATENCY_FIGURES}
    for latency in items:
        if latency is None:
            continue
        for window in WINDOWS:
            figures = latency.get(window)
            if isinstance(figures, Mapping):
                for name in LATENCY_FIGURES:
                    key = f"{window}_{name}"
                    worst[key] = _larger(worst[key], figures.get(name))
    return worst


def pair_name(record: PairRecord | Mapping[str, Any] | None) -> str | None:
    """``client -> server`` (inventory names) of a pair record: who pinged whom."""
    if not isinstance(record, Mapping):
        return None
    client, server = record.get("client"), record.get("server")
    return f"{client or 'n/a'} -> {server or 'n/a'}"


def note_worst_pair(
    worst: Mapping[str, float | None], pairs: dict[str, str], latency: LatencyFigures, name: str | None
) -> None:
    """Name ``name`` in ``pairs`` (``loaded_p99_ms`` -> pair) for each loaded figure of ``latency`` above ``worst``
    (the largest so far, ``worst_latency``'s keys): the pair the gate names beside a row's worst figure."""
    loaded = latency.get("loaded")
    if name is None or not isinstance(loaded, Mapping):
        return
    for figure in LATENCY_FIGURES:
        key, value = f"loaded_{figure}", loaded.get(figure)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        current = worst.get(key)
        if current is None or value > current:
            pairs[key] = name
