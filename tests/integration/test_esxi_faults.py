# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fault matrix: kill a benchmark window at every point, then prove each way back restores the host.

Real parts: ``ansible-playbook`` over real SSH to lab hosts (``lab/esxilab_lab.py``, prefix
``eljr``, 198.19.230.0/24) that answer like ESXi (``tests/esxi_standin``), as in
``test_esxi_e2e.py``. Six stand-in hosts run the same window (``targets/esxi/fault_window.yml``:
esxi_iperf copy, on 8.0 with ``execInstalledOnly`` relaxed -> firewall off -> two client runs ->
firewall restore -> iperf restore) at once; per release (7.0: h1-h3, 8.0: h4-h6) one host is put
back by each way:

* **restore.yml** (h1, h4) - ``playbooks/restore.yml``;
* **next run** (h2, h5) - the same window played again, which restores the unfinished one first;
* **dead-man** (h3, h6) - no controller at all: the timer on the host. Its deadline is set long
  for the play (it must not fire inside the window) and then moved to "now" in the journal's
  ``deadline`` file, as if the time had passed (a real 1 s deadline is proven in
  ``tests/unit/plugins/plugin_utils/journal/test_store.py``).

Faults: SIGINT and SIGTERM to ``ansible-playbook`` (the main process only, as AWX does) when the
window has just opened (the stand-ins report the firewall off), during a client run (marker
files; with SIGINT a real iperf3 client is running), between the runs, during the restore
(firewall back, iperf not yet); a read-back failure injected after ``firewall set``; and an SSH
cut (the hosts' links down) with the window open. Every signal is sent when the observable state
says the point is reached, not after a sleep.

After each way back, the whole stand-in state (``esxi-standin show`` without its logs), the files
under ``/usr/lib/vmware`` and ``/opt`` and the journal must equal the state before the window, and
no dead-man may be left running; a dead-man that restored must leave its ``fired`` record. The
matrix is printed (``pytest -s``) and written to ``fault-matrix.txt`` in the test's temporary
directory.

Beside the matrix: a journal entry that cannot apply (a ruleset the host no longer has) is kept and
named by ``restore.yml`` while the rest is put back; a fired dead-man is reported by ``restore.yml``
and by the next run; a second ``ansible-playbook`` on a host whose window a live run holds refuses,
naming that run's pid, and takes the window over with ``esxilab_journal_takeover``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.collection_path import REPO
from tests.integration import labkit
from tests.integration.labkit import skip_if
from tests.integration.test_esxi_e2e import STANDIN, TARGETS, _lab_unavailable

pytestmark = [pytest.mark.lab, pytest.mark.slow]

# overridable so that parallel sessions can run this file on their own lab prefix and subnet
PREFIX = os.environ.get("ESXILAB_FAULTS_PREFIX", "eljr")
SUBNET = os.environ.get("ESXILAB_FAULTS_SUBNET", "198.19.230")
HOSTS = {  # name: (release, way back)
    "h1": ("7.0", "restore.yml"),
    "h2": ("7.0", "next run"),
    "h3": ("7.0", "dead-man"),
    "h4": ("8.0", "restore.yml"),
    "h5": ("8.0", "next run"),
    "h6": ("8.0", "dead-man"),
}
WAYS = ("restore.yml", "next run", "dead-man")
RELEASES = ("7.0", "8.0")
PLAY_TIMEOUT = 120
POINT_TIMEOUT = 60
PORT = 25600


def _addr(name: str) -> str:
    return f"{SUBNET}.{10 + int(name[1:])}"


@dataclass
class Cell:
    left: str = ""
    results: dict[str, str] = field(default_factory=dict)


@dataclass
class FaultLab:
    base: Path
    matrix: dict[str, dict[str, Cell]] = field(default_factory=dict)
    plays: int = 0

    @property
    def state_dir(self) -> Path:
        return self.base / "lab"

    def standin(self, host: str) -> Path:
        return self.base / f"standin-{host}"

    def journal(self, host: str) -> Path:
        return self.base / f"journal-{host}"

    def files(self, host: str) -> tuple[Path, Path]:
        return self.base / f"{host}-vmware", self.base / f"{host}-opt"

    @property
    def kit(self) -> labkit.Lab:
        return labkit.Lab(PREFIX, self.state_dir, timeout=180)

    def up_args(self) -> list[str]:
        path = f"{STANDIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        args = ["--hosts", str(len(HOSTS)), "--subnet", f"{SUBNET}.0/24"]
        for host in HOSTS:
            vmware, opt = self.files(host)
            args += [
                *("--host-env", f"{host}=PATH={path}"),
                *("--host-env", f"{host}=ESXI_STANDIN_STATE={self.standin(host)}"),
                *("--host-env", f"{host}=ESXI_STANDIN_ROOT=/"),
                *("--host-bind", f"{host}={vmware}:/usr/lib/vmware"),
                *("--host-bind", f"{host}={opt}:/opt"),
            ]
        return args

    def ssh(self, host: str, command: str) -> subprocess.CompletedProcess[str]:
        return self.kit.ssh(_addr(host), command)

    def local_standin(self, host: str, *args: str) -> str:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("ESXI_STANDIN_")},
            "ESXI_STANDIN_STATE": str(self.standin(host)),
        }
        proc = subprocess.run(
            [str(STANDIN / "esxi-standin"), *args], env=env, capture_output=True, text=True, timeout=20, check=False
        )
        assert proc.returncode == 0, proc
        return proc.stdout

    # ---------------------------------------------------------------- the host's state
    def reset(self, host: str) -> None:
        self.stop_deadman(host)
        shutil.rmtree(self.journal(host), ignore_errors=True)
        for directory in self.files(host):
            for child in directory.iterdir():
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        (self.base / "remote" / host).mkdir(parents=True, exist_ok=True)
        proc = self.ssh(host, f"esxi-standin init {HOSTS[host][0]}")
        assert proc.returncode == 0, proc

    def snapshot(self, host: str) -> dict[str, Any]:
        """The stand-in state without its logs, the host files, and the pending journal entries."""
        shown, skip = [], False
        for line in self.local_standin(host, "show").splitlines():
            if line.startswith("--- "):
                skip = line in ("--- calls.log", "--- vobd.log")
            if not skip:
                shown.append(line)
        files = sorted(
            f"{p.relative_to(root.parent)} {p.stat().st_size} {oct(p.stat().st_mode & 0o7777)}"
            for root in self.files(host)
            for p in root.rglob("*")
            if p.is_file()
        )
        journal = self.journal(host)
        pending = sorted(
            p.name
            for p in (journal.iterdir() if journal.is_dir() else [])
            if p.name not in ("deadman.sh", "deadman.log", ".esxilab-journal", "fired")  # not pending: records
        )
        return {"state": shown, "files": files, "journal": pending, "deadman": self.deadman_alive(host)}

    def value(self, host: str, key: str) -> str:
        path = self.standin(host) / key
        return path.read_text().strip() if path.exists() else ""

    def deadman_pids(self, host: str) -> list[int]:
        needle = f"{self.journal(host)}/deadman.sh".encode()
        pids = []
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit():
                with contextlib.suppress(OSError):
                    if needle in (proc / "cmdline").read_bytes():
                        pids.append(int(proc.name))
        return pids

    def deadman_alive(self, host: str) -> bool:
        return bool(self.deadman_pids(host))

    def stop_deadman(self, host: str) -> None:
        for pid in self.deadman_pids(host):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def link(self, host: str, state: str) -> None:
        subprocess.run(["ip", "link", "set", "dev", f"{PREFIX}-v{host[1:]}", state], check=True, timeout=10)

    # ---------------------------------------------------------------- plays
    def inventory(self, tmp: Path) -> Path:
        names = list(HOSTS)
        hosts = {
            host: {
                "fm_version": release,
                "fm_neighbour": names[(i + 1) % len(names)],
                "fm_remote_dir": str(self.base / "remote" / host),
                "esxilab_journal_dir": str(self.journal(host)),
                "esxilab_journal_copy_dir": str(tmp / "journal-copy"),
                "esxi_firewall_deadline": 600,
                "esxi_iperf_deadline": 600,
            }
            for i, (host, (release, _way)) in enumerate(HOSTS.items())
        }
        path = tmp / "esxi.yml"
        path.write_text(json.dumps({"all": {"children": {"esxi": {"hosts": hosts}}}}))
        return path

    def start(self, tmp: Path, playbooks: list[Path], variables: dict[str, Any], log: Path) -> subprocess.Popen[str]:
        self.plays += 1
        vars_file = tmp / f"vars-{time.monotonic_ns()}.json"
        vars_file.write_text(json.dumps({"fm_markers": str(tmp / "markers"), **variables}))
        (tmp / "markers").mkdir(exist_ok=True)
        argv = [
            str(labkit.ANSIBLE_PLAYBOOK),
            *("-i", str(self.kit.inventory), "-i", str(self.inventory(tmp))),
            *(str(p) for p in playbooks),
            *("-e", f"@{vars_file}"),
        ]
        env = labkit.ansible_env(
            ANSIBLE_FORKS="6",
            ANSIBLE_TIMEOUT="5",
            ANSIBLE_SSH_ARGS="-C -o ControlMaster=auto -o ControlPersist=60s -o ServerAliveInterval=1"
            " -o ServerAliveCountMax=3",
        )
        handle = log.open("w")
        return subprocess.Popen(
            argv, stdout=handle, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True
        )


def _finish(proc: subprocess.Popen[str], timeout: float) -> int:
    """Wait for the play; then end what is left of its process group (workers, ssh)."""
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        raise
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    return rc


def _wait_for(condition: Callable[[], bool], timeout: float, proc: subprocess.Popen[str] | None = None) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        if proc is not None and proc.poll() is not None:
            return condition()
        time.sleep(0.05)
    return condition()


def _iperf_client_running() -> bool:
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                argv = (proc / "cmdline").read_bytes().split(b"\0")
                if argv and argv[0].endswith(b"iperf3") and b"-c" in argv and any(SUBNET.encode() in a for a in argv):
                    return True
    return False


def _describe(lab: FaultLab, host: str, before: dict[str, Any]) -> str:
    """What the fault left changed on ``host``, in a few words."""
    now = lab.snapshot(host)
    if now["state"] == before["state"] and now["files"] == before["files"] and not now["journal"]:
        return "nothing"
    parts = []
    if lab.value(host, "fw_enabled") == "false":
        parts.append("fw off")
    if HOSTS[host][0] == "8.0" and lab.value(host, "eio_runtime") == "0":
        parts.append("eio 0")
    if any("iperf3.copy" in f for f in now["files"]):
        parts.append("copy")
    if now["deadman"]:
        parts.append("timer")
    return ", ".join(parts) or "journal"


# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fault_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultLab]:
    skip_if(_lab_unavailable())
    lab = FaultLab(base=tmp_path_factory.mktemp(PREFIX))
    for host in HOSTS:
        for directory in (*lab.files(host), lab.standin(host)):
            directory.mkdir()
    started = time.monotonic()
    try:
        with lab.kit.session(*lab.up_args()):
            try:
                yield lab
            finally:
                for host in HOSTS:
                    lab.stop_deadman(host)
                    with contextlib.suppress(subprocess.CalledProcessError):
                        lab.link(host, "up")
    finally:
        table = _table(lab.matrix)
        footer = f"\n{lab.plays} ansible-playbook runs, {time.monotonic() - started:.0f} s\n"
        (lab.base / "fault-matrix.txt").write_text(table + footer)
        print("\n" + table + footer + f"(also in {lab.base / 'fault-matrix.txt'})")


def _table(matrix: dict[str, dict[str, Cell]]) -> str:
    columns = [f"{r} {what}" for r in RELEASES for what in ("left", *WAYS)]
    rows = []
    for fault, by_release in matrix.items():
        row = [fault]
        for release in RELEASES:
            cell = by_release.get(release, Cell())
            row += [cell.left, *(cell.results.get(way, "-") for way in WAYS)]
        rows.append(row)
    header = ["fault", *columns]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = [" | ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in [header, *rows]]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "FAULT MATRIX (each cell: the host's state after that way back, compared with before the window)\n" + (
        "\n".join(lines)
    )


FAULTS = [
    ("SIGINT", "window opened"),
    ("SIGINT", "client run"),
    ("SIGINT", "between runs"),
    ("SIGINT", "restore"),
    ("SIGTERM", "window opened"),
    ("SIGTERM", "client run"),
    ("SIGTERM", "between runs"),
    ("SIGTERM", "restore"),
    ("read-back failure", "firewall get after set"),
    ("SSH cut", "window opened"),
]


# make test plays one cell per kind of fault (each signal, the read-back failure, the SSH cut), at the points
# where the most is open; make test-full plays the whole matrix.
IN_MAKE_TEST = {("SIGINT", "client run"), ("SIGTERM", "restore"), ("read-back failure", "firewall get after set"),
                ("SSH cut", "window opened")}  # fmt: skip
CELLS = [
    pytest.param(f, p, id=f"{f}-{p}".replace(" ", "_"), marks=() if (f, p) in IN_MAKE_TEST else pytest.mark.full)
    for f, p in FAULTS
]


@pytest.mark.parametrize(("fault", "point"), CELLS)
def test_fault_then_every_way_back_restores_the_host(
    fault_lab: FaultLab, tmp_path: Path, fault: str, point: str
) -> None:
    lab = fault_lab
    name = f"{fault} {point}"
    for host in HOSTS:
        lab.reset(host)
    baseline = {host: lab.snapshot(host) for host in HOSTS}
    client = "iperf" if (fault, point) == ("SIGINT", "client run") else "sleep"
    variables = {"fm_client": client, "fm_port": PORT + len(lab.matrix) * 2, "fm_hosts": "esxi", "fm_sleep": 1}
    markers = tmp_path / "markers"

    def all_markers(kind: str) -> Callable[[], bool]:
        return lambda: all((markers / f"{host}-{kind}").exists() for host in HOSTS)

    def window_open() -> bool:
        return all(lab.value(host, "fw_enabled") == "false" for host in HOSTS)

    if fault == "read-back failure":
        for host in HOSTS:
            lab.local_standin(host, "set", "inject_after", "esxcli network firewall set")
            lab.local_standin(host, "set", "inject_fail", "esxcli network firewall get")
    proc = lab.start(tmp_path, [TARGETS / "fault_window.yml"], variables, tmp_path / "fault.log")
    try:
        if fault in ("SIGINT", "SIGTERM"):
            condition = {
                "window opened": window_open,
                "client run": all_markers("run1"),
                "between runs": all_markers("between"),
                "restore": all_markers("restoring"),
            }[point]
            assert _wait_for(condition, POINT_TIMEOUT, proc), f"{name}: point not reached\n{_tail(tmp_path)}"
            if client == "iperf":
                assert _wait_for(_iperf_client_running, 15, proc), f"no iperf3 client ran\n{_tail(tmp_path)}"
            assert proc.poll() is None, f"{name}: the play ended before the signal\n{_tail(tmp_path)}"
            os.kill(proc.pid, signal.SIGINT if fault == "SIGINT" else signal.SIGTERM)
            rc = _finish(proc, 60)
            assert rc != 0, _tail(tmp_path)
        elif fault == "SSH cut":
            assert _wait_for(window_open, POINT_TIMEOUT, proc), f"{name}: window not opened\n{_tail(tmp_path)}"
            for host in HOSTS:
                lab.link(host, "down")
            try:
                rc = _finish(proc, PLAY_TIMEOUT)
            finally:
                for host in HOSTS:
                    lab.link(host, "up")
            # the cut shows as UNREACHABLE (a task between our modules) or as our module's "the connection failed"
            # (a cut inside esxi_firewall / esxi_iperf_install, which then returns restore and changed)
            log = (tmp_path / "fault.log").read_text()
            assert rc != 0 and ("UNREACHABLE" in log or "the connection failed" in log), _tail(tmp_path)
        else:
            rc = _finish(proc, PLAY_TIMEOUT)
            log = (tmp_path / "fault.log").read_text()
            assert rc == 2, log[-3000:]
            assert "the changes were applied but reading them back failed" in log, log[-3000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    by_release = {release: Cell() for release in RELEASES}
    lab.matrix[name] = by_release
    for host, (release, way) in HOSTS.items():
        if way == "restore.yml":
            by_release[release].left = _describe(lab, host, baseline[host])
    if fault != "read-back failure":  # a fault that leaves nothing changed would prove nothing
        assert all(cell.left != "nothing" for cell in by_release.values()), by_release

    # the ways back: restore.yml and the next run in one ansible-playbook, the dead-man alone
    for host, (_release, way) in HOSTS.items():
        if way == "dead-man" and (lab.journal(host) / "deadline").exists():
            (lab.journal(host) / "deadline").write_text(f"{int(time.time())}\n")  # the deadline has come
    recovery = lab.start(
        tmp_path,
        [REPO / "playbooks" / "restore.yml", TARGETS / "fault_window.yml"],
        {
            "esxilab_restore_hosts": ":".join(h for h, (_r, w) in HOSTS.items() if w == "restore.yml"),
            "fm_hosts": ":".join(h for h, (_r, w) in HOSTS.items() if w == "next run"),
            "fm_client": "sleep",
            "fm_sleep": 0,
            "fm_port": PORT + len(lab.matrix) * 2 + 1,
        },
        tmp_path / "recovery.log",
    )
    recovery_rc = _finish(recovery, PLAY_TIMEOUT)
    recovery_log = (tmp_path / "recovery.log").read_text()

    def timer_done(host: str) -> Callable[[], bool]:
        return lambda: not lab.deadman_alive(host) and not lab.snapshot(host)["journal"]

    deadman_done = {host: _wait_for(timer_done(host), 20) for host, (_r, way) in HOSTS.items() if way == "dead-man"}

    failures = []
    for host, (release, way) in HOSTS.items():
        after = lab.snapshot(host)
        problems = []
        if way != "dead-man" and recovery_rc != 0:
            problems.append(f"recovery play rc={recovery_rc}")
        if way == "dead-man" and not deadman_done[host]:
            problems.append("timer did not finish")
        for key in ("state", "files"):
            if after[key] != baseline[host][key]:
                changed = sorted(set(after[key]) ^ set(baseline[host][key]))
                problems.append(f"{key} differs: {changed[:6]}")
        if after["journal"]:
            problems.append(f"journal still holds {after['journal']}")
        if after["deadman"]:
            problems.append("a dead-man is still running")
        if way == "dead-man" and by_release[release].left != "nothing" and not (lab.journal(host) / "fired").exists():
            problems.append("the dead-man left no 'fired' record")
        said = f"{host}: put back" in recovery_log
        if way == "restore.yml" and by_release[release].left != "nothing" and not said:
            problems.append("restore.yml did not say what it put back")
        reported = f"{host}: an earlier run left" in recovery_log
        if way == "next run" and by_release[release].left != "nothing" and not reported:
            problems.append("the next run did not report the unfinished window it put back")
        by_release[release].results[way] = "restored" if not problems else "FAILED"
        if problems:
            failures.append(f"{host} ({release}, {way}): {'; '.join(problems)}")
    assert not failures, "\n".join(failures) + "\n" + recovery_log[-4000:]


def _tail(tmp: Path) -> str:
    log = tmp / "fault.log"
    return log.read_text()[-3000:] if log.exists() else ""


# --------------------------------------------------------------------------------------------
# Best effort, a fired dead-man reported, two controllers on one host
# --------------------------------------------------------------------------------------------


def _open_then_kill(lab: FaultLab, tmp: Path, hosts: list[str], log: str) -> None:
    """A window on ``hosts`` killed (SIGKILL to its process group: no ``always:``) once the firewall is off."""
    proc = lab.start(tmp, [TARGETS / "fault_window.yml"], _window_vars(hosts, 30), tmp / log)
    try:
        opened = _wait_for(lambda: all(lab.value(h, "fw_enabled") == "false" for h in hosts), POINT_TIMEOUT, proc)
        assert opened, (tmp / log).read_text()[-3000:]
        assert _wait_for(lambda: all((tmp / "markers" / f"{h}-run1").exists() for h in hosts), POINT_TIMEOUT, proc)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def _window_vars(hosts: list[str], sleep: int) -> dict[str, Any]:
    return {"fm_client": "sleep", "fm_sleep": sleep, "fm_port": PORT + 90, "fm_hosts": ":".join(hosts)}


@pytest.mark.full  # make test keeps 4 cells of the matrix; the unit tests (journal/test_trust.py) run the same shell
def test_an_entry_that_cannot_apply_is_kept_and_a_fired_deadman_is_reported(
    fault_lab: FaultLab, tmp_path: Path
) -> None:
    lab = fault_lab
    hosts = ["h1", "h3", "h6"]  # h1: an entry restore cannot apply; h3, h6: their dead-man fires
    for host in hosts:
        lab.reset(host)
    baseline = {host: lab.snapshot(host) for host in hosts}
    _open_then_kill(lab, tmp_path, hosts, "window.log")
    # a ruleset recorded by the window that the host no longer has (removed with its VIB, say)
    (lab.journal("h1") / "firewall.ruleset.goneVib").write_text("true\n")
    for host in ("h3", "h6"):
        (lab.journal(host) / "deadline").write_text(f"{int(time.time())}\n")  # the deadline has come

    def fired(host: str) -> Callable[[], bool]:
        return lambda: not lab.deadman_alive(host) and lab.value(host, "fw_enabled") == "true"

    for host in ("h3", "h6"):
        assert _wait_for(fired(host), 20)
        assert (lab.journal(host) / "fired").exists()

    # the next run on h6 (a separate ansible-playbook: the one with restore.yml fails, for h1)
    nxt = lab.start(tmp_path, [TARGETS / "fault_window.yml"], {**_window_vars(["h6"], 0), "fm_port": PORT + 91},
                    tmp_path / "next.log")  # fmt: skip
    assert _finish(nxt, PLAY_TIMEOUT) == 0, (tmp_path / "next.log").read_text()[-3000:]
    flat = " ".join((tmp_path / "next.log").read_text().split())
    assert f"the dead-man timer of {lab.journal('h6')} fired at" in flat, flat[-3000:]
    recovery = lab.start(
        tmp_path, [REPO / "playbooks" / "restore.yml"], {"esxilab_restore_hosts": "h1:h3"}, tmp_path / "recovery.log"
    )
    rc = _finish(recovery, PLAY_TIMEOUT)
    log = (tmp_path / "recovery.log").read_text()
    flat = " ".join(log.split())
    assert rc == 2, log[-4000:]  # restore.yml fails at the end, for h1 only
    assert "h1: esxilab.iperf.esxi_journal: put back what could be put back" in flat, log[-4000:]
    assert "firewall.ruleset.goneVib: the host has no ruleset 'goneVib' any more" in flat, log[-4000:]
    assert "LEFT in the journal" in flat and "h3 : ok=" in flat and "failed=0" in flat.split("h3 : ok=")[1][:80]
    # h1: everything else is back; only the entry that cannot apply stays
    after = lab.snapshot("h1")
    assert (after["state"], after["files"]) == (baseline["h1"]["state"], baseline["h1"]["files"])
    assert after["journal"] == ["firewall.ruleset.goneVib", "owner"] and not after["deadman"]
    # h3 (restore.yml) and h6 (the next run) say that the dead-man fired, and then forget it
    assert "h3: nothing pending" in flat and "the dead-man timer FIRED at" in flat, log[-4000:]
    for host in ("h3", "h6"):
        assert not (lab.journal(host) / "fired").exists()
        now = lab.snapshot(host)
        assert (now["state"], now["files"], now["journal"]) == (baseline[host]["state"], baseline[host]["files"], [])


@pytest.mark.full
def test_two_controllers_on_one_host_refuse_then_take_over(fault_lab: FaultLab, tmp_path: Path) -> None:
    lab = fault_lab
    lab.reset("h2")
    baseline = lab.snapshot("h2")
    first = lab.start(tmp_path, [TARGETS / "fault_window.yml"], _window_vars(["h2"], 25), tmp_path / "a.log")
    try:
        assert _wait_for((tmp_path / "markers" / "h2-run1").exists, POINT_TIMEOUT, first)
        second = lab.start(
            tmp_path, [TARGETS / "fault_window.yml"], {**_window_vars(["h2"], 0), "fm_port": PORT + 92},
            tmp_path / "b.log",
        )  # fmt: skip
        assert _finish(second, PLAY_TIMEOUT) == 2
        flat = " ".join((tmp_path / "b.log").read_text().split())
        assert f"held by the run of pid {first.pid} on controller" in flat and "takeover: true" in flat, flat[-3000:]
        assert lab.value("h2", "fw_enabled") == "false"  # the first run's window is left alone
        taker = lab.start(
            tmp_path,
            [TARGETS / "fault_window.yml"],
            {**_window_vars(["h2"], 0), "fm_port": PORT + 93, "esxilab_journal_takeover": True},
            tmp_path / "c.log",
        )
        assert _finish(taker, PLAY_TIMEOUT) == 0, (tmp_path / "c.log").read_text()[-3000:]
        assert first.poll() is None  # the first run still works in its window
        assert _finish(first, PLAY_TIMEOUT) == 0, (tmp_path / "a.log").read_text()[-3000:]
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(timeout=10)
    after = lab.snapshot("h2")
    assert (after["state"], after["files"], after["journal"]) == (baseline["state"], baseline["files"], [])
    assert not after["deadman"]
