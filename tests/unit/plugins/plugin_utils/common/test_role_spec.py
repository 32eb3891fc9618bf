# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A role's variables checked once against its own meta/argument_specs.yml (what Ansible checks on every host)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.role_spec import (
    entry_options,
    spec_problems,
    unmentioned,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.role_vars import RoleVarsError
from tests.collection_path import REPO

ROLE = REPO / "roles" / "paired_test"
NAME = "esxilab.iperf.paired_test"


def _defaults() -> dict[str, Any]:
    values: dict[str, Any] = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text(encoding="utf-8"))
    return values


def test_the_roles_own_defaults_pass() -> None:
    assert spec_problems(entry_options(str(ROLE)), _defaults(), role=NAME) == []


@pytest.mark.parametrize(
    ("name", "value", "needle"),
    [
        ("paired_test_duration", "abc", "unable to convert to int"),
        ("paired_test_continue_on_error", "maybe", "not a valid boolean"),
        ("paired_test_order", "nope", "must be one of: interleaved, sequential, shuffled"),
        ("paired_test_report_dir", {"x": 1}, "must be a string"),
        ("paired_test_knee_tolerance", [1], "unable to convert to float"),
    ],
)
def test_a_value_that_does_not_fit_its_option_is_one_line_naming_it(name: str, value: Any, needle: str) -> None:
    problems = spec_problems(entry_options(str(ROLE)), {**_defaults(), name: value}, role=NAME)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{name}=") and needle in problems[0]
    assert f"ansible-doc -t role {NAME}" in problems[0]


def test_every_problem_at_once_and_names_no_option_are_left_to_the_unknown_check() -> None:
    values = {"paired_test_duration": "x", "paired_test_swap_roles": "x", "paired_test_strams": 0}
    problems = spec_problems(entry_options(str(ROLE)), values, role=NAME)
    assert [line.split("=")[0] for line in problems] == ["paired_test_duration", "paired_test_swap_roles"]


def test_a_name_already_reported_is_not_reported_again() -> None:
    found = ["paired_test_tests[0]: role variable paired_test_order: order must be ..."]
    names = ["paired_test_order", "paired_test_tos", "paired_test_omit"]
    assert unmentioned(found, names) == {"paired_test_tos", "paired_test_omit"}
    # a whole name only: paired_test_tos is not paired_test_tosx
    assert unmentioned(["paired_test_tosx=1 is wrong"], ["paired_test_tos"]) == {"paired_test_tos"}
    # a name only suggested for a typo is still checked
    typo = "paired_test_strams is not an option of esxilab.iperf.paired_test (did you mean paired_test_streams?)"
    assert unmentioned([typo], ["paired_test_streams"]) == {"paired_test_streams"}


def test_a_role_without_the_entry_point_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "meta").mkdir()
    (tmp_path / "meta" / "argument_specs.yml").write_text("argument_specs: {other: {options: {}}}\n", encoding="utf-8")
    with pytest.raises(RoleVarsError, match="no options for the entry point 'main'"):
        entry_options(str(tmp_path))
