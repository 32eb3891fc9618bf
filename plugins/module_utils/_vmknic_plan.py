# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plan changes to an ESXi host's standard-switch VMkernel networking: pure, typed logic.

Three steps, none of which talks to a host, one file each:

1. ``_vmknic_state`` -- :func:`read_network_state` reads the host's current state;
2. ``_vmknic_params`` -- :func:`desired_from_params` validates the requested state;
3. this file -- :func:`make_plan` compares both and returns a ``Plan`` (``_vmknic_ops``): an
   ordered tuple of operations plus a before/after view for diff mode (``_vmknic_views``), or
   raises ``PlanError`` with every reason the request is refused. The management guard is
   ``_vmknic_guard``; the adapter's own planning is ``_vmknic_plan_vmk``; this file plans the
   vSwitch and the port group, and ``state: absent``. ``_vmknic_apply`` carries a plan out.

Rules the plan keeps (they are what the module documents):

* An option left out (``None``) is left as it is on the host: uplinks, VLAN, MTU, IP, services.
* MTU changes are ordered so no frame is ever bigger than the path: the vSwitch MTU is raised
  before a VMkernel adapter's, and lowered after it.
* A change to an existing VMkernel adapter is either planned (``UpdateVirtualNic``, a move to
  another port group of a standard switch included) or refused with a reason, never ignored.
* The TCP/IP stack of an adapter cannot change in place: it needs ``recreate`` (remove + add).
* The management network (``vmk0``, any adapter tagged ``management``, the port groups they
  are on or one named ``Management Network``, the vSwitches carrying those and their uplinks,
  the uplinks of a distributed switch carrying one of those adapters) is only changed with
  ``allow_management_changes``. When the service tags cannot be read, every adapter on the
  default TCP/IP stack might carry management and is guarded the same way, with the reason.
* Security and teaming policy (``_vmknic_policy``) set only the fields given: on the vSwitch its
  policy, on a port group its overrides (a field left out stays inherited). A partial failover
  order is completed from the current one; an order naming a NIC the vSwitch will not bridge,
  a NIC both active and standby, or no active NIC is refused. The management vSwitch's and port
  group's policy is guarded like the rest of the management network.
* A physical NIC that is an uplink of a distributed (or NSX) switch is never taken for a
  standard vSwitch: this module does not manage those switches.
* ``state: absent`` removes what is named: adapter first, then port group, then vSwitch.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_guard import management_scope
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_ops import (
    AddPortGroup,
    AddVSwitch,
    Plan,
    RemovePortGroup,
    RemoveVmknic,
    RemoveVSwitch,
    SetPortGroupPolicy,
    SetVSwitchPolicy,
    UpdatePortGroup,
    UpdateVSwitch,
)
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_params import (
    DesiredState,
    PortGroupSpec,
    VSwitchSpec,
)
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_plan_vmk import VmknicPlanner
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_policy import (
    Policy,
    default_vswitch_policy,
    merged,
    policy_change,
    policy_view,
    unknown_nics,
)
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_state import (
    HostNetworkState,
    PlanError,
    PortGroupState,
)
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_views import (
    portgroup_view,
    vmknic_view,
    vswitch_view,
)


@dataclass
class _Planner(VmknicPlanner):
    """The whole plan: vSwitch and port group here, the adapter in :class:`VmknicPlanner`."""

    #: vSwitch name -> (its uplinks, its policy) once this plan has run (for port-group overrides).
    vswitch_final: dict[str, tuple[tuple[str, ...], Policy]] = field(default_factory=dict)

    # -- present -----------------------------------------------------------------------------

    def plan_present(self) -> None:
        vs_spec, pg_spec, vmk_spec = self.desired.vswitch, self.desired.portgroup, self.desired.vmknic
        cur_pg = self.state.portgroup(pg_spec.name) if pg_spec else None
        vs_name = vs_spec.name if vs_spec else (cur_pg.vswitch if cur_pg else None)
        if pg_spec and cur_pg and vs_spec and cur_pg.vswitch != vs_spec.name:
            self.reasons.append(
                f"port group {pg_spec.name} exists on vSwitch {cur_pg.vswitch}, not on {vs_spec.name}; moving a port "
                f"group between vSwitches is not supported: remove it (state: absent) and create it again"
            )
            return
        if pg_spec and cur_pg is None and vs_spec is None:
            self.reasons.append(f"port group {pg_spec.name} does not exist; give vswitch.name to create it")
            return
        if vs_spec is not None:
            self.plan_vswitch(vs_spec)
        if pg_spec is not None and vs_name is not None:
            self.plan_portgroup(pg_spec, cur_pg, vs_name)
        if vmk_spec is not None:
            self.plan_vmknic(vmk_spec, pg_spec)
        self.mtu_warnings()

    def mtu_warnings(self) -> None:
        """Warn where an adapter's MTU ends up above its vSwitch's (frames would be dropped)."""
        mtu_changed = {
            op.name for op in (*self.vswitch_early, *self.vswitch_late) if isinstance(op, UpdateVSwitch) and op.mtu
        }
        entries = [
            (v.device, v.mtu, v.portgroup, False)
            for v in self.state.vmknics
            if self.vmk_final is None or v.device != self.device
        ]
        if self.vmk_final is not None:
            entries.append(self.vmk_final)
        for label, mtu, portgroup, touched in entries:
            vswitch = self.vswitch_for(portgroup) if portgroup else None
            if vswitch is None or mtu is None or not (touched or vswitch in mtu_changed):
                continue
            vs_mtu = self.final_vswitch_mtu(vswitch)
            if vs_mtu is not None and mtu > vs_mtu:
                self.warnings.append(
                    f"{label} MTU {mtu} is above the MTU {vs_mtu} of vSwitch {vswitch}: frames above {vs_mtu} "
                    f"bytes will be dropped (raise vswitch.mtu or lower vmknic.mtu)"
                )

    def plan_vswitch(self, spec: VSwitchSpec) -> None:
        current = self.state.vswitch(spec.name)
        pg_names = [p.name for p in self.state.portgroups_on(spec.name)]
        pg_spec = self.desired.portgroup
        if pg_spec is not None and self.state.portgroup(pg_spec.name) is None:
            pg_names.append(pg_spec.name)
        if current is None:
            uplinks = spec.uplinks or ()
            self.check_uplinks(spec.name, uplinks)
            self.vswitch_early.append(AddVSwitch(spec.name, spec.mtu, uplinks))
            self.before["vswitch"] = None
            self.after["vswitch"] = {
                "name": spec.name,
                "mtu": spec.mtu,
                "uplinks": list(uplinks),
                "portgroups": sorted(pg_names),
            }
            self.plan_vswitch_policy(spec, uplinks, default_vswitch_policy(uplinks))
            return
        has_policy = spec.policy is not None
        self.before["vswitch"] = vswitch_view(
            current, (p.name for p in self.state.portgroups_on(spec.name)), policy=has_policy
        )
        mtu_change = spec.mtu is not None and spec.mtu != current.mtu
        uplinks_change = spec.uplinks is not None and set(spec.uplinks) != set(current.uplinks)
        if mtu_change or uplinks_change:
            self.guard_object("vswitch", spec.name, f"vSwitch {spec.name}")
        if uplinks_change and spec.uplinks is not None:
            self.check_uplinks(spec.name, spec.uplinks)
        mtu_up = mtu_change and (current.mtu is None or (spec.mtu or 0) > current.mtu)
        if mtu_up or uplinks_change:
            self.vswitch_early.append(
                UpdateVSwitch(spec.name, spec.mtu if mtu_up else None, spec.uplinks if uplinks_change else None)
            )
        if mtu_change and not mtu_up:
            self.vswitch_late.append(UpdateVSwitch(spec.name, mtu=spec.mtu))
        self.after["vswitch"] = {
            "name": spec.name,
            "mtu": spec.mtu if spec.mtu is not None else current.mtu,
            "uplinks": list(spec.uplinks if uplinks_change and spec.uplinks is not None else current.uplinks),
            "portgroups": sorted(pg_names),
        }
        self.plan_vswitch_policy(spec, tuple(self.after["vswitch"]["uplinks"]), current.policy)

    def plan_vswitch_policy(self, spec: VSwitchSpec, uplinks: tuple[str, ...], current: Policy) -> None:
        """Security and teaming of a vSwitch (``uplinks``: the ones it will have)."""
        change = None
        if spec.policy is not None:
            self.reasons.extend(unknown_nics("vswitch", spec.policy, spec.name, uplinks))
            change = policy_change(current, spec.policy, current)
            self.check_active("vswitch", spec.name, change, uplinks)
            if change is not None:
                self.guard_object("vswitch", spec.name, f"The policy of vSwitch {spec.name}")
                self.vswitch_early.append(SetVSwitchPolicy(spec.name, change))
            self.after["vswitch"]["policy"] = policy_view(merged(current, change))
        self.vswitch_final[spec.name] = (uplinks, merged(current, change))

    def check_active(self, where: str, vswitch: str, change: Policy | None, uplinks: tuple[str, ...]) -> None:
        if change is not None and change.has_order and not change.active_uplinks and uplinks:
            self.reasons.append(
                f"{where}.teaming would leave vSwitch {vswitch} no active uplink; give {where}.teaming.active_uplinks"
            )

    def plan_portgroup_policy(self, spec: PortGroupSpec, vswitch: str, current: Policy) -> None:
        """A port group's overrides: only the fields given are set; the rest stays inherited."""
        if spec.policy is None:
            return
        if vswitch in self.vswitch_final:
            uplinks, vs_policy = self.vswitch_final[vswitch]
        else:
            vs = self.state.vswitch(vswitch)
            uplinks, vs_policy = (vs.uplinks, vs.policy) if vs is not None else ((), Policy())
        self.reasons.extend(unknown_nics("portgroup", spec.policy, vswitch, uplinks))
        base = current if current.has_order else vs_policy
        change = policy_change(current, spec.policy, base)
        self.check_active("portgroup", vswitch, change, uplinks)
        if change is not None:
            self.guard_object("portgroup", spec.name, f"The policy of port group {spec.name}")
            self.portgroup_ops.append(SetPortGroupPolicy(spec.name, change))
        self.after["portgroup"]["policy"] = policy_view(merged(current, change))

    def plan_portgroup(self, spec: PortGroupSpec, current: PortGroupState | None, vswitch: str) -> None:
        if current is None:
            self.portgroup_ops.append(AddPortGroup(spec.name, vswitch, spec.vlan_id or 0))
            self.before["portgroup"] = None
            self.after["portgroup"] = {"name": spec.name, "vswitch": vswitch, "vlan_id": spec.vlan_id or 0}
            self.plan_portgroup_policy(spec, vswitch, Policy())
            return
        self.before["portgroup"] = portgroup_view(current, policy=spec.policy is not None)
        if spec.vlan_id is not None and spec.vlan_id != current.vlan_id:
            self.guard_object("portgroup", spec.name, f"Port group {spec.name}")
            self.portgroup_ops.append(UpdatePortGroup(spec.name, spec.vlan_id))
        self.after["portgroup"] = {
            "name": spec.name,
            "vswitch": current.vswitch,
            "vlan_id": spec.vlan_id if spec.vlan_id is not None else current.vlan_id,
        }
        self.plan_portgroup_policy(spec, current.vswitch, current.policy)

    # -- absent ------------------------------------------------------------------------------

    def plan_absent(self) -> None:
        vs_spec, pg_spec, vmk_spec = self.desired.vswitch, self.desired.portgroup, self.desired.vmknic
        removed_vmks: set[str] = set()
        if vmk_spec is not None:
            if vmk_spec.device:
                targets = [v] if (v := self.state.vmknic(vmk_spec.device)) is not None else []
            elif pg_spec is not None:
                targets = list(self.state.vmknics_on(pg_spec.name))
            else:
                self.reasons.append("vmknic needs vmknic.device or portgroup.name to say which adapter to remove")
                targets = []
            for vmk in targets:
                self.guard_object("vmknic", vmk.device, f"VMkernel adapter {vmk.device}")
                self.removals.append(RemoveVmknic(vmk.device))
                removed_vmks.add(vmk.device)
            first = targets[0] if targets else None
            self.device = first.device if first else None
            self.before["vmknic"] = (
                {k: v for k, v in vmknic_view(first, self.state.services_of(first.device)).items() if k != "mac"}
                if first
                else None
            )
            self.after["vmknic"] = None

        removed_pgs: set[str] = set()
        if pg_spec is not None:
            current_pg = self.state.portgroup(pg_spec.name)
            self.before["portgroup"] = portgroup_view(current_pg) if current_pg else None
            self.after["portgroup"] = None
            if current_pg is not None:
                self.guard_object("portgroup", current_pg.name, f"Port group {current_pg.name}")
                left = [v.device for v in self.state.vmknics_on(current_pg.name) if v.device not in removed_vmks]
                if left:
                    self.reasons.append(
                        f"port group {current_pg.name} still has VMkernel adapter(s) {', '.join(left)}; name the "
                        f"adapter in vmknic (vmknic.device) to remove it as well"
                    )
                if current_pg.vm_ports:
                    self.reasons.append(
                        f"port group {current_pg.name} is in use by {current_pg.vm_ports} virtual machine port(s); "
                        f"move those VMs to another network first"
                    )
                self.removals.append(RemovePortGroup(current_pg.name))
                removed_pgs.add(current_pg.name)

        if vs_spec is not None:
            current_vs = self.state.vswitch(vs_spec.name)
            self.before["vswitch"] = (
                vswitch_view(current_vs, (p.name for p in self.state.portgroups_on(current_vs.name)))
                if current_vs
                else None
            )
            self.after["vswitch"] = None
            if current_vs is not None:
                self.guard_object("vswitch", current_vs.name, f"vSwitch {current_vs.name}")
                others = [p.name for p in self.state.portgroups_on(current_vs.name) if p.name not in removed_pgs]
                if others:
                    self.reasons.append(
                        f"vSwitch {current_vs.name} still carries port group(s) {', '.join(others)}; it is removed "
                        f"only when empty (remove those port groups first, or leave vswitch out)"
                    )
                self.removals.append(RemoveVSwitch(current_vs.name))


def make_plan(state: HostNetworkState, desired: DesiredState) -> Plan:
    """Compute the ordered operations that take ``state`` to ``desired``.

    Raises :class:`PlanError` listing every refusal (management guard, immutable stack, objects
    still in use, ambiguous or missing objects). An empty ``ops`` means nothing to change.
    """
    planner = _Planner(state, desired, management_scope(state))
    if desired.state == "absent":
        planner.plan_absent()
    else:
        planner.plan_present()
    if planner.reasons:
        raise PlanError(list(dict.fromkeys(planner.reasons)))
    ops = planner.ops()
    after = planner.after if ops else dict(planner.before)
    return Plan(ops, planner.before, after, tuple(dict.fromkeys(planner.warnings)), planner.device)
