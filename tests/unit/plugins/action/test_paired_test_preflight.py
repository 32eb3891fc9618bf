# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The paired_test_preflight action: its documentation is its argument spec; the role's names are read from the role."""

from __future__ import annotations

from typing import Any

import yaml

from ansible_collections.esxilab.iperf.plugins.action import paired_test_preflight as action
from ansible_collections.esxilab.iperf.plugins.action.paired_test_preflight import ActionModule
from ansible_collections.esxilab.iperf.plugins.modules import paired_test_preflight as module_doc
from tests.collection_path import REPO
from tests.unit.plugins.action_harness import assert_docs_only, assert_options_documented, make_action

ROLE = str(REPO / "roles" / "paired_test")
TEST = {"name": "t", "pairs": [{"server": "h1", "address": "198.18.0.1", "client": "h2"}]}


def _run(task_vars: dict[str, Any], **args: Any) -> dict[str, Any]:
    plugin = make_action(ActionModule, "esxilab.iperf.paired_test_preflight", {"role_path": ROLE, **args})
    base = {"groups": {"all": ["h1", "h2"]}, "ansible_play_batch": ["h1", "h2"], "ansible_forks": 5}
    result: dict[str, Any] = plugin.run(task_vars={**base, **task_vars})
    return result


def test_documentation_matches_the_argument_spec() -> None:
    assert_docs_only(module_doc)
    assert_options_documented(yaml.safe_load(module_doc.DOCUMENTATION)["options"], action.ARGUMENT_SPEC)


def test_the_plan_comes_back_when_every_setting_is_usable() -> None:
    dirs = {"h1": "/tmp", "h2": "/var/tmp"}
    result = _run({"paired_test_streams": 2, "report_history": "none"}, tests=[TEST], state_dirs=dirs)
    assert not result.get("failed"), result
    assert result["plan"]["run_count"] == 1 and result["msg"].startswith("1 run(s) on 2 host(s)")


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


def test_the_host_part_documentation_matches_its_argument_spec() -> None:
    from ansible_collections.esxilab.iperf.plugins.action import paired_test_host
    from ansible_collections.esxilab.iperf.plugins.modules import paired_test_host as host_doc

    assert_docs_only(host_doc)
    assert_options_documented(yaml.safe_load(host_doc.DOCUMENTATION)["options"], paired_test_host.ARGUMENT_SPEC)
