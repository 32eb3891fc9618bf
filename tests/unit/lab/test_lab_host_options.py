# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lab/esxilab_lab.py --host-env and --host-bind without building anything: validation, the
generated sshd_config, lab.json, and the mount commands for sshd's private mount namespace;
also the sessions' no-rc-file settings, the 64-host limit and the neighbour flushes of a build.

Built for real (root, namespaces, mounts) in tests/integration/test_esxi_e2e.py.
"""

from __future__ import annotations

import importlib.util
import shlex
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.collection_path import REPO


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("esxilab_lab", REPO / "lab" / "esxilab_lab.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["esxilab_lab"] = module
    spec.loader.exec_module(module)
    return module


lab = _load()


def _spec(tmp_path: Path, env: tuple[str, ...] = (), binds: tuple[str, ...] = ()) -> Any:
    return lab.build_spec(
        name="eltunit", hosts=2, state_dir=tmp_path / "state", subnet="198.19.249.0/24", host_env=env, host_bind=binds
    )


def test_host_env_goes_on_the_one_setenv_line(tmp_path: Path) -> None:
    spec = _spec(tmp_path, env=("h1=PATH=/srv/standin:/usr/bin:/bin", "h1=FOO=1", "h1=FOO=2"))
    h1, h2 = spec.hosts
    assert h1.env == (("PATH", "/srv/standin:/usr/bin:/bin"), ("FOO", "2"))  # a later item wins per name
    text1 = lab.sshd_config_text(spec, h1)
    text2 = lab.sshd_config_text(spec, h2)
    setenv1 = [line for line in text1.splitlines() if line.startswith("SetEnv")]
    setenv2 = [line for line in text2.splitlines() if line.startswith("SetEnv")]
    # sshd honours only the first SetEnv directive
    assert setenv1 == ["SetEnv LAB_HOST=h1 LAB_NETNS=eltunit-h1 SHLVL=1 PATH=/srv/standin:/usr/bin:/bin FOO=2"]
    assert setenv2 == ["SetEnv LAB_HOST=h2 LAB_NETNS=eltunit-h2 SHLVL=1"]  # nothing more for hosts without options
    assert "--host-bind" not in text2


def test_sessions_start_no_rc_file(tmp_path: Path) -> None:
    """Like ESXi's busybox sh: sshd runs no ~/.ssh/rc, and bash skips ~/.bashrc as a nested shell (SHLVL=1)."""
    spec = _spec(tmp_path)
    text = lab.sshd_config_text(spec, spec.hosts[0]).splitlines()
    assert "PermitUserRC no" in text
    assert next(line for line in text if line.startswith("SetEnv")).split()[3] == "SHLVL=1"


def test_up_to_64_hosts_fit_subnet_and_interface_names(tmp_path: Path) -> None:
    spec = lab.build_spec(name="abcdefghijk", hosts=64, state_dir=tmp_path, subnet="198.19.249.0/24")
    assert len(spec.hosts) == 64 and spec.hosts[-1].veth == "abcdefghijk-v64"
    assert max(len(h.veth) for h in spec.hosts) <= 15 and len(spec.bridge) <= 15  # IFNAMSIZ - 1
    assert str(spec.hosts[-1].address.ip) == "198.19.249.74"
    assert len({h.mac for h in spec.hosts}) == 64
    with pytest.raises(lab.LabError, match="--hosts 65: must be between 2 and 64"):
        lab.build_spec(name="x", hosts=65, state_dir=tmp_path, subnet="198.19.249.0/24")
    with pytest.raises(lab.LabError, match="too small for the controller and 64 hosts"):
        lab.build_spec(name="x", hosts=64, state_dir=tmp_path, subnet="198.19.249.0/26")


def test_host_bind_is_listed_in_sshd_config_so_a_change_restarts_sshd(tmp_path: Path) -> None:
    spec = _spec(tmp_path, binds=("h1=/tmp/x/../vm:/usr/lib/vmware", "h1=/tmp/opt:/opt/"))
    h1, _h2 = spec.hosts
    assert h1.binds == (("/tmp/vm", "/usr/lib/vmware"), ("/tmp/opt", "/opt"))
    text = lab.sshd_config_text(spec, h1)
    assert "# --host-bind: /tmp/vm on /usr/lib/vmware (private mount namespace of this sshd)" in text
    assert "# --host-bind: /tmp/opt on /opt (private mount namespace of this sshd)" in text
    options = lab.state_doc(spec)["options"]
    assert options["host_bind"] == ["h1=/tmp/vm:/usr/lib/vmware", "h1=/tmp/opt:/opt"]
    assert "host_env" not in options
    assert "host_bind" not in lab.state_doc(_spec(tmp_path))["options"]  # other labs' lab.json stays the same


@pytest.mark.parametrize(
    ("option", "item", "message"),
    [
        ("env", "h1PATH=/x", "use HOST=NAME=VALUE"),
        ("env", "h3=PATH=/x", "the lab has only h1..h2"),
        ("env", "h1=1PATH=/x", "use HOST=NAME=VALUE"),
        ("env", "h1=LAB_HOST=x", "LAB_HOST is set by the lab itself"),
        ("env", "h1=SHLVL=0", "SHLVL is set by the lab itself"),
        ("env", "h1=PATH=/a b", "may not contain blanks, quotes, backslashes or '#'"),
        ("env", "h1=PATH=/a#b", "may not contain blanks, quotes, backslashes or '#'"),
        ("bind", "h1=/a", "use HOST=SRC:DST with absolute paths"),
        ("bind", "h1=a:/b", "use HOST=SRC:DST with absolute paths"),
        ("bind", "h1=/a:/b,c", "use HOST=SRC:DST with absolute paths"),
        ("bind", "h1=/a:/", "/ cannot be replaced"),
        ("bind", "h1=/a:/proc/sys", "/proc/sys cannot be replaced"),
        ("bind", "h1=/a:/run", "/run cannot be replaced"),
        ("bind", "h9=/a:/b", "the lab has only h1..h2"),
    ],
)
def test_refusals(tmp_path: Path, option: str, item: str, message: str) -> None:
    with pytest.raises(lab.LabError, match=None) as err:
        _spec(tmp_path, **({"env": (item,)} if option == "env" else {"binds": (item,)}))
    assert message in str(err.value)


def test_mount_commands_overlay_a_missing_mount_point_without_creating_it(tmp_path: Path) -> None:
    src_dir, src_file = tmp_path / "src", tmp_path / "src-file"
    src_dir.mkdir()
    src_file.write_text("x")
    existing = tmp_path / "existing"
    existing.mkdir()
    anchor = tmp_path / "anchor"
    anchor.mkdir()
    binds = (
        f"h1={src_dir}:{existing}",
        f"h1={src_dir}:{anchor}/lib/vmware",
        f"h1={src_file}:{anchor}/etc/file",
    )
    spec = _spec(tmp_path, binds=binds)
    h1 = spec.hosts[0]
    commands = [shlex.split(c) for c in lab.mount_commands(spec, h1)]
    overlay = spec.overlay_dir(h1)
    upper, work = overlay / "0" / "upper", overlay / "0" / "work"
    assert commands == [
        ["mount", "-t", "overlay", "overlay", "-o", f"lowerdir={anchor},upperdir={upper},workdir={work}", str(anchor)],
        ["mount", "--bind", str(src_dir), str(existing)],
        ["mount", "--bind", str(src_dir), f"{anchor}/lib/vmware"],
        ["mount", "--bind", str(src_file), f"{anchor}/etc/file"],
    ]
    assert (upper / "lib" / "vmware").is_dir()  # the mount points live in the upper dir ...
    assert (upper / "etc" / "file").is_file()
    assert sorted(p.name for p in anchor.iterdir()) == []  # ... not in the real directory


def test_mount_commands_refuse_what_cannot_be_mounted(tmp_path: Path) -> None:
    spec = _spec(tmp_path, binds=(f"h1={tmp_path}/missing:{tmp_path}",))
    with pytest.raises(lab.LabError, match="does not exist; create it first"):
        lab.mount_commands(spec, spec.hosts[0])
    spec = _spec(tmp_path, binds=(f"h1={tmp_path}:/esxilab-nonexistent-top-level",))
    with pytest.raises(lab.LabError, match="cannot be overlaid; bind onto an existing path instead"):
        lab.mount_commands(spec, spec.hosts[0])


def test_cli_accepts_the_options() -> None:
    args = lab.parser().parse_args(
        ["up", "--host-env", "h1=PATH=/x", "--host-bind", "h1=/a:/b", "--host-bind", "h2=/c:/d"]
    )
    assert (args.host_env, args.host_bind) == (["h1=PATH=/x"], ["h1=/a:/b", "h2=/c:/d"])


def test_a_fresh_host_is_flushed_only_from_namespaces_older_than_this_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = lab.build_spec(name="eltunit", hosts=4, state_dir=tmp_path, subnet="198.19.249.0/24")
    commands: list[list[str]] = []
    monkeypatch.setattr(lab, "run", lambda argv, **_kw: commands.append(list(argv)))
    monkeypatch.setattr(lab, "list_netns", lambda: {h.netns for h in spec.hosts} | {"other-h1"})
    h4 = spec.hosts[3]
    lab.flush_neighbors(spec, h4.address.ip, {"eltunit-h1", "eltunit-h4", "other-h1"})
    flush = ["neigh", "flush", "to", "198.19.249.14"]
    assert commands == [["ip", *flush, "dev", "eltunit-br0"], ["ip", "-n", "eltunit-h1", *flush]]
    commands.clear()
    lab.flush_neighbors(spec, h4.address.ip)  # a MAC change: every lab namespace but the host's own
    assert [c[2] for c in commands[1:]] == ["eltunit-h1", "eltunit-h2", "eltunit-h3"]
