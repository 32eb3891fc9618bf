# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plan the firewall changes an iperf test needs (global enable/default action, rulesets) and
their restore. Pure; nothing is run here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import FirewallError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.firewall import DefaultAction, FirewallStatus, Ruleset
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.steps import Step, esxcli_step


@dataclass(frozen=True, slots=True)
class FirewallDesired:
    """Wanted firewall state; ``None``/absent means "leave as is".

    ``rulesets`` maps existing ruleset ids to enabled. No ruleset named ``iperf`` exists on any
    recorded host, and ESXi reads custom rulesets only from XML files under
    ``/etc/vmware/firewall/`` -- this collection does not write them (see the module docs).
    """

    enabled: bool | None = None
    default_action: DefaultAction | None = None
    rulesets: Mapping[str, bool] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FirewallChange:
    key: str
    before: Any
    after: Any


@dataclass(frozen=True, slots=True)
class FirewallPlan:
    """Differences, the commands applying them, and the values to put back (``previous``)."""

    changes: tuple[FirewallChange, ...]
    steps: tuple[Step, ...]
    before: dict[str, Any]
    after: dict[str, Any]
    previous: FirewallDesired
    warnings: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.changes)


def _flag(value: bool) -> str:
    """esxcli boolean option value (``--default-action true`` means PASS)."""
    return "true" if value else "false"


def _firewall_view(status: FirewallStatus, rulesets: Mapping[str, bool]) -> dict[str, Any]:
    return {
        "enabled": status.enabled,
        "default_action": status.default_action,
        "rulesets": dict(sorted(rulesets.items())),
    }


def plan_firewall(
    current: FirewallStatus,
    desired: FirewallDesired,
    rulesets: Sequence[Ruleset] = (),
) -> FirewallPlan:
    """Compute the ``esxcli network firewall`` commands that turn ``current`` into ``desired``.

    Only keys the user set are compared. When the firewall is being turned **on**, rulesets and
    the default action are set first and ``--enabled true`` last; when it is being turned
    **off**, ``--enabled false`` goes first -- so no step opens more than the end state does.
    Restoring is the same function with ``desired = plan.previous``.
    """
    by_name = {r.name: r for r in rulesets}
    changes: list[FirewallChange] = []
    ruleset_steps: list[Step] = []
    warnings: list[str] = []
    touched_before: dict[str, bool] = {}
    touched_after: dict[str, bool] = {}
    for name, want in sorted(desired.rulesets.items()):
        rs = by_name.get(name)
        if rs is None:
            known = ", ".join(sorted(by_name)) or "none were listed"
            raise FirewallError(
                f"firewall ruleset {name!r} does not exist on this host.",
                fix=f"use an existing ruleset id ({known}); this collection does not create rulesets"
                " (ESXi loads them from XML files under /etc/vmware/firewall/).",
            )
        touched_before[name] = rs.enabled
        touched_after[name] = want
        if rs.enabled == want:
            continue
        if rs.enable_disable_configurable is False:
            raise FirewallError(
                f"firewall ruleset {name!r} cannot be {'enabled' if want else 'disabled'} on this host"
                " ('Enable/Disable configurable' is false; it is owned by a system service).",
                fix="leave it out of rulesets, or use enabled: false to turn the whole firewall off for the test.",
            )
        changes.append(FirewallChange(key=f"rulesets.{name}", before=rs.enabled, after=want))
        ruleset_steps.append(
            esxcli_step(
                "ruleset_set",
                f"{'enable' if want else 'disable'} firewall ruleset {name}",
                "network firewall ruleset set",
                *("--ruleset-id", name, "--enabled", _flag(want)),
            )
        )
    action_steps: list[Step] = []
    if desired.default_action is not None and desired.default_action != current.default_action:
        changes.append(FirewallChange("default_action", current.default_action, desired.default_action))
        action_steps.append(
            esxcli_step(
                "firewall_default_action",
                f"set the firewall default action to {desired.default_action}",
                "network firewall set",
                *("--default-action", _flag(desired.default_action == "PASS")),
            )
        )
    enable_steps: list[Step] = []
    if desired.enabled is not None and desired.enabled != current.enabled:
        changes.append(FirewallChange(key="enabled", before=current.enabled, after=desired.enabled))
        enable_steps.append(
            esxcli_step(
                "firewall_enabled",
                f"{'enable' if desired.enabled else 'disable'} the ESXi firewall",
                "network firewall set",
                *("--enabled", _flag(desired.enabled)),
            )
        )
    if current.loaded is False:
        warnings.append("the firewall module reports Loaded: false")
    if desired.enabled is False:
        steps = enable_steps + action_steps + ruleset_steps
    else:
        steps = ruleset_steps + action_steps + enable_steps
    after_status = FirewallStatus(
        enabled=current.enabled if desired.enabled is None else desired.enabled,
        default_action=current.default_action if desired.default_action is None else desired.default_action,
        loaded=current.loaded,
    )
    changed_keys = {c.key for c in changes}
    previous = FirewallDesired(
        enabled=current.enabled if "enabled" in changed_keys else None,
        default_action=current.default_action if "default_action" in changed_keys else None,
        rulesets={k: v for k, v in touched_before.items() if f"rulesets.{k}" in changed_keys},
    )
    return FirewallPlan(
        changes=tuple(changes),
        steps=tuple(steps),
        before=_firewall_view(current, touched_before),
        after=_firewall_view(after_status, touched_after),
        previous=previous,
        warnings=tuple(warnings),
    )
