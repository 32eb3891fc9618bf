# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The client's ``latency`` option: the pings it plans (``latency/shell.py``) and the figures read back.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.framing import Section, first
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.records import LatencyFigures
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.common import IperfRunError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.latency import shell
from ansible_collections.esxilab.iperf.plugins.plugin_utils.latency.figures import latency_figures
from ansible_collections.esxilab.iperf.plugins.plugin_utils.latency.option import LatencyOptionError, read_latency

__all__ = ["check_latency", "client_latency", "client_pings"]


def check_latency(params: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``latency`` option checked (``IperfRunError`` naming it and the fix) and normalized; ``None``: off."""
    try:
        return read_latency(params.get("latency"), "latency", interface=True)
    except LatencyOptionError as exc:
        raise IperfRunError(str(exc)) from exc


def transfer_seconds(params: Mapping[str, Any], timeout: float) -> float:
    """How long the transfer runs: ``duration`` (10 s, iperf's default, without ``bytes``) + ``omit``; with
    ``bytes`` unknown beforehand - the client's ``timeout`` bounds it (the loaded ping is stopped when iperf ends)."""
    if params.get("bytes") and not params.get("duration"):
        return float(timeout)
    return float(params.get("duration") or 10) + float(params.get("omit") or 0)


def client_pings(params: Mapping[str, Any], *, esxi: bool, timeout: float) -> dict[str, Any] | None:
    """The pings of a client with ``latency`` (``shell.plan``), or ``None`` without it."""
    latency = check_latency(params)
    if latency is None:
        return None
    return shell.plan(
        latency,
        esxi=esxi,
        target=str(params["server"]),
        source=params.get("bind"),
        transfer=transfer_seconds(params, timeout),
    )


def client_latency(
    planned: Mapping[str, Any], sections: Sequence[Section], *, esxi: bool, target: str
) -> LatencyFigures:
    """The client result's ``latency``: the sections ``latency_idle`` / ``latency_loaded`` read into figures."""

    def section(name: str) -> tuple[str, str]:
        found = first(sections, name)
        return (found.args, found.text) if found is not None else ("", "")

    return latency_figures(
        planned,
        tool="vmkping" if esxi else "ping",
        target=target,
        idle=section("latency_idle"),
        loaded=section("latency_loaded"),
    )
