# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The read-only probe: the host's clock, sleep and timeout tools, its iperf binaries, listeners
and our servers; choosing the binary to run.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import CommandOutput
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.framing import Section, first, parse_kv
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.pathwalk import WHICH
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.tools import describe_tool, version_tuple
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.common import (
    DEFAULT_BINARIES,
    Clock,
    IperfRunError,
    Nap,
    Tool,
    int_or_none,
    marker,
    parse_sections,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.state import (
    PIDFILE_FIELDS,
    cmdline_function,
    is_our_server,
    read_pidfile,
    state_snippet,
)

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
    ``bash``: the path of a ``bash`` whose ``$EPOCHREALTIME`` works, else ``""``; ``shell``: the shell
    the script runs under when it is not the login shell (:func:`with_bash_clock`: a client script,
    whose barrier and start time then read the clock without a fork).
    """

    clock: Clock = "date_s"
    nap: Nap = "none"
    gnu_timeout: bool = False
    esxi: bool = False
    bash: str = ""
    shell: str = ""

    @property
    def clock_source(self) -> str:
        return {"epochrealtime": "EPOCHREALTIME", "date_ns": "date +%s.%N", "date_s": "date +%s"}[self.clock]


_EPOCH_FRACTION_RE = re.compile(r"^\d+[.,]\d+$")
_SHELL_PATH_RE = re.compile(r"^/[A-Za-z0-9._/+-]+$")
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
    bash = values.get("bash", "")
    fast = bool(_SHELL_PATH_RE.match(bash)) and bool(_EPOCH_FRACTION_RE.match(values.get("bash_epoch", "")))
    return HostCaps(
        clock=clock,
        nap=nap,
        gnu_timeout=values.get("gnu_timeout") == "1",
        esxi=values.get("uname", "") == "VMkernel",
        bash=bash if fast else "",
    )


def with_bash_clock(caps: HostCaps) -> HostCaps:
    """``caps`` for a script run under the host's ``bash`` (:func:`in_shell`) when it has one whose clock is a variable
    (``$EPOCHREALTIME``): a barrier's wake-up and the start time taken after it are then microseconds apart instead of
    a fork and an exec of ``date`` on a loaded host (dash, Debian's ``/bin/sh``), and the client waits with bash's
    ``read -t`` (``scripts.build_client_script``)."""
    if caps.bash:
        return replace(caps, clock="epochrealtime", shell=caps.bash)
    return caps


def in_shell(caps: HostCaps, script: str) -> str:
    """``script`` as the login shell runs it: handed to ``caps.shell`` by ``exec`` when one is set."""
    return f"exec {shlex.quote(caps.shell)} -c {shlex.quote(script)}" if caps.shell else script


#: ``_head5 TEXT``: the first five lines of TEXT (empty ones too), by the shell itself - as ``head -n 5`` printed them,
#: without a pipe and a process for every iperf binary the probe of every host of the play asks for its version.
HEAD5 = (
    "_head5() { _hl='\n'; _hr=$1$_hl; _hn=0; "
    'while [ "$_hn" -lt 5 ] && [ -n "$_hr" ]; do '
    'printf \'%s\\n\' "${_hr%%"$_hl"*}"; _hr=${_hr#*"$_hl"}; _hn=$((_hn+1)); done; }'
)


def build_probe_script(
    token: str,
    *,
    candidates: Sequence[str] = (),
    state_dir: str | None = None,
    pid: int | None = None,
) -> str:
    """A read-only script telling the host's capabilities, its iperf binaries and our servers."""
    lines = [
        WHICH,
        marker(token, "env"),
        'echo "epochrealtime=${EPOCHREALTIME:-}"',
        'echo "date_ns=$(date +%s.%N 2>/dev/null)"',
        "if _which usleep >/dev/null; then echo usleep=1; else echo usleep=0; fi",
        # a millisecond: the probe is on the path of every play, before any run (no fractions: it fails at once)
        "if sleep 0.001 >/dev/null 2>&1; then echo fracsleep=1; else echo fracsleep=0; fi",
        # the shell's own pattern match, not a pipe to grep: a process fewer in the probe of every host of the play
        "case $(timeout --version 2>/dev/null) in *coreutils*) echo gnu_timeout=1 ;; *) echo gnu_timeout=0 ;; esac",
        'echo "uname=$(uname -s 2>/dev/null)"',
        'if _b=$(_which bash); then echo "bash=$_b"; '
        """echo "bash_epoch=$("$_b" -c 'echo "${EPOCHREALTIME:-}"' </dev/null 2>/dev/null)"; fi""",
    ]
    if candidates:
        quoted = " ".join(shlex.quote(c) for c in candidates)
        missing = marker(token, "missing", "$c")
        lines += [
            HEAD5,
            f"for c in {quoted}; do",
            "  case $c in",
            f'    */*) if [ -x "$c" ] && [ ! -d "$c" ]; then p=$c; else {missing}; continue; fi ;;',
            f'    *) p=$(_which "$c") || {{ {missing}; continue; }} ;;',
            "  esac",
            '  _v=$("$p" -v </dev/null 2>&1); _r=$?',
            "  " + marker(token, "version", "rc=$_r $p"),
            '  _head5 "$_v"',
            "done",
        ]
    if state_dir is not None:
        lines += [
            state_snippet(token, state_dir, create=False),
            cmdline_function(),
            PIDFILE_FIELDS,
            'if [ "$_st" = ok ]; then',
            '  for f in "$_pd"/esxilab-iperf-*.pid; do',
            '    [ -f "$f" ] && [ ! -L "$f" ] || continue',
            "    " + marker(token, "pidfile", "${f##*/}"),
            '    head -n 20 "$f"',
            '    _pidf "$f"; p=$_fp',
            '    if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then a=1; else a=0; fi',
            "    " + marker(token, "process", "pid=$p alive=$a"),
            '    if [ "$a" = 1 ]; then _cmdline "$p"; fi',
            "  done",
            "fi",
        ]
    if pid is not None:
        lines += [
            f"if kill -0 {int(pid)} 2>/dev/null; then a=1; else a=0; fi",
            marker(token, "pid", f"pid={int(pid)} alive=$a"),
        ]
    lines.append(marker(token, "done"))
    return "\n".join(lines) + "\n"


def listing_snippet() -> str:
    """Shell text that sets ``$_lv`` to the tool that lists the listening sockets and ``$_lq`` to its
    output (``ss``, ``netstat``, ESXi's ``esxcli``; ``_lv=none`` when the host has none)."""
    # -p names the process that holds a socket (ss: users:(("name",pid=N,..)); netstat: PID/Program; esxcli: the
    # world); a busybox netstat built without it refuses -p: then without
    tools = (
        ("ss", "ss -lntup"),
        ("netstat", "netstat -lntup 2>/dev/null || netstat -lntu"),
        ("esxcli", "esxcli network ip connection list"),
    )
    lines = []
    for index, (name, command) in enumerate(tools):
        keyword = "if" if index == 0 else "elif"
        lines.append(f"{keyword} _which {name} >/dev/null; then _lv={name}; _lq=$( {{ {command}; }} 2>&1)")
    lines.append("else _lv=none; _lq=; fi")
    return "\n".join(lines)


@dataclass
class Probe:
    """What the probe script found."""

    caps: HostCaps
    binaries: list[dict[str, Any]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    pidfiles: list[dict[str, Any]] = field(default_factory=list)
    pid_alive: bool | None = None
    state: Section | None = None


def parse_probe(out: CommandOutput, token: str) -> Probe:
    """Read the probe script's output; a probe that printed nothing usable is an error."""
    sections = parse_sections(out.stdout, token)
    env = first(sections, "env")
    if env is None or first(sections, "done") is None:
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
                rc = int_or_none(status[3:])
            probe.binaries.append(describe_tool(path, section.text, rc))
        elif section.name == "state":
            probe.state = section
        elif section.name == "pidfile":
            entry = read_pidfile(section.args, section.text)
            if entry is not None:
                probe.pidfiles.append(entry)
        elif section.name == "process" and probe.pidfiles and "checked" not in probe.pidfiles[-1]:
            last = probe.pidfiles[-1]
            kv = parse_kv(section.args)
            last["checked"] = True
            last["alive"] = (
                kv.get("alive") == "1"
                and kv.get("pid") == str(last.get("pid"))
                and is_our_server(section.text, str(last.get("binary") or ""), last["port"])
            )
        elif section.name == "pid":
            probe.pid_alive = parse_kv(section.args).get("alive") == "1"
    return probe


def probe_result(probe: Probe, candidates: Sequence[str]) -> dict[str, Any]:
    """The ``probe`` a ``mode=probe`` task returns, to be handed to later tasks as their ``probe`` option."""
    return {
        "caps": {
            "clock": probe.caps.clock,
            "nap": probe.caps.nap,
            "gnu_timeout": probe.caps.gnu_timeout,
            "esxi": probe.caps.esxi,
            "bash": probe.caps.bash,
        },
        "binaries": [dict(b) for b in probe.binaries],
        "missing": list(probe.missing),
        "candidates": list(candidates),
    }


_CAP_VALUES: dict[str, tuple[Any, ...]] = {
    "clock": ("epochrealtime", "date_ns", "date_s"),
    "nap": ("fracsleep", "usleep", "none"),
    "gnu_timeout": (True, False),
    "esxi": (True, False),
}
_BINARY_KEYS: dict[str, type | tuple[type, ...]] = {
    "path": str,
    "family": (str, type(None)),
    "version": (str, type(None)),
    "runnable": bool,
}


def given_probe(value: Any, candidates: Sequence[str]) -> Probe:
    """The :class:`Probe` behind a ``probe`` option (what an earlier ``mode=probe`` returned), checked."""
    fix = (
        "pass the probe value an esxilab.iperf.iperf_run mode=probe task returned on this host "
        '(register: p, then probe: "{{ p.probe }}"), with the same binary option'
    )
    if not isinstance(value, dict):
        raise IperfRunError(f"probe must be a dict, got {type(value).__name__}; {fix}")
    caps = value.get("caps")
    binaries = value.get("binaries")
    if not isinstance(caps, dict) or not isinstance(binaries, list):
        raise IperfRunError(f"probe has no caps (dict) and binaries (list); {fix}")
    for key, allowed in _CAP_VALUES.items():
        if caps.get(key) not in allowed or isinstance(caps.get(key), bool) != isinstance(allowed[0], bool):
            raise IperfRunError(f"probe.caps.{key}={caps.get(key)!r} is not one of {list(allowed)}; {fix}")
    bash = caps.get("bash", "")
    if not isinstance(bash, str) or (bash and not _SHELL_PATH_RE.match(bash)):
        raise IperfRunError(f"probe.caps.bash={bash!r} is not empty or the absolute path of a bash; {fix}")
    for entry in binaries:
        if not isinstance(entry, dict) or any(not isinstance(entry.get(k), t) for k, t in _BINARY_KEYS.items()):
            raise IperfRunError(f"probe.binaries holds {entry!r}, not an entry of a probe; {fix}")
        if entry["runnable"] and (entry["family"] not in ("iperf2", "iperf3") or not entry["version"]):
            raise IperfRunError(f"probe.binaries holds a runnable entry without family and version: {entry!r}; {fix}")
    if list(value.get("candidates") or []) != list(candidates):
        raise IperfRunError(
            f"probe was made for the binaries {value.get('candidates')!r}, this task looks for {list(candidates)!r}; "
            "probe with the same binary option as the task (or leave binary unset in both)"
        )
    return Probe(
        caps=HostCaps(
            clock=caps["clock"], nap=caps["nap"], gnu_timeout=caps["gnu_timeout"], esxi=caps["esxi"], bash=bash
        ),
        binaries=[{"error": None if b["runnable"] else "not runnable (probe)"} | dict(b) for b in binaries],
        missing=[str(m) for m in value.get("missing") or []],
    )


def given_caps(value: Any) -> HostCaps:
    """The host's tools from a ``probe`` option, checked as :func:`given_probe` checks it, for a task that runs no
    iperf binary (``mode=stop``): whatever binaries it was made for."""
    candidates = value.get("candidates") if isinstance(value, dict) else None
    return given_probe(value, list(candidates) if isinstance(candidates, list) else []).caps


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
            raise IperfRunError(f"binary {binary!r} cannot be used: {found['error']}. {EXEC_HINT}")
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


EXEC_HINT = (
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


def holder_lines(text: str, conflicts: Sequence[Listener]) -> list[str]:
    """The lines of a listing (``ss -p``, ``netstat -p``, ``esxcli``) that show the sockets in ``conflicts``: they
    name the process holding the port where the tool can tell (its name and pid)."""
    wanted = set(conflicts)
    return [" ".join(line.split()) for line in text.splitlines() if wanted.intersection(parse_listeners(line))]
