# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The collection's one report builder: runs -> rows, statistics, knees, comparison, Markdown, CSV, plot specs.

Every summary of iperf runs comes from here: the ``esxilab.iperf.report`` role and the
``esxilab.iperf.paired_test`` role (which writes its report through the report role and reads
its ``paired_test_summary`` / ``paired_test_sweeps`` facts back from ``results.json``), and the
deprecated shims ``paired_test_summary``, ``paired_test_csv`` and ``paired_test_report``.
One concern, several renderings (hence the length): grouping and statistics, then each file.

Plain data in, plain data out: no Ansible import, no matplotlib, no clock, no I/O. The action
``report_write`` calls ``build_report()`` once, then renders the files from the ``Report``:

* ``to_json()`` -- ``results.json``: every normalized result with its labels, the
  environment, the runs, the summary, the sweeps and the comparison (``summary_doc()``: the
  summary and sweeps alone);
* ``results_csv()`` / ``summary_csv()`` -- one row per result / per summary group;
* ``to_markdown()`` -- ``summary.md``: tables per test, knees, comparison side by side, runs;
* ``plot_specs()`` -- what to draw (``_plots.py`` draws it);
* ``table_lines()`` -- the compact table printed at the end of the play.

Input (``runs``) is either the run records of ``esxilab.iperf.paired_test``
(``paired_test_results``: ``{run, test, streams, direction, swapped, repetition, labels,
pairs: [{server, client, address, port, started_at, ok, error, result}],
total_bits_per_second, ...}``) or plain normalized results (``_result.py``) carrying
``labels``; both may be mixed. A plain result is one run of its own; its test, streams,
direction and repetition come from its labels (``test``, ``streams``, ``direction``,
``repetition``), else from the result itself. A run record's own fields (barrier, start
spread, server stop, sender and receiver, ...) are kept in ``results.json`` as ``record`` of
the run (without its pairs) and of each result (the pair without its result).

Honesty rules: every figure comes from the results (a run's figure is the record's
``total_bits_per_second`` or the result's headline ``bits_per_second``); a run without a
usable figure is skipped by the statistics and shown as ``n/a``, never as 0. A percentage
of line rate is given only when a line rate is known (label ``line_rate_bps`` or
``link_speed_mbps`` of the run, else the report's ``line_rate_bps``).

Input is not trusted: an empty ``runs`` is refused (``ReportError``), text from the input is
HTML-escaped in ``summary.md`` (``_md``), and CSV cells go through ``_common.csv_safe``.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from ansible_collections.esxilab.iperf.plugins.module_utils._records import IperfResult, RunRecord
from ansible_collections.esxilab.iperf.plugins.module_utils._stats import StatsError, knee, summarize
from ansible_collections.esxilab.iperf.plugins.plugin_utils._common import csv_cell, csv_text

__all__ = [
    "FILES",
    "NA",
    "REPORT_FORMAT",
    "REPORT_VERSION",
    "Comparison",
    "Group",
    "PlotSpec",
    "Report",
    "ReportError",
    "ResultRow",
    "RunRow",
    "Series",
    "Sweep",
    "Unit",
    "build_report",
    "format_rate",
    "pick_unit",
    "plot_specs",
    "results_csv",
    "summary_csv",
    "summary_doc",
    "table_lines",
    "to_json",
    "to_markdown",
]

REPORT_FORMAT = "esxilab.iperf.report"
REPORT_VERSION = 1
NA = "n/a"
# The files of a report directory (plots come in addition, named by their specs).
FILES = {
    "json": "results.json",
    "csv": "results.csv",
    "summary_csv": "summary.csv",
    "markdown": "summary.md",
}
DEFAULT_TEST = "default"
# Labels that name the run itself; the other labels are shown as label columns.
RUN_LABELS = ("test", "run", "pair", "streams", "direction", "swapped", "repetition")


class ReportError(ValueError):
    """The input cannot be reported; the message names the item, the cause and the fix."""


# --------------------------------------------------------------------------------------------
# Units and formatting
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unit:
    """A throughput unit: ``Gbit/s`` is ``scale=1e9`` bits per second (SI)."""

    name: str
    scale: float


UNITS = (Unit("Gbit/s", 1e9), Unit("Mbit/s", 1e6), Unit("Kbit/s", 1e3), Unit("bit/s", 1.0))
UNIT_TEXT = {
    "Gbit/s": "1 Gbit/s = 10^9 bit/s",
    "Mbit/s": "1 Mbit/s = 10^6 bit/s",
    "Kbit/s": "1 Kbit/s = 10^3 bit/s",
    "bit/s": "bits per second",
}


def pick_unit(values: Iterable[float | None]) -> Unit:
    """The largest unit in which the largest value is at least 1 (Gbit/s when there is none)."""
    usable = [abs(v) for v in values if v is not None]
    if not usable:
        return UNITS[0]
    top = max(usable)
    for unit in UNITS:
        if top >= unit.scale:
            return unit
    return UNITS[-1]


def _fixed(value: float) -> str:
    """Three significant digits or more: 0.796, 9.410, 24.90, 796.0."""
    size = abs(value)
    if size >= 100:
        return f"{value:.1f}"
    if size >= 10:
        return f"{value:.2f}"
    return f"{value:.3f}"


def format_rate(value: float | None, unit: Unit) -> str:
    """A rate in ``unit`` without the unit name, or ``n/a``."""
    return NA if value is None else _fixed(value / unit.scale)


def _pct(value: float | None) -> str:
    return NA if value is None else f"{value:.1f}"


def _signed_pct(value: float | None) -> str:
    return NA if value is None else f"{value:+.1f} %"


def _rate_with_unit(value: float | None) -> str:
    if value is None:
        return NA
    unit = pick_unit([value])
    return f"{_fixed(value / unit.scale)} {unit.name}"


def _label_text(value: Any) -> str:
    if value is None:
        return NA
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(_plain(value), sort_keys=True, separators=(",", ":"))
    return str(value)


def _one_line(value: Any) -> str:
    text = value if isinstance(value, str) else _label_text(value)
    return " ".join(text.split()).replace("|", "\\|")


def _md(value: Any) -> str:
    """Text from the input (labels, names, messages) for ``summary.md``: one line, ``|`` escaped for tables,
    ``&`` and ``<`` HTML-escaped, so a label such as ``<img src=x onerror=...>`` is shown as text, never run
    (without ``<`` no tag can start; ``>`` is left as it is, so ``vm2 -> vm1`` reads as written)."""
    return _one_line(value).replace("&", "&amp;").replace("<", "&lt;")


def _code(value: Any) -> str:
    """An inline code span: Markdown shows its content literally, so it is not HTML-escaped."""
    text = _one_line(value).replace("`", "'")
    return f"`{text}`"


def _number(value: Any) -> float | None:
    """A finite int/float (not bool) as float, else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _plain(value: Any) -> Any:
    """Plain JSON types, whatever subclasses came in; non-finite floats become ``None``."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence | set | frozenset) and not isinstance(value, bytes):
        return [_plain(v) for v in value]
    return str(value)


def slug(text: str) -> str:
    """A file-name-safe form: ``MTU 9000 / vmxnet3`` -> ``mtu-9000-vmxnet3``."""
    cleaned = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return cleaned or "x"


# --------------------------------------------------------------------------------------------
# Rows
# --------------------------------------------------------------------------------------------


@dataclass
class ResultRow:
    """One normalized result: one pair of a paired run, or one plain result."""

    run: int
    pair: int | None
    labels: dict[str, Any]
    result: IperfResult | None
    bits_per_second: float | None  # the usable headline; None when the result has none
    line_rate_bps: float | None
    error: str | None = None
    server: str | None = None
    client: str | None = None
    address: str | None = None
    port: int | None = None
    started_at: float | None = None
    record: dict[str, Any] | None = None  # paired_test: the pair as recorded, without its result

    @property
    def percent_of_line_rate(self) -> float | None:
        return _percent(self.bits_per_second, self.line_rate_bps)

    def field(self, path: str) -> Any:
        """A field of the result by dotted path (``sent.bytes``, ``udp.jitter_ms``), or ``None``."""
        current: Any = self.result
        for part in path.split("."):
            if not isinstance(current, Mapping):
                return None
            current = current.get(part)
        return current


@dataclass
class RunRow:
    """One run: the unit the statistics are made of."""

    run: int
    test: str
    direction: str
    swapped: bool
    streams: int | None
    repetition: int | None
    labels: dict[str, Any]
    bits_per_second: float | None
    line_rate_bps: float | None
    results: list[ResultRow]
    source: str  # paired_test | result
    compare: str | None = None
    protocol: str | None = None
    complete: bool = False
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    record: dict[str, Any] | None = None  # paired_test: the run record as recorded, without its pairs

    @property
    def percent_of_line_rate(self) -> float | None:
        return _percent(self.bits_per_second, self.line_rate_bps)

    @property
    def retransmits(self) -> int | None:
        """The sum of the senders' retransmits over the pairs, when every pair has the figure."""
        if self.bits_per_second is None or not self.results:
            return None
        values: list[int] = []
        for row in self.results:
            value = row.field("sent.retransmits")
            if isinstance(value, bool) or not isinstance(value, int):
                return None
            values.append(value)
        return sum(values)

    @property
    def lost_percent(self) -> float | None:
        """UDP loss of a run with one result (several pairs: no figure, none is summed here)."""
        if len(self.results) != 1 or self.bits_per_second is None:
            return None
        return _number(self.results[0].field("udp.lost_percent"))

    @property
    def direction_text(self) -> str:
        return f"{self.direction} (swapped)" if self.swapped else self.direction


def _percent(value: float | None, line_rate: float | None) -> float | None:
    if value is None or line_rate is None or line_rate <= 0:
        return None
    return value / line_rate * 100.0


def _line_rate_of(labels: Mapping[str, Any]) -> float | None:
    """``line_rate_bps`` (bit/s) or ``link_speed_mbps`` (Mb/s, as esxi_vmknic reports) of labels."""
    rate = _number(labels.get("line_rate_bps"))
    if rate is not None and rate > 0:
        return rate
    speed = _number(labels.get("link_speed_mbps"))
    if speed is not None and speed > 0:
        return speed * 1e6
    return None


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _is_paired_record(item: Mapping[str, Any]) -> bool:
    pairs = item.get("pairs")
    return "total_bits_per_second" in item and isinstance(pairs, Sequence) and not isinstance(pairs, str)


def _is_result(item: Mapping[str, Any]) -> bool:
    return "bits_per_second" in item and ("tool" in item or "schema_version" in item or "error" in item)


def _direction_of(result: IperfResult) -> str:
    if result.get("bidir"):
        return "bidir"
    return "reverse" if result.get("reverse") else "forward"


def _result_error(result: IperfResult) -> str | None:
    error = result.get("error")
    if isinstance(error, str) and error.strip():
        return " ".join(error.split())
    if result.get("bits_per_second") is None:
        warnings = [str(w) for w in result.get("warnings") or [] if w]
        return "no throughput figure" + (f": {'; '.join(warnings)}" if warnings else "")
    return None


def _from_paired(index: int, record: RunRecord, default_rate: float | None) -> RunRow:
    where = f"run {index + 1}"
    run_no = _int(record.get("run")) or index + 1
    test = str(record.get("test") or DEFAULT_TEST)
    direction = str(record.get("direction") or "forward")
    swapped = bool(record.get("swapped", False))
    streams = _int(record.get("streams"))
    repetition = _int(record.get("repetition"))
    run_labels = dict(record.get("labels") or {})
    line_rate = _line_rate_of(run_labels) or default_rate
    total = record.get("total_bits_per_second")
    if total is not None and _number(total) is None:
        raise ReportError(f"{where}: total_bits_per_second must be a number or null, got {_kind(total)} {total!r}")
    identity = {
        "test": test,
        "run": run_no,
        "streams": streams,
        "direction": direction,
        "swapped": swapped,
        "repetition": repetition,
    }
    results: list[ResultRow] = []
    protocols: list[str] = []
    for position, pair in enumerate(record.get("pairs") or []):
        if not isinstance(pair, Mapping):
            raise ReportError(f"{where}: pairs[{position}] must be a dictionary, got {_kind(pair)}")
        raw = pair.get("result")
        result = raw if isinstance(raw, Mapping) else None  # a result from Ansible: its figures are read with .get
        pair_no = _int(pair.get("pair")) or position + 1
        result_labels = result.get("labels") if result is not None else None
        labels = {**run_labels, **dict(result_labels or {}), **identity, "pair": pair_no}
        ok = bool(pair.get("ok", result is not None))
        headline = _number(result.get("bits_per_second")) if result is not None and ok else None
        error = pair.get("error") or (None if result is None else _result_error(result))
        if error is None and headline is None:
            error = "no result" if result is None else "the pair failed"
        if isinstance(result, Mapping) and isinstance(result.get("protocol"), str):
            protocols.append(result["protocol"])
        results.append(
            ResultRow(
                run=run_no,
                pair=pair_no,
                labels=labels,
                result=result,
                bits_per_second=headline,
                line_rate_bps=_line_rate_of(labels) or line_rate,
                error=None if error is None else " ".join(str(error).split()),
                server=pair.get("server"),
                client=pair.get("client"),
                address=pair.get("address"),
                port=_int(pair.get("port")),
                started_at=_number(pair.get("started_at")),
                record={str(k): v for k, v in pair.items() if k != "result"},
            )
        )
    errors = [str(e) for e in record.get("errors") or []]
    if total is None and not errors:
        errors = [f"pair {r.pair}: {r.error}" for r in results if r.error] or ["no usable figure"]
    protocol = record.get("protocol") if isinstance(record.get("protocol"), str) else None
    return RunRow(
        run=run_no,
        test=test,
        direction=direction,
        swapped=swapped,
        streams=streams,
        repetition=repetition,
        labels={**run_labels, **identity},
        bits_per_second=_number(total),
        line_rate_bps=line_rate,
        results=results,
        source="paired_test",
        protocol=protocol or (protocols[0] if protocols else None),
        complete=bool(record.get("complete", total is not None)),
        errors=errors,
        warnings=[str(w) for w in record.get("warnings") or []],
        record={str(k): v for k, v in record.items() if k != "pairs"},
    )


def _from_result(index: int, result: IperfResult, default_rate: float | None) -> RunRow:
    labels = dict(result.get("labels") or {})
    run_no = index + 1
    streams = _int(labels.get("streams"))
    if streams is None:
        seen = _int(result.get("streams"))
        streams = seen if seen else None
    direction = labels.get("direction")
    direction = str(direction) if isinstance(direction, str) and direction else _direction_of(result)
    swapped = labels.get("swapped") is True
    test = labels.get("test")
    test = str(test) if test not in (None, "") else DEFAULT_TEST
    line_rate = _line_rate_of(labels) or default_rate
    headline = _number(result.get("bits_per_second"))
    error = _result_error(result)
    row = ResultRow(
        run=run_no,
        pair=_int(labels.get("pair")),
        labels=labels,
        result=result,
        bits_per_second=headline,
        line_rate_bps=line_rate,
        error=error,
    )
    protocol = result.get("protocol")
    return RunRow(
        run=run_no,
        test=test,
        direction=direction,
        swapped=swapped,
        streams=streams,
        repetition=_int(labels.get("repetition")),
        labels=labels,
        bits_per_second=headline,
        line_rate_bps=line_rate,
        results=[row],
        source="result",
        protocol=protocol if isinstance(protocol, str) else None,
        complete=bool(result.get("complete")) and headline is not None,
        errors=[error] if error and headline is None else [],
        warnings=[str(w) for w in result.get("warnings") or []],
    )


def read_runs(runs: Any, *, line_rate_bps: float | None = None) -> list[RunRow]:
    """Turn ``paired_test_results`` records and/or normalized results into run rows."""
    if isinstance(runs, str | bytes | Mapping) or not isinstance(runs, Sequence):
        raise ReportError(
            f"runs must be a list (paired_test_results, or normalized results with labels), got {_kind(runs)}"
        )
    rows: list[RunRow] = []
    for index, item in enumerate(runs):
        if not isinstance(item, Mapping):
            raise ReportError(f"runs[{index}] must be a dictionary (a run record or a result), got {_kind(item)}")
        # The one place where the report's input becomes typed: a run record or a result, told apart by their
        # keys. Both came through Ansible and are not validated beyond that, so their fields are read with
        # .get() and checked where they are used.
        if _is_paired_record(item):
            rows.append(_from_paired(index, cast("RunRecord", item), line_rate_bps))
        elif _is_result(item):
            rows.append(_from_result(index, cast("IperfResult", item), line_rate_bps))
        else:
            keys = ", ".join(sorted(str(k) for k in item)[:12]) or "none"
            raise ReportError(
                f"runs[{index}] is neither a run record of paired_test_results (pairs, total_bits_per_second) nor "
                f"a normalized result (tool, bits_per_second); its keys: {keys}. Pass paired_test_results, or "
                "results from esxilab.iperf.iperf_parse / iperf_facts / iperf_run"
            )
    return rows


# --------------------------------------------------------------------------------------------
# Groups, sweeps, comparison
# --------------------------------------------------------------------------------------------


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

    @property
    def mean(self) -> float | None:
        return _number(self.stats.get("mean"))

    @property
    def half_width(self) -> float | None:
        return _number((self.stats.get("ci95") or {}).get("half_width"))

    @property
    def percent_of_line_rate(self) -> float | None:
        return _percent(self.mean, self.line_rate_bps)

    @property
    def direction_text(self) -> str:
        return f"{self.direction} (swapped)" if self.swapped else self.direction

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
        return f"{self.direction} (swapped)" if self.swapped else self.direction


@dataclass
class ComparisonRow:
    """One row of the comparison: the groups of each label value for the same conditions."""

    key: dict[str, Any]  # test (when per test), direction, swapped, streams
    cells: dict[str, Group | None]


@dataclass
class Comparison:
    """Groups side by side by the value of one label (``nic``: e1000 vs vmxnet3)."""

    label: str
    values: list[str]
    per_test: bool
    rows: list[ComparisonRow]
    left_out: int  # runs without the label

    def delta(self, row: ComparisonRow, value: str) -> float | None:
        """``value``'s mean relative to the first value's, in percent."""
        base = row.cells.get(self.values[0])
        other = row.cells.get(value)
        if base is None or other is None or base.mean is None or other.mean is None or base.mean <= 0:
            return None
        return (other.mean / base.mean - 1.0) * 100.0


def _ordered(values: Iterable[Any]) -> list[Any]:
    seen: dict[Any, None] = {}
    for value in values:
        seen.setdefault(value, None)
    return list(seen)


def _streams_order(value: int | None) -> tuple[int, int]:
    return (1, 0) if value is None else (0, value)


def _common(values: Iterable[float | None]) -> float | None:
    distinct = set(values)
    return distinct.pop() if len(distinct) == 1 else None


def _build_groups(runs: Sequence[RunRow], tolerance: float) -> tuple[list[Group], list[Sweep]]:
    buckets: dict[tuple[str, str, bool, int | None, str | None], list[RunRow]] = {}
    for run in runs:
        buckets.setdefault((run.test, run.direction, run.swapped, run.streams, run.compare), []).append(run)
    tests = _ordered(run.test for run in runs)
    groups: list[Group] = []
    for test in tests:
        keys = [k for k in buckets if k[0] == test]
        families = _ordered((k[1], k[2], k[4]) for k in keys)
        for direction, swapped, compare in families:
            for key in sorted(
                (k for k in keys if (k[1], k[2], k[4]) == (direction, swapped, compare)),
                key=lambda k: _streams_order(k[3]),
            ):
                members = buckets[key]
                try:
                    stats = summarize([r.bits_per_second for r in members])
                except StatsError as exc:  # pragma: no cover - figures are checked by _number
                    raise ReportError(f"test {test!r}: {exc}") from exc
                stats["key"] = "bits_per_second"
                groups.append(
                    Group(
                        test=test,
                        direction=direction,
                        swapped=swapped,
                        streams=key[3],
                        compare=compare,
                        runs=members,
                        stats=stats,
                        line_rate_bps=_common(r.line_rate_bps for r in members),
                    )
                )
    sweeps: list[Sweep] = []
    for family in _ordered(g.family for g in groups):
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


def _build_comparison(label: str, runs: Sequence[RunRow], groups: Sequence[Group]) -> Comparison:
    labelled = [g for g in groups if g.compare is not None]
    values = _ordered(run.compare for run in runs if run.compare is not None)
    left_out = sum(run.compare is None for run in runs)
    values_per_test: dict[str, set[str]] = {}
    for group in labelled:
        values_per_test.setdefault(group.test, set()).add(str(group.compare))
    # Tests are the variants (test "vmxnet3" has nic=vmxnet3 only): compare across tests.
    per_test = any(len(v) > 1 for v in values_per_test.values()) and label != "test"
    dimensions = [d for d in (("test",) if per_test else ()) + ("direction", "swapped", "streams") if d != label]
    rows: dict[tuple[Any, ...], ComparisonRow] = {}
    for group in labelled:
        key = {name: getattr(group, name) for name in dimensions}
        marker = tuple(key.values())
        if marker not in rows:
            rows[marker] = ComparisonRow(key=key, cells=dict.fromkeys(values))
        cells = rows[marker].cells
        if cells.get(str(group.compare)) is None:
            cells[str(group.compare)] = group
        else:  # two tests give the same conditions and value: keep both apart, per test
            return _build_comparison_per_test(label, runs, groups, values, left_out)
    ordered = sorted(rows.values(), key=lambda r: _row_order(r, dimensions, groups))
    return Comparison(label=label, values=values, per_test=per_test, rows=ordered, left_out=left_out)


def _build_comparison_per_test(
    label: str, runs: Sequence[RunRow], groups: Sequence[Group], values: list[str], left_out: int
) -> Comparison:
    dimensions = [d for d in ("test", "direction", "swapped", "streams") if d != label]
    rows: dict[tuple[Any, ...], ComparisonRow] = {}
    for group in (g for g in groups if g.compare is not None):
        key = {name: getattr(group, name) for name in dimensions}
        row = rows.setdefault(tuple(key.values()), ComparisonRow(key=key, cells=dict.fromkeys(values)))
        row.cells[str(group.compare)] = group
    ordered = sorted(rows.values(), key=lambda r: _row_order(r, dimensions, groups))
    return Comparison(label=label, values=values, per_test=True, rows=ordered, left_out=left_out)


def _row_order(row: ComparisonRow, dimensions: Sequence[str], groups: Sequence[Group]) -> tuple[Any, ...]:
    tests = _ordered(g.test for g in groups)
    directions = _ordered((g.direction, g.swapped) for g in groups)
    key = row.key
    return (
        tests.index(key["test"]) if "test" in key else 0,
        directions.index((key.get("direction"), key.get("swapped"))) if "direction" in key else 0,
        _streams_order(key.get("streams")) if "streams" in key else (0, 0),
    )


# --------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------


@dataclass
class Report:
    """Everything the files are rendered from."""

    name: str
    title: str
    environment: dict[str, Any]
    line_rate_bps: float | None
    compare_by: str | None
    knee_tolerance: float
    generated_at: str | None
    runs: list[RunRow]
    groups: list[Group]
    sweeps: list[Sweep]
    comparison: Comparison | None
    unit: Unit

    @property
    def results(self) -> list[ResultRow]:
        return [r for run in self.runs for r in run.results]

    @property
    def tests(self) -> list[str]:
        return _ordered(run.test for run in self.runs)

    @property
    def failed_runs(self) -> list[RunRow]:
        return [run for run in self.runs if run.bits_per_second is None]

    @property
    def has_line_rate(self) -> bool:
        return any(run.line_rate_bps is not None for run in self.runs)

    def tools(self) -> list[tuple[str, str | None, int]]:
        """``(tool, version, number of results)`` seen in the results, in order of appearance."""
        counts: dict[tuple[str, str | None], int] = {}
        for row in self.results:
            tool = row.field("tool")
            if not isinstance(tool, str):
                continue
            version = row.field("tool_version")
            key = (tool, version if isinstance(version, str) else None)
            counts[key] = counts.get(key, 0) + 1
        return [(tool, version, count) for (tool, version), count in counts.items()]


def build_report(
    runs: Any,
    *,
    name: str = "iperf",
    title: str | None = None,
    environment: Mapping[str, Any] | None = None,
    line_rate_bps: float | None = None,
    compare_by: str | None = None,
    knee_tolerance: float = 0.05,
    generated_at: str | None = None,
) -> Report:
    """Read ``runs`` and compute the groups, sweeps and comparison of the report."""
    if not isinstance(name, str) or not name.strip():
        raise ReportError(f"name must be a non-empty string, got {name!r}")
    if line_rate_bps is not None:
        rate = _number(line_rate_bps)
        if rate is None or rate <= 0:
            raise ReportError(
                f"line_rate_bps must be a positive number of bit/s (10 Gbit/s = 10000000000), got {line_rate_bps!r}"
            )
        line_rate_bps = rate
    if isinstance(knee_tolerance, bool) or not isinstance(knee_tolerance, int | float):
        raise ReportError(f"knee_tolerance must be a fraction such as 0.05, got {knee_tolerance!r}")
    if not 0.0 <= knee_tolerance < 1.0:
        raise ReportError(f"knee_tolerance must be a fraction in [0, 1), e.g. 0.05, got {knee_tolerance!r}")
    if environment is not None and not isinstance(environment, Mapping):
        raise ReportError(f"environment must be a dictionary, got {_kind(environment)}")
    label = compare_by.strip() if isinstance(compare_by, str) and compare_by.strip() else None

    rows = read_runs(runs, line_rate_bps=line_rate_bps)
    if not rows:
        raise ReportError(
            "runs is empty: there is no run to report, so no report is written; pass paired_test_results or "
            "normalized results (check that the runs were registered, and that the list given is the right one)"
        )
    if label is not None:
        for run in rows:
            value = run.labels.get(label)
            run.compare = None if value is None or value == "" else _label_text(value)
    groups, sweeps = _build_groups(rows, float(knee_tolerance))
    comparison = _build_comparison(label, rows, groups) if label is not None else None
    unit = pick_unit([run.bits_per_second for run in rows] + [r.bits_per_second for run in rows for r in run.results])
    return Report(
        name=name.strip(),
        title=title.strip() if isinstance(title, str) and title.strip() else f"iperf report: {name.strip()}",
        environment=dict(environment or {}),
        line_rate_bps=line_rate_bps,
        compare_by=label,
        knee_tolerance=float(knee_tolerance),
        generated_at=generated_at,
        runs=rows,
        groups=groups,
        sweeps=sweeps,
        comparison=comparison,
        unit=unit,
    )


# --------------------------------------------------------------------------------------------
# results.json
# --------------------------------------------------------------------------------------------


def _stats_doc(stats: Mapping[str, Any]) -> dict[str, Any]:
    return {k: stats.get(k) for k in ("count", "skipped", "mean", "median", "min", "max", "stdev", "cv", "sum", "ci95")}


def _group_doc(group: Group) -> dict[str, Any]:
    return {
        "test": group.test,
        "direction": group.direction,
        "swapped": group.swapped,
        "streams": group.streams,
        "compare": group.compare,
        "runs": [run.run for run in group.runs],
        "stats": _stats_doc(group.stats),
        "line_rate_bps": group.line_rate_bps,
        "percent_of_line_rate": group.percent_of_line_rate,
        "sweep": group.sweep,
        "knee": group.knee,
    }


def _run_doc(run: RunRow) -> dict[str, Any]:
    return {
        "run": run.run,
        "test": run.test,
        "direction": run.direction,
        "swapped": run.swapped,
        "streams": run.streams,
        "repetition": run.repetition,
        "compare": run.compare,
        "labels": run.labels,
        "protocol": run.protocol,
        "pairs": len(run.results),
        "bits_per_second": run.bits_per_second,
        "line_rate_bps": run.line_rate_bps,
        "percent_of_line_rate": run.percent_of_line_rate,
        "retransmits": run.retransmits,
        "complete": run.complete,
        "errors": run.errors,
        "warnings": run.warnings,
        "source": run.source,
        "record": run.record,
    }


def _result_doc(row: ResultRow) -> dict[str, Any]:
    return {
        "run": row.run,
        "pair": row.pair,
        "server": row.server,
        "client": row.client,
        "address": row.address,
        "port": row.port,
        "started_at": row.started_at,
        "labels": row.labels,
        "line_rate_bps": row.line_rate_bps,
        "percent_of_line_rate": row.percent_of_line_rate,
        "error": row.error,
        "result": row.result,
        "record": row.record,
    }


def _comparison_doc(comparison: Comparison) -> dict[str, Any]:
    return {
        "label": comparison.label,
        "values": comparison.values,
        "per_test": comparison.per_test,
        "left_out_runs": comparison.left_out,
        "rows": [
            {
                **row.key,
                "means": {v: (g.mean if g else None) for v, g in row.cells.items()},
                "ci95_half_width": {v: (g.half_width if g else None) for v, g in row.cells.items()},
                "delta_percent": {v: comparison.delta(row, v) for v in comparison.values[1:]},
            }
            for row in comparison.rows
        ],
    }


def _sweep_doc(sweep: Sweep) -> dict[str, Any]:
    return {
        "test": sweep.test,
        "direction": sweep.direction,
        "swapped": sweep.swapped,
        "compare": sweep.compare,
        "points": [
            {"streams": g.streams, "mean": g.mean, "ci95_half_width": g.half_width, "count": g.stats["count"]}
            for g in sweep.groups
        ],
        "knee": sweep.knee,
        "best_streams": sweep.best_streams,
        "best_bits_per_second": sweep.best_bits_per_second,
        "tolerance": sweep.tolerance,
    }


def summary_doc(report: Report) -> dict[str, Any]:
    """The ``summary`` (one item per group) and ``sweeps`` of ``results.json``, as plain data."""
    result: dict[str, Any] = _plain(
        {"summary": [_group_doc(g) for g in report.groups], "sweeps": [_sweep_doc(s) for s in report.sweeps]}
    )
    return result


def to_json(report: Report) -> str:
    """``results.json``: format, version, the options, environment, runs, results, summary, sweeps, comparison."""
    document = {
        "format": REPORT_FORMAT,
        "version": REPORT_VERSION,
        "name": report.name,
        "title": report.title,
        "generated_at": report.generated_at,
        "environment": report.environment,
        "line_rate_bps": report.line_rate_bps,
        "compare_by": report.compare_by,
        "knee_tolerance": report.knee_tolerance,
        "unit": report.unit.name,
        "runs": [_run_doc(run) for run in report.runs],
        "results": [_result_doc(row) for row in report.results],
        "summary": [_group_doc(group) for group in report.groups],
        "sweeps": [_sweep_doc(sweep) for sweep in report.sweeps],
        "comparison": _comparison_doc(report.comparison) if report.comparison else None,
    }
    return json.dumps(_plain(document), indent=2, allow_nan=False) + "\n"


# --------------------------------------------------------------------------------------------
# CSV
# --------------------------------------------------------------------------------------------

RESULT_COLUMNS = (
    "run",
    "test",
    "direction",
    "swapped",
    "streams",
    "repetition",
    "pair",
    "server",
    "client",
    "address",
    "port",
    "started_at",
    "tool",
    "tool_version",
    "protocol",
    "side",
    "bits_per_second",
    "line_rate_bps",
    "percent_of_line_rate",
    "sent_bytes",
    "sent_bits_per_second",
    "received_bytes",
    "received_bits_per_second",
    "duration",
    "retransmits",
    "jitter_ms",
    "lost_percent",
    "complete",
    "error",
    "run_bits_per_second",
)
SUMMARY_COLUMNS = (
    "test",
    "direction",
    "swapped",
    "streams",
    "compare",
    "runs",
    "count",
    "skipped",
    "mean",
    "median",
    "stdev",
    "ci95_low",
    "ci95_high",
    "ci95_half_width",
    "min",
    "max",
    "line_rate_bps",
    "percent_of_line_rate",
    "knee",
)


def _cell(value: Any) -> Any:
    """``csv_cell``, plus lists and mappings as compact JSON and ``str`` subclasses as plain ``str``."""
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(_plain(value), sort_keys=True, separators=(",", ":"))
    return str(value) if isinstance(value, str) else csv_cell(value)


def _label_columns(report: Report) -> list[str]:
    keys = _ordered(str(k) for row in report.results for k in row.labels if str(k) not in RUN_LABELS)
    return [f"label.{k}" for k in keys]


def results_csv(report: Report) -> str:
    """``results.csv``: one row per result; figures from the result, ``None`` as an empty cell.

    Floats are written exactly (``repr``). A failed pair has its ``error`` and empty figures.
    ``label.<key>`` columns hold the labels other than the run's identity.
    """
    label_columns = _label_columns(report)
    rows = []
    for run in report.runs:
        for row in run.results:
            usable = row.bits_per_second is not None
            udp = row.field("udp") if isinstance(row.field("udp"), Mapping) else {}
            retransmits = row.field("sent.retransmits")
            item: dict[str, Any] = {
                "run": run.run,
                "test": run.test,
                "direction": run.direction,
                "swapped": run.swapped,
                "streams": run.streams,
                "repetition": run.repetition,
                "pair": row.pair,
                "server": row.server,
                "client": row.client,
                "address": row.address,
                "port": row.port,
                "started_at": row.started_at,
                "tool": row.field("tool"),
                "tool_version": row.field("tool_version"),
                "protocol": row.field("protocol"),
                "side": row.field("side"),
                "bits_per_second": row.bits_per_second,
                "line_rate_bps": row.line_rate_bps,
                "percent_of_line_rate": row.percent_of_line_rate,
                "sent_bytes": row.field("sent.bytes") if usable else None,
                "sent_bits_per_second": row.field("sent.bits_per_second") if usable else None,
                "received_bytes": row.field("received.bytes") if usable else None,
                "received_bits_per_second": row.field("received.bits_per_second") if usable else None,
                "duration": row.field("duration") if usable else None,
                "retransmits": retransmits if usable else None,
                "jitter_ms": udp.get("jitter_ms") if usable else None,
                "lost_percent": udp.get("lost_percent") if usable else None,
                "complete": bool(row.field("complete")),
                "error": row.error,
                "run_bits_per_second": run.bits_per_second,
            }
            for column in label_columns:
                item[column] = row.labels.get(column[len("label.") :])
            rows.append(item)
    return csv_text((*RESULT_COLUMNS, *label_columns), rows, _cell)


def summary_csv(report: Report) -> str:
    """``summary.csv``: one row per test, direction, swap, streams value and compared label value."""
    rows = []
    for group in report.groups:
        ci95 = group.stats.get("ci95") or {}
        rows.append(
            {
                "test": group.test,
                "direction": group.direction,
                "swapped": group.swapped,
                "streams": group.streams,
                "compare": group.compare,
                "runs": len(group.runs),
                **{k: group.stats.get(k) for k in ("count", "skipped", "mean", "median", "stdev", "min", "max")},
                "ci95_low": ci95.get("low"),
                "ci95_high": ci95.get("high"),
                "ci95_half_width": ci95.get("half_width"),
                "line_rate_bps": group.line_rate_bps,
                "percent_of_line_rate": group.percent_of_line_rate,
                "knee": group.knee,
            }
        )
    columns = list(SUMMARY_COLUMNS)
    if report.compare_by is None:
        columns.remove("compare")
    return csv_text(columns, rows, _cell)


# --------------------------------------------------------------------------------------------
# Plot specifications (drawn by _plots.py)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Series:
    """One line or one set of bars; ``y``/``yerr`` in the plot's unit, ``None`` = no figure."""

    label: str
    x: tuple[float, ...]
    y: tuple[float | None, ...]
    yerr: tuple[float | None, ...] = ()
    knee: float | None = None  # sweeps: the knee's x


@dataclass(frozen=True)
class PlotSpec:
    """What one PNG shows."""

    kind: str  # sweep | timeseries | compare
    file: str
    title: str
    xlabel: str
    ylabel: str
    series: tuple[Series, ...]
    categories: tuple[str, ...] = ()  # compare: the x categories
    line_rate: float | None = None  # in the plot's unit
    line_rate_label: str | None = None
    caption: str = ""


def _scaled(value: float | None, unit: Unit) -> float | None:
    return None if value is None else value / unit.scale


def _sweep_labels(sweeps: Sequence[Sweep], label: str | None) -> list[str]:
    """Legend names: the compared value (``mtu=9000``) when it tells the sweeps apart, else with the test."""
    short = [f"{label}={s.compare}" if s.compare is not None else s.test for s in sweeps]
    if len(set(short)) == len(short):
        return short
    return [s.test if s.compare is None else f"{s.test}, {label}={s.compare}" for s in sweeps]


def _unique(name: str, used: set[str]) -> str:
    stem, number = name, 2
    while f"{name}.png" in used:
        name = f"{stem}-{number}"
        number += 1
    used.add(f"{name}.png")
    return f"{name}.png"


def plot_specs(report: Report) -> list[PlotSpec]:
    """Sweeps (throughput vs streams with 95 % CI error bars, one PNG per direction), time series
    (per-interval throughput, one PNG per summary group with intervals) and the comparison
    (grouped bars). Plots without a single usable figure are left out."""
    unit = report.unit
    ylabel = f"Throughput ({unit.name})"
    used: set[str] = set()
    specs: list[PlotSpec] = []

    for direction, swapped in _ordered((s.direction, s.swapped) for s in report.sweeps):
        sweeps = [
            s
            for s in report.sweeps
            if (s.direction, s.swapped) == (direction, swapped) and s.best_bits_per_second is not None
        ]
        series = []
        for sweep, name in zip(sweeps, _sweep_labels(sweeps, report.compare_by), strict=True):
            points = [g for g in sweep.groups if g.streams is not None]
            series.append(
                Series(
                    label=name,
                    x=tuple(float(g.streams) for g in points if g.streams is not None),
                    y=tuple(_scaled(g.mean, unit) for g in points),
                    yerr=tuple(_scaled(g.half_width, unit) for g in points),
                    knee=None if sweep.knee is None else float(sweep.knee),
                )
            )
        if not series:
            continue
        rate = _common(s.line_rate_bps for s in sweeps)
        direction_text = f"{direction} (swapped)" if swapped else direction
        subject = sweeps[0].test if len({s.test for s in sweeps}) == 1 else report.name
        specs.append(
            PlotSpec(
                kind="sweep",
                file=_unique(slug(f"sweep-{direction}{'-swapped' if swapped else ''}"), used),
                title=f"Throughput vs parallel streams: {subject} ({direction_text})",
                xlabel="Parallel streams per client",
                ylabel=ylabel,
                series=tuple(series),
                line_rate=_scaled(rate, unit),
                line_rate_label=f"line rate {_rate_with_unit(rate)}" if rate else None,
                caption=f"Mean throughput vs parallel streams ({direction_text}), error bars: 95 % CI, star: knee",
            )
        )

    if report.comparison is not None and report.comparison.rows:
        comparison = report.comparison
        tests = _ordered(row.key.get("test") for row in comparison.rows) if comparison.per_test else [None]
        for test in tests:
            rows = [row for row in comparison.rows if row.key.get("test") == test]
            categories = tuple(_category(row, comparison, rows) for row in rows)
            series = []
            for value in comparison.values:
                cells = [row.cells.get(value) for row in rows]
                series.append(
                    Series(
                        label=f"{comparison.label}={value}",
                        x=tuple(float(i) for i in range(len(rows))),
                        y=tuple(_scaled(c.mean if c else None, unit) for c in cells),
                        yerr=tuple(_scaled(c.half_width if c else None, unit) for c in cells),
                    )
                )
            if not any(v is not None for s in series for v in s.y):
                continue
            groups = [c for row in rows for c in row.cells.values() if c is not None]
            rate = _common(g.line_rate_bps for g in groups)
            suffix = f" - test {test}" if test is not None else ""
            specs.append(
                PlotSpec(
                    kind="compare",
                    file=_unique(slug(f"compare-{comparison.label}{'-' + test if test else ''}"), used),
                    title=f"Throughput by {comparison.label}{suffix}",
                    xlabel="Conditions",
                    ylabel=ylabel,
                    series=tuple(series),
                    categories=categories,
                    line_rate=_scaled(rate, unit),
                    line_rate_label=f"line rate {_rate_with_unit(rate)}" if rate else None,
                    caption=f"Mean throughput by {comparison.label}{suffix}, error bars: 95 % CI",
                )
            )

    for group in report.groups:
        series = []
        for run in group.runs:
            for row in run.results:
                steps = _interval_points(row)
                if not steps:
                    continue
                name = f"run {run.run}" + (f" pair {row.pair}" if len(run.results) > 1 else "")
                # Drawn as steps: each interval's rate from its start to its end.
                series.append(
                    Series(
                        label=name,
                        x=(*(start for start, _end, _bps in steps), steps[-1][1]),
                        y=(*(_scaled(bps, unit) for _start, _end, bps in steps), _scaled(steps[-1][2], unit)),
                    )
                )
        if not series:
            continue
        streams = NA if group.streams is None else str(group.streams)
        what = f"{group.test}, {group.direction_text}, {streams} stream{'' if group.streams == 1 else 's'}"
        if group.compare is not None:
            what += f", {report.compare_by}={group.compare}"
        specs.append(
            PlotSpec(
                kind="timeseries",
                file=_unique(
                    slug(
                        f"timeseries-{group.test}-{group.direction}{'-swapped' if group.swapped else ''}-{streams}s"
                        + (f"-{group.compare}" if group.compare is not None else "")
                    ),
                    used,
                ),
                title=f"Throughput per interval: {what}",
                xlabel="Time since start of test (s)",
                ylabel=ylabel,
                series=tuple(series),
                line_rate=_scaled(group.line_rate_bps, unit),
                line_rate_label=f"line rate {_rate_with_unit(group.line_rate_bps)}" if group.line_rate_bps else None,
                caption=f"Throughput per interval ({what}); omitted (-O) intervals are not shown",
            )
        )
    return specs


def _interval_points(row: ResultRow) -> list[tuple[float, float, float]]:
    """``(start, end, bits_per_second)`` of the result's intervals, without omitted ones."""
    intervals = row.field("intervals")
    if not isinstance(intervals, Sequence) or isinstance(intervals, str):
        return []
    points = []
    for item in intervals:
        if not isinstance(item, Mapping) or item.get("omitted"):
            continue
        start, end = _number(item.get("start")), _number(item.get("end"))
        bps = _number(item.get("bits_per_second"))
        if start is not None and end is not None and bps is not None:
            points.append((start, end, bps))
    return points


def _category(row: ComparisonRow, comparison: Comparison, rows: Sequence[ComparisonRow]) -> str:
    parts = []
    varying = {k for k in row.key if k != "test" and len({r.key.get(k) for r in rows}) > 1}
    if "streams" in varying or ("streams" in row.key and not varying):
        streams = row.key.get("streams")
        parts.append(NA if streams is None else f"{streams} stream{'' if streams == 1 else 's'}")
    if "direction" in varying or "swapped" in varying:
        parts.append(f"{row.key.get('direction')}{' (swapped)' if row.key.get('swapped') else ''}")
    return "\n".join(parts) or "all runs"


# --------------------------------------------------------------------------------------------
# summary.md
# --------------------------------------------------------------------------------------------


def _table(header: Sequence[str], align: str, rows: Iterable[Sequence[str]]) -> list[str]:
    """A Markdown table; ``align`` holds ``l`` or ``r`` per column."""
    marks = {"l": "---", "r": "--:"}
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(marks[a] for a in align) + " |"]
    lines.extend("| " + " | ".join(_md(c) for c in row) + " |" for row in rows)
    return lines


def _flatten(prefix: str, value: Any, out: list[tuple[str, str]], tables: list[tuple[str, list[Any]]]) -> None:
    if isinstance(value, Mapping):
        if not value and prefix:
            out.append((prefix, "{}"))
        for key, item in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), item, out, tables)
    elif isinstance(value, list | tuple) and value and all(isinstance(v, Mapping) for v in value):
        tables.append((prefix, list(value)))
    elif isinstance(value, list | tuple):
        out.append((prefix, ", ".join(_label_text(v) for v in value)))
    else:
        out.append((prefix, _label_text(value)))


def _environment_md(report: Report) -> list[str]:
    lines = ["## Environment", ""]
    scalars: list[tuple[str, str]] = []
    tables: list[tuple[str, list[Any]]] = []
    _flatten("", report.environment, scalars, tables)
    if scalars:
        lines += _table(["Item", "Value"], "ll", scalars)
        lines.append("")
    for name, items in tables:
        columns = _ordered(str(k) for item in items for k in item)
        lines += [f"{_code(name)}:", ""]
        lines += _table(
            [_md(c) for c in columns], "l" * len(columns), ([_label_text(i.get(c)) for c in columns] for i in items)
        )
        lines.append("")
    if not scalars and not tables:
        lines += ["No environment was given (role variable `report_environment`).", ""]
    tools = report.tools()
    if tools:
        seen = "; ".join(
            f"{_md(tool)} {_md(version)}: {count} result{'s' if count != 1 else ''}"
            if version
            else f"{_md(tool)}, version not printed: {count} result{'s' if count != 1 else ''}"
            for tool, version, count in tools
        )
        lines += [f"Tools in the results: {seen}.", ""]
    return lines


def _group_row(report: Report, group: Group, with_compare: bool, with_rate: bool) -> list[str]:
    unit = report.unit
    stats = group.stats
    ci95 = stats.get("ci95") or {}
    low, high = _number(ci95.get("low")), _number(ci95.get("high"))
    count, total = int(stats.get("count") or 0), len(group.runs)
    row = [group.direction_text, NA if group.streams is None else str(group.streams)]
    if with_compare:
        row.append(group.compare or NA)
    row += [
        str(total) if count == total else f"{count} of {total}",
        format_rate(group.mean, unit),
        format_rate(_number(stats.get("median")), unit),
        format_rate(_number(stats.get("stdev")), unit),
        NA if low is None or high is None else f"{format_rate(low, unit)} - {format_rate(high, unit)}",
        format_rate(_number(stats.get("min")), unit),
        format_rate(_number(stats.get("max")), unit),
    ]
    if with_rate:
        row.append(_pct(group.percent_of_line_rate))
    if group.sweep and group.knee is not None and group.streams == group.knee:
        row[1] += " (knee)"
    return row


def _tests_md(report: Report) -> list[str]:
    unit = report.unit.name
    with_compare = report.compare_by is not None
    with_rate = report.has_line_rate
    lines = ["## Results by test", ""]
    lines.append(
        f"Throughput in {unit} ({UNIT_TEXT[unit]}). Runs: the runs with a usable figure, of all runs (a run without "
        f"one is left out of the statistics, never counted as 0). 95 % CI: Student t interval of the mean, {NA} "
        "below 2 runs."
        + ("" if with_rate else " No line rate is known (set `report_line_rate_bps` or a `line_rate_bps` label).")
    )
    lines.append("")
    header = ["Direction", "Streams"]
    if with_compare:
        header.append(_md(str(report.compare_by)))
    header += ["Runs", f"Mean ({unit})", "Median", "Stdev", "95 % CI", "Min", "Max"]
    if with_rate:
        header.append("% of line rate")
    for test in report.tests:
        groups = [g for g in report.groups if g.test == test]
        runs = [r for r in report.runs if r.test == test]
        lines += [f"### Test {_code(test)}", ""]
        facts = []
        protocols = _ordered(r.protocol for r in runs if r.protocol)
        if protocols:
            facts.append("protocol " + ", ".join(protocols))
        pairs = _ordered(len(r.results) for r in runs if r.source == "paired_test")
        if pairs:
            facts.append("pairs per run " + ", ".join(str(p) for p in pairs))
        rate = _common(r.line_rate_bps for r in runs)
        if rate is not None:
            facts.append(f"line rate {_rate_with_unit(rate)}")
        facts.append(f"{len(runs)} run{'s' if len(runs) != 1 else ''}")
        sentence = "; ".join(facts)
        lines += [sentence[:1].upper() + sentence[1:] + ".", ""]
        lines += _table(
            header,
            "ll" + ("l" if with_compare else "") + "r" * (len(header) - 2 - with_compare),
            (_group_row(report, g, with_compare, with_rate) for g in groups),
        )
        lines.append("")
        for sweep in (s for s in report.sweeps if s.test == test):
            where = sweep.direction_text + (f", {_md(report.compare_by)}={_md(sweep.compare)}" if sweep.compare else "")
            if sweep.knee is None:
                lines.append(f"Knee ({where}): {NA} - no stream count has a usable figure.")
            else:
                lines.append(
                    f"Knee ({where}): **{sweep.knee} stream{'s' if sweep.knee != 1 else ''}** - the smallest stream "
                    f"count whose mean is within {sweep.tolerance * 100:g} % of the best mean "
                    f"({_rate_with_unit(sweep.best_bits_per_second)} at {sweep.best_streams} "
                    f"stream{'s' if sweep.best_streams != 1 else ''})."
                )
            lines.append("")
    return lines


def _comparison_md(report: Report) -> list[str]:
    comparison = report.comparison
    if comparison is None:
        return []
    unit = report.unit
    lines = [f"## Comparison by {_code(comparison.label)}", ""]
    if not comparison.values:
        return [*lines, f"No run has the label {_code(comparison.label)}; nothing to compare.", ""]
    lines.append(
        f"Mean ± half width of the 95 % CI in {unit.name} (n = runs with a figure)"
        + ("; % of line rate" if report.has_line_rate else "")
        + f". The last column(s): difference of the means relative to {_md(comparison.label)}="
        f"{_md(comparison.values[0])}."
    )
    lines.append("")
    dims = [k for k in ("test", "direction", "streams") if k in comparison.rows[0].key] if comparison.rows else []
    header = [d.capitalize() for d in dims]
    header += [f"{_md(comparison.label)}={_md(v)}" for v in comparison.values]
    header += [f"{_md(v)} vs {_md(comparison.values[0])}" for v in comparison.values[1:]]
    rows = []
    for row in comparison.rows:
        cells = []
        for dim in dims:
            value = row.key.get(dim)
            if dim == "direction":
                cells.append(f"{value}{' (swapped)' if row.key.get('swapped') else ''}")
            else:
                cells.append(NA if value is None else str(value))
        for value in comparison.values:
            cells.append(_compare_cell(row.cells.get(value), unit, report.has_line_rate))
        cells += [_signed_pct(comparison.delta(row, v)) for v in comparison.values[1:]]
        rows.append(cells)
    lines += _table(header, "l" * len(dims) + "r" * (len(header) - len(dims)), rows)
    lines.append("")
    if comparison.left_out:
        lines += [
            f"{comparison.left_out} run(s) without the label {_code(comparison.label)} are not in this comparison.",
            "",
        ]
    return lines


def _compare_cell(group: Group | None, unit: Unit, with_rate: bool) -> str:
    if group is None:
        return "-"
    if group.mean is None:
        return f"{NA} (n=0)"
    text = format_rate(group.mean, unit)
    if group.half_width is not None:
        text += f" ± {format_rate(group.half_width, unit)}"
    text += f" (n={group.stats['count']}"
    if with_rate and group.percent_of_line_rate is not None:
        text += f", {_pct(group.percent_of_line_rate)} %"
    return text + ")"


def _runs_md(report: Report) -> list[str]:
    unit = report.unit
    with_compare = report.compare_by is not None
    with_rate = report.has_line_rate
    udp = any(r.protocol == "udp" for r in report.runs)
    header = ["Run", "Test", "Direction", "Streams", "Rep."]
    if with_compare:
        header.append(_md(str(report.compare_by)))
    header += ["Pairs", f"Throughput ({unit.name})"]
    if with_rate:
        header.append("% of line rate")
    header.append("Retr.")
    if udp:
        header.append("Loss %")
    header.append("Status")
    rows = []
    for run in report.runs:
        row = [
            str(run.run),
            run.test,
            run.direction_text,
            NA if run.streams is None else str(run.streams),
            NA if run.repetition is None else str(run.repetition),
        ]
        if with_compare:
            row.append(run.compare or NA)
        row += [str(len(run.results)), format_rate(run.bits_per_second, unit)]
        if with_rate:
            row.append(_pct(run.percent_of_line_rate))
        row.append(NA if run.retransmits is None else str(run.retransmits))
        if udp:
            row.append(_pct(run.lost_percent))
        if run.bits_per_second is None:
            row.append("failed")
        else:
            row.append("ok" if run.complete else "incomplete")
        rows.append(row)
    lines = ["## Runs", ""]
    lines += _table(
        header, "rllrr" + ("l" if with_compare else "") + "r" * (len(header) - 6 - with_compare) + "l", rows
    )
    lines.append("")
    problems = [f"run {run.run} ({run.test}): {error}" for run in report.runs for error in run.errors]
    notes = [f"run {run.run} ({run.test}): {w}" for run in report.runs for w in run.warnings]
    if problems:
        lines += ["### Failed runs", "", *[f"- {_md(p)}" for p in problems], ""]
    if notes:
        lines += ["### Warnings", "", *[f"- {_md(n)}" for n in notes], ""]
    return lines


def to_markdown(report: Report, plots: Sequence[PlotSpec] = (), plots_note: str | None = None) -> str:
    """``summary.md``: header, environment, tables per test (with knees), comparison, plots, runs.

    ``plots`` are the plots that were written (referenced by file name, next to summary.md);
    ``plots_note`` says why plots are missing (for example matplotlib is not installed).
    """
    failed = len(report.failed_runs)
    results = report.results
    summary = (
        f"Report {_code(report.name)}"
        + (f", generated {_md(report.generated_at)}" if report.generated_at else "")
        + f": {len(report.runs)} run{'s' if len(report.runs) != 1 else ''}"
        + (f" ({failed} without a usable figure)" if failed else "")
        + f", {len(results)} result{'s' if len(results) != 1 else ''}"
        + f", {len(report.tests)} test{'s' if len(report.tests) != 1 else ''}."
        + (f" Line rate: {_rate_with_unit(report.line_rate_bps)}." if report.line_rate_bps else "")
    )
    lines = [f"# {_md(report.title)}", "", summary, ""]
    lines += _environment_md(report)
    lines += _tests_md(report)
    lines += _comparison_md(report)
    lines += ["## Plots", ""]
    if plots_note:
        lines += [f"Plots: {_md(plots_note)}", ""]
    for kind, heading in (("sweep", "Sweeps"), ("compare", "Comparison"), ("timeseries", "Time series")):
        chosen = [p for p in plots if p.kind == kind]
        if chosen:
            lines += [f"### {heading}", ""]
            for plot in chosen:
                lines += [f"![{_md(plot.caption or plot.title)}]({plot.file})", ""]
    if not plots and not plots_note:
        lines += ["No plot: the results hold no figure to draw.", ""]
    lines += _runs_md(report)
    lines += [
        "---",
        "",
        f"Files: {', '.join(FILES.values())}{' and the PNG plots' if plots else ''}. Written by esxilab.iperf.report.",
        "",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The compact table printed at the end of the play
# --------------------------------------------------------------------------------------------


def _columns(rows: Sequence[Sequence[str]], right: Sequence[bool]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, right, strict=True)]
        lines.append("  ".join(cells).rstrip())
    return lines


def table_lines(report: Report, *, directory: str | None = None, plots_note: str | None = None) -> list[str]:
    """The compact summary for a ``debug`` task: one line per summary group, knees, where the files are."""
    unit = report.unit
    failed = len(report.failed_runs)
    head = f"{report.title}: {len(report.runs)} run(s)" + (f", {failed} without a usable figure" if failed else "")
    lines = [head]
    if report.groups:
        with_compare = report.compare_by is not None
        with_rate = report.has_line_rate
        header = ["test", "direction", "streams"]
        if with_compare:
            header.append(str(report.compare_by))
        header += ["runs", f"mean {unit.name}", "+/-95% CI", "min", "max"]
        if with_rate:
            header.append("% line")
        rows = [header]
        for group in report.groups:
            count = int(group.stats.get("count") or 0)
            row = [
                group.test,
                group.direction_text,
                (NA if group.streams is None else str(group.streams)) + ("*" if group.knee == group.streams else ""),
            ]
            if with_compare:
                row.append(group.compare or NA)
            row += [
                f"{count}/{len(group.runs)}",
                format_rate(group.mean, unit),
                format_rate(group.half_width, unit),
                format_rate(_number(group.stats.get("min")), unit),
                format_rate(_number(group.stats.get("max")), unit),
            ]
            if with_rate:
                row.append(_pct(group.percent_of_line_rate))
            rows.append(row)
        right = [False, False, True] + ([False] if with_compare else []) + [True] * (len(header) - 3 - with_compare)
        lines += _columns(rows, right)
        if any(s.knee is not None for s in report.sweeps):
            lines.append(f"* knee: the smallest stream count within {report.knee_tolerance * 100:g} % of the best mean")
    if report.comparison is not None and len(report.comparison.values) > 1:
        comparison = report.comparison
        for compared in comparison.rows:
            deltas = [f"{v} {_signed_pct(comparison.delta(compared, v))}" for v in comparison.values[1:]]
            # e.g. direction=forward, streams=1 (swapped only when true)
            where = ", ".join(f"{k}={_label_text(v)}" for k, v in compared.key.items() if k != "swapped" or v)
            lines.append(f"{comparison.label} vs {comparison.values[0]} ({where}): {', '.join(deltas)}")
    if plots_note:
        lines.append(f"plots: {plots_note}")
    if directory:
        lines.append(f"report: {directory.rstrip('/')}/{FILES['markdown']}")
    return lines
