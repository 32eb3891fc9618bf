# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Backend of the ``esxilab.iperf.iperf_run`` action plugin: run iperf2/iperf3 over a plain shell.

Everything here runs on the controller and is pure: it builds POSIX ``sh`` scripts (every
argument through ``shlex.quote``), reads their output, and tells what went wrong and how to
fix it. The one effect, running a script on the host, is the ``execute`` callable the action
plugin passes in (``_low_level_execute_command``), so the whole flow is unit-testable with a
fake host. No Ansible import: the scripts need only a POSIX shell (busybox ``ash`` on ESXi,
``dash``/``bash`` on Linux) and no Python on the host.

Output protocol of every script: a *marker line* ``@@ESXILAB:<token> <name> <args>`` starts a
section, the lines up to the next marker are its text. Markers are printed with a newline in
front (``printf '\\n%s\\n'``) so a section always starts on a fresh line; the reader removes
exactly that one newline again, so a section holds the command output byte for byte.

Remote files live in a *private directory* ``<state_dir>/esxilab-iperf-<uid>`` (``state_dir``
default ``/tmp``, ``uid`` the numeric user id the scripts run as), created with ``mkdir -m 700`` and
refused when it is a symbolic link, not a directory, owned by another user or open to others
(:func:`state_snippet`). In it: ``esxilab-iperf-<port>[-<bind>].pid`` (key=value lines ``pid``,
``guard``, ``tool``, ``port``, ``bind``, ``binary``, written with ``printf '%s\\n'`` arguments),
``esxilab-iperf-<port>[-<bind>].log`` (the server's own output) and the client's
``esxilab-iperf-<shell pid>.out/.err/.timedout``. Every file is removed first and then created under
``set -C`` (noclobber: ``O_EXCL``), so nothing is written through a link. Paths are derived from
the file *names* (checked against :data:`PIDFILE_NAME_RE`), never from file content; a recorded
pid counts as our server only while its command line still shows ``<binary> -s -p <port>``
(:func:`is_our_server`), checked again by the stop script right before any ``kill``. A *guard* shell
started next to each server kills it after ``server_timeout`` seconds and removes the pidfile once
the server is gone, so a forgotten server dies by itself.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import ipaddress
import math
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from ansible_collections.esxilab.iperf.plugins.modules.iperf_run import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils._argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.result import IperfParseError, Result
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.tools import ESXI_PATHS, describe_tool, version_tuple

__all__ = [
    "ARGUMENT_SPEC",
    "DEFAULT_BINARIES",
    "MUTUALLY_EXCLUSIVE",
    "REQUIRED_IF",
    "CommandOutput",
    "Diagnosis",
    "HostCaps",
    "IperfRunError",
    "build_client_argv",
    "build_client_script",
    "build_probe_script",
    "build_server_argv",
    "build_server_script",
    "build_stop_script",
    "check_raw_args",
    "diagnose",
    "is_our_server",
    "parse_listeners",
    "parse_sections",
    "parse_started_at",
    "run",
]

Tool = Literal["iperf2", "iperf3"]
Mode = Literal["server", "client", "stop"]
Clock = Literal["epochrealtime", "date_ns", "date_s"]
Nap = Literal["fracsleep", "usleep", "none"]

MARKER = "@@ESXILAB:"
DEFAULT_PORTS: dict[Tool, int] = {"iperf3": 5201, "iperf2": 5001}

# Where iperf lives, in the order a binary is chosen when `binary` is not set. ESXi first:
# the `.copy` binaries are the ones that may listen (see the module documentation), then the
# shipped ones, then whatever is on PATH (Linux).
DEFAULT_BINARIES: tuple[str, ...] = (
    *ESXI_PATHS,
    "/usr/lib/vmware/vsan/bin/iperf.copy",
    "/usr/lib/vmware/vsan/bin/iperf",
    "iperf3",
    "iperf",
)

# Version thresholds (first release with the feature). iperf3: RELNOTES.md of esnet/iperf;
# iperf2: see the module documentation (2.1 is the conservative floor where unsure).
IPERF3_ONE_OFF = (3, 0, 11)
IPERF3_FORCEFLUSH = (3, 1, 5)
IPERF3_CONNECT_TIMEOUT = (3, 2)
IPERF3_BIDIR = (3, 7)
IPERF3_IDLE_TIMEOUT_EXITS_ONE_OFF = (3, 11)
IPERF2_REVERSE = (2, 1)
IPERF2_ENHANCED = (2, 1)
IPERF2_TCP_BANDWIDTH = (2, 0, 13)

# How long the server start waits for the banner (or the process to die) before answering.
SERVER_START_WAIT = 1.0
# Grace between SIGTERM and SIGKILL when a run or a server has to be killed.
KILL_GRACE = 2

ARGUMENT_SPEC = argument_spec(DOCUMENTATION)  # the options of the module's DOCUMENTATION
MUTUALLY_EXCLUSIVE: list[list[str]] = [["duration", "bytes"], ["reverse", "bidir"]]
REQUIRED_IF: list[list[Any]] = [["mode", "client", ["server"]]]

_COMMON = {"mode", "tool", "binary", "port"}
_APPLIES: dict[Mode, set[str]] = {
    "server": _COMMON
    | {"bind", "protocol", "interval", "window", "extra_args", "state_dir", "server_timeout", "one_off"},
    "client": _COMMON
    | {
        "bind",
        "protocol",
        "interval",
        "window",
        "extra_args",
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
        "state_dir",
        "peer_is_esxi",
    },
    "stop": {"mode", "tool", "port", "bind", "pid", "state_dir"},
}

_SIZE_RE = re.compile(r"^[0-9]+(?:\.[0-9]+)?[kKmMgG]?$")
_RATE_RE = re.compile(r"^[0-9]+(?:\.[0-9]+)?[kKmMgGtT]?(?:/[0-9]+)?$")
_SAFE_DIR_RE = re.compile(r"^/[A-Za-z0-9._/+-]*$")


class IperfRunError(Exception):
    """A failure to report to the user: ``message`` names the cause and the fix.

    ``result`` holds what is known anyway (command, raw output, parsed result) and goes into
    the failed task result.
    """

    def __init__(self, message: str, result: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.result: dict[str, Any] = dict(result or {})


class CommandOutput(NamedTuple):
    """What running one script on the host gave back."""

    rc: int
    stdout: str
    stderr: str


Execute = Callable[[str], CommandOutput]


# --------------------------------------------------------------------------------------------
# Section protocol
# --------------------------------------------------------------------------------------------


@dataclass
class Section:
    """One marker-delimited part of a script's output."""

    name: str
    args: str
    text: str


def _marker(token: str, name: str, args: str = "") -> str:
    """Shell command printing a marker line (``args`` is shell text, expanded by the shell)."""
    label = f"{MARKER}{token} {name}"
    if args:
        return f"printf '\\n%s\\n' \"{label} {args}\""
    return f"printf '\\n%s\\n' '{label}'"


def _normalize_newlines(text: str) -> str:
    """Undo a pty's ``\\r\\n`` (ssh ``-tt``) when every newline of the output has one."""
    if "\r\n" in text and text.count("\r\n") == text.count("\n"):
        return text.replace("\r\n", "\n")
    return text


def parse_sections(stdout: str, token: str) -> list[Section]:
    """Split a script's stdout into sections; text before the first marker is dropped."""
    text = _normalize_newlines(stdout)
    prefix = f"{MARKER}{token} "
    sections: list[Section] = []
    current: Section | None = None
    lines: list[str] = []
    for line in text.split("\n"):
        if line.startswith(prefix):
            if current is not None:
                current.text = _section_text(lines)
                sections.append(current)
            name, _sep, args = line[len(prefix) :].partition(" ")
            current = Section(name=name, args=args, text="")
            lines = []
        elif current is not None:
            lines.append(line)
    if current is not None:
        current.text = _section_text(lines)
        sections.append(current)
    return sections


def _section_text(lines: list[str]) -> str:
    # The body is "\n".join(lines) + "\n", and that last "\n" is the one printed in front of
    # the next marker: without it, the join is the command output exactly.
    return "\n".join(lines)


def _kv(args: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in args.split():
        key, sep, value = item.partition("=")
        if sep:
            out[key] = value
    return out


def _first(sections: Sequence[Section], name: str) -> Section | None:
    for section in sections:
        if section.name == name:
            return section
    return None


# --------------------------------------------------------------------------------------------
# Private state directory
# --------------------------------------------------------------------------------------------

PIDFILE_NAME_RE = re.compile(r"^esxilab-iperf-(?P<port>[0-9]{1,5})(?:-(?P<bind>[0-9A-Za-z._]+))?\.pid$")
_PIDFILE_KEYS = ("pid", "guard", "tool", "port", "bind", "binary")


def private_dir(state_dir: str, uid: int | str) -> str:
    """``<state_dir>/esxilab-iperf-<uid>``: where every file of this module lives."""
    return f"{state_dir.rstrip('/')}/esxilab-iperf-{int(uid)}"


def state_snippet(token: str, state_dir: str, *, create: bool) -> str:
    """Shell text that sets ``$_pd`` to the private directory and checks it (creates it if asked).

    Prints ``state status=ok|absent|error [error=<kind>] uid=<uid> [owner=..] [mode=..]``.
    ``absent`` (only when ``create`` is false) means there is nothing of ours here yet. Refused
    (``status=error``): ``noid`` (``id -u`` failed), ``missing`` (``state_dir`` does not exist),
    ``open_parent`` (``state_dir`` writable by everyone without the sticky bit: another user
    could swap our directory), ``symlink``, ``notdir``, ``owner`` (another user's), ``mode``
    (not ``drwx------``), ``mkdir`` (could not create it), ``foreign_parent`` (``state_dir`` owned by
    a user other than root or this one, who could rename our directory). ``$_se`` is empty when usable.
    Uses ``id``, ``ls -ldn`` (``ls -ld`` and owner names where ``-n`` is missing), ``mkdir -m``
    and ``[ -L ]``: busybox has all of them.
    """
    q_sd = shlex.quote(state_dir)
    mkdir = 'mkdir -m 700 "$_pd" 2>/dev/null || { [ -e "$_pd" ] || [ -L "$_pd" ] || _se=mkdir; }' if create else ":"
    return "\n".join(
        [
            # _ls PATH: its mode string (_lm) and owner (_lo): numeric with -n, the name where an
            # old ls lacks -n; _me NAME: that owner is this user
            '_ls() { set -f; set -- $(ls -ldn "$1" 2>/dev/null || ls -ld "$1" 2>/dev/null); set +f; '
            "_lm=${1:-unknown}; _lo=${3:-unknown}; }",
            '_me() { [ "$1" = "$_u" ] || [ "$1" = "$_un" ]; }',
            f"_sd={q_sd}; _se=; _sx=; _st=ok; _u=$(id -u 2>/dev/null); _un=$(id -un 2>/dev/null); _pd=",
            "case $_u in ''|*[!0-9]*) _se=noid ;; esac",
            'if [ -z "$_se" ]; then',
            '  _pd="${_sd%/}/esxilab-iperf-$_u"',
            '  if [ ! -d "$_sd" ]; then _se=missing',
            '  else _ls "$_sd/"',
            '    case $_lm in d???????w[!tT]*) _se=open_parent; _sx="mode=$_lm" ;; esac',
            '    if [ -z "$_se" ] && [ "$_lo" != 0 ] && [ "$_lo" != root ] && ! _me "$_lo"; then',
            '      _se=foreign_parent; _sx="owner=$_lo"',
            "    fi",
            "  fi",
            "fi",
            'if [ -z "$_se" ] && [ ! -e "$_pd" ] && [ ! -L "$_pd" ]; then',
            f"  {mkdir}",
            "fi",
            'if [ -z "$_se" ]; then',
            '  if [ -L "$_pd" ]; then _se=symlink',
            '  elif [ ! -e "$_pd" ]; then _st=absent',
            '  elif [ ! -d "$_pd" ]; then _se=notdir',
            '  else _ls "$_pd"',
            '    if ! _me "$_lo"; then _se=owner; _sx="owner=$_lo"',
            '    else case $_lm in drwx------*) ;; *) _se=mode; _sx="mode=$_lm" ;; esac',
            "    fi",
            "  fi",
            "fi",
            'if [ -n "$_se" ]; then _st=error; fi',
            _marker(token, "state", "status=$_st error=$_se uid=$_u $_sx"),
        ]
    )


def state_error(section: Section | None, state_dir: str) -> IperfRunError | None:
    """The error to raise for a ``state`` section that refused the private directory (else None)."""
    if section is None:
        return IperfRunError(f"the host script did not report on state_dir={state_dir!r}; nothing was done")
    kv = _kv(section.args)
    if kv.get("status") != "error":
        return None
    kind = kv.get("error", "")
    uid = kv.get("uid", "")
    where = private_dir(state_dir, uid) if uid.isdigit() else f"{state_dir.rstrip('/')}/esxilab-iperf-<uid>"
    fix = (
        "Set state_dir to a directory only this user (or root) can write, or check who made it and remove "
        f"it (rm -r {shlex.quote(where)}) so that the module creates it again"
    )
    messages = {
        "noid": "could not read the user id on the host (id -u printed no number); the module needs it to name "
        "its private directory",
        "missing": f"state_dir={state_dir!r} does not exist on the host; create it (mkdir -p {shlex.quote(state_dir)})"
        " or set state_dir to an existing directory (default /tmp)",
        "open_parent": f"state_dir={state_dir!r} is writable by every user but has no sticky bit "
        f"({kv.get('mode', '')}): another user could replace the module's private directory in it. Use a directory "
        "with the sticky bit (as /tmp has: chmod +t) or one only this user can write",
        "foreign_parent": f"state_dir={state_dir!r} belongs to uid {kv.get('owner', '?')}, neither root nor uid {uid} "
        "that runs the task: its owner could rename the module's private directory and put a link in its place. Set "
        "state_dir to a directory owned by root (such as /tmp) or by this user",
        "symlink": f"the private directory {where} in state_dir is a symbolic link, not made by this module; refusing "
        f"to use it (someone may be redirecting root's files). {fix}",
        "notdir": f"{where} (in state_dir) exists and is not a directory; refusing to use it. {fix}",
        "owner": f"the private directory {where} (in state_dir) belongs to uid {kv.get('owner', '?')}, not to uid "
        f"{uid} that runs the task; refusing to use it. {fix}",
        "mode": f"the private directory {where} (in state_dir) has mode {kv.get('mode', '?')}, not drwx------; "
        f"refusing to use it. {fix}",
        "mkdir": f"could not create the private directory {where} in state_dir={state_dir!r}: is state_dir "
        "writable for this user? Set state_dir to a writable directory",
    }
    message = messages.get(kind, f"state_dir={state_dir!r} cannot be used ({section.args})")
    return IperfRunError(message, {"error_kind": "state_dir"})


def _cmdline_function(proc: str = "/proc") -> str:
    """``_cmdline PID``: print the process's command line (arguments joined by spaces).

    Linux: ``/proc/PID/cmdline``. Elsewhere: busybox ``ps -o pid,args``, procps ``ps -e -ww -o
    pid,args``, then ESXi's ``ps -c`` (world id or cartel id in the first two columns; its
    format is not verified on a real host). Prints nothing when the process is unknown.
    """
    q_proc = shlex.quote(proc)
    return (
        "_cmdline() { "
        f"if [ -r {q_proc}/\"$1\"/cmdline ]; then tr '\\000' ' ' <{q_proc}/\"$1\"/cmdline; echo; return 0; fi; "
        'for _po in "-o pid,args" "-e -ww -o pid,args" "-c"; do '
        '_l=$(ps $_po 2>/dev/null | awk -v p="$1" -v o="$_po" '
        "'$1 == p || ($2 == p && o == \"-c\") { print; exit }'); "
        'if [ -n "$_l" ]; then echo "$_l"; return 0; fi; done; return 1; }'
    )


# `_isours PID BINARY PORT`: the process runs `<binary> -s -p <port>` (what build_server_argv
# starts), or an iperf binary a wrapper exec'd with those arguments. See is_our_server.
_ISOURS = (
    '_isours() { _c=" $(_cmdline "$1") "; case $_c in *" $2 -s -p $3 "*) return 0 ;; '
    '*iperf*" -s -p $3 "*) return 0 ;; esac; return 1; }'
)
# `_isguard GUARD PID`: the guard shell started for server PID (its $0 and first argument).
_ISGUARD = '_isguard() { case " $(_cmdline "$1") " in *" esxilab-iperf-guard $2 "*) return 0 ;; esac; return 1; }'


def is_our_server(cmdline: str, binary: str, port: int | str) -> bool:
    """Whether ``cmdline`` (as ``_cmdline`` prints it) is the server this module started.

    The same rule as the shell's ``_isours``: ``<binary> -s -p <port>`` in the command line, or
    an ``iperf`` name followed by ``-s -p <port>`` (a wrapper that exec'd the real binary).
    """
    text = f" {cmdline.strip()} "
    tail = f" -s -p {port} "
    if binary and f" {binary}{tail}" in text:
        return True
    head, sep, _rest = text.partition(tail)
    return bool(sep) and "iperf" in head


# --------------------------------------------------------------------------------------------
# Host capabilities (probe)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HostCaps:
    """What the host's shell offers for clocks, short sleeps and timeouts.

    ``clock``: how the script reads the time with sub-second resolution, best first --
    ``epochrealtime`` (the shell's ``$EPOCHREALTIME``: microseconds, no fork; bash 5,
    busybox ash 1.3x), ``date_ns`` (``date +%s.%N`` printing nanosecond digits: GNU
    coreutils), ``date_s`` (whole seconds only: busybox ``date`` prints a literal ``%N``).
    ``nap``: how it sleeps less than a second -- ``fracsleep`` (``sleep 0.25``: GNU, busybox
    with float sleep), ``usleep`` (busybox applet, ESXi), or ``none``.
    """

    clock: Clock = "date_s"
    nap: Nap = "none"
    gnu_timeout: bool = False
    esxi: bool = False

    @property
    def clock_source(self) -> str:
        return {"epochrealtime": "EPOCHREALTIME", "date_ns": "date +%s.%N", "date_s": "date +%s"}[self.clock]

    @property
    def clock_resolution(self) -> float:
        return {"epochrealtime": 1e-6, "date_ns": 1e-9, "date_s": 1.0}[self.clock]


_EPOCH_FRACTION_RE = re.compile(r"^\d+[.,]\d+$")
_DATE_NS_RE = re.compile(r"^\d+\.\d{9}$")


def parse_caps(text: str) -> HostCaps:
    """Read the ``env`` section of the probe."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip()
    clock: Clock = "date_s"
    if _EPOCH_FRACTION_RE.match(values.get("epochrealtime", "")):
        clock = "epochrealtime"
    elif _DATE_NS_RE.match(values.get("date_ns", "")):
        clock = "date_ns"
    nap: Nap = "none"
    if values.get("fracsleep") == "1":
        nap = "fracsleep"
    elif values.get("usleep") == "1":
        nap = "usleep"
    return HostCaps(
        clock=clock,
        nap=nap,
        gnu_timeout=values.get("gnu_timeout") == "1",
        esxi=values.get("uname", "") == "VMkernel",
    )


# The first executable called $1 in $PATH. An explicit [ -x ] walk rather than `command -v`,
# whose behaviour varies between old busybox builds (as in esxilab.iperf.iperf_facts).
_WHICH = (
    "_which() { _wi=$IFS; IFS=:; set -f; for _wd in $PATH; do "
    'if [ -x "${_wd:-.}/$1" ] && [ ! -d "${_wd:-.}/$1" ]; then IFS=$_wi; set +f; echo "${_wd:-.}/$1"; return 0; fi; '
    "done; IFS=$_wi; set +f; return 1; }"
)


def build_probe_script(
    token: str,
    *,
    candidates: Sequence[str] = (),
    listing: bool = False,
    state_dir: str | None = None,
    pid: int | None = None,
) -> str:
    """A read-only script telling the host's capabilities, its iperf binaries and our servers."""
    lines = [
        _WHICH,
        _marker(token, "env"),
        'echo "epochrealtime=${EPOCHREALTIME:-}"',
        'echo "date_ns=$(date +%s.%N 2>/dev/null)"',
        "if _which usleep >/dev/null; then echo usleep=1; else echo usleep=0; fi",
        "if sleep 0.01 >/dev/null 2>&1; then echo fracsleep=1; else echo fracsleep=0; fi",
        "if timeout --version 2>/dev/null | grep -q coreutils; then echo gnu_timeout=1; else echo gnu_timeout=0; fi",
        'echo "uname=$(uname -s 2>/dev/null)"',
    ]
    if candidates:
        quoted = " ".join(shlex.quote(c) for c in candidates)
        missing = _marker(token, "missing", "$c")
        lines += [
            f"for c in {quoted}; do",
            "  case $c in",
            f'    */*) if [ -x "$c" ] && [ ! -d "$c" ]; then p=$c; else {missing}; continue; fi ;;',
            f'    *) p=$(_which "$c") || {{ {missing}; continue; }} ;;',
            "  esac",
            '  _v=$("$p" -v </dev/null 2>&1); _r=$?',
            "  " + _marker(token, "version", "rc=$_r $p"),
            """  printf '%s\\n' "$_v" | head -n 5""",
            "done",
        ]
    if listing:
        tools = (("ss", "ss -lntu"), ("netstat", "netstat -lntu"), ("esxcli", "esxcli network ip connection list"))
        for index, (name, command) in enumerate(tools):
            keyword = "if" if index == 0 else "elif"
            marker = _marker(token, "listing", name)
            lines.append(f"{keyword} _which {name} >/dev/null; then {marker}; {command} 2>&1")
        lines.append(f"else {_marker(token, 'listing', 'none')}; fi")
    if state_dir is not None:
        lines += [
            state_snippet(token, state_dir, create=False),
            _cmdline_function(),
            'if [ "$_st" = ok ]; then',
            '  for f in "$_pd"/esxilab-iperf-*.pid; do',
            '    [ -f "$f" ] && [ ! -L "$f" ] || continue',
            "    " + _marker(token, "pidfile", "${f##*/}"),
            '    head -n 20 "$f"',
            "    p=$(sed -n 's/^pid=\\([0-9][0-9]*\\)$/\\1/p' \"$f\" | head -n 1)",
            '    if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then a=1; else a=0; fi',
            "    " + _marker(token, "process", "pid=$p alive=$a"),
            '    if [ "$a" = 1 ]; then _cmdline "$p"; fi',
            "  done",
            "fi",
        ]
    if pid is not None:
        lines += [
            f"if kill -0 {int(pid)} 2>/dev/null; then a=1; else a=0; fi",
            _marker(token, "pid", f"pid={int(pid)} alive=$a"),
        ]
    lines.append(_marker(token, "done"))
    return "\n".join(lines) + "\n"


@dataclass
class Probe:
    """What the probe script found."""

    caps: HostCaps
    binaries: list[dict[str, Any]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    listing_via: str | None = None
    listing: str = ""
    pidfiles: list[dict[str, Any]] = field(default_factory=list)
    pid_alive: bool | None = None
    state: Section | None = None


def parse_probe(out: CommandOutput, token: str) -> Probe:
    """Read the probe script's output; a probe that printed nothing usable is an error."""
    sections = parse_sections(out.stdout, token)
    env = _first(sections, "env")
    if env is None or _first(sections, "done") is None:
        shown = (out.stderr or out.stdout).strip()[-400:] or "no output"
        raise IperfRunError(
            f"could not run the probe script on the host (exit status {out.rc}): {shown}. "
            "The host needs a POSIX shell as /bin/sh (busybox ash on ESXi is enough).",
            {"rc": out.rc, "stdout": out.stdout, "stderr": out.stderr},
        )
    probe = Probe(caps=parse_caps(env.text))
    for section in sections:
        if section.name == "missing":
            probe.missing.append(section.args)
        elif section.name == "version":
            rc: int | None = None
            path = section.args
            if path.startswith("rc="):
                status, _sep, path = path.partition(" ")
                rc = _int_or_none(status[3:])
            probe.binaries.append(describe_tool(path, section.text, rc))
        elif section.name == "listing":
            probe.listing_via = section.args
            probe.listing = section.text
        elif section.name == "state":
            probe.state = section
        elif section.name == "pidfile":
            entry = read_pidfile(section.args, section.text)
            if entry is not None:
                probe.pidfiles.append(entry)
        elif section.name == "process" and probe.pidfiles and "checked" not in probe.pidfiles[-1]:
            last = probe.pidfiles[-1]
            kv = _kv(section.args)
            last["checked"] = True
            last["alive"] = (
                kv.get("alive") == "1"
                and kv.get("pid") == str(last.get("pid"))
                and is_our_server(section.text, str(last.get("binary") or ""), last["port"])
            )
        elif section.name == "pid":
            probe.pid_alive = _kv(section.args).get("alive") == "1"
    return probe


def read_pidfile(name: str, text: str) -> dict[str, Any] | None:
    """A pidfile's entry from its file name and content, or None when the name is not ours.

    Only the keys this module writes are read, each from its first line; ``port`` and ``bind``
    come from the name, which the probe took from the directory listing, and so do ``path``
    and ``log`` (relative to the private directory: ``name`` / ``log_name``). ``alive`` is set
    later from the process check, never from the file.
    """
    match = PIDFILE_NAME_RE.match(name.strip())
    if match is None:
        return None
    content: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key in _PIDFILE_KEYS and key not in content:
            content[key] = value
    pid = content.get("pid", "")
    guard = content.get("guard", "")
    return {
        "name": match.group(0),
        "log_name": match.group(0)[: -len(".pid")] + ".log",
        "pid": int(pid) if pid.isdigit() else None,
        "guard": int(guard) if guard.isdigit() else None,
        "tool": content.get("tool") if content.get("tool") in ("iperf2", "iperf3") else None,
        "port": int(match.group("port")),
        "bind": content.get("bind")
        if match.group("bind") and _name_part(content.get("bind", "")) == match.group("bind")
        else (match.group("bind") or None),
        "binary": content.get("binary"),
        "alive": False,
    }


@dataclass(frozen=True)
class Binary:
    """The iperf binary chosen on the host."""

    path: str
    tool: Tool
    version: str

    @property
    def numbers(self) -> tuple[int, ...]:
        numbers: tuple[int, ...] = version_tuple(self.version)
        return numbers

    def at_least(self, minimum: tuple[int, ...]) -> bool:
        return self.numbers >= minimum


def select_binary(probe: Probe, *, tool: Tool | None, binary: str | None) -> Binary:
    """Pick the binary to run: the one named by ``binary``, else the first runnable candidate."""
    runnable = [b for b in probe.binaries if b["runnable"]]
    if binary is not None:
        if not probe.binaries:
            raise IperfRunError(
                f"binary {binary!r} does not exist or is not executable on the host; "
                "set binary to the full path of iperf3/iperf (esxilab.iperf.iperf_facts lists what the host has)"
            )
        found = probe.binaries[0]
        if not found["runnable"]:
            raise IperfRunError(f"binary {binary!r} cannot be used: {found['error']}. {_EXEC_HINT}")
        if tool is not None and found["family"] != tool:
            raise IperfRunError(
                f"binary {found['path']} is {found['family']} {found['version']}, but tool={tool}; "
                f"set tool={found['family']} or point binary at an {tool} binary"
            )
        return Binary(found["path"], found["family"], found["version"])
    matching = [b for b in runnable if tool is None or b["family"] == tool]
    if matching:
        chosen = matching[0]
        return Binary(chosen["path"], chosen["family"], chosen["version"])
    looked = ", ".join(DEFAULT_BINARIES)
    broken = "; ".join(f"{b['path']}: {b['error']}" for b in probe.binaries if not b["runnable"])
    what = tool or "iperf3 or iperf2"
    msg = f"no usable {what} binary on the host (looked for: {looked})"
    if broken:
        msg += f"; found but unusable: {broken}"
    others = [b for b in runnable if tool is not None and b["family"] != tool]
    if others:
        other = others[0]
        msg += f"; the host has {other['family']} {other['version']} at {other['path']} (set tool accordingly)"
    msg += (
        ". Install one (on ESXi: esxilab.iperf.esxi_iperf_install; on Linux: the iperf3/iperf package) "
        "or set binary to its full path"
    )
    raise IperfRunError(msg)


_EXEC_HINT = (
    "On ESXi 8, execInstalledOnly blocks binaries that no VIB installed (such as a hand-made .copy); "
    "see esxilab.iperf.esxi_iperf_install"
)


# --------------------------------------------------------------------------------------------
# Listening sockets
# --------------------------------------------------------------------------------------------


class Listener(NamedTuple):
    """One listening socket from ss / netstat / esxcli."""

    proto: str
    host: str
    port: int


_ADDR_PORT_RE = re.compile(r"^(?P<host>.*)[:.](?P<port>\d+)$")
_WILDCARDS = {"", "*", "0.0.0.0", "::", "::0", "0:0:0:0:0:0:0:0"}


def parse_listeners(text: str) -> list[Listener]:
    """Listening TCP sockets and bound UDP sockets from ``ss -lntu``, ``netstat -lntu`` or
    ``esxcli network ip connection list`` (the first column is the protocol in all three)."""
    found: list[Listener] = []
    for line in text.splitlines():
        tokens = line.split()
        if len(tokens) < 4:
            continue
        proto = tokens[0].lower()
        if proto.startswith("tcp"):
            if not any(t.upper() == "LISTEN" for t in tokens):
                continue
            kind = "tcp"
        elif proto.startswith("udp"):
            kind = "udp"
        else:
            continue
        for token in tokens[1:]:
            match = _ADDR_PORT_RE.match(token)
            if match:
                host = match.group("host").strip("[]").split("%", 1)[0]
                found.append(Listener(kind, host, int(match.group("port"))))
                break
    return found


def port_conflicts(listeners: Sequence[Listener], *, proto: str, port: int, bind: str | None) -> list[Listener]:
    """The sockets that would keep a server from binding ``bind:port``."""
    out = []
    for item in listeners:
        if item.proto != proto or item.port != port:
            continue
        if bind is None or bind in _WILDCARDS or item.host in _WILDCARDS or item.host == bind:
            out.append(item)
    return out


# --------------------------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------------------------


def _check_applicable(params: Mapping[str, Any], mode: Mode) -> None:
    wrong = []
    for name, spec in ARGUMENT_SPEC.items():
        value = params.get(name)
        if value is None or name in _APPLIES[mode]:
            continue
        if "default" in spec and value == spec["default"]:
            continue
        wrong.append(name)
    if wrong:
        modes = {name: sorted(m for m, names in _APPLIES.items() if name in names) for name in wrong}
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


def validate_params(params: Mapping[str, Any]) -> Mode:
    """Checks that need no host: applicability per mode, ranges and formats."""
    mode: Mode = params["mode"]
    _check_applicable(params, mode)
    port = params.get("port")
    if port is not None and not 1 <= port <= 65535:
        raise IperfRunError(f"port must be between 1 and 65535, got {port}")
    for name in ("duration", "bytes", "streams", "mss", "connect_timeout", "pid"):
        _positive(params, name)
    for name in ("interval", "omit", "server_timeout"):
        _positive(params, name, minimum=0)
    if params.get("tos") is not None and not 0 <= params["tos"] <= 255:
        raise IperfRunError(f"tos must be between 0 and 255 (one byte), got {params['tos']}")
    if params.get("streams") is not None and params["streams"] > 128:
        raise IperfRunError(f"streams must be at most 128 (iperf3's limit), got {params['streams']}")
    timeout = params.get("timeout")
    if timeout is not None and timeout <= 0:
        raise IperfRunError(f"timeout must be more than 0 seconds, got {timeout}")
    _pattern(params, "window", _SIZE_RE, "'256K'")
    _pattern(params, "length", _SIZE_RE, "'1460' or '128K'")
    _pattern(params, "bandwidth", _RATE_RE, "'100M', '1G' or '0' for unlimited")
    _not_option_like(params, "server")
    _not_option_like(params, "bind")
    binary = params.get("binary")
    if binary is not None and (not binary.strip() or any(ord(c) < 32 or ord(c) == 127 for c in binary)):
        raise IperfRunError(
            f"binary={binary!r} holds a line break or another control character (or is empty); set binary to the "
            "plain path of the iperf binary on the host"
        )
    check_extra_args(params.get("extra_args"))
    state_dir = params.get("state_dir")
    if state_dir is not None and not _SAFE_DIR_RE.match(state_dir):
        raise IperfRunError(
            f"state_dir={state_dir!r} must be an absolute path of letters, digits and ._+-/ (for example /tmp)"
        )
    return mode


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


# --------------------------------------------------------------------------------------------
# Shell snippets: clock, naps, barrier
# --------------------------------------------------------------------------------------------


def _now_us_function(caps: HostCaps) -> str:
    """``_now_us``: prints the time in microseconds (whole seconds * 10^6 on ``date_s``)."""
    if caps.clock == "date_s":
        return "_now_us() { echo $(( $(date +%s) * 1000000 )); }"
    source = "$EPOCHREALTIME" if caps.clock == "epochrealtime" else "$(date +%s.%N)"
    # Leading zeros would make the fraction octal: "1$_f - 1000000" keeps it decimal.
    return (
        f"_now_us() {{ _t={source}; _s=${{_t%%[.,]*}}; _f=${{_t#*[.,]}}000000; "
        '_f=${_f%"${_f#??????}"}; echo $(( _s * 1000000 + 1$_f - 1000000 )); }'
    )


def _nap_us(caps: HostCaps, var: str) -> str:
    """Sleep ``$var`` microseconds (< 10 s) with the best tool the host has."""
    if caps.nap == "fracsleep":
        return f'sleep "$(( {var} / 1000000 )).$(printf %06d $(( {var} % 1000000 )))"'
    if caps.nap == "usleep":
        return f'usleep "{var}"'
    raise ValueError("no sub-second sleep on this host")


def _short_nap(caps: HostCaps) -> tuple[str, int]:
    """A ~0.1 s pause and how many make SERVER_START_WAIT (one 1 s sleep without naps)."""
    if caps.nap == "fracsleep":
        return "sleep 0.1", int(SERVER_START_WAIT / 0.1)
    if caps.nap == "usleep":
        return "usleep 100000", int(SERVER_START_WAIT / 0.1)
    return "sleep 1", max(1, int(SERVER_START_WAIT))


def barrier_method(caps: HostCaps) -> str:
    """How the barrier waits on this host, in words (returned to the user)."""
    if caps.clock == "date_s":
        tail = {
            "fracsleep": "then sleep for the fraction",
            "usleep": "then usleep for the fraction",
            "none": "then busy-wait for the next whole second (no sub-second sleep here)",
        }[caps.nap]
        return f"whole-second sleep, busy-wait on 'date +%s' until the target second, {tail}"
    fine = {
        "fracsleep": "fractional sleep",
        "usleep": "usleep",
        "none": f"busy-wait on {caps.clock_source}",
    }[caps.nap]
    return f"whole-second sleep, then {fine} to the target (clock: {caps.clock_source})"


def build_barrier(token: str, caps: HostCaps, start_at: float) -> str:
    """Shell text that waits until ``start_at`` (epoch seconds, the HOST's clock).

    Prints ``barrier now_us=<time on arrival> target_us=<target>`` first, so the controller can
    tell a barrier that was already past.
    """
    target_us = round(start_at * 1_000_000)
    lines = [
        _now_us_function(caps),
        f"_tgt={target_us}",
        "_n=$(_now_us)",
        _marker(token, "barrier", "now_us=$_n target_us=$_tgt"),
    ]
    if caps.clock != "date_s":
        lines += [
            "_r=$(( _tgt - _n ))",
            'if [ "$_r" -gt 1500000 ]; then sleep $(( _r / 1000000 - 1 )) & _w=$!; wait $_w; '
            "_r=$(( _tgt - $(_now_us) )); fi",
        ]
        if caps.nap == "none":
            lines.append('if [ "$_r" -gt 0 ]; then while [ "$(_now_us)" -lt "$_tgt" ]; do :; done; fi')
        else:
            lines.append(f'if [ "$_r" -gt 0 ]; then {_nap_us(caps, "$_r")}; fi')
        return "\n".join(lines)
    seconds, fraction = divmod(target_us, 1_000_000)
    lines += [
        f"_ts={seconds}",
        "_ns=$(date +%s)",
        'if [ "$_ns" -lt "$_ts" ]; then',
        "  if [ $(( _ts - _ns )) -gt 1 ]; then sleep $(( _ts - _ns - 1 )) & _w=$!; wait $_w; fi",
        '  while [ "$(date +%s)" -lt "$_ts" ]; do :; done',
    ]
    if fraction:
        if caps.nap == "none":
            lines.append(f'  while [ "$(date +%s)" -lt "{seconds + 1}" ]; do :; done')
        else:
            lines.append("  " + _nap_us(caps, str(fraction)))
    lines.append("fi")
    return "\n".join(lines)


def _started_at_capture(caps: HostCaps) -> str:
    return {
        "epochrealtime": "_sa=$EPOCHREALTIME",
        "date_ns": "_sa=$(date +%s.%N)",
        "date_s": "_sa=$(date +%s)",
    }[caps.clock]


def parse_started_at(raw: str) -> tuple[float | None, float | None]:
    """``(epoch seconds, resolution)`` from a clock reading; ``(None, None)`` if unreadable.

    Accepts ``1700000000.123456`` (EPOCHREALTIME; a locale may print ``,``), nanosecond
    ``date +%s.%N`` output and whole seconds; a ``date`` without ``%N`` support prints the
    format literally (``1700000000.%N`` or ``1700000000.N``): then only the seconds count.
    """
    text = raw.strip()
    match = re.match(r"^(\d+)(?:[.,](\d+))?", text)
    if not match:
        return None, None
    whole, digits = match.group(1), match.group(2)
    if digits and text == match.group(0):
        return float(f"{whole}.{digits}"), 10.0 ** -len(digits)
    return float(whole), 1.0


# --------------------------------------------------------------------------------------------
# Scripts
# --------------------------------------------------------------------------------------------

_GUARD = (
    'p=$1; f=$2; t=$3; end=0; if [ "$t" -gt 0 ]; then end=$(( $(date +%s) + t )); fi; '
    'while kill -0 "$p" 2>/dev/null; do '
    'if [ "$end" -gt 0 ] && [ "$(date +%s)" -ge "$end" ]; then '
    'kill "$p" 2>/dev/null; i=0; '
    f'while kill -0 "$p" 2>/dev/null && [ "$i" -lt {KILL_GRACE} ]; do sleep 1; i=$((i+1)); done; '
    'if kill -0 "$p" 2>/dev/null; then kill -9 "$p" 2>/dev/null; fi; break; fi; '
    "sleep 1; done; "
    'if [ -f "$f" ] && grep -qx "pid=$p" "$f"; then rm -f "$f"; fi'
)


def _name_part(bind: str) -> str:
    return re.sub(r"[^0-9A-Za-z.]", "_", bind)


def state_stem(port: int, bind: str | None = None) -> str:
    """``esxilab-iperf-<port>[-<bind>]``: the name of a server's pidfile and log without suffix."""
    return f"esxilab-iperf-{port}" + (f"-{_name_part(bind)}" if bind else "")


def state_paths(directory: str, port: int, bind: str | None = None) -> tuple[str, str]:
    """``(pidfile, logfile)`` of the server on ``port`` (and ``bind``, when it is bound) in ``directory``
    (the private directory, see :func:`private_dir`).

    The bind address is part of the name so that servers on the same port but different
    addresses keep separate files when hosts share a file system (namespaces, NFS /tmp).
    """
    base = directory.rstrip("/") or ""
    stem = state_stem(port, bind)
    return f"{base}/{stem}.pid", f"{base}/{stem}.log"


def _same_listener(entry: Mapping[str, Any], port: int, bind: str | None) -> bool:
    """Whether a recorded server would clash with one on ``port``/``bind`` (no bind = every address)."""
    if str(entry.get("port")) != str(port):
        return False
    other = entry.get("bind") or None
    return not bind or not other or other == bind


def build_server_script(
    token: str,
    argv: Sequence[str],
    *,
    caps: HostCaps,
    state_dir: str,
    stem: str,
    server_timeout: int,
    meta: Mapping[str, str],
) -> str:
    """Start the server in the background, out of the session's reach, plus its guard.

    The files are ``<stem>.pid`` and ``<stem>.log`` in the private directory (created and
    checked first, see :func:`state_snippet`); both are removed and created again under
    ``set -C``, so a link planted there is never followed. The pidfile holds ``pid``, ``guard``
    and ``meta``, each line a ``printf '%s\\n'`` argument (never part of the format).

    The server runs under ``setsid`` when the host has it (a new session: no terminal, no
    hangup signal), else in a process group of its own (``set -m``); ``trap '' HUP`` as well.
    ``setsid`` does not fork here (the background job is no process-group leader), so ``$!``
    is the server's pid.

    Prints ``state ...``, then ``started pid=.. guard=.. status=listening|running|exited`` and the log.
    """
    nap, tries = _short_nap(caps)
    meta_args = " ".join(shlex.quote(f"{k}={v}") for k, v in meta.items() if "\n" not in v and "\r" not in v)
    return "\n".join(
        [
            "umask 077",
            _WHICH,
            state_snippet(token, state_dir, create=True),
            'if [ "$_st" != ok ]; then ' + _marker(token, "done") + "; exit 0; fi",
            f'_pf="$_pd/{stem}.pid"; _lf="$_pd/{stem}.log"',
            'rm -f "$_pf" "$_lf"',
            "set -C",
            # iperf3 installs its own SIGHUP handler, so ignoring HUP (what nohup does) does not keep
            # it alive when an ssh -tt session ends: the kernel signals the terminal's foreground
            # process group. A new session (setsid) or, without setsid, a process group of its own
            # (job control, set -m) keeps the server out of that group.
            "if _which setsid >/dev/null; then { set +m; } 2>/dev/null; _ss=setsid",
            "else { set -m; } 2>/dev/null; _ss=; fi",
            f"( trap '' HUP; exec $_ss {shlex.join(argv)} ) >\"$_lf\" 2>&1 </dev/null &",
            "p=$!",
            f"( trap '' HUP; exec /bin/sh -c {shlex.quote(_GUARD)} esxilab-iperf-guard"
            f' "$p" "$_pf" {int(server_timeout)} ) >/dev/null 2>&1 </dev/null &',
            "g=$!",
            f'printf \'%s\\n\' "pid=$p" "guard=$g" {meta_args} >"$_pf"',
            "st=running; i=0",
            f'while [ "$i" -lt {tries} ]; do',
            '  if ! kill -0 "$p" 2>/dev/null; then st=exited; break; fi',
            "  if grep -q 'listening' \"$_lf\" 2>/dev/null; then st=listening; break; fi",
            f"  {nap}",
            "  i=$((i+1))",
            "done",
            'if [ "$st" != exited ] && ! kill -0 "$p" 2>/dev/null; then st=exited; fi',
            'if [ "$st" = exited ]; then kill "$g" 2>/dev/null; rm -f "$_pf"; fi',
            _marker(token, "started", "pid=$p guard=$g status=$st"),
            'cat "$_lf" 2>/dev/null',
            _marker(token, "done"),
        ]
    )


def build_stop_script(
    token: str, targets: Sequence[Mapping[str, Any]], *, caps: HostCaps, state_dir: str, proc: str = "/proc"
) -> str:
    """Stop each target (a :func:`read_pidfile` entry): guard first, then TERM, then KILL after a grace.

    Right before any ``kill`` the script checks again that the pidfile (found by its name in
    the private directory) still lists the pid and that the process still runs
    ``<binary> -s -p <port>`` (``_isours``); the guard is killed only when its command line is
    the guard of that pid. A pid that now belongs to another process is left alone
    (``reused``) and its stale pidfile removed. The log shown is ``<stem>.log`` of the same
    directory, read only when it is a regular file.
    """
    nap, tries = _short_nap(caps)
    tries = tries * KILL_GRACE
    # A stopped process stays a zombie until its parent (often PID 1) reaps it, and kill -0
    # still succeeds on a zombie: read its state where /proc exists, so stop returns at once.
    lines = [
        state_snippet(token, state_dir, create=False),
        'if [ "$_st" != ok ]; then ' + _marker(token, "done") + "; exit 0; fi",
        _cmdline_function(proc),
        _ISOURS,
        _ISGUARD,
        '_alive() { kill -0 "$1" 2>/dev/null || return 1; [ -r "/proc/$1/stat" ] || return 0; '
        'case "$(sed \'s/^.*) //\' "/proc/$1/stat" 2>/dev/null)" in Z*) return 1;; esac; return 0; }',
    ]
    for target in targets:
        pid = int(target["pid"])
        guard = target.get("guard")
        name = str(target["name"])
        if not PIDFILE_NAME_RE.match(name):
            raise ValueError(f"not a pidfile name of this module: {name!r}")
        q_bin = shlex.quote(str(target.get("binary") or ""))
        port = int(target["port"])
        lines += [
            f'_pf="$_pd/{name}"; _lf="$_pd/{target["log_name"]}"',
            f'if [ -f "$_pf" ] && [ ! -L "$_pf" ] && grep -qx \'pid={pid}\' "$_pf" 2>/dev/null; then',
            f"  if _isours {pid} {q_bin} {port}; then",
            f"    if _isguard {int(guard)} {pid}; then kill {int(guard)} 2>/dev/null; fi"
            if isinstance(guard, int)
            else "    :",
            f"    kill {pid} 2>/dev/null; i=0",
            f'    while _alive {pid} && [ "$i" -lt {tries} ]; do {nap}; i=$((i+1)); done',
            f"    if _alive {pid} && _isours {pid} {q_bin} {port}; then kill -9 {pid} 2>/dev/null; st=killed;"
            " else st=stopped; fi",
            f"  elif kill -0 {pid} 2>/dev/null; then st=reused",
            "  else st=gone; fi",
            '  rm -f "$_pf"',
            "else st=notours; fi",
            _marker(token, "stopped", f"pid={pid} status=$st"),
            'if [ -f "$_lf" ] && [ ! -L "$_lf" ]; then cat "$_lf"; fi',
        ]
    lines.append(_marker(token, "done"))
    return "\n".join(lines)


def build_client_script(
    token: str,
    argv: Sequence[str],
    *,
    caps: HostCaps,
    timeout: float,
    start_at: float | None = None,
    state_dir: str = "/tmp",
) -> str:
    """Run the client: optional barrier, clock reading, iperf bounded by ``timeout``.

    Its files (``esxilab-iperf-<shell pid>.out/.err/.timedout``) are in the private directory
    of ``state_dir`` (:func:`state_snippet`, created when missing), removed first and created
    under ``set -C``: a link planted there is never followed.

    With GNU ``timeout`` the run is wrapped by it (exit 124 = timed out); elsewhere (busybox,
    whose ``timeout`` syntax changed in 1.30) a watchdog subshell kills iperf and leaves a
    marker file. The watchdog sleeps in the background and ``wait``s, so the TERM that ends it
    when iperf finished first takes effect at once (a trap waits for a foreground command).
    stdout and stderr go to separate files, so iperf3's JSON stays clean even
    when ESXi's iperf3 spams ``getsockopt`` errors on stderr.
    """
    seconds = max(1, math.ceil(timeout))
    lines = [
        "umask 077",
        state_snippet(token, state_dir, create=True),
        'if [ "$_st" != ok ]; then ' + _marker(token, "done") + "; exit 0; fi",
        '_o="$_pd/esxilab-iperf-$$.out"; _e="$_pd/esxilab-iperf-$$.err"',
        '_k="$_pd/esxilab-iperf-$$.timedout"; _p=; _w=; _g=',
        'rm -f "$_o" "$_e" "$_k"',
        "set -C",
        # An interrupted run (hang-up, play stopped) leaves no files and no iperf behind. Long
        # waits are `cmd & wait`, so a signal is handled at once (a trap waits for a foreground
        # command to end).
        '_stop() { for _x in $_p $_w $_g; do kill "$_x" 2>/dev/null; done; }',
        """trap 'rm -f "$_o" "$_e" "$_k"' EXIT""",
        "trap '_stop; exit 129' HUP",
        "trap '_stop; exit 143' TERM",
        "trap '_stop; exit 130' INT",
    ]
    if start_at is not None:
        lines.append(build_barrier(token, caps, start_at))
    lines.append(_started_at_capture(caps))
    lines.append(_marker(token, "started_at", "$_sa"))
    command = shlex.join(argv)
    if caps.gnu_timeout:
        lines += [
            f'timeout -k {KILL_GRACE} {seconds} {command} >"$_o" 2>"$_e" </dev/null &',
            '_p=$!; wait "$_p"; _rc=$?',
            'if [ "$_rc" -eq 124 ] || [ "$_rc" -eq 137 ]; then : >"$_k"; fi',
        ]
    else:
        lines += [
            f'{command} >"$_o" 2>"$_e" </dev/null &',
            "_p=$!",
            "( trap 'kill $_w 2>/dev/null; exit 0' TERM; "
            f"sleep {seconds} & _w=$!; wait $_w; "
            # the marker first: once iperf dies, the main shell ends this watchdog at once
            f': >"$_k"; if kill "$_p" 2>/dev/null; then sleep {KILL_GRACE} & _w=$!; wait $_w; '
            'kill -9 "$_p" 2>/dev/null; else rm -f "$_k"; fi )'
            " >/dev/null 2>&1 &",
            "_g=$!",
            'wait "$_p"; _rc=$?',
            'kill "$_g" 2>/dev/null',
        ]
    lines += [
        'if [ -f "$_k" ] && [ ! -L "$_k" ]; then _to=1; else _to=0; fi',
        _marker(token, "exit", "rc=$_rc timedout=$_to"),
        _marker(token, "stdout"),
        # only what iperf wrote: never through a link (a shell that could not create the file
        # leaves whatever was there)
        'if [ -f "$_o" ] && [ ! -L "$_o" ]; then cat "$_o"; fi',
        _marker(token, "stderr"),
        'if [ -f "$_e" ] && [ ! -L "$_e" ]; then cat "$_e"; fi',
        _marker(token, "done"),
        'rm -f "$_o" "$_e" "$_k"',
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Diagnosis
# --------------------------------------------------------------------------------------------


class Diagnosis(NamedTuple):
    """What went wrong (``kind``), in words naming the cause and the fix, with the tool's line."""

    kind: str
    message: str
    evidence: str


@dataclass(frozen=True)
class Context:
    """Who ran what, for messages."""

    role: Literal["client", "server"]
    tool: Tool
    server: str | None = None
    port: int | None = None
    bind: str | None = None
    protocol: str = "tcp"
    binary: str | None = None
    duration: float | None = None

    @property
    def endpoint(self) -> str:
        host = self.server if self.role == "client" else (self.bind or "*")
        return f"{host}:{self.port}"


def _line_with(text: str, *needles: str) -> str | None:
    lowered = [n.lower() for n in needles]
    for line in text.splitlines():
        low = line.lower()
        if all(n in low for n in lowered):
            return line.strip()
    return None


def _strip_prefix(message: str) -> str:
    return re.sub(r"^(?:iperf3:\s*)?error\s*-\s*", "", message.strip())


def diagnose(
    text: str,
    ctx: Context,
    *,
    timed_out: bool = False,
    timeout: float | None = None,
    ran_seconds: float | None = None,
    had_intervals: bool = False,
    rc: int | None = None,
) -> Diagnosis | None:
    """Tell a failure from the tool's own words (stdout error, stderr) and the run's facts.

    ``ran_seconds`` is how long the test lasted by its own report; ``had_intervals`` whether
    it reported any interval. Returns ``None`` when nothing in ``text`` is a known failure.
    """
    ep = ctx.endpoint
    other: Tool = "iperf2" if ctx.tool == "iperf3" else "iperf3"

    if line := _line_with(text, "server is busy running a test"):
        return Diagnosis(
            "busy",
            f"the server on {ep} is busy running a test with another client. Use one server port per "
            "client/server pair (start one server per pair with mode=server and its own port), or run the tests "
            "one after the other",
            line,
        )
    if ctx.role == "server" and (
        line := _line_with(text, "unable to start listener", "operation not permitted")
        or _line_with(text, "bind failed", "operation not permitted")
    ):
        hint = (
            "On ESXi the shipped /usr/lib/vmware/vsan/bin/iperf3 may not listen: use the copied binary "
            "/usr/lib/vmware/vsan/bin/iperf3.copy (binary=...; esxilab.iperf.esxi_iperf_install creates it) "
            "or put iperf3 in a security domain that may listen"
        )
        message = f"the server could not listen on {ep}: {_strip_prefix(line)}. {hint}"
        return Diagnosis("listener_not_permitted", message, line)
    if line := _line_with(text, "address already in use"):
        return Diagnosis(
            "port_in_use",
            f"port {ctx.port} is already in use on this host ({_strip_prefix(line)}). Stop the other server "
            f"(mode=stop port={ctx.port} if this module started it) or choose another port",
            line,
        )
    if line := _line_with(text, "cannot assign requested address"):
        address = ctx.bind or "the bind address"
        return Diagnosis(
            "bind_address",
            f"{address} is not an address of this host ({_strip_prefix(line)}); set bind to an address configured "
            "on one of its interfaces (on ESXi: a vmk interface) or leave it unset",
            line,
        )
    if ctx.role == "client":
        diagnosis = _diagnose_client(text, ctx, ep, other, had_intervals, ran_seconds)
        if diagnosis is not None:
            return diagnosis
    exec_line = (
        _line_with(text, "permission denied")
        or _line_with(text, "operation not permitted")
        or _line_with(text, "not found")
    )
    if rc in (126, 127) or (ctx.role == "server" and exec_line):
        line = exec_line or f"exit status {rc}"
        return Diagnosis(
            "exec_failed",
            f"the shell could not run {ctx.binary or 'iperf'}: {line}. {_EXEC_HINT}",
            line,
        )
    if timed_out:
        hint = ""
        if ctx.role == "client" and not had_intervals:
            hint = (
                f" No interval was reported: the server may not be {ctx.tool} ({ctx.tool} and {other} do not "
                "interoperate; an iperf3 client waits forever for an iperf2 server), or a firewall drops the "
                "test traffic"
            )
        return Diagnosis(
            "timeout",
            f"iperf did not finish within timeout={timeout:g} s and was killed.{hint} Raise timeout for long tests"
            if timeout
            else f"iperf did not finish in time and was killed.{hint}",
            "timed out",
        )
    return None


def _is_ip_literal(value: str | None) -> bool:
    try:
        ipaddress.ip_address((value or "").split("%", 1)[0])
    except ValueError:
        return False
    return True


def _resolve_diagnosis(ctx: Context, line: str) -> Diagnosis:
    """A name did not resolve: the bind address (``-B``) or the server, whichever is a name.

    iperf3 says ``unable to connect to server: Name or service not known`` for both; iperf2
    starts the line with the name (``nosuch: Unknown host``).
    """
    words = _strip_prefix(line)
    bind_named = bool(ctx.bind) and not _is_ip_literal(ctx.bind)
    server_named = not _is_ip_literal(ctx.server)
    if bind_named and (not server_named or line.startswith(f"{ctx.bind}:")):
        return Diagnosis(
            "bind_resolve",
            f"bind={ctx.bind!r} (the client's source address, -B) cannot be resolved on this host ({words}); "
            "set bind to an IP address of this host (on ESXi: the vmk interface's address) or leave it unset",
            line,
        )
    if bind_named and not line.startswith(f"{ctx.server}:"):
        return Diagnosis(
            "resolve",
            f"the server name {ctx.server!r} or bind={ctx.bind!r} cannot be resolved on this host ({words}); "
            "use IP addresses for both",
            line,
        )
    return Diagnosis(
        "resolve",
        f"the server name {ctx.server!r} cannot be resolved on this host ({words}); use an IP address",
        line,
    )


_CONNECT_WORD = re.compile(r"\bconnect\b", re.IGNORECASE)


def _diagnose_client(
    text: str, ctx: Context, ep: str, other: Tool, had_intervals: bool, ran_seconds: float | None
) -> Diagnosis | None:
    if ctx.tool == "iperf2" and ctx.protocol == "udp":
        line = _line_with(text, "read failed", "connection refused") or _line_with(text, "did not receive ack")
        if line:
            return Diagnosis(
                "udp_no_server",
                f"no iperf2 UDP server answered on {ep} ({line}): start the server with protocol=udp (an iperf2 "
                "server listens for one protocol only) and open UDP port "
                f"{ctx.port} in the firewall. Some iperf2 2.1.x UDP servers answer only their first test: start "
                "one server per UDP test",
                line,
            )
    line = _line_with(text, "connection refused")
    if line and _CONNECT_WORD.search(line):
        return Diagnosis(
            "refused",
            f"connection refused by {ep}: is a server listening on {ep}? Start one with mode=server "
            f"(tool={ctx.tool}, port={ctx.port}) on that host, and check that the port is right",
            line,
        )
    for needle in ("no route to host", "network is unreachable", "host is unreachable"):
        if line := _line_with(text, needle):
            return Diagnosis(
                "unreachable",
                f"the server {ctx.server} cannot be reached from this host ({_strip_prefix(line)}): check the address, "
                "the routes (on ESXi: the vmk interfaces and their netstack) and the VLAN/uplinks between the hosts",
                line,
            )
    for needle in ("connection timed out", "operation timed out"):
        if line := _line_with(text, needle):
            return Diagnosis(
                "connect_timeout",
                f"connecting to {ep} timed out ({_strip_prefix(line)}): a firewall may drop the packets (on ESXi: "
                "esxcli network firewall) or the address is wrong",
                line,
            )
    for needle in ("name or service not known", "unknown host", "temporary failure in name resolution", "nodename nor"):
        if line := _line_with(text, needle):
            return _resolve_diagnosis(ctx, line)
    if ctx.tool == "iperf3":
        # An iperf2 server answers the iperf3 handshake with any of these (seen with iperf 2.1.8).
        line = (
            _line_with(text, "unknown control message")
            or _line_with(text, "control socket has closed unexpectedly")
            or _line_with(text, "unable to receive control message")
        )
        if line and not had_intervals:
            return Diagnosis(
                "not_iperf3_server",
                f"the server on {ep} does not speak the iperf3 protocol ({_strip_prefix(line)}); it is probably an "
                "iperf2 server -- iperf2 and iperf3 do not interoperate. Start the server with tool=iperf3, or run "
                "the client with tool=iperf2",
                line,
            )
        if line:
            return Diagnosis(
                "server_gone",
                f"the server on {ep} closed the control connection during the test ({_strip_prefix(line)}): "
                "was it stopped, killed by its server_timeout, or did it crash? Check its log",
                line,
            )
    if ctx.tool == "iperf2" and (line := _line_with(text, "connection reset by peer")):
        short = ran_seconds is not None and ctx.duration is not None and ran_seconds < ctx.duration / 2
        if short or ran_seconds is None:
            ran = f" after {ran_seconds:g} s of {ctx.duration:g} s" if ran_seconds is not None and ctx.duration else ""
            return Diagnosis(
                "not_iperf2_server",
                f"the server on {ep} reset the connection{ran} ({line}); it is probably an iperf3 server -- iperf2 "
                "and iperf3 do not interoperate. Start the server with tool=iperf2, or run the client with tool=iperf3",
                line,
            )
        return Diagnosis("reset", f"the server on {ep} reset the connection during the test ({line})", line)
    return None


# --------------------------------------------------------------------------------------------
# Client output
# --------------------------------------------------------------------------------------------


def _distrust_tcp_info(result: Result) -> None:
    """ESXi's iperf3 cannot read TCP_INFO: its retransmit figures are garbage, drop them."""
    for key in ("sent", "received", "reverse_sent", "reverse_received"):
        totals = result.get(key)
        if isinstance(totals, dict):
            totals["retransmits"] = None
    for stream in result.get("per_stream") or []:
        for key in ("sent", "received"):
            if isinstance(stream.get(key), dict):
                stream[key]["retransmits"] = None
    for interval in result.get("intervals") or []:
        interval["retransmits"] = None
    result["warnings"].append(
        "iperf3 printed 'getsockopt - Function not implemented' (the host cannot report TCP_INFO, as on ESXi): "
        "retransmits are unknown and set to null"
    )


def _distrust_esxi_server_sending(result: Result) -> None:
    """The server (an ESXi host, ``peer_is_esxi``) sent: its retransmits are ESXi iperf3 garbage.

    With ``-R`` the client's totals (``sent``, ``per_stream[].sent``) are the server's own,
    exchanged at the end of the test; with ``--bidir`` the server's sending is the reverse
    part (``reverse_sent``, ``reverse_per_stream``). The intervals are the client's (it only
    received), so they carry none. The server's cwnd is never in the client's output.
    """
    if result.get("protocol") != "tcp":
        return
    if result.get("bidir"):
        totals, per_stream, series = "reverse_sent", "reverse_per_stream", "reverse_intervals"
    elif result.get("reverse"):
        totals, per_stream, series = "sent", "per_stream", "intervals"
    else:
        return
    had_any = False
    block = result.get(totals)
    if isinstance(block, dict) and block.get("retransmits") is not None:
        block["retransmits"] = None
        had_any = True
    for stream in result.get(per_stream) or []:
        sent = stream.get("sent") if isinstance(stream, dict) else None
        if isinstance(sent, dict) and sent.get("retransmits") is not None:
            sent["retransmits"] = None
            had_any = True
    for interval in result.get(series) or []:
        if isinstance(interval, dict) and interval.get("retransmits") is not None:
            interval["retransmits"] = None
            had_any = True
    if had_any:
        result["warnings"].append(
            "retransmits of the server's sending set to null: the server is an ESXi host (peer_is_esxi), whose "
            "bundled iperf3 cannot read TCP_INFO, so its retransmit counts are garbage"
        )


def interpret_client(
    sections: Sequence[Section],
    ctx: Context,
    *,
    caps: HostCaps,
    timeout: float,
    start_at: float | None,
    labels: Mapping[str, Any],
    peer_is_esxi: bool = False,
) -> tuple[dict[str, Any], Diagnosis | None]:
    """Turn the client script's sections into the task result and, on failure, a diagnosis."""
    stdout = (_first(sections, "stdout") or Section("stdout", "", "")).text
    stderr = (_first(sections, "stderr") or Section("stderr", "", "")).text
    exit_kv = _kv((_first(sections, "exit") or Section("exit", "", "")).args)
    rc = int(exit_kv["rc"]) if exit_kv.get("rc", "").lstrip("-").isdigit() else None
    timed_out = exit_kv.get("timedout") == "1"
    started_raw = (_first(sections, "started_at") or Section("started_at", "", "")).args
    started_at, resolution = parse_started_at(started_raw)
    source = "date +%s" if resolution is not None and resolution >= 1.0 else caps.clock_source

    out: dict[str, Any] = {
        "raw": stdout,
        "stderr": stderr,
        "rc": rc,
        "timed_out": timed_out,
        "timeout": timeout,
        "started_at": started_at,
        "started_at_source": source if started_at is not None else None,
        "started_at_resolution": resolution,
    }
    warnings: list[str] = []
    barrier = _first(sections, "barrier")
    if start_at is not None:
        info: dict[str, Any] = {"start_at": start_at, "method": barrier_method(caps), "late_by": None}
        if barrier is not None:
            kv = _kv(barrier.args)
            arrived = int(kv["now_us"]) / 1e6 if kv.get("now_us", "").isdigit() else None
            info["arrived_at"] = arrived
            # On a whole-second clock "arrived" is the floor of the true time: still a proof.
            if arrived is not None and arrived > start_at:
                warnings.append(
                    f"start_at had passed by {arrived - start_at:.3f} s when the host reached the barrier: the test "
                    "started at once. Give the hosts more time (start_at = now + a few seconds)"
                )
        if started_at is not None and resolution is not None and resolution < 1.0:
            info["late_by"] = round(started_at - start_at, 6)
        out["barrier"] = info

    result: Result | None = None
    if stdout.strip():
        try:
            result = parse(stdout)
        except IperfParseError:
            result = None
    if result is not None:
        if labels:
            result["labels"] = dict(labels)
        if ctx.tool == "iperf3" and _line_with(stderr, "getsockopt", "function not implemented"):
            _distrust_tcp_info(result)
        if peer_is_esxi:
            _distrust_esxi_server_sending(result)
    out["result"] = result

    pieces = (result.get("error") if result else None, stderr, stdout if result is None else "")
    texts = "\n".join(t for t in pieces if t)
    ran = None
    intervals = False
    if result is not None:
        ran = result.get("duration")
        intervals = bool(result.get("intervals")) or bool(result.get("sent") or result.get("received"))
    diagnosis = diagnose(
        texts,
        ctx,
        timed_out=timed_out,
        timeout=timeout,
        ran_seconds=ran,
        had_intervals=intervals,
        rc=rc if result is None else None,
    )
    if diagnosis is None and result is not None and result.get("error"):
        message = f"{ctx.tool} reported an error: {_strip_prefix(result['error'])}"
        diagnosis = Diagnosis("iperf_error", message, result["error"])
    if diagnosis is None and result is None:
        shown = (stderr.strip() or stdout.strip() or "no output")[-400:]
        diagnosis = Diagnosis(
            "no_result",
            f"{ctx.tool} produced no result (exit status {rc}): {shown}",
            shown,
        )
    if result is not None and not result.get("complete") and diagnosis is None:
        warnings.append("the result is incomplete; see result.warnings")
    out["warnings"] = warnings
    return out, diagnosis


# --------------------------------------------------------------------------------------------
# The flow
# --------------------------------------------------------------------------------------------


def run(
    params: Mapping[str, Any],
    execute: Execute,
    *,
    check_mode: bool,
    token: str,
    now: Callable[[], float],
) -> dict[str, Any]:
    """Do what ``params`` ask on the host behind ``execute``; return the task result.

    Raises ``IperfRunError`` with a message naming the cause and the fix.
    """
    mode = validate_params(params)
    if mode == "server":
        return _run_server(params, execute, check_mode=check_mode, token=token)
    if mode == "client":
        return _run_client(params, execute, check_mode=check_mode, token=token, now=now)
    return _run_stop(params, execute, check_mode=check_mode, token=token)


def _probe(execute: Execute, token: str, **kwargs: Any) -> Probe:
    script = build_probe_script(token, **kwargs)
    return parse_probe(execute(script), token)


def _candidates(params: Mapping[str, Any]) -> tuple[str, ...]:
    binary = params.get("binary")
    return (binary,) if binary else DEFAULT_BINARIES


def _run_server(params: Mapping[str, Any], execute: Execute, *, check_mode: bool, token: str) -> dict[str, Any]:
    state_dir = params.get("state_dir") or "/tmp"
    probe = _probe(execute, token, candidates=_candidates(params), listing=True, state_dir=state_dir)
    _raise_state_error(probe.state, state_dir)
    binary = select_binary(probe, tool=params.get("tool"), binary=params.get("binary"))
    port = params.get("port") or DEFAULT_PORTS[binary.tool]
    bind = params.get("bind")
    protocol = "udp" if binary.tool == "iperf2" and params.get("protocol") == "udp" else "tcp"
    argv = build_server_argv(binary, params, port)
    _pidfile, logfile = state_paths(_private_dir_of(probe.state, state_dir), port, bind)
    base: dict[str, Any] = {
        "port": port,
        "bind": bind,
        "tool": binary.tool,
        "tool_version": binary.version,
        "binary": binary.path,
        "log": logfile,
        "command": shlex.join(argv),
        "server_timeout": params.get("server_timeout"),
        "host_is_esxi": probe.caps.esxi,
    }
    ours = [p for p in probe.pidfiles if p.get("alive") and _same_listener(p, port, bind)]
    if ours:
        entry = ours[0]
        raise IperfRunError(
            f"a server started by this module already runs on port {port} (pid {entry.get('pid')}, "
            f"{entry.get('tool')}, log {entry['log_name']} in {_private_dir_of(probe.state, state_dir)}); stop it "
            f"first with mode=stop port={port}, "
            "or use another port",
            base | {"pid": _int_or_none(entry.get("pid")), "error_kind": "port_in_use"},
        )
    conflicts = port_conflicts(parse_listeners(probe.listing), proto=protocol, port=port, bind=bind)
    if conflicts:
        held = ", ".join(f"{c.proto} {c.host or '*'}:{c.port}" for c in conflicts)
        raise IperfRunError(
            f"port {port} is already in use on this host ({held}, seen by {probe.listing_via}); stop what listens "
            "there or choose another port",
            base | {"error_kind": "port_in_use"},
        )
    if check_mode:
        msg = f"would start {binary.tool} server on port {port} (check mode)"
        return base | {"changed": True, "pid": None, "msg": msg}
    meta = {
        "tool": binary.tool,
        "port": str(port),
        "bind": bind or "",
        "binary": binary.path,
    }
    script = build_server_script(
        token,
        argv,
        caps=probe.caps,
        state_dir=state_dir,
        stem=state_stem(port, bind),
        server_timeout=int(params.get("server_timeout") or 0),
        meta=meta,
    )
    out = execute(script)
    sections = parse_sections(out.stdout, token)
    _raise_state_error(_first(sections, "state"), state_dir, base)
    started = _first(sections, "started")
    if started is None:
        raise IperfRunError(
            f"the server start script failed (exit status {out.rc}): {(out.stderr or out.stdout).strip()[-400:]}",
            base | {"stdout": out.stdout, "stderr": out.stderr},
        )
    kv = _kv(started.args)
    log_text = started.text
    base |= {"pid": _int_or_none(kv.get("pid")), "guard_pid": _int_or_none(kv.get("guard")), "raw": log_text}
    status = kv.get("status", "")
    ctx = Context("server", binary.tool, port=port, bind=bind, protocol=protocol, binary=binary.path)
    if status == "exited":
        diagnosis = diagnose(log_text, ctx)
        if diagnosis is None:
            shown = log_text.strip()[-400:] or "no output"
            diagnosis = Diagnosis("server_exited", f"the {binary.tool} server exited right after start: {shown}", shown)
        raise IperfRunError(diagnosis.message, base | {"pid": None, "status": status, "error_kind": diagnosis.kind})
    warnings = []
    if status != "listening":
        warnings.append(
            f"the server process is running but printed no 'listening' banner within {SERVER_START_WAIT:g} s "
            "(iperf3 before 3.1.5 buffers its log); it was not verified that it accepts connections"
        )
    return base | {"changed": True, "status": status, "warnings": warnings}


def _raise_state_error(section: Section | None, state_dir: str, result: Mapping[str, Any] | None = None) -> None:
    error = state_error(section, state_dir)
    if error is not None:
        error.result = dict(result or {}) | error.result
        raise error


def _private_dir_of(section: Section | None, state_dir: str) -> str:
    uid = _kv(section.args).get("uid", "") if section is not None else ""
    return private_dir(state_dir, uid) if uid.isdigit() else f"{state_dir.rstrip('/')}/esxilab-iperf-<uid>"


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _run_client(
    params: Mapping[str, Any], execute: Execute, *, check_mode: bool, token: str, now: Callable[[], float]
) -> dict[str, Any]:
    start_at = params.get("start_at")
    if start_at is not None:
        check_start_at(start_at, now())
    timeout = float(params.get("timeout") or default_timeout(params))
    probe = _probe(execute, token, candidates=_candidates(params))
    binary = select_binary(probe, tool=params.get("tool"), binary=params.get("binary"))
    port = params.get("port") or DEFAULT_PORTS[binary.tool]
    argv = build_client_argv(binary, params, port)
    base: dict[str, Any] = {
        "tool": binary.tool,
        "tool_version": binary.version,
        "binary": binary.path,
        "server": params["server"],
        "port": port,
        "command": shlex.join(argv),
        "host_is_esxi": probe.caps.esxi,
    }
    if check_mode:
        return base | {
            "changed": False,
            "skipped": True,
            "skip_reason": "check mode: the iperf client was not run (a test cannot be simulated)",
            "msg": "check mode: the iperf client was not run",
        }
    state_dir = params.get("state_dir") or "/tmp"
    script = build_client_script(token, argv, caps=probe.caps, timeout=timeout, start_at=start_at, state_dir=state_dir)
    out = execute(script)
    sections = parse_sections(out.stdout, token)
    _raise_state_error(_first(sections, "state"), state_dir, base)
    if _first(sections, "exit") is None:
        raise IperfRunError(
            f"the client script failed before iperf ran (exit status {out.rc}): "
            f"{(out.stderr or out.stdout).strip()[-400:]}",
            base | {"stdout": out.stdout, "stderr": out.stderr},
        )
    ctx = Context(
        "client",
        binary.tool,
        server=params["server"],
        port=port,
        bind=params.get("bind"),
        protocol=params.get("protocol") or "tcp",
        binary=binary.path,
        duration=float(params["duration"]) if params.get("duration") else (None if params.get("bytes") else 10.0),
    )
    info, diagnosis = interpret_client(
        sections,
        ctx,
        caps=probe.caps,
        timeout=timeout,
        start_at=start_at,
        labels=params.get("labels") or {},
        peer_is_esxi=bool(params.get("peer_is_esxi")),
    )
    result = base | info | {"changed": False}
    if diagnosis is not None:
        raise IperfRunError(diagnosis.message, result | {"error_kind": diagnosis.kind})
    return result


def _run_stop(params: Mapping[str, Any], execute: Execute, *, check_mode: bool, token: str) -> dict[str, Any]:
    state_dir = params.get("state_dir") or "/tmp"
    pid = params.get("pid")
    port = params.get("port")
    bind = params.get("bind")
    probe = _probe(execute, token, state_dir=state_dir, pid=pid)
    _raise_state_error(probe.state, state_dir)
    directory = _private_dir_of(probe.state, state_dir)
    targets = [
        p
        for p in probe.pidfiles
        if p.get("pid") is not None
        and (pid is None or p.get("pid") == pid)
        and (port is None or p.get("port") == port)
        and (not bind or (p.get("bind") or None) == bind)
    ]
    if pid is not None and not targets and probe.pid_alive:
        raise IperfRunError(
            f"pid {pid} is running but was not started by this module (no pidfile in {directory} lists it); "
            "refusing to kill it. Stop it yourself, or pass the port of a server this module started"
        )
    alive = [t for t in targets if t.get("alive")]
    if check_mode or not targets:
        what = ", ".join(f"pid {t.get('pid')} (port {t.get('port')})" for t in alive) or "nothing"
        return {
            "changed": bool(alive),
            "stopped": [_stopped_entry(t, directory, "would stop" if t.get("alive") else "gone") for t in targets],
            "msg": (f"would stop {what} (check mode)" if check_mode else "no server started by this module runs here"),
        }
    out = execute(build_stop_script(token, targets, caps=probe.caps, state_dir=state_dir))
    sections = parse_sections(out.stdout, token)
    _raise_state_error(_first(sections, "state"), state_dir)
    by_pid = {str(t.get("pid")): t for t in targets}
    stopped = []
    for section in sections:
        if section.name != "stopped":
            continue
        kv = _kv(section.args)
        target = by_pid.get(kv.get("pid", ""))
        if target is None:
            continue
        entry = _stopped_entry(target, directory, kv.get("status", ""))
        entry["raw"] = section.text
        stopped.append(entry)
    changed = any(s["status"] in ("stopped", "killed") for s in stopped)
    return {
        "changed": changed,
        "stopped": stopped,
        "msg": f"stopped {sum(s['status'] in ('stopped', 'killed') for s in stopped)} server(s)",
    }


def _stopped_entry(target: Mapping[str, Any], directory: str, status: str) -> dict[str, Any]:
    return {
        "pid": target.get("pid"),
        "port": target.get("port"),
        "tool": target.get("tool"),
        "log": f"{directory}/{target['log_name']}",
        "status": status,
    }
