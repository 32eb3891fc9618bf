# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The README's lab commands, run verbatim from the checkout as a new user would.

The block under "The local demo and lab" is taken from README.md as it is and run by bash in
the checkout, with a fresh empty HOME (so nothing in ``~/.ansible`` helps) and no ``ANSIBLE_*``
variable: only the repository's ``ansible.cfg`` and ``.venv`` (made by ``make test``) are used.
It builds the default lab (``esxilab``, 198.18.0.0/24, state in ``lab/state``), so it is
skipped when such a lab is already up; the finalizer takes the lab down.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.collection_path import REPO

pytestmark = [pytest.mark.lab, pytest.mark.slow]

LAB = REPO / "lab" / "esxilab_lab.py"
VENV_BIN = REPO / ".venv" / "bin"


def readme_lab_block() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("### The local demo and lab", 1)[1]
    found = re.search(r"```sh\n(.*?)```", section, re.S)
    assert found, "README: no sh block under 'The local demo and lab'"
    return found.group(1)


def clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "VIRTUAL_ENV"))}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(REPO))]
    env.update(HOME=str(home), PATH=os.pathsep.join(path), ANSIBLE_NOCOLOR="1")
    return env


@pytest.fixture
def fresh_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".ansible").mkdir(parents=True)
    return home


@pytest.fixture
def default_lab() -> Iterator[None]:
    if os.geteuid() != 0 or not VENV_BIN.is_dir():
        pytest.skip("needs root and the checkout's .venv (make test makes it)")
    if (REPO / "lab" / "state" / "inventory.yml").exists():
        pytest.skip("a lab built from lab/state is up; the README's commands would take it down")
    try:
        yield
    finally:
        subprocess.run([sys.executable, str(LAB), "down"], capture_output=True, timeout=120, check=False)


def test_the_readme_lab_section_runs_verbatim(default_lab: None, fresh_home: Path) -> None:
    block = readme_lab_block()
    assert "ansible-playbook" in block and "lab/esxilab_lab.py down" in block
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=REPO,
        env=clean_env(fresh_home),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    recaps = re.findall(r"^(\S+)\s+: ok=\d+\s+changed=\d+\s+unreachable=(\d+)\s+failed=(\d+)", output, re.M)
    assert recaps, output[-2000:]
    assert all(unreachable == "0" and failed == "0" for _host, unreachable, failed in recaps), output[-4000:]
    assert output.count("PLAY RECAP") == block.count("ansible-playbook ")
    # nothing was installed into the (fresh) home: the checkout itself was the collection
    assert not (fresh_home / ".ansible" / "collections").exists()


def test_a_copy_in_home_does_not_shadow_the_checkout(fresh_home: Path) -> None:
    if not VENV_BIN.is_dir():
        pytest.skip("needs the checkout's .venv (make test makes it)")
    stale = fresh_home / ".ansible" / "collections" / "ansible_collections" / "esxilab" / "iperf"
    stale.mkdir(parents=True)
    (stale / "MANIFEST.json").write_text(
        json.dumps({"collection_info": {"namespace": "esxilab", "name": "iperf", "version": "0.0.1"}})
    )
    proc = subprocess.run(
        [str(VENV_BIN / "ansible-galaxy"), "collection", "list", "esxilab.iperf", "--format", "json"],
        cwd=REPO,
        env=clean_env(fresh_home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = json.loads(proc.stdout)
    assert list(found) == [str(REPO / "build" / "checkout" / "ansible_collections")], found
    assert found[str(REPO / "build" / "checkout" / "ansible_collections")]["esxilab.iperf"]["version"] != "0.0.1"
