# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The execution-environment metadata: what ansible-builder reads from the collection.

``meta/execution-environment.yml`` names the Python and system requirement files that
ansible-builder's introspection adds to an execution environment (AWX / AAP). These tests keep
them present, shipped in the collection artifact (not in ``build_ignore``), and in step with
``requirements.txt``; and check the example definition ``docs/ee/`` against galaxy.yml.
(``ansible-builder introspect`` over the installed collection prints pyvmomi, matplotlib and the
OpenSSH client; it is not a test dependency.)
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import yaml

from tests.collection_path import REPO

META = REPO / "meta" / "execution-environment.yml"


def _requirements(path: Path) -> dict[str, str]:
    """name -> specifier of a pip requirements file (comments and blank lines skipped)."""
    found = {}
    for line in path.read_text().splitlines():
        text = line.split("#", 1)[0].strip()
        if text and not text.startswith("-"):
            match = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(.*)", text)
            assert match, text
            found[match.group(1).lower()] = match.group(2).replace(" ", "")
    return found


def test_meta_names_requirement_files_that_ship_with_the_collection() -> None:
    doc = yaml.safe_load(META.read_text())
    assert set(doc) == {"version", "dependencies"}
    assert doc["version"] == 1  # ansible-builder definition format 1 (also what ansible-lint validates)
    assert doc["dependencies"] == {"python": "meta/ee-requirements.txt", "system": "meta/ee-bindep.txt"}
    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text())
    ignored = galaxy.get("build_ignore") or []
    for relative in ("meta/execution-environment.yml", *doc["dependencies"].values()):
        assert (REPO / relative).is_file(), relative
        assert not any(fnmatch.fnmatch(relative, pattern) or relative.startswith(f"{pattern}/") for pattern in ignored)


def test_python_requirements_match_requirements_txt() -> None:
    ee = _requirements(REPO / "meta" / "ee-requirements.txt")
    controller = _requirements(REPO / "requirements.txt")
    names = ("pyvmomi", "matplotlib", "psycopg")
    assert ee == {name: controller[name] for name in names}
    assert "ansible-core" not in ee  # the image brings its own ansible-core


def test_system_requirements_are_the_ssh_client_for_both_package_families() -> None:
    lines = [line for line in (REPO / "meta" / "ee-bindep.txt").read_text().splitlines() if not line.startswith("#")]
    assert [line for line in lines if line.strip()] == [
        "openssh-clients [platform:rpm]",
        "openssh-client [platform:dpkg]",
    ]


def test_example_definition_installs_the_tarball_galaxy_builds() -> None:
    definition = yaml.safe_load((REPO / "docs" / "ee" / "execution-environment.yml").read_text())
    assert definition["version"] == 3
    assert definition["dependencies"]["galaxy"] == "requirements.yml"
    (build_file,) = definition["additional_build_files"]
    assert build_file == {"src": "../../build/galaxy/esxilab-iperf-*.tar.gz", "dest": "collections"}
    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text())
    tarball = f"{galaxy['namespace']}-{galaxy['name']}-{galaxy['version']}.tar.gz"
    requirements = yaml.safe_load((REPO / "docs" / "ee" / "requirements.yml").read_text())
    assert requirements == {"collections": [{"name": f"/build/collections/{tarball}", "type": "file"}]}
    controller = _requirements(REPO / "requirements.txt")
    assert definition["dependencies"]["ansible_core"]["package_pip"] == f"ansible-core{controller['ansible-core']}"
