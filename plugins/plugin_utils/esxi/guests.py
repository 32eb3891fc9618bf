# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The guests' vNIC wiring: what the role ``esxi_guests`` asks for, checked, and planned per guest.

* ``check_guests()`` validates the requested wiring before anything is read or changed: each guest
  names a VM (once), a vNIC type of ``VNIC_TYPES`` and a port group (its own or the default);
  the management port group is refused unless allowed. Returns the normalised requests; raises
  ``GuestsError`` naming the option and the fix.
* ``plan_guests()`` compares each request with the VM's vNICs as
  ``community.vmware.vmware_guest_network`` (``gather_network_info``) returns them and the host's
  port groups, and decides per guest: ``unchanged`` (a vNIC of the type is on the port group),
  ``add`` (none on it), ``replace`` (vNICs of another type on it, removed, and one of the type added
  unless one is there already - only with ``replace_mismatched``: the vSphere API cannot change a
  vNIC's device class, so a new vNIC with a new MAC address takes its place) or ``refuse`` (with
  the reason: the VM or the port group is missing, or a type mismatch without the opt-in). vNICs
  on other port groups are never part of a plan.

Plain data; no Ansible import, no I/O. Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["VNIC_TYPES", "GuestsError", "check_guests", "plan_guests"]

#: The vNIC types the role wires (community.vmware.vmware_guest_network's device_type names).
VNIC_TYPES = ("e1000", "e1000e", "vmxnet3")
OPTION = "esxi_guests_guests"


class GuestsError(ValueError):
    """Bad input: the message names the option and the fix."""


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def check_guests(
    guests: Any,
    portgroup: str | None = None,
    management_portgroup: str = "Management Network",
    allow_management: bool = False,
) -> list[dict[str, str]]:
    """The requests ``{name, vm, type, portgroup}`` of ``guests``, or ``GuestsError``."""
    if not isinstance(guests, list):
        raise GuestsError(f"{OPTION} must be a list of {{vm, type, portgroup}}, got {type(guests).__name__}")
    requests: list[dict[str, str]] = []
    seen: dict[str, int] = {}
    for index, guest in enumerate(guests):
        where = f"{OPTION}[{index}]"
        if not isinstance(guest, Mapping):
            raise GuestsError(f"{where} must be a dict with vm and type, got {guest!r:.100}")
        unknown = sorted(set(guest) - {"name", "vm", "type", "portgroup"})
        if unknown:
            raise GuestsError(f"{where}: unknown key(s) {', '.join(map(str, unknown))}; give vm, type, portgroup, name")
        vm = _text(guest.get("vm"))
        if not vm:
            raise GuestsError(f"{where}.vm: give the VM's name in vSphere (for example vm: fwd-vm1)")
        if vm in seen:
            raise GuestsError(f"{where}.vm: VM {vm} is also {OPTION}[{seen[vm]}]; give each VM once")
        seen[vm] = index
        kind = _text(guest.get("type")).lower()
        if kind not in VNIC_TYPES:
            raise GuestsError(f"{where}.type: {guest.get('type')!r} for VM {vm}; give one of {', '.join(VNIC_TYPES)}")
        group = _text(guest.get("portgroup")) or _text(portgroup)
        if not group:
            raise GuestsError(f"{where}.portgroup: VM {vm} has no port group; set it or esxi_guests_portgroup")
        if group.casefold() == _text(management_portgroup).casefold() and not allow_management:
            raise GuestsError(
                f"{where}: port group {group} of VM {vm} is the management port group (esxi_guests_management_portgroup"
                f"); a test vNIC there puts benchmark traffic on the management network. Give the test port group, "
                "or set esxi_guests_allow_management: true if this is really meant"
            )
        requests.append({"name": _text(guest.get("name")) or vm, "vm": vm, "type": kind, "portgroup": group})
    return requests


def _nic(nic: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a vNIC a plan shows."""
    return {
        "mac_address": nic.get("mac_address"),
        "type": nic.get("device_type"),
        "portgroup": nic.get("network_name"),
        "label": nic.get("label"),
        "connected": nic.get("connected"),
    }


def _plan_one(
    request: Mapping[str, str],
    nics: Sequence[Mapping[str, Any]] | None,
    portgroups: Sequence[str],
    replace_mismatched: bool,
) -> dict[str, Any]:
    vm, kind, group = request["vm"], request["type"], request["portgroup"]
    plan: dict[str, Any] = {**request, "action": "refuse", "add": None, "remove": [], "before": [], "after": []}
    if nics is None:
        plan["reason"] = (
            f"VM {vm} was not found ({OPTION}: vm {vm}); check its name in vSphere (the host or vCenter the role "
            "connects to lists it) or the inventory's VM name for this guest"
        )
        return plan
    on_group = [_nic(n) for n in nics if n.get("network_name") == group]
    plan["before"] = on_group
    if group not in portgroups:
        known = ", ".join(sorted(portgroups)) or "none"
        plan["reason"] = (
            f"port group {group} of VM {vm} does not exist on the host (port groups: {known}); build it first "
            "(esxilab.iperf.esxi_network) or fix the port group name"
        )
        return plan
    matching = [n for n in on_group if n["type"] == kind]
    wrong = [n for n in on_group if n["type"] != kind]
    if not wrong:
        if matching:
            plan["action"] = "unchanged"
            plan["after"] = on_group
            extra = f" ({len(matching)} of them)" if len(matching) > 1 else ""
            plan["reason"] = f"VM {vm} has a vNIC of type {kind} on {group}{extra}"
        else:
            plan["action"] = "add"
            plan["add"] = {"type": kind, "portgroup": group}
            plan["after"] = [{"mac_address": None, "type": kind, "portgroup": group, "label": None, "connected": True}]
            plan["reason"] = f"VM {vm} has no vNIC on {group}: a vNIC of type {kind} is added (a new MAC address)"
        return plan
    described = ", ".join(f"{n['type']} {n['mac_address']}" for n in wrong)
    if not replace_mismatched:
        plan["reason"] = (
            f"VM {vm} has {described} on {group}, not {kind}; the vSphere API cannot change a vNIC's type. "
            f"Set esxi_guests_replace_mismatched: true to remove it and add a vNIC of type {kind} (a new MAC address: "
            f"the guest OS sees a new NIC and its settings for the old one do not follow), or ask for type "
            f"{wrong[0]['type']} for this guest"
        )
        return plan
    plan["action"] = "replace"
    plan["remove"] = [n["mac_address"] for n in wrong]
    plan["after"] = list(matching)
    if not matching:
        plan["add"] = {"type": kind, "portgroup": group}
        plan["after"].append({"mac_address": None, "type": kind, "portgroup": group, "label": None, "connected": True})
    added = f"a vNIC of type {kind} is added (a new MAC address), then " if not matching else ""
    plan["reason"] = f"VM {vm} has {described} on {group}, not {kind}: {added}{described} removed"
    return plan


def plan_guests(
    requests: Sequence[Mapping[str, str]],
    nics: Mapping[str, Sequence[Mapping[str, Any]] | None],
    portgroups: Sequence[str],
    replace_mismatched: bool = False,
) -> dict[str, Any]:
    """``{guests: [plan...], refused: [reason...], changes: N}`` for the checked ``requests``.

    ``nics`` maps each VM name to its vNICs (``network_info``), ``None`` for a VM not found;
    ``portgroups`` are the names of the host's port groups.
    """
    plans = [_plan_one(r, nics.get(r["vm"]), portgroups, replace_mismatched) for r in requests]
    return {
        "guests": plans,
        "refused": [p["reason"] for p in plans if p["action"] == "refuse"],
        "changes": sum(1 for p in plans if p["action"] in ("add", "replace")),
    }
