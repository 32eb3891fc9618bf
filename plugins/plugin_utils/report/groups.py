# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Grouping, statistics and knees: the runs of one test, direction, swap, streams value and compared label value
make a ``Group`` (its statistics from ``iperf.stats.summarize``); a family of groups over several stream counts makes a
``Sweep`` with its knee (``iperf.stats.knee``) and plateau. ``combine_swapped()`` adds, for the tests whose runs ask
for it (``combine_swapped`` in the paired_test record), one group over the swapped and unswapped runs of each point.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.stats import StatsError, knee, summarize
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.base import ReportError, as_number
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.figures import Figures, group_figures
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.host_cpu import GroupHostCpu, group_host_cpu
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.nic import sum_deltas
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.parts import ALL_PAIRS
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.rows import RunRow, direction_label, percent_of


@dataclass
class Group:
    """The runs of one test, direction, swap, streams value and compared label value."""

    test: str
    direction: str
    swapped: bool
    streams: int | None
    compare: str | None
    runs: list[RunRow]
    stats: dict[str, Any]
    line_rate_bps: float | None
    knee: int | None = None
    sweep: bool = False
    combined: bool = False  # the swapped and the unswapped runs together (combine_swapped)

    @property
    def part(self) -> bool:
        """The group of the parts of runs (``parts.py``): each run's pairs with one value of the compared label."""
        return bool(self.runs) and all(run.whole is not None for run in self.runs)

    @property
    def split(self) -> bool:
        """The group of whole runs whose pairs differ in the compared label (their parts have their own groups)."""
        return bool(self.runs) and all(run.parts for run in self.runs)

    @property
    def compare_text(self) -> str | None:
        """The compared value as shown: the value, ``ALL_PAIRS`` for split whole runs, ``None`` without one."""
        if self.compare is not None:
            return self.compare
        return ALL_PAIRS if self.split else None

    @property
    def stability(self) -> str | None:
        """The verdict of ``repeat {min, max, until_cv}`` on this point: the last run's record says it."""
        if self.combined or self.part:
            return None  # two points, each with its own verdict; a part: the verdict is on the whole run
        for run in reversed(self.runs):
            state = run.record.get("stability") if run.record is not None else None
            if isinstance(state, Mapping) and isinstance(state.get("verdict"), str):
                return str(state["verdict"])
        return None

    @property
    def nic(self) -> dict[str, int | None] | None:
        """The NIC counter deltas summed over the group's runs; ``None`` when a run was not read around."""
        return sum_deltas([run.nic for run in self.runs])

    @property
    def host_cpu(self) -> dict[str, GroupHostCpu] | None:
        """Each host's CPU over the group's runs (``host_cpu.group_host_cpu``); ``None`` when no run read it."""
        return group_host_cpu([run.host_cpu for run in self.runs])

    @property
    def line_rate_source(self) -> str | None:
        """Where the line rate came from, when its runs agree (see ``RunRow.line_rate_source``)."""
        sources = {run.line_rate_source for run in self.runs}
        return sources.pop() if len(sources) == 1 else None

    @property
    def mean(self) -> float | None:
        return as_number(self.stats.get("mean"))

    @property
    def half_width(self) -> float | None:
        return as_number((self.stats.get("ci95") or {}).get("half_width"))

    @property
    def percent_of_line_rate(self) -> float | None:
        return percent_of(self.mean, self.line_rate_bps)

    @property
    def flows(self) -> list[str]:
        """Who sent to whom (the hosts of the group's first run that names them)."""
        return next((run.flows for run in self.runs if run.flows), [])

    @property
    def direction_text(self) -> str:
        """``forward: vm2 → vm1``, ``forward, swapped: vm1 → vm2``; a combined group says so."""
        if self.combined:
            return f"{self.direction} (swapped + unswapped)"
        return direction_label(self.direction, self.swapped, self.flows)

    @property
    def figures(self) -> Figures:
        """CPU, retransmits per run, RTT, UDP loss and jitter, reverse figures over the group's runs."""
        return group_figures([run.figures for run in self.runs])

    @property
    def line_rate_note(self) -> str | None:
        return next((run.line_rate_note for run in self.runs if run.line_rate_note), None)

    @property
    def family(self) -> tuple[str, str, bool, str | None]:
        return (self.test, self.direction, self.swapped, self.compare)


@dataclass
class Sweep:
    """The groups of one test, direction, swap and label value over several stream counts."""

    test: str
    direction: str
    swapped: bool
    compare: str | None
    groups: list[Group]
    knee: int | None
    best_streams: int | None
    best_bits_per_second: float | None
    tolerance: float

    @property
    def line_rate_bps(self) -> float | None:
        rates = {g.line_rate_bps for g in self.groups}
        return rates.pop() if len(rates) == 1 else None

    @property
    def direction_text(self) -> str:
        return direction_label(self.direction, self.swapped, next((g.flows for g in self.groups if g.flows), []))

    @property
    def plateau_groups(self) -> list[Group]:
        """Where the sweep levels off: the stream counts from the knee on whose mean is within the tolerance of the
        best (a count above the knee that falls below it - congestion - is not on the plateau)."""
        best = self.best_bits_per_second
        if self.knee is None or best is None:
            return []
        threshold = best - self.tolerance * abs(best)
        return [
            g
            for g in self.groups
            if g.streams is not None and g.streams >= self.knee and g.mean is not None and g.mean >= threshold
        ]

    @property
    def plateau_streams(self) -> list[int]:
        return [g.streams for g in self.plateau_groups if g.streams is not None]

    @property
    def plateau_bits_per_second(self) -> float | None:
        """The level of the plateau: the mean of its stream counts' means (``None`` without a knee)."""
        means = [g.mean for g in self.plateau_groups if g.mean is not None]
        return sum(means) / len(means) if means else None


def in_order(values: Iterable[Any]) -> list[Any]:
    seen: dict[Any, None] = {}
    for value in values:
        seen.setdefault(value, None)
    return list(seen)


def streams_order(value: int | None) -> tuple[int, int]:
    return (1, 0) if value is None else (0, value)


def common_value(values: Iterable[float | None]) -> float | None:
    distinct = set(values)
    return distinct.pop() if len(distinct) == 1 else None


def _group(
    test: str, direction: str, swapped: bool, streams: int | None, compare: str | None, members: list[RunRow]
) -> Group:
    try:
        stats = summarize([r.bits_per_second for r in members])
    except StatsError as exc:  # pragma: no cover - figures are checked by as_number
        raise ReportError(f"test {test!r}: {exc}") from exc
    stats["key"] = "bits_per_second"
    return Group(
        test=test,
        direction=direction,
        swapped=swapped,
        streams=streams,
        compare=compare,
        runs=members,
        stats=stats,
        line_rate_bps=common_value(r.line_rate_bps for r in members),
    )


def combine_swapped(groups: Sequence[Group]) -> list[Group]:
    """One group over the unswapped and the swapped runs of each point whose runs ask for it (seed 002)."""
    combined: list[Group] = []
    for group in groups:
        if group.swapped or not any(r.record is not None and r.record.get("combine_swapped") for r in group.runs):
            continue
        key = (group.test, group.direction, group.streams, group.compare)
        partner = next((g for g in groups if g.swapped and (g.test, g.direction, g.streams, g.compare) == key), None)
        if partner is None:
            continue
        members = sorted([*group.runs, *partner.runs], key=lambda r: r.run)
        merged = _group(group.test, group.direction, False, group.streams, group.compare, members)
        merged.combined = True
        combined.append(merged)
    return combined


def build_groups(runs: Sequence[RunRow], tolerance: float) -> tuple[list[Group], list[Sweep]]:
    buckets: dict[tuple[str, str, bool, int | None, str | None], list[RunRow]] = {}
    for run in runs:
        buckets.setdefault((run.test, run.direction, run.swapped, run.streams, run.compare), []).append(run)
    tests = in_order(run.test for run in runs)
    groups: list[Group] = []
    for test in tests:
        keys = [k for k in buckets if k[0] == test]
        families = in_order((k[1], k[2], k[4]) for k in keys)
        for direction, swapped, compare in families:
            for key in sorted(
                (k for k in keys if (k[1], k[2], k[4]) == (direction, swapped, compare)),
                key=lambda k: streams_order(k[3]),
            ):
                groups.append(_group(test, direction, swapped, key[3], compare, buckets[key]))
    sweeps: list[Sweep] = []
    for family in in_order(g.family for g in groups):
        family_groups = [g for g in groups if g.family == family and g.streams is not None]
        if len({g.streams for g in family_groups}) < 2:
            continue
        points = {g.streams: g.mean for g in family_groups if g.streams is not None}
        try:
            found = knee(points, tolerance)
        except StatsError as exc:
            raise ReportError(f"test {family[0]!r}: {exc}") from exc
        usable = {x: v for x, v in points.items() if v is not None}
        best = max(usable, key=lambda x: (usable[x], -x)) if usable else None
        for group in family_groups:
            group.knee = found
            group.sweep = True
        sweeps.append(
            Sweep(
                test=family[0],
                direction=family[1],
                swapped=family[2],
                compare=family[3],
                groups=family_groups,
                knee=found,
                best_streams=best,
                best_bits_per_second=usable[best] if best is not None else None,
                tolerance=tolerance,
            )
        )
    return groups, sweeps
