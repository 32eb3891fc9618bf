# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter ``esxilab.iperf.uplink_speed``: the line rate of a vSwitch - its lowest active uplink."""

from __future__ import annotations

DOCUMENTATION = r"""
name: uplink_speed
short_description: The link speed of a vSwitch - the lowest speed among its uplinks whose link is up
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Used by the role C(esxilab.iperf.esxi_network) to publish each test network's line rate
    (C(esxi_network_uplinks), C(esxi_network_link_speeds)), which the role C(esxilab.iperf.paired_test) uses for
    C(% of line rate) when the inventory gives none.
  - 'The rule: the lowest speed among the vSwitch''s uplinks whose link is up. A teamed vSwitch sends one flow over
    one uplink, so the slowest active uplink bounds what a test can count on; uplinks that are down are named, not
    counted. No active uplink - C(speed_mbps=null) with the reason.'
options:
  _input:
    description: The host's physical NICs as M(esxilab.iperf.esxi_vmknic) returns them (C(physical_nics)).
    type: list
    elements: dict
    required: true
  vswitch:
    description: The standard vSwitch of the test network.
    type: str
    required: true
  how:
    description: Where the NICs came from, named in C(source).
    type: str
    default: esxi_vmknic
  uplinks:
    description:
      - The names of the vSwitch's uplinks (M(esxilab.iperf.esxi_vmknic)'s C(vswitch.uplinks)). Unset - the NICs whose
        C(vswitch) is O(vswitch).
    type: list
    elements: str
"""

EXAMPLES = r"""
---
- name: Show the line rate of the test network
  ansible.builtin.debug:
    msg: "{{ (net.physical_nics | esxilab.iperf.uplink_speed(net.vswitch.name)).source }}"
"""

RETURN = r"""
_value:
  description:
    - 'C(speed_mbps) (or C(null)), C(source) (the rule and the uplinks, for example
      V(esxi_vmknic: the lowest active uplink of vSwitch-56G (vmnic4 56000 Mb/s; down: vmnic5))), C(reason) (why
      there is no speed) and C(uplinks) (C(name), C(link_up), C(speed_mbps) of each).'
  type: dict
"""

# Ansible's layout puts DOCUMENTATION, EXAMPLES and RETURN above the imports.
# ruff: noqa: E402

from collections.abc import Callable
from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.plugin_utils.nic.speed import uplink_speed as _uplink_speed


def uplink_speed(nics: Any, vswitch: Any, how: str = "esxi_vmknic", uplinks: Any = None) -> dict[str, Any]:
    """The line rate of ``vswitch`` (see the DOCUMENTATION above)."""
    if not isinstance(nics, list):
        raise AnsibleFilterError(f"esxilab.iperf.uplink_speed: expected the physical_nics list, got {nics!r:.200}")
    if not isinstance(vswitch, str) or not vswitch:
        raise AnsibleFilterError(f"esxilab.iperf.uplink_speed: vswitch must be a vSwitch name, got {vswitch!r}")
    if uplinks is not None and (not isinstance(uplinks, list) or not all(isinstance(u, str) for u in uplinks)):
        raise AnsibleFilterError(f"esxilab.iperf.uplink_speed: uplinks must be a list of NIC names, got {uplinks!r}")
    return _uplink_speed(nics, vswitch, str(how), uplinks)


class FilterModule:
    """The uplink_speed filter."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"uplink_speed": uplink_speed}
