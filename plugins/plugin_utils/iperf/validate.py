# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Records validated once, where they enter from Ansible: a normalized result, a run record with its pairs.

What an action registered or a role published comes back to the controller's Python as plain data. The
readers (``paired/record.py``, the report) take it through here, once:

* ``result_from()`` -- a normalized result (``IperfResult``; ``iperf_run`` / ``iperf_parse`` / ``iperf_facts``);
* ``run_record_from()`` -- a run record (``RunRecord`` with its ``PairRecord`` items; ``paired_test_results``).

Each is first **upgraded** from the shape its ``schema_version`` names to the current one, step by step (a table
of one step per version, as flent's ``resultset.py`` upgrades an older data file on load), then **checked**
against its type in ``records.py`` - every required key present, every declared key of its declared type, nested
records included (extra keys are allowed, as the result schema allows them). A bad record raises
``RecordError`` naming the field by its path (``runs[2].pairs[0].port``), what it holds, and the fix; after the
check a reader may index every required key without ``.get()``.

The versions:

* results: ``schema_version`` 1 is ``docs/schema/iperf-result.schema.json``. A result without ``schema_version``
  (version 0: made by hand or by another tool, as the report has always accepted: ``bits_per_second`` with ``tool``
  or ``error``) gets the keys of version 1 it lacks with the value that means "not in the output" (``null``, an
  empty list, ``false``, 0 streams seen); ``tool``, ``format`` and ``protocol`` have no such value and must be
  there unless the result has no ``schema_version`` (``UNKNOWABLE_RESULT_KEYS``: read with ``.get()``). A version-1
  result recorded before an optional schema property existed (``rtt``) gets it as ``null``.
* run records: ``schema_version`` 1 is the record ``paired.record.build_record`` makes. A record without
  ``schema_version`` (version 0: written before the record carried a version, or by hand: ``pairs`` and
  ``total_bits_per_second``) gets the keys it lacks with the values the report has always read for them (a run's
  number from its place, ``direction: forward``, a pair ``ok`` when it has a result, ``null`` for a host, a figure
  or a time that was not recorded).

Plain data in, plain data out; no Ansible import, no I/O. Private module: not part of the collection's public API.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any, Literal, Union, cast, overload

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf import records
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import (
    DEFAULT_TEST,
    RECORD_VERSION,
    RESULT_VERSION,
    SCHEMA_OPTIONAL_KEYS,
    IperfResult,
    PairRecord,
    RunRecord,
)

__all__ = ["RecordError", "check", "result_from", "run_record_from"]

_NOT_FOUND = object()
_HINTS: dict[type, dict[str, Any]] = {}
Step = Callable[[MutableMapping[str, Any], str], None]


class RecordError(ValueError):
    """A record that is not of its type: the message names the field by its path, what it holds and the fix."""


def kind_of(value: object) -> str:
    """The JSON name of a value's kind, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a dictionary"
    if isinstance(value, Sequence):
        return "a list"
    return type(value).__name__


def _hints(kind: type) -> dict[str, Any]:
    if kind not in _HINTS:
        _HINTS[kind] = typing.get_type_hints(kind, vars(records))
    return _HINTS[kind]


def _describe(kind: Any) -> str:
    origin = typing.get_origin(kind)
    if kind is type(None):
        return "null"
    if origin in (Union, types.UnionType):
        return " or ".join(_describe(arg) for arg in typing.get_args(kind))
    if origin is Literal:
        return "one of " + ", ".join(repr(arg) for arg in typing.get_args(kind))
    if origin is list:
        return "a list"
    if origin is dict or typing.is_typeddict(kind):
        return "a dictionary"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}.get(kind, "any value")


def _fits(value: object, kind: Any) -> bool:
    """Whether ``value`` is of ``kind`` at its top level (the nested values are checked by ``check``)."""
    origin = typing.get_origin(kind)
    if kind is Any or kind is object:
        return True
    if kind is type(None):
        return value is None
    if origin in (Union, types.UnionType):
        return any(_fits(value, arg) for arg in typing.get_args(kind))
    if origin is Literal:
        return any(isinstance(value, type(arg)) and value == arg for arg in typing.get_args(kind))
    if origin is list:
        return isinstance(value, Sequence) and not isinstance(value, str | bytes)
    if origin is dict or typing.is_typeddict(kind):
        return isinstance(value, Mapping)
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind is str:
        return isinstance(value, str)
    return True


def check(value: object, kind: Any, where: str, fix: str, *, may_lack: frozenset[str] = frozenset()) -> None:
    """Raise ``RecordError`` unless ``value`` is of ``kind`` (a type of ``records.py``), nested values included.

    ``may_lack``: required keys of the top-level record that may be missing (see ``UNKNOWABLE_RESULT_KEYS``).
    """
    if not _fits(value, kind):
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        raise RecordError(f"{where}: must be {_describe(kind)}, got {kind_of(value)} {shown}; {fix}")
    origin = typing.get_origin(kind)
    if origin in (Union, types.UnionType):
        check(value, next(arg for arg in typing.get_args(kind) if _fits(value, arg)), where, fix)
    elif origin is list:
        (item_kind,) = typing.get_args(kind)
        for index, item in enumerate(cast("Sequence[object]", value)):
            check(item, item_kind, f"{where}[{index}]", fix)
    elif origin is dict:
        item_kind = typing.get_args(kind)[1]
        for key, item in cast("Mapping[object, object]", value).items():
            check(item, item_kind, f"{where}.{key}", fix)
    elif typing.is_typeddict(kind):
        mapping = cast("Mapping[str, object]", value)
        for key in sorted(kind.__required_keys__ - may_lack):
            if key not in mapping:
                raise RecordError(f"{where}.{key}: missing ({_describe(_hints(kind)[key])}); {fix}")
        for key, key_kind in _hints(kind).items():
            if (item := mapping.get(key, _NOT_FOUND)) is not _NOT_FOUND:
                check(item, key_kind, f"{where}.{key}", fix)


def _version(item: Mapping[str, Any], current: int, where: str, fix: str) -> int:
    version = item.get("schema_version", 0)
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version <= current:
        raise RecordError(
            f"{where}.schema_version: {version!r} is not a version this collection reads (0 to {current}); "
            f"write it with this collection's version or a newer one reading it; {fix}"
        )
    return version


def _upgrade(item: MutableMapping[str, Any], steps: Mapping[int, Step], current: int, where: str, fix: str) -> None:
    """Upgrade ``item`` in place from its ``schema_version`` to ``current``, one step per version."""
    for version in range(_version(item, current, where, fix), current):
        steps[version](item, where)
    item["schema_version"] = current


def _fill_unknown(item: MutableMapping[str, Any], kind: Any) -> None:
    """The missing required keys of ``kind`` that have a value meaning "not recorded": null, [] or {}."""
    for key in kind.__required_keys__:
        if key not in item:
            key_kind = _hints(kind)[key]
            if _fits(None, key_kind):
                item[key] = None
            elif typing.get_origin(key_kind) is list:
                item[key] = []
            elif typing.get_origin(key_kind) is dict:
                item[key] = {}


# -- results ------------------------------------------------------------------------------------------------


# What a result without schema_version may lack: no value of these means "not in the output", so the upgrade cannot
# add them; a reader of a result reads these three with .get().
UNKNOWABLE_RESULT_KEYS = frozenset({"tool", "format", "protocol"})
_UNVERSIONED_MAY_LACK = UNKNOWABLE_RESULT_KEYS | {"schema_version"}


def _result_0_to_1(item: MutableMapping[str, Any], where: str) -> None:
    """A result without ``schema_version``: what its output did not carry is "not in the output"."""
    for key in ("reverse", "bidir", "complete"):
        item.setdefault(key, False)
    item.setdefault("streams", 0)
    _fill_unknown(item, IperfResult)


RESULT_UPGRADES: dict[int, Step] = {0: _result_0_to_1}

_RESULT_FIX = (
    "a normalized result is what esxilab.iperf.iperf_parse, iperf_facts or iperf_run return (schema_version 1)"
)


@overload
def result_from(value: Mapping[str, Any], where: str = ..., fix: str = ...) -> IperfResult: ...


@overload
def result_from(value: object, where: str = ..., fix: str = ...) -> IperfResult | None: ...


def result_from(value: object, where: str = "result", fix: str = _RESULT_FIX) -> IperfResult | None:
    """A normalized result that came back through Ansible, upgraded and checked: ``None`` stays ``None``.

    The one place where plain data becomes an ``IperfResult`` (a copy; the input is not changed).
    """
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise RecordError(f"{where}: must be a dictionary (a normalized result) or null, got {kind_of(value)}; {fix}")
    item = dict(value)
    unversioned = "schema_version" not in item
    _upgrade(item, RESULT_UPGRADES, RESULT_VERSION, where, fix)
    for key in SCHEMA_OPTIONAL_KEYS:  # recorded before the optional property existed: not printed
        item.setdefault(key, None)
    if unversioned and not item.keys() >= UNKNOWABLE_RESULT_KEYS:
        del item["schema_version"]  # not a version-1 result yet: read as version 0 wherever it goes next
    check(item, IperfResult, where, fix, may_lack=_UNVERSIONED_MAY_LACK if unversioned else frozenset())
    return cast("IperfResult", item)


# -- run records --------------------------------------------------------------------------------------------


def _record_0_to_1(item: MutableMapping[str, Any], where: str) -> None:
    """A run record without ``schema_version``: the keys it lacks, as the report has always read them."""
    item.setdefault("direction", "forward")
    item.setdefault("test", DEFAULT_TEST)
    for key in ("streams", "repetition"):
        item.setdefault(key, None)
    for key in ("sweep", "swapped", "combine_swapped"):
        item.setdefault(key, False)
    item.setdefault("complete", item.get("total_bits_per_second") is not None)
    pairs = item.get("pairs")
    if isinstance(pairs, Sequence) and not isinstance(pairs, str):
        upgraded: list[object] = []
        for position, pair in enumerate(pairs):
            if isinstance(pair, Mapping):
                pair = dict(pair)
                pair.setdefault("pair", position + 1)
                pair.setdefault("ok", pair.get("result") is not None)
                _fill_unknown(pair, PairRecord)
            upgraded.append(pair)
        item["pairs"] = upgraded
        item.setdefault("ok", all(isinstance(p, Mapping) and p.get("ok") for p in upgraded))
        item.setdefault("failed_pairs", sum(not (isinstance(p, Mapping) and p.get("ok")) for p in upgraded))
    _fill_unknown(item, RunRecord)


def _record_1_to_2(item: MutableMapping[str, Any], where: str) -> None:
    """A version-1 run record: made before the host CPU was read around the runs (``cpu``: not read)."""
    item.setdefault("cpu", None)


RECORD_UPGRADES: dict[int, Step] = {0: _record_0_to_1, 1: _record_1_to_2}

_RECORD_FIX = "pass paired_test_results as the role esxilab.iperf.paired_test published them"


def run_record_from(value: object, where: str = "record", fix: str = _RECORD_FIX, *, position: int = 0) -> RunRecord:
    """A run record that came back through Ansible, upgraded and checked, with each pair's result.

    ``position`` (0-based) is the record's place in its list: a record without a ``run`` number is that run.
    A copy; the input is not changed.
    """
    if not isinstance(value, Mapping):
        raise RecordError(f"{where}: must be a dictionary (a run record), got {kind_of(value)}; {fix}")
    item = dict(value)
    if "run" not in item and _version(item, RECORD_VERSION, where, fix) == 0:
        item["run"] = position + 1
    _upgrade(item, RECORD_UPGRADES, RECORD_VERSION, where, fix)
    check({**item, "pairs": _without_results(item.get("pairs"))}, RunRecord, where, fix)
    item["pairs"] = [
        {**pair, "result": result_from(pair["result"], f"{where}.pairs[{index}].result", fix)}
        for index, pair in enumerate(item["pairs"])
    ]
    return cast("RunRecord", item)


def _without_results(pairs: object) -> object:
    """The pairs with no result, for the record's check: each result is checked on its own (``result_from``)."""
    if isinstance(pairs, Sequence) and not isinstance(pairs, str):
        return [{**pair, "result": None} if isinstance(pair, Mapping) else pair for pair in pairs]
    return pairs
