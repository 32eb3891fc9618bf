# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The shapes handed between the layers: the normalized result, the pair record, the run record.

One place for the three record types, checked by ``mypy --strict``:

* ``IperfResult`` -- one normalized iperf result (``schema_version`` 1). The contract is
  ``docs/schema/iperf-result.schema.json``: every key the schema requires is a required key
  here (a figure the output does not carry is ``None``); the extra keys some parsers add
  (``reverse_*`` for ``--bidir``, ``raw``, ``server_output``, ``labels``, ...) are the
  optional keys (required keys in a ``_...Required`` base, the optional ones in a
  ``total=False`` subclass, so ``__required_keys__`` is right at run time too). The parsers
  fill it (``iperf.result.new_result``); ``iperf.parse.parse()`` hands it to the Ansible layer
  (``iperf_run``, ``iperf_facts``, ``iperf_parse``) as plain data (``iperf.result.plain``), and
  ``iperf.validate.result_from()`` takes it back from Ansible for ``paired/record.py`` and the report.
  ``tests/unit/plugins/plugin_utils/iperf/test_records.py`` keeps these keys and the schema's
  properties equal, and checks every recorded output's result against both.
* ``PairRecord`` -- one pair of one paired run (``paired.record._pair_record``): who served, who
  sent, when the client started, the client's ``IperfResult`` and why the pair failed; for a pair
  with external clients one record per client test, holding the server's ``IperfResult``
  (``measured_by: server``, ``paired.record._external_records``).
* ``RunRecord`` -- one run of ``esxilab.iperf.paired_test`` (``paired.record.build_record``, the
  ``paired_test_record`` filter, the role's ``paired_test_results``): the run's identity,
  its ``PairRecord`` items and ``total_bits_per_second`` (``schema_version`` ``RECORD_VERSION``). The report
  builder (``plugin_utils/report/``) reads a list of run records and/or results, each through
  ``iperf.validate`` (``run_record_from`` / ``result_from``: upgraded by ``schema_version``, then checked
  against these types once, so a reader indexes every required key).

Private module: not part of the collection's public API. Lives in ``plugin_utils/iperf/``
beside the parsers that build ``IperfResult`` (controller only: no module ships it to a host).
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

__all__ = [
    "DEFAULT_TEST",
    "RECORD_VERSION",
    "RESULT_VERSION",
    "SCHEMA_OPTIONAL_KEYS",
    "CpuFigures",
    "Endpoint",
    "Format",
    "Interval",
    "IperfResult",
    "LatencyFigures",
    "LatencyWindow",
    "PairRecord",
    "Protocol",
    "RttFigures",
    "RttSummary",
    "RunRecord",
    "Side",
    "StreamTotals",
    "Tool",
    "Totals",
    "UdpFigures",
]

# The schema_version of a normalized result (docs/schema/iperf-result.schema.json) and of a run record.
RESULT_VERSION = 1
RECORD_VERSION = 2  # 2: the host CPU of the run (``cpu``)
# The test name of a run or result that names none.
DEFAULT_TEST = "default"

Tool = Literal["iperf2", "iperf3"]
Format = Literal["json", "text", "csv"]
Side = Literal["client", "server"]
Protocol = Literal["tcp", "udp"]


class Endpoint(TypedDict):
    """One end of the connection (``local`` / ``remote``)."""

    host: str | None
    port: int | None


class _TotalsRequired(TypedDict):
    bytes: int | None
    bits_per_second: float | None


class Totals(_TotalsRequired, total=False):
    """The totals of one side; ``retransmits`` belongs to the sender only."""

    seconds: float | None
    retransmits: int | None


class UdpFigures(TypedDict, total=False):
    """UDP figures of the receiver (each ``None`` when the output does not carry it)."""

    jitter_ms: float | None
    lost_packets: int | None
    packets: int | None
    lost_percent: float | None
    out_of_order: int | None  # when the tool printed the count
    sent_packets: int | None  # iperf2 text -e: the sender's packet count


class CpuFigures(TypedDict, total=False):
    """CPU use in percent, as the tool printed it."""

    local_percent: float | None
    remote_percent: float | None


class RttFigures(TypedDict):
    """TCP round-trip times of one sending stream in µs (iperf3 JSON; ``iperf/rtt.py``), each ``None`` if not printed.

    ``rtt_us``/``var_us``: the smoothed RTT and its variance in the stream's last interval;
    ``min_us``/``mean_us``/``max_us``: the stream's end summary over the whole test.
    """

    rtt_us: int | None
    min_us: int | None
    mean_us: int | None
    max_us: int | None
    var_us: int | None


class RttSummary(TypedDict):
    """RTT over every stream this host sent, in µs: min of the mins, unweighted mean of the means, max of the maxes."""

    min_us: int | None
    mean_us: int | None
    max_us: int | None


class _StreamTotalsRequired(TypedDict):
    id: str | int
    sent: Totals | None
    received: Totals | None


class StreamTotals(_StreamTotalsRequired, total=False):
    """The totals of one stream."""

    udp: UdpFigures | None  # iperf3 JSON, UDP
    role: str  # iperf3 text --bidir: TX-C, RX-C, TX-S, RX-S
    rtt: RttFigures | None  # iperf3 JSON: None for a stream this host did not send, or when not printed


class _IntervalRequired(TypedDict):
    start: float
    end: float
    bytes: int
    bits_per_second: float


class Interval(_IntervalRequired, total=False):
    """One interval of the summed series."""

    retransmits: int | None
    omitted: bool


class _ResultRequired(TypedDict):
    """The schema's properties, every one required."""

    schema_version: int
    tool: Tool
    tool_version: str | None
    format: Format
    side: Side | None
    protocol: Protocol
    reverse: bool
    bidir: bool
    local: Endpoint | None
    remote: Endpoint | None
    timestamp: str | None
    duration: float | None
    streams: int
    sent: Totals | None
    received: Totals | None
    bits_per_second: float | None
    udp: UdpFigures | None
    cpu: CpuFigures | None
    per_stream: list[StreamTotals]
    intervals: list[Interval]
    complete: bool
    warnings: list[str]
    error: str | None


class IperfResult(_ResultRequired, total=False):
    """One normalized iperf result (schema_version 1); see the module docstring.

    The keys declared here are beyond the schema's required ones and not always present:
    ``SCHEMA_OPTIONAL_KEYS`` are optional properties of the schema (added after schema_version 1
    was first published, so results recorded before lack them; this collection's parsers always
    set them), the others are the collection's extra keys (the schema allows extra keys).
    """

    rtt: RttSummary | None  # schema property (optional): see iperf/rtt.py

    reverse_sent: Totals | None
    reverse_received: Totals | None
    reverse_udp: UdpFigures | None
    reverse_per_stream: list[StreamTotals]
    reverse_intervals: list[Interval]
    bidir_sum: Totals | None
    raw: str
    server_output: IperfResult | None
    server_output_text: str
    peer_version: str
    timestamp_local: str
    connect_times: dict[str, object]
    bounceback: dict[str, object] | None
    csv_endpoints: list[dict[str, object]]
    labels: dict[str, object]
    source: str


# Optional properties of the schema (not in its "required"): every new_result() has them.
SCHEMA_OPTIONAL_KEYS = frozenset({"rtt"})
# Keys of IperfResult that are the collection's own conventions, not schema properties.
EXTRA_RESULT_KEYS = frozenset(IperfResult.__optional_keys__) - SCHEMA_OPTIONAL_KEYS


class LatencyWindow(TypedDict):
    """One ping window of a client (idle before the transfer, or loaded during it): ``latency/figures.py``."""

    command: str | None
    seconds: float  # the window planned: idle seconds, or the transfer's
    rc: int | None  # the ping's exit status
    transmitted: int | None  # from the ping's summary; None when it has none (cut)
    received: int
    duplicates: int
    lost: int | None
    lost_percent: float | None
    cut: bool  # stopped before its summary (the start time came, or iperf failed)
    samples: int
    min_ms: float | None
    p50_ms: float | None  # nearest-rank; None when too few samples (latency/samples.py)
    p90_ms: float | None
    p99_ms: float | None
    max_ms: float | None
    error: str | None
    raw: str  # the ping's own output


class LatencyFigures(TypedDict):
    """Latency under load of one client (``iperf_run`` option ``latency``; ``paired_test`` setting ``latency``)."""

    tool: str  # ping | vmkping
    target: str
    interface: str | None
    interval: float
    idle: LatencyWindow | None  # None: no idle window (idle 0)
    loaded: LatencyWindow
    p50_increase_ms: float | None  # loaded p50 - idle p50


class _PairRecordRequired(TypedDict):
    pair: int
    server: str
    client: str
    address: str | None
    port: int
    sender: str | None  # None: not recorded (a version-0 record)
    receiver: str | None  # None: not recorded (a version-0 record)
    started_at: float | None
    result: IperfResult | None
    ok: bool
    error: str | None
    tool_version: str | None
    server_pid: int | None
    server_stop: str | None
    late_by: float | None
    arrived_at: float | None
    command: str | None
    labels: dict[str, object]  # the pair's labels: the test's, the pair's own over them, the run's identity


class PairRecord(_PairRecordRequired, total=False):
    """One pair of one paired run, as ``paired.record._pair_record`` records it."""

    raw: str  # the client's own output, kept when the pair failed (always with a server outside the inventory)
    # external clients (a pair's ``external``): the result is the server's own (``server``), one record per client test
    measured_by: str
    external: dict[str, object]  # {count, deadline, from, command, came, reason, index, peer, group}
    latency: LatencyFigures | None  # the client's pings idle vs during the transfer (setting latency)


class RunRecord(TypedDict):
    """One run of ``esxilab.iperf.paired_test``, as ``paired.record.build_record`` records it."""

    schema_version: int  # RECORD_VERSION; a record without it is read as version 0 (iperf.validate)
    run: int
    test: str
    streams: int | None  # None: not recorded (a version-0 record)
    sweep: bool
    direction: str
    swapped: bool
    repetition: int | None  # None: not recorded (a version-0 record)
    tool: str | None
    protocol: str | None
    duration: float | None
    labels: dict[str, object]
    start_at: float | None
    start_delay: float | None
    barrier_margin: float | None
    dispatch_time: float | None
    start_spread: float | None
    pairs: list[PairRecord]
    total_bits_per_second: float | None
    ok: bool
    complete: bool
    failed_pairs: int
    errors: list[str]
    warnings: list[str]
    point: str | None  # test|direction|streams|swapped: the point the stability is decided over
    order: str | None  # interleaved | sequential | shuffled
    shuffle_seed: int | None
    combine_swapped: bool
    stability: dict[str, object] | None  # paired.stability.assess() of the point so far; None for repeat: N
    nic: dict[str, Any] | None  # NIC readings of this run {mode, before, after} (paired_test_nic_counters); or None
    # host CPU over the run (paired_test_host_cpu): {host: cpu.reading.host_cpu()}; None: not read (or version 1)
    cpu: dict[str, Any] | None
