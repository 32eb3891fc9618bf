# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A NIC and CPU reading made in the session of a server's start or stop (option ``reading``).

The reading is ``iperf_facts``' own script (``nic_counters_of``, ``cpu_times``), run in a subshell before the
first script of the start or the stop, in the same SSH session: no session of its own, no second action on the
controller. Its output (its own marker) comes before the script's, which drops what comes before its first marker;
the result is the one ``iperf_facts`` returns for the same reading.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import CommandOutput, Execute
from ansible_collections.esxilab.iperf.plugins.plugin_utils.nic.facts_script import (
    build_script,
    parse_probe_output,
    reading_facts,
)

__all__ = ["riding"]


def riding(execute: Execute, reading: Mapping[str, Any]) -> tuple[Execute, Callable[[], dict[str, Any]]]:
    """``execute`` whose first script carries the reading ``reading`` (``nic_counters_of``, ``cpu_times``), and a
    function that returns the reading's result as ``iperf_facts`` would (``ansible_facts``), or ``failed`` and
    ``msg`` when it did not complete or no script ran."""
    addresses = [str(a) for a in reading.get("nic_counters_of") or ()]
    cpu = bool(reading.get("cpu_times"))
    marker = f"ESXILAB_IPERF_{secrets.token_hex(16)}"
    rider = build_script(marker, gather_tools=False, nic_counters_of=addresses, cpu_times=cpu)
    outputs: list[CommandOutput] = []

    def execute_first(script: str) -> CommandOutput:
        if outputs:
            return execute(script)
        out = execute(f"(\n{rider}\n)\n{script}")
        outputs.append(out)
        return out

    def result() -> dict[str, Any]:
        if not outputs:
            return {"failed": True, "msg": "the reading was not made: no script ran on the host"}
        found = parse_probe_output(outputs[0].stdout, marker)
        if not found.finished:
            shown = (outputs[0].stderr or "").strip()[-300:] or "no output"
            status = outputs[0].rc
            return {"failed": True, "msg": f"the reading did not complete on the host (exit status {status}): {shown}"}
        return {"changed": False, "ansible_facts": reading_facts(found, addresses, cpu)}

    return execute_first, result
