# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.paired_test_preflight``: every setting of a paired test checked at once.

Documentation: the module file of the same name. The checks are ``plugin_utils/paired/preflight.py``;
this plugin hands them the task's options, the names of the variables defined and Ansible's host lists,
and resolves relative paths as Ansible does (against the playbook directory). With ``probe``,
once every check passed, the probe of the hosts of the tests (``paired_test_host.probe``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ansible import constants as C
from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase

from ansible_collections.esxilab.iperf.plugins.action.paired_test_host import probe
from ansible_collections.esxilab.iperf.plugins.modules.paired_test_preflight import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.controller import begin, controller_path, shadowing
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.role_spec import (
    entry_options,
    spec_problems,
    unmentioned,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.role_vars import RoleVarsError, known_names
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired import recorder
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.preflight import RoleNames, preflight
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.progress import planned

_NAME = "esxilab.iperf.paired_test_preflight"
_ROLE = "esxilab.iperf.paired_test"
ARGUMENT_SPEC = argument_spec(DOCUMENTATION)
#: The role's variables this action reads of every host of the play itself (besides the one named by address_var).
STATE_DIR_VAR = "paired_test_state_dir"
LINK_SPEED_VAR = "paired_test_link_speed_mbps"
#: The probe's options from each host of the tests' own variables: its iperf binary, and the link speeds esxi_network
#: published on it.
PROBE_HOST_OPTIONS = {"binary": "paired_test_binary", "published": "esxi_network_link_speeds"}


def own_values(
    variables: Mapping[str, Any], fallbacks: Mapping[str, Any]
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """For each variable name of ``fallbacks``: each host of the play's own value - from ``hostvars``, templated for
    the host, as Jinja's ``map('extract', hostvars)`` gives it - else the name's fallback; and the problems (a value
    that cannot be templated, naming the host and the variable; the host is then left out of that name's values).
    Each host's variables are gathered once (``hostvars[host]``: Ansible gathers them, and copies the host's facts,
    on each such read; the role's Jinja read them once per host and option)."""
    hostvars = variables.get("hostvars") or {}
    values: dict[str, dict[str, Any]] = {name: {} for name in fallbacks}
    problems: list[str] = []
    for host in variables.get("ansible_play_hosts_all") or ():
        own = hostvars[host]
        for name, fallback in fallbacks.items():
            try:
                values[name][host] = own.get(name, fallback)
            except AnsibleError as exc:
                problems.append(f"{name} of {host} cannot be read: {exc}; fix the host's variable")
    return values, problems


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """Check the tests, the hosts, the role's and the report's settings; fail with every problem found."""

    TRANSFERS_FILES = False

    def _path(self, path: str) -> str:
        return controller_path(self, path)

    def _typed(self, options: Mapping[str, Any], variables: Mapping[str, Any], found: list[str]) -> list[str]:
        """Every role variable against its option in the role's spec (``role_spec``) - what Ansible's check of the role
        does on every host, once here - but the tests (the plan's checks) and the variables ``found`` already names."""
        given = [name for name in options if name in variables and name != "paired_test_tests"]
        names = sorted(unmentioned(found, given))
        values: dict[str, Any] = {}
        problems: list[str] = []
        for name in names:
            try:
                values[name] = self._templar.template(variables[name])
            except AnsibleError as exc:
                problems.append(f"{name} cannot be read: {exc}; fix the variable")
        return problems + spec_problems(options, values, role=_ROLE)

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result, args = begin(self, tmp, task_vars, ARGUMENT_SPEC)
        if args is None:  # wrong or unknown options
            return result
        variables = task_vars or {}
        role_dir = os.path.normpath(args["role_path"])
        report_dir = os.path.join(os.path.dirname(role_dir), "report")
        try:
            options = entry_options(role_dir)
            roles = [
                RoleNames(_ROLE, "paired_test_", known_names(role_dir) | set(args["known"])),
                RoleNames("esxilab.iperf.report", "report_", known_names(report_dir)),
            ]
        except (RoleVarsError, OSError) as exc:
            fix = "role_path must be the role's directory ({{ role_path }})"
            result.update(failed=True, msg=f"{_NAME}: {exc}; {fix}")
            return result
        address_var = args["address_var"]
        read_problems: list[str] = []
        try:  # the play's value, for a host without its own: templated as the role's Jinja default did
            play_state_dir = self._templar.template(variables.get(STATE_DIR_VAR))
        except AnsibleError as exc:
            play_state_dir = None
            read_problems.append(f"{STATE_DIR_VAR} cannot be read: {exc}; fix the variable")
        fallbacks = {STATE_DIR_VAR: play_state_dir, LINK_SPEED_VAR: "", **({address_var: None} if address_var else {})}
        own, host_problems = own_values(variables, fallbacks)
        read_problems += host_problems
        state_dirs, link_speeds = own[STATE_DIR_VAR], own[LINK_SPEED_VAR]
        addresses = own[address_var] if address_var else {}
        outcome = preflight(
            args["tests"],
            defaults=args["defaults"],
            role_settings={
                "knee_tolerance": args["knee_tolerance"],
                "report_name": args["report_name"],
                "max_runs": args["max_runs"],
            },
            report_settings=args["report"],
            state_dirs=state_dirs,
            link_speeds=link_speeds,
            defined=list(variables),
            roles=roles,
            unknown_fail=args["unknown_variables"] == "fail",
            addresses={host: value or None for host, value in addresses.items()},
            address_var=address_var,
            inventory_hosts=list(variables.get("groups", {}).get("all", [])),
            play_hosts=list(variables.get("ansible_play_batch", [])),
            reporting=args["reporting"],
            resolve=self._path,
        )
        warnings = list(outcome.warnings)
        shadowed = shadowing()
        if shadowed:
            warnings.append(shadowed)
        if warnings:
            result["warnings"] = warnings
        result.update(changed=False)
        problems = [*read_problems, *outcome.problems]
        problems += self._typed(options, variables, problems)
        if problems:  # in the message only: Ansible prints a failed result's keys once more
            result.update(
                failed=True,
                msg=f"{len(problems)} problem(s) with the settings, nothing was run:\n" + "\n".join(problems),
            )
            return result
        plan = outcome.plan or {}
        summary = f"{plan.get('run_count', 0)} run(s) on {len(plan.get('hosts', []))} host(s), every setting usable"
        if args["probe"]:  # every check passed: now, and only now, the hosts of the tests
            found = probe(self, variables, plan, PROBE_HOST_OPTIONS, (args["report"] or {}).get("report_line_rate_bps"))
            probe_warnings = found.pop("warnings", None)
            if probe_warnings:
                result["warnings"] = [*result.get("warnings", ()), *probe_warnings]
            if found.get("failed"):
                result.update(found, msg=f"{_NAME}: {found['msg']}")
                return result
            plan = found.pop("plan")
            result.update(found)
            summary += f"; probed {len(plan.get('hosts', []))} host(s)"
        result.update(
            plan=plan,
            spool=recorder.make_spool(C.DEFAULT_LOCAL_TMP),  # removed with Ansible's own directory at the end
            # the series starts with no record on every host (facts of an earlier play are cleared), and what the
            # progress callbacks read of the plan: the clock starts (paired.progress)
            ansible_facts={
                "__paired_test_recorded": [],
                "__paired_test_halt": False,
                "__paired_test_planned": planned(plan),
            },
            msg=summary,
        )
        return result
