# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Mistakes in role variables, as a user sees them with the repository's ansible.cfg, by the real ansible-playbook.

* A role variable with the role's prefix that no option matches (``paired_test_stream``) fails the
  paired_test preflight, naming the closest valid name, once for the play; with
  ``paired_test_unknown_variables: warn`` it is warned about and the play goes on; a clean play
  warns nothing.
* Another copy of esxilab.iperf on the collection paths (one installed in ``~/.ansible/collections``
  besides the checkout) is warned about once, naming the copy in use and the other with its
  version, whichever comes first; with a single copy (the clean play) there is no warning.
* A wrong key inside a test definition fails the preflight in one line with the closest valid key.
* A role variable of the wrong type fails Ansible's argument validation of a role applied with
  ``roles:``: with the repository's ``ansible.cfg`` (stdout callback ``esxilab.iperf.concise``) the
  failure is the one useful line per host, not the role's whole argument spec (compared with
  ``ansible.builtin.default`` in the same test, so the check can fail); imported with
  ``rolespec_validate: false``, as the collection's playbooks do, the preflight names it in one line.

No lab and no network: two inventory hosts with the local connection, addresses from the
benchmark range that nothing is sent to, check mode (only the preflight runs).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.collection_path import REPO, ensure_collection_path
from tests.integration.labkit import PAIRED_TEST_PLAYBOOK, repo_ansible_env, run_playbook

pytestmark = pytest.mark.slow

PLAYBOOK = PAIRED_TEST_PLAYBOOK
INVENTORY = """[lab]
h1 ansible_connection=local lab_address=198.19.110.11
h2 ansible_connection=local lab_address=198.19.110.12
"""
TEST = {"name": "sweep", "pairs": [{"server": "h1", "client": "h2"}], "duration": 1}
TYPO = "paired_test_stream is not an option of esxilab.iperf.paired_test"


def _play(
    tmp: Path,
    playbook: Path,
    *,
    stdout_callback: str | None = None,
    env_extra: dict[str, str] | None = None,
    **variables: Any,
) -> tuple[int, str]:
    (tmp / "hosts.ini").write_text(INVENTORY)
    (tmp / "vars.json").write_text(json.dumps(variables))
    # the repository's ansible.cfg (cwd) decides the callbacks unless a test overrides the stdout one
    env = repo_ansible_env(**({"ANSIBLE_STDOUT_CALLBACK": stdout_callback} if stdout_callback else {}))
    env.update(env_extra or {})
    argv = ("-i", tmp / "hosts.ini", playbook, "-e", f"@{tmp / 'vars.json'}", "--check")
    proc = run_playbook(*argv, timeout=120, env=env, cwd=REPO)
    return proc.returncode, proc.stdout + proc.stderr


def _settings(tmp: Path, test: dict[str, Any]) -> dict[str, Any]:
    return {
        "paired_test_tests": [test],
        "paired_test_address_var": "lab_address",
        "paired_test_state_dir": str(tmp / "remote"),
        "paired_test_report_dir": str(tmp / "reports"),
    }


def test_a_typo_in_a_role_variable_fails_the_preflight_naming_the_valid_one(tmp_path: Path) -> None:
    rc, output = _play(tmp_path, PLAYBOOK, **_settings(tmp_path, TEST), paired_test_stream=[1, 2, 4])
    assert rc != 0, output[-3000:]
    flat = " ".join(output.split())
    assert f"{TYPO} (did you mean paired_test_streams?)" in flat, output[-3000:]
    assert "fatal: [h1]" in flat and "fatal: [h2]" not in flat  # once for the play, not once per host
    assert "nothing was run" in flat  # stopped at the checks: the probe comes only once every check passed


def test_a_typo_in_a_role_variable_is_a_warning_when_asked(tmp_path: Path) -> None:
    settings = {**_settings(tmp_path, TEST), "paired_test_unknown_variables": "warn"}
    rc, output = _play(tmp_path, PLAYBOOK, **settings, paired_test_stream=[1, 2, 4])
    assert rc == 0, output[-3000:]
    flat = " ".join(output.split())
    assert f"[WARNING]: {TYPO} (did you mean paired_test_streams?)" in flat
    assert flat.count(TYPO) == 1  # once, not once per host


def test_a_clean_play_warns_nothing(tmp_path: Path) -> None:
    rc, output = _play(tmp_path, PLAYBOOK, **_settings(tmp_path, {**TEST, "streams": [1, 2, 4]}))
    assert rc == 0, output[-3000:]
    assert "[WARNING]" not in output, output


def _installed_copy(home: Path, version: str) -> Path:
    """A copy of the collection where ``ansible-galaxy collection install`` puts it, with its MANIFEST.json."""
    collections = home / ".ansible" / "collections"
    copy = collections / "ansible_collections" / "esxilab" / "iperf"
    shutil.copytree(
        REPO,
        copy,
        symlinks=True,
        ignore=shutil.ignore_patterns(".git", ".venv", "build", "tests", "docs", "reports", "__pycache__", "*.pyc"),
    )
    manifest = {"collection_info": {"namespace": "esxilab", "name": "iperf", "version": version}, "format": 1}
    (copy / "MANIFEST.json").write_text(json.dumps(manifest))
    return collections


@pytest.mark.parametrize("checkout_first", [True, False], ids=["checkout-first", "installed-first"])
def test_another_copy_of_the_collection_is_named_once(tmp_path: Path, checkout_first: bool) -> None:
    home = tmp_path / "home"
    collections = _installed_copy(home, "0.9.0")
    installed = (collections / "ansible_collections" / "esxilab" / "iperf").resolve()
    checkout = ensure_collection_path()
    order = [checkout, collections] if checkout_first else [collections, checkout]
    env = {"HOME": str(home), "ANSIBLE_COLLECTIONS_PATH": os.pathsep.join(str(p) for p in order)}
    rc, output = _play(tmp_path, PLAYBOOK, env_extra=env, **_settings(tmp_path, TEST))
    assert rc == 0, output[-3000:]
    flat = " ".join(output.split())
    start = flat.find("[WARNING]: esxilab.iperf is loaded from")
    assert start >= 0, output
    line = flat[start : flat.index("collections_path of ansible.cfg.", start)]
    print(line)
    version = yaml.safe_load((REPO / "galaxy.yml").read_text())["version"]
    in_use, other = f"{REPO} (a checkout, {version})", f"{installed} (installed, 0.9.0)"
    if not checkout_first:
        in_use, other = other, in_use
    assert f"loaded from {in_use}; another copy is on the collection paths and not used: {other}." in line
    assert flat.count("esxilab.iperf is loaded from") == 1  # once, although two hosts ran the check


def test_a_typo_in_a_report_variable_is_found_by_the_report_role(tmp_path: Path) -> None:
    playbook = tmp_path / "report.yml"
    playbook.write_text(
        "- name: A report\n  hosts: h1\n  gather_facts: false\n  roles:\n    - role: esxilab.iperf.report\n"
    )
    rc, output = _play(tmp_path, playbook, report_runs=[], report_titel="x", report_dir=str(tmp_path / "r"))
    flat = " ".join(output.split())
    assert (
        "[WARNING]: esxilab.iperf.report: the variable report_titel is not an option of the role and is ignored"
        " - did you mean report_title?" in flat
    ), output
    assert rc != 0 and "report_runs is empty" in flat  # the role's own check still runs after the warning


def test_a_wrong_test_key_fails_in_one_line_with_the_valid_one(tmp_path: Path) -> None:
    """A key inside a test is the preflight's to check (the argument spec leaves the tests' items to it)."""
    rc, output = _play(tmp_path, PLAYBOOK, **_settings(tmp_path, {**TEST, "strams": 3}))
    assert rc != 0
    assert "paired_test_tests[0]: test 'sweep': unknown key(s) strams (did you mean streams?)" in output
    assert "Supported parameters include" not in output and "argument_spec_data" not in output


def test_a_wrong_role_variable_type_fails_in_one_line_not_the_spec_dump(tmp_path: Path) -> None:
    """With ``roles:`` Ansible checks the role's arguments on every host (the collection's playbooks import the role
    with ``rolespec_validate: false``, and its preflight names the variable in one line - the last assertion)."""
    settings = {**_settings(tmp_path, TEST), "paired_test_swap_roles": "maybe"}
    roles = tmp_path / "roles.yml"
    roles.write_text("- name: Paired tests\n  hosts: lab\n  gather_facts: false\n  roles: [esxilab.iperf.paired_test]")
    rc, output = _play(tmp_path, roles, **settings)
    rc_default, output_default = _play(tmp_path, roles, stdout_callback="ansible.builtin.default", **settings)
    print(
        f"output with the repository's ansible.cfg: {len(output)} characters; with ansible.builtin.default: "
        f"{len(output_default)}"
    )
    print("\n".join(line[:200] for line in output.splitlines() if "FAILED" in line or "swap_roles" in line))
    assert rc != 0 and rc_default != 0
    useful = "paired_test_swap_roles"
    assert useful in output and useful in output_default
    assert "argument_spec_data" not in output
    assert "argument_spec_data" in output_default  # the dump the concise callback leaves out
    assert len(output) < 8000 < 20000 < len(output_default)
    rc_import, output_import = _play(tmp_path, PLAYBOOK, stdout_callback="ansible.builtin.default", **settings)
    assert rc_import != 0 and "role variable paired_test_swap_roles: swap_roles must be true or false" in output_import
    assert "argument_spec_data" not in output_import and "Validating arguments" not in output_import
