# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The restore journal on an ESXi host, and its dead-man timer (busybox ``sh`` only).

Before the first change on a host, ``esxi_firewall`` and ``esxi_iperf_install`` write what must
be put back into a directory on the host (default :data:`DEFAULT_DIR`, under ESXi's persistent
``/scratch``): one small file per value, the *earliest* value wins (a key that exists is never
overwritten, so a later run cannot replace the original with a changed value).

=========================  ==========================================================
file                       content
=========================  ==========================================================
``firewall.enabled``       ``true`` / ``false`` -- the firewall's enabled state
``firewall.default_action`` ``PASS`` / ``DROP``
``firewall.ruleset.ID``    ``true`` / ``false`` -- one per ruleset changed
``exec.runtime_option``    ``0`` / ``1`` -- ``/User/execInstalledOnly``
``exec.app_domain``        ``enforcing`` / ``disabled`` -- the appDom security domain
``files``                  the copies made, one path a line
``vib``                    the VIB name installed
``deadline``               epoch second at which the dead-man restores
``deadman.sh``             the dead-man script; ``deadman.pid`` its pid
=========================  ==========================================================

The directory is created ``0700`` and refused when it is a symlink, not a directory or not
owned by the connecting user. Files are written to a temporary name in that directory
(``set -C``: never through an existing name) and renamed into place.

**Dead-man timer.** When a firewall or exec-policy value is recorded, ``deadman.sh`` is started
detached (``setsid`` when the host has it, else its own process group; ``HUP`` ignored). It wakes
at least every :data:`POLL_SECONDS`, exits as soon as nothing is pending, and at ``deadline``
puts back everything pending from the journal files (exec policy, copies, rulesets, default
action, and the firewall's enabled state last) -- no controller needed. Recording again moves the
deadline to the later of the two. A normal restore clears the keys and stops the timer (after
checking that the pid in ``deadman.pid`` still runs ``deadman.sh`` of this directory).

Everything here is plain data and shell text; the I/O is the ``execute`` callable a caller gives.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.paths import BUNDLED_IPERF3_COPY, VIB_IPERF_COPY
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import Execute, HostError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.framing import marker, split_sections
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.pathwalk import WHICH

__all__ = [
    "DEFAULT_DEADLINE",
    "DEFAULT_DIR",
    "SCOPES",
    "Journal",
    "JournalError",
    "JournalState",
    "firewall_entries",
    "install_entries",
    "journal_from_args",
    "parse_output",
]

#: On ESXi ``/scratch`` points at persistent storage (the OSDATA volume or a datastore), so the
#: journal survives a reboot; ``/tmp`` is a ramdisk that a reboot empties.
DEFAULT_DIR = "/scratch/esxilab-iperf"
#: Seconds after the window opens at which the dead-man puts the host back (3000 s planned + 600 s margin).
DEFAULT_DEADLINE = 3600
POLL_SECONDS = 5
SCOPES = ("firewall", "install")
#: The tag of the journal scripts' marker lines (the host layer's framing, ``host/framing.py``).
_TAG = "esxilab-journal"
_RULESET_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_VIB_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
#: Files a restore may remove: only the copies the install makes.
REMOVABLE = (BUNDLED_IPERF3_COPY, VIB_IPERF_COPY)


class JournalError(HostError):
    """The journal cannot be used; ``message`` names the cause and the fix (the caller adds the module's name)."""


@dataclass(frozen=True, slots=True)
class JournalState:
    """What the journal on one host records (restore values in the modules' ``restore`` format)."""

    directory: str
    exists: bool
    firewall: dict[str, Any] = field(default_factory=dict)
    install: dict[str, Any] = field(default_factory=dict)
    deadline: int | None = None
    deadman_pid: int | None = None
    deadman_running: bool = False

    @property
    def pending(self) -> bool:
        return bool(self.firewall or self.install)

    def as_dict(self) -> dict[str, Any]:
        return {
            "directory": self.directory,
            "exists": self.exists,
            "pending": self.pending,
            "firewall": self.firewall,
            "install": self.install,
            "deadman": {"running": self.deadman_running, "pid": self.deadman_pid, "deadline": self.deadline},
        }


# --------------------------------------------------------------------------------------------
# Restore values <-> journal keys
# --------------------------------------------------------------------------------------------


def _flag(value: Any) -> str:
    return "true" if value else "false"


def firewall_entries(restore: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Journal keys of an ``esxi_firewall`` ``restore`` value."""
    out: list[tuple[str, str]] = []
    if restore.get("enabled") is not None:
        out.append(("firewall.enabled", _flag(restore["enabled"])))
    if restore.get("default_action") is not None:
        action = str(restore["default_action"])
        if action not in ("PASS", "DROP"):
            raise JournalError(f"journal: default_action must be PASS or DROP, got {action!r}")
        out.append(("firewall.default_action", action))
    for name, enabled in sorted((restore.get("rulesets") or {}).items()):
        if not _RULESET_RE.match(str(name)):
            raise JournalError(f"journal: ruleset id {name!r} cannot be journaled (letters, digits, . _ - only)")
        out.append((f"firewall.ruleset.{name}", _flag(enabled)))
    return out


def install_entries(restore: Mapping[str, Any]) -> tuple[list[tuple[str, str]], list[str]]:
    """Journal keys and copied files of an ``esxi_iperf_install`` ``restore`` value."""
    out: list[tuple[str, str]] = []
    previous = restore.get("exec_installed_only_previous")
    if previous is not None:
        if previous not in (0, 1) or isinstance(previous, bool):
            raise JournalError(f"journal: exec_installed_only_previous must be 0 or 1, got {previous!r}")
        out.append(("exec.runtime_option", str(int(previous))))
    level = restore.get("app_domain_previous")
    if level is not None:
        if level not in ("enforcing", "disabled"):
            raise JournalError(f"journal: app_domain_previous must be enforcing or disabled, got {level!r}")
        out.append(("exec.app_domain", str(level)))
    vib = restore.get("installed_vib")
    if vib is not None:
        if not _VIB_RE.match(str(vib)):
            raise JournalError(f"journal: installed_vib {vib!r} is not a VIB name")
        out.append(("vib", str(vib)))
    files = [str(f) for f in restore.get("created_files") or []]
    bad = [f for f in files if f not in REMOVABLE]
    if bad:
        raise JournalError(f"journal: only the copies {', '.join(REMOVABLE)} are journaled, got {bad}")
    return out, files


def _state_from(
    directory: str, exists: bool, values: Mapping[str, str], files: Sequence[str], deadman: str
) -> JournalState:
    firewall: dict[str, Any] = {}
    install: dict[str, Any] = {}
    rulesets: dict[str, bool] = {}
    for key, value in values.items():
        if key == "firewall.enabled" and value in ("true", "false"):
            firewall["enabled"] = value == "true"
        elif key == "firewall.default_action" and value in ("PASS", "DROP"):
            firewall["default_action"] = value
        elif key.startswith("firewall.ruleset.") and value in ("true", "false"):
            rulesets[key[len("firewall.ruleset.") :]] = value == "true"
        elif key == "exec.runtime_option" and value in ("0", "1"):
            install["exec_installed_only_previous"] = int(value)
        elif key == "exec.app_domain" and value in ("enforcing", "disabled"):
            install["app_domain_previous"] = value
        elif key == "vib" and _VIB_RE.match(value):
            install["installed_vib"] = value
    if rulesets:
        firewall["rulesets"] = dict(sorted(rulesets.items()))
    kept = [f for f in files if f in REMOVABLE]
    if kept:
        install["created_files"] = list(dict.fromkeys(kept))
    fields = dict(part.split("=", 1) for part in deadman.split() if "=" in part)
    pid = fields.get("pid", "")
    deadline = fields.get("deadline", "")
    return JournalState(
        directory=directory,
        exists=exists,
        firewall=firewall,
        install=install,
        deadline=int(deadline) if deadline.isdigit() else None,
        deadman_pid=int(pid) if pid.isdigit() else None,
        deadman_running=fields.get("running") == "yes",
    )


def parse_output(directory: str, text: str) -> JournalState:
    """The state printed by a journal script (raises :class:`JournalError` on a refusal)."""
    values: dict[str, str] = {}
    files: list[str] = []
    deadman = ""
    exists = True
    complete = False
    for section in split_sections(text, _TAG):
        kind, rest = section.name.rstrip("\r"), section.args.rstrip("\r")
        if kind == "refused":
            raise JournalError(
                f"journal directory {directory}: {rest}. Fix: remove it (or point journal_dir elsewhere) so that"
                " the collection can create it as a 0700 directory owned by the connecting user."
            )
        if kind == "error":
            raise JournalError(f"journal directory {directory}: {rest}")
        if kind == "absent":
            exists = False
        elif kind == "entry":
            key, _equals, value = rest.partition("=")
            values[key] = value
        elif kind == "file":
            files.append(rest)
        elif kind == "deadman":
            deadman = rest
        elif kind == "ok":
            complete = True
    if not complete:
        raise JournalError(f"journal directory {directory}: the journal script did not finish: {text.strip()[-300:]!r}")
    return _state_from(directory, exists, values, files, deadman)


# --------------------------------------------------------------------------------------------
# Shell text (busybox ash; POSIX sh)
# --------------------------------------------------------------------------------------------

#: The dead-man: ``sh DIR/deadman.sh DIR``. Reads the journal files when the deadline passes.
DEADMAN_SCRIPT = r"""# esxilab.iperf dead-man timer: puts the host back at the deadline unless a restore cancels it
d=$1
_pending() {
    for _f in "$d"/firewall.* "$d"/exec.* "$d"/files; do [ -f "$_f" ] && return 0; done
    return 1
}
while :; do
    [ -f "$d/deadline" ] || exit 0
    _pending || exit 0
    dl=$(cat "$d/deadline" 2>/dev/null)
    case "$dl" in '' | *[!0-9]*) exit 0 ;; esac
    now=$(date +%s)
    [ "$now" -ge "$dl" ] && break
    left=$((dl - now))
    [ "$left" -gt POLL ] && left=POLL
    sleep "$left"
done
_log() { printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >>"$d/deadman.log"; }
_run() { if "$@" >/dev/null 2>&1; then _log "done: $*"; return 0; fi; _log "failed: $*"; return 1; }
_log "deadline reached: restoring"
if [ -f "$d/exec.runtime_option" ]; then
    v=$(cat "$d/exec.runtime_option")
    case "$v" in 0 | 1)
        _run esxcli system settings advanced set -o /User/execInstalledOnly -i "$v" && rm -f "$d/exec.runtime_option"
    esac
fi
if [ -f "$d/exec.app_domain" ]; then
    v=$(cat "$d/exec.app_domain")
    case "$v" in enforcing | disabled)
        _run localcli system secpolicy domain set -n appDom -l "$v" && rm -f "$d/exec.app_domain"
    esac
fi
if [ -f "$d/files" ]; then
    ok=yes
    while IFS= read -r p; do
        case "$p" in REMOVABLE) _run rm -f "$p" || ok=no ;; esac
    done <"$d/files"
    [ "$ok" = yes ] && rm -f "$d/files"
fi
for f in "$d"/firewall.ruleset.*; do
    [ -f "$f" ] || continue
    id=${f##*/firewall.ruleset.}
    v=$(cat "$f")
    case "$v" in true | false)
        _run esxcli network firewall ruleset set --ruleset-id "$id" --enabled "$v" && rm -f "$f"
    esac
done
if [ -f "$d/firewall.default_action" ]; then
    case "$(cat "$d/firewall.default_action")" in PASS) a=true ;; DROP) a=false ;; *) a= ;; esac
    [ -n "$a" ] && _run esxcli network firewall set --default-action "$a" && rm -f "$d/firewall.default_action"
fi
if [ -f "$d/firewall.enabled" ]; then
    v=$(cat "$d/firewall.enabled")
    case "$v" in true | false) _run esxcli network firewall set --enabled "$v" && rm -f "$d/firewall.enabled" ;; esac
fi
rm -f "$d/deadline" "$d/deadman.pid"
_log "restore finished"
""".replace("POLL", str(POLL_SECONDS)).replace("REMOVABLE", " | ".join(REMOVABLE))


def _prelude(directory: str, *, create: bool) -> str:
    """Check (and with ``create``, make) the directory; define the helpers every script uses."""
    q = shlex.quote(directory)
    make = (
        'if [ ! -e "$d" ] && [ ! -L "$d" ]; then ( umask 077; mkdir -p "$d" ) || _fail "cannot create it"; fi'
        if create
        else f'if [ ! -e "$d" ] && [ ! -L "$d" ]; then {marker(_TAG, "absent")}; {marker(_TAG, "ok")}; exit 0; fi'
    )
    return "\n".join(
        [
            f"d={q}",
            f"_fail() {{ {marker(_TAG, 'error', '$*')}; exit 0; }}",
            f"_refuse() {{ {marker(_TAG, 'refused', '$*')}; exit 0; }}",
            make,
            '[ -L "$d" ] && _refuse "it is a symlink"',
            '[ -d "$d" ] || _refuse "it is not a directory"',
            "me=$(id -u 2>/dev/null)",
            "owner=$(ls -ldn \"$d\" 2>/dev/null | awk '{print $3}')",
            'if [ -n "$me" ]; then [ "$owner" = "$me" ] || _refuse "it is owned by uid $owner, not by the connecting'
            ' user (uid $me)"; else [ -O "$d" ] || _refuse "it is not owned by the connecting user"; fi',
            # the helpers below only run on a directory of ours
            '_put() { _t="$d/.tmp.$$"; rm -f "$_t"; ( set -C; printf \'%s\\n\' "$2" >"$_t" ) && mv -f "$_t" "$d/$1"'
            ' || _fail "cannot write $1"; }',
            "_cmdline() { if [ -r \"/proc/$1/cmdline\" ]; then tr '\\000' ' ' <\"/proc/$1/cmdline\";"
            " else ps -c 2>/dev/null | awk -v p=\"$1\" '$1 == p || $2 == p'; fi; }",
            '_ours() { _p=$(cat "$d/deadman.pid" 2>/dev/null); case "$_p" in \'\' | *[!0-9]*) return 1 ;; esac;'
            ' kill -0 "$_p" 2>/dev/null || return 1; _cmdline "$_p" | grep -qF "$d/deadman.sh"; }',
            '_pending() { for _f in "$d"/firewall.* "$d"/exec.* "$d"/files; do [ -f "$_f" ] && return 0; done;'
            " return 1; }",
        ]
    )


def _report() -> str:
    """Print every entry, the copies and the timer; then ``ok``."""
    return "\n".join(
        [
            'for _f in "$d"/firewall.* "$d"/exec.* "$d"/vib; do',
            '  [ -f "$_f" ] || continue',
            "  " + marker(_TAG, "entry", '${_f##*/}=$(head -n 1 "$_f")'),
            "done",
            'if [ -f "$d/files" ]; then while IFS= read -r _l; do',
            "  " + marker(_TAG, "file", "$_l"),
            'done <"$d/files"; fi',
            "if _ours; then _r=yes; else _r=no; fi",
            marker(
                _TAG,
                "deadman",
                'running=$_r pid=$(cat "$d/deadman.pid" 2>/dev/null) deadline=$(cat "$d/deadline" 2>/dev/null)',
            ),
            marker(_TAG, "ok"),
        ]
    )


def read_script(directory: str) -> str:
    """Print the journal; changes nothing (an absent directory is reported, not created)."""
    return _prelude(directory, create=False) + "\n" + _report()


def record_script(
    directory: str, entries: Sequence[tuple[str, str]], files: Sequence[str], *, deadline_seconds: int
) -> str:
    """Record ``entries`` (earliest value wins) and ``files``; arm the dead-man for a window."""
    lines = [_prelude(directory, create=True), 'chmod 700 "$d" || _fail "cannot chmod it"']
    for key, value in entries:
        lines.append(f'[ -e "$d/{key}" ] || _put {shlex.quote(key)} {shlex.quote(value)}')
    if files:
        words = " ".join(shlex.quote(f) for f in files)
        lines += [
            '_t="$d/.tmp.$$"; rm -f "$_t"',
            f'( set -C; {{ cat "$d/files" 2>/dev/null; for _p in {words}; do grep -qxF "$_p" "$d/files" 2>/dev/null'
            ' || printf \'%s\\n\' "$_p"; done; } >"$_t" ) && mv -f "$_t" "$d/files" || _fail "cannot write files"',
        ]
    window = any(key.startswith(("firewall.", "exec.")) for key, _value in entries)
    if window and deadline_seconds > 0:
        lines += [
            '_t="$d/.tmp.$$"; rm -f "$_t"',
            f'( set -C; printf \'%s\' {shlex.quote(DEADMAN_SCRIPT)} >"$_t" ) && mv -f "$_t" "$d/deadman.sh"'
            ' || _fail "cannot write deadman.sh"',
            f"_new=$(( $(date +%s) + {int(deadline_seconds)} ))",
            '_old=$(cat "$d/deadline" 2>/dev/null); case "$_old" in \'\' | *[!0-9]*) _old=0 ;; esac',
            '[ "$_old" -gt "$_new" ] && _new=$_old',
            '_put deadline "$_new"',
            "if ! _ours; then",
            WHICH,
            "  if _which setsid >/dev/null; then { set +m; } 2>/dev/null; _ss=setsid;"
            " else { set -m; } 2>/dev/null; _ss=; fi",
            '  ( trap \'\' HUP; exec $_ss sh "$d/deadman.sh" "$d" ) </dev/null >/dev/null 2>&1 &',
            '  _put deadman.pid "$!"',
            "fi",
        ]
    lines.append(_report())
    return "\n".join(lines)


def clear_script(directory: str, scopes: Sequence[str]) -> str:
    """Drop the keys of ``scopes``; with nothing pending any more, stop the dead-man."""
    globs: list[str] = []
    if "firewall" in scopes:
        globs.append('"$d"/firewall.*')
    if "install" in scopes:
        globs += ['"$d"/exec.*', '"$d"/files', '"$d"/vib']
    lines = [_prelude(directory, create=False)]
    if globs:
        lines.append(f'for _f in {" ".join(globs)}; do [ -f "$_f" ] && rm -f "$_f"; done')
    lines += [
        "if ! _pending; then",
        '  if _ours; then kill "$(cat "$d/deadman.pid")" 2>/dev/null; fi',
        '  rm -f "$d/deadman.pid" "$d/deadline"',
        "fi",
        _report(),
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The journal of one host
# --------------------------------------------------------------------------------------------


def write_copy(copy_dir: str, host: str, state: JournalState) -> str:
    """Write ``<copy_dir>/<host>.json`` on the controller (atomically); the path."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", host) or "host"
    directory = Path(copy_dir)
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"{name}.json"
    doc = {"host": host, "updated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **state.as_dict()}
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(doc, handle, indent=2, sort_keys=True)
            handle.write("\n")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return str(target)


class Journal:
    """The journal of one host: read, record, clear; each call keeps the controller copy current."""

    def __init__(
        self,
        execute: Execute,
        directory: str,
        *,
        copy_dir: str | None = None,
        host: str = "host",
        deadline_seconds: int = DEFAULT_DEADLINE,
    ) -> None:
        if not directory.startswith("/") or "\n" in directory:
            raise JournalError(f"journal_dir must be an absolute path, got {directory!r}")
        self.execute = execute
        self.directory = directory.rstrip("/") or "/"
        self.copy_dir = copy_dir
        self.host = host
        self.deadline_seconds = int(deadline_seconds)
        self.copy_path: str | None = None

    def _run(self, script: str) -> JournalState:
        out = self.execute(script)
        state = parse_output(self.directory, out.stdout + "\n" + out.stderr)
        if self.copy_dir:
            self.copy_path = write_copy(self.copy_dir, self.host, state)
        return state

    def read(self) -> JournalState:
        out = self.execute(read_script(self.directory))
        return parse_output(self.directory, out.stdout + "\n" + out.stderr)

    def record(
        self, *, firewall: Mapping[str, Any] | None = None, install: Mapping[str, Any] | None = None
    ) -> JournalState:
        entries = firewall_entries(firewall or {})
        install_keys, files = install_entries(install or {})
        entries += install_keys
        if not entries and not files:
            return self.read()
        return self._run(record_script(self.directory, entries, files, deadline_seconds=self.deadline_seconds))

    def clear(self, scopes: Sequence[str]) -> JournalState:
        return self._run(clear_script(self.directory, scopes))

    def clear_restored(self, scope: str, result: dict[str, Any], *, name: str, what: str) -> None:
        """``what`` (of ``scope``) is back: drop its keys; a failure only warns in ``result`` (the values stay true)."""
        try:
            self.clear([scope])
        except JournalError as exc:
            result.setdefault("warnings", []).append(f"{name}: {what} is restored, but {exc.message}")


def journal_from_args(args: Mapping[str, Any], execute: Execute, host: str) -> Journal | None:
    """The journal the options ask for (``journal_dir``, ``journal_copy_dir``, ``deadline``); ``None`` when off."""
    directory = args.get("journal_dir")
    if directory is None:
        directory = DEFAULT_DIR
    if directory == "":
        return None
    deadline = args.get("deadline")
    return Journal(
        execute,
        str(directory),
        copy_dir=args.get("journal_copy_dir") or None,
        host=host,
        deadline_seconds=DEFAULT_DEADLINE if deadline is None else int(deadline),
    )
