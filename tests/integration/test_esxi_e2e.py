# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ESXi roles end to end: real ansible-playbook, real SSH, a lab host that answers like ESXi.

The lab (``lab/esxilab_lab.py``, prefix ``eltesx``, 198.19.251.0/24, a temporary state dir):

* h1 - the "ESXi host", MTU 9000. Its sshd gets (lab options ``--host-env``/``--host-bind``)
  ``PATH`` starting with ``tests/esxi_standin`` (so ``esxcli``, ``localcli``, ``vmware`` and
  ``vmkping`` are the stand-ins that replay recorded ESXi output and keep state), its own stand-in
  state dir and file root ``/``, and a private mount namespace in which ``/usr/lib/vmware`` and
  ``/opt`` are per-test temporary directories - the real paths the plugins use, without touching
  this machine's file system;
* h2 - a Linux host, MTU 1500 (the broken jumbo peer), and the iperf client of the serve steps;
* h3 - a Linux host, MTU 9000 (the working jumbo peer).

"% of line rate" with an ESXi end and no line rate in the inventory: the ``esxi_network`` role
builds h1's test network over the vSphere API - govmomi's simulator (``tests/vcsim``, its vmnic1
at 1000 Mb/s) answers for h1's API endpoint - with a VMkernel adapter holding h1's lab address,
and publishes the speed of its vSwitch's uplink from ``esxi_vmknic``'s data; ``paired_test``
between h1 and h2 then reports the run against it and names the source.

Per ESXi release (6.7, 7.0, 8.0 stand-in states) the ``esxi_iperf`` role installs (check mode,
real, idempotent), a 1 s iperf test is served by the binary it published (``esxi_iperf_binary``)
to a client on h2, and the ``restore`` entry point puts the host back. 8.0 refuses without
``relax_exec_policy``, relaxes the runtime option or the appDom domain with it, and gets the
previous values back. The ``esxi_firewall`` window restores the firewall after a failure injected
inside it. The ``path_mtu`` role passes at 1500 and on the 9000 path h1-h3, and stops the run with
a clear message on the broken 9000 path h1-h2 (real ``ping -M do`` between namespaces).

What this does not prove: anything about real ESXi beyond the recorded outputs the stand-ins
replay (see tests/esxi_standin/README.md).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.collection_path import REPO
from tests.integration import labkit
from tests.integration.labkit import ansible_env, run_playbook, simulator, skip_if

pytestmark = [pytest.mark.lab, pytest.mark.slow]

STANDIN = REPO / "tests" / "esxi_standin"
TARGETS = REPO / "tests" / "integration" / "targets" / "esxi"
# overridable so that parallel sessions can run this file on their own lab prefix and subnet
PREFIX = os.environ.get("ESXILAB_E2E_PREFIX", "eltesx")
SUBNET = os.environ.get("ESXILAB_E2E_SUBNET", "198.19.251")
H1, H2, H3 = (f"{SUBNET}.{10 + i}" for i in (1, 2, 3))
PLAY_TIMEOUT = 180
COPY = "/usr/lib/vmware/vsan/bin/iperf3.copy"
SHIPPED = "/usr/lib/vmware/vsan/bin/iperf3"
VIB_COPY = "/opt/iperf/bin/iperf.copy"
# A play that installs and leaves the host changed on purpose (the restore comes in a later play):
# the next play keeps it instead of putting back what the journal calls an unfinished run.
KEEP_UNFINISHED = {"esxi_iperf_restore_unfinished": False}


def _lab_unavailable() -> str | None:
    tools = ("ip", "tc", "ssh", "ssh-keygen", "iperf3", "iperf", "unshare", "mount")
    reason = labkit.lab_unavailable(tools, needs="network namespaces, bridge, tc, mount namespaces", probe_netns=True)
    if reason is None and "overlay" not in Path("/proc/filesystems").read_text():
        return "the kernel has no overlayfs (the lab overlays /usr/lib to add the /usr/lib/vmware mount point)"
    return reason


def _banner(argv: list[str]) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    m = re.search(r"iperf (?:version )?(\d+\.\d+(?:\.\d+)?)", proc.stdout + proc.stderr)
    assert m, proc
    return m.group(1)


@dataclass
class Play:
    rc: int
    output: str
    record: dict[str, Any] | None

    def ok(self) -> dict[str, Any]:
        assert self.rc == 0, self.output[-4000:]
        assert self.record is not None, self.output[-4000:]
        return self.record


@dataclass(frozen=True)
class Lab:
    base: Path

    @property
    def state_dir(self) -> Path:
        return self.base / "state"

    @property
    def standin_state(self) -> Path:
        return self.base / "standin"

    @property
    def journal_dir(self) -> Path:  # the restore journal of h1
        return self.base / "h1-journal"

    @property
    def vmware_dir(self) -> Path:  # /usr/lib/vmware on h1
        return self.base / "h1-vmware"

    @property
    def opt_dir(self) -> Path:  # /opt on h1
        return self.base / "h1-opt"

    @property
    def kit(self) -> labkit.Lab:
        return labkit.Lab(PREFIX, self.state_dir, timeout=120)

    def up_args(self) -> list[str]:
        path = f"{STANDIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        return [
            *("--hosts", "3", "--subnet", f"{SUBNET}.0/24", "--host-mtu", "h1=9000", "--host-mtu", "h3=9000"),
            *("--host-env", f"h1=PATH={path}"),
            *("--host-env", f"h1=ESXI_STANDIN_STATE={self.standin_state}"),
            *("--host-env", "h1=ESXI_STANDIN_ROOT=/"),
            *("--host-bind", f"h1={self.vmware_dir}:/usr/lib/vmware"),
            *("--host-bind", f"h1={self.opt_dir}:/opt"),
        ]

    def ssh(self, address: str, command: str) -> subprocess.CompletedProcess[str]:
        return self.kit.ssh(address, command)

    def reset(self, version: str, **settings: str) -> None:
        """A fresh stand-in of this release on h1 (its files, its state)."""
        for directory in (self.vmware_dir, self.opt_dir):
            for child in directory.iterdir():
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        shutil.rmtree(self.journal_dir, ignore_errors=True)
        commands = [f"esxi-standin init {version}", *(f"esxi-standin set {k} {v}" for k, v in settings.items())]
        proc = self.ssh(H1, " && ".join(commands))
        assert proc.returncode == 0, proc

    def state(self, key: str) -> str:
        return (self.standin_state / key).read_text().strip()

    def calls(self) -> list[str]:
        return (self.standin_state / "calls.log").read_text().splitlines()

    def domain(self, name: str) -> str:
        return dict(line.split("|") for line in self.state("secpolicy").splitlines())[name]

    def play(self, playbook: str, tmp: Path, variables: dict[str, Any], *extra: str) -> Play:
        out = tmp / f"record-{time.monotonic_ns()}.json"
        vars_file = tmp / f"vars-{time.monotonic_ns()}.json"
        vars_file.write_text(json.dumps({"e2e_out": str(out), **variables}))
        inventory = tmp / "esxi-group.yml"
        # the restore journal in a per-test directory (on ESXi it lives under /scratch)
        h1_vars = {"esxilab_journal_dir": str(self.journal_dir), "esxilab_journal_copy_dir": str(tmp / "journal")}
        inventory.write_text(f"all:\n  children:\n    esxi:\n      hosts:\n        h1: {json.dumps(h1_vars)}\n")
        proc = run_playbook(
            *("-i", self.kit.inventory, "-i", inventory), TARGETS / playbook, *("-e", f"@{vars_file}"), *extra,
            timeout=PLAY_TIMEOUT, env=ansible_env(ANSIBLE_FORKS="5"),
        )  # fmt: skip
        record = json.loads(out.read_text()) if out.exists() else None
        return Play(proc.returncode, proc.stdout + proc.stderr, record)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    skip_if(_lab_unavailable())
    vmware_existed = Path("/usr/lib/vmware").exists()
    the_lab = Lab(base=tmp_path_factory.mktemp(PREFIX))
    for directory in (the_lab.vmware_dir, the_lab.opt_dir, the_lab.standin_state):
        directory.mkdir()
    try:
        with the_lab.kit.session(*the_lab.up_args()):
            yield the_lab
    finally:
        # the binds lived in h1's sshd mount namespace only
        assert Path("/usr/lib/vmware").exists() == vmware_existed


@pytest.fixture(scope="module")
def versions() -> dict[str, str]:
    return {"iperf3": _banner(["iperf3", "-v"]), "iperf2": _banner(["iperf", "-v"])}


# --------------------------------------------------------------------------------------------
# The lab host that looks like ESXi
# --------------------------------------------------------------------------------------------


def test_lab_host_looks_like_esxi_to_ssh_sessions_only(lab: Lab) -> None:
    lab.reset("7.0")
    h1 = lab.ssh(H1, "command -v esxcli localcli vmware vmkping; vmware -vl; ls /usr/lib/vmware/vsan/bin; ls -A /opt")
    assert h1.returncode == 0, h1
    assert h1.stdout.splitlines() == [
        f"{STANDIN}/esxcli",
        f"{STANDIN}/localcli",
        f"{STANDIN}/vmware",
        f"{STANDIN}/vmkping",
        "VMware ESXi 7.0.3 build-22348816",
        "VMware ESXi 7.0 Update 3",
        "iperf3",
    ]  # /opt is the empty per-test directory
    assert (lab.vmware_dir / "vsan" / "bin" / "iperf3").is_file()  # written through the bind
    h2 = lab.ssh(H2, "command -v esxcli || echo none; test -e /usr/lib/vmware && echo vmware || echo no-vmware")
    assert h2.stdout.split() == ["none", "no-vmware"]
    up_again = lab.kit.cli("up", *lab.up_args())
    assert up_again["changed"] is False, up_again["actions"]


# --------------------------------------------------------------------------------------------
# esxi_iperf
# --------------------------------------------------------------------------------------------


def _serve_vars(port: int, tmp: Path) -> dict[str, Any]:
    remote = tmp / "remote"
    remote.mkdir(exist_ok=True)
    return {"e2e_port": port, "e2e_remote_dir": str(remote), "e2e_peer": "h2"}


def _assert_served(record: dict[str, Any], binary: str, tool: str, lab: Lab) -> None:
    server, client = record["server"], record["client"]
    assert server["binary"] == binary and server["status"] == "listening", server
    assert client["result"]["tool"] == tool
    assert client["result"]["error"] is None
    assert client["result"]["bits_per_second"] > 0
    assert client["result"]["remote"]["host"] == H1
    assert [stopped["pid"] for stopped in record["stop"]["stopped"]] == [server["pid"]]
    assert any(line.startswith(f"exec {binary} -s ") for line in lab.calls())


def test_esxi_7_0_install_check_real_idempotent_serve_restore(
    lab: Lab, tmp_path: Path, versions: dict[str, str]
) -> None:
    lab.reset("7.0")
    checked = lab.play("esxi_iperf.yml", tmp_path, {"e2e_steps": ["install"]}, "--check").ok()
    assert checked["check_mode"] is True
    assert checked["installed"]["changed"] is True
    assert checked["installed"]["commands"] == [f"cp {SHIPPED} {COPY}"]
    assert checked["binary"] == COPY and checked["tool_version"] is None
    assert not (lab.vmware_dir / "vsan" / "bin" / "iperf3.copy").exists()

    real = lab.play("esxi_iperf.yml", tmp_path, {"e2e_steps": ["install", "serve"], **_serve_vars(25411, tmp_path)})
    record = real.ok()
    assert record["installed"]["changed"] is True
    assert (record["binary"], record["tool"], record["esxi_version"]) == (COPY, "iperf3", "7.0.3")
    assert record["tool_version"] == versions["iperf3"]
    assert record["restore_fact"] == {"created_files": [COPY]}
    assert (lab.vmware_dir / "vsan" / "bin" / "iperf3.copy").is_file()
    _assert_served(record, COPY, "iperf3", lab)

    # the earlier play left the copy on purpose (no restore step): keep it instead of treating it as unfinished
    again = lab.play("esxi_iperf.yml", tmp_path, {"e2e_steps": ["install"], **KEEP_UNFINISHED}).ok()
    assert again["installed"]["changed"] is False
    assert again["installed"]["commands"] == []

    restored = lab.play(
        "esxi_iperf.yml", tmp_path, {"e2e_steps": ["restore"], "esxi_iperf_restore": record["restore_fact"]}
    ).ok()
    assert restored["restored"]["changed"] is True
    assert restored["restored"]["commands"] == [f"rm -f {COPY}"]
    assert not (lab.vmware_dir / "vsan" / "bin" / "iperf3.copy").exists()
    assert (lab.vmware_dir / "vsan" / "bin" / "iperf3").is_file()


def test_esxi_6_7_vib_uploaded_unsigned_only_on_request(lab: Lab, tmp_path: Path, versions: dict[str, str]) -> None:
    lab.reset("6.7")
    bundle = tmp_path / "iperf-2.0.5-1-offline_bundle.zip"
    bundle.write_bytes(b"PK\x05\x06" + bytes(18))  # the stand-in checks the name and that the upload arrived
    refused = lab.play("esxi_iperf.yml", tmp_path, {"e2e_steps": ["install"], "esxi_iperf_vib_upload": str(bundle)})
    failure = refused.ok()["failure"]
    assert failure.startswith(
        "esxilab.iperf.esxi_iperf_install: VIB installation failed: [AcceptanceConfigError] VIB"
        " DAST_bootbank_iperf_2.0.5-1's acceptance level is community, which is not compliant with the ImageProfile"
        " acceptance level partner"
    )
    assert "Fix: set allow_unsigned: true so the install runs with --no-sig-check" in failure
    assert "Shared connection" not in failure
    assert "iperf|" not in lab.state("vibs")

    settings = {"esxi_iperf_vib_upload": str(bundle), "esxi_iperf_allow_unsigned": True}
    checked = lab.play("esxi_iperf.yml", tmp_path, {"e2e_steps": ["install"], **settings}, "--check").ok()
    assert checked["installed"]["changed"] is True
    assert checked["installed"]["commands"] == [
        "esxcli software vib install -d '<upload dir>/iperf-2.0.5-1-offline_bundle.zip' --no-sig-check",
        f"cp /opt/iperf/bin/iperf {VIB_COPY}",
    ]
    assert sum("software vib install" in line for line in lab.calls()) == 1  # only the refused one: nothing uploaded

    real = lab.play(
        "esxi_iperf.yml", tmp_path, {"e2e_steps": ["install", "serve"], **settings, **_serve_vars(25412, tmp_path)}
    )
    record = real.ok()
    (install_cmd,) = [c for c in record["installed"]["commands"] if "vib install" in c]
    m = re.fullmatch(
        r"esxcli software vib install -d (\S+/ansible-tmp-[^/]+)/iperf-2.0.5-1-offline_bundle.zip --no-sig-check",
        install_cmd,
    )
    assert m, install_cmd
    assert not Path(m.group(1)).exists()  # the upload directory went with the task
    assert (record["binary"], record["tool"], record["esxi_version"]) == (VIB_COPY, "iperf2", "6.7.0")
    assert record["tool_version"] == versions["iperf2"]
    assert record["installed"]["current"]["vib"] == "2.0.5-1"
    assert record["restore_fact"] == {"created_files": [VIB_COPY], "installed_vib": "iperf"}
    _assert_served(record, VIB_COPY, "iperf2", lab)

    again = lab.play("esxi_iperf.yml", tmp_path, {"e2e_steps": ["install"], **settings, **KEEP_UNFINISHED}).ok()
    assert again["installed"]["changed"] is False
    assert sum("software vib install" in line for line in lab.calls()) == 2  # the refused one and the real one

    restored = lab.play(
        "esxi_iperf.yml",
        tmp_path,
        {"e2e_steps": ["restore"], "esxi_iperf_restore": record["restore_fact"], "esxi_iperf_remove_vib": True},
    ).ok()
    assert restored["restored"]["commands"] == [f"rm -f {VIB_COPY}", "esxcli software vib remove -n iperf"]
    assert "iperf|" not in lab.state("vibs")
    assert not (lab.opt_dir / "iperf" / "bin" / "iperf.copy").exists()


def test_esxi_8_0_refuses_then_relaxes_and_restores(lab: Lab, tmp_path: Path, versions: dict[str, str]) -> None:
    lab.reset("8.0")
    refused = lab.play("esxi_iperf.yml", tmp_path, {"e2e_steps": ["install"]}).ok()
    assert refused["failure"] == (
        "esxilab.iperf.esxi_iperf_install: execInstalledOnly is active on this VMware ESXi 8.0.3 Update 3"
        f" build-24585383 host: {COPY} is not installed from a VIB and would be refused. Fix: set"
        " relax_exec_policy: true to set /User/execInstalledOnly to 0 for the test (the restore step puts the"
        " previous value back; vCenter warns while it is off)."
    )
    assert lab.state("eio_runtime") == "1"
    assert not (lab.vmware_dir / "vsan" / "bin" / "iperf3.copy").exists()

    relax = {"esxi_iperf_relax_exec_policy": True}
    checked = lab.play("esxi_iperf.yml", tmp_path, {"e2e_steps": ["install"], **relax}, "--check").ok()
    assert checked["installed"]["commands"] == [
        "esxcli system settings advanced set -o /User/execInstalledOnly -i 0",
        f"cp {SHIPPED} {COPY}",
    ]
    assert lab.state("eio_runtime") == "1"

    window = lab.play(
        "esxi_iperf.yml",
        tmp_path,
        {"e2e_steps": ["install", "serve", "restore"], **relax, **_serve_vars(25413, tmp_path)},
    ).ok()
    assert window["installed"]["previous"]["exec_installed_only"] == 1
    assert window["installed"]["current"]["exec_installed_only"] == 0
    assert window["installed"]["restore"] == {"created_files": [COPY], "exec_installed_only_previous": 1}
    assert window["tool_version"] == versions["iperf3"]
    _assert_served(window, COPY, "iperf3", lab)
    assert window["restored"]["commands"] == [
        "esxcli system settings advanced set -o /User/execInstalledOnly -i 1",
        f"rm -f {COPY}",
    ]
    assert lab.state("eio_runtime") == "1"
    assert not (lab.vmware_dir / "vsan" / "bin" / "iperf3.copy").exists()

    # idempotent: a second install while relaxed changes nothing and has nothing to restore
    first = lab.play("esxi_iperf.yml", tmp_path, {"e2e_steps": ["install"], **relax}).ok()
    second = lab.play("esxi_iperf.yml", tmp_path, {"e2e_steps": ["install"], **relax, **KEEP_UNFINISHED}).ok()
    assert (first["installed"]["changed"], second["installed"]["changed"]) == (True, False)
    assert second["installed"]["restore"] == {}
    lab.play("esxi_iperf.yml", tmp_path, {"e2e_steps": ["restore"], "esxi_iperf_restore": first["restore_fact"]}).ok()
    assert lab.state("eio_runtime") == "1"


def test_esxi_8_0_restored_after_a_failure_in_the_window(lab: Lab, tmp_path: Path) -> None:
    lab.reset("8.0")
    relax = {"esxi_iperf_relax_exec_policy": True}
    record = lab.play("esxi_iperf.yml", tmp_path, {"e2e_steps": ["install", "fail", "restore"], **relax}).ok()
    assert record["failure"] == "injected failure after the install"
    assert record["installed"]["current"]["exec_installed_only"] == 0  # relaxed during the window
    assert record["restored"]["commands"] == [
        "esxcli system settings advanced set -o /User/execInstalledOnly -i 1",
        f"rm -f {COPY}",
    ]
    assert lab.state("eio_runtime") == "1"
    assert not (lab.vmware_dir / "vsan" / "bin" / "iperf3.copy").exists()


def test_esxi_8_0_install_failing_halfway_is_restored(lab: Lab, tmp_path: Path) -> None:
    """The relax step ran, the copy failed: the role still records what to undo, restore undoes it."""
    lab.reset("8.0")
    bin_dir = lab.vmware_dir / "vsan" / "bin"
    subprocess.run(["chattr", "+i", str(bin_dir)], check=True, timeout=10)  # cp into it fails, even as root
    try:
        relax = {"esxi_iperf_relax_exec_policy": True}
        record = lab.play("esxi_iperf.yml", tmp_path, {"e2e_steps": ["install", "restore"], **relax}).ok()
    finally:
        subprocess.run(["chattr", "-i", str(bin_dir)], check=True, timeout=10)
    assert record["failure"].startswith(
        f"esxilab.iperf.esxi_iperf_install: 'cp {SHIPPED} {COPY}' (copy {SHIPPED} to {COPY} (the copy can listen))"
        " failed (exit status 1):"
    )
    assert (
        "Commands already applied: ['esxcli system settings advanced set -o /User/execInstalledOnly -i 0']"
        in record["failure"]
    )
    assert record["restore_fact"] == {}  # emptied by the restore entry point after it ran
    assert record["restored"]["commands"] == ["esxcli system settings advanced set -o /User/execInstalledOnly -i 1"]
    assert lab.state("eio_runtime") == "1"


def test_esxi_8_0_app_domain_route(lab: Lab, tmp_path: Path) -> None:
    lab.reset("8.0")
    settings = {"esxi_iperf_relax_exec_policy": True, "esxi_iperf_relax_mode": "app_domain"}
    window = lab.play(
        "esxi_iperf.yml",
        tmp_path,
        {"e2e_steps": ["install", "serve", "restore"], **settings, **_serve_vars(25414, tmp_path)},
    ).ok()
    assert window["installed"]["commands"] == ["localcli system secpolicy domain set -n appDom -l disabled"]
    assert window["installed"]["previous"]["app_domain"] == "enforcing"
    assert window["binary"] == SHIPPED
    _assert_served(window, SHIPPED, "iperf3", lab)  # the shipped binary listened: appDom was disabled
    assert window["restored"]["commands"] == ["localcli system secpolicy domain set -n appDom -l enforcing"]
    assert lab.domain("appDom") == "enforcing"
    assert lab.state("eio_runtime") == "1"  # execInstalledOnly stayed on
    assert not (lab.vmware_dir / "vsan" / "bin" / "iperf3.copy").exists()


# --------------------------------------------------------------------------------------------
# esxi_firewall: the window
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("playbook", ["firewall_window.yml", "firewall_block.yml"], ids=["main", "open-restore"])
@pytest.mark.parametrize("fail_inside", [True, False], ids=["failure-inside", "success"])
def test_firewall_window_restores_the_firewall(lab: Lab, tmp_path: Path, playbook: str, fail_inside: bool) -> None:
    lab.reset("8.0")
    play = lab.play(playbook, tmp_path, {"e2e_fail_inside": fail_inside})
    if fail_inside:
        assert play.rc == 2, play.output[-3000:]
        assert "injected failure inside the firewall window" in play.output
    else:
        assert play.rc == 0, play.output[-3000:]
    assert play.record is not None, play.output[-3000:]
    inside = play.record["inside"].replace("\r\n", "\n")
    assert inside == "   Default Action: DROP\n   Enabled: false\n   Loaded: true\n"
    assert play.record["restore_fact"] == {"enabled": True}
    # after the window: as it was before
    assert (lab.state("fw_enabled"), lab.state("fw_default_action")) == ("true", "DROP")
    sets = [line for line in lab.calls() if line.startswith("esxcli network firewall set")]
    assert sets == ["esxcli network firewall set --enabled false", "esxcli network firewall set --enabled true"]


# --------------------------------------------------------------------------------------------
# path_mtu
# --------------------------------------------------------------------------------------------


def test_path_mtu_passes_on_working_paths(lab: Lab, tmp_path: Path) -> None:
    lab.reset("8.0", vmkping_mode="real")  # vmkping runs the real ping in h1's namespace
    checks = {
        "h1": [{"target": H3, "mtu": 9000, "interface": "vmk1"}, {"target": H2, "mtu": 1500, "interface": "vmk1"}],
        "h2": [{"target": H1, "mtu": 1500}],
        "h3": [{"target": H1, "mtu": 9000}],
    }
    play = lab.play("path_mtu.yml", tmp_path, {"e2e_hosts": "h1,h2,h3", "e2e_checks": checks})
    verdicts = play.ok()
    h1_jumbo, h1_std = verdicts["h1"]
    assert (h1_jumbo["tool"], h1_jumbo["ok"], h1_jumbo["payload_size"], h1_jumbo["reply_bytes"]) == (
        "vmkping",
        True,
        8972,
        8980,
    )
    assert (h1_std["ok"], h1_std["payload_size"], h1_std["reply_bytes"]) == (True, 1472, 1480)
    assert (verdicts["h2"][0]["tool"], verdicts["h2"][0]["ok"], verdicts["h2"][0]["reply_bytes"]) == (
        "ping",
        True,
        1480,
    )
    assert (verdicts["h3"][0]["ok"], verdicts["h3"][0]["transmitted"], verdicts["h3"][0]["received"]) == (True, 3, 3)
    assert "vmkping -I vmk1 -d -s 8972 -c 3 " + H3 in lab.calls()


def test_path_mtu_stops_the_run_on_a_broken_jumbo_path(lab: Lab, tmp_path: Path) -> None:
    lab.reset("8.0", vmkping_mode="real")
    checks = {
        "h1": [{"target": H3, "mtu": 9000, "interface": "vmk1"}, {"target": H2, "mtu": 9000, "interface": "vmk1"}],
        "h2": [{"target": H1, "mtu": 9000}],
        "h3": [{"target": H1, "mtu": 9000}],
    }
    play = lab.play("path_mtu.yml", tmp_path, {"e2e_hosts": "h1,h2,h3", "e2e_checks": checks})
    assert play.rc == 2, play.output[-3000:]
    assert play.record is None  # the "benchmark" play never ran
    output = " ".join(play.output.split())
    assert (
        f"Path MTU check failed on h1, so no benchmark was started. {H2} at MTU 9000 (8972-byte don't-fragment ping"
        " via vmk1) - no reply at this size, but small pings pass: a switch or interface on the path has a smaller"
        " MTU and drops these frames. Raise the MTU of every hop (vSwitch, physical switch ports, the peer's"
        " interface) to 9000"
    ) in output
    assert (
        f"Path MTU check failed on h2, so no benchmark was started. {H1} at MTU 9000 (8972-byte don't-fragment"
        " ping) - the sending interface MTU is too small (mtu 1500); raise the interface MTU."
    ) in output
    assert "Path MTU check failed on h3" not in output


# --------------------------------------------------------------------------------------------
# % of line rate from the vmknic module's data
# --------------------------------------------------------------------------------------------

LINE_RATE_BANDWIDTH_BPS = 400_000_000  # the client's -b: the run's throughput, well under the 1 GbE uplink


def test_line_rate_of_the_esxi_end_comes_from_esxi_network(lab: Lab, tmp_path: Path, vcsim_binary: Path) -> None:
    """The uplink speed esxi_vmknic read over the API is the run's line rate; the esxcli listings the stand-in
    replays (a recording from another host) hold no adapter with h1's lab address, so it is not read there."""
    lab.reset("7.0")
    (tmp_path / "remote").mkdir()
    network = {
        "name": "iperf-lab",
        "vswitch": {"name": "vSwitch-iperf", "uplinks": ["vmnic1"]},
        "portgroup": {"name": "iperf-lab"},
        "vmknic": {"ip_address": H1, "netmask": 24},
    }
    test = {"name": "esxi-end", "pairs": [{"server": "h2", "client": "h1"}], "duration": 2,
            "bandwidth": str(LINE_RATE_BANDWIDTH_BPS)}  # fmt: skip
    with simulator(vcsim_binary, "-pnic-speed", "vmnic1=1000") as api:
        variables = {
            "esxi_network_hostname": "127.0.0.1",
            "esxi_network_port": api["vcsim_port"],
            "esxi_network_username": api["vcsim_user"],
            "esxi_network_password": api["vcsim_password"],
            "esxi_network_validate_certs": False,
            "esxi_network_networks": [network],
            "paired_test_tests": [test],
            "paired_test_address_var": "lab_address",
            "paired_test_port_base": 25430,
            "paired_test_state_dir": str(tmp_path / "remote"),
            "paired_test_report_dir": str(tmp_path / "reports"),
            "paired_test_report_name": "line-rate",
        }
        record = lab.play("line_rate.yml", tmp_path, variables).ok()
    # h1 published its network's line rate: the lowest active uplink of the vSwitch, from esxi_vmknic's NIC data
    source = "esxi_network via esxi_vmknic: the lowest active uplink of vSwitch-iperf (vmnic1 1000 Mb/s)"
    assert record["uplinks"]["iperf-lab"]["speed_mbps"] == 1000, record
    assert record["published"] == {H1: record["uplinks"]["iperf-lab"]}
    assert record["published"][H1]["source"] == source
    # the preflight read both ends: h2's veth in sysfs; h1's esxcli listings (the stand-in replays another host's
    # recording) hold no adapter with h1's lab address - the published speed is the only one h1 has
    assert record["read"]["h2"][H2]["speed_mbps"] == 10000
    assert record["read"]["h1"][H1]["speed_mbps"] is None
    assert record["read"]["h1"][H1]["reason"].startswith(f"no VMkernel adapter holds {H1} ")
    # the ESXi end ran its iperf3 through the stand-in shell
    assert any(line.startswith("exec ") and f"-c {H2}" in line for line in lab.calls()), lab.calls()

    [results_json] = sorted((tmp_path / "reports").glob("line-rate-*/results.json"))
    doc = json.loads(results_json.read_text())
    [group] = doc["summary"]
    [run] = doc["runs"]
    mean = group["stats"]["mean"]
    assert 0.9 * LINE_RATE_BANDWIDTH_BPS < mean < 1.05 * LINE_RATE_BANDWIDTH_BPS, mean  # iperf3's own figure
    want = f"host: 1000 Mb/s, the slowest end of the run (h1 {H1} {source})"
    for where in (group, run):
        assert (where["line_rate_bps"], where["line_rate_source"]) == (1e9, want), where
        assert where["percent_of_line_rate"] == pytest.approx(mean / 1e7), where
    summary_md = (results_json.parent / "summary.md").read_text()
    assert f"line rate 1.000 Gbit/s ({want})" in summary_md
    # NIC context (paired_test_nic_counters: test, the default): the ESXi end ran esxcli network nic get / nic stats
    # get (and localcli's privstats get) on the uplinks of the replayed vSwitches; none holds h1's lab address, so
    # h1's reading says why; h2's veth was read by ip on both sides of the run (issue 12)
    nic = run["record"]["nic"]
    assert nic["mode"] == "test" and nic["before"] and nic["after"]
    # host CPU (paired_test_host_cpu, the default): h2 from its /proc/stat; h1, the ESXi end (group esxi: the stand-in
    # shell's uname is the lab's Linux, so the probe does not call it ESXi), from the simulator's PerformanceManager
    # over the run's window, the samples the API returned kept beside the figures (issue 23)
    assert record["esxi_hosts"] == [], record  # what the probe found
    cpu = run["record"]["cpu"]
    assert cpu["h2"]["kind"] == "linux" and isinstance(cpu["h2"]["mean_percent"], float), cpu["h2"]
    esxi = cpu["h1"]
    assert esxi["kind"] == "esxi" and esxi["source"].startswith("vSphere PerformanceManager"), esxi
    assert esxi["raw"]["host"] and esxi["raw"]["timestamps"], esxi
    assert isinstance(esxi["mean_percent"], float) and 0 <= esxi["mean_percent"] <= 100, esxi
    assert 0 < esxi["coverage"] <= 1 and esxi["samples"] >= 1, esxi  # the samples overlapping the 2 s run
    for when in ("before", "after"):
        assert nic[when]["h1"][H1]["kind"] == "esxi" and nic[when]["h1"][H1]["nics"] == []
        assert nic[when]["h1"][H1]["reason"].startswith(f"no VMkernel adapter holds {H1} ")
        (veth,) = nic[when]["h2"][H2]["nics"]
        assert veth["name"] == "eth0" and isinstance(veth["counters"]["rx_bytes"], int)
    assert any("network nic stats get" in line for line in lab.calls()), lab.calls()
    # and the driver private statistics through localcli, the same uplinks (issue 25)
    assert any(
        line.startswith("localcli --plugin-dir /usr/lib/vmware/esxcli/int networkinternal nic privstats get -n ")
        for line in lab.calls()
    ), lab.calls()
    assert run["nic"]["counters"] == {"rx_dropped": 0, "tx_dropped": 0, "rx_errors": 0, "tx_errors": 0}
    print(
        f"\nline rate from esxi_network on the stand-in path: {group['line_rate_bps'] / 1e6:.0f} Mb/s, "
        f"{mean / 1e6:.1f} Mbit/s = {group['percent_of_line_rate']:.1f} % of line rate; {want}"
    )
