# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The POSIX ``sh`` scripts run on the host (busybox ``ash`` on ESXi runs them): clock and barrier
snippets, the server start, the stop and the client run.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.pathwalk import WHICH
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.common import (
    KILL_GRACE,
    SERVER_START_WAIT,
    marker,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.probe import HostCaps, listing_snippet
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.state import (
    ENDED,
    ISGUARD,
    ISOURS,
    PIDFILE_FIELDS,
    PIDFILE_NAME_RE,
    cmdline_function,
    state_snippet,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.latency import shell as ping

# --------------------------------------------------------------------------------------------
# Shell snippets: clock, naps, barrier
# --------------------------------------------------------------------------------------------


def now_us(caps: HostCaps) -> str:
    """Set ``_nu`` to the time in microseconds (whole seconds * 10^6 on ``date_s``). With ``$EPOCHREALTIME``
    no fork: no command substitution (a function called in one forks a subshell)."""
    if caps.clock == "date_s":
        return "_nu=$(( $(date +%s) * 1000000 ))"
    source = "$EPOCHREALTIME" if caps.clock == "epochrealtime" else "$(date +%s.%N)"
    # Leading zeros would make the fraction octal: "1$_f - 1000000" keeps it decimal.
    return (
        f"_t={source}; _s=${{_t%%[.,]*}}; _f=${{_t#*[.,]}}000000; "
        '_f=${_f%"${_f#??????}"}; _nu=$(( _s * 1000000 + 1$_f - 1000000 ))'
    )


def _nap_us(caps: HostCaps, var: str, *, quiet_fd: bool = False) -> str:
    """Sleep ``$var`` microseconds (< 10 s) with the best tool the host has (no fork but the sleep's own: the
    fraction's six digits come from arithmetic, not ``printf``). ``quiet_fd``: under bash, where the script opened
    fd 9 on a FIFO nobody writes (``$_fast`` is 1), bash's own ``read -t`` waits instead: no sleep process to start
    and to end."""
    if caps.nap == "fracsleep":
        fraction = f"$(( {var} / 1000000 )).${{_z#1}}"
        nap = f'sleep "{fraction}"'
        if quiet_fd:
            nap = f'if [ "$_fast" = 1 ]; then read -r -t "{fraction}" -u 9 _y; else {nap}; fi'
        return f"_z=$(( {var} % 1000000 + 1000000 )); {nap}"
    if caps.nap == "usleep":
        return f'usleep "{var}"'
    raise ValueError("no sub-second sleep on this host")


#: The barrier's last aim: it sleeps to this many microseconds before the start time, reads the clock again, then
#: sleeps the rest - the time a loaded host took to wake it and fork the sleep is not added to the start.
FINAL_AIM_US = 20000


# Polls (for the banner, the listener, a process's exit): 10 ms naps first, then 20 ms.
FIRST_NAPS = 10


def poll_nap(caps: HostCaps, total: float) -> tuple[str, int]:
    """Shell text for one pause of a poll loop counting ``$i`` (from 0), and how many make ``total`` s.

    Short first (10 ms for the first :data:`FIRST_NAPS` rounds: a banner or an exit usually comes
    at once), then 20 ms. ``sleep 0.01`` works on GNU and busybox (ESXi); ``usleep`` where a
    fractional ``sleep`` is missing; one 1 s sleep per round where the host has neither.
    """
    if caps.nap == "none":
        return "sleep 1", max(1, math.ceil(total))
    first, later = ("sleep 0.01", "sleep 0.02") if caps.nap == "fracsleep" else ("usleep 10000", "usleep 20000")
    rounds = FIRST_NAPS + max(0, math.ceil((total - FIRST_NAPS * 0.01) / 0.02))
    return f'if [ "$i" -lt {FIRST_NAPS} ]; then {first}; else {later}; fi', rounds


def listener_function(port: int, protocol: str) -> str:
    """``_lsn``: exit 0 when a socket listens on ``port`` (TCP ``LISTEN``, UDP bound) in this
    host's (network namespace's) socket table, 1 when none does, 2 when it cannot tell.

    Linux: ``/proc/net/tcp``/``tcp6`` (``udp``/``udp6``). Elsewhere ``ss`` or ``netstat``
    (``-ln``). ESXi has neither (only ``esxcli network ip connection list``, which takes seconds):
    there the banner in the server's own fresh log is the only sign (2).
    """
    table, state, flag = ("udp", "07", "u") if protocol == "udp" else ("tcp", "0A", "t")
    entry = f"^ *[0-9]+: [0-9A-F]+:{port:04X} [0-9A-F]+:[0-9A-F]+ {state} "
    listed = f"[:.]{int(port)}[[:space:]]"
    return (
        "_lsn() { "
        # grep's 2 (a table missing: no IPv6) is "no", not "cannot tell": the other table was read
        f"if [ -r /proc/net/{table} ]; then grep -Eq '{entry}' /proc/net/{table} /proc/net/{table}6 2>/dev/null "
        "&& return 0; return 1; fi; "
        f"if _which ss >/dev/null; then _lq=$(ss -ln{flag} 2>/dev/null); "
        f"elif _which netstat >/dev/null; then _lq=$(netstat -ln{flag} 2>/dev/null); else return 2; fi; "
        f"printf '%s\\n' \"$_lq\" | grep -Eq '{listed}'; }}"
    )


def port_taken(port: int, proc: str = "/proc") -> str:
    """A shell test that fails only where the host's own socket tables say for sure that nothing uses ``port``: no TCP
    socket listens on it and no UDP socket is bound to it in ``/proc/net/{tcp,tcp6,udp,udp6}`` (Linux, this network
    namespace). Where there is no ``/proc/net/tcp`` (ESXi) it holds: the listing decides."""
    entry = f"^ *[0-9]+: [0-9A-F]+:{port:04X} [0-9A-F]+:[0-9A-F]+ %s "
    tcp, udp = entry % "0A", entry % "07"
    net = shlex.quote(f"{proc}/net")
    return (
        f"{{ [ ! -r {net}/tcp ] || "
        f"grep -Eq '{tcp}' {net}/tcp {net}/tcp6 2>/dev/null || "
        f"grep -Eq '{udp}' {net}/udp {net}/udp6 2>/dev/null; }}"
    )


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


def build_barrier(token: str, caps: HostCaps, start_at: float, *, quiet_fd: bool = False) -> str:
    """Shell text that waits until ``start_at`` (epoch seconds, the HOST's clock).

    Prints ``barrier now_us=<time on arrival> target_us=<target>`` first, so the controller can
    tell a barrier that was already past. With a sub-second clock: whole seconds in one sleep, then a sleep to
    :data:`FINAL_AIM_US` before the target, the clock read again, and a sleep for the rest.
    """
    target_us = round(start_at * 1_000_000)
    lines = [
        f"_tgt={target_us}",
        now_us(caps),
        "_n=$_nu",
        marker(token, "barrier", "now_us=$_n target_us=$_tgt"),
    ]
    if caps.clock != "date_s":
        lines += [
            "_r=$(( _tgt - _n ))",
            'if [ "$_r" -gt 1500000 ]; then sleep $(( _r / 1000000 - 1 )) & _w=$!; wait $_w; '
            f"{now_us(caps)}; _r=$(( _tgt - _nu )); fi",
        ]
        if caps.nap == "none":
            lines.append(f'while [ "$_r" -gt 0 ]; do {now_us(caps)}; _r=$(( _tgt - _nu )); done')
        else:
            lines += [
                f'if [ "$_r" -gt {2 * FINAL_AIM_US} ]; then _r=$(( _r - {FINAL_AIM_US} )); '
                f"{_nap_us(caps, '$_r', quiet_fd=quiet_fd)}; {now_us(caps)}; _r=$(( _tgt - _nu )); fi",
                f'if [ "$_r" -gt 0 ]; then {_nap_us(caps, "$_r", quiet_fd=quiet_fd)}; fi',
            ]
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


def started_at_capture(caps: HostCaps) -> str:
    return {
        "epochrealtime": "_sa=$EPOCHREALTIME",
        "date_ns": "_sa=$(date +%s.%N)",
        "date_s": "_sa=$(date +%s)",
    }[caps.clock]


# --------------------------------------------------------------------------------------------
# Scripts
# --------------------------------------------------------------------------------------------

_GUARD = (
    f"{ENDED}; "
    'p=$1; f=$2; t=$3; end=0; if [ "$t" -gt 0 ]; then end=$(( $(date +%s) + t )); fi; '
    'while kill -0 "$p" 2>/dev/null; do '
    # a server that ended is a zombie until it is reaped (a one-off server after its test): it has ended
    'if _ended "$p"; then break; fi; '
    'if [ "$end" -gt 0 ] && [ "$(date +%s)" -ge "$end" ]; then '
    'kill "$p" 2>/dev/null; i=0; '
    f'while kill -0 "$p" 2>/dev/null && [ "$i" -lt {KILL_GRACE} ]; do sleep 1; i=$((i+1)); done; '
    'if kill -0 "$p" 2>/dev/null; then kill -9 "$p" 2>/dev/null; fi; break; fi; '
    "sleep 1; done; "
    'if [ -f "$f" ] && grep -qx "pid=$p" "$f"; then rm -f "$f"; fi'
)


#: ``_lsb``: sets ``_bn=1`` when a line of the server's log ``$_lf`` (the last one also without its line feed) says
#: ``listening`` - iperf's banner, read by the shell itself: no ``grep`` process on every try of every server start.
BANNER_SEEN = (
    '_lsb() { while IFS= read -r _bl || [ -n "$_bl" ]; do case $_bl in *listening*) _bn=1; return 0 ;; esac; '
    'done <"$_lf"; } 2>/dev/null'
)


def build_server_script(
    token: str,
    argv: Sequence[str],
    *,
    caps: HostCaps,
    state_dir: str,
    stem: str,
    server_timeout: int,
    meta: Mapping[str, str],
    port: int,
    protocol: str = "tcp",
    check_listing: bool = True,
    dry: bool = False,
) -> str:
    """Check the host, then start the server in the background, out of the session's reach, plus its guard.

    The checks first (nothing is started when one fails): the private directory; a server of ours
    still running under the same pidfile (``busy pid=..`` and the pidfile; the same ``_isours``
    check as the stop script); with ``check_listing``, a listening socket on the port in the
    listing of ``ss``/``netstat``/``esxcli`` (``listing <tool>`` and the whole listing: the
    controller decides with :func:`parse_listeners` whether it is in the way, and starts again
    without this check when it is not). ``dry`` (check mode) stops after the checks (``would``)
    and creates nothing.

    The files are ``<stem>.pid`` and ``<stem>.log`` in the private directory (created and
    checked first, see :func:`state_snippet`); both are removed and created again under
    ``set -C``, so a link planted there is never followed. The pidfile holds ``pid``, ``guard``
    and ``meta``, each line a ``printf '%s\\n'`` argument (never part of the format).

    The server runs under ``setsid`` when the host has it (a new session: no terminal, no
    hangup signal), else in a process group of its own (``set -m``); ``trap '' HUP`` as well.
    ``setsid`` does not fork here (the background job is no process-group leader), so ``$!``
    is the server's pid.

    ``listening`` needs two signs: the banner in this start's own log (removed and created anew
    above, so no earlier server's banner can be read) and, where the host can tell
    (:func:`listener_function`), a socket listening on the port (``listener=seen``; ``unchecked``
    where it cannot tell). The poll naps 10 ms, then 20 ms (:func:`poll_nap`), for
    ``SERVER_START_WAIT`` seconds at most.

    Prints ``state ...``, then ``started pid=.. guard=.. status=listening|running|exited
    listener=seen|unchecked|none`` and the log.
    """
    nap, tries = poll_nap(caps, SERVER_START_WAIT)
    meta_args = " ".join(shlex.quote(f"{k}={v}") for k, v in meta.items() if "\n" not in v and "\r" not in v)
    done = marker(token, "done")
    checks = [
        "umask 077",
        WHICH,
        state_snippet(token, state_dir, create=not dry),
        f'if [ "$_st" = error ] || {{ [ "$_st" != ok ] && [ {int(dry)} = 0 ]; }}; then {done}; exit 0; fi',
        f'_pf="$_pd/{stem}.pid"; _lf="$_pd/{stem}.log"',
        cmdline_function(),
        ISOURS,
        PIDFILE_FIELDS,
        'if [ "$_st" = ok ] && [ -f "$_pf" ] && [ ! -L "$_pf" ]; then',
        '  _pidf "$_pf"; _op=$_fp; _ob=$_fb',
        f'  if [ -n "$_op" ] && kill -0 "$_op" 2>/dev/null && _isours "$_op" "$_ob" {int(port)}; then',
        "    " + marker(token, "busy", "pid=$_op") + '; head -n 20 "$_pf"; ' + done + "; exit 0",
        "  fi",
        "fi",
    ]
    if check_listing:
        checks += [
            # Linux: nothing listens on the port in the kernel's own tables - no listing (ss -p reads every process's
            # descriptors: 12 ms of CPU a server on the lab)
            f"if {port_taken(port)}; then",
            "  " + listing_snippet().replace("\n", "\n  "),
            f"  if printf '%s\\n' \"$_lq\" | grep -E '[:.]{int(port)}[[:space:]]' | grep -Eiq '^ *udp|LISTEN'; then",
            "    " + marker(token, "listing", "$_lv") + "; printf '%s\\n' \"$_lq\"; " + done + "; exit 0",
            "  fi",
            "fi",
        ]
    if dry:
        return "\n".join([*checks, marker(token, "would"), done])
    return "\n".join(
        [
            *checks,
            'rm -f "$_pf" "$_lf"',
            "set -C",
            # iperf3 installs its own SIGHUP handler, so ignoring HUP (what nohup does) does not keep
            # it alive when an ssh -tt session ends: the kernel signals the terminal's foreground
            # process group. A new session (setsid) or, without setsid, a process group of its own
            # (job control, set -m) keeps the server out of that group.
            "if _which setsid >/dev/null; then { set +m; } 2>/dev/null; _ss=setsid",
            "else { set -m; } 2>/dev/null; _ss=; fi",
            "_t0=$(date +%s)",
            f"_tu=0; if [ {int(server_timeout)} -gt 0 ]; then _tu=$(( _t0 + {int(server_timeout)} )); fi",
            f"( trap '' HUP; exec $_ss {shlex.join(argv)} ) >\"$_lf\" 2>&1 </dev/null &",
            "p=$!",
            f"( trap '' HUP; exec /bin/sh -c {shlex.quote(_GUARD)} esxilab-iperf-guard"
            f' "$p" "$_pf" {int(server_timeout)} ) >/dev/null 2>&1 </dev/null &',
            "g=$!",
            f'printf \'%s\\n\' "pid=$p" "guard=$g" {meta_args} "started=$_t0" "until=$_tu" >"$_pf"',
            listener_function(port, protocol),
            BANNER_SEEN,
            "st=running; ls=none; _bn=0; i=0",
            f'while [ "$i" -lt {tries} ]; do',
            '  if ! kill -0 "$p" 2>/dev/null; then st=exited; break; fi',
            '  if [ "$_bn" = 0 ]; then _lsb; fi',
            '  if [ "$_bn" = 1 ]; then _lsn; case $? in 0) st=listening; ls=seen; break ;; '
            "2) st=listening; ls=unchecked; break ;; esac; fi",
            f"  {nap}",
            "  i=$((i+1))",
            "done",
            'if [ "$st" != exited ] && ! kill -0 "$p" 2>/dev/null; then st=exited; fi',
            'if [ "$st" = exited ]; then kill "$g" 2>/dev/null; rm -f "$_pf"; fi',
            marker(token, "started", "pid=$p guard=$g status=$st listener=$ls"),
            'cat "$_lf" 2>/dev/null',
            marker(token, "done"),
        ]
    )


def _stop_head(token: str, caps: HostCaps, state_dir: str, proc: str) -> list[str]:
    """The stop scripts' head: the private directory, the process checks and ``_stop1``.

    ``_stop1 PID GUARD BINARY PORT NAME`` stops one server: right before any ``kill`` it checks again
    that the pidfile ``NAME`` (in the private directory) still lists the pid and that the process
    still runs ``<binary> -s -p <port>`` (``_isours``); the guard is killed only when its command
    line is the guard of that pid. A pid that now belongs to another process is left alone
    (``reused``) and its stale pidfile removed. It prints ``stopped pid=.. status=..`` and the log
    ``<stem>.log`` of the same directory, read only when it is a regular file.
    """
    nap, tries = poll_nap(caps, KILL_GRACE)
    # A stopped process stays a zombie until its parent (often PID 1) reaps it, and kill -0
    # still succeeds on a zombie: read its state where /proc exists, so stop returns at once.
    return [
        state_snippet(token, state_dir, create=False),
        'if [ "$_st" != ok ]; then ' + marker(token, "done") + "; exit 0; fi",
        cmdline_function(proc),
        ISOURS,
        ISGUARD,
        ENDED,
        '_alive() { kill -0 "$1" 2>/dev/null || return 1; ! _ended "$1"; }',
        "_stop1() {",
        '  _pf="$_pd/$5"; _lf="$_pd/${5%.pid}.log"',
        '  if [ -f "$_pf" ] && [ ! -L "$_pf" ] && grep -qx "pid=$1" "$_pf" 2>/dev/null; then',
        '    if _isours "$1" "$3" "$4"; then',
        '      if [ -n "$2" ] && _isguard "$2" "$1"; then kill "$2" 2>/dev/null; fi',
        '      kill "$1" 2>/dev/null; i=0',
        f'      while _alive "$1" && [ "$i" -lt {tries} ]; do {nap}; i=$((i+1)); done',
        '      if _alive "$1" && _isours "$1" "$3" "$4"; then kill -9 "$1" 2>/dev/null; st=killed; else st=stopped; fi',
        '    elif _alive "$1"; then st=reused',  # a zombie (a one-off server that ended, not reaped) is gone
        "    else st=gone; fi",
        '    rm -f "$_pf"',
        # no pidfile and no server of ours under that pid: it ended and its guard removed the pidfile (a
        # one-off server after its test) - gone; anything else changed the pidfile: left alone
        '  elif [ ! -e "$_pf" ] && [ ! -L "$_pf" ] && ! { _alive "$1" && _isours "$1" "$3" "$4"; }; then st=gone',
        "  else st=notours; fi",
        "  " + marker(token, "stopped", "pid=$1 status=$st"),
        '  if [ -f "$_lf" ] && [ ! -L "$_lf" ]; then cat "$_lf"; fi',
        "}",
    ]


def build_stop_script(
    token: str, targets: Sequence[Mapping[str, Any]], *, caps: HostCaps, state_dir: str, proc: str = "/proc"
) -> str:
    """Stop each target (a :func:`read_pidfile` entry) with ``_stop1`` (:func:`_stop_head`): guard first, then TERM,
    then KILL after a grace."""
    lines = _stop_head(token, caps, state_dir, proc)
    for target in targets:
        guard = target.get("guard")
        name = str(target["name"])
        if not PIDFILE_NAME_RE.match(name):
            raise ValueError(f"not a pidfile name of this module: {name!r}")
        q_bin = shlex.quote(str(target.get("binary") or ""))
        lines.append(
            f"_stop1 {int(target['pid'])} {int(guard) if isinstance(guard, int) else repr('')} {q_bin} "
            f"{int(target['port'])} {name}"
        )
    lines.append(marker(token, "done"))
    return "\n".join(lines)


def build_stop_port_script(token: str, name: str, *, caps: HostCaps, state_dir: str, proc: str = "/proc") -> str:
    """Stop the server the pidfile ``name`` lists, read by the script itself: no probe session before it (the caller
    knows the host's tools, ``iperf_run``'s ``probe`` option). Prints the pidfile (section ``pidfile NAME``, as the
    probe does) and then what ``_stop1`` prints; nothing when there is no such pidfile (or it is a link)."""
    if not PIDFILE_NAME_RE.match(name):
        raise ValueError(f"not a pidfile name of this module: {name!r}")
    port = int(name.split("-")[2].split(".")[0])
    return "\n".join(
        [
            *_stop_head(token, caps, state_dir, proc),
            PIDFILE_FIELDS,
            f'_pf="$_pd/{name}"',
            'if [ -f "$_pf" ] && [ ! -L "$_pf" ]; then',
            "  " + marker(token, "pidfile", name),
            '  head -n 20 "$_pf"',
            '  _pidf "$_pf"',
            f'  if [ -n "$_fp" ]; then _stop1 "$_fp" "$_fg" "$_fb" {port} {name}; fi',
            "fi",
            marker(token, "done"),
        ]
    )


#: The client started before the barrier: it waits on the FIFO ``$1`` and runs the rest of its arguments on the word
#: ``go`` only - the end of the FIFO without it (the script hung up and gone: its end of the FIFO closed before the
#: TERM to its ``timeout`` reached this shell, as can happen on a loaded host) ends it without a test.
WAIT_FOR_GO = 'read -r _x <"$1" && [ "$_x" = go ] || exit 125; shift; exec "$@" 8>&- 9>&-'


def build_client_script(
    token: str,
    argv: Sequence[str],
    *,
    caps: HostCaps,
    timeout: float,
    start_at: float | None = None,
    state_dir: str = "/tmp",
    latency: Mapping[str, Any] | None = None,
) -> str:
    """Run the client: optional barrier, clock reading, iperf bounded by ``timeout``.

    With ``latency`` (``latency.shell.plan()``) the idle ping starts on arrival, before the barrier, and the loaded
    ping right after iperf; their outputs follow in the sections ``latency_idle`` / ``latency_loaded``
    (``latency/shell.py`` says how they are bounded and stopped).

    Its files (``esxilab-iperf-<shell pid>.out/.err/.timedout``) are in the private directory
    of ``state_dir`` (:func:`state_snippet`, created when missing), removed first and created
    under ``set -C``: a link planted there is never followed.

    With GNU ``timeout`` the run is wrapped by it (exit 124 = timed out); elsewhere (busybox,
    whose ``timeout`` syntax changed in 1.30) a watchdog subshell kills iperf and leaves a
    marker file. The watchdog sleeps in the background and ``wait``s, so the TERM that ends it
    when iperf finished first takes effect at once (a trap waits for a foreground command).
    stdout and stderr go to separate files, so iperf3's JSON stays clean even
    when ESXi's iperf3 spams ``getsockopt`` errors on stderr.

    Under bash (``caps.shell``) with GNU ``timeout`` and a barrier, the client is started before the barrier and waits
    on a FIFO of the private directory (``esxilab-iperf-<pid>.go``, opened read-write by the script, so neither end
    blocks); at the start time the script reads its start time and writes ``go`` to the FIFO (the client runs on that
    word only, :data:`WAIT_FOR_GO`): the fork and the two execs
    (``timeout``, ``sh``) of every client are no longer made by all the clients of the host at the same moment, only
    iperf's exec. The barrier's naps are bash's ``read -t`` on a second FIFO nobody writes (no sleep process). Where
    ``mkfifo`` fails, the script runs as without bash.
    """
    seconds = max(1, math.ceil(timeout))
    ahead = bool(caps.shell) and caps.gnu_timeout and start_at is not None
    lines = [
        "umask 077",
        state_snippet(token, state_dir, create=True),
        'if [ "$_st" != ok ]; then ' + marker(token, "done") + "; exit 0; fi",
        '_o="$_pd/esxilab-iperf-$$.out"; _e="$_pd/esxilab-iperf-$$.err"',
        '_k="$_pd/esxilab-iperf-$$.timedout"; _p=; _w=; _g=; _ip=; _lp=; _irc=; _lrc=; _fast=0',
        '_q="$_pd/esxilab-iperf-$$.go"; _h="$_pd/esxilab-iperf-$$.nap"',
        f'rm -f "$_o" "$_e" "$_k" "$_q" "$_h" {ping.IDLE_FILE} {ping.LOADED_FILE}',
        "set -C",
        # An interrupted run (hang-up, play stopped) leaves no files and no iperf behind. Long
        # waits are `cmd & wait`, so a signal is handled at once (a trap waits for a foreground
        # command to end).
        '_stop() { for _x in $_p $_w $_g $_ip $_lp; do kill "$_x" 2>/dev/null; done; }',
        f"""trap 'rm -f "$_o" "$_e" "$_k" "$_q" "$_h" {ping.IDLE_FILE} {ping.LOADED_FILE}' EXIT""",
        "trap '_stop; exit 129' HUP",
        "trap '_stop; exit 143' TERM",
        "trap '_stop; exit 130' INT",
    ]
    idle = latency is not None and latency["idle_argv"] is not None
    if latency is not None and latency["idle_argv"] is not None:
        lines.append(ping.idle_start(latency["idle_argv"]))
    command = shlex.join(argv)
    if ahead and start_at is not None:
        # the client started now, waiting for the FIFO; its timeout counts the wait at the barrier too
        lines += [
            'if mkfifo -m 600 "$_q" "$_h" 2>/dev/null; then exec 8<>"$_q" 9<>"$_h"; _fast=1; fi',
            'if [ "$_fast" = 1 ]; then',
            f"  {now_us(caps)}; _lead=$(( ({round(start_at * 1_000_000)} - _nu) / 1000000 + 1 ))",
            '  if [ "$_lead" -lt 0 ]; then _lead=0; fi',
            f"  timeout -k {KILL_GRACE} $(( {seconds} + _lead )) sh -c {shlex.quote(WAIT_FOR_GO)} sh "
            f'"$_q" {command} >"$_o" 2>"$_e" </dev/null &',
            "  _p=$!",
            "fi",
        ]
    if start_at is not None:
        lines.append(build_barrier(token, caps, start_at, quiet_fd=ahead))
    if idle:
        lines.append(ping.idle_end(barrier=start_at is not None))
    loaded = [ping.loaded_start(latency["loaded_argv"])] if latency is not None else []
    lines.append(started_at_capture(caps))
    if ahead:
        lines.append('if [ "$_fast" = 1 ]; then echo go >&8; fi')  # the client goes (a write to a FIFO held open)
    # the start time is printed after the test: a line to the session's terminal now wakes the host's sshd (and the
    # controller's ssh) at the moment every client of the host wakes up
    if caps.gnu_timeout:
        lines += [
            'if [ "$_fast" != 1 ]; then',
            f'  timeout -k {KILL_GRACE} {seconds} {command} >"$_o" 2>"$_e" </dev/null &',
            "  _p=$!",
            "fi",
            *loaded,
            'wait "$_p"; _rc=$?',
            'if [ "$_rc" -eq 124 ] || [ "$_rc" -eq 137 ]; then : >"$_k"; fi',
        ]
    else:
        lines += [
            f'{command} >"$_o" 2>"$_e" </dev/null &',
            "_p=$!",
            *loaded,
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
        marker(token, "started_at", "$_sa"),
        'if [ -f "$_k" ] && [ ! -L "$_k" ]; then _to=1; else _to=0; fi',
        *([ping.loaded_end()] if latency is not None else []),
        marker(token, "exit", "rc=$_rc timedout=$_to"),
        marker(token, "stdout"),
        # only what iperf wrote: never through a link (a shell that could not create the file
        # leaves whatever was there)
        'if [ -f "$_o" ] && [ ! -L "$_o" ]; then cat "$_o"; fi',
        marker(token, "stderr"),
        'if [ -f "$_e" ] && [ ! -L "$_e" ]; then cat "$_e"; fi',
        *(ping.output(lambda name, args: marker(token, name, args)) if latency is not None else []),
        marker(token, "done"),
        f'rm -f "$_o" "$_e" "$_k" "$_q" "$_h" {ping.IDLE_FILE} {ping.LOADED_FILE}',
    ]
    return "\n".join(lines)
