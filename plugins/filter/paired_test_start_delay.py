# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter ``esxilab.iperf.paired_test_start_delay``: a run's start delay, from the dispatch times measured so far."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.start_delay import auto_start_delay

DOCUMENTATION = r"""
name: paired_test_start_delay
short_description: The start delay of a paired iperf run, from how long earlier runs took to reach the barrier
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Used by the role C(esxilab.iperf.paired_test) before each run with a barrier.
  - With the automatic delay (the test sets no C(start_delay)) - the largest C(dispatch_time) (seconds from setting the
    common start time to the last client's arrival at the barrier) of the last three earlier runs with as many
    clients, times 1.5, plus 0.1 s; it shrinks as well as grows. Without such a run - the plan's delay (1 s + 0.4 s
    per client).
  - With a C(start_delay) set by the test - that delay.
options:
  _input:
    description: One run of the plan (an item of RV(esxilab.iperf.paired_test_plan#filter:_value.runs)).
    type: dict
    required: true
  records:
    description: The run records so far (C(paired_test_results) of the series).
    type: list
    elements: dict
    required: true
  probe_dispatch:
    description:
      - Seconds it took to hand a first command to every host of the run (the role - its start, from the beginning
        to the last host ready). For the first run with a number of clients - 0.6 x that + 0.1 s, at least 0.15 s
        and at most the plan's delay - so a one-run play does not wait the planned 1 s + 0.4 s per client. Unset - the
        plan's delay.
    type: float
seealso:
  - plugin: esxilab.iperf.paired_test_record
    plugin_type: filter
    description: The records and their C(dispatch_time).
"""

EXAMPLES = r"""
---
- name: Set the common start time of the clients
  ansible.builtin.set_fact:
    start_at: "{{ now().timestamp() + (run | esxilab.iperf.paired_test_start_delay(records=paired_test_results)) }}"
"""

RETURN = r"""
_value:
  description: Seconds between setting the common start time and that time.
  type: float
"""

_NAME = "esxilab.iperf.paired_test_start_delay"


def paired_test_start_delay(run: Any, records: Any, probe_dispatch: Any = None) -> float:
    """The start delay of ``run`` (see the DOCUMENTATION above)."""
    if not isinstance(run, Mapping) or "start_delay" not in run:
        raise AnsibleFilterError(f"{_NAME}: the input must be a run of esxilab.iperf.paired_test_plan, got {run!r:.80}")
    if isinstance(records, str | bytes | Mapping) or not hasattr(records, "__iter__"):
        raise AnsibleFilterError(f"{_NAME}: records must be a list of run records, got {type(records).__name__}")
    return auto_start_delay(run, list(records), probe_dispatch)


class FilterModule:
    """The paired_test_start_delay filter."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"paired_test_start_delay": paired_test_start_delay}
