# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reproducible installs: the committed locks, the venv made from them, and no third-party warning.

``requirements*.txt`` hold ranges; ``make lock`` resolves them into ``requirements.lock`` (demo),
``requirements-dev.lock`` (tests) and ``requirements-sanity.lock`` (ansible-test's venv), every
package pinned with the hashes of its files. These tests keep the locks in step with the ranges,
check that the venv running them holds exactly what the dev lock pins (nothing from a cache, the
system or an earlier install), and that a plain Ansible command from it prints no Python warning
(CI went red on 2026-12-06 when an unpinned cryptography 51 started warning on every command).
The gate script's stderr filter is run against a stand-in ``ansible-doc`` that warns.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.collection_path import REPO

LOCKS = {
    "requirements.lock": ["requirements.txt"],
    "requirements-dev.lock": ["requirements-dev.txt", "requirements.txt"],
    "requirements-sanity.lock": [],
}
#: What a venv has that no lock names: the installer Python puts into every venv.
INSTALLER = {canonicalize_name("pip"), canonicalize_name("setuptools")}
VENV_BIN = Path(sys.executable).parent
PYTHON_WARNING = re.compile(r"^\S+:\d+: [A-Za-z]*Warning: ", re.MULTILINE)


def _pins(lock: str) -> dict[str, str]:
    """name -> version of a lock; every pin carries at least one hash."""
    text = (REPO / lock).read_text(encoding="utf-8")
    pins: dict[str, str] = {}
    for block in re.split(r"\n(?=\S)", text):
        if block.startswith("#") or not block.strip():
            continue
        match = re.match(r"([A-Za-z0-9_.\[\]-]+)==(\S+)", block)
        assert match, f"{lock}: not an exact pin: {block.splitlines()[0]!r}"
        assert "--hash=sha256:" in block, f"{lock}: {match.group(1)} has no hash"
        pins[canonicalize_name(match.group(1).split("[")[0])] = match.group(2)
    assert pins, lock
    return pins


def _ranges(path: str) -> list[Requirement]:
    found = []
    for line in (REPO / path).read_text(encoding="utf-8").splitlines():
        text = line.split("#", 1)[0].strip()
        if text and not text.startswith("-"):
            found.append(Requirement(text))
    return found


@pytest.mark.parametrize("lock", sorted(LOCKS))
def test_every_range_is_pinned_inside_it(lock: str) -> None:
    pins = _pins(lock)
    for source in LOCKS[lock]:
        for requirement in _ranges(source):
            name = canonicalize_name(requirement.name)
            assert name in pins, f"{lock} does not pin {name} of {source}: run make lock"
            assert requirement.specifier.contains(pins[name], prereleases=True), (
                f"{lock} pins {name}=={pins[name]}, outside {source}'s {requirement.specifier}: run make lock"
            )


def test_the_locks_agree_on_every_shared_package() -> None:
    runtime = _pins("requirements.lock")
    for lock in ("requirements-dev.lock", "requirements-sanity.lock"):
        pins = _pins(lock)
        assert {n: v for n, v in pins.items() if n in runtime and runtime[n] != v} == {}, lock
    assert set(_pins("requirements-sanity.lock")) <= set(runtime)
    assert set(runtime) <= set(_pins("requirements-dev.lock"))


def test_the_venv_running_the_tests_holds_exactly_the_dev_lock() -> None:
    """make test installs with --require-hashes --no-deps from the lock: a package the lock does not
    name, or another version, came from somewhere a fresh machine does not have."""
    if Path(sys.prefix).resolve() != (REPO / ".venv").resolve():
        pytest.skip(f"not run from the checkout's .venv (make venv) but from {sys.prefix}")
    installed = {
        name: d.version
        for d in metadata.distributions()
        if (name := canonicalize_name(d.metadata["Name"])) not in INSTALLER
    }
    assert installed == _pins("requirements-dev.lock")


def test_make_installs_python_packages_only_from_the_locks() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    installs = re.findall(r"^\t.*\bpip(?:\)|\b) install\b.*$|^\t.*\$\(PIP_LOCKED\).*$", makefile, re.MULTILINE)
    assert installs, makefile
    for line in installs:
        if "uv==$(UV_VERSION)" in line:  # the lock tool itself, pinned: it makes the locks, installs nothing
            continue
        assert "$(PIP_LOCKED) -r requirements" in line and ".lock" in line, line
    assert "PIP_LOCKED = pip install -q --require-hashes --no-deps" in makefile
    assert "--upgrade pip" not in makefile


@pytest.mark.parametrize(
    "command",
    [
        ["ansible", "--version"],
        ["ansible-playbook", "-i", "localhost,", "-c", "local", "playbook"],
        ["ansible-doc", "-t", "filter", "esxilab.iperf.iperf_parse"],
    ],
    ids=["ansible", "ansible-playbook", "ansible-doc"],
)
def test_a_plain_ansible_command_prints_no_python_warning(command: list[str], tmp_path: Path) -> None:
    tool = VENV_BIN / command[0]
    if not tool.exists():
        pytest.skip(f"{command[0]} is not installed next to this Python (make venv)")
    if command[-1] == "playbook":
        play = tmp_path / "play.yml"
        play.write_text(
            "- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug:\n        msg: hello\n"
        )
        command = [*command[:-1], str(play)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHONWARNINGS", "ANSIBLE_"))}
    proc = subprocess.run(
        [str(tool), *command[1:]], cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not PYTHON_WARNING.search(proc.stderr), proc.stderr


def _fake_ansible_doc(directory: Path, warning: str) -> None:
    script = directory / "ansible-doc"
    script.write_text(
        "#!/bin/sh\n"
        f"printf '%s\\n' '{warning}' '  import something' >&2\n"
        'case "$*" in *" -l "*) echo "{}" ;; esac\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


@pytest.mark.parametrize(
    ("warning", "fails"),
    [
        ("/x/lib/python3.11/site-packages/ansible/_ssh_agent.py:18: CryptographyDeprecationWarning: DSA", False),
        ("/x/ansible_collections/esxilab/iperf/plugins/filter/iperf.py:3: UserWarning: ours", True),
        ("[WARNING]: Skipping plugin (/x/plugins/filter/iperf.py), cannot load", True),
    ],
    ids=["dependency", "our-plugin", "ansible-warning"],
)
def test_the_docs_gate_fails_on_what_our_plugins_print_not_on_a_dependency(
    warning: str, fails: bool, tmp_path: Path
) -> None:
    _fake_ansible_doc(tmp_path, warning)
    env = {**os.environ, "PATH": f"{tmp_path}:{VENV_BIN}:{os.environ.get('PATH', '')}"}
    proc = subprocess.run(
        ["bash", "hacking/check-docs.sh"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert (proc.returncode != 0) is fails, proc.stdout + proc.stderr
    if fails:
        assert warning in proc.stderr
    else:
        assert "documentation renders for" in proc.stdout and "a dependency warned" in proc.stderr
