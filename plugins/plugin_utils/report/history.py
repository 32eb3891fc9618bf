# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The history of reports: every report's runs appended to a database, and the previous comparable run.

A report's ``results.json`` (plain data) is cut into *entries*: the runs of one comparable key
(``Entry``) with their throughput samples, the largest retransmits and UDP loss of a run and the
percentage of line rate. The same entries come from a history row or from an earlier
``results.json`` file, so a baseline is one thing wherever it comes from.

Comparable (``comparable_key``): two entries are comparable when they have the same test name,
direction, swapped flag, stream count, tool (``iperf3``/``iperf2``), protocol (``tcp``/``udp``),
number of pairs measured at once, and the same *identifying labels*: every run label except the
run's place (``run``, ``repetition``, ``test``, ``streams``, ``direction``, ``swapped``), its line
rate (``line_rate_bps``, ``link_speed_mbps``) and ``line_rate_source`` (free text naming the
slowest host and its address) -- a line rate describes the link, which is what a regression may
have changed (a NIC that came up at a lower speed), so it never hides the baseline. Migration 4
computes the keys of the reports recorded before from their stored ``results.json``.

The store (one schema for SQLite and PostgreSQL, ``MIGRATIONS``): table ``schema_version`` (one row
per applied migration), ``history_runs`` (one row per report: name, generated_at, recorded_at,
report directory, the whole ``results.json``, and ``report_key``: the report's identity, its
directory and ``generated_at``, unique) and ``history_entries`` (one row per entry: the key's
fields as columns, the key as canonical JSON in ``comparable_key``, the samples as JSON, count,
mean, stdev). A report is recorded in one transaction, and once (``INSERT ... ON CONFLICT
(report_key) DO NOTHING``: gating the same report twice, or twice at once, records it once); a
crash mid-write leaves the earlier reports and no part of this one. ``previous()`` returns, per
key, the newest earlier entry with a sample (a run that is not complete - an implausible figure of
a peer outside the inventory - is never a sample, so never a baseline), and refuses a stored value
``record()`` never writes (NaN, Infinity, samples that are not JSON) with a ``HistoryError``
naming the run and the fix.
``migrate()`` is safe with concurrent first writers: PostgreSQL's ``pg_advisory_xact_lock``
(SQLite: ``BEGIN IMMEDIATE``) serializes them, and each re-reads the version under the lock.

Where the history is (the URL, its checks and its masked form): ``history_url.py``.

The backends (``history_sqlite.py``, ``history_pg.py``) give a ``Connection``: ``execute()``
with ``?`` placeholders, ``transaction()``, ``close()`` and ``name`` (the masked URL, for
errors); a driver's error is a ``HistoryError`` naming the history and the fix. Nothing here
imports a driver.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import LatencyFigures
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.base import RUN_LABELS
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.latency import (
    LATENCY_FIGURES,
    WINDOWS,
    note_worst_pair,
    pair_name,
    result_latency,
    worst_latency,
)

__all__ = [
    "KEY_FIELDS",
    "LATENCY_COLUMNS",
    "LATEST",
    "MIGRATIONS",
    "PLACE_LABELS",
    "Connection",
    "Entry",
    "Found",
    "HistoryError",
    "comparable_key",
    "entries_of",
    "iter_runs",
    "migrate",
    "previous",
    "record",
    "recorded_id",
    "report_key",
    "stored_version",
    "strict_json",
]

# Run labels that place a run, give its line rate or say in words where that came from (free text naming a host and
# its address): never part of what makes runs comparable.
PLACE_LABELS = frozenset((*RUN_LABELS, "line_rate_bps", "link_speed_mbps", "line_rate_source"))
#: What makes two entries comparable, in words (summary.md says it beside the baseline).
KEY_FIELDS = (
    "test, direction, swapped, streams, tool, protocol, number of pairs and the identifying labels (every run label "
    "but the run's place, its line rate and where that came from)"
)


class HistoryError(ValueError):
    """The history cannot be used as asked; the message names the option and the fix."""


# --------------------------------------------------------------------------------------------
# Entries: the runs of one comparable key, from a results.json document
# --------------------------------------------------------------------------------------------


@dataclass
class Entry:
    """The runs of one comparable key in one report."""

    test: str
    direction: str
    swapped: bool
    streams: int | None
    tool: str | None
    protocol: str | None
    labels: dict[str, Any]
    pairs: int | None = None  # pairs the run measured at once (a 2-pair run is not a 1-pair run's baseline)
    samples: list[float] = field(default_factory=list)  # bits/s of every complete run with a figure, in run order
    runs: int = 0  # runs of the key, with or without a figure
    max_retransmits: int | None = None
    max_lost_percent: float | None = None
    percent_of_line_rate: float | None = None  # of the mean, when every run has the same line rate
    line_rate_bps: float | None = None
    # latency under load (migration 5): the largest ping RTT figure of the entry's pairs and runs, idle and loaded
    latency: dict[str, float | None] = field(default_factory=lambda: worst_latency(()))
    # read from a results.json only (not stored): some pair of the entry pinged (setting latency), and which pair
    # (client -> server) holds each worst loaded figure (``loaded_p99_ms`` -> pair), for the gate's lines
    latency_measured: bool = False
    latency_pairs: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return comparable_key(self)

    @property
    def title(self) -> str:
        swapped = " (swapped)" if self.swapped else ""
        streams = "" if self.streams is None else f", {self.streams} stream{'s' if self.streams != 1 else ''}"
        pairs = f", {self.pairs} pairs" if self.pairs is not None and self.pairs > 1 else ""
        labels = "".join(f", {k}={v}" for k, v in sorted(self.labels.items()))
        return f"{self.test} {self.direction}{swapped}{streams}{pairs}{labels}"

    @property
    def count(self) -> int:
        return len(self.samples)

    @property
    def mean(self) -> float | None:
        return math.fsum(self.samples) / len(self.samples) if self.samples else None

    @property
    def stdev(self) -> float | None:
        if len(self.samples) < 2:
            return None
        mean = math.fsum(self.samples) / len(self.samples)
        return math.sqrt(math.fsum((x - mean) ** 2 for x in self.samples) / (len(self.samples) - 1))

    def as_doc(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "direction": self.direction,
            "swapped": self.swapped,
            "streams": self.streams,
            "tool": self.tool,
            "protocol": self.protocol,
            "pairs": self.pairs,
            "labels": self.labels,
            "samples": self.samples,
            "count": self.count,
            "mean": self.mean,
            "stdev": self.stdev,
            "max_retransmits": self.max_retransmits,
            "max_lost_percent": self.max_lost_percent,
            "percent_of_line_rate": self.percent_of_line_rate,
            "line_rate_bps": self.line_rate_bps,
            "latency": self.latency,
        }


def comparable_key(entry: Entry) -> str:
    """The canonical JSON of what makes two entries comparable (see the module docstring)."""
    return json.dumps(
        [
            entry.test,
            entry.direction,
            entry.swapped,
            entry.streams,
            entry.tool,
            entry.protocol,
            entry.pairs,
            entry.labels,
        ],
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _larger(current: float | None, value: float | None) -> float | None:
    if value is None:
        return current
    return value if current is None else max(current, value)


def entries_of(document: Mapping[str, Any], *, source: str = "results.json") -> list[Entry]:
    """The entries of a ``results.json`` document, in the order of their first run.

    ``source`` names the document in errors (a path, or the history).
    """
    if not isinstance(document, Mapping) or document.get("format") != "esxilab.iperf.report":
        raise HistoryError(f"{source} is not a results.json of esxilab.iperf.report (its format is not so)")
    runs, results = document.get("runs"), document.get("results")
    if not isinstance(runs, list) or not isinstance(results, list):
        raise HistoryError(f"{source} has no list of runs and results; write it again with esxilab.iperf.report")
    entries: dict[str, Entry] = {}
    position = 0
    rates: dict[str, set[float | None]] = {}
    for run in runs:
        if not isinstance(run, Mapping):
            raise HistoryError(f"{source}: a run is not a mapping")
        pairs_value = run.get("pairs")
        pairs = pairs_value if isinstance(pairs_value, int) and not isinstance(pairs_value, bool) else 0
        results_of_run = [r for r in results[position : position + pairs] if isinstance(r, Mapping)]
        position += pairs
        outcomes: list[Mapping[str, Any]] = [
            r["result"] for r in results_of_run if isinstance(r.get("result"), Mapping)
        ]
        record_value = run.get("record")
        record: Mapping[str, Any] = record_value if isinstance(record_value, Mapping) else {}
        tools = {o.get("tool") for o in outcomes if isinstance(o.get("tool"), str)}
        tool = record.get("tool") if isinstance(record.get("tool"), str) else (tools.pop() if len(tools) == 1 else None)
        labels_value = run.get("labels")
        labels: Mapping[str, Any] = labels_value if isinstance(labels_value, Mapping) else {}
        entry = Entry(
            test=str(run.get("test")),
            direction=str(run.get("direction")),
            swapped=bool(run.get("swapped")),
            streams=run.get("streams") if isinstance(run.get("streams"), int) else None,
            tool=tool,
            protocol=run.get("protocol") if isinstance(run.get("protocol"), str) else None,
            labels={k: v for k, v in sorted(labels.items()) if k not in PLACE_LABELS},
            pairs=pairs or None,
        )
        entry = entries.setdefault(entry.key, entry)
        entry.runs += 1
        figure = _number(run.get("bits_per_second"))
        # an incomplete run (an implausible figure of a peer outside the inventory, a cut test) is counted in runs,
        # but its figure is never a sample: neither gated nor, once recorded, a baseline
        if figure is not None and run.get("complete") is not False:
            entry.samples.append(figure)
        retransmits = run.get("retransmits")
        if isinstance(retransmits, int) and not isinstance(retransmits, bool):
            entry.max_retransmits = int(_larger(entry.max_retransmits, retransmits) or 0)
        for outcome in outcomes:
            udp = outcome.get("udp")
            if isinstance(udp, Mapping):
                entry.max_lost_percent = _larger(entry.max_lost_percent, _number(udp.get("lost_percent")))
        rates.setdefault(entry.key, set()).add(_number(run.get("line_rate_bps")))
        for result in results_of_run:
            measured = result_latency(result.get("record"))
            if measured is not None:
                entry.latency_measured = True
                note_worst_pair(entry.latency, entry.latency_pairs, measured, pair_name(result.get("record")))
                entry.latency = worst_latency([*_stored_latency(entry.latency), measured])
    for key, entry in entries.items():
        (rate,) = rates[key] if len(rates[key]) == 1 else (None,)
        entry.line_rate_bps = rate
        mean = entry.mean
        entry.percent_of_line_rate = None if rate is None or mean is None else 100.0 * mean / rate
    return list(entries.values())


def _stored_latency(worst: Mapping[str, float | None]) -> list[LatencyFigures]:
    """An entry's worst figures so far as one latency item, to fold the next run's pairs into them."""
    windows = {window: {name: worst.get(f"{window}_{name}") for name in LATENCY_FIGURES} for window in WINDOWS}
    return [cast("LatencyFigures", windows)]


# --------------------------------------------------------------------------------------------
# The store: schema, migrations, record, previous
# --------------------------------------------------------------------------------------------


class Connection(Protocol):
    """What a backend gives: ``?`` placeholders, rows as tuples, one transaction at a time."""

    dialect: str  # sqlite | postgresql
    name: str  # what errors call it: report_history=URL (masked)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def close(self) -> None: ...


# {id} is the dialect's auto-numbered primary key; everything else is the same SQL for both.
_ID = {
    "sqlite": "INTEGER PRIMARY KEY AUTOINCREMENT",
    "postgresql": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
}


#: The history_entries columns of latency under load (migration 5), in the order of ``Entry.latency``.
LATENCY_COLUMNS = tuple(f"{window}_{name}" for window in WINDOWS for name in LATENCY_FIGURES)


def _latency_of_entries(conn: Connection) -> None:
    """Migration 5: the latency columns of the entries recorded before, from their stored ``results.json`` (reports
    written before latency under load have none: their columns stay NULL)."""
    for run_id, document in conn.execute("SELECT id, document FROM history_runs ORDER BY id"):
        try:
            entries = entries_of(strict_json(document), source=f"history run {run_id}")
        except (ValueError, TypeError, HistoryError):
            continue
        for entry in entries:
            if any(value is not None for value in entry.latency.values()):
                conn.execute(
                    f"UPDATE history_entries SET {', '.join(f'{c} = ?' for c in LATENCY_COLUMNS)} "
                    "WHERE run_id = ? AND comparable_key = ?",
                    (*(entry.latency[c] for c in LATENCY_COLUMNS), run_id, entry.key),
                )


def _rekey_entries(conn: Connection) -> None:
    """Migration 4: the entries of every recorded report again, from its stored ``results.json`` (the same data,
    the keys as ``comparable_key`` makes them now). A report whose document cannot be read keeps its entries."""
    for run_id, document in conn.execute("SELECT id, document FROM history_runs ORDER BY id"):
        try:
            entries = entries_of(strict_json(document), source=f"history run {run_id}")
        except (ValueError, TypeError, HistoryError):
            continue
        conn.execute("DELETE FROM history_entries WHERE run_id = ?", (run_id,))
        for entry in entries:
            _insert_entry(conn, int(run_id), entry, latency=False)


# Ordered migrations: (version, what it does, SQL statements or a function of the connection). Never edit a released
# one: add the next.
MIGRATIONS: tuple[tuple[int, str, tuple[str | Callable[[Connection], None], ...]], ...] = (
    (
        1,
        "history_runs and history_entries",
        (
            """CREATE TABLE history_runs (
                id {id},
                name TEXT NOT NULL,
                title TEXT,
                generated_at TEXT,
                recorded_at TEXT NOT NULL,
                report_dir TEXT,
                document TEXT NOT NULL
            )""",
            """CREATE TABLE history_entries (
                id {id},
                run_id BIGINT NOT NULL REFERENCES history_runs (id) ON DELETE CASCADE,
                comparable_key TEXT NOT NULL,
                test TEXT NOT NULL,
                direction TEXT NOT NULL,
                swapped BOOLEAN NOT NULL,
                streams INTEGER,
                tool TEXT,
                protocol TEXT,
                labels TEXT NOT NULL,
                samples TEXT NOT NULL,
                count INTEGER NOT NULL,
                mean_bps DOUBLE PRECISION,
                stdev_bps DOUBLE PRECISION,
                max_retransmits BIGINT,
                max_lost_percent DOUBLE PRECISION,
                line_rate_bps DOUBLE PRECISION,
                percent_of_line_rate DOUBLE PRECISION
            )""",
        ),
    ),
    (
        2,
        "index for the previous comparable run",
        ("CREATE INDEX history_entries_by_key ON history_entries (comparable_key, run_id)",),
    ),
    (
        3,
        "a report is recorded once: report_key, unique",
        (
            "ALTER TABLE history_runs ADD COLUMN report_key TEXT",
            # the oldest row of each report recorded before; later copies keep NULL (NULLs are never equal)
            "UPDATE history_runs SET report_key = COALESCE(report_dir, '') || ' @ ' || COALESCE(generated_at, '') "
            "WHERE id IN (SELECT MIN(id) FROM history_runs GROUP BY report_dir, generated_at)",
            "CREATE UNIQUE INDEX history_runs_by_report_key ON history_runs (report_key)",
        ),
    ),
    (
        4,
        "comparable keys with the number of pairs, without line_rate_source: every entry again from its report",
        (_rekey_entries,),
    ),
    (
        5,
        "latency under load: the largest ping RTT p50/p90/p99/max (ms) of an entry, idle and loaded",
        (
            *(f"ALTER TABLE history_entries ADD COLUMN {column} DOUBLE PRECISION" for column in LATENCY_COLUMNS),
            _latency_of_entries,
        ),
    ),
)

LATEST = MIGRATIONS[-1][0]
#: The key of PostgreSQL's transaction-level advisory lock that serializes migrations (any constant).
MIGRATION_LOCK = 0x65_78_69_6C_61_62  # "exilab"


def report_key(report_dir: str | None, generated_at: Any) -> str:
    """The identity of a report in the history: its directory and its ``generated_at``."""
    return f"{report_dir or ''} @ {'' if generated_at is None else generated_at}"


def stored_version(conn: Connection) -> int:
    """The schema version a history holds (0: none yet), read without creating anything."""
    if conn.dialect == "sqlite":
        query = "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    else:
        query = "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'schema_version'"
    rows = conn.execute(query)
    if not rows or not int(rows[0][0]):
        return 0
    rows = conn.execute("SELECT MAX(version) FROM schema_version")
    return int(rows[0][0] or 0) if rows else 0


def _lock(conn: Connection) -> None:
    """Serialize migrators: PostgreSQL's advisory lock until the transaction ends (SQLite: BEGIN IMMEDIATE)."""
    if conn.dialect == "postgresql":
        conn.execute("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))


def migrate(conn: Connection, now: str, *, upto: int | None = None) -> list[int]:
    """Apply the pending migrations in order, each in its own transaction; return the applied versions.

    Safe with concurrent first writers: each transaction starts with the migration lock (``_lock``)
    and reads the version again under it, so one writer creates the schema and the others find it.
    A database of a newer schema than this collection knows is refused (``HistoryError``).
    """
    target = LATEST if upto is None else upto
    applied: list[int] = []
    with conn.transaction():
        current = stored_version(conn)
    if current > LATEST:
        raise HistoryError(
            f"{conn.name}: the history's schema is version {current}, newer than this collection's {LATEST}: upgrade "
            "esxilab.iperf, or point report_history at another store"
        )
    if current >= target:
        return applied
    with conn.transaction():
        _lock(conn)
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, description TEXT NOT NULL, "
            "applied_at TEXT NOT NULL)"
        )
    for version, description, statements in MIGRATIONS:
        if version <= current or version > target:
            continue
        with conn.transaction():
            _lock(conn)
            if stored_version(conn) >= version:  # another writer applied it meanwhile
                continue
            for statement in statements:
                if callable(statement):
                    statement(conn)
                else:
                    conn.execute(statement.replace("{id}", _ID[conn.dialect]))
            conn.execute(
                "INSERT INTO schema_version (version, description, applied_at) VALUES (?, ?, ?)",
                (version, description, now),
            )
        applied.append(version)
    return applied


def _insert_entry(conn: Connection, run_id: int, entry: Entry, *, latency: bool = True) -> None:
    """One entry's row; ``latency``: with the columns of migration 5 (migration 4 runs before they exist)."""
    columns = "".join(f", {c}" for c in LATENCY_COLUMNS) if latency else ""
    conn.execute(
        "INSERT INTO history_entries (run_id, comparable_key, test, direction, swapped, streams, tool, protocol, "
        "labels, samples, count, mean_bps, stdev_bps, max_retransmits, max_lost_percent, line_rate_bps, "
        f"percent_of_line_rate{columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?"
        f"{', ?' * len(LATENCY_COLUMNS) if latency else ''})",
        (
            run_id,
            entry.key,
            entry.test,
            entry.direction,
            entry.swapped,
            entry.streams,
            entry.tool,
            entry.protocol,
            json.dumps(entry.labels, sort_keys=True, default=str),
            json.dumps(entry.samples, allow_nan=False),
            entry.count,
            entry.mean,
            entry.stdev,
            entry.max_retransmits,
            entry.max_lost_percent,
            entry.line_rate_bps,
            entry.percent_of_line_rate,
            *((entry.latency[c] for c in LATENCY_COLUMNS) if latency else ()),
        ),
    )


def recorded_id(conn: Connection, report_dir: str | None, generated_at: Any) -> int | None:
    """The ``history_runs`` id of the report (``report_key``), or None when it is not recorded."""
    rows = conn.execute("SELECT id FROM history_runs WHERE report_key = ?", (report_key(report_dir, generated_at),))
    return int(rows[0][0]) if rows else None


def record(
    conn: Connection,
    document: Mapping[str, Any],
    *,
    now: str,
    report_dir: str | None,
    between: Callable[[], None] | None = None,
) -> tuple[int, bool]:
    """Append a report (its ``results.json`` document) in one transaction, once: ``(history_runs id, new)``.

    The report's ``report_key`` is unique: a report recorded already (by an earlier call or a
    concurrent one) is not recorded again (``INSERT ... ON CONFLICT DO NOTHING``); ``new`` is False
    and the id is the first recording's. ``between`` is called after each row (tests use it to kill
    the writer mid-way).
    """
    entries = entries_of(document)
    try:
        text = json.dumps(document, sort_keys=True, allow_nan=False)
    except ValueError as exc:
        raise HistoryError(
            f"the report in {report_dir} holds NaN or Infinity ({exc}), which JSON has not: write it again with "
            "esxilab.iperf.report_write"
        ) from exc
    key = report_key(report_dir, document.get("generated_at"))
    with conn.transaction():
        rows = conn.execute(
            "INSERT INTO history_runs (name, title, generated_at, recorded_at, report_dir, document, report_key) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (report_key) DO NOTHING RETURNING id",
            (
                str(document.get("name")),
                document.get("title"),
                document.get("generated_at"),
                now,
                report_dir,
                text,
                key,
            ),
        )
        if not rows:
            found = recorded_id(conn, report_dir, document.get("generated_at"))
            if found is None:  # pragma: no cover - the conflicting row is committed, so it is visible
                raise HistoryError(f"{conn.name}: the report {key} conflicts with a row that cannot be read")
            return found, False
        run_id = int(rows[0][0])
        for entry in entries:
            if between is not None:
                between()
            _insert_entry(conn, run_id, entry)
    return run_id, True


@dataclass(frozen=True)
class Found:
    """A baseline entry from the history, with the report it belongs to."""

    entry: Entry
    run_id: int
    name: str
    generated_at: str | None
    report_dir: str | None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON has")


def strict_json(text: str | bytes) -> Any:
    """``json.loads`` that refuses ``NaN``, ``Infinity`` and ``-Infinity`` (``ValueError``)."""
    return json.loads(text, parse_constant=_no_constant)


def _finite(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{value!r} is not a finite number")
    return float(value)


def _stored_entry(entry: Entry, row: Sequence[Any]) -> Entry:
    """The baseline entry of a ``previous()`` row; ``ValueError`` when a stored value is not what ``record`` writes."""
    samples, retransmits, lost, rate, percent = row[:5]
    values = strict_json(samples) if isinstance(samples, str | bytes) else samples
    if not isinstance(values, list):
        raise ValueError(f"samples {str(samples)[:60]!r} are not a JSON list")
    numbers = [_finite(x) for x in values]
    if isinstance(retransmits, bool) or not (retransmits is None or isinstance(retransmits, int)):
        raise ValueError(f"max_retransmits {retransmits!r} is not a whole number")
    base = Entry(
        test=entry.test,
        direction=entry.direction,
        swapped=entry.swapped,
        streams=entry.streams,
        tool=entry.tool,
        protocol=entry.protocol,
        labels=dict(entry.labels),
        pairs=entry.pairs,
        samples=[x for x in numbers if x is not None],
        max_retransmits=retransmits,
        max_lost_percent=_finite(lost),
        line_rate_bps=_finite(rate),
        percent_of_line_rate=_finite(percent),
    )
    base.latency = {column: _finite(value) for column, value in zip(LATENCY_COLUMNS, row[5:], strict=True)}
    if len(base.samples) != len(numbers):
        raise ValueError("a sample is null")
    base.runs = len(base.samples)
    return base


def previous(
    conn: Connection, entries: Sequence[Entry], *, before: int | None = None, excluding: str | None = None
) -> dict[str, Found]:
    """Per entry key, the newest comparable entry of an earlier report (``history_runs.id`` < ``before``) that has a
    sample: an entry whose runs were all incomplete (``entries_of``) is never a baseline.

    ``excluding`` is the ``report_key`` of the report being compared: never its own baseline, even
    when a concurrent gate recorded it a moment ago.
    A stored value that is not what ``record`` writes (NaN, Infinity, a sample list that is not
    JSON) is a ``HistoryError`` naming the history, the run and the fix.
    """
    found: dict[str, Found] = {}
    for entry in entries:
        rows = conn.execute(
            "SELECT e.run_id, r.name, r.generated_at, r.report_dir, e.samples, e.max_retransmits, "
            "e.max_lost_percent, e.line_rate_bps, e.percent_of_line_rate"
            + "".join(f", e.{column}" for column in LATENCY_COLUMNS)
            + " FROM history_entries e JOIN history_runs r ON r.id = e.run_id "
            "WHERE e.comparable_key = ? AND e.run_id < ? AND e.count > 0 "
            "AND (r.report_key IS NULL OR r.report_key <> ?) "
            "ORDER BY e.run_id DESC LIMIT 1",
            (entry.key, before if before is not None else 2**62, excluding if excluding is not None else ""),
        )
        if not rows:
            continue
        run_id, name, generated_at, report_dir = rows[0][:4]
        try:
            base = _stored_entry(entry, rows[0][4:])
        except ValueError as exc:
            raise HistoryError(
                f"{conn.name}: history run {run_id} ({name}, {report_dir}) holds a value record() never writes "
                f"({exc}): delete that run (DELETE FROM history_runs WHERE id = {run_id}; its entries go with it) or "
                "point report_history at another store"
            ) from exc
        found[entry.key] = Found(base, int(run_id), str(name), generated_at, report_dir)
    return found


def iter_runs(conn: Connection) -> Iterator[tuple[int, str, str | None]]:
    """``(id, name, generated_at)`` of every recorded report, oldest first."""
    for row in conn.execute("SELECT id, name, generated_at FROM history_runs ORDER BY id"):
        yield int(row[0]), str(row[1]), row[2]
