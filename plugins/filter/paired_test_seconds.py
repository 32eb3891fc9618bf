# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter ``esxilab.iperf.paired_test_seconds``: paired tests -> the seconds their runs are planned to take."""

from __future__ import annotations

DOCUMENTATION = r"""
name: paired_test_seconds
short_description: How long the runs of paired iperf tests are planned to take, in seconds
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Expands the tests as P(esxilab.iperf.paired_test_plan#filter) does and adds up, over every run, the test time
    (C(duration) plus C(omit)), the start delay of the clients and O(per_run) seconds for starting and stopping the
    servers.
  - Meant for the deadline of the ESXi dead-man timer (C(esxilab_planned_seconds), read by the roles
    C(esxilab.iperf.esxi_firewall) and C(esxilab.iperf.esxi_iperf), which add their own margin) - set it from the
    same test list the play hands to C(esxilab.iperf.paired_test), so the timer never fires inside a planned window
    and never waits much longer than the tests need.
  - Input of the wrong shape is an error, as for P(esxilab.iperf.paired_test_plan#filter).
options:
  _input:
    description:
      - The tests, as in the role variable C(paired_test_tests).
    type: list
    elements: dict
    required: true
  defaults:
    description:
      - Values of the settings a test does not set (keys without the C(paired_test_) prefix, for example C(duration)).
    type: dict
    default: {}
  per_run:
    description:
      - Seconds each run needs beyond its test time (SSH sessions, server start and stop, recording).
    type: int
    default: 15
seealso:
  - plugin: esxilab.iperf.paired_test_plan
    plugin_type: filter
    description: The runs themselves.
"""

EXAMPLES = r"""
---
- name: Open the firewall window for as long as the tests are planned to take (plus the role's margin)
  ansible.builtin.include_role:
    name: esxilab.iperf.esxi_firewall
    tasks_from: open
  vars:
    esxilab_planned_seconds: "{{ my_tests | esxilab.iperf.paired_test_seconds }}"
"""

RETURN = r"""
_value:
  description: The planned seconds of all runs, a whole number.
  type: int
"""

# Ansible's layout puts DOCUMENTATION, EXAMPLES and RETURN above the imports.
# ruff: noqa: E402
import math
from collections.abc import Callable, Mapping
from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.checks import PairedTestError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan, run_seconds

_NAME = "esxilab.iperf.paired_test_seconds"


def paired_test_seconds(tests: Any, defaults: Mapping[str, Any] | None = None, per_run: int = 15) -> int:
    """The planned seconds of the runs of ``tests`` (see the DOCUMENTATION above)."""
    if isinstance(per_run, bool) or not isinstance(per_run, int) or per_run < 0:
        raise AnsibleFilterError(f"{_NAME}: per_run must be a whole number of seconds, 0 or more, got {per_run!r}")
    try:
        plan = build_plan(tests, defaults)
    except PairedTestError as exc:
        raise AnsibleFilterError(f"{_NAME}: {exc}") from exc
    total = 0.0
    for run in plan["runs"]:
        total += math.ceil(run_seconds(run)) + per_run
    return math.ceil(total)


class FilterModule:
    """The paired_test_seconds filter."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"paired_test_seconds": paired_test_seconds}
