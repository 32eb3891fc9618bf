# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The planner's shared state and checks, and the planning of the VMkernel adapter itself:
find it, add it, update it in place (IP, MTU, port group move, services), or recreate it when the
TCP/IP stack changes. :class:`VmknicPlanner` is the base the planner of ``_vmknic_plan`` extends.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_guard import (
    OVERRIDE_FIX,
    ManagementScope,
    uncertain_fix,
)
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_ops import (
    AddVmknic,
    DeselectService,
    Ipv4Config,
    Ipv6Change,
    Op,
    RemoveVmknic,
    SelectService,
    UpdateVmknic,
    split_v6,
)
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_params import (
    STACK_CHOICES,
    DesiredState,
    Ipv6Spec,
    PortGroupSpec,
    VmknicSpec,
)
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_state import (
    BUILTIN_STACKS,
    DEFAULT_STACK,
    HostNetworkState,
    Ipv6State,
    VmknicState,
)
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_views import (
    ipv4_text,
    ipv6_after,
    ipv6_change_text,
    service_tags,
    vmknic_view,
)


@dataclass
class VmknicPlanner:
    """One planning run: what was read, what is wanted, and the operations, reasons and views so far."""

    state: HostNetworkState
    desired: DesiredState
    scope: ManagementScope
    reasons: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    vswitch_early: list[Op] = field(default_factory=list)
    portgroup_ops: list[Op] = field(default_factory=list)
    vmknic_ops: list[Op] = field(default_factory=list)
    service_ops: list[Op] = field(default_factory=list)
    vswitch_late: list[Op] = field(default_factory=list)
    removals: list[Op] = field(default_factory=list)  # state absent: adapter, port group, vSwitch
    before: dict[str, Any] = field(default_factory=dict)
    after: dict[str, Any] = field(default_factory=dict)
    device: str | None = None
    #: The managed adapter once planned: (label, final MTU, final port group, MTU/port group touched).
    vmk_final: tuple[str, int | None, str | None, bool] | None = None

    def guard(self, what: str, why: str, *, uncertain: bool = False) -> None:
        if self.desired.allow_management_changes:
            return
        if uncertain:
            self.reasons.append(
                f"{what} might be part of the host's management network ({why}); refusing to change it. "
                f"{uncertain_fix(self.scope.error)}"
            )
            return
        self.reasons.append(
            f"{what} is part of the host's management network ({why}); refusing to change it. {OVERRIDE_FIX}"
        )

    def guard_object(self, kind: str, name: str, label: str) -> None:
        """Guard ``name`` of ``kind`` (vmknic, portgroup, vswitch, pnic) if it is in scope."""
        if (kind, name) in self.scope.why:
            self.guard(label, self.scope.reason(kind, name), uncertain=self.scope.is_uncertain(kind, name))

    def ops(self) -> tuple[Op, ...]:
        if self.desired.state == "absent":
            return tuple(self.removals)
        return (*self.vswitch_early, *self.portgroup_ops, *self.vmknic_ops, *self.service_ops, *self.vswitch_late)

    # -- helpers -----------------------------------------------------------------------------

    def check_uplinks(self, vswitch: str, uplinks: Iterable[str]) -> None:
        known = {p.device for p in self.state.pnics}
        for pnic in uplinks:
            if known and pnic not in known:
                self.reasons.append(
                    f"vSwitch {vswitch}: there is no physical NIC {pnic} on this host "
                    f"(it has {', '.join(sorted(known))})"
                )
                continue
            other = self.state.other_switch_of_uplink(pnic)
            if other is not None:
                carries = ""
                if other.name in self.scope.other_switches:
                    verb = "might carry" if self.scope.is_uncertain("switch", other.name) else "carries"
                    carries = (
                        f", which {verb} the host's management network ({self.scope.reason('switch', other.name)})"
                    )
                self.reasons.append(
                    f"vSwitch {vswitch}: physical NIC {pnic} is an uplink of {other.label}{carries}. This module "
                    f"never takes an uplink from a distributed or NSX switch (allow_management_changes does not "
                    f"change that): pick another NIC, or release {pnic} from {other.name} in vCenter / NSX first"
                )
                continue
            owner = self.state.vswitch_of_uplink(pnic)
            if owner is None or owner.name == vswitch:
                continue
            if pnic in self.scope.uplinks and not self.desired.allow_management_changes:
                self.guard_object("pnic", pnic, f"Physical NIC {pnic}")
            else:
                extra = " with allow_management_changes: true" if pnic in self.scope.uplinks else ""
                self.reasons.append(
                    f"vSwitch {vswitch}: physical NIC {pnic} is an uplink of vSwitch {owner.name}; "
                    f"remove it there first (list that vSwitch's other uplinks in its own task{extra})"
                )

    def check_stack(self, stack: str | None, device: str) -> bool:
        """A stack an adapter is to be put on must exist on the host (built-in or custom)."""
        if stack is None or stack in BUILTIN_STACKS or stack in (self.state.netstacks or ()):
            return True
        have = (
            f"this host has {', '.join(self.state.netstacks)}"
            if self.state.netstacks
            else "the host lists no stacks, so only the built-in ones are accepted"
        )
        self.reasons.append(
            f"{device}: vmknic.tcpip_stack {stack!r} is not a TCP/IP stack of this host ({have}). Give one of "
            f"{STACK_CHOICES}, or create the custom stack first (esxcli network ip netstack add -N {stack})"
        )
        return False

    def final_vswitch_mtu(self, name: str) -> int | None:
        spec = self.desired.vswitch
        if spec is not None and spec.name == name and spec.mtu is not None:
            return spec.mtu
        current = self.state.vswitch(name)
        return current.mtu if current else None

    def find_vmknic(self, spec: VmknicSpec, pg_spec: PortGroupSpec | None) -> tuple[bool, VmknicState | None]:
        """Return (ok, adapter); ok False when the request cannot name an adapter."""
        if spec.device:
            current = self.state.vmknic(spec.device)
            if current is None and self.desired.state == "present":
                self.reasons.append(
                    f"VMkernel adapter {spec.device} does not exist. The vSphere API picks the device name when it "
                    f"creates an adapter: leave vmknic.device out to create one on portgroup.name (it is then found "
                    f"by its port group)"
                )
                return False, None
            return True, current
        if pg_spec is None:
            self.reasons.append("vmknic needs vmknic.device or portgroup.name (the port group the adapter is on)")
            return False, None
        on_pg = self.state.vmknics_on(pg_spec.name)
        if len(on_pg) > 1:
            self.reasons.append(
                f"port group {pg_spec.name} has several VMkernel adapters ({', '.join(v.device for v in on_pg)}); "
                f"name one with vmknic.device"
            )
            return False, None
        return True, (on_pg[0] if on_pg else None)

    def ipv6_change(self, want: Ipv6Spec | None, current: Ipv6State | None, device: str) -> Ipv6Change | None:
        if want is None:
            return None
        have_all = {(a.address, a.prefix_length) for a in (current.addresses if current else ())}
        have_manual = {a.text for a in (current.manual if current else ())}
        add: tuple[str, ...] = ()
        remove: tuple[str, ...] = ()
        if want.addresses is not None:
            add = tuple(a for a in want.addresses if split_v6(a) not in have_all)
            remove = tuple(sorted(have_manual - set(want.addresses)))
        autoconf_change = want.autoconf is not None and (current is None or want.autoconf != current.autoconf)
        dhcp_change = want.dhcp is not None and (current is None or want.dhcp != current.dhcp)
        if not (add or remove or autoconf_change or dhcp_change):
            return None
        if (add or want.autoconf or want.dhcp) and self.state.ipv6_enabled is False:
            self.reasons.append(
                f"{device}: IPv6 is disabled on this host (networkInfo.ipV6Enabled is false); enable IPv6 on the host "
                f"(it takes a reboot) before configuring IPv6 addresses"
            )
        return Ipv6Change(
            add=add,
            remove=remove,
            autoconf=want.autoconf if want.autoconf is not None else (current.autoconf if current else None),
            dhcp=want.dhcp if want.dhcp is not None else (current.dhcp if current else None),
        )

    def plan_vmknic(self, spec: VmknicSpec, pg_spec: PortGroupSpec | None) -> None:
        ok, current = self.find_vmknic(spec, pg_spec)
        if not ok:
            return
        target_pg = pg_spec.name if pg_spec else None
        if current is None:
            self.plan_new_vmknic(spec, target_pg)
        else:
            self.device = current.device
            self.plan_existing_vmknic(spec, current, target_pg)

    def desired_services(self, spec: VmknicSpec, stack: str, device: str) -> None:
        if spec.services and stack != DEFAULT_STACK:
            self.reasons.append(
                f"{device}: services can be tagged only on the default TCP/IP stack, not on {stack} "
                f"(drop vmknic.services or use tcpip_stack: default)"
            )

    def plan_new_vmknic(self, spec: VmknicSpec, portgroup: str | None) -> None:
        if portgroup is None:  # find_vmknic made sure there is a port group or a device
            return
        self.guard_object("portgroup", portgroup, f"Port group {portgroup}")
        if spec.ip_address is not None:
            ipv4 = Ipv4Config(False, spec.ip_address, spec.netmask)
        elif spec.dhcp:
            ipv4 = Ipv4Config(True)
        else:
            self.reasons.append(
                f"creating a VMkernel adapter on port group {portgroup} needs an IPv4 configuration: "
                f"vmknic.ip_address with vmknic.netmask, or vmknic.dhcp: true"
            )
            return
        stack = spec.tcpip_stack or DEFAULT_STACK
        self.check_stack(spec.tcpip_stack, "the new adapter")
        ipv6 = self.ipv6_change(spec.ipv6, None, "the new adapter")
        self.desired_services(spec, stack, "the new adapter")
        self.vmknic_ops.append(AddVmknic(portgroup, ipv4, ipv6, spec.mtu, spec.tcpip_stack))
        for nic_type in spec.services or ():
            self.service_ops.append(SelectService(None, nic_type))
        self.vmk_final = ("the new adapter", spec.mtu, portgroup, True)
        self.before["vmknic"] = None
        self.after["vmknic"] = {
            "device": None,
            "portgroup": portgroup,
            "distributed": False,
            "mtu": spec.mtu,
            "tcpip_stack": stack,
            "ipv4": ipv4.as_dict(),
            "ipv6": ipv6_after(None, ipv6),
            "services": service_tags(spec.services or ()),
        }

    def vswitch_for(self, portgroup: str) -> str | None:
        current = self.state.portgroup(portgroup)
        if current is not None:
            return current.vswitch
        return self.desired.vswitch.name if self.desired.vswitch else None

    def plan_existing_vmknic(self, spec: VmknicSpec, current: VmknicState, target_pg: str | None) -> None:
        services = self.state.services_of(current.device)
        self.before["vmknic"] = {k: v for k, v in vmknic_view(current, services).items() if k != "mac"}
        device = current.device
        changes: list[str] = []

        # IPv4: static address, DHCP, or left as it is.
        ipv4 = Ipv4Config(current.dhcp, current.ip_address, current.netmask)
        if spec.ip_address is not None:
            want = Ipv4Config(False, spec.ip_address, spec.netmask)
            if current.dhcp or (current.ip_address, current.netmask) != (spec.ip_address, spec.netmask):
                changes.append(f"IPv4 {ipv4_text(ipv4)} -> {ipv4_text(want)}")
                ipv4 = want
        elif spec.dhcp and not current.dhcp:
            changes.append(f"IPv4 {ipv4_text(ipv4)} -> dhcp")
            ipv4 = Ipv4Config(True)

        mtu = current.mtu
        if spec.mtu is not None and spec.mtu != current.mtu:
            changes.append(f"MTU {current.mtu} -> {spec.mtu}")
            mtu = spec.mtu

        move: str | None = None
        if target_pg is not None and target_pg != current.portgroup:
            if current.distributed:
                self.reasons.append(
                    f"{device} is on a distributed or opaque switch; moving it to standard port group {target_pg} is "
                    f"not supported by this module"
                )
                return
            occupied = [v.device for v in self.state.vmknics_on(target_pg) if v.device != device]
            if occupied:
                self.reasons.append(
                    f"{device} cannot move to port group {target_pg}: {', '.join(occupied)} is already on it "
                    f"(a standard port group holds one VMkernel adapter)"
                )
                return
            changes.append(f"port group {current.portgroup} -> {target_pg}")
            move = target_pg
            for name in (current.portgroup, target_pg):
                if name is not None:
                    self.guard_object("portgroup", name, f"Port group {name}")

        ipv6 = self.ipv6_change(spec.ipv6, current.ipv6, device)
        if ipv6 is not None:
            changes.append("IPv6 " + ", ".join(ipv6_change_text(ipv6, current.ipv6)))

        want_stack = spec.tcpip_stack
        stack_change = want_stack is not None and want_stack != current.stack
        final_stack = want_stack if want_stack is not None else current.stack
        self.desired_services(spec, final_stack, device)

        select: list[str] = []
        deselect: list[str] = []
        if spec.services is not None:
            if services is None:
                self.reasons.append(
                    f"{device}: the service tags could not be read from the host (HostVirtualNicManager), so "
                    f"vmknic.services cannot be checked; leave it out"
                )
            else:
                select = sorted(set(spec.services) - services)
                deselect = sorted(services - set(spec.services))
                if select or deselect:
                    changes.append(f"services {service_tags(services)} -> {service_tags(spec.services)}")

        if changes or stack_change:
            if device in self.scope.vmknics:
                self.guard_object("vmknic", device, f"VMkernel adapter {device}")
            elif current.portgroup is not None and current.portgroup in self.scope.portgroups and move is None:
                pg_name = current.portgroup
                unsure = self.scope.is_uncertain("portgroup", pg_name)
                self.guard(
                    f"VMkernel adapter {device}",
                    f"on port group {pg_name}: {self.scope.reason('portgroup', pg_name)}"
                    if unsure
                    else f"on management port group {pg_name}",
                    uncertain=unsure,
                )

        final_pg = move or current.portgroup
        self.vmk_final = (device, mtu, final_pg, spec.mtu is not None or move is not None)

        if stack_change:
            if not self.check_stack(want_stack, device):
                return
            if not self.desired.recreate:
                self.reasons.append(
                    f"{device} is on TCP/IP stack {current.stack}, wanted {want_stack}: the stack of an existing "
                    f"VMkernel adapter cannot be changed in place. Set recreate: true to remove and re-create it "
                    f"(its connections drop, and the device name may change)"
                )
                return
            if final_pg is None:
                self.reasons.append(f"{device} is not on a standard port group; re-creating it is not supported")
                return
            self.plan_recreate(current, final_pg, ipv4, mtu, spec, final_stack, services)
            return

        if ipv4 != Ipv4Config(current.dhcp, current.ip_address, current.netmask) or mtu != current.mtu or move or ipv6:
            self.vmknic_ops.append(
                UpdateVmknic(
                    device,
                    ipv4,
                    mtu,
                    move,
                    ipv6,
                    tuple(c for c in changes if not c.startswith("services")),
                )
            )
        self.service_ops.extend(SelectService(device, t) for t in select)
        self.service_ops.extend(DeselectService(device, t) for t in deselect)
        self.after["vmknic"] = {
            **self.before["vmknic"],
            "portgroup": final_pg,
            "mtu": mtu,
            "ipv4": ipv4.as_dict(),
            "ipv6": ipv6_after(current.ipv6, ipv6),
            "services": service_tags(spec.services) if spec.services is not None else service_tags(services),
        }

    def plan_recreate(
        self,
        current: VmknicState,
        portgroup: str,
        ipv4: Ipv4Config,
        mtu: int | None,
        spec: VmknicSpec,
        stack: str,
        services: frozenset[str] | None,
    ) -> None:
        device = current.device
        if ipv4.dhcp is False and ipv4.address is None:
            self.reasons.append(f"{device} has no IPv4 address to carry over; give vmknic.ip_address and netmask")
            return
        # Carry every IPv6 address the user manages (desired list, else the current manual ones).
        manual = [a.text for a in (current.ipv6.manual if current.ipv6 else ())]
        want6 = spec.ipv6 or Ipv6Spec()
        adds = tuple(want6.addresses if want6.addresses is not None else manual)
        autoconf = want6.autoconf if want6.autoconf is not None else (current.ipv6.autoconf if current.ipv6 else None)
        dhcp6 = want6.dhcp if want6.dhcp is not None else (current.ipv6.dhcp if current.ipv6 else None)
        ipv6 = Ipv6Change(add=adds, autoconf=autoconf, dhcp=dhcp6) if (adds or autoconf or dhcp6) else None
        keep = tuple(spec.services) if spec.services is not None else tuple(sorted(services or ()))
        if stack != DEFAULT_STACK and keep and spec.services is None:
            self.warnings.append(
                f"{device} had services {service_tags(keep)}; they are not re-applied on TCP/IP stack {stack}, "
                f"which cannot carry service tags"
            )
            keep = ()
        self.vmknic_ops.append(RemoveVmknic(device))
        self.vmknic_ops.append(AddVmknic(portgroup, ipv4, ipv6, mtu, stack))
        self.service_ops.extend(SelectService(None, t) for t in keep)
        self.warnings.append(
            f"{device} is re-created on TCP/IP stack {stack}; the vSphere API picks the new device name, which is "
            f"returned in vmknic.device"
        )
        self.after["vmknic"] = {
            **self.before["vmknic"],
            "device": None,
            "portgroup": portgroup,
            "mtu": mtu,
            "tcpip_stack": stack,
            "ipv4": ipv4.as_dict(),
            "ipv6": ipv6_after(None, ipv6),
            "services": service_tags(keep),
        }
