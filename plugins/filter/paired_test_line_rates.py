# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter ``esxilab.iperf.paired_test_line_rates``: the plan with each run's line rate read from the hosts."""

from __future__ import annotations

DOCUMENTATION = r"""
name: paired_test_line_rates
short_description: Give every run of a paired_test plan its line rate, from the hosts' link speeds
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Used by the role C(esxilab.iperf.paired_test) after its preflight read the link speeds of the hosts' test
    addresses (M(esxilab.iperf.iperf_facts) option C(link_speed_of)).
  - Adds C(line_rate_bps) and C(line_rate_source) to the labels of every run and pair, so the report shows
    C(% of line rate) without a line rate in the inventory.
  - 'Which line rate: a value given wins and is only named in C(line_rate_source) - the test''s C(line_rate_bps) or
    C(link_speed_mbps) label (the inventory), then O(report_line_rate_bps). Else the lowest link speed over every
    end (server and client address) of the run''s pairs - the slowest NIC the run crosses. An end without a speed
    (V(-1), a link that is down, a host without C(/sys)) leaves the line rate unset and C(line_rate_source) says
    why, starting with V(unknown:).'
  - An ESXi host's ends take the speed O(published) gives (the role C(esxilab.iperf.esxi_network) publishes
    C(esxi_network_link_speeds) - the lowest active uplink of the vmknic's vSwitch).
options:
  _input:
    description: The plan (P(esxilab.iperf.paired_test_plan#filter)).
    type: dict
    required: true
  speeds:
    description: 'Per host, its C(iperf_link_speeds) fact - C({address: {interface, speed_mbps, source, reason}}).'
    type: dict
    required: true
  published:
    description: Per host, link speeds published by other roles (C(esxi_network_link_speeds)), same form.
    type: dict
    default: {}
  report_line_rate_bps:
    description: The report's line rate in bit/s when the caller set one (then the hosts' speeds are not used).
    type: float
"""

EXAMPLES = r"""
---
- name: Give the runs their line rate
  ansible.builtin.set_fact:
    paired_test_plan: >-
      {{ paired_test_plan | esxilab.iperf.paired_test_line_rates(speeds=dict(hosts | zip(found))) }}
  vars:
    hosts: "{{ paired_test_plan.hosts }}"
    found: "{{ hosts | map('extract', hostvars) | map(attribute='iperf_link_speeds', default={}) }}"
"""

RETURN = r"""
_value:
  description: The plan, each run's and pair's C(labels) with C(line_rate_source) and, when known, C(line_rate_bps).
  type: dict
"""

# Ansible's layout puts DOCUMENTATION, EXAMPLES and RETURN above the imports.
# ruff: noqa: E402

from collections.abc import Callable, Mapping
from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.line_rate import with_line_rates

_NAME = "esxilab.iperf.paired_test_line_rates"


def paired_test_line_rates(
    plan: Any, speeds: Any, published: Any = None, report_line_rate_bps: Any = None
) -> dict[str, Any]:
    """The plan with line rates (see the DOCUMENTATION above)."""
    if not isinstance(plan, Mapping) or not isinstance(plan.get("runs"), list):
        raise AnsibleFilterError(f"{_NAME}: expected a plan of esxilab.iperf.paired_test_plan, got {plan!r:.200}")
    for name, value in (("speeds", speeds), ("published", published or {})):
        if not isinstance(value, Mapping):
            raise AnsibleFilterError(f"{_NAME}: {name} must map host names to their link speeds, got {value!r:.200}")
    try:
        return with_line_rates(plan, speeds, published=published or {}, report_line_rate_bps=report_line_rate_bps)
    except (KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"{_NAME}: {exc}") from exc


class FilterModule:
    """The paired_test_line_rates filter."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"paired_test_line_rates": paired_test_line_rates}
