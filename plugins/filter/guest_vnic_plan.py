# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter ``esxilab.iperf.guest_vnic_plan``: per guest, what makes its vNIC wiring as requested."""

from __future__ import annotations

DOCUMENTATION = r"""
name: guest_vnic_plan
short_description: Plan the guests' vNIC wiring - unchanged, add, replace or refuse, with the reasons
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Used by the role C(esxilab.iperf.esxi_guests), which applies the plan with
    C(community.vmware.vmware_guest_network).
  - 'Per guest: V(unchanged) when a vNIC of the requested type is on its port group; V(add) when no vNIC is on it;
    V(replace) when vNICs of another type are on it and O(replace_mismatched) is set (they are removed, and a vNIC of
    the type is added unless one is there already - the vSphere API cannot change a vNIC''s type, so the new vNIC has
    a new MAC address); V(refuse) with the reason otherwise (the VM or the port group does not exist, or a type
    mismatch without O(replace_mismatched)).'
  - vNICs on other port groups are never in a plan.
options:
  _input:
    description: The checked requests (P(esxilab.iperf.guest_vnic_requests#filter)).
    type: list
    elements: dict
    required: true
  nics:
    description:
      - Each VM's vNICs as C(community.vmware.vmware_guest_network) returns them with C(gather_network_info=true)
        (C(network_info)), by VM name; C(null) (or left out) for a VM that was not found.
    type: dict
    required: true
  portgroups:
    description: The names of the host's port groups.
    type: list
    elements: str
    required: true
  replace_mismatched:
    description: Replace vNICs of another type on the port group (remove, add) instead of refusing.
    type: bool
    default: false
"""

EXAMPLES = r"""
---
- name: Plan the wiring of one guest
  ansible.builtin.set_fact:
    __plan: >-
      {{ [{'name': 'fwd-vm1', 'vm': 'fwd-vm1', 'type': 'vmxnet3', 'portgroup': 'iperf-isolated'}]
         | esxilab.iperf.guest_vnic_plan(nics={'fwd-vm1': []}, portgroups=['iperf-isolated']) }}
"""

RETURN = r"""
_value:
  description:
    - C(guests) - per guest C(name), C(vm), C(type), C(portgroup), C(action) (V(unchanged), V(add), V(replace),
      V(refuse)), C(reason), C(add) (C(type), C(portgroup), or C(null)), C(remove) (MAC addresses), C(before) and
      C(after) (the vNICs on the port group - C(mac_address), C(type), C(portgroup), C(label), C(connected); a vNIC
      still to be added has C(mac_address=null)).
    - C(refused) - the reasons of the refused guests; C(changes) - how many guests change.
  type: dict
"""

# Ansible's layout puts DOCUMENTATION, EXAMPLES and RETURN above the imports.
# ruff: noqa: E402

from collections.abc import Callable, Mapping
from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.guests import GuestsError, check_guests, plan_guests


def guest_vnic_plan(requests: Any, nics: Any, portgroups: Any, replace_mismatched: Any = False) -> dict[str, Any]:
    """The plan (see the DOCUMENTATION above)."""
    if not isinstance(nics, Mapping) or not all(v is None or isinstance(v, list) for v in nics.values()):
        raise AnsibleFilterError(
            f"esxilab.iperf.guest_vnic_plan: nics must map VM names to vNIC lists, got {nics!r:.200}"
        )
    if not isinstance(portgroups, list) or not all(isinstance(p, str) for p in portgroups):
        raise AnsibleFilterError(
            f"esxilab.iperf.guest_vnic_plan: portgroups must be a list of names, got {portgroups!r:.200}"
        )
    try:
        # the requests are checked again: the plan never works on unchecked input
        checked = check_guests(requests, allow_management=True)
    except GuestsError as error:
        raise AnsibleFilterError(str(error)) from None
    return plan_guests(checked, dict(nics), list(portgroups), replace_mismatched is True)


class FilterModule:
    """The guest_vnic_plan filter."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"guest_vnic_plan": guest_vnic_plan}
