# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The paired_test_preflight action: its documentation is its argument spec; the role's names are read from the role."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
import yaml
from ansible.errors import AnsibleError
from ansible.template import Templar, trust_as_template

from ansible_collections.esxilab.iperf.plugins.action import paired_test_preflight as action
from ansible_collections.esxilab.iperf.plugins.action.paired_test_preflight import ActionModule
from ansible_collections.esxilab.iperf.plugins.modules import paired_test_preflight as module_doc
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.progress import planned
from tests.collection_path import REPO
from tests.unit.plugins.action_harness import assert_docs_only, assert_options_documented, make_action

ROLE = str(REPO / "roles" / "paired_test")
TEST = {"name": "t", "pairs": [{"server": "h1", "address": "198.18.0.1", "client": "h2"}]}


def _run(task_vars: dict[str, Any], state_dirs: Mapping[str, str] | None = None, **args: Any) -> dict[str, Any]:
    """The action on the hosts h1 and h2; ``state_dirs``: the hosts' own paired_test_state_dir (their hostvars)."""
    plugin = make_action(ActionModule, "esxilab.iperf.paired_test_preflight", {"role_path": ROLE, **args})
    hosts = ["h1", "h2"]
    hostvars: dict[str, Any] = {host: {} for host in hosts}
    hostvars.update({host: {"paired_test_state_dir": value} for host, value in (state_dirs or {}).items()})
    base = {
        "groups": {"all": hosts},
        "ansible_play_batch": hosts,
        "ansible_play_hosts_all": hosts,
        "ansible_forks": 5,
        "hostvars": hostvars,
    }
    variables = {**base, **task_vars}
    plugin._templar = Templar(loader=None, variables=variables)  # the play's values are templated (a Jinja default)
    result: dict[str, Any] = plugin.run(task_vars=variables)
    return result


def test_documentation_matches_the_argument_spec() -> None:
    assert_docs_only(module_doc)
    assert_options_documented(yaml.safe_load(module_doc.DOCUMENTATION)["options"], action.ARGUMENT_SPEC)


def test_the_plan_comes_back_when_every_setting_is_usable() -> None:
    dirs = {"h1": "/tmp", "h2": "/var/tmp"}
    result = _run({"paired_test_streams": 2, "report_history": "none"}, tests=[TEST], state_dirs=dirs)
    assert not result.get("failed"), result
    assert result["plan"]["run_count"] == 1 and result["msg"].startswith("1 run(s) on 2 host(s)")


def test_ansible_forks_are_not_a_limit() -> None:
    """One task drives a run, a thread per host: a ring of two clients passes with forks=1."""
    pairs = [
        {"server": "h1", "address": "198.18.0.1", "client": "h2"},
        {"server": "h2", "address": "198.18.0.2", "client": "h1"},
    ]
    ring = {"name": "ring", "pairs": pairs}
    result = _run({"ansible_forks": 1, "report_history": "none"}, tests=[ring], state_dirs={"h1": "/tmp", "h2": "/tmp"})
    assert not result.get("failed"), result
    assert result["plan"]["runs"][0]["client_hosts"] == ["h1", "h2"]


def test_the_series_starts_with_the_planned_runs_and_no_record() -> None:
    """The facts the progress callbacks read (paired.progress): what they read of the plan, no record yet."""
    result = _run({"report_history": "none"}, tests=[TEST], state_dirs={"h1": "/tmp", "h2": "/tmp"})
    facts = result["ansible_facts"]
    assert facts["__paired_test_recorded"] == [] and facts["__paired_test_halt"] is False
    assert facts["__paired_test_planned"] == planned(result["plan"])
    assert facts["__paired_test_planned"]["runs"][0]["duration"] == result["plan"]["runs"][0]["duration"]


def test_the_probe_comes_after_every_check_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    probed: list[dict[str, Any]] = []
    broken: list[str] = []  # the hosts the stand-in probe finds without iperf3

    def probe(_action: Any, _task_vars: Any, plan: Mapping[str, Any], options: Any, rate: Any) -> dict[str, Any]:
        probed.append({"hosts": plan["hosts"], "options": options, "rate": rate})
        if broken:
            return {"probes": {}, "failed": True, "msg": f"the probe failed on 1 host(s) - {broken[0]}: no iperf3"}
        return {"probes": {"h1": {}, "h2": {}}, "link_speeds": {}, "esxi_hosts": [], "plan": {**plan, "rated": True}}

    monkeypatch.setattr(action, "probe", probe)
    dirs = {"h1": "/tmp", "h2": "/tmp"}
    # a bad setting: nothing is probed
    assert _run({"paired_test_strams": 2}, tests=[TEST], state_dirs=dirs, probe=True)["failed"] is True
    assert not probed
    result = _run({"report_history": "none"}, tests=[TEST], state_dirs=dirs, probe=True)
    assert not result.get("failed"), result
    assert probed == [{"hosts": ["h1", "h2"], "options": action.PROBE_HOST_OPTIONS, "rate": None}]
    assert result["plan"]["rated"] is True and result["probes"] == {"h1": {}, "h2": {}}
    assert result["msg"].endswith("; probed 2 host(s)")
    assert result["ansible_facts"]["__paired_test_planned"] == planned(result["plan"])
    # without probe: no host is contacted
    assert "probes" not in _run({"report_history": "none"}, tests=[TEST], state_dirs=dirs) and len(probed) == 1
    # a host that cannot run the tests: the task fails naming it, with no plan to run
    broken.append("h2")
    failed = _run({"report_history": "none"}, tests=[TEST], state_dirs=dirs, probe=True)
    assert failed["failed"] is True and "plan" not in failed and "ansible_facts" not in failed
    assert failed["msg"] == "esxilab.iperf.paired_test_preflight: the probe failed on 1 host(s) - h2: no iperf3"


def test_typos_of_both_roles_fail_with_the_closest_name_known_from_the_roles() -> None:
    result = _run({"paired_test_strams": 2, "report_max_drop_percnt": 5}, tests=[TEST], state_dirs={"h1": "/tmp"})
    assert result["failed"] is True
    assert result["msg"].splitlines() == [
        "3 problem(s) with the settings, nothing was run:",
        "paired_test_strams is not an option of esxilab.iperf.paired_test (did you mean paired_test_streams?); fix "
        "the name or remove it",
        "report_max_drop_percnt is not an option of esxilab.iperf.report (did you mean report_max_drop_percent?); "
        "fix the name or remove it",
        "paired_test_state_dir=null on h2 is not an absolute path: the servers' pidfiles and logs go there on the "
        "host, and a relative path would depend on the connection's working directory; set an absolute directory "
        "that exists on the host, such as /tmp (per host in host_vars if needed)",
    ]
    dirs = {"h1": "/t", "h2": "/t"}
    warned = _run({"report_max_drop_percnt": 5}, tests=[TEST], unknown_variables="warn", state_dirs=dirs)
    assert not warned.get("failed") and "did you mean report_max_drop_percent?" in warned["warnings"][0]


def test_every_role_variable_is_checked_once_against_the_roles_spec_even_one_no_test_uses() -> None:
    """What Ansible's check of the role does on every host (a play may import the role with rolespec_validate: false):
    a setting every test overrides, and one only the series reads, are checked too; a variable a check of the plan
    already reported is not reported again."""
    dirs = {"h1": "/tmp", "h2": "/tmp"}
    values = {"paired_test_duration": "abc", "paired_test_continue_on_error": "maybe", "paired_test_port_base": "x"}
    defaults = {"port_base": "x"}  # what the role hands the action: its vars/main.yml, templated
    result = _run(
        {**values, "report_history": "none"}, tests=[{**TEST, "duration": 2}], defaults=defaults, state_dirs=dirs
    )
    assert result["failed"] is True and "plan" not in result
    lines = result["msg"].splitlines()[1:]
    assert sorted(line.split("=")[0].split(":")[0] for line in lines) == [
        "paired_test_continue_on_error",
        "paired_test_duration",
        "paired_test_tests[0]",
    ], lines
    assert "role variable paired_test_port_base" in lines[0]
    assert sum("paired_test_port_base" in line for line in lines) == 1
    assert any(line.startswith('paired_test_continue_on_error="maybe"') and "valid boolean" in line for line in lines)
    assert any(line.startswith('paired_test_duration="abc"') and "convert to int" in line for line in lines)


class _Broken(Mapping[str, Any]):
    """A host's variables whose address cannot be templated (an undefined variable in it); the others can."""

    def __getitem__(self, name: str) -> Any:
        if name == "lab_address":
            raise AnsibleError("'lab_net' is undefined")
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter(["lab_address"])

    def __len__(self) -> int:
        return 1


class _Counted(dict[str, Any]):
    """hostvars that count the reads of each host's variables (Ansible gathers them, with a copy of the facts,
    on each read)."""

    def __init__(self, hosts: Mapping[str, Any]) -> None:
        super().__init__(hosts)
        self.reads: dict[str, int] = {}

    def __getitem__(self, host: str) -> Any:
        self.reads[host] = self.reads.get(host, 0) + 1
        return super().__getitem__(host)


def test_each_hosts_own_variables_are_read_once_by_the_action() -> None:
    """The address, state directory and link speed of each host of the play: its own value (its hostvars), the play's
    state directory where it has none, none for the others; a value that cannot be templated names host and variable."""
    hostvars: dict[str, Any] = {
        "h1": {"lab_address": "198.18.0.1", "paired_test_link_speed_mbps": 1000},
        "h2": {"lab_address": "198.18.0.2", "paired_test_state_dir": "/var/tmp"},
    }
    pair = {"server": "h1", "client": "h2"}
    tests = [{"name": "t", "pairs": [pair]}]
    counted = _Counted(hostvars)
    # the play's state directory is templated for a host without its own (the role's Jinja default did it)
    play = {"paired_test_state_dir": trust_as_template("{{ lab_dir }}/state"), "lab_dir": "/tmp"}
    result = _run({"hostvars": counted, **play}, tests=tests, address_var="lab_address")
    assert not result.get("failed"), result
    assert counted.reads == {"h1": 1, "h2": 1}  # each host's variables gathered once, for the three names
    assert result["plan"]["runs"][0]["pairs"][0]["address"] == "198.18.0.1"
    assert result["plan"]["given_link_speeds"] == {"h1": 1000.0}
    # h1 takes the play's state directory; h2's own is checked
    relative = {**hostvars, "h2": {**hostvars["h2"], "paired_test_state_dir": "var/tmp"}}
    checked = _run({"hostvars": relative, **play}, tests=tests, address_var="lab_address")
    assert [line.split(" is ")[0] for line in checked["msg"].splitlines()[1:]] == [
        'paired_test_state_dir="var/tmp" on h2'
    ]
    broken = _run({"hostvars": {**hostvars, "h2": _Broken()}, **play}, tests=tests, address_var="lab_address")
    assert broken["failed"] is True
    assert "lab_address of h2 cannot be read: 'lab_net' is undefined; fix the host's variable" in broken["msg"]
    assert "on h2" not in broken["msg"]  # said once: not again as a missing address or state directory


def test_the_host_part_documentation_matches_its_argument_spec() -> None:
    from ansible_collections.esxilab.iperf.plugins.action import paired_test_host
    from ansible_collections.esxilab.iperf.plugins.modules import paired_test_host as host_doc

    assert_docs_only(host_doc)
    assert_options_documented(yaml.safe_load(host_doc.DOCUMENTATION)["options"], paired_test_host.ARGUMENT_SPEC)
