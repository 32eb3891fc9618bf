# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Security and teaming policy of a standard vSwitch or a port group (``esxi_vmknic``).

One flat, frozen :class:`Policy` serves as the request (a field left out is None: left as it
is), as a vSwitch's policy read from the host, and as a port group's overrides (None: inherited
from the vSwitch). :func:`policy_change` computes what to set; nothing here talks to a host.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Final

#: ``HostNicTeamingPolicy.policy`` values, the choices of ``teaming.load_balancing``.
LOAD_BALANCING: Final = ("loadbalance_srcid", "loadbalance_ip", "loadbalance_srcmac", "failover_explicit")
#: Option name -> ``HostNetworkSecurityPolicy`` property.
SECURITY: Final[Mapping[str, str]] = {
    "allow_promiscuous": "allowPromiscuous",
    "forged_transmits": "forgedTransmits",
    "mac_changes": "macChanges",
}
_TEAMING: Final = ("active_uplinks", "standby_uplinks", "load_balancing")


@dataclass(frozen=True)
class Policy:
    allow_promiscuous: bool | None = None
    forged_transmits: bool | None = None
    mac_changes: bool | None = None
    active_uplinks: tuple[str, ...] | None = None
    standby_uplinks: tuple[str, ...] | None = None
    load_balancing: str | None = None

    @property
    def empty(self) -> bool:
        return all(getattr(self, f.name) is None for f in fields(self))

    @property
    def has_order(self) -> bool:
        return self.active_uplinks is not None or self.standby_uplinks is not None

    def as_dict(self) -> dict[str, Any]:
        """The fields that are set (an operation's change)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items() if v is not None}


def policy_view(policy: Policy) -> dict[str, Any]:
    """Before/after and return value: ``security`` and ``teaming``; None is unset (inherited)."""
    data = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(policy).items()}
    return {"security": {k: data[k] for k in SECURITY}, "teaming": {k: data[k] for k in _TEAMING}}


def default_vswitch_policy(uplinks: Sequence[str]) -> Policy:
    """What ESXi gives a new standard vSwitch: security all rejected, route by originating port,
    every uplink active."""
    return Policy(False, False, False, tuple(uplinks), (), "loadbalance_srcid")


def policy_from_params(raw: Mapping[str, Any], where: str, reasons: list[str]) -> Policy | None:
    """``raw`` is the ``vswitch`` or ``portgroup`` option; ``where`` its name for messages."""
    security, teaming = raw.get("security"), raw.get("teaming")
    for name, value in (("security", security), ("teaming", teaming)):
        if value is not None and not isinstance(value, Mapping):
            reasons.append(f"{where}.{name} must be a dictionary of its sub-options, not {str(value)[:60]!r}")
            return None
    security, teaming = security or {}, teaming or {}

    def nics(name: str) -> tuple[str, ...] | None:
        value = teaming.get(name)
        return None if value is None else tuple(dict.fromkeys(str(n) for n in value))

    active, standby = nics("active_uplinks"), nics("standby_uplinks")
    both = sorted(set(active or ()) & set(standby or ()))
    if both:
        reasons.append(
            f"{where}.teaming: {', '.join(both)} is in both active_uplinks and standby_uplinks; list each NIC in one "
            f"of them"
        )
    balancing = teaming.get("load_balancing")
    if balancing is not None and balancing not in LOAD_BALANCING:
        reasons.append(
            f"{where}.teaming.load_balancing {balancing!r} is not known: give one of {', '.join(LOAD_BALANCING)}"
        )
    policy = Policy(
        **{k: None if security.get(k) is None else bool(security[k]) for k in SECURITY},
        active_uplinks=active,
        standby_uplinks=standby,
        load_balancing=None if balancing is None else str(balancing),
    )
    return None if policy.empty else policy


def _bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def read_policy(network_policy: Any) -> Policy:
    """A ``HostNetworkPolicy`` (a vSwitch's, or a port group's overrides) as a :class:`Policy`."""
    security = getattr(network_policy, "security", None)
    teaming = getattr(network_policy, "nicTeaming", None)
    order = getattr(teaming, "nicOrder", None)
    balancing = getattr(teaming, "policy", None)
    return Policy(
        **{k: _bool(getattr(security, prop, None)) for k, prop in SECURITY.items()},
        active_uplinks=None if order is None else tuple(str(n) for n in (order.activeNic or [])),
        standby_uplinks=None if order is None else tuple(str(n) for n in (order.standbyNic or [])),
        load_balancing=str(balancing) if balancing else None,
    )


def policy_change(current: Policy, want: Policy, base: Policy) -> Policy | None:
    """What to set to take ``current`` to ``want``, or None when nothing differs.

    ``base`` gives the failover order a partial order is completed from: a left-out
    ``active_uplinks`` is the base's active NICs minus the new standby ones (and the other way
    round). The order is always set whole (the API takes both lists together).
    """
    change: dict[str, Any] = {}
    for key in (*SECURITY, "load_balancing"):
        value = getattr(want, key)
        if value is not None and value != getattr(current, key):
            change[key] = value
    if want.has_order:
        base_active, base_standby = base.active_uplinks or (), base.standby_uplinks or ()
        standby = want.standby_uplinks
        active = want.active_uplinks
        if active is None:
            active = tuple(n for n in base_active if n not in (standby or ()))
        if standby is None:
            standby = tuple(n for n in base_standby if n not in active)
        if (active, standby) != (current.active_uplinks, current.standby_uplinks):
            change["active_uplinks"], change["standby_uplinks"] = active, standby
    return Policy(**change) if change else None


def merged(current: Policy, change: Policy | None) -> Policy:
    """``current`` with the set fields of ``change`` on top (the after view)."""
    if change is None:
        return current
    return replace(current, **{k: getattr(change, k) for k in change.as_dict()})


def unknown_nics(where: str, policy: Policy, vswitch: str, uplinks: Sequence[str]) -> list[str]:
    """Reasons for NICs in the order that ``vswitch`` does not bridge."""
    reasons = []
    for name, nics in (("active_uplinks", policy.active_uplinks), ("standby_uplinks", policy.standby_uplinks)):
        missing = [n for n in nics or () if n not in uplinks]
        if missing:
            reasons.append(
                f"{where}.teaming.{name}: {', '.join(missing)} is not an uplink of vSwitch {vswitch} (its uplinks: "
                f"{', '.join(uplinks) or 'none'}); add it to vswitch.uplinks or leave it out of {name}"
            )
    return reasons
