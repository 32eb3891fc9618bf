# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter ``esxilab.iperf.guest_vnic_requests``: the guests' requested vNIC wiring, checked."""

from __future__ import annotations

DOCUMENTATION = r"""
name: guest_vnic_requests
short_description: Check the guests' requested vNIC wiring before anything is read or changed
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Used by the preflight of the role C(esxilab.iperf.esxi_guests). Fails naming the option and the fix when a guest has
    no C(vm), a C(vm) given twice, a C(type) other than V(e1000), V(e1000e) or V(vmxnet3), no port group (neither its
    own nor O(portgroup)), an unknown key, or when its port group is the management port group and
    O(allow_management) is not set.
options:
  _input:
    description: The guests, as the role's C(esxi_guests_guests) (C(vm), C(type), C(portgroup), C(name)).
    type: list
    elements: dict
    required: true
  portgroup:
    description: The port group of guests that give none.
    type: str
  management_portgroup:
    description: The name of the management port group (compared without regard to case).
    type: str
    default: Management Network
  allow_management:
    description: Allow a guest's test vNIC on the management port group.
    type: bool
    default: false
"""

EXAMPLES = r"""
---
- name: Check the guests' wiring
  ansible.builtin.set_fact:
    __requests: >-
      {{ [{'vm': 'fwd-vm1', 'type': 'vmxnet3'}] | esxilab.iperf.guest_vnic_requests(portgroup='iperf-isolated') }}
"""

RETURN = r"""
_value:
  description: One item per guest, in order - C(name) (C(vm) when not given), C(vm), C(type) (lower case), C(portgroup).
  type: list
  elements: dict
"""

# Ansible's layout puts DOCUMENTATION, EXAMPLES and RETURN above the imports.
# ruff: noqa: E402

from collections.abc import Callable
from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.guests import GuestsError, check_guests


def guest_vnic_requests(
    guests: Any, portgroup: Any = None, management_portgroup: Any = "Management Network", allow_management: Any = False
) -> list[dict[str, str]]:
    """The checked requests (see the DOCUMENTATION above)."""
    try:
        return check_guests(
            guests,
            portgroup if isinstance(portgroup, str) else None,
            str(management_portgroup or "Management Network"),
            allow_management is True,
        )
    except GuestsError as error:
        raise AnsibleFilterError(str(error)) from None


class FilterModule:
    """The guest_vnic_requests filter."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"guest_vnic_requests": guest_vnic_requests}
