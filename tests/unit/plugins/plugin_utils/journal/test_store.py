# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The restore journal and its dead-man timer, run by dash and busybox ash against the ESXi stand-in;
the firewall and install backends writing and clearing it; failures after a change keeping
``restore``; credentials in ``vib_source`` masked; the ``esxi_journal`` backend."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi import firewall_run, install_run
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.journal_run import run as journal_run
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.paths import BUNDLED_IPERF3_COPY
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import CommandOutput
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.owner import token
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.store import (
    Journal,
    JournalError,
    firewall_entries,
    install_entries,
    parse_output,
)
from tests.collection_path import REPO
from tests.unit.plugins.esxi_standin_host import MappedHost

STANDIN = REPO / "tests" / "esxi_standin"
SHELLS = {"dash": ["/bin/sh", "-c"], "busybox": ["busybox", "sh", "-c"]}


class Host(MappedHost):
    """An ESXi stand-in reached like the connection reaches ESXi (a shell running one command), host
    paths mapped into the stand-in's root; ``fail`` injects a failed command."""

    def __init__(self, tmp: Path, version: str, shell: str = "dash") -> None:
        self.argv = SHELLS[shell]
        if shutil.which(self.argv[0]) is None:
            pytest.skip(f"{self.argv[0]} is not installed")
        self.failing: Callable[[str], bool] = lambda _command: False
        super().__init__(tmp / "standin", version)
        self.commands.clear()

    def sh(self, command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.argv, command], env=self.env, capture_output=True, text=True, timeout=30, check=False
        )

    def execute(self, command: str) -> CommandOutput:
        if self.failing(command):
            self.commands.append(command)
            return CommandOutput(255, "", "injected failure")
        return super().execute(command)

    def fw_execute(self, command: str) -> CommandOutput:
        out = self.execute(command)
        return CommandOutput(out.rc, out.stdout, out.stderr)

    def path(self, host_path: str) -> Path:
        return Path(self.root + host_path)


def _wait(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


# --------------------------------------------------------------------------------------------
# The journal itself
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shell", sorted(SHELLS))
def test_earliest_value_wins_and_the_directory_is_private(tmp_path: Path, shell: str, reap: list[int]) -> None:
    host = Host(tmp_path, "8.0", shell)
    journal = Journal(host.execute, str(tmp_path / "j"), copy_dir=str(tmp_path / "copy"), host="esx1")
    assert journal.read().exists is False
    assert not (tmp_path / "j").exists()  # reading creates nothing

    first = journal.record(firewall={"enabled": True, "rulesets": {"sshServer": False}})
    reap.append(first.deadman_pid or 0)
    later = journal.record(
        firewall={"enabled": False, "default_action": "DROP"},
        install={"created_files": [BUNDLED_IPERF3_COPY], "exec_installed_only_previous": 1},
    )
    assert later.firewall == {"enabled": True, "default_action": "DROP", "rulesets": {"sshServer": False}}
    assert later.install == {"created_files": [BUNDLED_IPERF3_COPY], "exec_installed_only_previous": 1}
    assert later.deadman_running is True and later.deadman_pid == first.deadman_pid
    assert (tmp_path / "j").stat().st_mode & 0o777 == 0o700
    assert not list((tmp_path / "j").glob(".tmp.*"))
    copy = (tmp_path / "copy" / "esx1.json").read_text()
    assert '"enabled": true' in copy and BUNDLED_IPERF3_COPY in copy

    assert journal.clear(["firewall"]).install  # install entries stay; the timer stays for them
    assert _alive(first.deadman_pid or 0)
    empty = journal.clear(["install"])
    assert empty.pending is False and empty.deadman_running is False
    assert _wait(lambda: not _alive(first.deadman_pid or 0), 5)


def _foreign_dir(path: Path) -> None:
    path.mkdir()
    os.chown(path, 65534, 65534)


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda p: p.symlink_to(p.parent / "elsewhere"), "it is a symlink"),
        (lambda p: p.write_text("x"), "it is not a directory"),
        (_foreign_dir, "it is owned by uid 65534"),
    ],
    ids=["symlink", "file", "foreign-owner"],
)
def test_refused_directories(tmp_path: Path, make: Callable[[Path], Any], reason: str) -> None:
    if reason.startswith("it is owned") and os.geteuid() != 0:
        pytest.skip("chown needs root")
    host = Host(tmp_path, "7.0")
    (tmp_path / "elsewhere").mkdir()
    target = tmp_path / "j"
    make(target)
    journal = Journal(host.execute, str(target))
    for call in (journal.read, lambda: journal.record(firewall={"enabled": True})):
        with pytest.raises(JournalError) as err:
            call()
        assert reason in err.value.message
        assert "Fix: set journal_dir" in err.value.message
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_symlink_planted_at_a_key_is_replaced_not_followed(tmp_path: Path) -> None:
    host = Host(tmp_path, "7.0")
    directory = tmp_path / "j"
    directory.mkdir(mode=0o700)
    (directory / ".esxilab-journal").write_text("esxilab.iperf restore journal\n")
    victim = tmp_path / "victim"
    (directory / "firewall.enabled").symlink_to(victim)  # dangling: the key is not recorded yet
    Journal(host.execute, str(directory), deadline_seconds=0).record(firewall={"enabled": True})
    assert not victim.exists()
    assert not (directory / "firewall.enabled").is_symlink()
    assert (directory / "firewall.enabled").read_text() == "true\n"


def test_entries_are_validated() -> None:
    with pytest.raises(JournalError):
        firewall_entries({"rulesets": {"../../etc/x": True}})
    with pytest.raises(JournalError):
        install_entries({"created_files": ["/etc/passwd"]})
    assert install_entries({"installed_vib": "iperf"}) == ([("vib", "iperf")], [])
    with pytest.raises(JournalError):
        install_entries({"installed_vib": "esx-base"})  # only the VIB the collection installs
    with pytest.raises(JournalError, match="did not finish"):
        parse_output("/x", "\nT entry firewall.enabled\ntrue\n", "T")


# --------------------------------------------------------------------------------------------
# The dead-man timer
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shell", sorted(SHELLS))
def test_deadman_puts_everything_back_without_a_controller(tmp_path: Path, shell: str, reap: list[int]) -> None:
    host = Host(tmp_path, "8.0", shell)
    # 5 s: long enough that a loaded machine finishes opening before the timer fires
    journal = Journal(host.execute, str(tmp_path / "j"), deadline_seconds=5)
    installed = install_run.run({"relax_exec_policy": True}, host.execute, check_mode=False, journal=journal)
    assert installed["restore"] == {"created_files": [BUNDLED_IPERF3_COPY], "exec_installed_only_previous": 1}
    opened = firewall_run.run({"enabled": False}, host.fw_execute, check_mode=False, journal=journal)
    assert opened["changed"] is True
    pid = int((tmp_path / "j" / "deadman.pid").read_text())
    reap.append(pid)
    assert host.get("fw_enabled") == "false" and host.get("eio_runtime") == "0"

    # nothing but the timer on the host from here on
    assert _wait(lambda: not _alive(pid), 40), "the dead-man did not finish"
    assert host.get("fw_enabled") == "true"
    assert host.get("eio_runtime") == "1"
    assert not host.path(BUNDLED_IPERF3_COPY).exists()
    assert host.path("/usr/lib/vmware/vsan/bin/iperf3").exists()
    names = sorted(p.name for p in (tmp_path / "j").iterdir())
    assert names == [".esxilab-journal", "deadman.log", "deadman.sh", "fired"]
    log = (tmp_path / "j" / "deadman.log").read_text()
    assert "done: esxcli network firewall set --enabled true" in log and "restore finished" in log
    after = journal.read()
    assert after.pending is False and after.owner is None
    assert after.fired is not None and after.fired["run"] == token(journal.run)
    assert any("done: esxcli network firewall set --enabled true" in line for line in after.fired["log"])


def test_restore_stops_the_deadman_and_only_ours(tmp_path: Path, reap: list[int]) -> None:
    host = Host(tmp_path, "7.0")
    journal = Journal(host.execute, str(tmp_path / "j"), deadline_seconds=3600)
    firewall_run.run({"enabled": False}, host.fw_execute, check_mode=False, journal=journal)
    pid = int((tmp_path / "j" / "deadman.pid").read_text())
    reap.append(pid)
    back = firewall_run.run({"restore": {}}, host.fw_execute, check_mode=False, journal=journal)
    assert back["changed"] is True and back["journal_restored"] == {"enabled": True}  # from the journal alone
    assert host.get("fw_enabled") == "true"
    assert _wait(lambda: not _alive(pid), 5)
    assert journal.read().pending is False

    # a pid file naming someone else's process: never killed
    firewall_run.run({"enabled": False}, host.fw_execute, check_mode=False, journal=journal)
    reap.append(int((tmp_path / "j" / "deadman.pid").read_text()))
    os.kill(reap[-1], signal.SIGKILL)
    stranger = subprocess.Popen(["sleep", "60"])
    reap.append(stranger.pid)
    (tmp_path / "j" / "deadman.pid").write_text(f"{stranger.pid}\n")
    assert journal.read().deadman_running is False
    firewall_run.run({"restore": {}}, host.fw_execute, check_mode=False, journal=journal)
    assert stranger.poll() is None
    stranger.kill()
    stranger.wait(timeout=5)


# --------------------------------------------------------------------------------------------
# The backends: journal first, failures after a change keep 'restore'
# --------------------------------------------------------------------------------------------


def test_firewall_journal_is_written_before_the_first_change(tmp_path: Path, reap: list[int]) -> None:
    host = Host(tmp_path, "7.0")
    journal = Journal(host.execute, str(tmp_path / "j"), deadline_seconds=0)
    firewall_run.run({"enabled": False}, host.fw_execute, check_mode=False, journal=journal)
    record = next(i for i, c in enumerate(host.commands) if "firewall.enabled" in c and "_put" in c)
    change = host.commands.index("esxcli network firewall set --enabled false")
    assert record < change
    # check mode writes nothing
    firewall_run.run(
        {"enabled": True}, host.fw_execute, check_mode=True, journal=Journal(host.execute, str(tmp_path / "m"))
    )
    assert not (tmp_path / "m").exists()


def test_journal_that_cannot_be_written_changes_nothing(tmp_path: Path) -> None:
    host = Host(tmp_path, "7.0")
    (tmp_path / "j").symlink_to(tmp_path)
    with pytest.raises(firewall_run.EsxiFirewallError) as err:
        firewall_run.run(
            {"enabled": False}, host.fw_execute, check_mode=False, journal=Journal(host.execute, str(tmp_path / "j"))
        )
    assert "nothing was changed" in err.value.message
    assert err.value.result["changed"] is False
    assert host.get("fw_enabled") == "true"
    assert not [c for c in host.commands if c.startswith("esxcli network firewall set")]


def test_firewall_read_back_failure_returns_restore_and_changed(tmp_path: Path) -> None:
    host = Host(tmp_path, "8.0")
    gets = []

    def fail_second_get(command: str) -> bool:
        if command == "esxcli network firewall get":
            gets.append(command)
            return len(gets) == 2
        return False

    host.failing = fail_second_get
    journal = Journal(host.execute, str(tmp_path / "j"), deadline_seconds=0)
    with pytest.raises(firewall_run.EsxiFirewallError) as err:
        firewall_run.run({"enabled": False}, host.fw_execute, check_mode=False, journal=journal)
    assert "the changes were applied but reading them back failed" in err.value.message
    assert err.value.result["changed"] is True
    assert err.value.result["restore"] == {"enabled": True}
    assert journal.read().firewall == {"enabled": True}  # the host still knows, too
    host.failing = lambda _c: False
    back = firewall_run.run({"restore": {}}, host.fw_execute, check_mode=False, journal=journal)
    assert back["changed"] is True and host.get("fw_enabled") == "true"


@pytest.mark.parametrize("failing", ["for p in", f"{BUNDLED_IPERF3_COPY} -v"])
def test_install_read_back_failure_returns_restore_and_changed(tmp_path: Path, failing: str) -> None:
    host = Host(tmp_path, "8.0")
    seen: list[str] = []

    def fail_after_the_change(command: str) -> bool:
        seen.append(command)
        changed = any(c.startswith("cp ") for c in seen)
        return changed and command.startswith(failing)

    host.failing = fail_after_the_change
    with pytest.raises(install_run.EsxiInstallError) as err:
        install_run.run({"relax_exec_policy": True}, host.execute, check_mode=False)
    if failing == "for p in":
        assert "reading them back failed" in err.value.message
    assert err.value.result["changed"] is True
    assert err.value.result["restore"] == {"created_files": [BUNDLED_IPERF3_COPY], "exec_installed_only_previous": 1}


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        (
            "https://lab:s3cr3t@depot.example/iperf-2.0.5-1.x86_64.vib",
            "https://lab:***@depot.example/iperf-2.0.5-1.x86_64.vib",
        ),
        ("https://depot.example/iperf.vib?token=s3cr3t&x=1", "https://depot.example/iperf.vib?token=***&x=***"),
        ("https://lab:s3cr3t#/?x@depot.example/iperf.vib", "https://lab:***@depot.example/iperf.vib"),
        ("https://depot.example/iperf.vib#sig=s3cr3t", "https://depot.example/iperf.vib#***"),
    ],
)
def test_credentials_in_vib_source_are_masked(tmp_path: Path, url: str, masked: str) -> None:
    host = Host(tmp_path, "6.7")
    checked = install_run.run({"vib_source": url, "allow_unsigned": True}, host.execute, check_mode=True)
    command = checked["commands"][0]
    assert command.startswith("esxcli software vib install -v ") and command.endswith(" --no-sig-check")
    assert masked in command
    assert "s3cr3t" not in repr(checked)
    with pytest.raises(install_run.EsxiInstallError) as err:
        install_run.run({"vib_source": url}, host.execute, check_mode=False)  # refused: unsigned
    assert "s3cr3t" not in err.value.message + repr(err.value.result)
    assert any("s3cr3t" in c for c in host.commands)  # the host got the real URL


def test_a_vib_source_with_a_secret_reaches_the_host_on_stdin_never_on_a_command_line(tmp_path: Path) -> None:
    host = Host(tmp_path, "6.7")
    url = "https://depot.example/iperf.vib?token=s3cr3t"
    lines: list[tuple[str, str]] = []

    def execute_input(command: str, stdin: str) -> CommandOutput:
        lines.append((command, stdin))  # what a shell gets: `read` takes the line, "$src" expands to it
        return host.execute(command.removeprefix("IFS= read -r src && ").replace('"$src"', shlex.quote(stdin[:-1])))

    with pytest.raises(install_run.EsxiInstallError) as err:  # the stand-in refuses the unsigned VIB
        install_run.run({"vib_source": url}, host.execute, check_mode=False, execute_input=execute_input)
    assert lines == [('IFS= read -r src && esxcli software vib install -v "$src"', url + "\n")]
    assert "s3cr3t" not in err.value.message + repr(err.value.result)
    plain = Host(tmp_path / "plain", "6.7")  # a URL with no secret stays on the command line
    with pytest.raises(install_run.EsxiInstallError):
        source = {"vib_source": "http://depot.example/iperf.vib"}
        install_run.run(source, plain.execute, check_mode=False, execute_input=execute_input)
    assert len(lines) == 1


# --------------------------------------------------------------------------------------------
# esxi_journal: read / restore / clear
# --------------------------------------------------------------------------------------------


def test_journal_module_restores_what_an_interrupted_run_left(tmp_path: Path, reap: list[int]) -> None:
    host = Host(tmp_path, "8.0")
    journal = Journal(host.execute, str(tmp_path / "j"), deadline_seconds=3600)
    install_run.run({"relax_exec_policy": True}, host.execute, check_mode=False, journal=journal)
    firewall_run.run({"enabled": False}, host.fw_execute, check_mode=False, journal=journal)
    reap.append(int((tmp_path / "j" / "deadman.pid").read_text()))
    # ... and the run was killed here: the facts with the restore values are gone

    def go(mode: str, check_mode: bool = False) -> dict[str, Any]:
        return journal_run({"mode": mode}, journal, host.execute, check_mode=check_mode)

    read = go("read")
    assert read["changed"] is False and set(read["pending"]) == {"firewall", "install"}
    checked = go("restore", check_mode=True)
    assert checked["changed"] is True and host.get("fw_enabled") == "false"
    restored = go("restore")
    assert restored["changed"] is True
    assert restored["restored"] == {
        "firewall": {"enabled": True},
        "install": {"created_files": [BUNDLED_IPERF3_COPY], "exec_installed_only_previous": 1},
    }
    assert restored["commands"] == [
        "esxcli network firewall set --enabled true",
        "esxcli system settings advanced set -o /User/execInstalledOnly -i 1",
        f"rm -f {BUNDLED_IPERF3_COPY}",
    ]
    assert "recorded changes that were not put back" in restored["warnings"][0]
    assert (host.get("fw_enabled"), host.get("eio_runtime")) == ("true", "1")
    assert restored["journal"]["pending"] is False
    assert _wait(lambda: not _alive(reap[-1]), 5)
    again = go("restore")
    assert again["changed"] is False and again["commands"] == []

    firewall_run.run({"enabled": False}, host.fw_execute, check_mode=False, journal=journal)
    reap.append(int((tmp_path / "j" / "deadman.pid").read_text()))
    cleared = go("clear")
    assert cleared["changed"] is True and "without restoring" in cleared["warnings"][0]
    assert host.get("fw_enabled") == "false" and cleared["journal"]["pending"] is False


def test_an_unreadable_journal_does_not_stop_a_restore(tmp_path: Path) -> None:
    host = Host(tmp_path, "8.0")
    opened = firewall_run.run({"enabled": False}, host.fw_execute, check_mode=False)
    installed = install_run.run({"relax_exec_policy": True}, host.execute, check_mode=False)
    (tmp_path / "j").symlink_to(tmp_path)  # planted after the window opened
    bad = Journal(host.execute, str(tmp_path / "j"))
    fw = firewall_run.run({"restore": opened["restore"]}, host.fw_execute, check_mode=False, journal=bad)
    inst = install_run.run({"restore": installed["restore"]}, host.execute, check_mode=False, journal=bad)
    assert (host.get("fw_enabled"), host.get("eio_runtime")) == ("true", "1")
    assert "it is a symlink" in fw["warnings"][0] and "it is a symlink" in inst["warnings"][0]
