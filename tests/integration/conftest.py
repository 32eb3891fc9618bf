# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fixtures shared by the integration tests: one simulator build per session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.labkit import build_vcsim, simulator


@pytest.fixture(scope="session")
def vcsim_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``tests/vcsim`` built once for the whole session (``labkit.build_vcsim``)."""
    return build_vcsim(tmp_path_factory)


@pytest.fixture(scope="module")
def vcsim(vcsim_binary: Path) -> Iterator[dict[str, Any]]:
    """A plain simulator for the module's tests (its connection variables)."""
    with simulator(vcsim_binary) as variables:
        yield variables


# Under pytest-xdist (make test: -n 2 --dist loadfile) each test file runs whole on one worker: its module
# fixtures (a lab with the file's own --name and subnet, a simulator) are built once, and no two workers share a
# lab. The files are handed out longest first (seconds of a quiet 2-core run, measured with --durations=0), so
# the last file to start is a short one; a file not listed counts as short.
FILE_SECONDS = {
    "test_readme.py": 245,
    "test_playbooks.py": 135,
    "test_paired_test.py": 130,
    "test_esxi_guests_vcsim.py": 40,
    "test_esxi_e2e.py": 78,
    "test_iperf_run_ansible.py": 66,
    "test_guests_playbooks_lab.py": 65,
    "test_live_iperf2.py": 60,
    "test_esxi_faults.py": 59,
    "test_external_peer.py": 54,
    "test_esxi_network_vcsim.py": 42,
    "test_history.py": 34,
    "test_vcsim_vmknic.py": 33,
    "test_live_figures.py": 32,
    "test_lab.py": 31,
    "test_external_claims.py": 35,
    "test_host_journal.py": 25,
    "test_progress_callback.py": 25,
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # a stable sort: the tests of a file keep their order
    items.sort(key=lambda item: -FILE_SECONDS.get(item.path.name, 0))
