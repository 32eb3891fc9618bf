# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A NIC and CPU reading made in the session of a server's start or stop, or of a client, and a link speed reading
made in the session of a probe (option ``reading``).

The reading is ``iperf_facts``' own script (``nic_counters_of``, ``cpu_times``, ``link_speed_of``), run in a subshell
in the same SSH session: before the first script of a probe, a start or a stop, after the client's script (its test
done). No session of its
own, no second action on the controller. Its output has its own marker; the scripts' parsers drop what is not theirs
(before their first marker, or in their last section). The result is the one ``iperf_facts`` returns for the same
reading.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import CommandOutput, Execute
from ansible_collections.esxilab.iperf.plugins.plugin_utils.nic.facts_script import (
    build_script,
    parse_probe_output,
    reading_facts,
)

__all__ = ["Rider"]


class Rider:
    """The reading ``reading`` (``nic_counters_of``, ``cpu_times``, ``link_speed_of``) riding in a script of the
    session."""

    def __init__(self, reading: Mapping[str, Any]) -> None:
        self.addresses = [str(a) for a in reading.get("nic_counters_of") or ()]
        self.cpu = bool(reading.get("cpu_times"))
        self.speed_of = [str(a) for a in reading.get("link_speed_of") or ()]
        self.marker = f"ESXILAB_IPERF_{secrets.token_hex(16)}"
        self.script = build_script(
            self.marker,
            gather_tools=False,
            link_speed_of=self.speed_of,
            nic_counters_of=self.addresses,
            cpu_times=self.cpu,
        )
        self.out: CommandOutput | None = None

    def first(self, execute: Execute) -> Execute:
        """``execute`` whose first script is run after the reading."""

        def execute_first(script: str) -> CommandOutput:
            if self.out is not None:
                return execute(script)
            self.out = execute(f"(\n{self.script}\n)\n{script}")
            done = f"{self.marker} DONE\n"
            end = self.out.stdout.find(done)
            return self.out._replace(stdout=self.out.stdout[end + len(done) :] if end >= 0 else self.out.stdout)

        return execute_first

    def after(self, script: str) -> str:
        """``script`` and then the reading (hand its output to :meth:`seen`)."""
        return f"{script}\n(\n{self.script}\n)"

    def seen(self, out: CommandOutput) -> CommandOutput:
        """Keep the output of :meth:`after`'s script; return the script's own (without the reading's)."""
        self.out = out
        start = out.stdout.find(f"{self.marker} START")
        return out._replace(stdout=out.stdout[:start]) if start >= 0 else out

    def result(self) -> dict[str, Any]:
        """What ``iperf_facts`` returns for the reading (``ansible_facts``), or ``failed`` and ``msg`` when it did not
        complete or no script carried it."""
        if self.out is None:
            return {"failed": True, "msg": "the reading was not made: no script ran on the host"}
        found = parse_probe_output(self.out.stdout, self.marker)
        if not found.finished:
            shown = (self.out.stderr or "").strip()[-300:] or "no output"
            status = self.out.rc
            return {"failed": True, "msg": f"the reading did not complete on the host (exit status {status}): {shown}"}
        return {"changed": False, "ansible_facts": reading_facts(found, self.addresses, self.cpu, self.speed_of)}
