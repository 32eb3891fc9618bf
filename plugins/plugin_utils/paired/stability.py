# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Stable samples for ``esxilab.iperf.paired_test``: the ``repeat`` option and the stop decision.

``repeat`` is a whole number (every point runs that often) or ``{min, max, until_cv, ci_percent,
max_failures}``: every point (test, direction, streams value, role order) runs at least ``min``
and at most ``max`` times; after ``min`` usable samples its remaining runs are skipped as soon as
the coefficient of variation is at most ``until_cv`` % and (when given) the half-width of the
95 % confidence interval of the mean at most ``ci_percent`` % of the mean. ``max_failures``
failed runs of a point are tolerated (the play goes on); one more ends the point.

``read_repeat()`` checks the option; ``assess()`` decides, from a point's samples so far, whether
it is stable and whether its remaining runs are skipped. The statistics are ``iperf.stats``'s.

Plain data; no Ansible import, no I/O. Private module: not part of the collection's public API.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.role_vars import closest, unknown_keys_text
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.stats import summarize

__all__ = ["REPEAT_KEYS", "RepeatSpec", "StabilityError", "assess", "read_repeat"]

REPEAT_KEYS = ("min", "max", "until_cv", "ci_percent", "max_failures")
# The largest until_cv / ci_percent: a spread as large as the mean itself.
MAX_PERCENT = 100.0


class StabilityError(ValueError):
    """The repeat option cannot be used; the message names the key and the fix."""


@dataclass(frozen=True)
class RepeatSpec:
    """How often a point runs and when it is stable enough to stop."""

    min: int
    max: int
    until_cv: float | None = None  # coefficient of variation limit, in % of the mean
    ci_percent: float | None = None  # half-width limit of the 95 % interval, in % of the mean
    max_failures: int | None = None  # failed runs a point tolerates (None: a failed run is not tolerated)

    @property
    def adaptive(self) -> bool:
        """Whether runs beyond ``min`` may be skipped."""
        return self.until_cv is not None or self.ci_percent is not None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _whole(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("+").isdigit():
        return int(value.strip())
    return None


def _percent(value: Any, key: str, where: str) -> float:
    number: Any = value
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(number) or number <= 0:
        raise StabilityError(
            f"{where}: repeat.{key} must be a percentage above 0 (for example 5 for 5 % of the mean), got {value!r}"
        )
    if number > MAX_PERCENT:
        # a spread of more than the mean itself: every point would count as stable after min runs
        raise StabilityError(
            f"{where}: repeat.{key} must be at most {MAX_PERCENT:g} (% of the mean), got {value!r}; a limit that "
            f"large stops every point after repeat.min runs - give a limit such as 5, or repeat: <runs>"
        )
    return float(number)


def read_repeat(value: Any, where: str) -> RepeatSpec:
    """``repeat`` as a ``RepeatSpec``: a whole number N (min = max = N) or the dictionary form."""
    number = _whole(value)
    if number is not None:
        if number < 1:
            raise StabilityError(f"{where}: repeat must be at least 1, got {value!r}")
        return RepeatSpec(number, number)
    if not isinstance(value, Mapping):
        raise StabilityError(
            f"{where}: repeat must be a whole number or a dictionary such as {{min: 3, max: 10, until_cv: 5}}, "
            f"got {type(value).__name__} {value!r}"
        )
    unknown = sorted(str(k) for k in value if k not in REPEAT_KEYS)
    if unknown:
        known = ", ".join(REPEAT_KEYS)
        shown = unknown_keys_text(unknown, REPEAT_KEYS)
        listed = "" if all(closest(key, REPEAT_KEYS) for key in unknown) else f"; known: {known}"
        raise StabilityError(f"{where}: repeat has unknown key(s) {shown}{listed}")
    counts: dict[str, int] = {}
    for key in ("min", "max"):
        if key not in value:
            raise StabilityError(f"{where}: repeat.{key} is missing; the dictionary form needs min and max")
        count = _whole(value[key])
        if count is None or count < 1:
            raise StabilityError(f"{where}: repeat.{key} must be a whole number of at least 1, got {value[key]!r}")
        counts[key] = count
    if counts["min"] > counts["max"]:
        raise StabilityError(
            f"{where}: repeat.min ({counts['min']}) is more than repeat.max ({counts['max']}); min <= max"
        )
    until_cv = _percent(value["until_cv"], "until_cv", where) if value.get("until_cv") is not None else None
    ci_percent = _percent(value["ci_percent"], "ci_percent", where) if value.get("ci_percent") is not None else None
    max_failures: int | None = None
    if value.get("max_failures") is not None:
        max_failures = _whole(value["max_failures"])
        if max_failures is None or max_failures < 0:
            raise StabilityError(
                f"{where}: repeat.max_failures must be a whole number of at least 0, got {value['max_failures']!r}"
            )
    spec = RepeatSpec(counts["min"], counts["max"], until_cv, ci_percent, max_failures)
    if counts["min"] < counts["max"] and not spec.adaptive:
        raise StabilityError(
            f"{where}: repeat has min {counts['min']} < max {counts['max']} but neither until_cv nor ci_percent, so "
            f"every point would run {counts['max']} times; set until_cv (for example 5) or ci_percent, or give "
            f"repeat: {counts['max']}"
        )
    if spec.adaptive and counts["max"] < 2:
        raise StabilityError(
            f"{where}: repeat.max must be at least 2 with until_cv or ci_percent (one sample has no spread)"
        )
    return spec


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} %"


def assess(samples: Sequence[float | None], spec: RepeatSpec) -> dict[str, Any]:
    """The state of one point after its runs so far (``samples``: each run's total, ``None`` when it failed).

    ``stable`` is ``None`` for a plain ``repeat: N`` (nothing to decide), else whether the usable samples (at
    least ``max(min, 2)``) meet ``until_cv`` and ``ci_percent``. ``done``: the point's remaining runs are skipped
    (stable, one failure more than ``max_failures``, or ``max`` runs made). ``tolerated``: the last run failed
    within ``max_failures``. ``verdict`` says it in words once the point is done (``None`` before).
    """
    values = [s for s in samples if s is not None]
    runs = len(samples)
    failures = runs - len(values)
    stats = summarize(values)
    mean = stats["mean"]
    cv_percent = None if stats["cv"] is None else stats["cv"] * 100.0
    half = stats["ci95"]["half_width"]
    ci_percent = half / mean * 100.0 if half is not None and mean is not None and mean > 0 else None
    stable: bool | None = None
    if spec.adaptive:
        stable = (
            len(values) >= max(spec.min, 2)
            and (spec.until_cv is None or (cv_percent is not None and cv_percent <= spec.until_cv))
            and (spec.ci_percent is None or (ci_percent is not None and ci_percent <= spec.ci_percent))
        )
    given_up = spec.max_failures is not None and failures > spec.max_failures
    last_failed = bool(samples) and samples[-1] is None
    done = bool(stable) or given_up or runs >= spec.max
    spread = f"cv {_pct(cv_percent)}" + (f", 95 % CI ±{_pct(ci_percent)}" if spec.ci_percent is not None else "")
    verdict: str | None = None
    if given_up:
        verdict = f"gave up after {failures} failed runs of {runs} (max_failures {spec.max_failures}; {spread})"
    elif stable:
        verdict = f"stable after {runs} runs ({spread})"
    elif done and stable is False:
        verdict = f"unstable after {runs} runs ({spread})"
    return {
        "runs": runs,
        "samples": len(values),
        "failures": failures,
        "mean": mean,
        "cv_percent": cv_percent,
        "ci_percent": ci_percent,
        "stable": stable,
        "done": done,
        "tolerated": last_failed and spec.max_failures is not None and not given_up,
        "verdict": verdict,
    }
