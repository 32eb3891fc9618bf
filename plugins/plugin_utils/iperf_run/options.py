# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The task options: which apply to which mode, ranges and formats, ``extra_args`` refusals, and the
iperf command lines they become (per family and version).

An iperf option lives here twice: in :data:`APPLIES` (its modes, plus any range check in
:func:`validate_params`) and in :func:`build_client_argv` / :func:`build_server_argv` (its flag).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Mapping
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.common import (
    IPERF2_ENHANCED,
    IPERF2_REVERSE,
    IPERF2_TCP_BANDWIDTH,
    IPERF3_BIDIR,
    IPERF3_CONNECT_TIMEOUT,
    IPERF3_FORCEFLUSH,
    IPERF3_IDLE_TIMEOUT_EXITS_ONE_OFF,
    IPERF3_ONE_OFF,
    IperfRunError,
    Mode,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.latency import check_latency
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.probe import Binary

MUTUALLY_EXCLUSIVE: list[list[str]] = [["duration", "bytes"], ["reverse", "bidir"]]
REQUIRED_IF: list[list[Any]] = [["mode", "client", ["server"]], ["mode", "collect", ["clients", "deadline"]]]

_COMMON = {"mode", "tool", "binary", "port"}
# what a server and a client both take
_BOTH = {"bind", "protocol", "interval", "window", "extra_args", "state_dir", "probe", "reading"}
APPLIES: dict[Mode, set[str]] = {
    "server": _COMMON | _BOTH | {"server_timeout", "one_off"},
    "client": _COMMON
    | _BOTH
    | {
        "server",
        "duration",
        "bytes",
        "streams",
        "reverse",
        "bidir",
        "bandwidth",
        "length",
        "mss",
        "omit",
        "tos",
        "zerocopy",
        "connect_timeout",
        "timeout",
        "start_at",
        "labels",
        "peer_is_esxi",
        "latency",
    },
    "stop": {"mode", "tool", "port", "bind", "pid", "state_dir", "probe", "reading"},
    "collect": {"mode", "tool", "port", "bind", "state_dir", "clients", "deadline", "peer", "labels"},
    "probe": {"mode", "binary", "require", "reading"},
}

_SIZE_RE = re.compile(r"^[0-9]+(?:\.[0-9]+)?[kKmMgG]?$")
_RATE_RE = re.compile(r"^[0-9]+(?:\.[0-9]+)?[kKmMgGtT]?(?:/[0-9]+)?$")
_SAFE_DIR_RE = re.compile(r"^/[A-Za-z0-9._/+-]*$")

# --------------------------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------------------------


def _check_applicable(params: Mapping[str, Any], mode: Mode, argument_spec: Mapping[str, Mapping[str, Any]]) -> None:
    wrong = []
    for name, spec in argument_spec.items():
        value = params.get(name)
        if value is None or name in APPLIES[mode]:
            continue
        if "default" in spec and value == spec["default"]:
            continue
        wrong.append(name)
    if wrong:
        modes = {name: sorted(m for m, names in APPLIES.items() if name in names) for name in wrong}
        detail = ", ".join(f"{name} (mode={'/'.join(modes[name])})" for name in sorted(wrong))
        raise IperfRunError(f"option(s) not used with mode={mode}: {detail}; remove them from the task")


def _positive(params: Mapping[str, Any], name: str, *, minimum: float = 1) -> None:
    value = params.get(name)
    if value is not None and value < minimum:
        raise IperfRunError(f"{name} must be at least {minimum:g}, got {value}")


def _pattern(params: Mapping[str, Any], name: str, regex: re.Pattern[str], example: str) -> None:
    value = params.get(name)
    if value is not None and not regex.match(str(value)):
        raise IperfRunError(f"{name}={value!r} is not a number with an optional unit suffix (for example {example})")


def _not_option_like(params: Mapping[str, Any], name: str) -> None:
    value = params.get(name)
    if value is not None and (not str(value).strip() or str(value).startswith("-") or any(c.isspace() for c in value)):
        raise IperfRunError(f"{name}={value!r} is not a host name or address")


# iperf options that write or read files of their own or detach the server: they would break the
# module's pidfile, log and process checks, or make root read/write a file the task never names.
# (iperf3: -D/--daemon, -I/--pidfile, --logfile, -F/--file; iperf2: -D/--daemon, -o/--output,
# -F/--fileinput, -I/--stdin.)
_FORBIDDEN_LONG = {
    "daemon": "detaches the server from the process the module started and checks (pidfile, guard, stop)",
    "pidfile": "makes iperf write a pidfile of its own, as the task's user, at a path outside the module's "
    "private directory",
    "logfile": "sends iperf's output to another file: the module then sees no banner (server) or no result (client)",
    "file": "makes iperf read (client) or write (server) that file as the task's user",
    "fileinput": "makes iperf2 send the content of that file",
    "output": "makes iperf2 write its report to that file instead of the output the module reads",
    "stdin": "makes iperf2 read its data from standard input, which is /dev/null here",
}
_FORBIDDEN_SHORT = {"D": "daemon", "I": "pidfile", "F": "file", "o": "output"}


def check_extra_args(extra_args: Any) -> None:
    """Refuse ``extra_args`` that is not a list, and iperf options that break the module's own files."""
    if isinstance(extra_args, str):
        try:
            shown = shlex.split(extra_args)
        except ValueError:
            shown = extra_args.split()
        raise IperfRunError(
            f"extra_args must be a list with one item per argument, got the string {extra_args!r}; write it as a list, "
            f"for example extra_args: {shown!r} (YAML: extra_args: [{', '.join(shown)}])"
        )
    for item in extra_args or []:
        text = str(item)
        reason = None
        if text.startswith("--") and len(text) > 2:
            name = text[2:].split("=", 1)[0]
            matches = [long for long in _FORBIDDEN_LONG if long.startswith(name)] if len(name) >= 2 else []
            if name in _FORBIDDEN_LONG or matches:
                reason = _FORBIDDEN_LONG[name if name in _FORBIDDEN_LONG else matches[0]]
        elif text.startswith("-") and len(text) > 1 and not text[1:2].isdigit():
            # the option itself, or any flag of a cluster of letters only (-sD); a cluster with
            # digits is an option with its value attached (-t10, -w256K)
            letters = text[1:] if text[1:].isalpha() else text[1]
            found = [letter for letter in letters if letter in _FORBIDDEN_SHORT]
            if found:
                reason = _FORBIDDEN_LONG[_FORBIDDEN_SHORT[found[0]]]
        if reason is not None:
            raise IperfRunError(
                f"extra_args item {text!r} is refused: it {reason}. The module keeps the server's pidfile and log in "
                "its private directory under state_dir and reads iperf's output itself; remove the item (there is no "
                "need for iperf's own -D/--daemon, -I/--pidfile, --logfile, -F/--file or iperf2's -o/--output)"
            )


def check_raw_args(raw: Mapping[str, Any]) -> None:
    """Checks on the task arguments *before* Ansible converts them (a string would become a list)."""
    if "extra_args" in raw and isinstance(raw["extra_args"], str):
        check_extra_args(raw["extra_args"])


def validate_params(params: Mapping[str, Any], spec: Mapping[str, Mapping[str, Any]]) -> Mode:
    """Checks that need no host: applicability per mode, ranges and formats.

    ``spec`` is the module's argument spec (the action plugin reads it from the module's
    ``DOCUMENTATION``): an option of another mode is accepted at its default only.
    """
    mode: Mode = params["mode"]
    _check_applicable(params, mode, spec)
    port = params.get("port")
    if port is not None and not 1 <= port <= 65535:
        raise IperfRunError(f"port must be between 1 and 65535, got {port}")
    for name in ("duration", "bytes", "streams", "mss", "connect_timeout", "pid"):
        _positive(params, name)
    for name in ("omit", "server_timeout"):
        _positive(params, name, minimum=0)
    if params.get("tos") is not None and not 0 <= params["tos"] <= 255:
        raise IperfRunError(f"tos must be between 0 and 255 (one byte), got {params['tos']}")
    if params.get("streams") is not None and params["streams"] > 128:
        raise IperfRunError(f"streams must be at most 128 (iperf3's limit), got {params['streams']}")
    _timing(params)
    _pattern(params, "window", _SIZE_RE, "'256K'")
    _pattern(params, "length", _SIZE_RE, "'1460' or '128K'")
    _pattern(params, "bandwidth", _RATE_RE, "'100M', '1G' or '0' for unlimited")
    _positive(params, "clients")
    _not_option_like(params, "server")
    _not_option_like(params, "peer")
    _not_option_like(params, "bind")
    binary = params.get("binary")
    if binary is not None and (not binary.strip() or any(ord(c) < 32 or ord(c) == 127 for c in binary)):
        raise IperfRunError(
            f"binary={binary!r} holds a line break or another control character (or is empty); set binary to the "
            "plain path of the iperf binary on the host"
        )
    check_extra_args(params.get("extra_args"))
    check_latency(params)
    state_dir = params.get("state_dir")
    if state_dir is not None and not _SAFE_DIR_RE.match(state_dir):
        raise IperfRunError(
            f"state_dir={state_dir!r} must be an absolute path of letters, digits and ._+-/ (for example /tmp)"
        )
    return mode


#: The longest a client run (``timeout``) or a wait for external clients (``deadline``) may be: one day. Longer
#: is a mistake (milliseconds, an epoch time), and a bound keeps every task bounded in time.
MAX_WAIT = 86400


def _timing(params: Mapping[str, Any]) -> None:
    """The float timing options: finite (NaN and infinity pass every comparison), in range; the fix named."""
    for name in ("timeout", "deadline", "interval", "start_at"):
        value = params.get(name)
        if value is not None and not math.isfinite(value):
            raise IperfRunError(f"{name}={value} is not a finite number of seconds; set {name} to a number")
    interval = params.get("interval")
    if interval is not None and interval < 0:
        raise IperfRunError(f"interval must be 0 (no interval reports) or more seconds, got {interval}")
    what = {"timeout": "how long the client may run", "deadline": "how long to wait for the clients"}
    for name in ("timeout", "deadline"):
        value = params.get(name)
        if value is not None and not 0 < value <= MAX_WAIT:
            raise IperfRunError(
                f"{name} must be more than 0 and at most {MAX_WAIT} seconds (one day; {what[name]}), got {value:g}; "
                f"set {name} to the seconds to wait"
                + (" (for a longer wait, run several collect tasks one after the other)" if name == "deadline" else "")
            )
    start_at = params.get("start_at")
    if start_at is not None and start_at <= 0:
        raise IperfRunError(f"start_at must be an epoch time in seconds (for example now + 5), got {start_at:g}")


def default_timeout(params: Mapping[str, Any]) -> float:
    """Default overall limit of a client run: duration (10 s when unset) + omit + 30 s;
    600 s for a byte-limited run (``bytes``), whose length nobody can know in advance."""
    if params.get("bytes") is not None:
        return 600.0
    return float((params.get("duration") or 10) + (params.get("omit") or 0) + 30)


def check_start_at(start_at: float, now: float) -> None:
    """Catch the usual mistakes in ``start_at`` (milliseconds, far future) before waiting."""
    if start_at > 1e11:
        raise IperfRunError(
            f"start_at={start_at:.0f} looks like milliseconds; pass epoch seconds, "
            f"e.g. {now + 10:.3f} for 10 s from now"
        )
    if start_at - now > 3600:
        raise IperfRunError(
            f"start_at is {start_at - now:.0f} s in the future (more than one hour); pass an epoch time close to now, "
            "e.g. now + a few seconds to let every client reach the barrier"
        )


# --------------------------------------------------------------------------------------------
# iperf command lines
# --------------------------------------------------------------------------------------------


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def build_server_argv(binary: Binary, params: Mapping[str, Any], port: int) -> list[str]:
    """The server command line (text output to a log file)."""
    argv = [binary.path, "-s", "-p", str(port)]
    if binary.tool == "iperf3":
        if binary.at_least(IPERF3_FORCEFLUSH):
            argv.append("--forceflush")
        if params.get("one_off"):
            if not binary.at_least(IPERF3_ONE_OFF):
                raise IperfRunError(f"one_off needs iperf3 3.0.11 or later; {binary.path} is {binary.version}")
            argv.append("-1")
            timeout = params.get("server_timeout") or 0
            if timeout and binary.at_least(IPERF3_IDLE_TIMEOUT_EXITS_ONE_OFF):
                argv += ["--idle-timeout", str(timeout)]
    else:
        if params.get("one_off"):
            raise IperfRunError("one_off is an iperf3 option (iperf2 servers have no one-off mode); remove it")
        if params.get("protocol") == "udp":
            argv.append("-u")
    if params.get("bind"):
        argv += ["-B", params["bind"]]
    if params.get("interval") is not None:
        argv += ["-i", _num(params["interval"])]
    if params.get("window"):
        argv += ["-w", params["window"]]
    argv += list(params.get("extra_args") or [])
    return argv


def build_client_argv(binary: Binary, params: Mapping[str, Any], port: int) -> list[str]:
    """The client command line: iperf3 with ``-J``; iperf2 text with ``-f b`` (exact bytes and
    bit/s) plus ``-e`` from 2.1 (retransmits); see the module documentation for why."""
    tool = binary.tool
    argv = [binary.path, "-c", params["server"], "-p", str(port)]
    refuse = _iperf2_refusals if tool == "iperf2" else _iperf3_refusals
    refuse(binary, params)
    if tool == "iperf3":
        argv.append("-J")
    else:
        argv += ["-f", "b"]
        if binary.at_least(IPERF2_ENHANCED):
            argv.append("-e")
    if params.get("duration") is not None:
        argv += ["-t", str(params["duration"])]
    if params.get("bytes") is not None:
        argv += ["-n", str(params["bytes"])]
    if params.get("streams") is not None:
        argv += ["-P", str(params["streams"])]
    if params.get("interval") is not None:
        argv += ["-i", _num(params["interval"])]
    if params.get("reverse"):
        argv.append("-R")
    if params.get("bidir"):
        argv.append("--bidir" if tool == "iperf3" else "-d")
    if params.get("protocol") == "udp":
        argv.append("-u")
    if params.get("bandwidth") is not None:
        argv += ["-b", params["bandwidth"]]
    if params.get("window"):
        argv += ["-w", params["window"]]
    if params.get("length"):
        argv += ["-l", params["length"]]
    if params.get("mss") is not None:
        argv += ["-M", str(params["mss"])]
    if params.get("omit") is not None:
        argv += ["-O", str(params["omit"])]
    if params.get("zerocopy"):
        argv.append("-Z")
    if params.get("tos") is not None:
        argv += ["-S", str(params["tos"])]
    if params.get("bind"):
        argv += ["-B", params["bind"]]
    if params.get("connect_timeout") is not None:
        argv += ["--connect-timeout", str(params["connect_timeout"])]
    argv += list(params.get("extra_args") or [])
    return argv


def _iperf3_refusals(binary: Binary, params: Mapping[str, Any]) -> None:
    if params.get("bidir") and not binary.at_least(IPERF3_BIDIR):
        raise IperfRunError(
            f"bidir needs iperf3 3.7 or later (--bidir); {binary.path} is {binary.version}. "
            "Run two tests (reverse=false and reverse=true) instead"
        )
    if params.get("connect_timeout") is not None and not binary.at_least(IPERF3_CONNECT_TIMEOUT):
        raise IperfRunError(
            f"connect_timeout needs iperf3 3.2 or later; {binary.path} is {binary.version}. Remove it; "
            "the overall timeout still bounds the run"
        )


def _iperf2_refusals(binary: Binary, params: Mapping[str, Any]) -> None:
    for name, why in (
        ("omit", "-O (omit the first seconds) is an iperf3 option"),
        ("zerocopy", "iperf2's -Z selects the TCP congestion control algorithm, not zero copy"),
        ("connect_timeout", "--connect-timeout is an iperf3 option"),
    ):
        if params.get(name):
            raise IperfRunError(f"{name} cannot be used with iperf2: {why}; remove it or use tool=iperf3")
    if params.get("reverse") and not binary.at_least(IPERF2_REVERSE):
        raise IperfRunError(
            f"reverse needs iperf2 2.1 or later (-R); {binary.path} is iperf2 {binary.version}. "
            "Run the client on the other host instead (swap the roles), or use bidir=true (-d, dual test)"
        )
    bandwidth = params.get("bandwidth")
    if bandwidth is not None and "/" in bandwidth:
        raise IperfRunError(f"bandwidth={bandwidth!r}: the /burst suffix is an iperf3 feature; remove it for iperf2")
    if bandwidth is not None and params.get("protocol") != "udp" and not binary.at_least(IPERF2_TCP_BANDWIDTH):
        raise IperfRunError(
            f"bandwidth with protocol=tcp needs iperf2 2.0.13 or later: in {binary.version} -b implies UDP, so "
            "the test would silently become a UDP test. Set protocol=udp or remove bandwidth"
        )
