# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""esxi_iperf_install: the action plugin over the ESXi stand-in (upload into a temporary
directory that is removed afterwards, option validation), and the documentation against the
argument spec."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.esxilab.iperf.plugins.action.esxi_iperf_install import ARGUMENT_SPEC, ActionModule
from ansible_collections.esxilab.iperf.plugins.modules import esxi_iperf_install as module_doc
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi import install_run as backend
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.paths import BUNDLED_IPERF3_COPY, VIB_IPERF_COPY
from tests.unit.plugins.action_harness import (
    Runner,
    assert_docs_only,
    assert_options_documented,
    make_action,
    runner_over,
)
from tests.unit.plugins.doc_fragments import journal_fragment_options
from tests.unit.plugins.esxi_standin_host import MappedHost


def _action(args: dict[str, Any], runner: Runner, *, check_mode: bool = False) -> ActionModule:
    # journal off unless a test asks for it: these tests run on this machine, not on ESXi's /scratch
    args = {"journal_dir": "", **args}
    return make_action(ActionModule, "esxilab.iperf.esxi_iperf_install", args, check_mode=check_mode, runner=runner)


class FakeRemoteTmp:
    """_make_tmp_path / _transfer_file / _remove_tmp_path of ActionBase, on this machine."""

    def __init__(self, plugin: ActionModule, base: Path) -> None:
        self.base = base
        self.made: list[Path] = []
        self.removed: list[str] = []
        self.transferred: list[tuple[str, str]] = []
        plugin._connection._shell.join_path = os.path.join
        plugin._connection._shell.tmpdir = None

        def make_tmp_path(*_args: Any) -> str:
            path = base / f"ansible-tmp-{len(self.made)}"
            path.mkdir(parents=True)
            self.made.append(path)
            plugin._connection._shell.tmpdir = str(path)
            return str(path)

        def transfer(local: str, remote: str) -> str:
            self.transferred.append((local, remote))
            shutil.copy(local, remote)
            return remote

        def remove(tmp_path: str | None, **_kwargs: Any) -> None:
            if tmp_path:
                self.removed.append(tmp_path)
                shutil.rmtree(tmp_path)

        plugin._make_tmp_path = make_tmp_path
        plugin._transfer_file = transfer
        plugin._remove_tmp_path = remove


def test_upload_installs_and_removes_the_temporary_directory(tmp_path: Path) -> None:
    host = MappedHost(tmp_path / "s", "6.7")
    bundle = tmp_path / "files" / "iperf-2.0.5-1-offline_bundle.zip"
    bundle.parent.mkdir()
    bundle.write_bytes(b"PK\x05\x06" + bytes(18))
    args = {"vib_upload": str(bundle), "allow_unsigned": True}

    checked_plugin = _action(args, runner_over(host.execute), check_mode=True)
    checked_plugin._find_needle = lambda _dirname, needle: needle
    checked_remote = FakeRemoteTmp(checked_plugin, tmp_path / "remote")
    checked = checked_plugin.run(task_vars={})
    assert not checked.get("failed"), checked.get("msg")
    assert checked["changed"] is True
    assert checked_remote.transferred == []  # nothing uploaded in check mode

    plugin = _action(args, runner_over(host.execute))
    plugin._find_needle = lambda _dirname, needle: needle
    remote = FakeRemoteTmp(plugin, tmp_path / "remote")
    result = plugin.run(task_vars={})
    assert not result.get("failed"), result.get("msg")
    uploaded = str(tmp_path / "remote" / "ansible-tmp-0" / bundle.name)
    assert remote.transferred == [(str(bundle), uploaded)]
    assert result["commands"][0] == f"esxcli software vib install -d {uploaded} --no-sig-check"
    assert result["binary"] == VIB_IPERF_COPY
    assert remote.removed == [str(tmp_path / "remote" / "ansible-tmp-0")]
    assert not Path(uploaded).exists()
    assert f"software vib install -d {uploaded} --no-sig-check" in (host.state / "calls.log").read_text()


def test_missing_vib_upload_fails_before_touching_the_host(tmp_path: Path) -> None:
    from ansible.errors import AnsibleError

    host = MappedHost(tmp_path / "s", "6.7")
    plugin = _action({"vib_upload": "nowhere.zip"}, runner_over(host.execute))

    def find_needle(_dirname: str, needle: str) -> str:
        raise AnsibleError(f"Could not find or access '{needle}'")

    plugin._find_needle = find_needle
    result = plugin.run(task_vars={})
    assert result["failed"] is True
    assert result["msg"] == "esxilab.iperf.esxi_iperf_install: vib_upload: Could not find or access 'nowhere.zip'"
    assert host.commands == []


def test_failure_result_keeps_restore(tmp_path: Path) -> None:
    host = MappedHost(tmp_path / "s", "8.0")
    refused = _action({}, runner_over(host.execute)).run(task_vars={})
    assert refused["failed"] is True
    assert "set relax_exec_policy: true" in refused["msg"]
    assert refused["restore"] == {}

    relaxed = _action({"relax_exec_policy": True}, runner_over(host.execute)).run(task_vars={})
    assert not relaxed.get("failed"), relaxed.get("msg")
    assert relaxed["restore"] == {"created_files": [BUNDLED_IPERF3_COPY], "exec_installed_only_previous": 1}
    back = _action({"restore": relaxed["restore"]}, runner_over(host.execute)).run(task_vars={})
    assert back["changed"] is True and host.get("eio_runtime") == "1"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"vib_source": "http://x/iperf.vib", "vib_upload": "/tmp/iperf.zip"}, "mutually exclusive"),
        ({"restore": {}, "vib_source": "http://x/iperf.vib"}, "mutually exclusive"),
        ({"method": "copy"}, "value of method must be one of"),
        ({"relax_mode": "off"}, "value of relax_mode must be one of"),
    ],
)
def test_argument_validation(tmp_path: Path, args: dict[str, Any], message: str) -> None:
    host = MappedHost(tmp_path / "s", "7.0")
    from ansible.errors import AnsibleActionFail

    with pytest.raises(AnsibleActionFail) as err:
        _action(args, runner_over(host.execute)).run(task_vars={})
    assert message in str(err.value)
    assert host.commands == []


def test_documented_options_match_the_argument_spec() -> None:
    doc = yaml.safe_load(module_doc.DOCUMENTATION)
    assert doc["module"] == "esxi_iperf_install"
    options = {**doc["options"], **journal_fragment_options("DOCUMENTATION", "DEADLINE")}
    assert_options_documented(options, ARGUMENT_SPEC)
    for a, b in backend.MUTUALLY_EXCLUSIVE:
        assert f"O({b})" in " ".join(doc["options"][a]["description"]), (a, b)
    assert doc["attributes"]["check_mode"]["support"] == "full"
    assert doc["attributes"]["diff_mode"]["support"] == "full"
    examples = yaml.safe_load(module_doc.EXAMPLES)
    assert examples
    returned = yaml.safe_load(module_doc.RETURN)
    for key in ("binary", "tool", "tool_version", "esxi_version", "previous", "current", "restore", "commands"):
        assert key in returned, key
    assert set(returned["restore"]["sample"]) <= set(backend.RESTORE_KEYS)


def test_docs_only_module_holds_nothing_but_documentation() -> None:
    assert_docs_only(module_doc)
