# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lab/esxilab_lab.py, the path README, Makefile, docs and tests call, runs the package lab/nslab/ as a script;
and lab/ stays a package of small files by concern."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.collection_path import REPO

MAX_LINES = 600


@pytest.mark.parametrize("flags", [[], ["-I"]], ids=["plain", "isolated"])
def test_the_script_runs_from_any_directory(tmp_path: Path, flags: list[str]) -> None:
    """Also under ``python3 -I`` (no script dir on sys.path): the script finds its package itself."""
    script = REPO / "lab" / "esxilab_lab.py"
    proc = subprocess.run(
        [sys.executable, *flags, str(script), "up", "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: lab/esxilab_lab.py up [-h]")
    assert "--flow-rate FLOW_RATE" in proc.stdout
    # a bad option is refused before anything runs, naming the option and the fix
    proc = subprocess.run(
        [sys.executable, *flags, str(script), "status", "--name", "Bad", "--state-dir", str(tmp_path / "s")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if proc.returncode == 2 and "must run as root" in proc.stderr:
        return  # not root: refused first, as before
    assert proc.returncode == 2
    assert "--name 'Bad': use 1-11 lowercase letters/digits starting with a letter" in proc.stderr
    assert not (tmp_path / "s").exists()


def test_every_file_under_lab_is_small() -> None:
    sizes = {str(p.relative_to(REPO)): len(p.read_text().splitlines()) for p in (REPO / "lab").rglob("*.py")}
    assert "lab/nslab/cli.py" in sizes and "lab/esxilab_lab.py" in sizes
    assert {path: n for path, n in sizes.items() if n > MAX_LINES} == {}
