# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The regression gate: the report's entries (with their baseline deltas) against the configured tolerances.

* ``max_drop_percent``: an entry fails when its mean throughput dropped by more than this against
  the baseline *and* the 95 % interval of the difference excludes zero (``baseline.Delta``); a drop
  without statistics (n=1) or without significance is shown, never failed;
* ``min_line_rate_percent``: fails when the mean is below this percentage of the line rate (an
  entry without a line rate is noted, not failed);
* ``max_retransmits``: fails when a run of the entry had more retransmits (the senders' sum);
* ``max_loss_percent``: fails when a run of the entry lost more UDP datagrams (percent);
* ``max_latency_increase_percent``, ``max_loaded_rtt_ms``: the entry's loaded ping RTT (percentile
  ``latency_percentile``) against its baseline row and against a ceiling (``gate_latency.py``).

A check that has no figure to compare (no baseline, no line rate, TCP for loss, no latency measured) is
``skip`` with the reason, never a pass nor a failure.

``gate_doc()`` is the ``baseline``/``gate`` part of ``results.json``; ``markdown()`` the section of
``summary.md``; ``lines()`` what the play prints; ``failure_message()`` names every failed test and
its figures. Plain data in and out.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.base import format_rate, md_text, pick_unit
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.baseline import Delta
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.gate_latency import (
    DEFAULT_PERCENTILE,
    PERCENTILES,
    latency_checks,
    percentile_of,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history import KEY_FIELDS

__all__ = [
    "LIMIT_BOUNDS",
    "MARKER",
    "Check",
    "Limits",
    "evaluate",
    "failure_message",
    "gate_doc",
    "limit_problems",
    "lines",
    "markdown",
    "percentile_problems",
]

MARKER = "<!-- esxilab.iperf gate -->"


# The tolerances and their bounds - the one check of them (report_gate; paired_test's preflight for report_*):
# (largest value or None, whole numbers only, why the bound).
LIMIT_BOUNDS: dict[str, tuple[float | None, bool, str]] = {
    "max_drop_percent": (100.0, False, "a drop is at most 100 % of the baseline mean (a rate is never below 0)"),
    "min_line_rate_percent": (
        100.0,
        False,
        "iperf measures goodput, always below the line rate (headers, gaps), so a bound above 100 % would fail "
        "every run",
    ),
    "max_retransmits": (None, True, "a count of retransmitted segments"),
    "max_loss_percent": (100.0, False, "at most 100 % of the datagrams can be lost"),
    "max_latency_increase_percent": (
        None,
        False,
        "the growth of the loaded ping RTT percentile over the baseline row's, in % of the baseline's",
    ),
    "max_loaded_rtt_ms": (None, False, "the largest loaded ping RTT percentile allowed, in milliseconds"),
}
_NUMBER = re.compile(r"^[-+]?(?:[0-9]+[.]?[0-9]*|[.][0-9]+)(?:[eE][-+]?[0-9]+)?$")


def _limit_number(value: object) -> float | None:
    """A tolerance given as a number or a numeric string (``-e`` gives strings); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and _NUMBER.match(value.strip()):
        return float(value.strip())
    return None


def limit_problems(values: Mapping[str, object], *, prefix: str = "") -> list[str]:
    """One line per tolerance in ``values`` (``LIMIT_BOUNDS`` names; unset: ``None``) that is not a finite number in
    its bounds; each names the option (``prefix`` + name) and the fix."""
    problems: list[str] = []
    for name, (upper, whole, why) in LIMIT_BOUNDS.items():
        value = values.get(name)
        if value is None:
            continue
        number = _limit_number(value)
        shown = json.dumps(value) if isinstance(value, str | int | float | bool) else repr(value)
        if whole:
            if number is None or not math.isfinite(number) or number < 0 or not number.is_integer():
                problems.append(f"{prefix}{name}={shown} must be a number of at least 0, a whole one ({why}), or unset")
        elif number is None or not math.isfinite(number) or number < 0 or (upper is not None and number > upper):
            most = "" if upper is None else f" and at most {upper:g}"
            problems.append(
                f"{prefix}{name}={shown} must be a number of at least 0{most} ({why}), for example 5, "
                "or unset to leave it out"
            )
    return problems


def percentile_problems(value: object, *, option: str = "latency_percentile") -> list[str]:
    """The latency checks' percentile (``option`` is the full name): one of ``PERCENTILES``; None is the default."""
    if value is None or percentile_of(value) is not None:
        return []
    shown = json.dumps(value) if isinstance(value, str | int | float | bool) else repr(value)
    choices = ", ".join(str(p) for p in PERCENTILES)
    return [
        f"{option}={shown} must be one of {choices} (the loaded ping RTT percentiles a run records; p99 needs 100 "
        f"replies per window, see docs/latency.md), for example {DEFAULT_PERCENTILE}, or unset for "
        f"{DEFAULT_PERCENTILE}"
    ]


@dataclass(frozen=True)
class Limits:
    max_drop_percent: float | None = None
    min_line_rate_percent: float | None = None
    max_retransmits: int | None = None
    max_loss_percent: float | None = None
    max_latency_increase_percent: float | None = None
    max_loaded_rtt_ms: float | None = None
    latency_percentile: int = DEFAULT_PERCENTILE  # of the two latency checks: 50, 90 or 99

    def as_doc(self) -> dict[str, Any]:
        """The tolerances (``LIMIT_BOUNDS`` names, None: unset) and the latency checks' percentile."""
        return {**self.tolerances(), "latency_percentile": self.latency_percentile}

    def tolerances(self) -> dict[str, float | int | None]:
        return {name: getattr(self, name) for name in LIMIT_BOUNDS}

    @property
    def any_set(self) -> bool:
        return any(value is not None for value in self.tolerances().values())


@dataclass(frozen=True)
class Check:
    """One tolerance applied to one entry: ``status`` pass, fail or skip (with ``detail`` saying why)."""

    title: str
    limit: str
    status: str
    detail: str
    always_shown: bool = False  # printed by ``lines()`` whatever its status (the latency checks)


def _pct(value: float | None, signed: bool = True) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.1f} %" if signed else f"{value:.1f} %"


def delta_text(delta: Delta) -> str:
    """``-19.8 % (95 % CI -21.0 % .. -18.6 %)``, or with the reason there is no interval."""
    if delta.baseline is None:
        return "no baseline"
    interval = delta.percent_interval
    if delta.percent is None:
        return "no figure"
    if interval is None:
        return f"{_pct(delta.percent)} (n=1, no statistics)"
    text = f"{_pct(delta.percent)} (95 % CI {_pct(interval[0])} .. {_pct(interval[1])})"
    return text if delta.verdict == "significant" else text + ", not significant"


def evaluate(deltas: Sequence[Delta], limits: Limits) -> list[Check]:
    """Every configured tolerance against every entry, in entry order."""
    checks: list[Check] = []
    for delta in deltas:
        now, title = delta.now, delta.now.title
        if limits.max_drop_percent is not None:
            limit = f"drop <= {limits.max_drop_percent:g} %"
            drop = delta.percent
            if delta.baseline is None or drop is None:
                checks.append(Check(title, limit, "skip", delta.verdict))
            elif delta.interval is None:
                checks.append(Check(title, limit, "skip", f"n=1, no statistics: {_pct(delta.percent)}, not gated"))
            else:
                failed = -drop > limits.max_drop_percent and delta.interval.significant
                base_text, now_text = _pair(delta)
                detail = f"{base_text} -> {now_text} ({now.count} vs {delta.baseline.count} runs): {delta_text(delta)}"
                checks.append(Check(title, limit, "fail" if failed else "pass", detail))
        if limits.min_line_rate_percent is not None:
            limit = f"line rate >= {limits.min_line_rate_percent:g} %"
            if now.percent_of_line_rate is None:
                checks.append(Check(title, limit, "skip", "no line rate known"))
            else:
                failed = now.percent_of_line_rate < limits.min_line_rate_percent
                share = _pct(now.percent_of_line_rate, False)
                detail = f"{_rate(now.mean, now.line_rate_bps)} = {share} of {_rate(now.line_rate_bps)}"
                checks.append(Check(title, limit, "fail" if failed else "pass", detail))
        if limits.max_retransmits is not None:
            limit = f"retransmits <= {limits.max_retransmits}"
            if now.max_retransmits is None:
                checks.append(Check(title, limit, "skip", "no retransmit figure (UDP, or iperf2)"))
            else:
                failed = now.max_retransmits > limits.max_retransmits
                checks.append(Check(title, limit, "fail" if failed else "pass", f"max {now.max_retransmits} in a run"))
        if limits.max_loss_percent is not None:
            limit = f"loss <= {limits.max_loss_percent:g} %"
            if now.max_lost_percent is None:
                checks.append(Check(title, limit, "skip", "no loss figure (TCP)"))
            else:
                failed = now.max_lost_percent > limits.max_loss_percent
                detail = f"max {now.max_lost_percent:.3g} % in a run"
                checks.append(Check(title, limit, "fail" if failed else "pass", detail))
        found = latency_checks(
            now,
            delta.baseline,
            max_increase_percent=limits.max_latency_increase_percent,
            max_loaded_rtt_ms=limits.max_loaded_rtt_ms,
            percentile=limits.latency_percentile,
        )
        checks += [Check(title, c.limit, c.status, c.detail, always_shown=True) for c in found]
    return checks


def _rate(bps: float | None, *among: float | None) -> str:
    """``bps`` in the unit of the largest of it and ``among`` (one unit for the figures of one line)."""
    if bps is None:
        return "n/a"
    unit = pick_unit([bps, *among])
    return f"{format_rate(bps, unit)} {unit.name}"


def _pair(delta: Delta) -> tuple[str, str]:
    """Baseline and now mean of a delta, in one unit."""
    base = None if delta.baseline is None else delta.baseline.mean
    return _rate(base, delta.now.mean), _rate(delta.now.mean, base)


def failure_message(checks: Sequence[Check]) -> str | None:
    failed = [c for c in checks if c.status == "fail"]
    if not failed:
        return None
    return "regression gate failed: " + "; ".join(f"{c.title}: {c.limit} breached - {c.detail}" for c in failed)


def _delta_doc(delta: Delta) -> dict[str, Any]:
    interval = delta.percent_interval
    return {
        "test": delta.now.test,
        "direction": delta.now.direction,
        "swapped": delta.now.swapped,
        "streams": delta.now.streams,
        "tool": delta.now.tool,
        "protocol": delta.now.protocol,
        "pairs": delta.now.pairs,
        "labels": delta.now.labels,
        "baseline_source": delta.baseline_source,
        "baseline": None if delta.baseline is None else delta.baseline.as_doc(),
        "now": delta.now.as_doc(),
        "difference_percent": delta.percent,
        "ci95_percent": None if interval is None else {"low": interval[0], "high": interval[1]},
        "welch_df": None if delta.interval is None else delta.interval.df,
        "verdict": delta.verdict,
    }


def gate_doc(
    deltas: Sequence[Delta], checks: Sequence[Check], limits: Limits, baseline: str | None, history: str
) -> dict[str, Any]:
    """The ``baseline`` and ``gate`` sections of ``results.json``."""
    message = failure_message(checks)
    return {
        "baseline": {
            "source": baseline,
            "history": history,
            "comparisons": [_delta_doc(d) for d in deltas],
        },
        "gate": {
            "limits": limits.as_doc(),
            "passed": message is None,
            "message": message,
            "checks": [{"test": c.title, "limit": c.limit, "status": c.status, "detail": c.detail} for c in checks],
        },
    }


def lines(deltas: Sequence[Delta], checks: Sequence[Check], baseline: str | None) -> list[str]:
    """What the play prints: baseline vs now per entry, then the gate's verdict."""
    out = [f"baseline: {baseline or 'none'}"]
    for delta in deltas:
        base_text, now_text = _pair(delta)
        if delta.baseline is None:
            out.append(f"{delta.now.title}: now {now_text} (n={delta.now.count}), no baseline")
            continue
        out.append(
            f"{delta.now.title}: baseline {base_text} (n={delta.baseline.count}) -> now {now_text} "
            f"(n={delta.now.count}): {delta_text(delta)}"
        )
    failed = [c for c in checks if c.status == "fail"]
    passed = [c for c in checks if c.status == "pass"]
    if not checks:
        out.append("gate: no tolerance set")
    else:
        out += [
            f"{c.status} {c.title}: {c.limit} - {c.detail}" for c in checks if c.always_shown and c.status != "fail"
        ]
        out += [f"FAIL {c.title}: {c.limit} - {c.detail}" for c in failed]
        skipped = len(checks) - len(failed) - len(passed)
        out.append(
            f"gate: {'FAILED' if failed else 'passed'} ({len(passed)} passed, {len(failed)} failed"
            + (f", {skipped} not checked: {_reasons(checks)})" if skipped else ")")
        )
    return out


def _reasons(checks: Sequence[Check]) -> str:
    reasons: dict[str, int] = {}
    for check in checks:
        if check.status == "skip":
            reason = re.split("[:;]", check.detail, maxsplit=1)[0]  # the reason, without the figures after it
            reasons[reason] = reasons.get(reason, 0) + 1
    return "; ".join(f"{reason} x{count}" if count > 1 else reason for reason, count in reasons.items())


def markdown(deltas: Sequence[Delta], checks: Sequence[Check], baseline: str | None) -> str:
    """The ``summary.md`` section (starts with ``MARKER`` so that it is replaced, never repeated)."""
    out = [MARKER, "", "## Baseline and regression gate", "", f"Baseline: {md_text(baseline or 'none')}", ""]
    if deltas:
        out += [f"A row is compared with the baseline's row of the same {KEY_FIELDS}.", ""]
    out += [
        "| test | baseline | now | difference (95 % CI) |",
        "|---|---|---|---|",
    ]
    for delta in deltas:
        base_text, now_text = _pair(delta)
        base = "none" if delta.baseline is None else f"{base_text} (n={delta.baseline.count})"
        now = f"{now_text} (n={delta.now.count})"
        out.append(f"| {md_text(delta.now.title)} | {base} | {now} | {md_text(delta_text(delta))} |")
    out.append("")
    if checks:
        out += ["| test | tolerance | status | figures |", "|---|---|---|---|"]
        out += [f"| {md_text(c.title)} | {md_text(c.limit)} | {c.status} | {md_text(c.detail)} |" for c in checks]
        message = failure_message(checks)
        out += ["", f"**Gate: {'FAILED' if message else 'passed'}**" + (f" - {md_text(message)}" if message else "")]
    else:
        out.append("Gate: no tolerance set.")
    return "\n".join(out) + "\n"
