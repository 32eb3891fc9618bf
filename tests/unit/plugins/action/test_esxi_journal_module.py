# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""esxi_journal: the action over the ESXi stand-in, a lost connection after a change in
esxi_firewall, and the documentation against the argument spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ansible_collections.esxilab.iperf.plugins.action.esxi_firewall import ActionModule as FirewallAction
from ansible_collections.esxilab.iperf.plugins.action.esxi_journal import ARGUMENT_SPEC
from ansible_collections.esxilab.iperf.plugins.action.esxi_journal import ActionModule as JournalAction
from ansible_collections.esxilab.iperf.plugins.modules import esxi_journal as module_doc
from tests.unit.plugins.action_harness import assert_docs_only, assert_options_documented, make_action, runner_over
from tests.unit.plugins.doc_fragments import journal_fragment_options
from tests.unit.plugins.esxi_standin_host import MappedHost


def test_a_lost_connection_after_the_change_keeps_restore_and_the_journal(tmp_path: Path) -> None:
    host = MappedHost(tmp_path / "s", "7.0")
    sets: list[str] = []

    def lost_after_set(command: str) -> bool:
        if command.startswith("esxcli network firewall set"):
            sets.append(command)
        return bool(sets) and command == "esxcli network firewall get"

    journal = str(tmp_path / "j")
    args = {"enabled": False, "journal_dir": journal, "deadline": 0, "journal_copy_dir": str(tmp_path / "c")}
    runner = runner_over(host.execute, lost_after_set)
    out = make_action(FirewallAction, "esxilab.iperf.esxi_firewall", args, runner=runner).run(
        task_vars={"inventory_hostname": "esx1"}
    )
    assert out["failed"] is True
    assert out["changed"] is True and out["restore"] == {"enabled": True}
    assert "the connection failed" in out["msg"] and "reading them back failed" in out["msg"]
    assert '"enabled": true' in (tmp_path / "c" / "esx1.json").read_text()

    # the connection is back: esxi_journal reads, restores (check mode first), and is idempotent
    def journal_task(mode: str, check: bool = False) -> dict[str, Any]:
        args = {"mode": mode, "journal_dir": journal}
        plugin = make_action(
            JournalAction, "esxilab.iperf.esxi_journal", args, check_mode=check, runner=runner_over(host.execute)
        )
        result: dict[str, Any] = plugin.run(task_vars={"inventory_hostname": "esx1"})
        assert not result.get("failed"), result.get("msg")
        return result

    assert journal_task("read")["pending"] == {"firewall": {"enabled": True}}
    checked = journal_task("restore", check=True)
    assert checked["changed"] is True and host.get("fw_enabled") == "false"
    assert checked["diff"] == {"before": {"firewall": {"enabled": True}}, "after": {}}
    restored = journal_task("restore")
    assert restored["commands"] == ["esxcli network firewall set --enabled true"]
    assert host.get("fw_enabled") == "true"
    again = journal_task("restore")
    assert again["changed"] is False and again["commands"] == []


def test_an_unusable_journal_directory_fails_naming_it(tmp_path: Path) -> None:
    host = MappedHost(tmp_path / "s", "7.0")
    (tmp_path / "j").symlink_to(tmp_path)
    args = {"mode": "restore", "journal_dir": str(tmp_path / "j")}
    runner = runner_over(host.execute)
    out = make_action(JournalAction, "esxilab.iperf.esxi_journal", args, runner=runner).run(task_vars={})
    assert out["failed"] is True
    assert f"journal directory {tmp_path / 'j'}: it is a symlink" in out["msg"]


def test_documented_options_match_the_argument_spec() -> None:
    doc = yaml.safe_load(module_doc.DOCUMENTATION)
    assert doc["module"] == "esxi_journal"
    options = {**doc["options"], **journal_fragment_options("DOCUMENTATION")}
    assert_options_documented(options, ARGUMENT_SPEC)
    assert doc["attributes"]["check_mode"]["support"] == "full"
    returned = yaml.safe_load(module_doc.RETURN)
    assert set(returned) == {
        *("journal", "pending", "restored", "commands", "diff"),
        *("left", "fired", "holder", "recorded"),
    }
    examples = yaml.safe_load(module_doc.EXAMPLES)
    assert examples[0]["esxilab.iperf.esxi_journal"] == {"mode": "restore"}


def test_docs_only_module_holds_nothing_but_documentation() -> None:
    assert_docs_only(module_doc)
