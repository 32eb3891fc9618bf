# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""vib_source secrets (real ansible-playbook): the role's preflight never prints the URL, and
esxi_iperf_install keeps it off every command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.collection_path import REPO
from tests.integration.labkit import ANSIBLE_PLAYBOOK, ansible_env, run_playbook


def test_preflight_masks_the_password_of_vib_source(tmp_path: Path) -> None:
    if not ANSIBLE_PLAYBOOK.exists():
        pytest.skip(f"{ANSIBLE_PLAYBOOK} does not exist")
    playbook = tmp_path / "preflight.yml"
    playbook.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.include_role:\n        name: esxilab.iperf.esxi_iperf\n"
        "      vars:\n        esxi_iperf_vib_source: https://lab:s3cr3t@depot.example/iperf.vib?token=t0ken\n"
        "        esxi_iperf_vib_upload: /nonexistent/iperf.zip\n"
    )
    proc = run_playbook("-i", "localhost,", "-c", "local", playbook, timeout=120)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, output[-3000:]
    assert "esxi_iperf_vib_source are both set (the URL is not" in output
    assert "s3cr3t" not in output and "t0ken" not in output


def test_a_vib_source_token_never_shows_even_at_vvvv_and_reaches_the_host(tmp_path: Path) -> None:
    """esxi_iperf_install over a real shell (``-c local``, the ESXi stand-in on PATH): the URL goes on stdin."""
    if not ANSIBLE_PLAYBOOK.exists():
        pytest.skip(f"{ANSIBLE_PLAYBOOK} does not exist")
    url = "https://lab:Pw0rdX@depot.example/iperf-2.0.5-1.x86_64.vib?token=T0kenX"
    playbook = tmp_path / "install.yml"
    playbook.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - esxilab.iperf.esxi_iperf_install:\n        method: vib\n        allow_unsigned: true\n"
        f"        journal_dir: ''\n        vib_source: {url}\n"
    )
    state = tmp_path / "standin"
    env = dict(ansible_env(), ESXI_STANDIN_STATE=str(state), ESXI_STANDIN_VERSION="6.7")
    env["PATH"] = f"{REPO / 'tests' / 'esxi_standin'}:{env.get('PATH', '/usr/bin:/bin')}"
    proc = run_playbook("-i", "localhost,", "-c", "local", playbook, "-vvvv", timeout=120, env=env)
    output = proc.stdout + proc.stderr
    assert 'IFS= read -r src && esxcli software vib install -v "$src" --no-sig-check' in output, output[-3000:]
    assert "Pw0rdX" not in output and "T0kenX" not in output
    assert "https://lab:***@depot.example/iperf-2.0.5-1.x86_64.vib?token=***" in output
    calls = (state / "calls.log").read_text()
    assert f"esxcli software vib install -v {url} --no-sig-check" in calls  # the host got the real URL
    assert "iperf|2.0.5-1|DAST" in (state / "vibs").read_text()
