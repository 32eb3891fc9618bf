# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""An ESXi stand-in host (tests/esxi_standin) reached like a connection would reach ESXi: ``sh -c``.

The install plans name real ESXi paths (``/usr/lib/vmware/...``, ``/opt/iperf/...``); the
stand-in keeps its files under ``$STATE/root``, so :class:`MappedHost` maps those paths into that
root in each command and back in each output. Over SSH in the lab the root is ``/`` and nothing
is mapped (tests/integration/test_esxi_e2e.py).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import CommandOutput
from tests.collection_path import REPO

STANDIN = REPO / "tests" / "esxi_standin"
HOST_PREFIXES = ("/usr/lib/vmware", "/opt/iperf")


class MappedHost:
    """A stand-in host reached like the connection would (``sh -c COMMAND``), host paths mapped."""

    def __init__(self, state: Path, version: str) -> None:
        self.state = state
        self.env = {
            **os.environ,
            "PATH": f"{STANDIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "ESXI_STANDIN_STATE": str(state),
        }
        for name in ("ESXI_STANDIN_ROOT", "ESXI_STANDIN_VMKPING", "ESXI_STANDIN_VERSION"):
            self.env.pop(name, None)
        self.commands: list[str] = []
        self.fail: dict[str, CommandOutput] = {}
        assert self.sh(f"esxi-standin init {version}").returncode == 0
        self.root = self.sh("esxi-standin root").stdout.strip()

    def sh(self, command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["/bin/sh", "-c", command], env=self.env, capture_output=True, text=True, timeout=30, check=False
        )

    def _to_host(self, text: str) -> str:
        for prefix in HOST_PREFIXES:
            text = text.replace(self.root + prefix, prefix)
        return text

    def execute(self, command: str) -> CommandOutput:
        self.commands.append(command)
        for needle, output in self.fail.items():
            if needle in command:
                return output
        mapped = command
        for prefix in HOST_PREFIXES:
            mapped = re.sub(rf"(?<![\w/]){re.escape(prefix)}", self.root + prefix, mapped)
        proc = self.sh(mapped)
        return CommandOutput(proc.returncode, self._to_host(proc.stdout), self._to_host(proc.stderr))

    def exists(self, path: str) -> bool:
        return Path(self.root + path).exists()

    def get(self, key: str) -> str:
        return self.sh(f"esxi-standin get {key}").stdout.strip()

    def set(self, key: str, value: str) -> None:
        assert self.sh(f"esxi-standin set {key} {value}").returncode == 0

    def changes(self) -> list[str]:
        readers = ("vmware ", "esxcli system version", " list", "for p in", " -v 2>&1")
        return [c for c in self.commands if not any(r in c for r in readers)]

    def domain(self, name: str) -> str:
        rows = (self.state / "secpolicy").read_text().splitlines()
        return dict(row.split("|") for row in rows)[name]
