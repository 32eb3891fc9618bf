# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""esxi_firewall: the action over the ESXi stand-in (check -> real -> idempotent -> restore),
failures, and the documentation against the argument spec."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

import ansible_collections.esxilab.iperf.plugins.modules.esxi_firewall as module_doc
from ansible_collections.esxilab.iperf.plugins.action.esxi_firewall import ARGUMENT_SPEC, ActionModule
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi import firewall_run as backend
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.firewall_run import run
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import CommandOutput
from tests.collection_path import ESXI_RECORDINGS, REPO
from tests.unit.plugins.action_harness import (
    Runner,
    assert_docs_only,
    assert_options_documented,
    make_action,
    runner_over,
)
from tests.unit.plugins.doc_fragments import journal_fragment_options

STANDIN = REPO / "tests" / "esxi_standin"
FIXTURES = ESXI_RECORDINGS


class StandinHost:
    """An ESXi stand-in reached like the connection would: ``sh -c COMMAND``."""

    def __init__(self, state: Path, version: str) -> None:
        self.state = state
        self.env = {
            **os.environ,
            "PATH": f"{STANDIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "ESXI_STANDIN_STATE": str(state),
        }
        self.commands: list[str] = []
        assert self.execute(f"esxi-standin init {version}").rc == 0

    def execute(self, command: str) -> CommandOutput:
        self.commands.append(command)
        proc = subprocess.run(
            ["/bin/sh", "-c", command], env=self.env, capture_output=True, text=True, timeout=20, check=False
        )
        return CommandOutput(proc.returncode, proc.stdout, proc.stderr)

    def changes(self) -> list[str]:
        return [c for c in self.commands if " set " in c]


def _action(args: dict[str, Any], runner: Runner, *, check_mode: bool = False) -> ActionModule:
    # journal off unless a test asks for it: these tests run on this machine, not on ESXi's /scratch
    args = {"journal_dir": "", **args}
    return make_action(ActionModule, "esxilab.iperf.esxi_firewall", args, check_mode=check_mode, runner=runner)


def test_check_real_idempotent_restore(tmp_path: Path) -> None:
    host = StandinHost(tmp_path / "s", "7.0")
    args = {"enabled": False}

    checked = _action(args, runner_over(host.execute), check_mode=True).run(task_vars={})
    assert not checked.get("failed"), checked.get("msg")
    assert checked["changed"] is True
    assert checked["commands"] == ["esxcli network firewall set --enabled false"]
    assert checked["previous"] == {"enabled": True, "default_action": "DROP", "loaded": True, "rulesets": {}}
    assert checked["current"]["enabled"] is False  # what it would leave
    assert checked["diff"] == {
        "before": {"enabled": True, "default_action": "DROP", "rulesets": {}},
        "after": {"enabled": False, "default_action": "DROP", "rulesets": {}},
    }
    assert host.changes() == []

    real = _action(args, runner_over(host.execute)).run(task_vars={})
    assert not real.get("failed"), real.get("msg")
    assert real["changed"] is True
    assert real["current"] == {"enabled": False, "default_action": "DROP", "loaded": True, "rulesets": {}}
    assert real["restore"] == {"enabled": True}
    assert host.changes() == ["esxcli network firewall set --enabled false"]

    again_check = _action(args, runner_over(host.execute), check_mode=True).run(task_vars={})
    again = _action(args, runner_over(host.execute)).run(task_vars={})
    assert (again_check["changed"], again["changed"]) == (False, False)
    assert again["commands"] == []
    assert again["restore"] == {}

    restored = _action({"restore": real["restore"]}, runner_over(host.execute)).run(task_vars={})
    assert restored["changed"] is True
    assert restored["current"]["enabled"] is True
    assert host.execute("esxcli network firewall get").stdout == (
        "   Default Action: DROP\n   Enabled: true\n   Loaded: true\n"
    )
    assert _action({"restore": {}}, runner_over(host.execute)).run(task_vars={})["changed"] is False


def test_rulesets_and_default_action_on_6x(tmp_path: Path) -> None:
    host = StandinHost(tmp_path / "s", "6.7")
    out = run(
        {"default_action": "PASS", "rulesets": {"vsanhealth-multicasttest": True, "sshServer": True}},
        host.execute,
        check_mode=False,
    )
    assert out["commands"] == [
        "esxcli network firewall ruleset set --ruleset-id vsanhealth-multicasttest --enabled true",
        "esxcli network firewall set --default-action true",
    ]
    assert out["previous"]["rulesets"] == {"sshServer": True, "vsanhealth-multicasttest": False}
    assert out["current"] == {
        "enabled": True,
        "default_action": "PASS",
        "loaded": True,
        "rulesets": {"sshServer": True, "vsanhealth-multicasttest": True},
    }
    assert out["restore"] == {"default_action": "DROP", "rulesets": {"vsanhealth-multicasttest": False}}
    back = run({"restore": out["restore"]}, host.execute, check_mode=False)
    assert back["current"]["default_action"] == "DROP"
    assert back["current"]["rulesets"] == {"vsanhealth-multicasttest": False}


def test_state_only_reads(tmp_path: Path) -> None:
    host = StandinHost(tmp_path / "s", "8.0")
    out = run({}, host.execute, check_mode=False)
    assert out["changed"] is False
    assert out["current"] == out["previous"]
    assert host.commands[1:] == ["esxcli network firewall get"]


@pytest.mark.parametrize(
    ("version", "args", "message"),
    [
        ("8.0", {"rulesets": {"nfsClient": True}}, "'Enable/Disable configurable' is false"),
        ("6.7", {"rulesets": {"iperf": True}}, "firewall ruleset 'iperf' does not exist"),
        ("6.7", {"rulesets": {"sshServer": "yes"}}, "rulesets.sshServer must be true or false"),
        ("6.7", {"restore": {"enabled": True, "bogus": 1}}, "restore has unknown keys ['bogus']"),
        ("6.7", {"restore": {"default_action": "ALLOW"}}, "restore.default_action must be PASS or DROP"),
        ("6.7", {"restore": {"enabled": "no"}}, "restore.enabled must be true or false"),
        ("6.7", {"rulesets": ["sshServer"]}, "rulesets must be a mapping"),
    ],
)
def test_refusals_change_nothing(tmp_path: Path, version: str, args: dict[str, Any], message: str) -> None:
    host = StandinHost(tmp_path / "s", version)
    with pytest.raises(backend.EsxiFirewallError) as err:
        run(args, host.execute, check_mode=False)
    assert message in err.value.message
    assert host.changes() == []


def test_esxcli_failure_midway_reports_applied_commands() -> None:
    firewall_get = (FIXTURES / "7.0.3__network-firewall-get.txt").read_text()
    refusal = (FIXTURES / "8.0U2__network-firewall-ruleset-allowedip__owned-by-system.txt").read_text()
    ran: list[str] = []

    def execute(command: str) -> CommandOutput:
        ran.append(command)
        if command == "esxcli network firewall get":
            return CommandOutput(0, firewall_get, "")
        if "--enabled" in command:
            return CommandOutput(0, "", "")
        return CommandOutput(1, refusal, "")

    with pytest.raises(backend.EsxiFirewallError) as err:
        run({"enabled": False, "default_action": "PASS"}, execute, check_mode=False)
    message = err.value.message
    assert "'esxcli network firewall set --default-action true' failed (exit status 1)" in message
    assert "Invalid operation requested: Can not change allowed ip list this ruleset" in message
    assert "Commands already applied: ['esxcli network firewall set --enabled false']" in message
    assert err.value.result["restore"] == {"enabled": True, "default_action": "DROP"}
    assert err.value.result["commands"] == ["esxcli network firewall set --enabled false"]
    assert err.value.result["changed"] is True


def test_host_that_ignores_the_change_fails() -> None:
    firewall_get = (FIXTURES / "7.0.3__network-firewall-get.txt").read_text()

    def execute(command: str) -> CommandOutput:
        return CommandOutput(0, firewall_get if command.endswith(" get") else "", "")

    with pytest.raises(backend.EsxiFirewallError) as err:
        run({"enabled": False}, execute, check_mode=False)
    assert "the firewall now reports: enabled is True, wanted False" in err.value.message
    assert err.value.result["current"]["enabled"] is True


def test_unreadable_output_fails_through_the_action() -> None:
    def garbage(command: str, **kwargs: Any) -> dict[str, Any]:
        return {"rc": 0, "stdout": "-sh: esxcli: not found\n", "stderr": ""}

    out = _action({"enabled": False}, garbage).run(task_vars={})
    assert out["failed"] is True
    assert "not 'esxcli network firewall get' output" in out["msg"]


def test_documented_options_match_the_argument_spec() -> None:
    doc = yaml.safe_load(module_doc.DOCUMENTATION)
    assert doc["module"] == "esxi_firewall"
    options = {**doc["options"], **journal_fragment_options("DOCUMENTATION", "DEADLINE")}
    assert_options_documented(options, ARGUMENT_SPEC)
    assert doc["attributes"]["check_mode"]["support"] == "full"
    assert doc["attributes"]["diff_mode"]["support"] == "full"
    examples = yaml.safe_load(module_doc.EXAMPLES)
    assert examples[0]["block"][0]["esxilab.iperf.esxi_firewall"] == {"enabled": False}
    returned = yaml.safe_load(module_doc.RETURN)
    assert set(returned) == {
        *("previous", "current", "restore", "commands", "diff", "journal_restored"),
        *("left", "journal_clear_failed"),
    }


def test_docs_only_module_holds_nothing_but_documentation() -> None:
    assert_docs_only(module_doc)
