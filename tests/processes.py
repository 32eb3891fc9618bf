# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Ending a process a test or a benchmark started (an iperf server beside the lab): never left behind."""

from __future__ import annotations

import contextlib
import subprocess
from typing import Any


def end_process(process: subprocess.Popen[Any], grace: float = 10, *, finish: float = 0) -> None:
    """``process`` ended: ``finish`` seconds first to end by itself (a one-off server writing its JSON), then TERM
    and ``grace`` seconds, then KILL (a server busy in a test may not leave on TERM in time)."""
    if finish:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=finish)
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=grace)
