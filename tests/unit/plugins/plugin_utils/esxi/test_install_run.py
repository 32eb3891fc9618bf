# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""esxi_iperf_install backend over the ESXi stand-in: 6.7 VIB, 7.0 copy, 8.0 execInstalledOnly
(refused, runtime option, appDom), check -> real -> idempotent -> restore, failures halfway.

The stand-in host and its path mapping: tests/unit/plugins/esxi_standin_host.py.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.install_run import (
    UPLOAD_PLACEHOLDER,
    EsxiInstallError,
    run,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.paths import (
    BUNDLED_IPERF3,
    BUNDLED_IPERF3_COPY,
    VIB_IPERF,
    VIB_IPERF_COPY,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import CommandOutput
from tests.unit.plugins.esxi_standin_host import MappedHost


def _banner_version(argv: list[str]) -> str:
    """The version the local Debian binary prints (the stand-in wraps it)."""
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    m = re.search(r"iperf (?:version )?(\d+\.\d+(?:\.\d+)?)", proc.stdout + proc.stderr)
    assert m, proc
    return m.group(1)


IPERF3_VERSION = _banner_version(["iperf3", "-v"])
IPERF2_VERSION = _banner_version(["iperf", "-v"])


def _bundle(tmp_path: Path) -> str:
    path = tmp_path / "iperf-2.0.5-1-offline_bundle.zip"
    path.write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip: the stand-in checks name and presence
    return str(path)


# -- ESXi 7.0: copy the shipped iperf3 ---------------------------------------------------------


def test_7_0_check_real_idempotent_restore(tmp_path: Path) -> None:
    host = MappedHost(tmp_path / "s", "7.0")

    checked = run({}, host.execute, check_mode=True)
    assert checked["changed"] is True
    assert checked["commands"] == [f"cp {BUNDLED_IPERF3} {BUNDLED_IPERF3_COPY}"]
    assert (checked["esxi_version"], checked["esxi_build"]) == ("7.0.3", 22348816)
    assert (checked["method"], checked["tool"], checked["binary"]) == ("bundled", "iperf3", BUNDLED_IPERF3_COPY)
    assert (checked["tool_version"], checked["verified"]) == (None, False)
    assert checked["diff"]["before"]["binary_present"] is False
    assert checked["diff"]["after"]["binary_present"] is True
    # 7.0.3 has no /User/execInstalledOnly (recorded NoMatchError): null, boot option FALSE -> inactive
    assert checked["previous"]["exec_installed_only"] is None
    assert checked["previous"]["exec_installed_only_active"] is False
    assert checked["restore"] == {"created_files": [BUNDLED_IPERF3_COPY]}
    assert host.changes() == []
    assert not host.exists(BUNDLED_IPERF3_COPY)

    real = run({}, host.execute, check_mode=False)
    assert real["changed"] is True
    assert host.exists(BUNDLED_IPERF3_COPY)
    assert (real["tool_version"], real["verified"]) == (IPERF3_VERSION, True)
    assert real["current"]["binary_present"] is True
    assert real["restore"] == {"created_files": [BUNDLED_IPERF3_COPY]}
    assert host.changes() == [f"cp {BUNDLED_IPERF3} {BUNDLED_IPERF3_COPY}"]

    again_check = run({}, host.execute, check_mode=True)
    again = run({}, host.execute, check_mode=False)
    assert (again_check["changed"], again["changed"]) == (False, False)
    assert again["commands"] == [] and again["restore"] == {}
    assert again["tool_version"] == IPERF3_VERSION  # verified also when nothing changed
    assert any("already exists" in w for w in again["warnings"])

    restore_check = run({"restore": real["restore"]}, host.execute, check_mode=True)
    assert restore_check["changed"] is True
    assert restore_check["commands"] == [f"rm -f {BUNDLED_IPERF3_COPY}"]
    assert host.exists(BUNDLED_IPERF3_COPY)
    restored = run({"restore": real["restore"]}, host.execute, check_mode=False)
    assert restored["changed"] is True
    assert restored["current"]["created_files"] == {BUNDLED_IPERF3_COPY: False}
    assert not host.exists(BUNDLED_IPERF3_COPY)
    assert host.exists(BUNDLED_IPERF3)  # the shipped binary is never touched
    assert run({"restore": real["restore"]}, host.execute, check_mode=False)["changed"] is False
    assert run({"restore": {}}, host.execute, check_mode=False)["changed"] is False


# -- ESXi 8.0: execInstalledOnly ---------------------------------------------------------------


def test_8_0_refuses_without_relax_exec_policy(tmp_path: Path) -> None:
    host = MappedHost(tmp_path / "s", "8.0")
    for check_mode in (True, False):
        with pytest.raises(EsxiInstallError) as err:
            run({}, host.execute, check_mode=check_mode)
        message = err.value.message
        assert "execInstalledOnly is active on this VMware ESXi 8.0.3 Update 3 build-24585383 host" in message
        assert f"{BUNDLED_IPERF3_COPY} is not installed from a VIB and would be refused" in message
        assert "set relax_exec_policy: true" in message
        assert err.value.result["restore"] == {}
    assert host.changes() == []
    assert host.get("eio_runtime") == "1"
    assert not host.exists(BUNDLED_IPERF3_COPY)


def test_8_0_runtime_option_relaxed_and_restored(tmp_path: Path) -> None:
    host = MappedHost(tmp_path / "s", "8.0")
    args = {"relax_exec_policy": True}
    checked = run(args, host.execute, check_mode=True)
    assert checked["commands"] == [
        "esxcli system settings advanced set -o /User/execInstalledOnly -i 0",
        f"cp {BUNDLED_IPERF3} {BUNDLED_IPERF3_COPY}",
    ]
    assert host.get("eio_runtime") == "1"

    real = run(args, host.execute, check_mode=False)
    assert real["changed"] is True
    assert real["previous"]["exec_installed_only"] == 1
    assert real["previous"]["exec_installed_only_active"] is True
    assert real["current"]["exec_installed_only"] == 0
    assert real["current"]["exec_installed_only_active"] is False
    assert real["restore"] == {"created_files": [BUNDLED_IPERF3_COPY], "exec_installed_only_previous": 1}
    assert real["tool_version"] == IPERF3_VERSION
    assert host.get("eio_runtime") == "0"

    again = run(args, host.execute, check_mode=False)
    assert again["changed"] is False and again["restore"] == {}

    restored = run({"restore": real["restore"]}, host.execute, check_mode=False)
    assert restored["commands"] == [
        "esxcli system settings advanced set -o /User/execInstalledOnly -i 1",
        f"rm -f {BUNDLED_IPERF3_COPY}",
    ]
    assert restored["previous"]["exec_installed_only"] == 0
    assert restored["current"]["exec_installed_only"] == 1
    assert host.get("eio_runtime") == "1"
    assert not host.exists(BUNDLED_IPERF3_COPY)
    assert run({"restore": real["restore"]}, host.execute, check_mode=False)["changed"] is False


def test_8_0_copy_refused_while_execinstalledonly_is_on(tmp_path: Path) -> None:
    """What the relax step prevents: the stand-in refuses a non-installed copy (exit 126)."""
    host = MappedHost(tmp_path / "s", "8.0")
    real = run({"relax_exec_policy": True}, host.execute, check_mode=False)
    host.set("eio_runtime", "1")  # someone turned it back on
    with pytest.raises(EsxiInstallError) as err:
        run({"relax_exec_policy": False, "method": "bundled"}, host.execute, check_mode=False)
    assert "set relax_exec_policy: true" in err.value.message
    out = host.execute(f"{BUNDLED_IPERF3_COPY} -v 2>&1")
    assert out.rc == 126
    assert f"sh: {BUNDLED_IPERF3_COPY}: Permission denied" in out.stdout
    assert "[vob.uw.exec.installonly.violation] Execution of non-installed file prevented" in (
        (host.state / "vobd.log").read_text()
    )
    assert real["restore"]["exec_installed_only_previous"] == 1


def test_8_0_app_domain_route(tmp_path: Path) -> None:
    host = MappedHost(tmp_path / "s", "8.0")
    args = {"relax_exec_policy": True, "relax_mode": "app_domain"}
    real = run(args, host.execute, check_mode=False)
    assert real["commands"] == ["localcli system secpolicy domain set -n appDom -l disabled"]
    assert (real["binary"], real["source_binary"]) == (BUNDLED_IPERF3, BUNDLED_IPERF3)
    assert real["previous"]["app_domain"] == "enforcing"
    assert real["current"]["app_domain"] == "disabled"
    assert real["restore"] == {"app_domain_previous": "enforcing"}
    assert real["tool_version"] == IPERF3_VERSION
    assert host.domain("appDom") == "disabled"
    assert host.get("eio_runtime") == "1"  # execInstalledOnly stays on
    assert not host.exists(BUNDLED_IPERF3_COPY)

    again = run(args, host.execute, check_mode=False)
    assert again["changed"] is False
    restored = run({"restore": real["restore"]}, host.execute, check_mode=False)
    assert restored["commands"] == ["localcli system secpolicy domain set -n appDom -l enforcing"]
    assert host.domain("appDom") == "enforcing"


def test_app_domain_with_the_vib_is_refused(tmp_path: Path) -> None:
    host = MappedHost(tmp_path / "s", "8.0")
    with pytest.raises(EsxiInstallError) as err:
        run({"relax_exec_policy": True, "relax_mode": "app_domain", "method": "vib"}, host.execute, check_mode=False)
    assert "relax_mode app_domain lets the shipped iperf3 listen; it does not apply to method vib" in err.value.message
    assert host.changes() == []


def test_boot_option_cannot_be_relaxed(tmp_path: Path) -> None:
    host = MappedHost(tmp_path / "s", "8.0")
    host.set("eio_boot_configured", "TRUE")
    assert host.sh("esxi-standin reboot").returncode == 0
    with pytest.raises(EsxiInstallError) as err:
        run({"relax_exec_policy": True}, host.execute, check_mode=False)
    assert "execInstalledOnly is enforced by the boot option" in err.value.message
    assert "this collection does not reboot hosts" in err.value.message
    assert host.changes() == []


def test_failure_halfway_returns_what_to_undo(tmp_path: Path) -> None:
    host = MappedHost(tmp_path / "s", "8.0")
    host.fail["cp "] = CommandOutput(1, "", "cp: can't create '/usr/lib/vmware/vsan/bin/iperf3.copy': No space left")
    with pytest.raises(EsxiInstallError) as err:
        run({"relax_exec_policy": True}, host.execute, check_mode=False)
    message = err.value.message
    assert f"'cp {BUNDLED_IPERF3} {BUNDLED_IPERF3_COPY}'" in message
    assert "No space left" in message
    assert "Commands already applied: ['esxcli system settings advanced set -o /User/execInstalledOnly -i 0']" in (
        message
    )
    assert err.value.result["restore"] == {"exec_installed_only_previous": 1}
    assert err.value.result["changed"] is True
    host.fail.clear()
    back = run({"restore": err.value.result["restore"]}, host.execute, check_mode=False)
    assert back["changed"] is True
    assert host.get("eio_runtime") == "1"


# -- ESXi 6.7: the community VIB -----------------------------------------------------------------


def test_6_7_vib_needs_allow_unsigned(tmp_path: Path) -> None:
    host = MappedHost(tmp_path / "s", "6.7")
    bundle = _bundle(tmp_path)
    with pytest.raises(EsxiInstallError) as err:
        run({"vib_source": bundle}, host.execute, check_mode=False)
    message = err.value.message
    assert "[AcceptanceConfigError] VIB DAST_bootbank_iperf_2.0.5-1's acceptance level is community" in message
    assert "set allow_unsigned: true so the install runs with --no-sig-check" in message
    assert message.endswith(" Nothing was changed.")
    assert err.value.result["restore"] == {}
    assert "iperf|" not in (host.state / "vibs").read_text()


def test_6_7_vib_from_host_path_check_real_idempotent_restore(tmp_path: Path) -> None:
    host = MappedHost(tmp_path / "s", "6.7")
    args = {"vib_source": _bundle(tmp_path), "allow_unsigned": True}
    install_cmd = f"esxcli software vib install -d {args['vib_source']} --no-sig-check"

    checked = run(args, host.execute, check_mode=True)
    assert checked["commands"] == [install_cmd, f"cp {VIB_IPERF} {VIB_IPERF_COPY}"]
    assert checked["previous"]["vib"] == ""
    assert host.changes() == []

    real = run(args, host.execute, check_mode=False)
    assert (real["method"], real["tool"], real["binary"]) == ("vib", "iperf2", VIB_IPERF_COPY)
    assert real["tool_version"] == IPERF2_VERSION
    assert real["current"]["vib"] == "2.0.5-1"
    assert real["restore"] == {"created_files": [VIB_IPERF_COPY], "installed_vib": "iperf"}
    assert host.exists(VIB_IPERF) and host.exists(VIB_IPERF_COPY)

    again = run(args, host.execute, check_mode=False)
    assert again["changed"] is False

    kept = run({"restore": real["restore"]}, host.execute, check_mode=False)
    assert kept["commands"] == [f"rm -f {VIB_IPERF_COPY}"]
    assert any("VIB installed by the install task is kept" in w for w in kept["warnings"])
    assert "iperf|" in (host.state / "vibs").read_text()
    removed = run({"restore": real["restore"], "remove_vib": True}, host.execute, check_mode=False)
    assert removed["commands"] == ["esxcli software vib remove -n iperf"]
    assert "iperf|" not in (host.state / "vibs").read_text()
    assert not host.exists(VIB_IPERF)


def test_6_7_vib_uploaded_from_the_controller(tmp_path: Path) -> None:
    host = MappedHost(tmp_path / "s", "6.7")
    (tmp_path / "controller").mkdir()
    local = _bundle(tmp_path / "controller")
    uploads: list[str] = []

    def upload(path: str) -> str:
        remote_dir = tmp_path / "remote-tmp"
        remote_dir.mkdir()
        uploads.append(path)
        return str(shutil.copy(path, remote_dir / Path(path).name))

    checked = run({"vib_upload": local, "allow_unsigned": True}, host.execute, check_mode=True, local_upload=local)
    assert checked["commands"][0] == (
        f"esxcli software vib install -d '{UPLOAD_PLACEHOLDER}/iperf-2.0.5-1-offline_bundle.zip' --no-sig-check"
    )
    assert uploads == []
    real = run(
        {"vib_upload": local, "allow_unsigned": True}, host.execute, check_mode=False, upload=upload, local_upload=local
    )
    remote = tmp_path / "remote-tmp" / "iperf-2.0.5-1-offline_bundle.zip"
    assert uploads == [local]
    assert real["commands"][0] == f"esxcli software vib install -d {remote} --no-sig-check"
    assert real["tool"] == "iperf2" and real["verified"] is True
    # already installed: nothing is uploaded again
    again = run(
        {"vib_upload": local, "allow_unsigned": True}, host.execute, check_mode=False, upload=upload, local_upload=local
    )
    assert again["changed"] is False and uploads == [local]


def test_6_7_without_a_source(tmp_path: Path) -> None:
    host = MappedHost(tmp_path / "s", "6.7")
    with pytest.raises(EsxiInstallError) as err:
        run({}, host.execute, check_mode=True)
    assert (
        "the iperf VIB is not installed on this VMware ESXi 6.7.0 Update 3 build-19195723 host and neither"
        " vib_upload nor vib_source is set. Fix: set vib_upload to the VIB"
    ) in err.value.message
    assert host.changes() == []


def test_6_7_bundled_iperf3_on_request(tmp_path: Path) -> None:
    host = MappedHost(tmp_path / "s", "6.7")
    out = run({"method": "bundled", "vib_source": "/nowhere.vib"}, host.execute, check_mode=False)
    assert out["binary"] == BUNDLED_IPERF3_COPY
    assert any("vib_source/vib_upload is not used" in w for w in out["warnings"])


# -- refusals ------------------------------------------------------------------------------------


def test_not_esxi() -> None:
    def execute(command: str) -> CommandOutput:
        return CommandOutput(127, "", f"sh: {command.split()[0]}: not found")

    with pytest.raises(EsxiInstallError) as err:
        run({}, execute, check_mode=True)
    assert "this host does not look like ESXi ('vmware -vl' exited 127: sh: vmware: not found" in err.value.message
    assert "for a Linux host install the iperf3 or iperf package instead" in err.value.message


@pytest.mark.parametrize(
    ("restore", "message"),
    [
        ({"created_files": ["/etc/passwd"]}, "restore.created_files may only name the copies this module makes"),
        ({"bogus": 1}, "restore has unknown keys ['bogus']"),
        ({"installed_vib": "iperf; reboot"}, "restore.installed_vib must be a VIB name"),
        ({"exec_installed_only_previous": 7}, "restore.exec_installed_only_previous must be 0 or 1"),
        ({"exec_installed_only_previous": True}, "restore.exec_installed_only_previous must be 0 or 1"),
        ({"app_domain_previous": "off"}, "restore.app_domain_previous must be 'enforcing' or 'disabled'"),
    ],
)
def test_restore_values_are_checked(tmp_path: Path, restore: dict[str, Any], message: str) -> None:
    host = MappedHost(tmp_path / "s", "8.0")
    with pytest.raises(EsxiInstallError) as err:
        run({"restore": restore}, host.execute, check_mode=False)
    assert message in err.value.message
    assert host.commands == []
