# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The management guard of ``esxi_vmknic``: :func:`management_scope` finds what carries (or might
carry) management traffic, so the planner touches it only with ``allow_management_changes``.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_state import (
    DEFAULT_STACK,
    MANAGEMENT_PORTGROUP,
    MANAGEMENT_VMK,
    HostNetworkState,
)


@dataclass(frozen=True)
class ManagementScope:
    """What carries (or, when the service tags are unreadable, might carry) management traffic.

    ``why`` maps ``(kind, name)`` (kind: vmknic, portgroup, vswitch, pnic, switch) to the reason the
    object is in scope; ``uncertain`` holds the objects that are in scope only because the
    service tags could not be read (``error`` says why).
    """

    vmknics: frozenset[str]
    portgroups: frozenset[str]
    vswitches: frozenset[str]
    uplinks: frozenset[str]
    #: Names of the distributed / NSX switches that carry a (possible) management adapter.
    other_switches: frozenset[str] = frozenset()
    why: Mapping[tuple[str, str], str] = field(default_factory=dict)
    uncertain: frozenset[tuple[str, str]] = frozenset()
    error: str | None = None

    def reason(self, kind: str, name: str) -> str:
        return self.why.get((kind, name), "management")

    def is_uncertain(self, kind: str, name: str) -> bool:
        return (kind, name) in self.uncertain


def management_scope(state: HostNetworkState) -> ManagementScope:
    """What carries the host's management traffic (see the module documentation).

    Sure: ``vmk0``, adapters tagged ``management``, a port group named ``Management Network``.
    When the service tags cannot be read (``state.services`` is None) every adapter on the
    default TCP/IP stack might be tagged ``management`` (only that stack carries it), so it is
    taken in as well, marked uncertain. From the adapters follow their port groups, the
    vSwitches carrying those and the vSwitches' uplinks; an adapter on a distributed switch
    brings in that switch's uplinks (on an NSX switch: the uplinks of every NSX switch).
    """
    why: dict[tuple[str, str], str] = {}
    uncertain: set[tuple[str, str]] = set()

    def add(kind: str, name: str, reason: str, unsure: bool) -> None:
        key = (kind, name)
        if key in why and (unsure or key not in uncertain):
            return  # the first reason is kept, unless a sure one replaces an unsure one
        why[key] = reason
        uncertain.discard(key)
        if unsure:
            uncertain.add(key)

    unread = f"its service tags could not be read ({state.services_error})"
    for vmk in state.vmknics:
        tags = state.services_of(vmk.device)
        if vmk.device == MANAGEMENT_VMK:
            add("vmknic", vmk.device, "the host's first VMkernel adapter", False)
        elif tags is not None and "management" in tags:
            add("vmknic", vmk.device, "tagged for the management service", False)
        elif tags is None and vmk.stack == DEFAULT_STACK:
            add("vmknic", vmk.device, f"on the default TCP/IP stack, and {unread}", True)
    if state.portgroup(MANAGEMENT_PORTGROUP) is not None:
        add("portgroup", MANAGEMENT_PORTGROUP, "management port group", False)
    for kind, device in list(why):
        adapter = state.vmknic(device) if kind == "vmknic" else None
        if adapter is None:
            continue
        unsure = ("vmknic", device) in uncertain
        if adapter.portgroup is not None:
            reason = "port group of " + (f"{device}, whose service tags could not be read" if unsure else device)
            add("portgroup", adapter.portgroup, reason if unsure else "management port group", unsure)
        for other in state.other_switches:
            on_it = other.uuid is not None and other.uuid == adapter.switch_uuid
            on_nsx = adapter.distributed and adapter.switch_uuid is None and other.uuid is None
            if on_it or on_nsx:
                unread_note = ", whose service tags could not be read" if unsure else ""
                add("switch", other.name, f"it carries {device}{unread_note}", unsure)
                for pnic in other.uplinks:
                    add("pnic", pnic, f"uplink of {other.label}, which carries {device}", unsure)
    for kind, name in list(why):
        pg = state.portgroup(name) if kind == "portgroup" else None
        if pg is None:
            continue
        unsure = ("portgroup", name) in uncertain
        reason = f"it carries port group {name}" if unsure else "it carries the management port group"
        add("vswitch", pg.vswitch, reason, unsure)
    for kind, name in list(why):
        vs = state.vswitch(name) if kind == "vswitch" else None
        if vs is None:
            continue
        unsure = ("vswitch", name) in uncertain
        for pnic in vs.uplinks:
            add("pnic", pnic, f"uplink of vSwitch {name}, which carries management", unsure)

    def names(kind: str) -> frozenset[str]:
        return frozenset(n for k, n in why if k == kind)

    return ManagementScope(
        vmknics=names("vmknic"),
        portgroups=names("portgroup"),
        vswitches=names("vswitch"),
        uplinks=names("pnic"),
        other_switches=names("switch"),
        why=why,
        uncertain=frozenset(uncertain),
        error=state.services_error if uncertain else None,
    )


OVERRIDE_FIX: Final = "Set allow_management_changes: true to override (make sure you keep another way into the host)."


def uncertain_fix(error: str | None) -> str:
    return (
        f"The host's management network cannot be determined: the service tags could not be read ({error}). "
        f"Make them readable (the API user needs the System.Read privilege on the host, and the endpoint must "
        f"implement HostVirtualNicManager), or, if you are sure this does not carry management traffic, set "
        f"allow_management_changes: true (make sure you keep another way into the host)."
    )
