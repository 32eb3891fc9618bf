# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What every part of the ``iperf_run`` backend shares: types, constants, the error, the framing.

The output protocol is the host layer's (``plugin_utils/host/framing.py``) with the tag
``@@ESXILAB:<token>``; :func:`parse_sections` and :func:`marker` bind it to a token.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from typing import Any, Literal

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.paths import ESXI_IPERF_PATHS
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host import framing
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import HostError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.framing import Section

Tool = Literal["iperf2", "iperf3"]
Mode = Literal["server", "client", "stop", "probe", "collect"]
Clock = Literal["epochrealtime", "date_ns", "date_s"]
Nap = Literal["fracsleep", "usleep", "none"]

MARKER = "@@ESXILAB:"
DEFAULT_PORTS: dict[Tool, int] = {"iperf3": 5201, "iperf2": 5001}

# Where iperf lives, in the order a binary is chosen when `binary` is not set. ESXi first:
# the `.copy` binaries are the ones that may listen (see the module documentation), then the
# shipped ones, then whatever is on PATH (Linux).
DEFAULT_BINARIES: tuple[str, ...] = (*ESXI_IPERF_PATHS, "iperf3", "iperf")

# Version thresholds (first release with the feature). iperf3: RELNOTES.md of esnet/iperf;
# iperf2: see the module documentation (2.1 is the conservative floor where unsure).
IPERF3_ONE_OFF = (3, 0, 11)
IPERF3_FORCEFLUSH = (3, 1, 5)
IPERF3_CONNECT_TIMEOUT = (3, 2)
IPERF3_BIDIR = (3, 7)
IPERF3_IDLE_TIMEOUT_EXITS_ONE_OFF = (3, 11)
IPERF2_REVERSE = (2, 1)
IPERF2_ENHANCED = (2, 1)
IPERF2_TCP_BANDWIDTH = (2, 0, 13)

# How long the server start waits for the banner (or the process to die) before answering.
SERVER_START_WAIT = 1.0
# Grace between SIGTERM and SIGKILL when a run or a server has to be killed.
KILL_GRACE = 2


class IperfRunError(HostError):
    """A failure to report to the user: ``message`` names the cause and the fix.

    ``result`` holds what is known anyway (command, raw output, parsed result) and goes into
    the failed task result.
    """


def marker(token: str, name: str, args: str = "") -> str:
    """Shell command printing a marker line of this token (``args`` is shell text, expanded by the shell)."""
    return framing.marker(f"{MARKER}{token}", name, args)


def parse_sections(stdout: str, token: str) -> list[Section]:
    """Split a script's stdout into the sections of this token; text before the first marker is dropped."""
    return framing.split_sections(stdout, f"{MARKER}{token}")


def int_or_none(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
