# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The limits, errors and value checks of the paired tests' settings (``build_plan`` reads every test with them).

Plain data in, plain data out; no Ansible import, no clock, no I/O.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import ipaddress
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.role_vars import closest, unknown_keys_text
from ansible_collections.esxilab.iperf.plugins.plugin_utils.latency.option import LatencyOptionError, read_latency
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.settings import PAIR_OPTIONS, SETTINGS
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.stability import (
    StabilityError,
    read_repeat,
)

__all__ = [
    "ADDRESS_VAR_HINT",
    "BUILTIN_DEFAULTS",
    "EXTERNAL_CLIENT",
    "EXTERNAL_KEYS",
    "EXTERNAL_SERVER",
    "IDENTITY_LABELS",
    "MAX_EXTERNAL_CLIENTS",
    "MAX_EXTERNAL_DEADLINE",
    "MAX_RUNS",
    "MAX_STREAMS",
    "PAIR_KEYS",
    "SERVER_TIMEOUT_MARGIN",
    "TEST_KEYS",
    "PairedTestError",
    "PlanErrors",
]

MAX_STREAMS = 128  # iperf3's limit for -P
MAX_EXTERNAL_CLIENTS = 64  # client tests one external pair may wait for
# external.deadline: at most a day - the server listens, and an ESXi firewall window stays open, that long
MAX_EXTERNAL_DEADLINE = 86400
# Most runs one play may plan (role variable paired_test_max_runs): Ansible needs seconds per run
# and templating a plan of 100000 runs alone takes minutes, so a typo in repeat fails at once.
MAX_RUNS = 1000
ADDRESS_VAR_HINT = "paired_test_address_var"


class PairedTestError(ValueError):
    """The input cannot be used; the message names the item, the cause and the fix."""


class PlanErrors(PairedTestError):
    """Several problems with the tests, one message each (every test and pair is checked, not only the first).

    ``problems`` are those of the plan that depend on the inventory, found in the tests that could be read
    (see :func:`build_plan`).
    """

    def __init__(self, messages: Sequence[str], problems: Sequence[str] = ()) -> None:
        self.messages = list(messages)
        self.problems = list(problems)
        super().__init__("\n".join(self.messages))


def _messages(exc: PairedTestError) -> list[str]:
    return list(exc.messages) if isinstance(exc, PlanErrors) else [str(exc)]


_PAIR_WHERE = re.compile(r"^test '(?:[^'\\]|\\.)*' pair (\d+)")


def _with_path(message: str, position: int) -> str:
    """``message`` led by the place of its test (and pair) in paired_test_tests, unless it names it already:
    ``paired_test_tests[0].pairs[1]: test 'fwd' pair 2: client is missing``."""
    if message.startswith("paired_test_tests"):
        return message
    path = f"paired_test_tests[{position - 1}]"
    pair = _PAIR_WHERE.match(message)
    if pair:
        path += f".pairs[{int(pair.group(1)) - 1}]"
    return f"{path}: {message}"


# --------------------------------------------------------------------------------------------
# Settings: every key a test may set, falling back to the role variable paired_test_<key>
# (declared in paired/settings.py)
# --------------------------------------------------------------------------------------------

BUILTIN_DEFAULTS: dict[str, Any] = {name: setting.default for name, setting in SETTINGS.items()}
TEST_KEYS = ("name", "pairs", *SETTINGS)
PAIR_KEYS = tuple(PAIR_OPTIONS)
# The labels that name a run and a pair: always set by the plan, never by a pair's labels.
IDENTITY_LABELS = ("test", "run", "pair", "streams", "direction", "swapped", "repetition")
# external: {count, deadline, from} - the clients of the pair are outside the inventory (see _read_external);
# external: {server: true} - its server is (see _read_external_server)
EXTERNAL_KEYS = ("count", "deadline", "from", "server")
# What a pair with external clients names as its client (sender) in records and reports.
EXTERNAL_CLIENT = "external"
# What a pair whose server is outside the inventory names as its server in records and reports.
EXTERNAL_SERVER = "external"
# How long a server may outlive its run before its guard kills it (beyond the test itself).
SERVER_TIMEOUT_MARGIN = 120


def _kind_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_INT_RE = re.compile(r"^[+-]?[0-9]+$")
_TRUE = {"true", "yes", "on", "1"}
# What iperf reads as a rate (-b) and as a size (-w, -l): a number with an optional unit suffix.
_UNIT_FORMS: dict[str, tuple[re.Pattern[str], str]] = {
    "bandwidth": (
        re.compile(r"^[0-9]+(?:\.[0-9]+)?[KMGTkmgt]?(?:/[0-9]+|pps)?$"),
        "a rate iperf reads: a number of bit/s with an optional K, M, G or T suffix (1000-based), for example "
        "100M or 1.5G, 0 for unlimited (iperf3 also takes a burst such as 100M/10, iperf2 a packet rate such "
        "as 1000pps)",
    ),
    "window": (
        re.compile(r"^[0-9]+(?:\.[0-9]+)?[KMGkmg]?$"),
        "a size iperf reads: a number of bytes with an optional K, M or G suffix, for example 416K or 4M",
    ),
    "length": (
        re.compile(r"^[0-9]+(?:\.[0-9]+)?[KMGkmg]?$"),
        "a size iperf reads: a number of bytes with an optional K, M or G suffix, for example 128K or 1460",
    ),
}
_FALSE = {"false", "no", "off", "0"}


def _coerce(kind: str, value: Any) -> Any:
    """Accept what Ansible's own type conversion accepts from strings (``-e duration=30``)."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if kind in ("int", "streams") and _INT_RE.match(text):
        return int(text)
    if kind == "float":
        if _INT_RE.match(text):
            return int(text)
        try:
            return float(text)
        except ValueError:
            return value
    if kind == "bool" and text.lower() in _TRUE | _FALSE:
        return text.lower() in _TRUE
    return value


def _check_setting(name: str, value: Any, where: str, path: str | None = None) -> Any:
    """Validate one setting value; return it normalized (streams as a tuple, floats as float). ``path``: the
    setting's full path (``paired_test_tests[0].repeat``, ``paired_test_repeat``) for the messages that give it."""
    spec = SETTINGS[name]
    if value is None or (spec.nullable and isinstance(value, str) and not value.strip()):
        if spec.nullable:
            return None
        raise PairedTestError(f"{where}: {name} must be set, got null")
    kind = spec.kind
    value = _coerce(kind, value)
    if kind == "streams":
        return _check_streams(value, where)
    if kind == "repeat":
        try:
            role_variable = path is not None and not path.startswith("paired_test_tests")
            return read_repeat(value, "the role variable" if role_variable else where, path or name)
        except StabilityError as exc:
            raise PairedTestError(str(exc)) from exc
    if kind == "latency":
        try:
            return read_latency(value, f"{where}: {name}")
        except LatencyOptionError as exc:
            raise PairedTestError(str(exc)) from exc
    if kind == "int" or kind == "float":
        ok = _is_int(value) or (kind == "float" and isinstance(value, float))
        if not ok or (isinstance(value, float) and not math.isfinite(value)):
            raise PairedTestError(f"{where}: {name} must be a number, got {_kind_name(value)} {value!r}")
        if spec.minimum is not None and value < spec.minimum:
            raise PairedTestError(f"{where}: {name} must be at least {spec.minimum:g}, got {value!r}")
        if spec.maximum is not None and value > spec.maximum:
            raise PairedTestError(f"{where}: {name} must be at most {spec.maximum:g}, got {value!r}")
        return float(value) if kind == "float" else value
    if kind == "bool":
        if not isinstance(value, bool):
            raise PairedTestError(f"{where}: {name} must be true or false, got {_kind_name(value)} {value!r}")
        return value
    if kind == "choice":
        if value not in spec.choices:
            raise PairedTestError(f"{where}: {name} must be one of {', '.join(spec.choices)}; got {value!r}")
        return value
    if kind == "str":
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise PairedTestError(f"{where}: {name} must be a string such as '100M', got {_kind_name(value)}")
        text = str(value).strip()
        if not text or any(c.isspace() for c in text) or text.startswith("-"):
            raise PairedTestError(f"{where}: {name}={value!r} is not a value iperf accepts (no spaces, no leading -)")
        form = _UNIT_FORMS.get(name)
        if form is not None and not form[0].match(text):
            raise PairedTestError(f"{where}: {name}={value!r} is not {form[1]}")
        return text
    if name == "labels":
        return check_labels(value, f"{where}: labels", allow_null=True)
    if kind == "dict":
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise PairedTestError(f"{where}: {name} must be a dictionary with string keys, got {_kind_name(value)}")
        return dict(value)
    if kind == "list_str":
        if isinstance(value, str | bytes) or not isinstance(value, Sequence):
            raise PairedTestError(f"{where}: {name} must be a list of strings, got {_kind_name(value)} {value!r}")
        if not all(isinstance(v, str) for v in value):
            raise PairedTestError(f"{where}: {name} must be a list of strings, got {list(value)!r}")
        return list(value)
    raise AssertionError(f"unknown setting kind {kind}")  # pragma: no cover


def _check_streams(value: Any, where: str) -> tuple[int, ...] | int:
    def one(item: Any) -> int:
        if not _is_int(item) or not 1 <= item <= MAX_STREAMS:
            raise PairedTestError(
                f"{where}: streams must be a whole number from 1 to {MAX_STREAMS}, or a list of them "
                f"to sweep (for example [1, 2, 4, 8]); got {item!r}"
            )
        result: int = item
        return result

    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        return one(value)
    if not value:
        raise PairedTestError(f"{where}: streams is an empty list; give at least one stream count")
    values = tuple(one(item) for item in value)
    duplicates = sorted({v for v in values if values.count(v) > 1})
    if duplicates:
        raise PairedTestError(f"{where}: streams lists {duplicates} more than once; use repeat to repeat runs")
    return values


def _check_host(value: Any, where: str, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise PairedTestError(f"{where}: {key} must be an inventory host name, got {_kind_name(value)} {value!r}")
    return value.strip()


def _check_address(value: Any, where: str, key: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise PairedTestError(f"{where}: {key} must be an IP address (or host name), got {_kind_name(value)} {value!r}")
    text = value.strip()
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        address = None
    if address is not None:
        _check_unicast(address, where, key)
        return address.compressed
    if text.startswith("-") or any(c.isspace() for c in text) or "/" in text:
        raise PairedTestError(f"{where}: {key}={value!r} is not an IP address or host name (no prefix length)")
    return text


def _check_unicast(address: ipaddress.IPv4Address | ipaddress.IPv6Address, where: str, key: str) -> None:
    """An end of a test is one host: not the unspecified address (0.0.0.0 or ::, which a client takes for itself),
    not a multicast or the broadcast address."""
    kind = (
        "the unspecified address (a client connecting to it reaches its own host)"
        if address.is_unspecified
        else "a multicast address"
        if address.is_multicast
        else "the broadcast address"
        if address == ipaddress.IPv4Address("255.255.255.255")
        else None
    )
    if kind is not None:
        raise PairedTestError(
            f"{where}: {key}={address.compressed} is {kind}, not the address of one host; give the unicast address "
            "of the host's test interface"
        )


def _check_peer_address(value: Any, where: str, key: str) -> str | None:
    """An address a server log names its peer by (``external.from``): an IP address, never a host name (the log
    holds the address the connection came from, so a name would never match and no client would be counted)."""
    if value is None:
        return None
    try:
        address = ipaddress.ip_address(value.strip() if isinstance(value, str) else "")
    except ValueError:
        raise PairedTestError(
            f"{where}: {key}={value!r} is not an IP address: the server's log names each client by the address its "
            f"connection came from, so only an address can match (a host name never would, and no client test "
            f"would be counted) - give the external host's IP address, for example {key}: 198.18.1.51, or leave "
            f"{key} out to count a test from any address"
        ) from None
    _check_unicast(address, where, key)
    return address.compressed


def _plain_kind(value: Any) -> str:
    """The YAML kind of a value (Ansible hands over its own dict and list subclasses)."""
    if isinstance(value, Mapping):
        return "dict"
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return "list"
    return _kind_name(value)


def check_labels(value: Any, where: str, *, allow_null: bool = False) -> dict[str, Any]:
    """``labels`` (of a pair, a test or the role): a dictionary of string keys and scalar values (string, number,
    boolean; null too with ``allow_null``: a test's null unsets the role's label); never a label the plan sets itself,
    no control character in a name or a value."""
    fix = "give a dictionary of scalar values, for example labels: {os: centos, nic: vmxnet3}"
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise PairedTestError(f"{where} must be a dictionary, got {_plain_kind(value)} {value!r}; {fix}")
    labels: dict[str, Any] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key.strip() or has_control(key):
            raise PairedTestError(
                f"{where}: a label name must be a non-empty string without control characters, got {key!r}; {fix}"
            )
        if key in IDENTITY_LABELS:
            raise PairedTestError(
                f"{where}: {key} is one of the labels the plan sets for every run and pair "
                f"({', '.join(IDENTITY_LABELS)}); choose another label name"
            )
        scalar = (allow_null and item is None) or (
            isinstance(item, str | int | float) and not (isinstance(item, float) and not math.isfinite(item))
        )
        if not scalar:
            raise PairedTestError(
                f"{where}.{key} must be a string, number or boolean, got {_plain_kind(item)} {item!r}; {fix}"
            )
        if isinstance(item, str) and has_control(item):
            raise PairedTestError(
                f"{where}.{key} must not contain control characters (line breaks, tabs, escapes), got {item!r}; "
                "give one line of plain text"
            )
        labels[key] = item
    return labels


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control or format character (a line break, a tab, an escape, a bidi override):
    names and labels end up in one-line messages, CSV cells and Markdown tables."""
    return any(unicodedata.category(char) in ("Cc", "Cf") for char in text)


def _unknown_keys(item: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    unknown = sorted(str(k) for k in item if k not in allowed)
    if unknown:
        known = "" if all(closest(key, allowed) for key in unknown) else f"; known keys: {', '.join(allowed)}"
        raise PairedTestError(f"{where}: unknown key(s) {unknown_keys_text(unknown, allowed)}{known}")
