# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs split by the compared label: one concurrent run whose pairs carry different values of ``compare_by``
(``os: centos`` on two pairs, ``os: ubuntu`` on two others) gives one *part* per value.

The model (``split_runs()``, called once by ``build.build_report``):

* A run's compared value is the value its pairs share. When every pair of a run has the same value (a test label,
  or a pair label all its pairs carry alike) the run has that value and no parts - exactly as a test label; when no
  pair has the label, the run has none (it is left out of the comparison, as before).
* When the pairs differ, the run itself keeps ``compare = None`` and is shown as the whole run (``ALL_PAIRS``), and
  each value gets a part: a ``RunRow`` with ``whole`` set to the run, the value as ``compare``, the pairs with that
  value as ``results`` (the same result rows, not copies), and as figure the sum of those pairs' headline rates -
  ``None`` when one of them has no usable figure (never a partial sum, as for the run). Its line rate is the sum of
  those pairs' line rates (``rows.pairs_line_rate``), so its % of line rate is against the subset's links.
* A pair without the label (or with an empty value) goes into the part ``NO_VALUE``, so the parts of a run hold
  every pair once: when every pair has a figure, the parts' figures add up to the run's figure.
* Parts are never runs: ``Report.runs`` (the runs table, ``results.json`` ``runs`` and ``results``, the history and
  the gate) holds the whole runs only, so nothing is counted twice; the parts are ``Report.parts``, grouped with
  the runs into their own summary groups (``Group.part``) - the statistics of a value's part over the repetitions.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.base import label_text
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.rows import ResultRow, RunRow, pairs_line_rate

__all__ = ["ALL_PAIRS", "NO_VALUE", "split_runs"]

#: The part of a split run that holds the pairs without the compared label.
NO_VALUE = "(none)"
#: How the whole run of a split run is named where the compared value would stand.
ALL_PAIRS = "(all pairs)"


def _value(labels: Mapping[str, Any], label: str) -> str | None:
    value = labels.get(label)
    return None if value is None or value == "" else label_text(value)


def _part(run: RunRow, label: str, value: str, members: Sequence[ResultRow]) -> RunRow:
    usable = all(r.bits_per_second is not None for r in members)
    total = math.fsum(r.bits_per_second for r in members if r.bits_per_second is not None) if usable else None
    line_rate, note = pairs_line_rate(members, None)
    labels = {k: v for k, v in run.labels.items() if k != label}
    if value != NO_VALUE:
        labels[label] = members[0].labels.get(label)
    errors = [f"pair {r.pair}: {r.error}" for r in members if r.error]
    return RunRow(
        run=run.run,
        test=run.test,
        direction=run.direction,
        swapped=run.swapped,
        streams=run.streams,
        repetition=run.repetition,
        labels=labels,
        bits_per_second=total,
        line_rate_bps=line_rate,
        results=list(members),
        source=run.source,
        compare=value,
        protocol=run.protocol,
        complete=usable and all(bool(r.field("complete")) for r in members),
        errors=errors if total is None else [],
        record=run.record,
        line_rate_note=note,
        whole=run,
    )


def split_runs(runs: Sequence[RunRow], label: str) -> list[RunRow]:
    """Set every run's compared value (``RunRow.compare``) and return the parts of the runs whose pairs differ in it,
    in run order (each run's parts in the order of their values' first pair); see the module docstring."""
    parts: list[RunRow] = []
    for run in runs:
        rows = run.results if run.source == "paired_test" and run.results else []
        values = [_value(r.labels, label) for r in rows] if rows else [_value(run.labels, label)]
        distinct = list(dict.fromkeys(values))
        run.parts = []
        if len(distinct) == 1:
            run.compare = distinct[0]
            continue
        run.compare = None
        for value in distinct:
            members = [r for r, v in zip(rows, values, strict=True) if v == value]
            part = _part(run, label, NO_VALUE if value is None else value, members)
            run.parts.append(part)
            parts.append(part)
    return parts
