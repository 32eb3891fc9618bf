# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fixtures of the journal tests."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from tests.unit.plugins.plugin_utils.journal.test_store import _alive


@pytest.fixture
def reap() -> Iterator[list[int]]:
    """Pids a test starts or finds; killed afterwards if still running (no test leaves a timer behind)."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
