# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The restore journal on a host (ESXi or Linux), its owner and its dead-man timer (POSIX/busybox ``sh``).

Before the first change on a host, ``esxi_firewall``, ``esxi_iperf_install`` and ``esxi_journal``
(``mode: record``, e.g. before a Linux interface's MTU is changed) write what must be put back
into a directory on the host: one small file per value, the *earliest* value wins (a key that
exists is never overwritten, so a later run cannot replace the original with a changed value).

=========================  ==========================================================
file                       content
=========================  ==========================================================
``firewall.enabled``       ``true`` / ``false`` -- the firewall's enabled state
``firewall.default_action`` ``PASS`` / ``DROP``
``firewall.ruleset.ID``    ``true`` / ``false`` -- one per ruleset changed
``exec.runtime_option``    ``0`` / ``1`` -- ``/User/execInstalledOnly``
``exec.app_domain``        ``enforcing`` / ``disabled`` -- the appDom security domain
``files``                  the copies made, one path a line (only :data:`REMOVABLE`)
``vib``                    the VIB installed (only :data:`COLLECTION_VIB`)
``link.IF.mtu``            a Linux interface's MTU before the change (68-65535)
``link.IF.addr``           an address the collection added to a Linux interface (``guest_network``)
``link.IF.down``           ``true``: the interface was down before the collection set it up
``link.IF.persist``        the persistent setting the collection created (:func:`persist_value`)
``owner``                  the run holding the window (``journal.owner.owner_line``)
``deadline``               epoch second at which the dead-man restores
``deadman.sh``             the dead-man script; ``deadman.pid`` its pid; ``deadman.log`` what it did
``fired``                  written by a dead-man that restored: when, which run
``.esxilab-journal``       the marker: the collection created this directory
=========================  ==========================================================

**Trust.** The directory is created ``0700`` with the marker file in it; an existing directory is
never changed, only checked: refused when it is a symlink, not a directory, not owned by the
connecting user, writable by group or others, without the marker, or when its parent is
writable by group or others (unless sticky, as ``/tmp``: then nobody else can rename it away).
Files are written to a temporary name in that directory (``set -C``: never through an existing
name) and renamed into place. Every value read back is checked against what the collection
writes; one that is not is *rejected*: reported, never applied, kept for a person to look at.
A file name with characters the collection never writes is rejected the same way, and each
script's markers carry a random token, so no file content can forge a line of the report.

**Dead-man timer.** When a firewall or exec-policy value is recorded, ``deadman.sh`` is started
detached (``setsid`` when the host has it, else its own process group; ``HUP`` ignored) with the
run's token. It wakes at least every :data:`POLL_SECONDS`, exits as soon as nothing is pending or
the window belongs to another run (``owner``), and at ``deadline`` puts back everything pending
(exec policy, copies, rulesets, default action, the firewall's enabled state last), logs it in
``deadman.log`` and writes ``fired``, which the next read reports until a restore acknowledges it.

Everything here is plain data and shell text; the I/O is the ``execute`` callable a caller gives.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import secrets
import shlex
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.install_plan import InstallOptions
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.releases import APP_DOMAIN, COPIES, EXEC_OPTION
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import Execute, HostError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.framing import marker, split_sections, undo_pty
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.pathwalk import WHICH
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.owner import (
    RunId,
    describe,
    holder,
    owner_line,
    parse_owner,
    this_run,
    token,
)

__all__ = [
    "DEFAULT_DEADLINE",
    "DEFAULT_DIR",
    "MAX_DEADLINE",
    "SCOPES",
    "Journal",
    "JournalError",
    "JournalState",
    "firewall_entries",
    "install_entries",
    "journal_from_args",
    "link_config_entries",
    "link_entries",
    "parse_output",
    "persist_value",
]

#: On ESXi ``/scratch`` points at persistent storage (the OSDATA volume or a datastore), so the
#: journal survives a reboot; ``/tmp`` is a ramdisk that a reboot empties.
DEFAULT_DIR = "/scratch/esxilab-iperf"
#: Seconds after the window opens at which the dead-man puts the host back (3000 s planned + 600 s margin).
DEFAULT_DEADLINE = 3600
#: The longest deadline accepted: 7 days (a longer one would pin every later window's deadline).
MAX_DEADLINE = 7 * 24 * 3600
POLL_SECONDS = 5
SCOPES = ("firewall", "install", "link")
MARKER_FILE = ".esxilab-journal"
_RULESET_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_IFNAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$")
#: Files a restore may remove: only the copies the install makes.
REMOVABLE = COPIES
#: The only VIB the collection installs (and so the only one a restore may remove).
COLLECTION_VIB = InstallOptions().vib_name
_BOOL = ("true", "false")
#: The link settings besides the MTU (``guest_network``): key suffix -> how its value is checked.
LINK_CONFIG = ("addr", "down", "persist")
#: The persistent settings the collection creates for interface IF (``{}`` is the interface name).
PERSIST_FORMS = (
    "nm:esxilab-iperf-{}",
    "file:/etc/netplan/60-esxilab-iperf-{}.yaml",
    "file:/etc/network/interfaces.d/esxilab-iperf-{}",
)


class JournalError(HostError):
    """The journal cannot be used; ``message`` names the cause and the fix (the caller adds the module's name)."""


@dataclass(frozen=True, slots=True)
class JournalState:
    """What the journal on one host records (restore values in the modules' ``restore`` format)."""

    directory: str
    exists: bool
    firewall: dict[str, Any] = field(default_factory=dict)
    install: dict[str, Any] = field(default_factory=dict)
    link: dict[str, int] = field(default_factory=dict)
    #: a Linux interface's settings besides its MTU: ifname -> {addr, down, persist}
    link_config: dict[str, dict[str, str]] = field(default_factory=dict)
    #: entries that are not what the collection writes: key -> why (never applied, kept)
    rejected: dict[str, str] = field(default_factory=dict)
    owner: RunId | None = None
    deadline: int | None = None
    deadman_pid: int | None = None
    deadman_running: bool = False
    #: a dead-man that restored: {"at": epoch, "run": token, "log": its last lines}
    fired: dict[str, Any] | None = None
    now: int | None = None

    @property
    def pending(self) -> bool:
        """Something a window left to put back; a kept VIB (``vib``, removed only on request) is not."""
        return bool(self.firewall or set(self.install) - {"installed_vib"} or self.link or self.link_config)

    def link_scope(self) -> dict[str, Any]:
        """The ``link`` scope: ``{mtu: {IF: MTU}, config: {IF: {addr, down, persist}}}``, the empty parts left out."""
        out: dict[str, Any] = {}
        if self.link:
            out["mtu"] = self.link
        if self.link_config:
            out["config"] = self.link_config
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "directory": self.directory,
            "exists": self.exists,
            "pending": self.pending,
            "firewall": self.firewall,
            "install": self.install,
            "link": self.link_scope(),
            "rejected": self.rejected,
            "owner": None if self.owner is None else owner_line(self.owner),
            "fired": self.fired,
            "deadman": {"running": self.deadman_running, "pid": self.deadman_pid, "deadline": self.deadline},
        }


# --------------------------------------------------------------------------------------------
# Restore values <-> journal keys
# --------------------------------------------------------------------------------------------


def _flag(value: Any) -> str:
    if not isinstance(value, bool):
        raise JournalError(f"journal: a firewall value must be true or false, got {value!r}")
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
        if vib != COLLECTION_VIB:
            raise JournalError(f"journal: only the {COLLECTION_VIB!r} VIB is journaled, got {vib!r}")
        out.append(("vib", str(vib)))
    files = [str(f) for f in restore.get("created_files") or []]
    bad = [f for f in files if f not in REMOVABLE]
    if bad:
        raise JournalError(f"journal: only the copies {', '.join(REMOVABLE)} are journaled, got {bad}")
    return out, files


def link_entries(mtu: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Journal keys of Linux interface MTUs (``{ifname: mtu}``)."""
    out: list[tuple[str, str]] = []
    for name, value in sorted(mtu.items()):
        if not _IFNAME_RE.match(str(name)):
            raise JournalError(
                f"journal: interface name {name!r} cannot be journaled (1-15 letters, digits, . _ - only)"
            )
        if isinstance(value, bool) or not isinstance(value, int) or not 68 <= value <= 65535:
            raise JournalError(f"journal: the MTU of {name} must be an integer 68-65535, got {value!r}")
        out.append((f"link.{name}.mtu", str(value)))
    return out


def persist_value(kind: str, name: str) -> str:
    """The ``link.IF.persist`` value of the persistent setting ``kind`` (networkmanager, netplan, ifupdown)."""
    forms = dict(zip(("networkmanager", "netplan", "ifupdown"), PERSIST_FORMS, strict=True))
    return forms[kind].format(name)


def _link_config_error(name: str, kind: str, value: str) -> str | None:
    """Why ``value`` is not a ``link.NAME.KIND`` value the collection writes, or ``None``."""
    if kind == "addr":
        try:
            ipaddress.ip_interface(value)
        except ValueError:
            return f"{value!r} is not an address/prefix"
        return None if "/" in value else f"{value!r} has no prefix length"
    if kind == "down":
        return None if value == "true" else f"{value!r} is not true"
    return None if value in {form.format(name) for form in PERSIST_FORMS} else f"{value!r} is not a setting it creates"


def link_config_entries(config: Mapping[str, Mapping[str, str]]) -> list[tuple[str, str]]:
    """Journal keys of Linux interface settings besides the MTU (``{ifname: {addr, down, persist}}``)."""
    out: list[tuple[str, str]] = []
    for name, values in sorted(config.items()):
        if not _IFNAME_RE.match(str(name)):
            raise JournalError(
                f"journal: interface name {name!r} cannot be journaled (1-15 letters, digits, . _ - only)"
            )
        for kind, value in sorted(values.items()):
            why = f"{kind!r} is not one of {', '.join(LINK_CONFIG)}" if kind not in LINK_CONFIG else None
            why = why or _link_config_error(str(name), kind, str(value))
            if why:
                raise JournalError(f"journal: link.{name}.{kind}: {why}")
            out.append((f"link.{name}.{kind}", str(value)))
    return out


def _accept(key: str, value: str, state: dict[str, Any]) -> str | None:
    """File ``key`` holding ``value`` (its one line) into ``state``; why not, or ``None``."""
    firewall, install, link = state["firewall"], state["install"], state["link"]
    if key in ("firewall.enabled",) or key.startswith("firewall.ruleset."):
        if value not in _BOOL:
            return f"{value!r} is not true or false"
        if key == "firewall.enabled":
            firewall["enabled"] = value == "true"
            return None
        name = key[len("firewall.ruleset.") :]
        if not _RULESET_RE.match(name):
            return "not a ruleset id the collection writes"
        firewall.setdefault("rulesets", {})[name] = value == "true"
        return None
    if key == "firewall.default_action":
        if value not in ("PASS", "DROP"):
            return f"{value!r} is not PASS or DROP"
        firewall["default_action"] = value
        return None
    if key == "exec.runtime_option":
        if value not in ("0", "1"):
            return f"{value!r} is not 0 or 1"
        install["exec_installed_only_previous"] = int(value)
        return None
    if key == "exec.app_domain":
        if value not in ("enforcing", "disabled"):
            return f"{value!r} is not enforcing or disabled"
        install["app_domain_previous"] = value
        return None
    if key == "vib":
        if value != COLLECTION_VIB:
            return f"{value!r} is not the VIB this collection installs ({COLLECTION_VIB})"
        install["installed_vib"] = value
        return None
    if key.startswith("link.") and key.endswith(".mtu"):
        name = key[len("link.") : -len(".mtu")]
        if not _IFNAME_RE.match(name):
            return "not an interface name the collection writes"
        if not value.isdigit() or not 68 <= int(value) <= 65535:
            return f"{value!r} is not an MTU (68-65535)"
        link[name] = int(value)
        return None
    kind = key.rpartition(".")[2]
    if key.startswith("link.") and kind in LINK_CONFIG:
        name = key[len("link.") : -len(kind) - 1]
        if not _IFNAME_RE.match(name):
            return "not an interface name the collection writes"
        why = _link_config_error(name, kind, value)
        if why is None:
            state["link_config"].setdefault(name, {})[kind] = value
        return why
    return "not a key the collection writes"


def _one_line(text: str) -> str | None:
    """The value of a key file: exactly one line (``None`` when the content is not that)."""
    if not text.endswith("\n") or "\n" in text[:-1] or any(ord(c) < 32 for c in text[:-1]):
        return None
    return text[:-1]


def _int(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() and len(text) <= 12 else None


def parse_output(directory: str, text: str, tag: str) -> JournalState:
    """The state printed by a journal script with marker ``tag`` (raises :class:`JournalError` on a refusal)."""
    state: dict[str, Any] = {"firewall": {}, "install": {}, "link": {}, "link_config": {}}
    rejected: dict[str, str] = {}
    files: list[str] = []
    fields: dict[str, str] = {}
    exists, complete = True, False
    owner: RunId | None = None
    fired: dict[str, Any] | None = None
    now: int | None = None
    for section in split_sections(text, tag):
        kind, rest = section.name.rstrip("\r"), section.args.rstrip("\r")
        if kind == "refused":
            raise JournalError(
                f"journal directory {directory}: {rest}. Nothing was changed on the host. Fix: set journal_dir"
                " (role variables esxi_firewall_journal_dir / esxi_iperf_journal_dir, inventory esxilab_journal_dir)"
                " to a path that does not exist yet under a parent writable only by its owner, so that the"
                " collection creates it; or remove this directory if it is an old journal put back by hand"
            )
        if kind == "error":
            raise JournalError(f"journal directory {directory}: {rest}")
        if kind == "absent":
            exists = False
        elif kind == "entry":
            value = _one_line(section.text)
            why = f"its content {section.text[:40]!r} is not one line" if value is None else _accept(rest, value, state)
            if why is not None:
                rejected[rest] = why
        elif kind == "badname":
            rejected["(a file name with characters the collection never writes)"] = "never read"
        elif kind == "files":
            for line in section.text.splitlines():
                if line in REMOVABLE:
                    files.append(line)
                elif line:
                    rejected[f"files: {line[:80]!r}"] = "not a copy this collection makes"
        elif kind == "owner":
            owner = parse_owner(section.text)
            if owner is None and section.text.strip():
                rejected["owner"] = "not an owner line the collection writes"
        elif kind == "fired":
            lines = section.text.splitlines()
            head = dict(part.split("=", 1) for part in (lines[0].split() if lines else []) if "=" in part)
            fired = {"at": _int(head.get("at", "")), "run": head.get("run"), "log": lines[1:][-20:]}
        elif kind == "deadman":
            fields = dict(part.split("=", 1) for part in rest.split() if "=" in part)
        elif kind == "now":
            now = _int(rest)
        elif kind == "ok":
            complete = True
    if not complete:
        raise JournalError(f"journal directory {directory}: the journal script did not finish: {text.strip()[-300:]!r}")
    if state["firewall"].get("rulesets"):
        state["firewall"]["rulesets"] = dict(sorted(state["firewall"]["rulesets"].items()))
    if files:
        state["install"]["created_files"] = list(dict.fromkeys(files))
    return JournalState(
        directory=directory,
        exists=exists,
        firewall=state["firewall"],
        install=state["install"],
        link=dict(sorted(state["link"].items())),
        link_config=dict(sorted(state["link_config"].items())),
        rejected=rejected,
        owner=owner,
        deadline=_int(fields.get("deadline", "")),
        deadman_pid=_int(fields.get("pid", "")),
        deadman_running=fields.get("running") == "yes",
        fired=fired,
        now=now,
    )


# --------------------------------------------------------------------------------------------
# Shell text (busybox ash; POSIX sh)
# --------------------------------------------------------------------------------------------

#: The dead-man: ``sh DIR/deadman.sh DIR TOKEN``. Reads the journal files when the deadline passes.
DEADMAN_SCRIPT = r"""# esxilab.iperf dead-man timer: puts the host back at the deadline unless a restore cancels it
d=$1
tok=$2
_pending() {
    for _f in "$d"/firewall.* "$d"/exec.* "$d"/files; do [ -f "$_f" ] && return 0; done
    return 1
}
_mine() { grep -q "^run=$tok " "$d/owner" 2>/dev/null; }
while :; do
    [ -f "$d/deadline" ] || exit 0
    _pending || exit 0
    _mine || exit 0
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
_t="$d/.tmp.$$"; rm -f "$_t"
( set -C; printf 'at=%s run=%s\n' "$(date +%s)" "$tok" >"$_t" ) && mv -f "$_t" "$d/fired"
_log "deadline reached: restoring (run $tok)"
if [ -f "$d/exec.runtime_option" ]; then
    v=$(cat "$d/exec.runtime_option")
    case "$v" in 0 | 1)
        _run esxcli system settings advanced set -o EXEC_OPTION -i "$v" && rm -f "$d/exec.runtime_option"
    esac
fi
if [ -f "$d/exec.app_domain" ]; then
    v=$(cat "$d/exec.app_domain")
    case "$v" in enforcing | disabled)
        _run localcli system secpolicy domain set -n APP_DOMAIN -l "$v" && rm -f "$d/exec.app_domain"
    esac
fi
if [ -f "$d/files" ]; then
    ok=yes
    while IFS= read -r p; do
        case "$p" in REMOVABLE) _run rm -f "$p" || ok=no ;; *) ok=no ;; esac
    done <"$d/files"
    [ "$ok" = yes ] && rm -f "$d/files"
fi
for f in "$d"/firewall.ruleset.*; do
    [ -f "$f" ] || continue
    id=${f##*/firewall.ruleset.}
    case "$id" in '' | *[!A-Za-z0-9._-]*) _log "skipped: ruleset file $id"; continue ;; esac
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
_left=
for _f in "$d"/firewall.* "$d"/exec.* "$d"/files "$d"/vib "$d"/link.*; do [ -f "$_f" ] && _left=1; done
[ -n "$_left" ] || rm -f "$d/owner"
_pending && _log "left in the journal: $(cd "$d" && ls firewall.* exec.* files 2>/dev/null | tr '\n' ' ')"
_log "restore finished"
""".replace("POLL", str(POLL_SECONDS)).replace("REMOVABLE", " | ".join(REMOVABLE))
DEADMAN_SCRIPT = DEADMAN_SCRIPT.replace("EXEC_OPTION", EXEC_OPTION).replace("APP_DOMAIN", APP_DOMAIN)

#: Group- or other-writable in an ``ls -l`` mode string; sticky (``t``/``T`` in place 10).
_SHARED = "?????w* | ????????w*"
_STICKY = "?????????[tT]*"


def _prelude(directory: str, tag: str, *, create: bool) -> str:
    """Check (and with ``create``, make) the directory; define the helpers every script uses."""
    q = shlex.quote(directory)
    parent = os.path.dirname(directory.rstrip("/")) or "/"
    absent = f"{marker(tag, 'absent')}; {marker(tag, 'now', '$(date +%s)')}; {marker(tag, 'ok')}; exit 0"
    if create:
        make = (
            'if [ ! -e "$d" ] && [ ! -L "$d" ]; then ( umask 077; mkdir -p "$p" ) || _fail "cannot create its parent";'
            ' _parent; ( umask 077; mkdir "$d" ) || _fail "cannot create it";'
            f" ( set -C; printf '%s\\n' 'esxilab.iperf restore journal' >\"$d/{MARKER_FILE}\" )"
            ' || _fail "cannot write its marker file"; fi'
        )
    else:
        make = f'if [ ! -e "$d" ] && [ ! -L "$d" ]; then {absent}; fi'
    return "\n".join(
        [
            f"d={q}",
            f"p={shlex.quote(parent)}",
            f"_fail() {{ {marker(tag, 'error', '$*')}; exit 0; }}",
            f"_refuse() {{ {marker(tag, 'refused', '$*')}; exit 0; }}",
            "_mode() { ls -ldn \"$1\" 2>/dev/null | awk '{print $1}'; }",
            '_parent() { _pm=$(_mode "$p/."); case "$_pm" in ' + _STICKY + ") ;; " + _SHARED + ")"
            ' _refuse "its parent $p is writable by group or others (mode $_pm)" ;; esac; }',
            make,
            '[ -L "$d" ] && _refuse "it is a symlink"',
            '[ -d "$d" ] || _refuse "it is not a directory"',
            "me=$(id -u 2>/dev/null)",
            "owner=$(ls -ldn \"$d\" 2>/dev/null | awk '{print $3}')",
            'if [ -n "$me" ]; then [ "$owner" = "$me" ] || _refuse "it is owned by uid $owner, not by the connecting'
            ' user (uid $me)"; else [ -O "$d" ] || _refuse "it is not owned by the connecting user"; fi',
            '_m=$(_mode "$d"); case "$_m" in ' + _SHARED + ') _refuse "it is writable by group or others (mode $_m)" ;;'
            " esac",
            "_parent",
            f'{{ [ -f "$d/{MARKER_FILE}" ] && [ ! -L "$d/{MARKER_FILE}" ]; }} || _refuse "it was not created by'
            f' esxilab.iperf (there is no {MARKER_FILE} file in it)"',
            # the helpers below only run on a directory of ours
            '_put() { _t="$d/.tmp.$$"; rm -f "$_t"; ( set -C; printf \'%s\\n\' "$2" >"$_t" ) && mv -f "$_t" "$d/$1"'
            ' || _fail "cannot write $1"; }',
            "_cmdline() { if [ -r \"/proc/$1/cmdline\" ]; then tr '\\000' ' ' <\"/proc/$1/cmdline\";"
            " else ps -c 2>/dev/null | awk -v p=\"$1\" '$1 == p || $2 == p'; fi; }",
            '_ours() { _p=$(cat "$d/deadman.pid" 2>/dev/null); case "$_p" in \'\' | *[!0-9]*) return 1 ;; esac;'
            ' kill -0 "$_p" 2>/dev/null || return 1; _cmdline "$_p" | grep -qF "$d/deadman.sh"; }',
            '_pending() { for _f in "$d"/firewall.* "$d"/exec.* "$d"/files; do [ -f "$_f" ] && return 0; done;'
            " return 1; }",
            '_any() { for _f in "$d"/firewall.* "$d"/exec.* "$d"/files "$d"/vib "$d"/link.*; do [ -f "$_f" ] &&'
            " return 0; done; return 1; }",
        ]
    )


def _report(tag: str) -> str:
    """Print every entry (its content as the section), the copies, the owner, the timer, a fired record; ``ok``."""
    return "\n".join(
        [
            'for _f in "$d"/firewall.* "$d"/exec.* "$d"/vib "$d"/link.*; do',
            '  [ -f "$_f" ] || [ -L "$_f" ] || continue',
            "  _n=${_f##*/}",
            '  case "$_n" in *[!A-Za-z0-9._-]*) ' + marker(tag, "badname") + "; continue ;; esac",
            "  " + marker(tag, "entry", "$_n"),
            '  [ -L "$_f" ] || head -c 200 "$_f"',
            "done",
            'if [ -f "$d/files" ]; then ' + marker(tag, "files") + '; head -c 4000 "$d/files"; fi',
            'if [ -f "$d/owner" ]; then ' + marker(tag, "owner") + '; head -c 300 "$d/owner"; fi',
            'if [ -f "$d/fired" ]; then ' + marker(tag, "fired") + '; head -n 1 "$d/fired";'
            ' tail -n 20 "$d/deadman.log" 2>/dev/null; fi',
            "if _ours; then _r=yes; else _r=no; fi",
            marker(
                tag,
                "deadman",
                'running=$_r pid=$(cat "$d/deadman.pid" 2>/dev/null) deadline=$(cat "$d/deadline" 2>/dev/null)',
            ),
            marker(tag, "now", "$(date +%s)"),
            marker(tag, "ok"),
        ]
    )


def read_script(directory: str, tag: str) -> str:
    """Print the journal; changes nothing (an absent directory is reported, not created)."""
    return _prelude(directory, tag, create=False) + "\n" + _report(tag)


def record_script(
    directory: str,
    tag: str,
    entries: Sequence[tuple[str, str]],
    files: Sequence[str],
    *,
    run: RunId,
    deadline_seconds: int,
    keep_later_deadline: bool,
) -> str:
    """Record ``entries`` (earliest value wins) and ``files`` for ``run``; arm its dead-man for a window."""
    lines = [_prelude(directory, tag, create=True), f"_put owner {shlex.quote(owner_line(run))}"]
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
        tok = token(run)
        lines += [
            '_t="$d/.tmp.$$"; rm -f "$_t"',
            f'( set -C; printf \'%s\' {shlex.quote(DEADMAN_SCRIPT)} >"$_t" ) && mv -f "$_t" "$d/deadman.sh"'
            ' || _fail "cannot write deadman.sh"',
            f"_new=$(( $(date +%s) + {int(deadline_seconds)} ))",
        ]
        if keep_later_deadline:  # the same run: a later change never shortens its window
            lines += [
                '_old=$(cat "$d/deadline" 2>/dev/null); case "$_old" in \'\' | *[!0-9]*) _old=0 ;; esac',
                '[ "$_old" -gt "$_new" ] && _new=$_old',
            ]
        lines += [
            '_put deadline "$_new"',
            f'if ! {{ _ours && _cmdline "$(cat "$d/deadman.pid")" | grep -qF {tok}; }}; then',
            WHICH,
            "  if _which setsid >/dev/null; then { set +m; } 2>/dev/null; _ss=setsid;"
            " else { set -m; } 2>/dev/null; _ss=; fi",
            f'  ( trap \'\' HUP; exec $_ss sh "$d/deadman.sh" "$d" {tok} ) </dev/null >/dev/null 2>&1 &',
            '  _put deadman.pid "$!"',
            "fi",
        ]
    lines.append(_report(tag))
    return "\n".join(lines)


def _scope_globs(scopes: Sequence[str]) -> list[str]:
    globs: list[str] = []
    if "firewall" in scopes:
        globs.append('"$d"/firewall.*')
    if "install" in scopes:
        globs += ['"$d"/exec.*', '"$d"/files', '"$d"/vib']
    if "link" in scopes:
        globs.append('"$d"/link.*')
    return globs


def clear_script(
    directory: str,
    tag: str,
    *,
    scopes: Sequence[str] = (),
    keys: Sequence[str] = (),
    forget_fired: bool = False,
    disarm: bool = False,
) -> str:
    """Drop the keys of ``scopes`` and the ``keys`` named; with nothing pending any more (or ``disarm``: what is
    left is for a person), stop the dead-man."""
    globs = _scope_globs(scopes) + [f'"$d"/{shlex.quote(k)}' for k in keys]
    lines = [_prelude(directory, tag, create=False)]
    if globs:
        lines.append(f'for _f in {" ".join(globs)}; do [ -f "$_f" ] && rm -f "$_f"; done')
    if forget_fired:
        lines.append('rm -f "$d/fired"')
    lines += [
        "if ! _pending || [ -n " + ("yes" if disarm else "''") + " ]; then",
        '  if _ours; then kill "$(cat "$d/deadman.pid")" 2>/dev/null; fi',
        '  rm -f "$d/deadman.pid" "$d/deadline"',
        "fi",
        '_any || rm -f "$d/owner"',
        _report(tag),
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The journal of one host
# --------------------------------------------------------------------------------------------


def check_copy_dir(copy_dir: str) -> None:
    """``journal_copy_dir`` must be a directory or a path that can become one (raises :class:`JournalError`)."""
    path = Path(copy_dir)
    for candidate in (path, *path.parents):
        if candidate.exists() or candidate.is_symlink():
            if not candidate.is_dir():
                raise JournalError(
                    f"journal_copy_dir {copy_dir!r}: {candidate} is not a directory. Fix: give journal_copy_dir"
                    " (role variables esxi_firewall_journal_copy_dir / esxi_iperf_journal_copy_dir) a directory path"
                    " on the controller, or leave it unset for no copy"
                )
            return


def write_copy(copy_dir: str, host: str, state: JournalState) -> str:
    """Write ``<copy_dir>/<host>.json`` on the controller (atomically); the path."""
    check_copy_dir(copy_dir)
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
    """The journal of one host: read, record, clear; each call keeps the controller copy current.

    ``run`` is the run this journal acts for (default: this ``ansible-playbook`` process);
    ``takeover`` lets it record over a window a live run holds.
    """

    def __init__(
        self,
        execute: Execute,
        directory: str,
        *,
        copy_dir: str | None = None,
        host: str = "host",
        deadline_seconds: int = DEFAULT_DEADLINE,
        run: RunId | None = None,
        takeover: bool = False,
    ) -> None:
        if not directory.startswith("/") or any(ord(c) < 32 for c in directory):
            raise JournalError(
                f"journal_dir must be an absolute path without control characters, got {directory!r}. Fix: give"
                " journal_dir an absolute path such as /scratch/esxilab-iperf, or an empty string for no journal"
            )
        if not 0 <= int(deadline_seconds) <= MAX_DEADLINE:
            raise JournalError(
                f"deadline must be 0 (no dead-man timer) or 1-{MAX_DEADLINE} seconds, got {deadline_seconds}."
                " Fix: set deadline (role variables esxi_firewall_deadline / esxi_iperf_deadline) to the planned test"
                " time plus a margin, or 0 for no timer"
            )
        self.execute = execute
        self.directory = directory.rstrip("/") or "/"
        self.copy_dir = copy_dir
        if copy_dir:
            check_copy_dir(copy_dir)
        self.host = host
        self.deadline_seconds = int(deadline_seconds)
        self.copy_path: str | None = None
        self.run = run or this_run()
        self.takeover = takeover

    def _script(self, build: Any, *args: Any, **kwargs: Any) -> JournalState:
        tag = f"esxilab-journal-{secrets.token_hex(6)}"
        out = self.execute(build(self.directory, tag, *args, **kwargs))
        # a pty (ssh -tt) turns each \n into \r\n: undone on each stream before they are joined
        return parse_output(self.directory, undo_pty(out.stdout)[0] + "\n" + undo_pty(out.stderr)[0], tag)

    def _kept(self, state: JournalState) -> JournalState:
        if self.copy_dir:
            self.copy_path = write_copy(self.copy_dir, self.host, state)
        return state

    def read(self) -> JournalState:
        return self._script(read_script)

    def holder(self, state: JournalState) -> str:
        """``none``, ``mine``, ``live`` or ``gone``: who holds the window ``state`` shows (``journal.owner``)."""
        return holder(state.owner, self.run, pending=state.pending, now=state.now, deadline=state.deadline)

    def refuse_live(self, state: JournalState) -> None:
        """Raise :class:`JournalError` when another live run holds the window (and no takeover is asked)."""
        if self.holder(state) == "live" and not self.takeover and state.owner is not None:
            raise JournalError(
                f"journal directory {self.directory}: the window on this host is held by {describe(state.owner)},"
                f" which is still running (deadline {state.deadline or 'none'}); nothing was changed. Fix: wait until"
                " that run ends, or take the window over with takeover: true (role variables"
                " esxi_firewall_takeover / esxi_iperf_takeover, inventory esxilab_journal_takeover) - its restore"
                " then no longer puts this host back"
            )

    def record(
        self,
        *,
        firewall: Mapping[str, Any] | None = None,
        install: Mapping[str, Any] | None = None,
        link_mtu: Mapping[str, Any] | None = None,
        link_config: Mapping[str, Mapping[str, str]] | None = None,
    ) -> JournalState:
        entries = firewall_entries(firewall or {})
        install_keys, files = install_entries(install or {})
        entries += install_keys + link_entries(link_mtu or {}) + link_config_entries(link_config or {})
        before = self.read()
        if not entries and not files:
            return before
        self.refuse_live(before)
        return self._kept(
            self._script(
                record_script,
                entries,
                files,
                run=self.run,
                deadline_seconds=self.deadline_seconds,
                keep_later_deadline=self.holder(before) == "mine",
            )
        )

    def clear(
        self,
        scopes: Sequence[str] = (),
        *,
        keys: Sequence[str] = (),
        forget_fired: bool = False,
        disarm: bool = False,
        attempts: int = 3,
    ) -> JournalState:
        """Drop ``scopes`` and ``keys``; a lost session is retried (``attempts``), the last error raised."""
        bad = [k for k in keys if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", k)]
        if bad:
            raise JournalError(f"journal: cannot clear keys {bad}")
        error: JournalError | None = None
        for attempt in range(max(1, attempts)):
            try:
                state = self._script(clear_script, scopes=scopes, keys=keys, forget_fired=forget_fired, disarm=disarm)
                return self._kept(state)
            except JournalError as exc:
                error = exc
                if attempt + 1 < attempts:
                    time.sleep(0.5)
        raise error if error is not None else JournalError("the journal was not cleared")

    def dropping(self, command: str, keys: Sequence[str]) -> str:
        """``command`` that also drops ``keys`` once it succeeded: the value put back and its entry go together,
        so a lost session after the command can never leave an entry the dead-man would apply again."""
        if not keys:
            return command
        paths = " ".join(shlex.quote(f"{self.directory}/{k}") for k in keys)
        return f"{command} && {{ rm -f -- {paths}; :; }}"

    def clear_restored(
        self, scope: str, result: dict[str, Any], *, name: str, what: str, keys: Sequence[str] | None = None
    ) -> None:
        """``what`` (of ``scope``) is back: drop its keys (or only ``keys``); a failure fails loudly in ``result``."""
        try:
            self.clear([] if keys is not None else [scope], keys=keys or ())
        except JournalError as exc:
            result.setdefault("warnings", []).append(
                f"{name}: {what} is restored, but the journal could not be cleared ({exc.message}); its dead-man"
                f" would put the recorded values back again at its deadline. Run playbooks/restore.yml (or"
                f" esxilab.iperf.esxi_journal mode=clear scope={scope}) once the host answers"
            )
            result["journal_clear_failed"] = True


def journal_from_args(args: Mapping[str, Any], execute: Execute, host: str) -> Journal | None:
    """The journal the options ask for (``journal_dir``, ``journal_copy_dir``, ``deadline``, ``takeover``)."""
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
        takeover=bool(args.get("takeover")),
    )
