# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one preflight of ``esxilab.iperf.paired_test``: every setting checked before anything runs on a host.

:func:`preflight` takes what the play gives (the tests, the role's settings, the report's settings,
the names of the variables defined, the state directory of each host) and returns the plan with
**every** problem found, one line each, each naming the option by its full path
(``paired_test_tests[0].pairs[1]: ...``, ``report_baseline: ...``) and the fix. It reads the
controller's files only (the baseline, a SQLite history) and connects to a PostgreSQL history to
read its schema version; it writes nothing.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.role_vars import Unknown, closest, unknown_names
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.units import finite_float
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.checks import (
    IDENTITY_LABELS,
    MAX_RUNS,
    PairedTestError,
    PlanErrors,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.latency_gate import check_latency_gate
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import history
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.settings_check import (
    GATE_OPTIONS,
    check_knee_tolerance,
    check_report,
    check_report_name,
    number,
    shown,
)

__all__ = [
    "GATE_OPTIONS",
    "Outcome",
    "RoleNames",
    "check_report",
    "check_role_settings",
    "check_state_dirs",
    "preflight",
]


@dataclass(frozen=True)
class RoleNames:
    """The variables one role knows: names starting with ``prefix`` that are not ``known`` are likely typos."""

    role: str  # esxilab.iperf.paired_test
    prefix: str  # paired_test_
    known: frozenset[str]


@dataclass
class Outcome:
    """The plan (``None`` when the tests cannot be planned), the problems and the warnings, one line each."""

    plan: dict[str, Any] | None
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def check_role_settings(knee_tolerance: Any, report_name: Any, max_runs: Any) -> list[str]:
    """The role settings used after the series (the knee, the report's name) and the run limit."""
    problems = check_knee_tolerance(knee_tolerance, "paired_test_knee_tolerance")
    if report_name is not None:
        problems += check_report_name(report_name, "paired_test_report_name", "paired_test_report_dir")
    runs = number(max_runs)
    if runs is None or runs < 1 or runs != int(runs):
        problems.append(
            f"paired_test_max_runs={shown(max_runs)} must be a whole number of at least 1 (default {MAX_RUNS})"
        )
    return problems


def check_state_dirs(state_dirs: Mapping[str, Any], hosts: Iterable[str]) -> list[str]:
    """``paired_test_state_dir`` of every host of the tests: an absolute path on one line. A host missing from
    ``state_dirs`` is not checked: its variable could not be read, which is a problem of its own."""
    problems = []
    for host in hosts:
        if host not in state_dirs:
            continue
        value = state_dirs.get(host)
        if not isinstance(value, str) or not value.startswith("/") or "\n" in value:
            problems.append(
                f"paired_test_state_dir={shown(value)} on {host} is not an absolute path: the servers' pidfiles and "
                "logs go there on the host, and a relative path would depend on the connection's working directory; "
                "set an absolute directory that exists on the host, such as /tmp (per host in host_vars if needed)"
            )
    return problems


def check_link_speeds(link_speeds: Mapping[str, Any]) -> tuple[dict[str, float], list[str]]:
    """``paired_test_link_speed_mbps`` of each host (null: not given): the given ones as floats, and the problems."""
    given: dict[str, float] = {}
    problems = []
    for host, value in sorted(link_speeds.items()):
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        speed = number(value)
        if speed is None or speed <= 0:
            problems.append(
                f"paired_test_link_speed_mbps={shown(value)} on {host} is not a link speed: give a positive number of "
                "Mbit/s (for example 1000 for a 1 Gbit/s link), or leave it unset to read the speed on the host"
            )
        else:
            given[host] = speed
    return given, problems


# Labels the line rate adds to every run after the preflight (paired/line_rate.py): a report may compare by them.
_LINE_RATE_LABELS = ("line_rate_bps", "line_rate_source", "link_speed_mbps")


def check_compare_by(compare_by: Any, plan: Mapping[str, Any]) -> list[str]:
    """``report_compare_by`` names a label some planned run or pair has (else nothing would be compared)."""
    if compare_by is None or (isinstance(compare_by, str) and not compare_by.strip()):
        return []
    labels: list[str] = [*IDENTITY_LABELS]
    for run in plan.get("runs") or []:
        for item in (run, *(run.get("pairs") or [])):
            labels.extend(str(k) for k in (item.get("labels") or {}) if str(k) not in labels)
    if not isinstance(compare_by, str) or compare_by in labels or compare_by in _LINE_RATE_LABELS:
        return [] if isinstance(compare_by, str) else [f"report_compare_by={shown(compare_by)} must be a label name"]
    near = closest(compare_by, labels)
    return [
        f"report_compare_by={shown(compare_by)}: no planned run or pair has the label {compare_by}, so nothing would "
        f"be compared{f' (did you mean {near}?)' if near else ''}; the labels are: {', '.join(labels)} - fix the name, "
        "give the pairs that label, or unset report_compare_by"
    ]


def _unknown_line(role: RoleNames, item: Unknown) -> str:
    hint = f"did you mean {item.suggestion}?" if item.suggestion else f"ansible-doc -t role {role.role} lists them"
    return f"{item.name} is not an option of {role.role} ({hint}); fix the name or remove it"


def preflight(
    tests: Any,
    *,
    defaults: Mapping[str, Any],
    role_settings: Mapping[str, Any],
    report_settings: Mapping[str, Any],
    state_dirs: Mapping[str, Any],
    defined: Iterable[str],
    link_speeds: Mapping[str, Any] | None = None,
    roles: Sequence[RoleNames],
    unknown_fail: bool = True,
    addresses: Mapping[str, Any] | None = None,
    address_var: str | None = None,
    inventory_hosts: Sequence[str] | None = None,
    play_hosts: Sequence[str] | None = None,
    reporting: bool = True,
    resolve: Callable[[str], str] = os.path.abspath,
    connect: Callable[..., history.Connection | None] | None = None,
) -> Outcome:
    """Everything the play gives, checked at once (see the module docstring)."""
    outcome = Outcome(plan=None)
    names = list(defined)
    for role in roles:
        for item in unknown_names(names, role.prefix, role.known):
            (outcome.problems if unknown_fail else outcome.warnings).append(_unknown_line(role, item))
    outcome.problems.extend(
        check_role_settings(
            role_settings.get("knee_tolerance"), role_settings.get("report_name"), role_settings.get("max_runs")
        )
    )
    max_runs = number(role_settings.get("max_runs"))
    given_speeds, speed_problems = check_link_speeds(link_speeds or {})
    outcome.problems.extend(speed_problems)
    try:
        plan = build_plan(
            tests,
            defaults,
            addresses=addresses,
            address_var=address_var,
            inventory_hosts=inventory_hosts,
            play_hosts=play_hosts,
            max_runs=int(max_runs) if max_runs is not None and max_runs >= 1 else MAX_RUNS,
        )
    except PlanErrors as exc:
        outcome.problems.extend(exc.messages)
        outcome.problems.extend(exc.problems)
        outcome.problems.extend(check_state_dirs(state_dirs, sorted(state_dirs)))  # no plan: every host given
    except PairedTestError as exc:
        outcome.problems.append(str(exc))
        outcome.problems.extend(check_state_dirs(state_dirs, sorted(state_dirs)))
    else:
        for lines in plan["problems"].values():
            outcome.problems.extend(lines)
        outcome.problems.extend(check_state_dirs(state_dirs, plan["hosts"]))
        if reporting:
            outcome.problems.extend(check_compare_by(report_settings.get("report_compare_by"), plan))
            outcome.problems.extend(check_latency_gate(report_settings, plan))
        # the line rate a host's links are given (the lab's shaped links): the plan carries it to with_line_rates
        plan["given_link_speeds"] = {host: speed for host, speed in given_speeds.items() if host in plan["hosts"]}
        # a link speed that would not be used is not read: a host's given speed wins, and so does report_line_rate_bps
        given_rate = finite_float(report_settings.get("report_line_rate_bps"))
        plan["addresses_by_host"] = (
            {}
            if given_rate is not None and given_rate > 0
            else {h: a for h, a in plan["addresses_by_host"].items() if h not in plan["given_link_speeds"]}
        )
        outcome.plan = plan
    if reporting:
        outcome.problems.extend(check_report(report_settings, resolve=resolve, connect=connect))
    return outcome
