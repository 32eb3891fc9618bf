# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The module's private state directory on the host, its pidfiles, and the process checks.

Remote files live in a *private directory* ``<state_dir>/esxilab-iperf-<uid>`` (``state_dir``
default ``/tmp``, ``uid`` the numeric user id the scripts run as), created with ``mkdir -m 700`` and
refused when it is a symbolic link, not a directory, owned by another user or open to others
(:func:`state_snippet`). In it: ``esxilab-iperf-<port>[-<bind>].pid`` (key=value lines ``pid``,
``guard``, ``tool``, ``port``, ``bind``, ``binary``, ``owner``, ``started``, ``until``, written with
``printf '%s\\n'`` arguments),
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

import re
import shlex
from collections.abc import Mapping
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.framing import Section, parse_kv
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.common import IperfRunError, marker

# --------------------------------------------------------------------------------------------
# Private state directory
# --------------------------------------------------------------------------------------------

PIDFILE_NAME_RE = re.compile(r"^esxilab-iperf-(?P<port>[0-9]{1,5})(?:-(?P<bind>[0-9A-Za-z._]+))?\.pid$")
_PIDFILE_KEYS = ("pid", "guard", "tool", "port", "bind", "binary", "owner", "started", "until")


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
    Uses ``id -u``, ``ls -ldn`` (``ls -ld`` and owner names - then ``id -un`` - where ``-n`` is missing), ``mkdir
    -m`` and ``[ -L ]``: busybox has all of them.
    """
    q_sd = shlex.quote(state_dir)
    mkdir = 'mkdir -m 700 "$_pd" 2>/dev/null || { [ -e "$_pd" ] || [ -L "$_pd" ] || _se=mkdir; }' if create else ":"
    return "\n".join(
        [
            # _ls PATH: its mode string (_lm) and owner (_lo): numeric with -n, the name where an
            # old ls lacks -n; _me OWNER: that owner is this user - a number is the uid, a name is compared with
            # this user's name, read (id -un) only then: an ls with -n needs no second id
            '_ls() { set -f; set -- $(ls -ldn "$1" 2>/dev/null || ls -ld "$1" 2>/dev/null); set +f; '
            "_lm=${1:-unknown}; _lo=${3:-unknown}; }",
            '_me() { [ "$1" = "$_u" ] && return 0; case $1 in *[!0-9]*) ;; *) return 1 ;; esac; '
            '[ -n "$_un" ] || _un=$(id -un 2>/dev/null); [ -n "$_un" ] && [ "$1" = "$_un" ]; }',
            f"_sd={q_sd}; _se=; _sx=; _st=ok; _u=$(id -u 2>/dev/null); _un=; _pd=",
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
            marker(token, "state", "status=$_st error=$_se uid=$_u $_sx"),
        ]
    )


def state_error(section: Section | None, state_dir: str) -> IperfRunError | None:
    """The error to raise for a ``state`` section that refused the private directory (else None)."""
    if section is None:
        return IperfRunError(f"the host script did not report on state_dir={state_dir!r}; nothing was done")
    kv = parse_kv(section.args)
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


def cmdline_function(proc: str = "/proc") -> str:
    """``_cmdline PID``: print the process's command line (arguments joined by spaces).

    Linux: ``/proc/PID/cmdline``. Elsewhere: procps ``ps -e -ww -o pid,args`` (first: without ``-ww``
    procps cuts a piped line at 80 columns, and a long path hid ``-s -p PORT``), busybox ``ps -o
    pid,args``, then ESXi's ``ps -c`` (world id or cartel id in the first two columns; its
    format is not verified on a real host). Prints nothing when the process is unknown.
    """
    q_proc = shlex.quote(proc)
    return (
        "_cmdline() { "
        f"if [ -r {q_proc}/\"$1\"/cmdline ]; then tr '\\000' ' ' <{q_proc}/\"$1\"/cmdline; echo; return 0; fi; "
        'for _po in "-e -ww -o pid,args" "-o pid,args" "-c"; do '
        '_l=$(ps $_po 2>/dev/null | awk -v p="$1" -v o="$_po" '
        "'$1 == p || ($2 == p && o == \"-c\") { print; exit }'); "
        'if [ -n "$_l" ]; then echo "$_l"; return 0; fi; done; return 1; }'
    )


# `_isours PID BINARY PORT`: the process runs `<binary> -s -p <port>` (what build_server_argv
# starts), or an iperf binary a wrapper exec'd with those arguments. See is_our_server.
ISOURS = (
    '_isours() { _c=" $(_cmdline "$1") "; case $_c in *" $2 -s -p $3 "*) return 0 ;; '
    '*iperf*" -s -p $3 "*) return 0 ;; esac; return 1; }'
)
# `_isguard GUARD PID`: the guard shell started for server PID (its $0 and first argument).
ISGUARD = '_isguard() { case " $(_cmdline "$1") " in *" esxilab-iperf-guard $2 "*) return 0 ;; esac; return 1; }'

# `_ended PID`: the process is a zombie - it has ended and is not reaped yet (a one-off server after its test); its
# state follows the last ") " of /proc/PID/stat (the name in parentheses may hold one), read by the shell itself. No
# /proc (ESXi): not known to have ended.
ENDED = (
    '_ended() { _sl=; IFS= read -r _sl 2>/dev/null <"/proc/$1/stat"; case ${_sl##*") "} in Z*) return 0 ;; esac; '
    "return 1; }"
)
# `_pidf FILE`: the pidfile's pid, guard and binary into _fp, _fg, _fb - each from the first line of its key, as
# read_pidfile reads them (a pid or guard that is not a number: empty), by the shell itself: no sed and head for
# each key in every stop.
PIDFILE_FIELDS = (
    '_pidf() { _fp=; _fg=; _fb=; _fs=:; while IFS= read -r _fl || [ -n "$_fl" ]; do case $_fl in '
    "pid=*) case $_fs in *:p:*) continue ;; esac; _fs=${_fs}p:; "
    "case ${_fl#pid=} in ''|*[!0-9]*) ;; *) _fp=${_fl#pid=} ;; esac ;; "
    "guard=*) case $_fs in *:g:*) continue ;; esac; _fs=${_fs}g:; "
    "case ${_fl#guard=} in ''|*[!0-9]*) ;; *) _fg=${_fl#guard=} ;; esac ;; "
    "binary=*) case $_fs in *:b:*) continue ;; esac; _fs=${_fs}b:; _fb=${_fl#binary=} ;; "
    'esac; done <"$1"; }'
)


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
        if match.group("bind") and name_part(content.get("bind", "")) == match.group("bind")
        else (match.group("bind") or None),
        "binary": content.get("binary"),
        # the run that started it and when (leftover.py); never trusted: checked where they are used
        "owner": content.get("owner") or None,
        "started": int(content["started"]) if content.get("started", "").isdigit() else None,
        "until": int(content["until"]) if content.get("until", "").isdigit() else None,
        "alive": False,
    }


def name_part(bind: str) -> str:
    return re.sub(r"[^0-9A-Za-z.]", "_", bind)


def state_stem(port: int, bind: str | None = None) -> str:
    """``esxilab-iperf-<port>[-<bind>]``: the name of a server's pidfile and log without suffix."""
    return f"esxilab-iperf-{port}" + (f"-{name_part(bind)}" if bind else "")


def state_paths(directory: str, port: int, bind: str | None = None) -> tuple[str, str]:
    """``(pidfile, logfile)`` of the server on ``port`` (and ``bind``, when it is bound) in ``directory``
    (the private directory, see :func:`private_dir`).

    The bind address is part of the name so that servers on the same port but different
    addresses keep separate files when hosts share a file system (namespaces, NFS /tmp).
    """
    base = directory.rstrip("/") or ""
    stem = state_stem(port, bind)
    return f"{base}/{stem}.pid", f"{base}/{stem}.log"


def raise_state_error(section: Section | None, state_dir: str, result: Mapping[str, Any] | None = None) -> None:
    error = state_error(section, state_dir)
    if error is not None:
        error.result = dict(result or {}) | error.result
        raise error


def private_dir_of(section: Section | None, state_dir: str) -> str:
    uid = parse_kv(section.args).get("uid", "") if section is not None else ""
    return private_dir(state_dir, uid) if uid.isdigit() else f"{state_dir.rstrip('/')}/esxilab-iperf-<uid>"
