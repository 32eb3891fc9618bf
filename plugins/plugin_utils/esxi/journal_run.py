# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Backend of ``esxilab.iperf.esxi_journal``: read, record, restore or clear the restore journal of a host.

``restore`` puts back what the journal records through the backends that wrote it
(``firewall_run.run`` with ``restore``, ``install_run.restore``, ``journal.link`` for a Linux
interface's MTU, address, state and persistent setting): best effort -- every scope and every entry
is tried, what cannot be put back is kept in the journal and named when the task fails at the end.
A window another live run holds is refused (naming it) unless ``takeover``; a dead-man that fired
is reported, then acknowledged.
The host is reached through the ``execute`` callable the action plugin lends (no Python on ESXi).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi import firewall_run, install_run
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import Execute, HostError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal import link as journal_link
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.store import (
    SCOPES,
    Journal,
    JournalError,
    JournalState,
)

__all__ = ["EsxiJournalError", "describe", "run"]

_NAME = "esxilab.iperf.esxi_journal"


class EsxiJournalError(HostError):
    """The journal backend's :class:`~.host.command.HostError` (``message``, ``result``)."""


def _selected(state: JournalState, scopes: Sequence[str], *, vib: bool = True) -> dict[str, dict[str, Any]]:
    """What the journal records for ``scopes``; without ``vib``, a kept VIB is not pending (a restore keeps it)."""
    out: dict[str, dict[str, Any]] = {}
    install = state.install if vib else {k: v for k, v in state.install.items() if k != "installed_vib"}
    if "firewall" in scopes and state.firewall:
        out["firewall"] = state.firewall
    if "install" in scopes and install:
        out["install"] = install
    if "link" in scopes and state.link_scope():
        out["link"] = state.link_scope()
    return out


def _scope_of(key: str) -> str:
    if key.startswith("firewall."):
        return "firewall"
    return "link" if key.startswith("link.") else "install"


def describe(pending: Mapping[str, Mapping[str, Any]]) -> str:
    """One line naming what the journal records, e.g. ``firewall enabled=True; install created_files=[...]``."""
    parts = []
    for scope, values in pending.items():
        parts.append(f"{scope} " + ", ".join(f"{k}={v}" for k, v in sorted(values.items())))
    return "; ".join(parts)


def fired_message(directory: str, fired: Mapping[str, Any]) -> str:
    """What a dead-man that fired did, for the warning and ``restore.yml``."""
    when = fired.get("at")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when)) if isinstance(when, int) else "an unknown time"
    log = " | ".join(str(line) for line in fired.get("log") or []) or "no log"
    return (
        f"the dead-man timer of {directory} fired at {stamp} (run {fired.get('run') or '?'}): the run that opened the"
        f" window did not restore it in time (its deadline was too short, or it was killed). It did: {log}"
    )


def run(
    args: Mapping[str, Any],
    journal: Journal,
    execute: Execute,
    *,
    check_mode: bool,
) -> dict[str, Any]:
    """The task result (raises :class:`EsxiJournalError`)."""
    mode = str(args.get("mode") or "read")
    scopes = list(args.get("scope") or SCOPES)
    try:
        if mode == "record":
            return _record(args, journal, execute, check_mode=check_mode)
        state = journal.read()
    except JournalError as exc:
        raise EsxiJournalError(f"{_NAME}: {exc.message}") from exc
    pending = _selected(state, scopes, vib=mode != "restore" or bool(args.get("remove_vib")))
    rejected = {k: v for k, v in state.rejected.items() if _scope_of(k) in scopes}
    result: dict[str, Any] = {
        "changed": False,
        "journal": state.as_dict(),
        "pending": pending,
        "restored": {},
        "left": {},
        "commands": [],
        "fired": state.fired,
        "holder": journal.holder(state),
        "diff": {"before": pending, "after": pending},
    }
    warnings: list[str] = result.setdefault("warnings", [])
    if state.fired:
        warnings.append(f"{_NAME}: {fired_message(journal.directory, state.fired)}")
    warnings += [f"{_NAME}: journal entry {key} is not applied and kept: {why}" for key, why in rejected.items()]
    if mode == "read":
        return result
    try:
        journal.refuse_live(state)
    except JournalError as exc:
        raise EsxiJournalError(f"{_NAME}: {exc.message}", result) from exc
    if not pending and not rejected:
        if state.fired and not check_mode:
            _forget_fired(journal, result)
        return result
    result["changed"] = True
    result["diff"] = {"before": pending, "after": {}}
    if check_mode:
        return result
    if mode == "clear":
        try:
            after = journal.clear(scopes, forget_fired=True)
        except JournalError as exc:
            raise EsxiJournalError(f"{_NAME}: {exc.message}", result) from exc
        result["journal"] = after.as_dict()
        warnings.append(
            f"{_NAME}: dropped from {journal.directory} without restoring (mode clear): {describe(pending)}"
        )
        return result
    return _restore(args, journal, execute, pending, rejected, result)


def _restore(
    args: Mapping[str, Any],
    journal: Journal,
    execute: Execute,
    pending: Mapping[str, Mapping[str, Any]],
    rejected: Mapping[str, str],
    result: dict[str, Any],
) -> dict[str, Any]:
    """Every scope tried; what cannot be put back kept and named at the end."""
    done: dict[str, Any] = {}
    left: dict[str, str] = dict(rejected)
    warnings: list[str] = result["warnings"]
    if "firewall" in pending:
        try:
            fw = firewall_run.run({"restore": pending["firewall"]}, execute, check_mode=False, journal=journal)
        except firewall_run.EsxiFirewallError as exc:
            result["commands"] += list(exc.result.get("commands") or [])
            left.update(exc.result.get("left") or {"firewall": exc.message})
            if exc.result.get("left"):  # the rest is back
                done["firewall"] = _without(pending["firewall"], exc.result["left"])
        else:
            result["commands"] += fw["commands"]
            warnings += [w for w in fw.get("warnings", []) if "is not applied and kept" not in w]
            done["firewall"] = pending["firewall"]
    if "install" in pending:
        try:
            inst = install_run.restore(
                {"restore": pending["install"], "remove_vib": bool(args.get("remove_vib"))},
                execute,
                check_mode=False,
                journal=journal,
            )
        except install_run.EsxiInstallError as exc:
            result["commands"] += list(exc.result.get("commands") or [])
            left.update({f"install: {k}": v for k, v in (exc.result.get("left") or {"install": exc.message}).items()})
        else:
            result["commands"] += inst["commands"]
            warnings += [w for w in inst.get("warnings", []) if "is not applied and kept" not in w]
            done["install"] = pending["install"]
    if "link" in pending:
        try:
            back, commands, link_left = journal_link.restore_links(execute, journal, pending["link"], check_mode=False)
        except JournalError as exc:
            left["link"] = exc.message
        else:
            result["commands"] += commands
            left.update(link_left)
            if back:
                done["link"] = back
    result["restored"] = done
    result["left"] = left
    if done:
        warnings.insert(
            0,
            f"{_NAME}: {journal.directory} recorded changes that were not put back (an interrupted or failed earlier"
            f" run); put back now: {describe(done)}",
        )
    try:
        if left or result.get("fired"):  # what is left is for a person: no dead-man retries it
            result["journal"] = journal.clear(forget_fired=True, disarm=bool(left)).as_dict()
        else:
            result["journal"] = journal.read().as_dict()
    except JournalError as exc:
        warnings.append(f"{_NAME}: {exc.message}")
    if left:
        raise EsxiJournalError(
            f"{_NAME}: put back what could be put back ({describe(done) or 'nothing'}), but {journal.directory} keeps"
            " what could not: " + "; ".join(f"{key}: {why}" for key, why in left.items()) + ". Its dead-man timer is"
            " stopped (what is left is for a person): nothing puts these back by itself. Fix: see each cause; run"
            " playbooks/restore.yml again once it is fixed, or, after checking the host by hand, drop the entries"
            " with esxilab.iperf.esxi_journal mode=clear",
            result,
        )
    return result


def _without(firewall: Mapping[str, Any], left: Mapping[str, str]) -> dict[str, Any]:
    """The firewall values put back: ``firewall`` without the entries ``left``."""
    out = {k: v for k, v in firewall.items() if f"firewall.{k}" not in left and k != "rulesets"}
    rulesets = {k: v for k, v in (firewall.get("rulesets") or {}).items() if f"firewall.ruleset.{k}" not in left}
    if rulesets:
        out["rulesets"] = rulesets
    return out


def _forget_fired(journal: Journal, result: dict[str, Any]) -> None:
    """The fired record has been reported: drop it (its lines stay in ``deadman.log``)."""
    try:
        journal.clear(forget_fired=True)
    except JournalError as exc:
        result["warnings"].append(f"{_NAME}: {exc.message}")


def _record(args: Mapping[str, Any], journal: Journal, execute: Execute, *, check_mode: bool) -> dict[str, Any]:
    """``mode: record``: journal the MTU of ``links`` as it is now (earliest value wins), before a change."""
    names = list(args.get("links") or [])
    if not names:
        raise JournalError("mode=record needs links (the interfaces whose MTU is about to change). Fix: set links")
    mtus = journal_link.read_mtus(execute, names)
    before = journal.read()
    wanted = {name: mtu for name, mtu in mtus.items() if name not in before.link}
    result: dict[str, Any] = {
        "changed": bool(wanted),
        "recorded": {"link": {"mtu": wanted}} if wanted else {},
        "journal": before.as_dict(),
        "pending": _selected(before, SCOPES),
        "restored": {},
        "left": {},
        "commands": [],
        "fired": before.fired,
        "holder": journal.holder(before),
        "diff": {"before": {"link": before.link}, "after": {"link": {**mtus, **before.link}}},
    }
    if wanted and not check_mode:
        result["journal"] = journal.record(link_mtu=wanted).as_dict()
    elif not wanted:
        journal.refuse_live(before)
    return result
