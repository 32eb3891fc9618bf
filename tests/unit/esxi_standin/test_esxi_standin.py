# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ESXi stand-in (``tests/esxi_standin``) run as subprocesses with its directory first on PATH.

Checks its state transitions, that what it prints is read by the ``plugin_utils/esxi`` parsers exactly
like the recorded outputs, and -- without SSH -- that the install and firewall plans carry a
host from its initial state to prepared and back (the plans' absolute host paths are mapped
into the stand-in's file root; over SSH in the lab the root is ``/``).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import (
    ExecPolicyError,
    VibInstallError,
    failure_from_output,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.firewall import (
    FirewallStatus,
    Ruleset,
    parse_firewall_get,
    parse_ruleset_list,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.firewall_plan import FirewallDesired, plan_firewall
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.install_plan import (
    InstallOptions,
    RestoreRecord,
    plan_install_restore,
    plan_iperf_install,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.paths import (
    BUNDLED_IPERF3,
    BUNDLED_IPERF3_COPY,
    INSTALL_PROBE_PATHS,
    VIB_IPERF,
    VIB_IPERF_COPY,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.ping import parse_vmkping
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.secpolicy import parse_secpolicy_domains
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.settings import (
    ExecInstalledOnly,
    exec_installed_only_from,
    parse_kernel_settings,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.steps import Step
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.versions import (
    EsxiVersion,
    parse_system_version,
    parse_vmware_version,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.vib import (
    Vib,
    parse_iperf_version_banner,
    parse_vib_install_result,
    parse_vib_list,
)
from tests.collection_path import REPO
from tests.unit.plugins.esxi_parsers_for_tests import parse_ipv4_list, parse_nic_list, parse_portgroup_list

STANDIN = REPO / "tests" / "esxi_standin"
TIMEOUT = 20
SHELLS = ["sh"] + (["busybox sh"] if shutil.which("busybox") else [])


class Host:
    """One stand-in host: its own state directory, commands run through ``sh -c``."""

    def __init__(self, state: Path, version: str, shell: str = "sh") -> None:
        self.state = state
        self.shell = shell
        self.env = {
            **os.environ,
            "PATH": f"{STANDIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "ESXI_STANDIN_STATE": str(state),
        }
        self.env.pop("ESXI_STANDIN_ROOT", None)
        self.env.pop("ESXI_STANDIN_VMKPING", None)
        self.ok("esxi-standin", "init", version)
        self.root = Path(self.ok("esxi-standin", "root").strip())

    def run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        script = STANDIN / argv[0]
        cmd = [*self.shell.split(), str(script), *argv[1:]] if script.exists() else list(argv)
        return subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=TIMEOUT, check=False)

    def ok(self, *argv: str) -> str:
        proc = self.run(*argv)
        assert proc.returncode == 0, (argv, proc.stdout, proc.stderr)
        return proc.stdout

    def sh(self, command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.shell.split(), "-c", command],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )

    def host_path(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def files_present(self) -> set[str]:
        return {p for p in INSTALL_PROBE_PATHS if self.host_path(p).exists()}

    def exec_policy(self) -> ExecInstalledOnly:
        kernel = self.ok("esxcli", "system", "settings", "kernel", "list", "-o", "execInstalledOnly")
        advanced = self.run("esxcli", "system", "settings", "advanced", "list", "-o", "/User/execInstalledOnly")
        return exec_installed_only_from(kernel, advanced.stdout)

    def apply(self, steps: Sequence[Step]) -> list[subprocess.CompletedProcess[str]]:
        """Run plan steps; ``cp``/``rm`` paths are mapped into the stand-in's file root."""
        results = []
        for step in steps:
            argv = list(step.argv)
            if argv[0] in ("cp", "rm"):
                argv = [str(self.host_path(a)) if a.startswith("/") else a for a in argv]
            proc = self.sh(shlex.join(argv))
            assert proc.returncode == 0, (step, proc.stdout, proc.stderr)
            results.append(proc)
        return results

    def observe(self) -> tuple[EsxiVersion, list[Vib], set[str], ExecInstalledOnly]:
        """What the install planner needs, read the way the action plugin reads it."""
        return (
            parse_vmware_version(self.ok("vmware", "-vl")),
            parse_vib_list(self.ok("esxcli", "software", "vib", "list")),
            self.files_present(),
            self.exec_policy(),
        )

    def calls(self) -> list[str]:
        return (self.state / "calls.log").read_text().splitlines()


@pytest.fixture(params=SHELLS)
def shell(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_release_profiles(tmp_path: Path) -> None:
    expected = {
        "6.7": ((6, 7, 0), 19195723, 3, 163),
        "7.0": ((7, 0, 3), 22348816, 3, 105),
        "8.0": ((8, 0, 3), 24585383, 3, 60),
    }
    for release, (version, build, update, patch) in expected.items():
        host = Host(tmp_path / release, release)
        from_vmware = parse_vmware_version(host.ok("vmware", "-vl"))
        from_esxcli = parse_system_version(host.ok("esxcli", "system", "version", "get"))
        assert (from_vmware.version, from_vmware.build, from_vmware.update) == (version, build, update)
        assert (from_esxcli.version, from_esxcli.build, from_esxcli.update, from_esxcli.patch) == (
            version,
            build,
            update,
            patch,
        )
        assert host.ok("vmware", "-v") == f"VMware ESXi {'.'.join(map(str, version))} build-{build}\n"
        vibs = parse_vib_list(host.ok("esxcli", "software", "vib", "list"))
        assert [v.name for v in vibs] == ["esx-base"]
        assert vibs[0].version.endswith(f".{patch}.{build}")
        assert vibs[0].platforms == (("host",) if release == "8.0" else None)


def test_replayed_network_outputs(tmp_path: Path) -> None:
    host = Host(tmp_path / "s", "7.0")
    nics = parse_nic_list(host.ok("esxcli", "network", "nic", "list"))
    assert [(n.name, n.link_up, n.speed_mbps) for n in nics][2] == ("vmnic2", False, 0)
    (vmk1,) = parse_ipv4_list(host.ok("esxcli", "network", "ip", "interface", "ipv4", "get", "-i", "vmk1"))
    assert vmk1.address == "192.168.100.28"
    portgroups = parse_portgroup_list(host.ok("esxcli", "network", "vswitch", "standard", "portgroup", "list"))
    assert [p.name for p in portgroups] == ["Management VMkernel", "Server Network"]
    assert host.ok("esxcli", "network", "ip", "interface", "list").startswith("vmk0\n   Name: vmk0\n")


def test_firewall_state(tmp_path: Path, shell: str) -> None:
    host = Host(tmp_path / "s", "7.0", shell)
    assert parse_firewall_get(host.ok("esxcli", "network", "firewall", "get")) == FirewallStatus(True, "DROP", True)
    assert host.ok("esxcli", "network", "firewall", "set", "--enabled", "false") == ""
    assert parse_firewall_get(host.ok("esxcli", "network", "firewall", "get")).enabled is False
    host.ok("localcli", "network", "firewall", "set", "--default-action=true")
    assert parse_firewall_get(host.ok("esxcli", "network", "firewall", "get")) == FirewallStatus(False, "PASS", True)
    host.ok("esxcli", "network", "firewall", "set", "-e", "true", "-d", "false")
    assert parse_firewall_get(host.ok("esxcli", "network", "firewall", "get")) == FirewallStatus(True, "DROP", True)
    assert "localcli network firewall set --default-action=true" in host.calls()
    bad = host.run("esxcli", "network", "firewall", "set", "--enabled", "maybe")
    assert bad.returncode == 1
    assert "not recorded" in bad.stderr


def test_rulesets_2col_and_4col(tmp_path: Path) -> None:
    old = Host(tmp_path / "67", "6.7")
    rulesets = parse_ruleset_list(old.ok("esxcli", "network", "firewall", "ruleset", "list"))
    assert len(rulesets) == 43
    assert {r.name: r.enabled for r in rulesets}["vsanhealth-multicasttest"] is False
    old.ok("esxcli", "network", "firewall", "ruleset", "set", "--ruleset-id", "vsanhealth-multicasttest", "-e", "true")
    rulesets = parse_ruleset_list(old.ok("esxcli", "network", "firewall", "ruleset", "list"))
    assert {r.name: r.enabled for r in rulesets}["vsanhealth-multicasttest"] is True
    assert old.run("esxcli", "network", "firewall", "ruleset", "set", "-r", "iperf", "-e", "true").returncode == 1

    new = Host(tmp_path / "80", "8.0")
    by_name = {r.name: r for r in parse_ruleset_list(new.ok("esxcli", "network", "firewall", "ruleset", "list"))}
    assert len(by_name) == 57
    assert by_name["nfsClient"].enable_disable_configurable is False
    refused = new.run("esxcli", "network", "firewall", "ruleset", "set", "-r", "nfsClient", "-e", "true")
    assert refused.returncode == 1
    new.ok("esxcli", "network", "firewall", "ruleset", "set", "-r", "sshClient", "-e", "true")
    by_name = {r.name: r for r in parse_ruleset_list(new.ok("esxcli", "network", "firewall", "ruleset", "list"))}
    assert (by_name["sshClient"].enabled, by_name["nfsClient"].enabled) == (True, False)


def test_vib_install_acceptance_and_idempotency(tmp_path: Path, shell: str) -> None:
    host = Host(tmp_path / "s", "6.7", shell)
    bundle = tmp_path / "iperf-2.0.5-1-offline_bundle.zip"
    bundle.write_bytes(b"PK")
    refused = host.run("esxcli", "software", "vib", "install", "-d", str(bundle))
    assert refused.returncode == 1
    with pytest.raises(VibInstallError) as err:
        parse_vib_install_result(refused.stdout)
    assert (err.value.error_class, err.value.option) == ("AcceptanceConfigError", "allow_unsigned")
    assert [v.name for v in parse_vib_list(host.ok("esxcli", "software", "vib", "list"))] == ["esx-base"]

    result = parse_vib_install_result(
        host.ok("esxcli", "software", "vib", "install", "-d", str(bundle), "--no-sig-check")
    )
    assert (result.installed, result.reboot_required, result.dpu_results) == (
        ("DAST_bootbank_iperf_2.0.5-1",),
        False,
        None,
    )
    vibs = {v.name: v for v in parse_vib_list(host.ok("esxcli", "software", "vib", "list"))}
    assert (vibs["iperf"].version, vibs["iperf"].vendor, vibs["iperf"].acceptance_level) == (
        "2.0.5-1",
        "DAST",
        "CommunitySupported",
    )
    assert host.host_path(VIB_IPERF).exists()
    again = parse_vib_install_result(
        host.ok("esxcli", "software", "vib", "install", "-d", str(bundle), "--no-sig-check")
    )
    assert (again.installed, again.skipped) == ((), ("DAST_bootbank_iperf_2.0.5-1",))

    removed = parse_vib_install_result(host.ok("esxcli", "software", "vib", "remove", "-n", "iperf"))
    assert (removed.kind, removed.removed) == ("Removal", ("DAST_bootbank_iperf_2.0.5-1",))
    assert not host.host_path(VIB_IPERF).exists()
    missing = host.run("esxcli", "software", "vib", "install", "-d", str(tmp_path / "iperf-missing.zip"))
    assert missing.returncode == 1


def test_vib_install_8x_layout_and_lowered_acceptance(tmp_path: Path) -> None:
    host = Host(tmp_path / "s", "8.0")
    level = host.ok("esxcli", "software", "acceptance", "set", "--level=CommunitySupported")
    assert level == "Host acceptance level changed to 'CommunitySupported'.\n"
    assert host.ok("esxcli", "software", "acceptance", "get") == "CommunitySupported\n"
    out = host.ok(
        "esxcli", "software", "vib", "install", "-v", "http://vibsdepot.v-front.de/x/iperf-2.0.5-1.x86_64.vib"
    )
    assert out.splitlines()[-2:] == ["   Reboot Required: false", "   DPU Results:"]
    result = parse_vib_install_result(out)
    assert (result.installed_names, result.dpu_results) == (("iperf",), "")
    assert parse_vib_list(host.ok("esxcli", "software", "vib", "list"))[-1].platforms == ("host",)


def test_exec_installed_only_state(tmp_path: Path) -> None:
    eight = Host(tmp_path / "80", "8.0")
    assert eight.exec_policy() == ExecInstalledOnly(runtime_option=1, boot_runtime=False, boot_configured=False)
    assert eight.exec_policy().active is True
    eight.ok("esxcli", "system", "settings", "advanced", "set", "-o", "/User/execInstalledOnly", "-i", "0")
    assert eight.exec_policy().active is False
    eight.ok("esxcli", "system", "settings", "kernel", "set", "-s", "execInstalledOnly", "-v", "TRUE")
    (row,) = parse_kernel_settings(
        eight.ok("esxcli", "system", "settings", "kernel", "list", "-o", "execinstalledonly")
    )
    assert (row.configured, row.runtime) == ("TRUE", "FALSE")  # takes effect at the next boot
    eight.ok("esxi-standin", "reboot")
    assert eight.exec_policy() == ExecInstalledOnly(runtime_option=0, boot_runtime=True, boot_configured=True)

    seven = Host(tmp_path / "70", "7.0")
    proc = seven.run("esxcli", "system", "settings", "advanced", "set", "-o", "/User/execInstalledOnly", "-i", "0")
    assert proc.returncode == 1
    failure = failure_from_output(proc.stdout, proc.returncode)
    assert failure is not None and failure.error_class == "NoMatchError"
    assert seven.exec_policy() == ExecInstalledOnly(runtime_option=None, boot_runtime=False, boot_configured=False)
    assert seven.exec_policy().active is False


def test_bundled_binary_rules(tmp_path: Path) -> None:
    host = Host(tmp_path / "s", "8.0")
    original = str(host.host_path(BUNDLED_IPERF3))
    copy = str(host.host_path(BUNDLED_IPERF3_COPY))
    listen = host.sh(f"{shlex.quote(original)} -s --version")
    assert listen.returncode == 1
    assert listen.stdout == (
        "iperf3: error - unable to start listener for connections: Operation not permitted\niperf3: exiting\n"
    )
    host.sh(f"cp {shlex.quote(original)} {shlex.quote(copy)}")
    blocked = host.sh(f"{shlex.quote(copy)} --version")
    assert blocked.returncode == 126
    assert "Permission denied" in blocked.stderr
    vobd = (host.state / "vobd.log").read_text()
    assert f"[vob.uw.exec.installonly.violation] Execution of non-installed file prevented: {copy}" in vobd
    host.ok("esxcli", "system", "settings", "advanced", "set", "-o", "/User/execInstalledOnly", "-i", "0")
    runs = host.sh(f"{shlex.quote(copy)} --version")
    assert runs.returncode == 0
    assert runs.stdout.startswith("iperf 3.")
    # the installed original runs under execInstalledOnly; appDom disabled lets it listen
    host.ok("esxcli", "system", "settings", "advanced", "set", "-o", "/User/execInstalledOnly", "-i", "1")
    host.ok("localcli", "system", "secpolicy", "domain", "set", "-n", "appDom", "-l", "disabled")
    domains = {d.name: d for d in parse_secpolicy_domains(host.ok("esxcli", "system", "secpolicy", "domain", "list"))}
    assert domains["appDom"].enforcing is False
    assert host.sh(f"{shlex.quote(original)} -s --version").stdout.startswith("iperf 3.")


def test_vmkping_replay(tmp_path: Path) -> None:
    host = Host(tmp_path / "s", "8.0")
    too_long = parse_vmkping(host.run("vmkping", "-I", "vmk1", "-d", "-s", "8972", "198.18.0.2").stdout)
    assert (too_long.reason, too_long.payload_size, too_long.transmitted) == ("message_too_long", 8972, 3)
    host.ok("esxi-standin", "set", "vmk_mtu", "9000")
    dropped = host.run("vmkping", "-d", "-s", "8972", "198.18.0.2")
    assert dropped.returncode == 1
    assert parse_vmkping(dropped.stdout).reason == "no_reply"
    host.ok("esxi-standin", "set", "path_mtu", "9000")
    ok = parse_vmkping(host.ok("vmkping", "-d", "-s", "8972", "198.18.0.2"))
    assert (ok.ok, ok.reply_bytes, ok.rtt_min_ms, ok.rtt_avg_ms, ok.rtt_max_ms) == (True, 8980, 0.339, 0.458, 0.695)
    small = parse_vmkping(host.ok("vmkping", "-c", "2", "198.18.0.2"))
    assert (small.payload_size, small.reply_bytes, small.received, small.rtt_max_ms) == (56, 64, 2, 0.695)


def test_vmkping_real_mode_loopback(tmp_path: Path) -> None:
    if not shutil.which("ping"):
        pytest.skip("no ping")
    host = Host(tmp_path / "s", "8.0")
    host.ok("esxi-standin", "set", "vmkping_mode", "real")
    proc = host.run("vmkping", "-d", "-s", "1472", "-c", "2", "127.0.0.1")
    if "Operation not permitted" in proc.stdout + proc.stderr:
        pytest.skip("ping needs privileges here")
    result = parse_vmkping(proc.stdout)
    assert (result.ok, result.reason, result.payload_size, result.reply_bytes) == (True, "ok", 1472, 1480)


@pytest.mark.parametrize(
    ("release", "options", "first_action"),
    [
        ("6.7", InstallOptions(vib_source="BUNDLE", allow_unsigned=True), "vib_install"),
        ("7.0", InstallOptions(), "copy_binary"),
        ("8.0", InstallOptions(relax_exec_policy=True), "relax_exec_policy"),
    ],
)
def test_install_flow_prepare_idempotent_restore(
    tmp_path: Path, release: str, options: InstallOptions, first_action: str
) -> None:
    host = Host(tmp_path / "s", release)
    if options.vib_source == "BUNDLE":
        bundle = tmp_path / "iperf-2.0.5-1-offline_bundle.zip"
        bundle.write_bytes(b"PK")
        options = InstallOptions(vib_source=str(bundle), allow_unsigned=True)

    initial_policy = host.exec_policy()
    plan = plan_iperf_install(*host.observe(), options)
    assert plan.steps[0].action == first_action
    host.apply(plan.steps)
    binary = host.host_path(plan.binary)
    assert binary.exists()
    # iperf2 -v prints its banner on stderr and exits 1; iperf3 --version exits 0
    version_out = host.sh(f"{shlex.quote(str(binary))} {'--version' if plan.tool == 'iperf3' else '-v'}")
    assert version_out.returncode == (0 if plan.tool == "iperf3" else 1), version_out.stderr
    assert parse_iperf_version_banner(version_out.stdout + version_out.stderr)

    again = plan_iperf_install(*host.observe(), options)
    assert again.steps == ()

    restore = plan_install_restore(
        plan.restore,
        files_present=host.files_present(),
        exec_installed_only=host.exec_policy(),
        vib_list=parse_vib_list(host.ok("esxcli", "software", "vib", "list")),
        remove_vib=True,
    )
    host.apply(restore)
    assert not binary.exists()
    assert host.exec_policy() == initial_policy
    assert [v.name for v in parse_vib_list(host.ok("esxcli", "software", "vib", "list"))] == ["esx-base"]
    assert (
        plan_install_restore(
            plan.restore,
            files_present=host.files_present(),
            exec_installed_only=host.exec_policy(),
            vib_list=parse_vib_list(host.ok("esxcli", "software", "vib", "list")),
            remove_vib=True,
        )
        == ()
    )
    if release == "6.7":
        assert host.host_path(VIB_IPERF_COPY) == binary
        assert plan.restore == RestoreRecord(created_files=(VIB_IPERF_COPY,), installed_vib="iperf")


def test_install_flow_8x_refused_without_relax(tmp_path: Path) -> None:
    host = Host(tmp_path / "s", "8.0")
    with pytest.raises(ExecPolicyError):
        plan_iperf_install(*host.observe(), InstallOptions())
    assert host.files_present() == {BUNDLED_IPERF3}


def test_firewall_flow_prepare_idempotent_restore(tmp_path: Path, shell: str) -> None:
    host = Host(tmp_path / "s", "6.7", shell)

    def current() -> FirewallStatus:
        return parse_firewall_get(host.ok("esxcli", "network", "firewall", "get"))

    def rulesets() -> list[Ruleset]:
        listed: list[Ruleset] = parse_ruleset_list(host.ok("esxcli", "network", "firewall", "ruleset", "list"))
        return listed

    desired = FirewallDesired(enabled=False, default_action="PASS", rulesets={"vsanhealth-multicasttest": True})
    plan = plan_firewall(current(), desired, rulesets())
    assert [s.action for s in plan.steps] == ["firewall_enabled", "firewall_default_action", "ruleset_set"]
    host.apply(plan.steps)
    assert current() == FirewallStatus(False, "PASS", True)
    assert plan_firewall(current(), desired, rulesets()).changed is False
    restore = plan_firewall(current(), plan.previous, rulesets())
    assert [s.action for s in restore.steps] == ["ruleset_set", "firewall_default_action", "firewall_enabled"]
    host.apply(restore.steps)
    assert current() == FirewallStatus(True, "DROP", True)
    states = {r.name: r.enabled for r in rulesets()}
    assert states["vsanhealth-multicasttest"] is False
    assert host.calls().count("esxcli network firewall set --enabled false") == 1


def test_unknown_command_and_formatter(tmp_path: Path) -> None:
    host = Host(tmp_path / "s", "7.0")
    for argv in (
        ("esxcli", "network", "firewall", "frobnicate"),
        ("esxcli", "--formatter=csv", "network", "nic", "list"),
        ("esxi-standin", "set", "nonsense", "1"),
    ):
        proc = host.run(*argv)
        assert proc.returncode == 1
        assert "esxi-standin" in proc.stderr
