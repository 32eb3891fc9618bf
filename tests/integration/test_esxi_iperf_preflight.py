# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The esxi_iperf role's preflight never prints the password of a vib_source URL (real ansible-playbook, no host)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.labkit import ANSIBLE_PLAYBOOK, run_playbook


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
