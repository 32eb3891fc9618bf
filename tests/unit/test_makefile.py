# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What ``make demo`` and ``make test`` would install and where they would write, from make's own
dry run (``make -n -B``: every command printed, none run): the demo installs only what it needs
(no Go, govmomi, shellcheck, dev toolchain), the tests everything, and neither writes to ``~``.
The demo writing nothing to a fresh HOME is run for real in
tests/integration/test_playbooks.py::test_demo_script_leaves_a_report_with_plots_and_removes_its_lab.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from tests.collection_path import REPO

CI_ONLY = ("golang", "govmomi", "shellcheck", "busybox", "requirements-dev.lock", "ansible-lint", "pytest")


def _dry_run(target: str) -> str:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "PIP_CACHE_DIR", "MPLCONFIGDIR")}
    proc = subprocess.run(
        ["make", "-n", "-B", "-C", str(REPO), target], capture_output=True, text=True, timeout=60, env=env, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _apt_packages(dry_run: str) -> set[str]:
    found = re.findall(r"for p in ([^;]*); do dpkg -s", dry_run)
    assert found, dry_run
    return {p for packages in found for p in packages.split()}


def test_make_demo_installs_only_what_the_demo_needs() -> None:
    dry_run = _dry_run("demo")
    # iputils-ping too: the README lab block (mtu-compare.yml, esxi-56g.yml) pings right after make demo
    assert _apt_packages(dry_run) == {
        "iperf3",
        "iperf",
        "openssh-server",
        "openssh-client",
        "iproute2",
        "procps",
        "iputils-ping",
    }
    assert "pip install -q --require-hashes --no-deps -r requirements.lock" in dry_run
    assert [word for word in CI_ONLY if word in dry_run] == []
    assert "hacking/demo_lab.py" in dry_run


def test_make_test_installs_everything() -> None:
    dry_run = _dry_run("test")
    assert {"iperf3", "golang-go", "golang-github-vmware-govmomi-dev", "shellcheck"} <= _apt_packages(dry_run)
    assert "pip install -q --require-hashes --no-deps -r requirements-dev.lock" in dry_run


@pytest.mark.parametrize("target", ["demo", "test"])
def test_neither_target_writes_to_the_home_directory(target: str) -> None:
    dry_run = _dry_run(target)
    assert not re.search(r"(~/|\$HOME|\$\{HOME\})", dry_run), dry_run


def test_the_caches_are_kept_inside_the_checkout() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "export PIP_CACHE_DIR := $(abspath build/pip-cache)" in makefile
    assert "export MPLCONFIGDIR := $(abspath build/matplotlib)" in makefile
    config = (REPO / "ansible.cfg").read_text(encoding="utf-8").splitlines()
    assert "home = build/ansible-home" in config
    assert "control_path_dir = build/ansible-home/cp" in config  # the ssh plugin's default is ~/.ansible/cp
