# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The restore journal's trust, ownership and best-effort restore, run by dash against the ESXi stand-in:
refused directories and values, bad options, two runs on one host, a restore that cannot put
everything back, a dead-man that fired, a lost session after a restore, Linux interface MTUs."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi import firewall_run, install_run
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.journal_run import EsxiJournalError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.journal_run import run as journal_run
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import CommandOutput
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.owner import (
    RunId,
    holder,
    owner_line,
    parse_owner,
    this_run,
    token,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.store import (
    MAX_DEADLINE,
    Journal,
    JournalError,
    journal_from_args,
)
from tests.collection_path import REPO
from tests.unit.plugins.plugin_utils.esxi.test_install_run import _bundle
from tests.unit.plugins.plugin_utils.journal.test_store import Host, _alive, _wait

A = RunId("controller-a", 4242, "170000")
B = RunId("controller-b", 4343, "170100")


def _journal(host: Host, path: Path, run: RunId = A, **kwargs: Any) -> Journal:
    kwargs.setdefault("deadline_seconds", 0)
    return Journal(host.execute, str(path), run=run, **kwargs)


def _restore(journal: Journal, host: Host, **args: Any) -> dict[str, Any]:
    return journal_run({"mode": "restore", **args}, journal, host.execute, check_mode=False)


# --------------------------------------------------------------------------------------------
# The directory: created by the collection, never changed, never shared
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "marker", "reason"),
    [
        (0o777, True, "it is writable by group or others (mode drwxrwxrwx"),
        (0o770, True, "it is writable by group or others (mode drwxrwx---"),
        (0o755, False, "it was not created by esxilab.iperf"),
    ],
    ids=["other-writable", "group-writable", "shared-no-marker"],
)
def test_an_existing_directory_is_checked_never_changed(tmp_path: Path, mode: int, marker: bool, reason: str) -> None:
    host = Host(tmp_path, "7.0")
    directory = tmp_path / "shared"
    directory.mkdir()
    directory.chmod(mode)
    (directory / "notes.txt").write_text("someone else's\n")
    if marker:
        (directory / ".esxilab-journal").write_text("planted\n")
        (directory / "firewall.enabled").write_text("false\n")  # planted by whoever can write there
    journal = _journal(host, directory)
    for call in (journal.read, lambda: journal.record(firewall={"enabled": True})):
        with pytest.raises(JournalError) as err:
            call()
        assert reason in err.value.message and "Fix: set journal_dir" in err.value.message
    assert directory.stat().st_mode & 0o777 == mode  # never chmod'ed
    assert sorted(p.name for p in directory.iterdir()) == sorted(
        ["notes.txt", *([".esxilab-journal", "firewall.enabled"] if marker else [])]
    )
    with pytest.raises(EsxiJournalError, match=r"writable by group or others|not created by esxilab"):
        _restore(journal, host)
    assert not any(c.startswith("esxcli network firewall set") for c in host.commands)


def test_a_parent_writable_by_others_is_refused_unless_sticky(tmp_path: Path) -> None:
    host = Host(tmp_path, "7.0")
    parent = tmp_path / "open"
    parent.mkdir()
    parent.chmod(0o777)
    with pytest.raises(JournalError, match=r"its parent .* is writable by group or others"):
        _journal(host, parent / "j").record(firewall={"enabled": True})
    assert not (parent / "j").exists() or not any((parent / "j").iterdir())
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    state = _journal(host, sticky / "j").record(firewall={"enabled": True})
    assert state.firewall == {"enabled": True} and (sticky / "j" / ".esxilab-journal").is_file()
    assert (sticky / "j").stat().st_mode & 0o777 == 0o700


# --------------------------------------------------------------------------------------------
# Values: only what the collection writes is applied
# --------------------------------------------------------------------------------------------


def test_planted_values_are_rejected_kept_and_never_applied(tmp_path: Path) -> None:
    host = Host(tmp_path, "8.0")
    journal = _journal(host, tmp_path / "j")
    journal.record(firewall={"enabled": True}, install={"exec_installed_only_previous": 1})
    host.set("fw_enabled", "false")
    host.set("eio_runtime", "0")
    directory = tmp_path / "j"
    (directory / "vib").write_text("esx-base\n")  # restore must never remove a VIB of ESXi
    (directory / "firewall.default_action").write_text("PASS\nfirewall.enabled=false\n")
    (directory / "files").write_text("/etc/passwd\n")
    (directory / "firewall.ruleset.x\nfirewall.enabled").write_text("false\n")  # a forged name
    state = journal.read()
    assert state.firewall == {"enabled": True} and state.install == {"exec_installed_only_previous": 1}
    assert set(state.rejected) == {
        "vib",
        "firewall.default_action",
        "files: '/etc/passwd'",
        "(a file name with characters the collection never writes)",
    }
    assert "esx-base" in state.rejected["vib"] and "not the VIB this collection installs" in state.rejected["vib"]

    with pytest.raises(EsxiJournalError) as err:
        _restore(journal, host, remove_vib=True)
    message = err.value.message
    assert "vib: 'esx-base' is not the VIB this collection installs (iperf)" in message
    assert "files: '/etc/passwd'" in message
    assert not any("vib remove" in c or "/etc/passwd" in c for c in host.commands)
    assert (host.get("fw_enabled"), host.get("eio_runtime")) == ("true", "1")  # the good entries are back
    assert (directory / "vib").read_text() == "esx-base\n"  # kept for a person to look at
    assert not (directory / "firewall.enabled").exists()


# --------------------------------------------------------------------------------------------
# Options: a clear error naming the option and the fix, before anything runs on a host
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "option"),
    [
        ({"deadline": -5}, "deadline must be 0 (no dead-man timer) or 1-604800 seconds, got -5"),
        ({"deadline": 10**12}, f"deadline must be 0 (no dead-man timer) or 1-{MAX_DEADLINE} seconds"),
        ({"journal_dir": "relative/dir"}, "journal_dir must be an absolute path"),
        ({"journal_dir": "/scratch/a\nb"}, "journal_dir must be an absolute path without control characters"),
    ],
    ids=["deadline-negative", "deadline-huge", "journal_dir-relative", "journal_dir-newline"],
)
def test_bad_options_are_refused_before_the_host_is_touched(args: dict[str, Any], option: str) -> None:
    calls: list[str] = []

    def execute(command: str) -> CommandOutput:
        calls.append(command)
        return CommandOutput(0, "", "")

    with pytest.raises(JournalError) as err:
        journal_from_args(args, execute, "esx1")
    assert option in err.value.message and "Fix:" in err.value.message
    assert calls == []


def test_a_journal_copy_dir_naming_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    for copy_dir in (tmp_path / "afile", tmp_path / "afile" / "below"):
        with pytest.raises(JournalError) as err:
            journal_from_args({"journal_copy_dir": str(copy_dir)}, lambda c: CommandOutput(0, "", ""), "esx1")
        assert f"journal_copy_dir {str(copy_dir)!r}" in err.value.message
        assert "is not a directory. Fix: give journal_copy_dir" in err.value.message


# --------------------------------------------------------------------------------------------
# Best effort, then loud
# --------------------------------------------------------------------------------------------


def test_an_entry_that_cannot_apply_is_kept_the_others_are_restored(tmp_path: Path, reap: list[int]) -> None:
    host = Host(tmp_path, "8.0")
    journal = _journal(host, tmp_path / "j", deadline_seconds=3600)
    install_run.run({"relax_exec_policy": True}, host.execute, check_mode=False, journal=journal)
    firewall_run.run({"enabled": False}, host.fw_execute, check_mode=False, journal=journal)
    reap.append(int((tmp_path / "j" / "deadman.pid").read_text()))
    # a ruleset recorded earlier that the host no longer has (removed with its VIB)
    (tmp_path / "j" / "firewall.ruleset.iperfVib").write_text("true\n")

    with pytest.raises(EsxiJournalError) as err:
        _restore(journal, host)
    assert "firewall.ruleset.iperfVib: the host has no ruleset 'iperfVib' any more" in err.value.message
    result = err.value.result
    assert set(result["left"]) == {"firewall.ruleset.iperfVib"}
    assert (host.get("fw_enabled"), host.get("eio_runtime")) == ("true", "1")
    assert sorted(p.name for p in (tmp_path / "j").glob("firewall.*")) == ["firewall.ruleset.iperfVib"]
    assert not list((tmp_path / "j").glob("exec.*")) and not (tmp_path / "j" / "files").exists()
    # the role's always: restore behaves alike: the rest back, the task fails naming what is left
    host.set("fw_enabled", "false")
    (tmp_path / "j" / "firewall.enabled").write_text("true\n")
    with pytest.raises(firewall_run.EsxiFirewallError, match=r"journal keeps what could not: firewall\.ruleset"):
        firewall_run.run({"restore": {}}, host.fw_execute, check_mode=False, journal=journal)
    assert host.get("fw_enabled") == "true" and not (tmp_path / "j" / "firewall.enabled").exists()


def test_a_failed_restore_command_does_not_stop_the_later_ones(tmp_path: Path, reap: list[int]) -> None:
    host = Host(tmp_path, "7.0")
    journal = _journal(host, tmp_path / "j", deadline_seconds=3600)
    firewall_run.run(
        {"enabled": False, "default_action": "PASS", "rulesets": {"sshClient": True}},
        host.fw_execute,
        check_mode=False,
        journal=journal,
    )
    reap.append(int((tmp_path / "j" / "deadman.pid").read_text()))
    assert (host.get("fw_enabled"), host.get("fw_default_action")) == ("false", "PASS")
    host.failing = lambda command: "ruleset set" in command  # the first restore step fails

    with pytest.raises(firewall_run.EsxiFirewallError) as err:
        firewall_run.run({"restore": {}}, host.fw_execute, check_mode=False, journal=journal)
    # the steps after it still ran: the default action, then the firewall's enabled state (last)
    assert (host.get("fw_enabled"), host.get("fw_default_action")) == ("true", "DROP")
    assert set(err.value.result["left"]) == {"firewall.ruleset.sshClient"}
    assert "firewall.ruleset.sshClient: 'esxcli network firewall ruleset set" in err.value.message
    assert "injected failure" in err.value.message and "playbooks/restore.yml" in err.value.message
    assert sorted(p.name for p in (tmp_path / "j").glob("firewall.*")) == ["firewall.ruleset.sshClient"]
    # the role's restore leaves the dead-man running for what is left
    assert _alive(reap[-1])

    # restore.yml: the same entry left, the dead-man stopped, and the message says nothing retries it
    with pytest.raises(EsxiJournalError) as again:
        _restore(journal, host)
    assert set(again.value.result["left"]) == {"firewall.ruleset.sshClient"}
    assert "dead-man timer is stopped" in again.value.message and "nothing puts these back by itself" in (
        again.value.message
    )
    assert _wait(lambda: not _alive(reap[-1]), 10)
    assert (tmp_path / "j" / "firewall.ruleset.sshClient").exists()
    host.failing = lambda _command: False  # the cause is fixed: restore.yml puts it back
    done = _restore(journal, host)
    assert done["restored"] == {"firewall": {"rulesets": {"sshClient": False}}} and not done["left"]
    assert not list((tmp_path / "j").glob("firewall.*"))


def test_a_kept_vib_stays_journaled_for_restore_yml_and_opens_no_window(tmp_path: Path) -> None:
    host = Host(tmp_path, "6.7")
    journal = _journal(host, tmp_path / "j")
    vibs = host.state / "vibs"
    installed = install_run.run(
        {"vib_source": _bundle(tmp_path), "allow_unsigned": True}, host.execute, check_mode=False, journal=journal
    )
    assert installed["restore"]["installed_vib"] == "iperf" and (tmp_path / "j" / "vib").exists()
    # the role's always: restore (remove_vib: false) keeps the VIB, and so its journal entry
    kept = install_run.run({"restore": installed["restore"]}, host.execute, check_mode=False, journal=journal)
    assert any("restore.yml -e esxilab_restore_remove_vib=true" in w for w in kept["warnings"])
    assert (tmp_path / "j" / "vib").read_text() == "iperf\n" and not (tmp_path / "j" / "files").exists()
    state = journal.read()
    assert state.install == {"installed_vib": "iperf"} and state.pending is False
    # no window for the owner check: another run is not refused, and its unfinished-window put-back has nothing
    other = _journal(host, tmp_path / "j", run=B)
    assert other.holder(other.read()) == "none"
    nothing = _restore(other, host, scope=["install", "firewall"])
    assert (nothing["changed"], nothing["pending"], nothing["restored"]) == (False, {}, {})
    assert "iperf|" in vibs.read_text() and (tmp_path / "j" / "vib").exists()
    # restore.yml -e esxilab_restore_remove_vib=true still removes it
    removed = _restore(other, host, remove_vib=True)
    assert removed["restored"] == {"install": {"installed_vib": "iperf"}}
    assert "esxcli software vib remove -n iperf" in removed["commands"] and "iperf|" not in vibs.read_text()
    assert not (tmp_path / "j" / "vib").exists() and removed["journal"]["owner"] is None


def test_a_lost_session_after_the_restore_never_lets_the_deadman_apply_again(tmp_path: Path, reap: list[int]) -> None:
    host = Host(tmp_path, "7.0")
    journal = _journal(host, tmp_path / "j", deadline_seconds=3600)
    firewall_run.run({"enabled": False}, host.fw_execute, check_mode=False, journal=journal)
    reap.append(int((tmp_path / "j" / "deadman.pid").read_text()))
    host.failing = lambda command: "_any ||" in command  # every clear script is lost
    back = firewall_run.run({"restore": {}}, host.fw_execute, check_mode=False, journal=journal)
    assert back["journal_clear_failed"] is True and "could not be cleared" in back["warnings"][-1]
    assert host.get("fw_enabled") == "true"
    # the entry went with the command that put the value back: the dead-man has nothing to re-apply
    assert not (tmp_path / "j" / "firewall.enabled").exists()
    assert _wait(lambda: not _alive(reap[-1]), 10)


# --------------------------------------------------------------------------------------------
# A journal has an owner
# --------------------------------------------------------------------------------------------


def test_holder_decisions() -> None:
    me = A
    here = RunId(A.host, 1, "2")
    assert holder(None, me, pending=True, now=10, deadline=20) == "none"
    assert holder(B, me, pending=False, now=10, deadline=20) == "none"
    assert holder(A, me, pending=True, now=10, deadline=20) == "mine"
    assert holder(B, me, pending=True, now=10, deadline=20) == "live"
    assert holder(B, me, pending=True, now=30, deadline=20) == "gone"
    assert holder(B, me, pending=True, now=30, deadline=None) == "live"  # no dead-man: only takeover ends it
    assert holder(here, me, pending=True, now=10, deadline=None, state=lambda text, run: "live") == "live"
    assert holder(here, me, pending=True, now=10, deadline=10**9, state=lambda text, run: "gone") == "gone"
    assert parse_owner(owner_line(B)) == B and parse_owner(owner_line(B).replace("4343", "4344")) is None
    assert this_run().pid == os.getppid()


def test_a_second_run_refuses_a_live_window_and_takes_over_on_request(tmp_path: Path, reap: list[int]) -> None:
    host = Host(tmp_path, "7.0")
    first = _journal(host, tmp_path / "j", A, deadline_seconds=3600)
    firewall_run.run({"enabled": False}, host.fw_execute, check_mode=False, journal=first)
    pid_a = int((tmp_path / "j" / "deadman.pid").read_text())
    reap.append(pid_a)

    second = _journal(host, tmp_path / "j", B, deadline_seconds=3600)
    with pytest.raises(firewall_run.EsxiFirewallError) as err:
        firewall_run.run({"rulesets": {"sshServer": False}}, host.fw_execute, check_mode=False, journal=second)
    assert "held by the run of pid 4242 on controller controller-a" in err.value.message
    assert "takeover: true" in err.value.message
    with pytest.raises(EsxiJournalError, match="held by the run of pid 4242"):
        _restore(second, host)  # B's recovery step does not close A's window either
    assert host.get("fw_enabled") == "false"
    assert journal_run({"mode": "read"}, second, host.execute, check_mode=False)["holder"] == "live"

    taker = _journal(host, tmp_path / "j", B, deadline_seconds=3600, takeover=True)
    firewall_run.run({"rulesets": {"sshServer": False}}, host.fw_execute, check_mode=False, journal=taker)
    reap.append(int((tmp_path / "j" / "deadman.pid").read_text()))
    assert taker.read().owner == B
    assert _wait(lambda: not _alive(pid_a), 10), "A's dead-man must leave B's window alone"
    # A's always: restore puts back its own value only and leaves B's journal to B
    mine = firewall_run.run({"restore": {"enabled": True}}, host.fw_execute, check_mode=False, journal=first)
    assert any("now belongs to the run of pid 4343" in w for w in mine["warnings"])
    assert (tmp_path / "j" / "firewall.ruleset.sshServer").exists()
    assert _restore(taker, host)["restored"] == {"firewall": {"enabled": True, "rulesets": {"sshServer": True}}}
    assert taker.read().owner is None


def test_a_window_of_a_gone_run_is_recovered(tmp_path: Path) -> None:
    host = Host(tmp_path, "7.0")
    dead = subprocess.Popen(["true"])
    dead.wait(timeout=10)
    gone = RunId(this_run().host, dead.pid, "1")  # this controller, its process ended
    firewall_run.run(
        {"enabled": False}, host.fw_execute, check_mode=False, journal=_journal(host, tmp_path / "j", gone)
    )
    now = _journal(host, tmp_path / "j", this_run())
    assert now.holder(now.read()) == "gone"
    restored = _restore(now, host)
    assert restored["restored"] == {"firewall": {"enabled": True}} and host.get("fw_enabled") == "true"


def _journal_tasks(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, list):
        return [task for item in node for task in _journal_tasks(item)]
    if not isinstance(node, dict):
        return []
    own = [node["esxilab.iperf.esxi_journal"]] if "esxilab.iperf.esxi_journal" in node else []
    return own + [task for value in node.values() for task in _journal_tasks(value)]


@pytest.mark.parametrize("playbook", ["mtu-compare.yml", "restore.yml"])
def test_playbook_journal_tasks_honour_the_takeover_the_refusal_names(playbook: str) -> None:
    # the refusal of a live window says "inventory esxilab_journal_takeover": every task that may refuse passes it
    tasks = _journal_tasks(yaml.safe_load((REPO / "playbooks" / playbook).read_text()))
    changing = [task for task in tasks if task.get("mode") in ("record", "restore", "clear")]
    assert changing
    for task in changing:
        assert task.get("takeover") == "{{ esxilab_journal_takeover | default(false) | bool }}", task


def test_a_fired_deadman_is_reported_then_acknowledged(tmp_path: Path, reap: list[int]) -> None:
    host = Host(tmp_path, "7.0")
    journal = _journal(host, tmp_path / "j", deadline_seconds=3600)
    firewall_run.run({"enabled": False}, host.fw_execute, check_mode=False, journal=journal)
    reap.append(int((tmp_path / "j" / "deadman.pid").read_text()))
    (tmp_path / "j" / "deadline").write_text(f"{int(time.time())}\n")  # the deadline has come
    assert _wait(lambda: not _alive(reap[-1]), 15)
    assert host.get("fw_enabled") == "true"
    read = journal_run({"mode": "read"}, journal, host.execute, check_mode=False)
    assert read["fired"]["run"] == token(A)
    assert any(
        "dead-man timer of" in w and "fired at" in w and "firewall set --enabled true" in w for w in read["warnings"]
    )
    restored = _restore(journal, host)
    assert restored["changed"] is False and restored["fired"] is not None  # reported once more, then dropped
    assert journal_run({"mode": "read"}, journal, host.execute, check_mode=False)["fired"] is None


# --------------------------------------------------------------------------------------------
# Linux hosts: an interface's MTU
# --------------------------------------------------------------------------------------------


class LinkHost:
    """A Linux host with one interface: ``/sys/class/net/IF/mtu`` and ``ip link set`` answered from a dict."""

    def __init__(self, tmp: Path) -> None:
        self.mtu = {"eth1": 9000}
        self.commands: list[str] = []

    def execute(self, command: str) -> CommandOutput:
        self.commands.append(command)
        if command.startswith("cat /sys/class/net/"):
            name = command.split("/")[4]
            return CommandOutput(0, f"{self.mtu[name]}\n", "") if name in self.mtu else CommandOutput(1, "", "no")
        if command.startswith("ip link set dev "):
            words = command.split()
            if words[4] not in self.mtu:
                return CommandOutput(1, "", "Cannot find device")
            self.mtu[words[4]] = int(words[6])
            rest = command.partition(" && ")[2]
            command = rest or ":"
        proc = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, timeout=30, check=False)
        return CommandOutput(proc.returncode, proc.stdout, proc.stderr)


def test_a_linux_mtu_is_journaled_before_and_put_back_after(tmp_path: Path) -> None:
    host = LinkHost(tmp_path)
    journal = Journal(host.execute, str(tmp_path / "j"), run=A, deadline_seconds=0)

    def task(mode: str, **args: Any) -> dict[str, Any]:
        return journal_run({"mode": mode, **args}, journal, host.execute, check_mode=False)

    assert task("record", links=["eth1"])["recorded"] == {"link": {"mtu": {"eth1": 9000}}}
    host.mtu["eth1"] = 1500  # the playbook's change; then the run is killed
    assert task("record", links=["eth1"])["changed"] is False  # the earliest value wins
    restored = task("restore")
    assert restored["restored"] == {"link": {"mtu": {"eth1": 9000}}} and host.mtu["eth1"] == 9000
    assert restored["commands"] == ["ip link set dev eth1 mtu 9000"] and restored["journal"]["pending"] is False
    with pytest.raises(EsxiJournalError, match="links: cannot read the MTU of interface 'eth9'"):
        task("record", links=["eth9"])
    with pytest.raises(EsxiJournalError, match="interface name 'a;b' cannot be journaled"):
        task("record", links=["a;b"])

    task("record", links=["eth1"])
    del host.mtu["eth1"]  # the interface is gone: kept and named
    with pytest.raises(EsxiJournalError, match=r"link\.eth1\.mtu: interface eth1 is gone"):
        task("restore")
    assert (tmp_path / "j" / "link.eth1.mtu").read_text() == "9000\n"
