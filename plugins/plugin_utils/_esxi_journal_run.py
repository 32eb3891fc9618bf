# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Backend of ``esxilab.iperf.esxi_journal``: read, restore or clear the restore journal of a host.

``restore`` puts back what the journal records through the two backends that wrote it
(``_esxi_firewall.run`` with ``restore`` and ``_esxi_install.restore``); each clears its keys
once the host is back, and the last one stops the dead-man timer. The host is reached through
the ``execute`` callable the action plugin lends (no Python on ESXi).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.esxilab.iperf.plugins.modules.esxi_journal import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils import _esxi_firewall, _esxi_install
from ansible_collections.esxilab.iperf.plugins.plugin_utils._argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils._esxi_journal import (
    SCOPES,
    Journal,
    JournalError,
    JournalState,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import Execute, HostError

__all__ = ["ARGUMENT_SPEC", "EsxiJournalError", "describe", "run"]

_NAME = "esxilab.iperf.esxi_journal"

ARGUMENT_SPEC = argument_spec(DOCUMENTATION)  # the options of the module's DOCUMENTATION


class EsxiJournalError(HostError):
    """The journal backend's :class:`~.host.command.HostError` (``message``, ``result``)."""


def _selected(state: JournalState, scopes: Sequence[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    if "firewall" in scopes and state.firewall:
        out["firewall"] = state.firewall
    if "install" in scopes and state.install:
        out["install"] = state.install
    return out


def describe(pending: Mapping[str, Mapping[str, Any]]) -> str:
    """One line naming what the journal records, e.g. ``firewall enabled=True; install created_files=[...]``."""
    parts = []
    for scope, values in pending.items():
        parts.append(f"{scope} " + ", ".join(f"{k}={v}" for k, v in sorted(values.items())))
    return "; ".join(parts)


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
        state = journal.read()
    except JournalError as exc:
        raise EsxiJournalError(f"{_NAME}: {exc.message}") from exc
    pending = _selected(state, scopes)
    result: dict[str, Any] = {
        "changed": False,
        "journal": state.as_dict(),
        "pending": pending,
        "restored": {},
        "commands": [],
        "diff": {"before": pending, "after": pending},
    }
    if mode == "read" or not pending:
        return result
    result["changed"] = True
    result["diff"] = {"before": pending, "after": {}}
    if check_mode:
        return result
    if mode == "clear":
        try:
            after = journal.clear(scopes)
        except JournalError as exc:
            raise EsxiJournalError(f"{_NAME}: {exc.message}", result) from exc
        result["journal"] = after.as_dict()
        result["warnings"] = [
            f"{_NAME}: dropped from {journal.directory} without restoring (mode clear): {describe(pending)}"
        ]
        return result

    done: dict[str, Any] = {}
    try:
        if "firewall" in pending:
            fw = _esxi_firewall.run({"restore": pending["firewall"]}, execute, check_mode=False, journal=journal)
            result["commands"] += fw["commands"]
            done["firewall"] = pending["firewall"]
        if "install" in pending:
            inst = _esxi_install.restore(
                {"restore": pending["install"], "remove_vib": bool(args.get("remove_vib"))},
                execute,
                check_mode=False,
                journal=journal,
            )
            result["commands"] += inst["commands"]
            result.setdefault("warnings", []).extend(inst.get("warnings", []))
            done["install"] = pending["install"]
    except (_esxi_firewall.EsxiFirewallError, _esxi_install.EsxiInstallError) as exc:
        result["restored"] = done
        result["commands"] += list(exc.result.get("commands") or [])
        raise EsxiJournalError(
            f"{_NAME}: putting back what {journal.directory} records failed: {exc.message}. Run"
            " playbooks/restore.yml again once the cause is fixed (the journal keeps what is not back yet).",
            result,
        ) from exc
    result["restored"] = done
    result.setdefault("warnings", []).insert(
        0,
        f"{_NAME}: {journal.directory} recorded changes that were not put back (an interrupted or failed earlier"
        f" run); put back now: {describe(done)}",
    )
    try:
        result["journal"] = journal.read().as_dict()
    except JournalError as exc:
        result.setdefault("warnings", []).append(f"{_NAME}: {exc.message}")
    return result
