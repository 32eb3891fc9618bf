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

Or a run layout ``{forward: 3, swapped: 1}`` (``LAYOUT_KEYS``, with ``max_failures``): a count per kind
of point - ``forward`` / ``reverse`` the runs of that direction with the roles as given, ``swapped`` the
runs with the roles swapped (each direction) - for procedures such as seed 002's "3 runs, then 1 with
the roles swapped, and the mean of the 4". ``check_layout()`` checks it against the test's direction and
``swap_roles``; ``RepeatSpec.runs_of()`` / ``for_point()`` give each point its count and spec.

``read_repeat()`` checks the option; ``assess()`` decides, from a point's samples so far, whether
it is stable and whether its remaining runs are skipped. The statistics are ``iperf.stats``'s.

Plain data; no Ansible import, no I/O. Private module: not part of the collection's public API.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.role_vars import closest
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.stats import summarize

__all__ = ["LAYOUT_KEYS", "REPEAT_KEYS", "RepeatSpec", "StabilityError", "assess", "check_layout", "read_repeat"]

REPEAT_KEYS = ("min", "max", "until_cv", "ci_percent", "max_failures")
# A run layout: runs per kind of point - the direction with the roles as given, or the swapped role order.
LAYOUT_KEYS = ("forward", "reverse", "swapped")
# The keys of the adaptive form that a run layout does not go with (max_failures does).
_ADAPTIVE_KEYS = ("min", "max", "until_cv", "ci_percent")
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
    #: A run layout ``((kind, runs), ...)`` in ``LAYOUT_KEYS`` order; empty: every point runs ``max`` times.
    layout: tuple[tuple[str, int], ...] = ()

    @property
    def adaptive(self) -> bool:
        """Whether runs beyond ``min`` may be skipped."""
        return self.until_cv is not None or self.ci_percent is not None

    def as_dict(self) -> dict[str, Any]:
        """The spec ``assess()`` is given again from a run of the plan (``RepeatSpec(**spec)``): without a layout."""
        return {key: value for key, value in asdict(self).items() if key != "layout"}

    def runs_of(self, direction: str, swapped: bool) -> int:
        """How many times a point of this direction and role order runs."""
        if not self.layout:
            return self.max
        return dict(self.layout)["swapped" if swapped else direction]

    def for_point(self, direction: str, swapped: bool) -> RepeatSpec:
        """The spec of one point: its own count for a layout (``min = max``, ``max_failures`` kept), else this."""
        if not self.layout:
            return self
        runs = self.runs_of(direction, swapped)
        return RepeatSpec(runs, runs, max_failures=self.max_failures)

    def shown(self) -> int | dict[str, Any]:
        """The option as the normalized plan shows it: the count, the layout or the dictionary form."""
        if self.layout:
            extra = {} if self.max_failures is None else {"max_failures": self.max_failures}
            return {**dict(self.layout), **extra}
        if not self.adaptive and self.max_failures is None:
            return self.max
        return self.as_dict()


def _whole(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("+").isdigit():
        return int(value.strip())
    return None


def _percent(value: Any, key: str, where: str, path: str) -> float:
    number: Any = value
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(number) or number <= 0:
        raise StabilityError(
            f"{path}.{key} ({where}) must be a percentage above 0 (for example 5 for 5 % of the mean), got {value!r}"
        )
    if number > MAX_PERCENT:
        # a spread of more than the mean itself: every point would count as stable after min runs
        raise StabilityError(
            f"{path}.{key} ({where}) must be at most {MAX_PERCENT:g} (% of the mean), got {value!r}; a limit that "
            f"large stops every point after {path}.min runs - give a limit such as 5, or repeat: <runs>"
        )
    return float(number)


def read_repeat(value: Any, where: str, path: str = "repeat") -> RepeatSpec:
    """``repeat`` as a ``RepeatSpec``: a whole number N (min = max = N), the dictionary form or a run layout.
    ``path`` is the option's full path (``paired_test_tests[0].repeat``, ``paired_test_repeat``), ``where`` the
    test it is read for; every message starts with the path of the key at fault."""
    number = _whole(value)
    if number is not None:
        if number < 1:
            raise StabilityError(f"{path} ({where}) must be at least 1, got {value!r}")
        return RepeatSpec(number, number)
    if not isinstance(value, Mapping):
        raise StabilityError(
            f"{path} ({where}) must be a whole number or a dictionary such as {{min: 3, max: 10, until_cv: 5}} or "
            f"{{forward: 3, swapped: 1}}, got {type(value).__name__} {value!r}"
        )
    allowed = (*REPEAT_KEYS, *LAYOUT_KEYS)
    unknown = sorted(str(k) for k in value if k not in allowed)
    if unknown:
        found = []
        for key in unknown:
            near = closest(key, allowed)
            found.append(f"{path}.{key} ({where}): unknown key" + (f" - did you mean {near}?" if near else ""))
        raise StabilityError(
            f"{'; '.join(found)}; repeat takes {{{', '.join(REPEAT_KEYS)}}} (runs until stable) or "
            f"{{{', '.join(LAYOUT_KEYS)}, max_failures}} (runs per kind of point)"
        )
    if any(key in value for key in LAYOUT_KEYS):
        return _read_layout(value, where, path)
    counts: dict[str, int] = {}
    for key in ("min", "max"):
        if key not in value:
            raise StabilityError(
                f"{path}.{key} ({where}) is missing; the dictionary form needs min and max (or give a run layout "
                "such as {forward: 3, swapped: 1})"
            )
        count = _whole(value[key])
        if count is None or count < 1:
            raise StabilityError(f"{path}.{key} ({where}) must be a whole number of at least 1, got {value[key]!r}")
        counts[key] = count
    if counts["min"] > counts["max"]:
        raise StabilityError(
            f"{path}.min ({where}) is {counts['min']}, more than {path}.max ({counts['max']}); min <= max"
        )
    until_cv = _percent(value["until_cv"], "until_cv", where, path) if value.get("until_cv") is not None else None
    ci_percent = (
        _percent(value["ci_percent"], "ci_percent", where, path) if value.get("ci_percent") is not None else None
    )
    spec = RepeatSpec(
        counts["min"], counts["max"], until_cv, ci_percent, _max_failures(value.get("max_failures"), where, path)
    )
    if counts["min"] < counts["max"] and not spec.adaptive:
        raise StabilityError(
            f"{path} ({where}) has min {counts['min']} < max {counts['max']} but neither until_cv nor ci_percent, so "
            f"every point would run {counts['max']} times; set {path}.until_cv (for example 5) or ci_percent, or give "
            f"repeat: {counts['max']}"
        )
    if spec.adaptive and counts["max"] < 2:
        raise StabilityError(
            f"{path}.max ({where}) must be at least 2 with until_cv or ci_percent (one sample has no spread)"
        )
    return spec


def _max_failures(value: Any, where: str, path: str) -> int | None:
    if value is None:
        return None
    count = _whole(value)
    if count is None or count < 0:
        raise StabilityError(f"{path}.max_failures ({where}) must be a whole number of at least 0, got {value!r}")
    return count


def _read_layout(value: Mapping[str, Any], where: str, path: str) -> RepeatSpec:
    """A run layout ``{forward: 3, swapped: 1}``: a count of at least 1 per kind given, no adaptive key."""
    mixed = [key for key in _ADAPTIVE_KEYS if key in value]
    if mixed:
        given = ", ".join(key for key in LAYOUT_KEYS if key in value)
        raise StabilityError(
            f"{path}.{mixed[0]} ({where}): {path} has {given} (runs per kind of point) and {', '.join(mixed)} (runs "
            "until stable), which do not go together - give either a layout such as {forward: 3, swapped: 1} or "
            "{min: 3, max: 10, until_cv: 5}"
        )
    layout: list[tuple[str, int]] = []
    for key in LAYOUT_KEYS:
        if key not in value:
            continue
        count = _whole(value[key])
        if count is None or count < 1:
            raise StabilityError(
                f"{path}.{key} ({where}) must be a whole number of at least 1 (the runs of that kind of point), got "
                f"{value[key]!r}; to run none, leave the kind out of the test (direction, swap_roles) and of {path}"
            )
        layout.append((key, count))
    counts = [count for _key, count in layout]
    failures = _max_failures(value.get("max_failures"), where, path)
    return RepeatSpec(min(counts), max(counts), max_failures=failures, layout=tuple(layout))


def check_layout(spec: RepeatSpec, directions: Sequence[str], swap_roles: bool, where: str, path: str) -> None:
    """A run layout names exactly the kinds of point the test plans: each unswapped direction (``forward``,
    ``reverse``) and ``swapped`` when the roles are swapped; nothing for a count or the dictionary form."""
    if not spec.layout:
        return
    planned = [*directions, *(["swapped"] if swap_roles else [])]
    given = [key for key, _count in spec.layout]
    for key in planned:
        if key not in given:
            why = (
                "swap_roles is true, so swapped runs are planned"
                if key == "swapped"
                else f"the test's direction plans {key} runs"
            )
            raise StabilityError(f"{path}.{key} ({where}) is missing: {why} - give {path}.{key}: <runs>")
    for key in given:
        if key not in planned:
            why = (
                "swap_roles is false, so no swapped run is planned - set swap_roles: true or remove it"
                if key == "swapped"
                else f"the test's direction plans only {' and '.join(directions)} runs - set direction: both or "
                "remove it"
            )
            raise StabilityError(f"{path}.{key} ({where}) is set but {why}")


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
