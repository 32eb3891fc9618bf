# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A run of the plan, typed: ``PlannedRun`` and its ``PlannedPair`` items, as ``paired.plan.build_plan`` makes them.

A run crosses Ansible between the preflight, which plans it, and the task that makes it (a loop item of
``esxilab.iperf.paired_test_host``; the ``esxilab.iperf.paired_test_record`` filter takes one too): there it is
checked once against these types (:func:`planned_run`), every problem named, and from then on it is a
``PlannedRun`` - no cast. The check reads the types themselves: one declaration.

Plain data in, plain data out; no Ansible import.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Mapping
from typing import Any, TypedDict, TypeGuard

__all__ = ["MAX_AT_ONCE", "PlannedPair", "PlannedRun", "PlannedRunError", "planned_run", "run_problems"]

#: The most hosts a part of a run (the starts, the clients, the stops) works on at once, each in a thread of the run's
#: task waiting on its SSH session - so also the most hosts a run's clients part may have (its clients, and servers
#: waiting for external clients): more would not start together (the plan refuses such a run). The start and the stop
#: of a larger run (up to 64 servers and 64 clients) go in two waves: the barrier still starts the clients together.
#: Ansible's ``forks`` plays no part: one task drives the whole run.
MAX_AT_ONCE = 64


class PlannedPair(TypedDict):
    """One pair of a run: who serves where, who connects from where, and the pair's labels."""

    run: int
    pair: int
    server: str | None  # None: the server is outside the inventory (external_server)
    client: str | None  # None: the clients are outside the inventory (external)
    address: str | None
    port: int
    bind: str | None
    client_bind: str | None
    sender: str
    receiver: str
    external: dict[str, Any] | None  # {count, deadline, from, command}: clients outside the inventory
    external_server: dict[str, Any] | None  # {command}: the server outside the inventory
    one_off: bool
    labels: dict[str, Any]


class PlannedRun(TypedDict):
    """One run of the plan (``paired.plan``): the test's settings for this run, its pairs and what the run reads."""

    run: int
    test: str
    sweep: bool
    direction: str
    reverse: bool
    swapped: bool
    repetition: int
    repeat: int
    point: str
    stability: dict[str, Any] | None  # None: a plain repeat (every run is made)
    order: str
    shuffle_seed: int | None
    combine_swapped: bool
    # the settings that feed iperf_run (paired.settings: Setting.server / Setting.client), this run's values
    duration: int
    streams: int
    tool: str
    protocol: str
    bandwidth: str | None
    omit: int | None
    interval: float | None
    window: str | None
    length: str | None
    mss: int | None
    zerocopy: bool
    tos: int | None
    connect_timeout: int | None
    client_timeout: float | None
    server_timeout: int
    server_extra_args: list[str]
    client_extra_args: list[str]
    latency: dict[str, Any] | None
    labels: dict[str, Any]
    barrier: bool
    external: bool
    external_wait: float | None
    external_servers: bool
    start_delay: float
    start_delay_auto: bool
    latency_idle: float
    pairs: list[PlannedPair]
    nic_counters: str
    nic_before: bool
    nic_after: bool
    nic_addresses: dict[str, list[str]]
    cpu_hosts: list[str]
    server_hosts: list[str]
    client_hosts: list[str]
    iperf_server: dict[str, Any]
    iperf_client: dict[str, Any]


@functools.cache
def _hints(kind: Any) -> dict[str, Any]:
    """The keys of a TypedDict and their types (read once)."""
    return typing.get_type_hints(kind)


class PlannedRunError(ValueError):
    """A value that is not a run of the plan; the message names every problem."""


def _problems(value: object, kind: Any, where: str) -> list[str]:
    """What keeps ``value`` from being of the type ``kind`` (a TypedDict, a list, a dict, a union, a plain type)."""
    if kind is Any:
        return []
    if typing.is_typeddict(kind):
        if not isinstance(value, Mapping):
            return [f"{where} is not a mapping"]
        hints = _hints(kind)
        found = [f"{where} has no {key}" for key in hints if key not in value]
        found += [f"{where} has an unknown key {key!r}" for key in value if key not in hints]
        for key, hint in hints.items():
            if key in value:
                found += _problems(value[key], hint, f"{where}.{key}")
        return found
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(kind)
        return (
            []
            if any(not _problems(value, option, where) for option in options)
            else [f"{where}: {value!r} is not {kind}"]
        )
    if origin is list:
        if not isinstance(value, list):
            return [f"{where} is not a list"]
        (item,) = typing.get_args(kind)
        return [problem for index, entry in enumerate(value) for problem in _problems(entry, item, f"{where}[{index}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where} is not a mapping"]
        _key, item = typing.get_args(kind)
        return [problem for key, entry in value.items() for problem in _problems(entry, item, f"{where}.{key}")]
    if kind is type(None):
        return [] if value is None else [f"{where}: {value!r} is not null"]
    if kind is float:  # an int is a float (JSON: 1.0 may arrive as 1)
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    return [] if ok else [f"{where}: {value!r} is not {kind.__name__}"]


def run_problems(value: object) -> list[str]:
    """Every way ``value`` is not a :class:`PlannedRun` (empty: it is one)."""
    return _problems(value, PlannedRun, "run")


def _is_planned_run(value: object) -> TypeGuard[PlannedRun]:
    return not run_problems(value)


def planned_run(value: object) -> PlannedRun:
    """``value``, checked to be a run of the plan; :class:`PlannedRunError` names every problem otherwise."""
    if _is_planned_run(value):
        return value
    problems = run_problems(value)
    raise PlannedRunError(
        f"not a run of the plan ({len(problems)} problem(s)): {'; '.join(problems[:10])}"
        + (f"; and {len(problems) - 10} more" if len(problems) > 10 else "")
        + " - hand over an item of the plan's runs (esxilab.iperf.paired_test_plan) as it is"
    )
