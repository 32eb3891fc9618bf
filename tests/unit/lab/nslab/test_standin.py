# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lab/nslab/standin.py without building anything: --host-env and --host-bind validation (each refusal names
the option and the fix) and the mount commands for sshd's private mount namespace.

Built for real (root, namespaces, mounts) in tests/integration/test_esxi_e2e.py.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from lab.nslab.common import LabError
from lab.nslab.standin import mount_commands
from tests.unit.lab.nslab._specs import host_spec


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
    with pytest.raises(LabError, match=None) as err:
        host_spec(tmp_path, **({"env": (item,)} if option == "env" else {"binds": (item,)}))
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
    spec = host_spec(tmp_path, binds=binds)
    h1 = spec.hosts[0]
    commands = [shlex.split(c) for c in mount_commands(spec, h1)]
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
    spec = host_spec(tmp_path, binds=(f"h1={tmp_path}/missing:{tmp_path}",))
    with pytest.raises(LabError, match="does not exist; create it first"):
        mount_commands(spec, spec.hosts[0])
    spec = host_spec(tmp_path, binds=(f"h1={tmp_path}:/esxilab-nonexistent-top-level",))
    with pytest.raises(LabError, match="cannot be overlaid; bind onto an existing path instead"):
        mount_commands(spec, spec.hosts[0])
