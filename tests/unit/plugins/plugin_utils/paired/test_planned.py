# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""paired.planned: a run of the plan is checked once where it crosses Ansible, against its own type."""

from __future__ import annotations

import typing
from typing import Any

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.esxilab.iperf.plugins.filter.paired_test_record import paired_test_record
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.planned import (
    PlannedRun,
    PlannedRunError,
    planned_run,
    run_problems,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.settings import SETTINGS

PAIRS = [
    {"server": "h1", "address": "198.18.0.1", "client": "h2", "client_address": "198.18.0.2"},
    {"server": "h3", "address": "198.18.0.3", "client": "h4", "client_address": "198.18.0.4"},
]


@pytest.mark.parametrize(
    "test",
    [
        {},
        {"streams": [1, 4], "direction": "both", "swap_roles": True, "repeat": 2},
        {"protocol": "udp", "bandwidth": "50M", "length": "1400", "window": "256K", "interval": 0.5, "omit": 1},
        {"tool": "iperf2", "server_extra_args": ["-e"], "client_extra_args": ["-e"], "client_timeout": 30.5},
        {"repeat": {"min": 3, "max": 6, "until_cv": 5}, "latency": True, "mss": 1400, "tos": 16, "zerocopy": True},
        {"pairs": [{"server": "h1", "address": "198.18.0.1", "external": {"count": 1, "deadline": 300}}]},
    ],
)
def test_every_run_the_plan_makes_is_a_planned_run(test: dict[str, Any]) -> None:
    plan = build_plan([{"name": "t", "pairs": PAIRS, **test}])
    assert not plan["problem_count"], plan["problems"]
    for run in plan["runs"]:
        assert run_problems(run) == []
        assert planned_run(run) is run  # checked, not copied


def test_the_settings_that_feed_iperf_run_are_keys_of_the_run() -> None:
    """The run lists them by name (plan._make_run): the declaration in paired.settings and the type stay in step."""
    fed = {name for name, setting in SETTINGS.items() if setting.server or setting.client}
    assert fed <= set(typing.get_type_hints(PlannedRun))


def test_a_value_that_is_not_a_run_is_refused_with_every_problem_named() -> None:
    run = build_plan([{"name": "t", "pairs": PAIRS}])["runs"][0]
    broken = {**run, "port_base": 5201, "duration": "10", "pairs": [{**run["pairs"][0], "port": True}, "x"]}
    del broken["barrier"]
    assert run_problems(broken) == [
        "run has no barrier",
        "run has an unknown key 'port_base'",
        "run.duration: '10' is not int",
        "run.pairs[0].port: True is not int",
        "run.pairs[1] is not a mapping",
    ]
    with pytest.raises(PlannedRunError, match=r"^not a run of the plan \(5 problem\(s\)\): run has no barrier; "):
        planned_run(broken)
    assert run_problems([run]) == ["run is not a mapping"]
    assert run_problems({**run, "start_delay": 2}) == []  # an int is a float (JSON)


def test_the_record_filter_checks_its_run_once() -> None:
    with pytest.raises(AnsibleFilterError, match=r"paired_test_record: not a run of the plan \(\d+ problem\(s\)\)"):
        paired_test_record({"run": 1, "pairs": []}, reports=[])
