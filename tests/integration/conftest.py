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
