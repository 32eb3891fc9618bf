# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unknown role variables: the valid names read from each role, the closest one suggested."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import yaml

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.role_vars import (
    FACTS_OF_ACTIONS,
    RoleVarsError,
    Unknown,
    known_names,
    unknown_names,
    warning,
)
from tests.collection_path import REPO

ROLES = REPO / "roles"
PREFIX = {
    "paired_test": "paired_test_",
    "report": "report_",
    "esxi_firewall": "esxi_firewall_",
    "esxi_iperf": "esxi_iperf_",
    "esxi_network": "esxi_network_",
    "esxi_guests": "esxi_guests_",
    "path_mtu": "path_mtu_",
    "guest_network": "guest_network_",
    "rate_search": "rate_search_",
}

# What each role publishes: valid although no option of its argument spec.
OUTPUTS = {
    "paired_test": {
        "paired_test_results",
        "paired_test_plan",
        "paired_test_summary",
        "paired_test_sweeps",
        "paired_test_report_files",
    },
    "report": {"report_files"},
    "esxi_firewall": {"esxi_firewall_restore"},
    "esxi_iperf": {
        "esxi_iperf_binary",
        "esxi_iperf_tool",
        "esxi_iperf_tool_version",
        "esxi_iperf_esxi_version",
        "esxi_iperf_restore",
    },
    "esxi_network": {"esxi_network_vmknics"},
    "esxi_guests": {"esxi_guests_plan", "esxi_guests_vnics"},
    "path_mtu": {"path_mtu_results"},
    "guest_network": {"guest_network_result", "guest_network_restored"},
    "rate_search": {"rate_search_results"},
}


def _options(role: str) -> set[str]:
    specs = yaml.safe_load((ROLES / role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    return {name for entry in specs.values() for name in entry.get("options", {})}


def test_every_role_of_the_collection_is_covered() -> None:
    assert sorted(p.name for p in ROLES.iterdir() if (p / "meta" / "argument_specs.yml").exists()) == sorted(PREFIX)


@pytest.mark.parametrize("role", sorted(PREFIX))
def test_argument_specs_hold_no_template(role: str) -> None:
    """Ansible templates the whole spec on every host of the play before its argument check (a Jinja C(default:)
    is compiled and rendered once per host, for documentation only): a computed default is told in words."""
    text = (ROLES / role / "meta" / "argument_specs.yml").read_text()
    assert "{{" not in text and "{%" not in text


@pytest.mark.parametrize("role", sorted(PREFIX))
def test_options_outputs_and_defaults_are_known(role: str) -> None:
    known = known_names(str(ROLES / role))
    assert _options(role) <= known
    assert OUTPUTS[role] <= known
    # the role's own defaults never look like typos
    defaults = yaml.safe_load((ROLES / role / "defaults" / "main.yml").read_text()) or {}
    assert unknown_names(defaults, PREFIX[role], known) == []


@pytest.mark.parametrize("role", sorted(PREFIX))
def test_every_role_checks_its_variables_in_its_preflight(role: str) -> None:
    tasks = yaml.safe_load((ROLES / role / "tasks" / "preflight.yml").read_text())
    check = "esxilab.iperf.paired_test_preflight" if role == "paired_test" else "esxilab.iperf.role_vars_check"
    assert tasks[0][check]["role_path"] == "{{ role_path }}"


def test_paired_test_passes_only_report_options_to_the_report_role() -> None:
    tasks = yaml.safe_load((ROLES / "paired_test" / "tasks" / "report.yml").read_text())
    passed = set(tasks[0]["vars"])
    assert passed and unknown_names(passed, "report_", known_names(str(ROLES / "report"))) == []


@pytest.mark.parametrize(
    ("role", "typo", "suggestion"),
    [
        ("paired_test", "paired_test_stream", "paired_test_streams"),
        ("paired_test", "paired_test_dration", "paired_test_duration"),
        ("paired_test", "paired_test_result", "paired_test_results"),
        ("report", "report_titel", "report_title"),
        ("esxi_firewall", "esxi_firewall_rulset", "esxi_firewall_rulesets"),
        ("esxi_iperf", "esxi_iperf_methd", "esxi_iperf_method"),
        ("esxi_network", "esxi_network_network", "esxi_network_networks"),
        ("path_mtu", "path_mtu_check", "path_mtu_checks"),
        ("rate_search", "rate_search_loss_precent", "rate_search_loss_percent"),
        ("rate_search", "rate_search_frame_size", "rate_search_frame_sizes"),
    ],
)
def test_a_typo_names_the_closest_valid_name(role: str, typo: str, suggestion: str) -> None:
    known = known_names(str(ROLES / role))
    defined = [typo, "ansible_host", "inventory_hostname", f"__{role}_internal", "unrelated_var"]
    assert unknown_names(defined, PREFIX[role], known) == [Unknown(typo, suggestion)]


def test_a_name_close_to_nothing_is_reported_without_suggestion() -> None:
    known = known_names(str(ROLES / "paired_test"))
    (found,) = unknown_names(["paired_test_zzzzzzzzzzzzzzzzzzz"], "paired_test_", known)
    assert found.suggestion is None
    text = warning("esxilab.iperf.paired_test", found)
    assert "paired_test_zzzzzzzzzzzzzzzzzzz is not an option of the role and is ignored" in text
    assert "ansible-doc -t role esxilab.iperf.paired_test" in text


def test_warning_text() -> None:
    assert warning("esxilab.iperf.paired_test", Unknown("paired_test_stream", "paired_test_streams")) == (
        "esxilab.iperf.paired_test: the variable paired_test_stream is not an option of the role and is ignored"
        " - did you mean paired_test_streams?"
    )


def test_set_facts_and_registers_in_blocks_are_known(tmp_path: Path) -> None:
    role = tmp_path / "demo"
    (role / "meta").mkdir(parents=True)
    (role / "tasks").mkdir()
    (role / "meta" / "argument_specs.yml").write_text(
        "argument_specs:\n  main:\n    options:\n      demo_a: {type: str}\n"
        "  other:\n    options:\n      demo_b: {type: str}\n"
    )
    (role / "tasks" / "main.yml").write_text(
        "- block:\n    - ansible.builtin.set_fact: {demo_out: 1, cacheable: true}\n"
        "  always:\n    - ansible.builtin.command: 'true'\n      register: demo_reg\n"
        "- set_fact: {demo_legacy: 2}\n"
    )
    assert known_names(str(role)) == {"demo_a", "demo_b", "demo_out", "demo_reg", "demo_legacy"}


def test_a_role_without_argument_specs_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RoleVarsError, match="argument_specs"):
        known_names(str(tmp_path))
    (tmp_path / "meta").mkdir()
    (tmp_path / "meta" / "argument_specs.yml").write_text("argument_specs: [unclosed\n")
    with pytest.raises(RoleVarsError, match="cannot read"):
        known_names(str(tmp_path))


def test_the_facts_of_actions_are_what_their_modules_return() -> None:
    for action, facts in FACTS_OF_ACTIONS.items():
        name = action.rsplit(".", maxsplit=1)[-1]
        module = importlib.import_module(f"ansible_collections.esxilab.iperf.plugins.modules.{name}")
        returned = yaml.safe_load(module.RETURN)
        assert tuple(returned["ansible_facts"]["contains"]) == facts
