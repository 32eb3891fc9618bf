# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Backend of the ``esxilab.iperf.paired_test`` role: plan and record (the runs are summarized elsewhere).

Plain data in, plain data out; no Ansible import, no clock, no I/O. The role calls these
through the filters ``paired_test_plan`` and ``paired_test_record``. Summaries, knees, CSV and
the report files come from the collection's one report builder, ``report/`` (the role
writes its report through the ``esxilab.iperf.report`` role).

* ``build_plan()`` expands the tests into the ordered list of runs (tests x streams x
  direction x swap x repeat), gives each pair its port (``port_base`` + pair index unless the
  pair sets ``port``) and lists the problems the role's preflight asserts on (unknown host,
  host outside the play, missing address, duplicate address/port, a host that would have to
  run two clients at once, too few forks).
* ``build_record()`` turns what every host registered during one run (server starts,
  clients, server stops, rescue) into the run record: per pair the normalized result and
  ``started_at``, and ``total_bits_per_second`` -- the sum of the pairs' headline rates, or
  ``None`` as soon as one pair has no usable figure (never a partial sum).

One concern, one file: the paired_test plan and run record (the summary and the files are the
report builder's, ``plugin_utils/report/``).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import ipaddress
import math
import random
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils._line_rate import run_line_rate
from ansible_collections.esxilab.iperf.plugins.plugin_utils._paired_settings import PAIR_OPTIONS, SETTINGS
from ansible_collections.esxilab.iperf.plugins.plugin_utils._paired_stability import (
    RepeatSpec,
    StabilityError,
    assess,
    read_repeat,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils._role_vars import closest, unknown_keys_text
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import PairRecord, RunRecord, result_from
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.units import finite_float

__all__ = [
    "BUILTIN_DEFAULTS",
    "MAX_RUNS",
    "PAIR_KEYS",
    "SETTINGS",
    "PairedTestError",
    "build_plan",
    "build_record",
    "point_key",
    "run_order",
    "run_seconds",
    "with_line_rates",
]

MAX_STREAMS = 128  # iperf3's limit for -P
MAX_EXTERNAL_CLIENTS = 64  # client tests one external pair may wait for
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
# (declared in _paired_settings.py)
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
# Automatic start delay of a run with a barrier: Ansible hands the client task to the hosts one
# after the other, so the last client reaches the barrier later the more clients there are
# (measured on the 2-CPU lab controller: 0.7-1.8 s after the barrier was set for 8 clients,
# 3.3 s under load). The first run with a number of clients waits START_DELAY_BASE +
# START_DELAY_PER_CLIENT per client; later runs with as many clients wait what the last
# DISPATCH_WINDOW of them measured (dispatch_time, see build_record) times DISPATCH_FACTOR plus
# DISPATCH_MARGIN (see auto_start_delay): shorter or longer, as measured.
START_DELAY_BASE = 1.0
START_DELAY_PER_CLIENT = 0.4
DISPATCH_WINDOW = 3
DISPATCH_FACTOR = 1.5
DISPATCH_MARGIN = 0.1
# The first run with a number of clients, when the preflight measured how long Ansible took to hand the probe to
# every host of the tests (``probe_dispatch``): FIRST_RUN_FACTOR x that + FIRST_RUN_MARGIN, at least
# FIRST_RUN_MINIMUM, and never more than the planned START_DELAY_BASE + START_DELAY_PER_CLIENT per client. The
# clients' task costs more to hand over than the probe (measured with 16 pairs on the 2-core lab: 1.86 s against
# 0.69 s for the probe of 32 hosts; 1.5 x the probe made the clients 0.53 s late), hence the factor.
FIRST_RUN_FACTOR = 4.0
FIRST_RUN_MARGIN = 0.5
FIRST_RUN_MINIMUM = 1.0


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


def _check_setting(name: str, value: Any, where: str) -> Any:
    """Validate one setting value; return it normalized (streams as a tuple, floats as float)."""
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
            return read_repeat(value, where)
        except StabilityError as exc:
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
        return ipaddress.ip_address(text).compressed
    except ValueError:
        pass
    if text.startswith("-") or any(c.isspace() for c in text) or "/" in text:
        raise PairedTestError(f"{where}: {key}={value!r} is not an IP address or host name (no prefix length)")
    return text


def _plain_kind(value: Any) -> str:
    """The YAML kind of a value (Ansible hands over its own dict and list subclasses)."""
    if isinstance(value, Mapping):
        return "dict"
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return "list"
    return _kind_name(value)


def _check_pair_labels(value: Any, where: str) -> dict[str, Any]:
    """A pair's ``labels``: a dictionary of string keys and scalar values (string, number, boolean)."""
    fix = "give a dictionary of scalar values, for example labels: {os: centos, nic: vmxnet3}"
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise PairedTestError(f"{where} must be a dictionary, got {_plain_kind(value)} {value!r}; {fix}")
    labels: dict[str, Any] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key.strip():
            raise PairedTestError(f"{where}: a label name must be a non-empty string, got {key!r}; {fix}")
        if key in IDENTITY_LABELS:
            raise PairedTestError(
                f"{where}: {key} is one of the labels the plan sets for every run and pair "
                f"({', '.join(IDENTITY_LABELS)}); choose another label name"
            )
        scalar = isinstance(item, str | int | float) and not (isinstance(item, float) and not math.isfinite(item))
        if not scalar:
            raise PairedTestError(
                f"{where}.{key} must be a string, number or boolean, got {_plain_kind(item)} {item!r}; {fix}"
            )
        labels[key] = item
    return labels


def _unknown_keys(item: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    unknown = sorted(str(k) for k in item if k not in allowed)
    if unknown:
        known = "" if all(closest(key, allowed) for key in unknown) else f"; known keys: {', '.join(allowed)}"
        raise PairedTestError(f"{where}: unknown key(s) {unknown_keys_text(unknown, allowed)}{known}")


# --------------------------------------------------------------------------------------------
# Plan
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Pair:
    index: int  # 1-based
    server: str | None  # None: the server is outside the inventory (external_server)
    client: str | None  # None: the clients are outside the inventory (external)
    address: str | None
    client_address: str | None
    port: int | None
    labels: dict[str, Any]
    external: dict[str, Any] | None = None  # {count, deadline, from}
    external_server: bool = False  # external: {server: true}


def _read_external(value: Any, here: str) -> dict[str, Any]:
    """A pair's ``external``: ``{count, deadline, from}`` - clients outside the inventory (an external peer)."""
    where = f"{here}: external"
    if not isinstance(value, Mapping):
        raise PairedTestError(
            f"{where} must be a dictionary such as {{count: 1, deadline: 300}} (how many clients outside the inventory "
            f"connect to the server, and how many seconds to wait for them), got {_kind_name(value)} {value!r}"
        )
    _unknown_keys(value, EXTERNAL_KEYS, where)
    count = _coerce("int", value.get("count", 1))
    if not _is_int(count) or not 1 <= count <= MAX_EXTERNAL_CLIENTS:
        raise PairedTestError(
            f"{where}.count must be a whole number from 1 to {MAX_EXTERNAL_CLIENTS} (the client tests to wait for), "
            f"got {count!r}"
        )
    if "deadline" not in value:
        raise PairedTestError(
            f"{where}.deadline is missing: the seconds the server waits for the external client(s) to finish, counted "
            "from when it listens - give the person at the other end time to start, for example deadline: 300"
        )
    deadline = _coerce("float", value["deadline"])
    if not (_is_int(deadline) or isinstance(deadline, float)) or not math.isfinite(deadline) or deadline <= 0:
        raise PairedTestError(f"{where}.deadline must be a number of seconds above 0, got {value['deadline']!r}")
    return {
        "count": count,
        "deadline": float(deadline),
        "from": _check_address(value.get("from"), here, "external.from"),
    }


def _read_external_server(value: Any, item: Mapping[str, Any], here: str, path: str) -> bool:
    """Whether a pair's ``external`` is ``{server: true}`` - its server is outside the inventory - after checking the
    pair fits that form: no ``server``, a ``client`` and an ``address``, no client-side keys of ``external``.
    ``path`` is the pair's place in paired_test_tests (``paired_test_tests[0].pairs[1]``), ``here`` its name."""
    if not isinstance(value, Mapping) or "server" not in value:
        return False
    flag = _coerce("bool", value["server"])
    if not isinstance(flag, bool):
        raise PairedTestError(
            f"{path}.external.server ({here}) must be true or false, got {_kind_name(flag)} {value['server']!r}: true "
            "- the pair's server is outside the inventory"
        )
    if not flag:
        return False
    _unknown_keys(value, EXTERNAL_KEYS, f"{path}.external ({here})")
    both = [key for key in ("count", "deadline", "from") if key in value]
    if both:
        raise PairedTestError(
            f"{path}.external ({here}) has server: true (the server is outside the inventory) and {', '.join(both)} "
            "(for clients outside it): a pair with both ends outside the inventory has nothing to run - give "
            "external: {server: true} with an inventory client, or external: {count, deadline} with an inventory "
            "server"
        )
    if item.get("server") is not None:
        raise PairedTestError(
            f"{path}.server ({here}) is set, but external.server is true (the server is outside the inventory): a "
            "pair names either a server host of the inventory (server) or a server outside it (external: {server: "
            "true} with address and port) - remove one"
        )
    if item.get("client") is None:
        raise PairedTestError(
            f"{path}.client ({here}) is missing: the server is outside the inventory (external.server: true), so the "
            "client must be an inventory host that runs iperf - give client: <inventory host>"
        )
    if item.get("address") is None:
        raise PairedTestError(
            f"{path}.address ({here}) is missing: the server is outside the inventory (external.server: true), so "
            "its address cannot come from a host variable - give address: <the address the external server listens "
            "on> (and port: when it is not port_base + the pair's index)"
        )
    return True


def _read_pairs(raw: Any, where: str, position: int) -> list[_Pair]:
    """The pairs of the test at ``position`` (1-based) of paired_test_tests."""
    if isinstance(raw, str | bytes | Mapping) or not isinstance(raw, Sequence) or not raw:
        raise PairedTestError(
            f"{where}: pairs must be a non-empty list of {{server, address, client}} dictionaries, got {raw!r}"
        )
    pairs = []
    errors: list[str] = []
    for index, item in enumerate(raw, start=1):
        try:
            pairs.append(_read_pair(item, index, where, position))
        except PairedTestError as exc:
            errors.extend(_messages(exc))
    if errors:
        raise PlanErrors(errors)
    return pairs


def _read_pair(item: Any, index: int, where: str, position: int) -> _Pair:
    """Pair ``index`` (1-based) of the test at ``position`` (1-based)."""
    here = f"{where} pair {index}"
    if not isinstance(item, Mapping):
        raise PairedTestError(f"{here}: must be a dictionary with server, address and client, got {item!r}")
    _unknown_keys(item, PAIR_KEYS, here)
    path = f"paired_test_tests[{position - 1}].pairs[{index - 1}]"
    external = item.get("external")
    outside = _read_external_server(external, item, here, path)
    if outside:
        external = None
    elif "server" not in item:
        raise PairedTestError(
            f"{path}.server ({here}) is missing (an inventory host name); for a server outside the inventory "
            "(iperf3.exe -s on a Windows box, an appliance) give external: {server: true} with its address and "
            "port instead"
        )
    if external is None and "client" not in item:
        raise PairedTestError(
            f"{here}: client is missing (an inventory host name); for clients outside the inventory (a Windows "
            "box, an appliance) give external: {count, deadline} instead"
        )
    if external is not None and item.get("client") is not None:
        raise PairedTestError(
            f"{here}: client and external are both set; a pair has either a client in the inventory (client) or "
            "clients outside it (external) - remove one"
        )
    if external is not None and item.get("client_address") is not None:
        raise PairedTestError(
            f"{here}: client_address is for a client in the inventory; the address an external client comes from "
            "is external.from"
        )
    port = _coerce("int", item.get("port"))
    if port is not None and (not _is_int(port) or not 1 <= port <= 65535):
        raise PairedTestError(f"{here}: port must be a number from 1 to 65535, got {port!r}")
    return _Pair(
        index=index,
        server=None if outside else _check_host(item["server"], here, "server"),
        client=None if external is not None else _check_host(item["client"], here, "client"),
        address=_check_address(item.get("address"), here, "address"),
        client_address=_check_address(item.get("client_address"), here, "client_address"),
        port=port,
        labels=_check_pair_labels(item.get("labels"), f"{path}.labels ({here})"),
        external=None if external is None else _read_external(external, here),
        external_server=outside,
    )


def _read_test(
    test: Mapping[str, Any], defaults: Mapping[str, Any], where: str, position: int
) -> tuple[list[_Pair], dict[str, Any]]:
    """The pairs and settings of a test; every problem found in its keys, pairs and settings (``PlanErrors``)."""
    errors: list[str] = []
    pairs: list[_Pair] = []
    settings: dict[str, Any] = {}
    try:
        _unknown_keys(test, TEST_KEYS, where)
    except PairedTestError as exc:
        errors.append(str(exc))
    if "pairs" not in test:
        errors.append(f"{where}: pairs is missing (a list of {{server, address, client}})")
    else:
        try:
            pairs = _read_pairs(test["pairs"], where, position)
        except PairedTestError as exc:
            errors.extend(_messages(exc))
    try:
        settings = _resolve_settings(test, defaults, where)
    except PairedTestError as exc:
        errors.extend(_messages(exc))
    if not errors:
        try:
            _check_external_test(pairs, settings, where, [name for name in SETTINGS if name in test])
        except PairedTestError as exc:
            errors.extend(_messages(exc))
    if errors:
        raise PlanErrors(errors)
    return pairs, settings


def _resolve_settings(test: Mapping[str, Any], defaults: Mapping[str, Any], where: str) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    errors: list[str] = []
    for name in SETTINGS:
        try:
            if name in test:
                settings[name] = _check_setting(name, test[name], where)
            elif name in defaults:
                settings[name] = _check_setting(name, defaults[name], f"role variable paired_test_{name}")
            else:
                settings[name] = _check_setting(name, BUILTIN_DEFAULTS[name], where)
        except PairedTestError as exc:
            errors.append(str(exc))
    if errors:
        raise PlanErrors(errors)
    bandwidth = settings["bandwidth"]
    if bandwidth is not None:
        if settings["tool"] == "iperf3" and bandwidth.endswith("pps"):
            raise PairedTestError(
                f"{where}: bandwidth={bandwidth!r} is a packet rate, which only iperf2 reads; give iperf3 a rate "
                "in bit/s such as 100M, or set tool: iperf2"
            )
        if settings["tool"] == "iperf2" and "/" in bandwidth:
            raise PairedTestError(
                f"{where}: bandwidth={bandwidth!r} has a burst (/n), which only iperf3 reads; give iperf2 a rate "
                "such as 100M, or set tool: iperf3"
            )
    return settings


# What a test sets for the servers this role starts: meaningless when every server is outside the inventory.
SERVER_ONLY_SETTINGS = ("server_extra_args", "server_timeout", "server_bind")


def _check_external_test(
    pairs: Sequence[_Pair], settings: Mapping[str, Any], where: str, given: Collection[str] = ()
) -> None:
    """A test with external peers. Servers outside the inventory: no swapped roles, no settings of a server this
    role would start (``given``: the settings the test itself sets). External clients: every pair external, forward
    only, one stream count, no swapped roles, and a server guard that outlives the wait."""
    outside = [p.index for p in pairs if p.external_server]
    unused = [name for name in SERVER_ONLY_SETTINGS if name in given]
    if outside and len(outside) == len(pairs) and unused:
        raise PairedTestError(
            f"{where}: {', '.join(unused)} set, but every pair of the test has its server outside the inventory, so "
            "this role starts no server to give it to; remove it from the test (ask whoever runs the outside server "
            "for the same on their command line - the play prints the command)"
        )
    if outside and settings["swap_roles"]:
        raise PairedTestError(
            f"{where}: swap_roles=True cannot be used with a server outside the inventory (pair(s) {_join(outside)}): "
            "the swapped run would need a server on the client host and a client on the external host, which nothing "
            "here runs; leave swap_roles false (direction: both measures the other direction with the client's -R), "
            "or put those pairs in a test of their own"
        )
    external = [p for p in pairs if p.external is not None]
    if not external:
        return
    if outside:
        raise PairedTestError(
            f"{where}: pair(s) {_join(outside)} have their server outside the inventory (an inventory client that "
            f"starts with the others) and pair(s) {_join([p.index for p in external])} external clients (which come "
            "when they come); put the external-client pairs in a test of their own"
        )
    if len(external) != len(pairs):
        inside = ", ".join(str(p.index) for p in pairs if p.external is None)
        raise PairedTestError(
            f"{where}: pair(s) {inside} have a client in the inventory and the others external clients; the runs of a "
            "test start their inventory clients together, while external clients come when they come - put the "
            "external pairs in a test of their own"
        )
    fixes = {
        "direction": (
            settings["direction"] != "forward",
            "the external client chooses the direction (-R on its command line); leave direction at forward",
        ),
        "swap_roles": (
            bool(settings["swap_roles"]),
            "an external client cannot run a server here; leave swap_roles false",
        ),
        "streams": (
            isinstance(settings["streams"], tuple),
            "the external client chooses its streams (-P); give one number, the -P it is asked to use",
        ),
    }
    for name, (wrong, fix) in fixes.items():
        if wrong:
            shown = _shown(settings[name])
            raise PairedTestError(f"{where}: {name}={shown} cannot be used with external clients: {fix}")
    waits: dict[str, float] = {}
    for p in external:
        if p.external is not None and p.server is not None:  # a host waits for its external pairs one after the other
            waits[p.server] = waits.get(p.server, 0.0) + p.external["deadline"]
    longest = max(waits.values())
    timeout = settings["server_timeout"]
    if timeout is not None and timeout <= longest:
        raise PairedTestError(
            f"{where}: server_timeout={timeout} is not longer than external.deadline={longest:g} (a host's deadlines "
            "added up): the guard would end the server while the clients may still come; raise server_timeout or "
            "leave it unset (the wait + 120 s)"
        )


def _shown(value: Any) -> str:
    return repr(list(value)) if isinstance(value, tuple) else repr(value)


def _directions(direction: str) -> tuple[str, ...]:
    return ("forward", "reverse") if direction == "both" else (direction,)


def build_plan(
    tests: Any,
    defaults: Mapping[str, Any] | None = None,
    *,
    addresses: Mapping[str, Any] | None = None,
    address_var: str | None = None,
    inventory_hosts: Sequence[str] | None = None,
    play_hosts: Sequence[str] | None = None,
    forks: int | None = None,
    max_runs: int = MAX_RUNS,
    random_seed: int = 0,
) -> dict[str, Any]:
    """Expand ``tests`` into runs and list the problems to assert on before running anything.

    ``defaults`` maps setting names (without the ``paired_test_`` prefix) to the role's values;
    ``addresses`` maps host names to their test address (from the host variable named by
    ``address_var``), used when a pair gives no ``address`` / ``client_address``. The host
    lists and ``forks`` are only used for the problem checks (``None``: not checked).
    ``random_seed`` is the seed of a ``shuffled`` test without ``shuffle_seed`` (the caller draws it;
    the plan records it in the test and its runs).

    Raises ``PairedTestError`` for input of the wrong shape (unknown keys, wrong types,
    duplicate test names) and for a plan of more than ``max_runs`` runs (counted before any
    run is made, so the message gives the whole count at once); everything that depends on
    the inventory is a *problem* instead.
    """
    max_runs = _coerce("int", max_runs)  # a role variable given with -e is a string
    if isinstance(max_runs, bool) or not isinstance(max_runs, int) or max_runs < 1:
        raise PairedTestError(f"paired_test_max_runs must be a whole number of at least 1, got {max_runs!r}")
    if isinstance(tests, str | bytes | Mapping) or not isinstance(tests, Sequence):
        raise PairedTestError(f"paired_test_tests must be a list of tests, got {_kind_name(tests)}")
    if not tests:
        raise PairedTestError("paired_test_tests is empty: give at least one test with a name and pairs")
    defaults = dict(defaults or {})
    unknown = sorted(k for k in defaults if k not in SETTINGS)
    if unknown:
        raise PairedTestError(f"unknown default setting(s) {', '.join(unknown)}; known: {', '.join(SETTINGS)}")
    host_addresses = {str(h): _check_address(a, f"host variable {address_var} of {h}", "address")
                      for h, a in (addresses or {}).items() if a is not None}  # fmt: skip

    normalized: list[dict[str, Any]] = []
    runs: list[dict[str, Any]] = []
    names: set[str] = set()
    problems: dict[str, list[str]] = {
        "unknown_hosts": [],
        "hosts_not_in_play": [],
        "missing_addresses": [],
        "duplicate_endpoints": [],
        "address_conflicts": [],
        "busy_clients": [],
        "forks": [],
    }
    owners: dict[str, tuple[str, str]] = {}  # address -> (host, where)
    planned = 0
    counts: list[str] = []

    errors: list[str] = []  # every test and pair is checked; the errors are raised together at the end
    for position, test in enumerate(tests, start=1):
        here = f"paired_test_tests[{position - 1}]"
        if not isinstance(test, Mapping):
            errors.append(f"{here} (item {position}) must be a dictionary with name and pairs, got {_kind_name(test)}")
            continue
        name = test.get("name")
        if not isinstance(name, str) or not name.strip():
            errors.append(f"{here}.name (item {position}) is missing: give each test a short unique name")
            continue
        name = name.strip()
        where = f"test {name!r}"
        found: list[str] = []
        if name in names:
            found.append(f"{where}: two tests have this name; test names must be unique")
        names.add(name)
        try:
            pairs, settings = _read_test(test, defaults, where, position)
        except PairedTestError as exc:
            found.extend(_messages(exc))
        if found:
            errors.extend(_with_path(message, position) for message in found)
            continue
        streams = settings["streams"]
        sweep = isinstance(streams, tuple)
        stream_values = streams if isinstance(streams, tuple) else (streams,)

        resolved: list[dict[str, Any]] = []
        for pair in pairs:
            address = pair.address or (host_addresses.get(pair.server) if pair.server else None)
            client_address = pair.client_address or (host_addresses.get(pair.client) if pair.client else None)
            port = pair.port if pair.port is not None else settings["port_base"] + pair.index - 1
            if port > 65535:
                errors.append(
                    _with_path(
                        f"{where} pair {pair.index}: port_base {settings['port_base']} + {pair.index - 1} is above "
                        "65535; lower port_base",
                        position,
                    )
                )
                port = 65535  # reported above; the plan is not used
            resolved.append(
                {
                    "pair": pair.index,
                    "server": pair.server,
                    "client": pair.client,
                    "address": address,
                    "client_address": client_address,
                    "port": port,
                    "labels": pair.labels,
                    "external": pair.external,
                    "external_server": pair.external_server,
                }
            )
            _problems_for_pair(problems, where, pair, address, client_address, settings, address_var)
            for host, addr in ((pair.server, address), (pair.client, client_address)):
                if addr is None or host is None:
                    continue
                owner = owners.get(addr)
                if owner is None:
                    owners[addr] = (host, f"{where} pair {pair.index}")
                elif owner[0] != host:
                    problem = (
                        f"{addr} is given as the address of {owner[0]} ({owner[1]}) and of {host} "
                        f"({where} pair {pair.index}); an address belongs to one host -- fix the address of one of them"
                    )
                    if problem not in problems["address_conflicts"]:
                        problems["address_conflicts"].append(problem)

        repeat: RepeatSpec = settings["repeat"]
        seed = settings["shuffle_seed"]
        if settings["order"] == "shuffled" and seed is None:
            seed = random_seed
        settings = {**settings, "shuffle_seed": seed if settings["order"] == "shuffled" else None}
        normalized.append(
            {
                "name": name,
                "pairs": resolved,
                **settings,
                "repeat": repeat.max if not repeat.adaptive and repeat.max_failures is None else repeat.as_dict(),
                "streams": list(streams) if sweep else streams,
            }
        )
        swaps = (False, True) if settings["swap_roles"] else (False,)
        count = len(stream_values) * len(_directions(settings["direction"])) * len(swaps) * repeat.max
        counts.append(
            f"{where}: {len(stream_values)} streams value(s) x {len(_directions(settings['direction']))} "
            f"direction(s) x {len(swaps)} role order(s) x repeat {repeat.max} = {count}"
        )
        planned += count
        if planned > max_runs:
            continue  # counted, not made: the error below gives the whole count
        points = [(s, d, w) for s in stream_values for d in _directions(settings["direction"]) for w in swaps]
        for stream_count, direction, swapped, repetition in run_order(points, repeat.max, settings["order"], seed):
            runs.append(
                _make_run(len(runs) + 1, name, settings, resolved, stream_count, sweep, direction, swapped, repetition)
            )
        for swapped in swaps:
            _problems_for_concurrency(problems, where, resolved, swapped)

    if planned > max_runs:
        errors.append(
            f"the tests would make {planned} runs ({'; '.join(counts)}), more than the {max_runs} allowed by "
            "paired_test_max_runs; lower repeat, streams, direction or swap_roles, split the tests over several "
            f"plays, or raise paired_test_max_runs to {planned} if you mean it"
        )
    hosts = sorted({host for r in runs for p in r["pairs"] for host in (p["server"], p["client"]) if host})
    _problems_for_hosts(problems, hosts, inventory_hosts, play_hosts)
    if errors:
        raise PlanErrors(errors, [line for lines in problems.values() for line in lines])
    _mark_nic_reads(runs)
    if forks is not None:
        needed = max((len(r["client_hosts"]) for r in runs), default=0)
        if needed > forks:
            problems["forks"].append(
                f"a run has {needed} clients that must start together but Ansible runs only forks={forks} hosts at "
                f"a time, so the clients would start in batches; run with --forks {needed} or more (or forks = "
                f"{needed} in ansible.cfg)"
            )
    tools: dict[str, list[str]] = {}
    for run in runs:
        for pair in run["pairs"]:
            for host in (pair["server"], pair["client"]):
                if host is not None and run["tool"] not in tools.setdefault(host, []):
                    tools[host].append(run["tool"])
    addresses_by_host: dict[str, list[str]] = {}
    for run in runs:
        for pair in run["pairs"]:
            for host, address in ((pair["server"], pair["address"]), (pair["client"], pair["client_bind"])):
                if host and address and address not in addresses_by_host.setdefault(host, []):
                    addresses_by_host[host].append(address)
    return {
        "tests": normalized,
        "runs": runs,
        "run_count": len(runs),
        "hosts": hosts,
        # the addresses each host uses in the runs (iperf_facts reads their link speed: line rate)
        "addresses_by_host": addresses_by_host,
        "tools_by_host": tools,
        "problems": problems,
        "problem_count": sum(len(v) for v in problems.values()),
    }


def _problems_for_pair(
    problems: dict[str, list[str]],
    where: str,
    pair: _Pair,
    address: str | None,
    client_address: str | None,
    settings: Mapping[str, Any],
    address_var: str | None,
) -> None:
    var = f"the host variable {address_var!r}" if address_var else f"a host variable named by {ADDRESS_VAR_HINT}"
    if address is None:
        problems["missing_addresses"].append(
            f"{where} pair {pair.index}: no address for the server {pair.server}; set address in the pair "
            f"(the address {pair.server} listens on and the client connects to) or {var} of {pair.server}"
        )
    if settings["swap_roles"] and client_address is None:
        problems["missing_addresses"].append(
            f"{where} pair {pair.index}: swap_roles is true, so {pair.client} also runs a server, which listens on "
            f"its own address; set client_address in the pair or {var} of {pair.client}"
        )


def _problems_for_concurrency(
    problems: dict[str, list[str]], where: str, pairs: Sequence[Mapping[str, Any]], swapped: bool
) -> None:
    server_key, client_key, address_key = (
        ("client", "server", "client_address") if swapped else ("server", "client", "address")
    )
    label = f"{where}{' (swapped)' if swapped else ''}"
    clients: dict[str, list[int]] = {}
    endpoints: dict[tuple[str, int], list[int]] = {}
    ports: dict[tuple[str, int], list[int]] = {}
    for pair in pairs:
        if pair[client_key] is not None:  # external clients are not hosts of the inventory
            clients.setdefault(pair[client_key], []).append(pair["pair"])
        if pair[address_key] is not None:
            endpoints.setdefault((pair[address_key], pair["port"]), []).append(pair["pair"])
        if pair[server_key] is not None:  # a server outside the inventory is not a host of it
            ports.setdefault((pair[server_key], pair["port"]), []).append(pair["pair"])
    for host, indexes in clients.items():
        if len(indexes) > 1:
            problems["busy_clients"].append(
                f"{label}: {host} is the client of pairs {_join(indexes)}, but a host runs one client at a time, so "
                "they would not run concurrently; give each pair its own client host (a ring h1->h2, h2->h3, h3->h1 "
                "uses every host once as client and once as server), or add a second inventory alias of the host"
            )
    for (address, port), indexes in endpoints.items():
        if len(indexes) > 1:
            problems["duplicate_endpoints"].append(
                f"{label}: pairs {_join(indexes)} all use {address}:{port}; one server per address and port -- "
                "give each pair its own port (remove port from the pairs to get port_base + index) or address"
            )
    for (host, port), indexes in ports.items():
        if len(indexes) > 1 and len({pairs[i - 1][address_key] for i in indexes}) > 1:
            problems["duplicate_endpoints"].append(
                f"{label}: pairs {_join(indexes)} all run a server on {host} port {port}; esxilab.iperf.iperf_run "
                "keeps one server per host and port -- give each pair its own port"
            )


def _problems_for_hosts(
    problems: dict[str, list[str]],
    hosts: Sequence[str],
    inventory_hosts: Sequence[str] | None,
    play_hosts: Sequence[str] | None,
) -> None:
    known = set(inventory_hosts) if inventory_hosts is not None else None
    playing = set(play_hosts) if play_hosts is not None else None
    unknown = [h for h in hosts if known is not None and h not in known]
    if unknown:
        sample = ", ".join(sorted(known or ())[:10]) or "none"
        problems["unknown_hosts"].append(
            f"{_join(unknown)} {'is' if len(unknown) == 1 else 'are'} not in the inventory; server and client are "
            f"inventory host names (the inventory has: {sample}{', ...' if len(known or ()) > 10 else ''})"
        )
    outside = [h for h in hosts if playing is not None and h not in playing and h not in unknown]
    if outside:
        problems["hosts_not_in_play"].append(
            f"{_join(outside)} {'is' if len(outside) == 1 else 'are'} in the inventory but not in this play (or not "
            "in this serial batch); apply the role in a play over every host of the tests (for example hosts: lab), "
            "without serial, so servers and clients run side by side"
        )


def _join(items: Sequence[Any]) -> str:
    return ", ".join(str(i) for i in items)


def run_order(
    points: Sequence[tuple[int, str, bool]], repeat: int, order: str, seed: int | None
) -> list[tuple[int, str, bool, int]]:
    """The runs of one test as ``(streams, direction, swapped, repetition)``, in the order they run.

    ``interleaved``: round robin, repetition 1 of every point, then repetition 2, ...; ``sequential``: the
    repetitions of each point back to back; ``shuffled``: round robin, each round in a random order drawn
    from ``random.Random(seed)`` (the same seed gives the same order).
    """
    if order == "sequential":
        return [(*point, rep) for point in points for rep in range(1, repeat + 1)]
    rng = random.Random(seed) if order == "shuffled" else None
    runs: list[tuple[int, str, bool, int]] = []
    for rep in range(1, repeat + 1):
        round_points = list(points)
        if rng is not None:
            rng.shuffle(round_points)
        runs.extend((*point, rep) for point in round_points)
    return runs


def point_key(test: str, direction: str, streams: int, swapped: bool) -> str:
    """The name of one point of a test: what its stability is decided over."""
    return f"{test}|{direction}|{streams}|{'swapped' if swapped else 'unswapped'}"


def _make_run(
    number: int,
    test: str,
    settings: Mapping[str, Any],
    pairs: Sequence[Mapping[str, Any]],
    streams: int,
    sweep: bool,
    direction: str,
    swapped: bool,
    repetition: int,
) -> dict[str, Any]:
    run_pairs = []
    for pair in pairs:
        if swapped:
            server, client, address, source = pair["client"], pair["server"], pair["client_address"], pair["address"]
        else:
            server, client, address, source = pair["server"], pair["client"], pair["address"], pair["client_address"]
        external = pair.get("external")
        if external is not None:
            client = None
            external = {**external, "command": external_command(settings, address, pair["port"], streams)}
        outside = None
        if pair.get("external_server"):  # never swapped (refused): the server is the pair's address
            outside = {"command": external_server_command(settings, pair["port"])}
        shown = client if client is not None else EXTERNAL_CLIENT
        shown_server = server if outside is None else f"{EXTERNAL_SERVER} {address}"
        sender, receiver = (shown, shown_server) if direction == "forward" else (shown_server, shown)
        run_pairs.append(
            {
                "run": number,
                "pair": pair["pair"],
                "server": server,
                "client": client,
                "address": address,
                "port": pair["port"],
                "bind": address if settings["server_bind"] and outside is None else None,
                "client_bind": source if settings["client_bind"] else None,
                "sender": sender,
                "receiver": receiver,
                "external": external,
                # the server is outside the inventory: nobody here starts it ({command}: what runs there)
                "external_server": outside,
                # an iperf3 server for one external client exits after its test (--one-off): its log is then
                # complete (iperf3 before 3.1.5 buffers it) and no second client is served unseen
                "one_off": external is not None and external["count"] == 1 and settings["tool"] == "iperf3",
                "labels": {
                    **settings["labels"],
                    **pair.get("labels", {}),
                    "test": test,
                    "run": number,
                    "pair": pair["pair"],
                    "streams": streams,
                    "direction": direction,
                    "swapped": swapped,
                    "repetition": repetition,
                },
            }
        )
    clients = len({p["client"] for p in run_pairs if p["client"] is not None})
    auto_delay = settings["start_delay"] is None
    start_delay = START_DELAY_BASE + START_DELAY_PER_CLIENT * clients if auto_delay else settings["start_delay"]
    omit = settings["omit"] or 0
    # a host waits for its external pairs one after the other (the role's loop): the longest such sum
    waits: dict[str, float] = {}
    for p in run_pairs:
        if p["external"] is not None:
            waits[p["server"]] = waits.get(p["server"], 0.0) + p["external"]["deadline"]
    wait = max(waits.values(), default=None)
    server_timeout = settings["server_timeout"] or int(
        (math.ceil(wait) if wait is not None else settings["duration"] + omit + math.ceil(start_delay))
        + SERVER_TIMEOUT_MARGIN
    )
    run: dict[str, Any] = {
        "run": number,
        "test": test,
        "sweep": sweep,
        "direction": direction,
        "reverse": direction == "reverse",
        "swapped": swapped,
        "repetition": repetition,
        "repeat": settings["repeat"].max,
        "point": point_key(test, direction, streams, swapped),
        # None for a plain repeat: N (every run is made); else what assess() decides with
        "stability": settings["repeat"].as_dict()
        if settings["repeat"].adaptive or settings["repeat"].max_failures is not None
        else None,
        "order": settings["order"],
        "shuffle_seed": settings["shuffle_seed"],
        "combine_swapped": settings["combine_swapped"] and settings["swap_roles"],
        # every setting that feeds iperf_run, under its own name (streams: this run's value)
        **{name: settings[name] for name, setting in SETTINGS.items() if setting.server or setting.client},
        "streams": streams,
        "server_timeout": server_timeout,
        "labels": _common_labels(run_pairs),
        # One pair needs no barrier: its client starts as soon as its server is up (external clients: none).
        "barrier": sum(p["client"] is not None for p in run_pairs) > 1,
        # the clients are outside the inventory: the servers wait up to this many seconds for them (the deadlines of
        # the external pairs one host serves, added up: it waits for them one after the other)
        "external": wait is not None,
        "external_wait": wait,
        # some pairs' servers are outside the inventory: their clients connect to them, nobody starts them
        "external_servers": any(p["external_server"] is not None for p in run_pairs),
        "start_delay": round(start_delay, 3),
        "start_delay_auto": auto_delay,
        "pairs": run_pairs,
        # NIC counters (setting nic_counters): read before / after this run (set by _mark_nic_reads), and the
        # addresses each host of the run reads them for (its test addresses in this run; the client's own
        # address even when it does not bind to it)
        "nic_counters": settings["nic_counters"],
        "nic_before": False,
        "nic_after": False,
        "nic_addresses": _nic_addresses(pairs),
        "server_hosts": sorted({p["server"] for p in run_pairs if p["server"] is not None}),
        "client_hosts": sorted({p["client"] for p in run_pairs if p["client"] is not None}),
    }
    run["iperf_server"] = _iperf_arguments(run, "server")
    run["iperf_client"] = {**_iperf_arguments(run, "client"), "reverse": run["reverse"]}
    return run


def _common_labels(pairs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The run's labels: those every pair of the run has with the same value (the test's labels and the pair
    labels all pairs share), without the pair's identity - so pair labels that are the same for every pair of a
    run are run labels, exactly as the test's labels are."""
    first = pairs[0]["labels"]
    return {
        key: value
        for key, value in first.items()
        if key not in IDENTITY_LABELS and all(key in p["labels"] and p["labels"][key] == value for p in pairs[1:])
    }


def _nic_addresses(pairs: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """``{host: [address, ...]}``: the test addresses of a run's hosts (server and client of every pair; the same
    whichever end serves)."""
    found: dict[str, list[str]] = {}
    for pair in pairs:
        for host, address in ((pair["server"], pair["address"]), (pair["client"], pair["client_address"])):
            if host and address and address not in found.setdefault(host, []):
                found[host].append(address)
    return {host: addresses for host, addresses in found.items() if addresses}


def _mark_nic_reads(runs: Sequence[dict[str, Any]]) -> None:
    """Set ``nic_before`` / ``nic_after`` of the runs: every run with ``nic_counters: run``; the first and the last
    planned run of each test with ``test``; none with ``none``."""
    by_test: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        by_test.setdefault(run["test"], []).append(run)
    for test_runs in by_test.values():
        for run in test_runs:
            mode = run["nic_counters"]
            run["nic_before"] = mode == "run" or (mode == "test" and run is test_runs[0])
            run["nic_after"] = mode == "run" or (mode == "test" and run is test_runs[-1])


def external_command(settings: Mapping[str, Any], address: str | None, port: int, streams: int) -> str:
    """The client command line an external client is asked to run (``iperf3.exe`` on Windows takes it as is):
    the test's duration, streams, window, interval, omit, UDP rate and length - what the servers of the
    inventory's pairs would be run with."""
    iperf3 = settings["tool"] == "iperf3"
    argv = ["iperf3" if iperf3 else "iperf", "-c", address or "<server address>", "-p", str(port)]
    argv += ["-t", str(settings["duration"]), "-P", str(streams)]
    for name, flag in (("window", "-w"), ("interval", "-i"), ("length", "-l")):
        if settings[name] is not None:
            value = settings[name]
            argv += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    if iperf3 and settings["omit"]:
        argv += ["-O", str(settings["omit"])]
    if settings["protocol"] == "udp":
        argv.append("-u")
    if settings["bandwidth"] is not None:
        argv += ["-b", str(settings["bandwidth"])]
    return " ".join(argv)


def external_server_command(settings: Mapping[str, Any], port: int) -> str:
    """The server command line to run on a server outside the inventory (``iperf3.exe`` on Windows takes it as is):
    the port, the window, and for iperf2 UDP ``-u`` (an iperf3 server learns the rest from its client)."""
    iperf3 = settings["tool"] == "iperf3"
    argv = ["iperf3" if iperf3 else "iperf", "-s", "-p", str(port)]
    if settings["window"] is not None:
        argv += ["-w", str(settings["window"])]
    if not iperf3 and settings["protocol"] == "udp":
        argv.append("-u")
    return " ".join(argv)


def run_seconds(run: Mapping[str, Any]) -> float:
    """The planned seconds of one run of the plan: the test itself (``duration`` + ``omit``) and the
    clients' ``start_delay``, or for external clients the longest wait for them (``external.deadline``);
    starting and stopping the servers and collecting the results come on top."""
    if run.get("external_wait") is not None:
        return float(run["external_wait"])
    return float(run["duration"]) + float(run.get("omit") or 0) + float(run.get("start_delay") or 0)


def _iperf_arguments(run: Mapping[str, Any], mode: str) -> dict[str, Any]:
    """The ``iperf_run`` arguments of the run's servers or clients that come from the settings,
    keyed by ``iperf_run`` option name (``Setting.server`` / ``Setting.client``); unset ones left out."""
    arguments: dict[str, Any] = {}
    for name, setting in SETTINGS.items():
        option = setting.server if mode == "server" else setting.client
        if option is None or run[name] is None or (setting.unset_when_zero and run[name] == 0):
            continue
        arguments[option] = run[name]
    return arguments


# --------------------------------------------------------------------------------------------
# Record of one run
# --------------------------------------------------------------------------------------------


def _loop_items(registered: Any) -> list[Mapping[str, Any]]:
    """The per-item results of a registered loop task (empty for a skipped or missing task)."""
    if not isinstance(registered, Mapping):
        return []
    results = registered.get("results")
    if isinstance(results, Sequence) and not isinstance(results, str | bytes):
        return [r for r in results if isinstance(r, Mapping)]
    return []


def _find_item(registered: Any, run: int, pair: int) -> Mapping[str, Any] | None:
    for item in _loop_items(registered):
        loop_item = item.get("item")
        if isinstance(loop_item, Mapping) and loop_item.get("run") == run and loop_item.get("pair") == pair:
            return item
    return None


def _float_or_none(value: Any) -> float | None:
    return finite_float(value)


def _message(result: Mapping[str, Any]) -> str:
    message = result.get("msg") or result.get("reason") or result.get("stderr") or "no message"
    return " ".join(str(message).split())


def _why_missing(report: Mapping[str, Any] | None, host: str, run: int) -> str:
    """Why ``host`` has no item for ``run``: the failure its report recorded for that run, else unreachable."""
    failure = report.get("failure") if report is not None else None
    if isinstance(failure, Mapping) and failure.get("run") == run:
        task = failure.get("task") or "a task"
        return f"{task}: {failure.get('msg') or 'failed'}"
    return f"{host} gave no report for this run (unreachable?)"


def _server_start_error(
    pair: Mapping[str, Any],
    server_report: Mapping[str, Any] | None,
    server_item: Mapping[str, Any] | None,
    endpoint: str,
    run: int,
) -> str | None:
    """Why the pair's server did not start (not run, connection lost, failed), or None when it started."""
    if server_item is None:
        return f"the server on {pair['server']} was not started: {_why_missing(server_report, pair['server'], run)}"
    if server_item.get("unreachable"):
        return f"lost the connection to {pair['server']} while starting its server: {_message(server_item)}"
    if server_item.get("failed"):
        return f"the server on {pair['server']} ({endpoint}) failed to start: {_message(server_item)}"
    return None


def _blank_record(
    pair: Mapping[str, Any], client: str, sender: str, receiver: str, server_item: Mapping[str, Any] | None
) -> PairRecord:
    """A pair's record before its result is read: who and where, no figure yet; the server's pid and tool version
    when its start succeeded."""
    record: PairRecord = {
        "pair": pair["pair"],
        "server": pair["server"],
        "client": client,
        "address": pair["address"],
        "port": pair["port"],
        "sender": sender,
        "receiver": receiver,
        "started_at": None,
        "result": None,
        "ok": False,
        "error": None,
        "tool_version": None,
        "server_pid": None,
        "server_stop": None,
        "late_by": None,
        "arrived_at": None,
        "command": None,
        "labels": dict(pair.get("labels") or {}),
    }
    if server_item is not None and not server_item.get("failed"):
        record["server_pid"] = server_item.get("pid")
        record["tool_version"] = server_item.get("tool_version")
    return record


def _pair_record(pair: Mapping[str, Any], reports: Mapping[str, Mapping[str, Any]], run: int) -> PairRecord:
    """The record of a pair whose client is in the inventory: the client's result. A server outside the inventory
    (``external_server``) has no start and no stop; the record names it ``external`` and says ``measured_by:
    client``."""
    outside = pair.get("external_server")
    server_report = None if outside else reports.get(pair["server"])
    client_report = reports.get(pair["client"])
    server_item = _find_item(server_report and server_report.get("servers"), run, pair["pair"])
    client_item = _find_item(client_report and client_report.get("clients"), run, pair["pair"])
    stop_item = _find_item(server_report and server_report.get("stops"), run, pair["pair"])
    endpoint = f"{pair['address']}:{pair['port']}"

    record = _blank_record(pair, pair["client"], pair["sender"], pair["receiver"], server_item)
    if outside:
        record["server"] = EXTERNAL_SERVER
        record["measured_by"] = "client"
        record["external"] = {
            "server": True,
            "address": pair["address"],
            "port": pair["port"],
            "command": outside.get("command"),
        }
    if stop_item is not None:
        stopped = [s for s in stop_item.get("stopped") or [] if isinstance(s, Mapping)]
        if stop_item.get("unreachable"):
            record["server_stop"] = "unreachable"
        elif stop_item.get("failed"):
            record["server_stop"] = "failed"
        else:
            record["server_stop"] = str(stopped[0].get("status")) if stopped else "not running"
    if client_item is not None:
        record["started_at"] = client_item.get("started_at")
        record["command"] = client_item.get("command")
        record["tool_version"] = client_item.get("tool_version") or record["tool_version"]
        barrier = client_item.get("barrier")
        if isinstance(barrier, Mapping):
            record["late_by"] = barrier.get("late_by")
            record["arrived_at"] = barrier.get("arrived_at")
        record["result"] = result_from(client_item.get("result"))

    error = None if outside else _server_start_error(pair, server_report, server_item, endpoint, run)
    if error is not None:
        pass
    elif client_item is None:
        why = _why_missing(client_report, pair["client"], run)
        error = f"the client on {pair['client']} did not run: {why}"
    elif client_item.get("unreachable"):
        error = f"lost the connection to the client host {pair['client']} during the test: {_message(client_item)}"
    elif client_item.get("failed"):
        error = f"the client on {pair['client']} -> {endpoint} failed: {_message(client_item)}"
        if outside:
            error += (
                f" - the server is outside the inventory: is it running and listening on {endpoint} "
                f"({outside.get('command')} there), and does its firewall let port {pair['port']} in?"
            )
    elif client_item.get("skipped"):
        error = f"the client on {pair['client']} was skipped: {_message(client_item)}"
    elif (result := record["result"]) is None:
        error = f"the client on {pair['client']} returned no result"
    elif result.get("bits_per_second") is None:
        detail = result.get("error") or "; ".join(result.get("warnings") or []) or "no figure"
        error = f"the result of the client on {pair['client']} has no throughput figure: {detail}"
    record["error"] = error
    record["ok"] = error is None
    # Keep what the tool printed when the run failed: the normalized result may not hold it; and always when the
    # server is outside the inventory - the client's output is the only one of the test anybody here has.
    if (error is not None or outside) and client_item is not None and client_item.get("raw"):
        record["raw"] = client_item["raw"]
    return record


def _external_records(
    pair: Mapping[str, Any], reports: Mapping[str, Mapping[str, Any]], run: int, streams: Any
) -> tuple[list[PairRecord], list[str]]:
    """The records of a pair whose clients are outside the inventory: one per client test the server logged
    (its result is the server's: ``measured_by: server``) and one failed record per client that did not come;
    and the run's warnings about them (a different stream count, tests beyond ``count``, tests from other peers).

    From the ``iperf_run mode=collect`` item of the server host (``collects``), which waited for them,
    stopped the server and parsed its log; the start and the ``always:`` stop as for any pair.
    """
    external = pair["external"]
    count = int(external["count"])
    server_report = reports.get(pair["server"])
    server_item = _find_item(server_report and server_report.get("servers"), run, pair["pair"])
    collect_item = _find_item(server_report and server_report.get("collects"), run, pair["pair"])
    stop_item = _find_item(server_report and server_report.get("stops"), run, pair["pair"])
    endpoint = f"{pair['address']}:{pair['port']}"
    info: dict[str, Any] = {
        "count": count,
        "deadline": external["deadline"],
        "from": external.get("from"),
        "command": external.get("command"),
        "came": None,
        "reason": None,
    }

    def record(index: int, peer: str | None) -> PairRecord:
        sender = f"{EXTERNAL_CLIENT} {peer}" if peer else EXTERNAL_CLIENT
        entry = _blank_record(pair, EXTERNAL_CLIENT, sender, pair["server"], server_item)
        entry["measured_by"] = "server"
        entry["external"] = {**info, "index": index, "peer": peer, "group": None}
        if server_item is not None and not server_item.get("failed"):
            entry["command"] = server_item.get("command")
        return entry

    error = _server_start_error(pair, server_report, server_item, endpoint, run)
    if error is not None:
        pass
    elif collect_item is None:
        why = _why_missing(server_report, pair["server"], run)
        error = f"the wait for the external clients on {pair['server']} did not run: {why}"
    elif collect_item.get("unreachable") or collect_item.get("failed"):
        error = f"the wait for the external clients on {pair['server']} ({endpoint}) failed: {_message(collect_item)}"
    if error is not None or collect_item is None:  # (collect_item is None sets error)
        failed = record(1, None)
        failed["error"] = error
        return [failed], []

    info["came"] = collect_item.get("came")
    info["reason"] = collect_item.get("reason")
    stop = collect_item.get("server_stop")
    if stop_item is not None and (stop_item.get("failed") or stop_item.get("unreachable")):
        stop = "unreachable" if stop_item.get("unreachable") else "failed"
    tests = [t for t in collect_item.get("tests") or [] if isinstance(t, Mapping)]
    warnings = [
        f"pair {pair['pair']}: a client test from {t.get('peer')} "
        + (
            "came from another address than external.from, not counted"
            if not t.get("counted")
            else f"came after the {count} expected; not counted (its result is in the server's log)"
        )
        for t in tests
        if not t.get("counted") or t.get("extra")
    ]
    tests = [t for t in tests if t.get("counted") and not t.get("extra")]
    records: list[PairRecord] = []
    for index, test in enumerate(tests, start=1):
        entry = record(index, test.get("peer") if isinstance(test.get("peer"), str) else None)
        entry["external"]["group"] = test.get("group")
        entry["server_stop"] = stop
        result = result_from(test.get("result"))
        entry["result"] = result
        if result is not None and result.get("tool_version"):
            entry["tool_version"] = result["tool_version"]
        who = f"external client {index} of {count} ({test.get('peer')})"
        if result is None or result.get("bits_per_second") is None:
            detail = "no result"
            if result is not None:
                detail = result.get("error") or "; ".join(result.get("warnings") or []) or "no figure"
            entry["error"] = f"the server's result of {who} has no throughput figure: {detail}"
        elif not test.get("ended"):
            entry["error"] = f"{who} was still running when the wait ended (deadline {external['deadline']:g} s): cut"
        entry["ok"] = entry["error"] is None
        if result is not None and (result.get("reverse") or result.get("bidir")):
            warnings.append(
                f"pair {pair['pair']}: {who} ran {'--bidir' if result.get('bidir') else '-R'}: the server sent, so "
                "its figure is the sender's; run the client without it to measure what the server receives"
            )
        if isinstance(streams, int) and result is not None and result.get("streams") not in (None, 0, streams):
            warnings.append(
                f"pair {pair['pair']}: {who} used {result.get('streams')} stream(s); the test asks for {streams} "
                f"(-P {streams})"
            )
        records.append(entry)
    came_in = {
        "deadline": f"within the deadline of {external['deadline']:g} s",
        "server_exited": "before the server exited",
    }
    for index in range(len(records) + 1, count + 1):
        missing = record(index, None)
        missing["server_stop"] = stop
        missing["error"] = (
            f"external client {index} of {count} did not come {came_in.get(str(info['reason']), 'in time')} "
            f"({len(records)} came); no figure"
        )
        records.append(missing)
    return records, warnings


def _ends(pair: PairRecord) -> str:
    """``client -> server`` of a pair record for messages; an external end named with its address."""
    external = pair.get("external") or {}
    if pair.get("measured_by") == "server":
        return f"{pair['sender']} -> {pair['server']}"
    if external.get("server"):
        return f"{pair['client']} -> {EXTERNAL_SERVER} {external.get('address')}:{external.get('port')}"
    return f"{pair['client']} -> {pair['server']}"


def _headline(pair: PairRecord) -> float | None:
    """The usable rate of a pair: its result's headline when the pair is ok (then both are set)."""
    result = pair["result"]
    return result["bits_per_second"] if pair["ok"] and result is not None else None


# The role's registered results, read by the record from the hosts' variables.
# Where each piece of a host's report is: the registered results of the role's three tasks per run
# (esxilab.iperf.paired_test_host part start / clients / stop) and the rescue's fact.
HOST_REPORT_VARS = {
    "servers": ("__paired_test_start", "servers"),
    "nic_before": ("__paired_test_start", "nic_before"),
    "clients": ("__paired_test_part", "clients"),
    "collects": ("__paired_test_part", "collects"),
    "stops": ("__paired_test_end", "stops"),
    "nic_after": ("__paired_test_end", "nic_after"),
    "failure": ("__paired_test_failure", None),
}


def _nic_readings(run: Mapping[str, Any], by_host: Mapping[str, Mapping[str, Any]], key: str) -> dict[str, Any]:
    """``{host: {address: reading}}`` of one NIC read of the run (``key``: ``nic_before`` / ``nic_after``), from the
    hosts' registered ``iperf_facts`` results; a host whose read failed or did not run gets ``{error: why}``."""
    readings: dict[str, Any] = {}
    for host in sorted(run.get("nic_addresses") or {}):
        registered = (by_host.get(host) or {}).get(key)
        facts = registered.get("ansible_facts") if isinstance(registered, Mapping) else None
        found = facts.get("iperf_nic_counters") if isinstance(facts, Mapping) else None
        if isinstance(found, Mapping):
            readings[host] = dict(found)
        elif isinstance(registered, Mapping) and not registered.get("skipped") and registered.get("msg"):
            readings[host] = {"error": f"the NIC read on {host} failed: {_message(registered)}"}
        else:
            readings[host] = {"error": f"the NIC counters of {host} were not read in run {run['run']}"}
    return readings


def _nic_record(run: Mapping[str, Any], by_host: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    """The run record's ``nic``: ``{mode, before, after}`` (``None`` where this run read nothing)."""
    if not run.get("nic_before") and not run.get("nic_after"):
        return None
    return {
        "mode": run.get("nic_counters"),
        "before": _nic_readings(run, by_host, "nic_before") if run.get("nic_before") else None,
        "after": _nic_readings(run, by_host, "nic_after") if run.get("nic_after") else None,
    }


def reports_from_host_vars(host_vars: Sequence[Any]) -> list[dict[str, Any] | None]:
    """The per-host reports of :func:`build_record` from the hosts' variables (``hostvars`` entries)."""
    reports: list[dict[str, Any] | None] = []
    for entry in host_vars:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("inventory_hostname"), str):
            reports.append(None)
            continue
        report: dict[str, Any] = {"host": entry["inventory_hostname"]}
        for key, (name, field) in HOST_REPORT_VARS.items():
            value = entry.get(name)
            if field is not None:
                value = value.get(field) if isinstance(value, Mapping) else None
            report[key] = value
        reports.append(report)
    return reports


def auto_start_delay(run: Mapping[str, Any], records: Sequence[Any], probe_dispatch: Any = None) -> float:
    """The automatic start delay of ``run``: from the measured ``dispatch_time`` of the last
    ``DISPATCH_WINDOW`` earlier runs with as many clients (``records``: the run records so far),
    their maximum times ``DISPATCH_FACTOR`` plus ``DISPATCH_MARGIN``; when there is none yet, from
    ``probe_dispatch`` (seconds Ansible took to hand the preflight's probe to every host of the
    tests; see ``FIRST_RUN_MARGIN``), else the plan's delay. A late client shows as a long dispatch
    time, so the next delay grows; a quick series shrinks it."""
    if not run.get("start_delay_auto"):
        return float(run["start_delay"])
    clients = len(run.get("client_hosts") or ())
    measured = [
        float(r["dispatch_time"])
        for r in records
        if isinstance(r, Mapping)
        and isinstance(r.get("dispatch_time"), int | float)
        and len({p.get("client") for p in r.get("pairs") or []}) == clients
    ][-DISPATCH_WINDOW:]
    if not measured:
        planned = float(run["start_delay"])
        probe = finite_float(probe_dispatch)
        if probe is None or probe < 0:
            return planned
        return round(min(planned, max(FIRST_RUN_MINIMUM, probe * FIRST_RUN_FACTOR + FIRST_RUN_MARGIN)), 3)
    return round(max(measured) * DISPATCH_FACTOR + DISPATCH_MARGIN, 3)


def build_record(
    run: Mapping[str, Any],
    reports: Sequence[Any],
    *,
    barrier: Mapping[str, Any] | None = None,
    previous: Sequence[Any] = (),
) -> RunRecord:
    """The record of one run, from the per-host reports registered during it.

    ``reports`` holds one item per host of the play (``None`` for a host with nothing to
    report): ``{host, run, servers, clients, stops, failure}`` where ``servers``/``clients``/
    ``stops`` are the registered results of the looped ``iperf_run`` tasks and ``failure``
    what the rescue saw (``{run, task, msg}``). Items of other runs are ignored (a host that
    failed early keeps the registered results of an earlier run).

    ``barrier`` is ``{run, start_at, start_delay}``: the common start time given to the clients
    and how far ahead of the moment it was set (ignored when it belongs to another run).
    ``barrier_margin`` is the time the slowest client had left when it reached the barrier
    (negative: it was late and started at once); ``dispatch_time`` the time from setting the
    start time to that client's arrival (``start_delay - barrier_margin``).

    ``previous`` holds the records of the runs before (``paired_test_results``): with a ``repeat``
    dictionary, ``stability`` is ``_paired_stability.assess()`` over the totals of this run's point
    so far (this run included) - the role skips the point's remaining runs once it is ``done``.
    """
    number = run["run"]
    start_at: float | None = None
    start_delay: float | None = None
    if run.get("barrier") and isinstance(barrier, Mapping) and barrier.get("run") == number:
        start_at = _float_or_none(barrier.get("start_at"))
        start_delay = _float_or_none(barrier.get("start_delay"))
    by_host: dict[str, Mapping[str, Any]] = {}
    for report in reports:
        if isinstance(report, Mapping) and isinstance(report.get("host"), str):
            by_host[report["host"]] = report
    pairs: list[PairRecord] = []
    external_warnings: list[str] = []
    for pair in run["pairs"]:
        if pair.get("external"):
            records, notes = _external_records(pair, by_host, number, run.get("streams"))
            pairs.extend(records)
            external_warnings.extend(notes)
        else:
            pairs.append(_pair_record(pair, by_host, number))
    rates = [rate for p in pairs if (rate := _headline(p)) is not None]
    ok = all(p["ok"] for p in pairs)
    total = math.fsum(rates) if ok else None
    # The client tests of an external pair add up only when they ran at the same time: iperf2 clients the
    # server logged as one test (one group). An iperf3 server serves one test at a time.
    one_by_one = sorted(
        {
            p["pair"]
            for p in pairs
            if p.get("measured_by") == "server"
            and len({q["external"]["group"] for q in pairs if q["pair"] == p["pair"]}) > 1
        }
    )
    if ok and one_by_one:
        total = None
        external_warnings.append(
            f"pair(s) {_join(one_by_one)}: the external client tests came one after the other (an iperf3 server "
            "serves one test at a time), so each result is its own figure and the run has no total"
        )
    starts = [p["started_at"] for p in pairs if isinstance(p["started_at"], int | float)]
    spread = max(starts) - min(starts) if len(starts) == len(pairs) and len(pairs) > 1 else None
    errors = [f"pair {p['pair']} ({_ends(p)}): {p['error']}" for p in pairs if p["error"]]
    warnings: list[str] = list(external_warnings)
    arrivals = [p["arrived_at"] for p in pairs if isinstance(p["arrived_at"], int | float)]
    margin = round(start_at - max(arrivals), 6) if start_at is not None and arrivals else None
    if margin is not None and margin < 0:
        warnings.append(
            f"a client reached the barrier {-margin:.3f} s after the common start time and started at once "
            f"(start_delay {start_delay} s was too short); see start_spread. Set paired_test_start_delay higher"
        )
    for p in pairs:
        result = p["result"]
        if p["ok"] and result is not None and not result.get("complete"):
            detail = "; ".join(result.get("warnings") or []) or "see its warnings"
            warnings.append(f"pair {p['pair']}: the result is incomplete ({detail})")
        if p["server_stop"] in ("failed", "unreachable"):
            warnings.append(
                f"pair {p['pair']}: the server on {p['server']} port {p['port']} could not be stopped "
                f"({p['server_stop']}); its guard ends it after server_timeout={run.get('server_timeout')} s"
            )
    if not ok:
        warnings.append(f"{len(errors)} of {len(pairs)} pair(s) failed: total_bits_per_second is null (no partial sum)")
    stability: dict[str, Any] | None = None
    spec = run.get("stability")
    if isinstance(spec, Mapping):
        point = run.get("point")
        samples = [
            _float_or_none(r.get("total_bits_per_second"))
            for r in previous
            if isinstance(r, Mapping) and r.get("point") == point and r.get("run") != number
        ]
        stability = assess([*samples, total], RepeatSpec(**spec))
    return {
        "run": number,
        "test": run["test"],
        "streams": run["streams"],
        "sweep": run.get("sweep", False),
        "direction": run["direction"],
        "swapped": run["swapped"],
        "repetition": run["repetition"],
        "tool": run.get("tool"),
        "protocol": run.get("protocol"),
        "duration": run.get("duration"),
        "labels": dict(run.get("labels") or {}),
        "start_at": start_at,
        "start_delay": start_delay,
        "barrier_margin": margin,
        "dispatch_time": round(start_delay - margin, 6) if margin is not None and start_delay is not None else None,
        "start_spread": spread,
        "pairs": pairs,
        "total_bits_per_second": total,
        "ok": ok,
        "complete": ok and all(p["result"] is not None and bool(p["result"].get("complete")) for p in pairs),
        "failed_pairs": sum(not p["ok"] for p in pairs),
        "errors": errors,
        "warnings": warnings,
        "point": run.get("point"),
        "order": run.get("order"),
        "shuffle_seed": run.get("shuffle_seed"),
        "combine_swapped": bool(run.get("combine_swapped")),
        "stability": stability,
        "nic": _nic_record(run, by_host),
    }


# --------------------------------------------------------------------------------------------
# Line rate of the runs, from the hosts' link speeds
# --------------------------------------------------------------------------------------------


def _pair_line_rate(pair: Mapping[str, Any], run: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """What ``with_line_rates`` adds to a pair's labels: the run's, unless the pair's own labels give a line rate
    the run's do not (a pair label): then the pair keeps it, and the source says so."""
    for key in ("line_rate_bps", "link_speed_mbps"):
        if (_float_or_none(pair.get(key)) or 0) > 0 and pair.get(key) != run.get(key):
            return {"line_rate_source": f"given: the pair's {key} label (inventory)"}
    return dict(extra)


def with_line_rates(
    plan: Mapping[str, Any],
    speeds: Mapping[str, Mapping[str, Any]],
    *,
    published: Mapping[str, Mapping[str, Any]] | None = None,
    report_line_rate_bps: Any = None,
) -> dict[str, Any]:
    """``plan`` with ``line_rate_bps`` and ``line_rate_source`` in the labels of every run and pair.

    ``speeds`` maps each host to ``{address: {speed_mbps, source, reason}}`` (``iperf_facts``'
    ``iperf_link_speeds``); ``published`` the same per host from ``esxi_network``
    (``esxi_network_link_speeds``: the vmknic's vSwitch uplinks), which wins where it has a speed.
    A value given by the caller wins and is only named: the test's ``line_rate_bps`` /
    ``link_speed_mbps`` labels (the inventory), then ``report_line_rate_bps``; else
    ``_line_rate.run_line_rate()`` - the slowest end of the run.
    """
    by_end: dict[str, Mapping[str, Any]] = {}
    for given in (speeds, published or {}):
        for host, items in given.items():
            for address, item in (items or {}).items() if isinstance(items, Mapping) else ():
                known = by_end.get(f"{host} {address}")
                if isinstance(item, Mapping) and (known is None or item.get("speed_mbps") is not None):
                    by_end[f"{host} {address}"] = item
    given_report = _float_or_none(report_line_rate_bps)
    runs = []
    for run in plan["runs"]:
        labels = dict(run.get("labels") or {})
        extra: dict[str, Any]
        label_bps = _float_or_none(labels.get("line_rate_bps"))
        label_mbps = _float_or_none(labels.get("link_speed_mbps"))
        if (label_bps or 0) > 0 or (label_mbps or 0) > 0:
            key = "line_rate_bps" if (label_bps or 0) > 0 else "link_speed_mbps"
            extra = {"line_rate_source": f"given: the test's {key} label (inventory)"}
        elif given_report is not None and given_report > 0:
            extra = {"line_rate_source": "given: report_line_rate_bps"}
        else:
            rate, why = run_line_rate(run["pairs"], by_end)
            extra = {"line_rate_source": why}
            if rate is not None:
                extra["line_rate_bps"] = rate
        pairs = [{**pair, "labels": {**pair["labels"], **_pair_line_rate(pair["labels"], labels, extra)}}
                 for pair in run["pairs"]]  # fmt: skip
        own = [str(p["pair"]) for p in pairs if p["labels"]["line_rate_source"] != extra["line_rate_source"]]
        if own:  # the report sums the pairs' line rates: say that some (or all) are the pairs' own
            extra = {
                **extra,
                "line_rate_source": f"given: the line_rate_bps / link_speed_mbps labels of pair {', '.join(own)}"
                + ("" if len(own) == len(pairs) else f"; the other pairs: {extra['line_rate_source']}"),
            }
        runs.append({**run, "labels": {**labels, **extra}, "pairs": pairs})
    return {**plan, "runs": runs}
