# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Backend of ``esxilab.iperf.esxi_firewall``: read, plan, apply and verify over the ESXi shell.

Controller-side only. The host is reached through ``execute(command) -> CommandOutput``, which
the action plugin implements with the connection's plain shell (no Python on ESXi). Parsing and
planning are the pure functions of ``plugin_utils/esxi/``; this file strings them together
in the collection's idempotency order: read current -> compute differences -> none: unchanged ->
check mode: report the diff -> apply -> read again and verify -> return previous/current.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import EsxiError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.esxcli import checked
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.firewall import (
    FirewallStatus,
    Ruleset,
    parse_firewall_get,
    parse_ruleset_list,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.firewall_plan import (
    FirewallDesired,
    FirewallPlan,
    plan_firewall,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.steps import Step
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import Execute, HostError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.merge import earliest_wins
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.owner import describe
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.store import Journal, JournalError

__all__ = [
    "MUTUALLY_EXCLUSIVE",
    "EsxiFirewallError",
    "desired_from_args",
    "run",
]

_NAME = "esxilab.iperf.esxi_firewall"
GET = "esxcli network firewall get"
RULESET_LIST = "esxcli network firewall ruleset list"

MUTUALLY_EXCLUSIVE = [("restore", "enabled"), ("restore", "default_action"), ("restore", "rulesets")]


class EsxiFirewallError(HostError):
    """The firewall backend's :class:`~.host.command.HostError` (``message``, ``result``)."""


def _bool_map(value: Any, where: str) -> dict[str, bool]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise EsxiFirewallError(f"{_NAME}: {where} must be a mapping of ruleset id to true/false")
    out: dict[str, bool] = {}
    for key, flag in value.items():
        if not isinstance(flag, bool):
            raise EsxiFirewallError(
                f"{_NAME}: {where}.{key} must be true or false, got {flag!r}"
                " (a ruleset is enabled or disabled; use its id as the key)"
            )
        out[str(key)] = flag
    return out


def desired_from_args(args: Mapping[str, Any]) -> FirewallDesired:
    """The wanted state from the options; ``restore`` is the ``restore`` return value of a run."""
    source: Mapping[str, Any] = args
    where = ""
    if args.get("restore") is not None:
        source = args["restore"]
        where = "restore."
        unknown = set(source) - {"enabled", "default_action", "rulesets"}
        if unknown:
            raise EsxiFirewallError(
                f"{_NAME}: restore has unknown keys {sorted(unknown)}; pass the restore value a previous"
                " esxi_firewall task returned"
            )
    enabled = source.get("enabled")
    if enabled is not None and not isinstance(enabled, bool):
        raise EsxiFirewallError(f"{_NAME}: {where}enabled must be true or false, got {enabled!r}")
    action = source.get("default_action")
    if action is not None and action not in ("PASS", "DROP"):
        raise EsxiFirewallError(f"{_NAME}: {where}default_action must be PASS or DROP, got {action!r}")
    return FirewallDesired(
        enabled=enabled,
        default_action=action,
        rulesets=_bool_map(source.get("rulesets"), f"{where}rulesets"),
    )


def _checked(execute: Execute, command: str) -> str:
    return checked(execute, command, name=_NAME, error=EsxiFirewallError)


def _read(execute: Execute, with_rulesets: bool) -> tuple[FirewallStatus, list[Ruleset]]:
    status = parse_firewall_get(_checked(execute, GET))
    rulesets = parse_ruleset_list(_checked(execute, RULESET_LIST)) if with_rulesets else []
    return status, rulesets


def _message(exc: EsxiError | EsxiFirewallError) -> str:
    """The message of a backend error, prefixed with the module name once."""
    text = exc.message if isinstance(exc, EsxiFirewallError) else str(exc)
    return text if text.startswith(f"{_NAME}: ") else f"{_NAME}: {text}"


def _view(status: FirewallStatus, rulesets: list[Ruleset], names: Mapping[str, bool]) -> dict[str, Any]:
    by_name = {r.name: r.enabled for r in rulesets}
    return {
        "enabled": status.enabled,
        "default_action": status.default_action,
        "loaded": status.loaded,
        "rulesets": {name: by_name.get(name) for name in sorted(names)},
    }


def _restore_value(plan: FirewallPlan) -> dict[str, Any]:
    previous = plan.previous
    out: dict[str, Any] = {}
    if previous.enabled is not None:
        out["enabled"] = previous.enabled
    if previous.default_action is not None:
        out["default_action"] = previous.default_action
    if previous.rulesets:
        out["rulesets"] = dict(sorted(previous.rulesets.items()))
    return out


def _journal_for_restore(journal: Journal | None, warnings: list[str]) -> tuple[Journal | None, dict[str, Any]]:
    """The journal a restore may use and what it records for the firewall; a journal another live run holds
    (or one that cannot be read) is left alone, with a warning: the given restore value is still put back."""
    if journal is None:
        return None, {}
    try:
        state = journal.read()
    except JournalError as exc:
        warnings.append(f"{_NAME}: {exc.message}")
        return None, {}
    if journal.holder(state) == "live" and not journal.takeover and state.owner is not None:
        warnings.append(
            f"{_NAME}: the journal {journal.directory} now belongs to {describe(state.owner)} (it took the window"
            " over); only this task's restore value is put back, the journal is left to that run"
        )
        return None, {}
    for key, why in state.rejected.items():
        if key.startswith("firewall."):
            warnings.append(f"{_NAME}: journal entry {key} is not applied and kept: {why}")
    return journal, state.firewall


def _step_key(step: Step) -> str | None:
    """The journal key a firewall command puts back."""
    if step.action == "firewall_enabled":
        return "firewall.enabled"
    if step.action == "firewall_default_action":
        return "firewall.default_action"
    if step.action == "ruleset_set" and "--ruleset-id" in step.argv:
        return f"firewall.ruleset.{step.argv[step.argv.index('--ruleset-id') + 1]}"
    return None


def _change_key(key: str) -> str:
    """The journal key of a plan's change key (``enabled``, ``default_action``, ``rulesets.ID``)."""
    return "firewall." + (f"ruleset.{key[len('rulesets.') :]}" if key.startswith("rulesets.") else key)


def _journal_keys(recorded: Mapping[str, Any]) -> set[str]:
    keys = {f"firewall.{k}" for k in ("enabled", "default_action") if k in recorded}
    return keys | {f"firewall.ruleset.{name}" for name in recorded.get("rulesets") or {}}


def run(
    args: Mapping[str, Any],
    execute: Execute,
    *,
    check_mode: bool,
    journal: Journal | None = None,
) -> dict[str, Any]:
    """Bring the firewall to the wanted state; the task result (raises :class:`EsxiFirewallError`).

    With a ``journal``: a change is recorded on the host before the first command runs (and the
    dead-man armed); a restore also puts back what the journal records and then clears it.
    A restore is best effort: a ruleset the host no longer has, or a command that fails, is left (its
    journal entry kept, ``left`` names it), every other step still runs (the firewall's enabled state
    last), and the task then fails naming what is left and why.
    """
    restoring = args.get("restore") is not None
    recorded: dict[str, Any] = {}
    journal_warnings: list[str] = []
    if restoring:
        journal, recorded = _journal_for_restore(journal, journal_warnings)
        if recorded:
            args = {**args, "restore": earliest_wins(args.get("restore") or {}, recorded)}
    desired = desired_from_args(args)
    left: dict[str, str] = {}
    try:
        status, rulesets = _read(execute, bool(desired.rulesets))
        if restoring:
            known = {r.name for r in rulesets}
            for name in sorted(set(desired.rulesets) - known):
                left[f"firewall.ruleset.{name}"] = (
                    f"the host has no ruleset {name!r} any more (not in 'esxcli network firewall ruleset list')"
                )
            desired = replace(desired, rulesets={k: v for k, v in desired.rulesets.items() if k in known})
        plan = plan_firewall(status, desired, rulesets)
    except (EsxiError, EsxiFirewallError) as exc:
        raise EsxiFirewallError(_message(exc)) from exc

    previous = _view(status, rulesets, desired.rulesets)
    result: dict[str, Any] = {
        "changed": plan.changed,
        "previous": previous,
        "restore": _restore_value(plan),
        "commands": [step.command for step in plan.steps],
        "diff": {"before": plan.before, "after": plan.after},
    }
    if recorded:
        result["journal_restored"] = recorded
    if left:
        result["left"] = left
    if plan.warnings or journal_warnings:
        result["warnings"] = journal_warnings + [f"{_NAME}: {w}" for w in plan.warnings]
    # the journal entries this restore puts back (the rest stays: left, or not the journal's)
    back = _journal_keys(recorded) - set(left) if restoring and journal is not None and not check_mode else set()
    if not plan.changed or check_mode:
        planned = dict(previous)
        planned.update({k: v for k, v in plan.after.items() if k != "rulesets"})
        planned["rulesets"] = {**previous["rulesets"], **plan.after["rulesets"]}
        result["current"] = planned
        if back and journal is not None:
            _clear(journal, result, sorted(back))
        return _finish(result, left)

    if journal is not None and not restoring:
        try:
            journal.record(firewall=result["restore"])
        except JournalError as exc:
            raise EsxiFirewallError(
                f"{_NAME}: nothing was changed: the restore journal could not be written: {exc.message}",
                {**result, "changed": False, "commands": []},
            ) from exc

    done: list[str] = []
    for step in plan.steps:
        key = _step_key(step)
        command = step.command
        if journal is not None and key in back:  # the value and its entry go in one command
            command = journal.dropping(command, [key])
        try:
            _checked(execute, command)
        except EsxiFirewallError as exc:
            if restoring:  # best effort: the later steps (the firewall's enabled state last) still run
                left[key or "firewall"] = f"'{step.command}' ({step.description}) failed: {exc.message}"
                continue
            raise EsxiFirewallError(
                f"{exc.message}. Commands already applied: {done or 'none'}; to undo them run this module with"
                " restore set to the 'restore' value in this result.",
                {**result, "changed": bool(done), "commands": done},
            ) from exc
        done.append(step.command)
    if left:
        back -= set(left)
        result.update(changed=bool(done), commands=done, left=left)

    try:
        status_after, rulesets_after = _read(execute, bool(desired.rulesets))
    except (EsxiError, EsxiFirewallError) as exc:
        raise EsxiFirewallError(
            f"{_NAME}: the changes were applied but reading them back failed: {_message(exc)}."
            " The 'restore' value in this result undoes them.",
            result,
        ) from exc
    current = _view(status_after, rulesets_after, desired.rulesets)
    result["current"] = current
    again = plan_firewall(status_after, desired, rulesets_after)
    wrong = ", ".join(
        f"{c.key} is {c.before!r}, wanted {c.after!r}" for c in again.changes if _change_key(c.key) not in left
    )
    if wrong:
        raise EsxiFirewallError(f"{_NAME}: esxcli accepted the commands but the firewall now reports: {wrong}", result)
    if back and journal is not None:
        _clear(journal, result, sorted(back))
    return _finish(result, left)


def _finish(result: dict[str, Any], left: Mapping[str, str]) -> dict[str, Any]:
    """The result; with entries left, the task fails at the end naming them (the rest is back)."""
    if not left:
        return result
    raise EsxiFirewallError(
        f"{_NAME}: put back what could be put back, but the journal keeps what could not: "
        + "; ".join(f"{key}: {why}" for key, why in left.items())
        + ". Fix: see each cause; once it is fixed run playbooks/restore.yml (it puts back what the journal keeps);"
        " what cannot be applied on this host as it is now (a ruleset it no longer has) you drop, after checking the"
        " host by hand, with esxilab.iperf.esxi_journal mode=clear scope=firewall",
        result,
    )


def _clear(journal: Journal, result: dict[str, Any], keys: list[str]) -> None:
    journal.clear_restored("firewall", result, name=_NAME, what="the firewall", keys=keys)
