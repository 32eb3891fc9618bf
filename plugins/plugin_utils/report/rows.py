# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The report's input read into rows: ``read_runs()`` turns run records (``RunRecord``) and/or normalized results
(``IperfResult``) into ``RunRow`` items, each with one ``ResultRow`` per pair.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import (
    DEFAULT_TEST,
    IperfResult,
    PairRecord,
    RunRecord,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.validate import (
    RecordError,
    result_from,
    run_record_from,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.base import (
    ReportError,
    as_int,
    as_number,
    field_of,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.figures import Figures, result_figures, run_figures
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.host_cpu import HostCpu, run_host_cpu
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.nic import NicDelta, run_delta

# The fields that name a run and place a result, in the order of results.json and results.csv.
RUN_IDENTITY = ("run", "test", "direction", "swapped", "streams", "repetition")
RESULT_PLACE = ("pair", "server", "client", "address", "port", "started_at")
# Flows named in a direction label before the rest is counted ("+2 more").
FLOWS_SHOWN = 3


class _Rated:
    """What a result row and a run row derive from their headline and line rate (dataclasses declaring both)."""

    bits_per_second: float | None
    line_rate_bps: float | None

    @property
    def percent_of_line_rate(self) -> float | None:
        return percent_of(self.bits_per_second, self.line_rate_bps)


@dataclass
class ResultRow(_Rated):
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
    record: PairRecord | None = None  # paired_test: the pair as recorded (results.json: without its result)
    sender: str | None = None
    receiver: str | None = None
    bidir: bool = False

    def place(self) -> dict[str, Any]:
        """Where the result was measured (the ``RESULT_PLACE`` fields), as results.json and results.csv name it."""
        return {name: getattr(self, name) for name in RESULT_PLACE}

    def field(self, path: str) -> Any:
        """A field of the result by dotted path (``sent.bytes``, ``udp.jitter_ms``), or ``None``."""
        return field_of(self.result, path)

    @property
    def figures(self) -> Figures:
        """CPU, retransmits, RTT, UDP loss and jitter, reverse figures (``figures.py``)."""
        return result_figures(self.result, self.bits_per_second)

    @property
    def flow(self) -> str | None:
        """``sender → receiver`` (``client ⇄ server`` for bidir), when the hosts are known."""
        if self.sender and self.receiver:
            return f"{self.sender} {'⇄' if self.bidir else '→'} {self.receiver}"
        return None


@dataclass
class RunRow(_Rated):
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
    record: RunRecord | None = None  # paired_test: the run as recorded (results.json: without its pairs)
    line_rate_note: str | None = None  # why a run of several pairs has no line rate
    #: Split by the compared label (``parts.py``): one part per value of the label among the run's pairs.
    parts: list[RunRow] = field(default_factory=list, repr=False, compare=False)
    #: A part: the run it is a part of (its figure is the sum over the part's pairs only).
    whole: RunRow | None = field(default=None, repr=False, compare=False)
    nic: NicDelta | None = None  # the NIC counter deltas of this run (report/nic.py); None: not read around it

    @property
    def line_rate_source(self) -> str | None:
        """Where the line rate came from: the ``line_rate_source`` label (the paired_test role: given, or read
        from the hosts, or why it is unknown), else ``labels`` or ``report_line_rate_bps``; ``None`` without one."""
        source = self.labels.get("line_rate_source")
        if isinstance(source, str) and source:
            return source
        if self.line_rate_bps is None:
            return None
        return (
            "given: labels (line_rate_bps / link_speed_mbps)"
            if _line_rate_of(self.labels)
            else ("given: report_line_rate_bps")
        )

    def identity(self) -> dict[str, Any]:
        """Which run this is (the ``RUN_IDENTITY`` fields), as results.json and results.csv name it."""
        return {name: getattr(self, name) for name in RUN_IDENTITY}

    @property
    def host_cpu(self) -> dict[str, HostCpu] | None:
        """The CPU of its pairs' hosts over the run, as recorded (``host_cpu.run_host_cpu``); ``None``: not read."""
        return run_host_cpu(self.record, [h for row in self.results for h in (row.server, row.client) if h])

    @property
    def figures(self) -> Figures:
        """The run's figures beside throughput, its pairs combined (``figures.run_figures``)."""
        if self.bits_per_second is None:
            return run_figures([])
        return run_figures([row.figures for row in self.results])

    @property
    def retransmits(self) -> int | None:
        """The sum of the senders' retransmits over the pairs, when every pair has the figure."""
        value = self.figures.retransmits
        return None if value is None else int(value)

    @property
    def flows(self) -> list[str]:
        """Who sent to whom, one item per pair (empty when the hosts are not known)."""
        flows = [row.flow for row in self.results]
        return [f for f in flows if f] if all(flows) else []

    @property
    def direction_text(self) -> str:
        """``forward: vm2 → vm1`` / ``forward, swapped: vm1 → vm2`` (the bare direction without hosts)."""
        return direction_label(self.direction, self.swapped, self.flows)


def direction_label(direction: str, swapped: bool, flows: Sequence[str], limit: int = FLOWS_SHOWN) -> str:
    """A direction that names sender and receiver: ``forward: h1 → h2``, ``reverse, swapped: h2 → h1``; ``limit``
    flows are named, the others counted (``+2 more``)."""
    text = f"{direction}, swapped" if swapped else direction
    if not flows:
        return text
    shown = ", ".join(flows[:limit])
    if len(flows) > limit:
        shown += f" +{len(flows) - limit} more"
    return f"{text}: {shown}"


def _flow_hosts(direction: str, pair: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """Sender and receiver of a pair as recorded (for bidir, the client and the server: both send)."""
    sender, receiver = pair.get("sender"), pair.get("receiver")
    if direction == "bidir":
        sender, receiver = pair.get("client"), pair.get("server")
    return (sender if isinstance(sender, str) else None, receiver if isinstance(receiver, str) else None)


def percent_of(value: float | None, line_rate: float | None) -> float | None:
    if value is None or line_rate is None or line_rate <= 0:
        return None
    return value / line_rate * 100.0


def _line_rate_of(labels: Mapping[str, Any]) -> float | None:
    """``line_rate_bps`` (bit/s) or ``link_speed_mbps`` (Mb/s, as esxi_vmknic reports) of labels."""
    rate = as_number(labels.get("line_rate_bps"))
    if rate is not None and rate > 0:
        return rate
    speed = as_number(labels.get("link_speed_mbps"))
    if speed is not None and speed > 0:
        return speed * 1e6
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def kind_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _is_paired_record(item: Mapping[str, Any]) -> bool:
    pairs = item.get("pairs")
    return "total_bits_per_second" in item and isinstance(pairs, Sequence) and not isinstance(pairs, str)


def _is_result(item: Mapping[str, Any]) -> bool:
    return "bits_per_second" in item and ("tool" in item or "schema_version" in item or "error" in item)


def _direction_of(result: IperfResult) -> str:
    if result["bidir"]:
        return "bidir"
    return "reverse" if result["reverse"] else "forward"


def _result_error(result: IperfResult) -> str | None:
    error = result["error"]
    if error is not None and error.strip():
        return " ".join(error.split())
    if result["bits_per_second"] is None:
        warnings = [w for w in result["warnings"] if w]
        return "no throughput figure" + (f": {'; '.join(warnings)}" if warnings else "")
    return None


def _from_paired(index: int, record: RunRecord, default_rate: float | None) -> RunRow:
    run_no = record["run"] or index + 1
    test = record["test"] or DEFAULT_TEST
    direction = record["direction"] or "forward"
    swapped = record["swapped"]
    streams = record["streams"]
    repetition = record["repetition"]
    run_labels = dict(record["labels"])
    line_rate = _line_rate_of(run_labels) or default_rate
    total = record["total_bits_per_second"]
    if total is not None and as_number(total) is None:
        raise ReportError(f"runs[{index}].total_bits_per_second: must be a finite number or null, got {total!r}")
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
    for position, pair in enumerate(record["pairs"]):
        result = pair["result"]
        pair_no = pair["pair"] or position + 1
        result_labels = result.get("labels") if result is not None else None
        labels = {**run_labels, **dict(result_labels or {}), **identity, "pair": pair_no}
        ok = pair["ok"]
        headline = as_number(result["bits_per_second"]) if result is not None and ok else None
        error = pair["error"] or (None if result is None else _result_error(result))
        if error is None and headline is None:
            error = "no result" if result is None else "the pair failed"
        if result is not None and isinstance(
            result.get("protocol"), str
        ):  # a result without schema_version may lack it
            protocols.append(result["protocol"])
        sender, receiver = _flow_hosts(direction, pair)
        results.append(
            ResultRow(
                run=run_no,
                pair=pair_no,
                labels=labels,
                result=result,
                bits_per_second=headline,
                line_rate_bps=_line_rate_of(labels) or line_rate,
                error=None if error is None else " ".join(str(error).split()),
                server=pair["server"],
                client=pair["client"],
                address=pair["address"],
                port=pair["port"],
                started_at=as_number(pair["started_at"]),
                record=pair,
                sender=sender,
                receiver=receiver,
                bidir=direction == "bidir",
            )
        )
    errors = list(record["errors"])
    if total is None and not errors:
        errors = [f"pair {r.pair}: {r.error}" for r in results if r.error] or ["no usable figure"]
    protocol = record["protocol"]
    line_rate, note = pairs_line_rate(results, line_rate)
    return RunRow(
        run=run_no,
        test=test,
        direction=direction,
        swapped=swapped,
        streams=streams,
        repetition=repetition,
        labels={**run_labels, **identity},
        bits_per_second=as_number(total),
        line_rate_bps=line_rate,
        results=results,
        source="paired_test",
        protocol=protocol or (protocols[0] if protocols else None),
        complete=record["complete"],
        errors=errors,
        warnings=list(record["warnings"]),
        record=record,
        line_rate_note=note,
        nic=run_delta(record),
    )


def pairs_line_rate(results: Sequence[ResultRow], run_rate: float | None) -> tuple[float | None, str | None]:
    """The line rate of a run (or of a part of it): the sum over its pairs' line rates (the pairs ran at the same
    time), or ``None`` and why when a pair has none."""
    if not results:
        return run_rate, None
    unknown = [str(r.pair) for r in results if r.line_rate_bps is None]
    if unknown and len(unknown) < len(results):
        return None, (
            f"no line rate for pair {', '.join(unknown)} (the others have one), so the run's sum cannot be compared "
            "with the sum of its pairs' line rates; give every pair a line_rate_bps label, or set report_line_rate_bps"
        )
    if unknown:
        return None, None
    return sum(r.line_rate_bps for r in results if r.line_rate_bps is not None), None


def _from_result(index: int, result: IperfResult, default_rate: float | None) -> RunRow:
    labels = dict(result.get("labels") or {})
    run_no = index + 1
    streams = as_int(labels.get("streams"))
    if streams is None:
        streams = result["streams"] or None
    direction = labels.get("direction")
    direction = str(direction) if isinstance(direction, str) and direction else _direction_of(result)
    swapped = labels.get("swapped") is True
    test = labels.get("test")
    test = str(test) if test not in (None, "") else DEFAULT_TEST
    line_rate = _line_rate_of(labels) or default_rate
    headline = as_number(result["bits_per_second"])
    error = _result_error(result)
    row = ResultRow(
        run=run_no,
        pair=as_int(labels.get("pair")),
        labels=labels,
        result=result,
        bits_per_second=headline,
        line_rate_bps=line_rate,
        error=error,
        sender=_text(labels.get("sender")),
        receiver=_text(labels.get("receiver")),
        bidir=direction == "bidir",
    )
    return RunRow(
        run=run_no,
        test=test,
        direction=direction,
        swapped=swapped,
        streams=streams,
        repetition=as_int(labels.get("repetition")),
        labels=labels,
        bits_per_second=headline,
        line_rate_bps=line_rate,
        results=[row],
        source="result",
        protocol=result.get("protocol"),  # a result without schema_version may lack it
        complete=result["complete"] and headline is not None,
        errors=[error] if error and headline is None else [],
        warnings=list(result["warnings"]),
    )


def read_runs(runs: Any, *, line_rate_bps: float | None = None) -> list[RunRow]:
    """Turn ``paired_test_results`` records and/or normalized results into run rows."""
    if isinstance(runs, str | bytes | Mapping) or not isinstance(runs, Sequence):
        raise ReportError(
            f"runs must be a list (paired_test_results, or normalized results with labels), got {kind_name(runs)}"
        )
    rows: list[RunRow] = []
    for index, item in enumerate(runs):
        if not isinstance(item, Mapping):
            raise ReportError(f"runs[{index}] must be a dictionary (a run record or a result), got {kind_name(item)}")
        # The one place where the report's input becomes typed: a run record or a result, told apart by their
        # keys, upgraded by their schema_version and checked against their types once (iperf/validate.py).
        try:
            if _is_paired_record(item):
                row = _from_paired(index, run_record_from(item, f"runs[{index}]", position=index), line_rate_bps)
            elif _is_result(item):
                row = _from_result(index, result_from(item, f"runs[{index}]"), line_rate_bps)
            else:
                keys = ", ".join(sorted(str(k) for k in item)[:12]) or "none"
                raise ReportError(
                    f"runs[{index}] is neither a run record of paired_test_results (pairs, total_bits_per_second) "
                    f"nor a normalized result (tool, bits_per_second); its keys: {keys}. Pass paired_test_results, "
                    "or results from esxilab.iperf.iperf_parse / iperf_facts / iperf_run"
                )
        except RecordError as exc:
            raise ReportError(str(exc)) from None
        rows.append(row)
    return rows
