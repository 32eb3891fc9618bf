# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Progress of the paired_test runs: one line per finished run with the time left, and a summary.

The callback plugins ``esxilab.iperf.progress`` and ``esxilab.iperf.concise`` feed this from the facts the role
``esxilab.iperf.paired_test`` sets - the contract it depends on, and nothing else:

* ``__paired_test_planned`` and ``__paired_test_recorded`` set to ``[]`` (facts of the preflight, once per call of the
  role, right before the first run: the clock starts): what it reads of the plan (``planned``), ``runs``, each with
  the keys ``PLAN_KEYS`` - ``run`` (its number), ``duration``, ``omit``, ``start_delay``, ``barrier``,
  ``start_delay_auto``, ``client_hosts``, ``external_wait``, ``latency_idle`` (see ``paired.plan.run_seconds``);
* after each run, what it reads of the run's record (``__paired_test_recorded``, a fact of the run's task:
  a list, the new record last, with the keys ``RECORD_KEYS``): ``run``, ``test``,
  ``streams``, ``direction``, ``swapped``, ``repetition``, ``start_delay`` (the one used, None
  without a barrier), ``total_bits_per_second``, ``ok``, ``errors``.

The time left is planned, not guessed: the remaining runs' planned seconds plus, per remaining
run, the overhead measured so far (elapsed time less the seconds the finished runs spent in
iperf and in their start delay, per finished run; from the second run on, of the runs after the
first, whose one-off costs would otherwise count for every remaining run). A one-pair run has no start delay (no
barrier); a remaining run with an automatic start delay counts the delay the last run with as many
clients used (it learns from the runs: longer after a late client, shorter in a quick series).
Each figure shown is the record's own; the confidence interval is that of
the finished repetitions of the same test, streams and direction (95 %, Student t), shown from
two of them on. Plain data in, lines out; the clock is the caller's.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.stats import summarize
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import run_seconds
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.base import rate_with_unit

__all__ = [
    "PLAN_KEYS",
    "RECORD_KEYS",
    "Progress",
    "duration_text",
    "planned",
    "playbook_name",
    "result_data",
    "seen",
    "stdout_prints_runs",
]

#: What the progress reads of a run record - all the run's task hands the callbacks (``seen``), as a fact.
RECORD_KEYS = (
    "run",
    "test",
    "streams",
    "direction",
    "swapped",
    "repetition",
    "start_delay",
    "total_bits_per_second",
    "ok",
    "errors",
)

# Set by the stdout callback esxilab.iperf.concise when it prints the run lines itself (its runs=line): the
# aggregate callback esxilab.iperf.progress then prints nothing, so no line is printed twice.
_STDOUT_PRINTS_RUNS: list[bool] = [False]


#: What the callbacks read of a task they do not print in full (:func:`result_view`).
VIEW_KEYS = ("ansible_facts", "warnings", "deprecations")


def result_view(result: Any) -> Mapping[str, Any] | None:
    """The keys :data:`VIEW_KEYS` of a callback's task result, read from the result as received
    (``_return_data``, ansible-core 2.19 and later): its ``result`` turns every value of the whole result into a
    native type on first use, 0.2 s of the controller's time for the records of a 16-pair run that the callbacks do not
    read; else :func:`result_data`."""
    raw = getattr(result, "_return_data", None)
    if isinstance(raw, Mapping):
        return {key: raw[key] for key in VIEW_KEYS if key in raw}
    return result_data(result)


def result_data(result: Any) -> MutableMapping[str, Any] | None:
    """The result dictionary of a callback's task result (``result`` from ansible-core 2.19, ``_result`` before)."""
    data = getattr(result, "result", None)
    if not isinstance(data, MutableMapping):
        data = getattr(result, "_result", None)
    return data if isinstance(data, MutableMapping) else None


def playbook_name(playbook: Any) -> str | None:
    """The file name of a callback's playbook object (``v2_playbook_on_start``), without its directory."""
    name = getattr(playbook, "_file_name", None)
    return os.path.basename(name) if isinstance(name, str) and name else None


#: What the progress reads of each run of the plan - all the preflight hands the callbacks of it (``planned``), as a
#: fact.
PLAN_KEYS = (
    "run",
    "duration",
    "omit",
    "start_delay",
    "barrier",
    "start_delay_auto",
    "client_hosts",
    "external_wait",
    "latency_idle",
)


def planned(plan: Mapping[str, Any]) -> dict[str, Any]:
    """The part of the plan the progress reads (``runs`` with ``PLAN_KEYS``): the fact the preflight returns - not the
    whole plan, for the reason ``seen`` gives."""
    runs = plan.get("runs") or ()
    return {
        "runs": [{key: run.get(key) for key in PLAN_KEYS if key in run} for run in runs if isinstance(run, Mapping)]
    }


def seen(record: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a run record the progress reads (``RECORD_KEYS``): the fact a run's task returns. Not the whole
    record: Ansible deep-copies every fact of a host each time it gathers the host's variables (its
    ``clean_facts``), on every host of a ``run_once`` task and for every later task - 0.2 s per task at 32 hosts
    with a 16-pair record."""
    return {key: record.get(key) for key in RECORD_KEYS}


def stdout_prints_runs(value: bool | None = None) -> bool:
    """Whether the stdout callback prints the run lines; ``value`` sets it."""
    if value is not None:
        _STDOUT_PRINTS_RUNS[0] = value
    return _STDOUT_PRINTS_RUNS[0]


def duration_text(seconds: float) -> str:
    """``2 min 10 s``, ``45 s``, ``1 h 02 min``: rounded to the second, never negative."""
    total = max(0, round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs} s"
    return f"{secs} s"


def _clients(run: Mapping[str, Any]) -> int:
    """How many client hosts a run has: the automatic start delay is learnt per count (``paired.start_delay``)."""
    hosts = run.get("client_hosts")
    return len(hosts) if isinstance(hosts, Sequence) and not isinstance(hosts, str) else 0


def _group(record: Mapping[str, Any]) -> tuple[Any, ...]:
    return (record.get("test"), record.get("streams"), record.get("direction"), bool(record.get("swapped")))


@dataclass
class Progress:
    """The state of the current plan and of every run seen in the play."""

    planned: dict[int, float] = field(default_factory=dict)  # run number -> planned seconds
    runs: dict[int, Mapping[str, Any]] = field(default_factory=dict)  # run number -> run of the plan
    spent: float = 0.0  # seconds the finished runs of the plan spent in iperf and their start delay
    learned: dict[int, float] = field(default_factory=dict)  # clients -> the automatic start delay used last
    first_done: tuple[float, float] | None = None  # when the first run of the plan ended, and ``spent`` then
    run_count: int = 0
    started: float | None = None
    done: set[int] = field(default_factory=set)
    last_eta: float | None = None
    # every record seen (over all plans): for the CI and the summary
    records: list[Mapping[str, Any]] = field(default_factory=list)
    plans: int = 0
    first_start: float | None = None
    totals: dict[tuple[Any, ...], list[float]] = field(default_factory=dict)
    playbook: str | None = None  # the playbook the records are of (ansible-playbook runs several in turn)

    def next_playbook(self, name: str | None, now: float) -> list[str]:
        """A playbook starts: the summary of the one before (empty when it ran no test), then a clean slate - the
        runs, the best figure and the time left are per playbook, never added up over ``playbooks/*.yml``."""
        lines = self.summary(now)
        fresh = Progress(playbook=name)
        self.__dict__.update(fresh.__dict__)
        return lines

    def plan(self, plan: Any) -> None:
        """A new plan (``__paired_test_planned``): its runs are the ones counted from now on."""
        runs = plan.get("runs") if isinstance(plan, Mapping) else None
        if not isinstance(runs, Sequence):
            return
        self.planned, self.runs = {}, {}
        for run in runs:
            if not isinstance(run, Mapping):
                continue
            try:
                number = int(run["run"])
                # a one-pair run starts its client at once: no start delay (see paired.engine's barrier)
                self.planned[number] = run_seconds(
                    {**run, "start_delay": run.get("start_delay") if run.get("barrier", True) else 0}
                )
            except (KeyError, TypeError, ValueError):
                continue
            self.runs[number] = run
        self.run_count = len(runs)
        self.started = None
        self.done = set()
        self.last_eta = None
        self.totals = {}
        self.plans += 1

    def observe(self, facts: Any, now: float) -> str | None:
        """The facts of a task result: a new plan, the start of the runs, or a run's records (the line to print)."""
        if not isinstance(facts, Mapping):
            return None
        if "__paired_test_planned" in facts:
            self.plan(facts["__paired_test_planned"])
        records = facts.get("__paired_test_recorded")
        return self.record(records, now) if isinstance(records, list) else None

    def start(self, now: float) -> None:
        """The runs begin (``__paired_test_recorded`` set to ``[]``)."""
        self.started = now
        self.done = set()
        self.spent = 0.0
        self.learned = {}
        self.first_done = None
        self.totals = {}
        if self.first_start is None:
            self.first_start = now

    def eta(self, now: float) -> float | None:
        """Seconds until the last run of the plan ends; None before the first run ended."""
        if self.started is None or not self.done:
            return None
        if len(self.done) >= 2 and self.first_done is not None:
            # from the second run on, the overhead of the runs after the first: the first carries one-off costs (the
            # run's task file loaded, the first connections), which counted for every remaining run made the time left
            # 20 % high on mesh.yml
            first_at, first_spent = self.first_done
            overhead = max(0.0, (now - first_at - (self.spent - first_spent)) / (len(self.done) - 1))
        else:
            overhead = max(0.0, (now - self.started - self.spent) / len(self.done))
        remaining = [self._seconds_left(n, seconds) for n, seconds in self.planned.items() if n not in self.done]
        return math.fsum(remaining) + overhead * len(remaining)

    def _seconds_left(self, number: int, planned: float) -> float:
        """A remaining run's seconds: planned, with the automatic start delay its clients now use (the delay learns
        from the runs: the planned first value is an upper bound, later ones are usually shorter - mesh.yml's
        rounds showed the time left 15-20 % high while the planned value was counted)."""
        run = self.runs.get(number, {})
        used = self.learned.get(_clients(run)) if self._auto_barrier(number) else None
        if used is None:
            return planned
        try:
            return run_seconds({**run, "start_delay": used})
        except (KeyError, TypeError, ValueError):
            return planned

    def _auto_barrier(self, number: int) -> bool:
        run = self.runs.get(number, {})
        return bool(run.get("barrier", True) and run.get("start_delay_auto"))

    def _account(self, number: int, record: Mapping[str, Any]) -> None:
        """Add the seconds a finished run spent in iperf and its start delay; note a grown automatic delay."""
        run = self.runs.get(number)
        if run is None:
            return
        used = record.get("start_delay")
        delay = float(used) if isinstance(used, int | float) and not isinstance(used, bool) else 0.0
        try:
            self.spent += run_seconds({**run, "start_delay": delay})
        except (KeyError, TypeError, ValueError):
            return
        if self._auto_barrier(number) and used is not None:
            self.learned[_clients(run)] = delay

    def record(self, records: Any, now: float) -> str | None:
        """``__paired_test_recorded`` was set: the line of its newest run, or None (nothing new)."""
        if not isinstance(records, Sequence) or isinstance(records, str):
            return None
        if not records:
            self.start(now)
            return None
        record = records[-1]
        if not isinstance(record, Mapping):
            return None
        try:
            number = int(record["run"])
        except (KeyError, TypeError, ValueError):
            return None
        if number in self.done:
            return None  # the same record seen again (set on another host)
        if self.started is None:
            self.start(now)
        self.done.add(number)
        self._account(number, record)
        if self.first_done is None:
            self.first_done = (now, self.spent)
        self.records.append(record)
        eta = self.eta(now)
        self.last_eta = eta
        return f"{self._label(record)}: {self._figure(record)} \u2014 {self._left(eta)}"

    def _label(self, record: Mapping[str, Any], *, numbered: bool = True) -> str:
        streams = record.get("streams")
        text = f"run {record.get('run')}/{self.run_count or '?'} " if numbered else ""
        text += f"{record.get('test')} {streams} stream{'' if streams == 1 else 's'} {record.get('direction')}"
        if record.get("swapped"):
            text += " swapped"
        if record.get("repetition") not in (None, 1):
            text += f" repetition {record.get('repetition')}"
        return text

    def _figure(self, record: Mapping[str, Any]) -> str:
        total = record.get("total_bits_per_second")
        if not record.get("ok", True):
            errors = "; ".join(str(e) for e in record.get("errors") or [])
            return f"failed ({errors})" if errors else "failed"
        if total is None:
            return "no figure"
        values = self.totals.setdefault(_group(record), [])
        values.append(float(total))
        text = rate_with_unit(float(total))
        stats = summarize(values)
        half, mean = stats["ci95"]["half_width"], stats["mean"]
        if half is not None and mean:
            text += f" (mean of {len(values)} {rate_with_unit(mean)} ± {100 * half / mean:.1f} % CI95)"
        return text

    def _left(self, eta: float | None) -> str:
        if len(self.done) >= self.run_count and self.run_count:
            return "last run"
        return "time left unknown" if eta is None else f"{duration_text(eta)} left"

    def summary(self, now: float) -> list[str]:
        """The plain summary at the end of the playbook (named when known); empty when no run was seen."""
        if not self.records:
            return []
        ok = sum(1 for r in self.records if r.get("ok", True) and r.get("total_bits_per_second") is not None)
        failed = sum(1 for r in self.records if not r.get("ok", True))
        elapsed = now - (self.first_start if self.first_start is not None else now)
        name = f"paired_test ({self.playbook})" if self.playbook else "paired_test"
        line = f"{name}: {len(self.records)} run(s) in {duration_text(elapsed)}: {ok} with a figure"
        if failed:
            line += f", {failed} failed"
        lines = [line]
        best = max(
            (r for r in self.records if r.get("total_bits_per_second") is not None),
            key=lambda r: float(r["total_bits_per_second"]),
            default=None,
        )
        if best is not None:
            figure = rate_with_unit(float(best["total_bits_per_second"]))
            lines.append(f"{name}: best {self._label(best, numbered=False)}: {figure}")
        return lines
