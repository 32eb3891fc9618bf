# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""--host-env / --host-bind: the wiring that makes a lab host look like another system (the ESXi stand-ins).

The values are parsed here; the environment goes on sshd's ``SetEnv`` line (``sshd.sshd_config_text``),
the binds are mounted in the host's sshd mount namespace only (``mount_commands``).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path

from .common import LabError
from .spec import HostSpec, LabSpec

# --host-env / --host-bind: make a lab host look like another system to the SSH sessions Ansible
# opens (e.g. the ESXi stand-ins of tests/esxi_standin on PATH, ESXi paths bound to a temp dir).
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
ENV_VALUE_RE = re.compile(r"^[^\s\"'\\#]*$")  # one sshd_config word: no blanks, quotes, backslash or '#'
RESERVED_ENV = ("LAB_HOST", "LAB_NETNS", "SHLVL")
BIND_PATH_RE = re.compile(r"^/[^\s,:\"'\\]*$")  # ',' and ':' would break the overlay mount options
BIND_FORBIDDEN = ("/proc", "/sys", "/dev", "/run")  # the session and sshd itself need these


def _split_host_item(item: str, option: str, usage: str, hosts: int) -> tuple[str, str]:
    host, sep, rest = item.partition("=")
    if not sep or not re.fullmatch(r"h[1-9]\d*", host) or not rest:
        raise LabError(f"{option} {item!r}: use {usage}")
    if int(host[1:]) > hosts:
        raise LabError(f"{option} {item!r}: the lab has only h1..h{hosts}")
    return host, rest


def parse_host_env(items: Sequence[str], hosts: int) -> dict[str, tuple[tuple[str, str], ...]]:
    """``h1=PATH=/x:/usr/bin:/bin`` -> {"h1": (("PATH", "/x:/usr/bin:/bin"),)}; a later item wins per name."""
    usage = "HOST=NAME=VALUE, e.g. h1=PATH=/opt/standin:/usr/bin:/bin"
    found: dict[str, dict[str, str]] = {}
    for item in items:
        host, rest = _split_host_item(item, "--host-env", usage, hosts)
        name, sep, value = rest.partition("=")
        if not sep or not ENV_NAME_RE.match(name):
            raise LabError(f"--host-env {item!r}: use {usage}")
        if name in RESERVED_ENV:
            raise LabError(f"--host-env {item!r}: {name} is set by the lab itself")
        if not ENV_VALUE_RE.match(value):
            raise LabError(f"--host-env {item!r}: the value may not contain blanks, quotes, backslashes or '#'")
        found.setdefault(host, {})[name] = value
    return {host: tuple(values.items()) for host, values in found.items()}


def parse_host_bind(items: Sequence[str], hosts: int) -> dict[str, tuple[tuple[str, str], ...]]:
    """``h1=/tmp/x:/usr/lib/vmware`` -> {"h1": (("/tmp/x", "/usr/lib/vmware"),)}, in the order given."""
    usage = "HOST=SRC:DST with absolute paths, e.g. h1=/tmp/h1-vmware:/usr/lib/vmware"
    found: dict[str, list[tuple[str, str]]] = {}
    for item in items:
        host, rest = _split_host_item(item, "--host-bind", usage, hosts)
        src, sep, dst = rest.partition(":")
        if not sep or not BIND_PATH_RE.match(src) or not BIND_PATH_RE.match(dst):
            raise LabError(f"--host-bind {item!r}: use {usage} (no blanks, quotes, ',' or ':' in the paths)")
        src, dst = os.path.normpath(src), os.path.normpath(dst)
        if dst == "/" or any(dst == f or dst.startswith(f + "/") for f in BIND_FORBIDDEN):
            raise LabError(f"--host-bind {item!r}: {dst} cannot be replaced (/, /proc, /sys, /dev and /run are needed)")
        found.setdefault(host, []).append((src, dst))
    return {host: tuple(pairs) for host, pairs in found.items()}


def mount_points_below(path: str) -> list[str]:
    """Mount points strictly below ``path`` (an overlay on ``path`` would hide them)."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    prefix = path.rstrip("/") + "/"
    points = (line.split()[4].encode().decode("unicode_escape") for line in lines if len(line.split()) > 4)
    return sorted({p for p in points if p.startswith(prefix)})


def mount_commands(spec: LabSpec, host: HostSpec) -> list[str]:
    """Shell commands that give the host's sshd its --host-bind mounts (run in its new mount namespace).

    A destination that does not exist on this machine gets a mount point without touching the real
    file system: its nearest existing parent is overlaid (in that namespace only) with a fresh
    upper dir under ``hosts/hN/overlay`` that holds the missing directories; writes elsewhere
    below that parent also land in the upper dir. Binds are applied in the order given.
    """
    base = spec.overlay_dir(host)
    shutil.rmtree(base, ignore_errors=True)
    missing: dict[Path, list[tuple[Path, bool]]] = {}
    for src, dst in host.binds:
        if not Path(src).exists():
            raise LabError(f"--host-bind {host.name}={src}:{dst}: {src} does not exist; create it first")
        target = Path(dst)
        if not target.exists():
            anchor = next(parent for parent in target.parents if parent.exists())
            if str(anchor) == "/" or mount_points_below(str(anchor)):
                raise LabError(
                    f"--host-bind {host.name}={src}:{dst}: {dst} does not exist and its parent {anchor} holds other"
                    " mounts (or is /), so it cannot be overlaid; bind onto an existing path instead"
                )
            missing.setdefault(anchor, []).append((target, Path(src).is_dir()))
    commands = []
    for index, (anchor, targets) in enumerate(sorted(missing.items())):
        upper, work = base / str(index) / "upper", base / str(index) / "work"
        work.mkdir(parents=True, exist_ok=True)
        upper.mkdir(parents=True, exist_ok=True)
        for target, is_dir in targets:
            point = upper / target.relative_to(anchor)
            if is_dir:
                point.mkdir(parents=True, exist_ok=True)
            else:
                point.parent.mkdir(parents=True, exist_ok=True)
                point.touch()
        options = f"lowerdir={anchor},upperdir={upper},workdir={work}"
        commands.append(shlex.join(["mount", "-t", "overlay", "overlay", "-o", options, str(anchor)]))
    commands += [shlex.join(["mount", "--bind", src, dst]) for src, dst in host.binds]
    return commands
