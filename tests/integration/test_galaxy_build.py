# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``ansible-galaxy collection build`` packages no report: a copy of the checkout with reports where
playbook runs leave them (``reports/<playbook>-<time>/``, ``playbooks/reports/``, the paired_test
role's default ``<playbook_dir>/paired_test_reports/``) is built, and the tarball is listed.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.collection_path import REPO

GALAXY = Path(sys.executable).parent / "ansible-galaxy"
REPORTS = (
    "reports/demo-20261202T034841Z/demo-20261202T035033Z/summary.md",
    "reports/journal/esxi01/firewall.json",
    "playbooks/reports/mesh-20250101T000000Z/results.json",
    "playbooks/paired_test_reports/paired-test-20250101T000000Z/results.csv",
    "inventories/lab/reports/x.png",
)


def test_the_built_collection_holds_no_report(tmp_path: Path) -> None:
    if not GALAXY.exists():
        pytest.skip("ansible-galaxy is not installed next to this Python (make venv)")
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True, timeout=60
    ).stdout.decode()
    source = tmp_path / "src"
    for name in filter(None, listed.split("\0")):
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (REPO / name).is_file():
            shutil.copy2(REPO / name, target)
    for name in REPORTS:  # what runs leave behind, with the lab's addresses and figures
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text("198.18.0.11\n")
    proc = subprocess.run(
        [str(GALAXY), "collection", "build", "--output-path", str(tmp_path / "out"), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (tarball,) = (tmp_path / "out").glob("esxilab-iperf-*.tar.gz")
    with tarfile.open(tarball) as archive:
        members = archive.getnames()
    assert "playbooks/demo.yml" in members and "roles/report/tasks/main.yml" in members, members[:20]
    packaged_reports = [m for m in members if {"reports", "paired_test_reports"} & set(Path(m).parts)]
    assert packaged_reports == []
