# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Telling a failure from iperf's own words: the cause and the fix, as a :class:`Diagnosis`.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Literal, NamedTuple

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.paths import BUNDLED_IPERF3, BUNDLED_IPERF3_COPY
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.common import Tool
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.probe import EXEC_HINT

# --------------------------------------------------------------------------------------------
# Diagnosis
# --------------------------------------------------------------------------------------------


class Diagnosis(NamedTuple):
    """What went wrong (``kind``), in words naming the cause and the fix, with the tool's line."""

    kind: str
    message: str
    evidence: str


@dataclass(frozen=True)
class Context:
    """Who ran what, for messages."""

    role: Literal["client", "server"]
    tool: Tool
    server: str | None = None
    port: int | None = None
    bind: str | None = None
    protocol: str = "tcp"
    binary: str | None = None
    duration: float | None = None

    @property
    def endpoint(self) -> str:
        host = self.server if self.role == "client" else (self.bind or "*")
        return f"{host}:{self.port}"


def line_with(text: str, *needles: str) -> str | None:
    lowered = [n.lower() for n in needles]
    for line in text.splitlines():
        low = line.lower()
        if all(n in low for n in lowered):
            return line.strip()
    return None


def strip_prefix(message: str) -> str:
    return re.sub(r"^(?:iperf3:\s*)?error\s*-\s*", "", message.strip())


def diagnose(
    text: str,
    ctx: Context,
    *,
    timed_out: bool = False,
    timeout: float | None = None,
    ran_seconds: float | None = None,
    had_intervals: bool = False,
    rc: int | None = None,
) -> Diagnosis | None:
    """Tell a failure from the tool's own words (stdout error, stderr) and the run's facts.

    ``ran_seconds`` is how long the test lasted by its own report; ``had_intervals`` whether
    it reported any interval. Returns ``None`` when nothing in ``text`` is a known failure.
    """
    ep = ctx.endpoint
    other: Tool = "iperf2" if ctx.tool == "iperf3" else "iperf3"

    if line := line_with(text, "server is busy running a test"):
        return Diagnosis(
            "busy",
            f"the server on {ep} is busy running a test with another client. Use one server port per "
            "client/server pair (start one server per pair with mode=server and its own port), or run the tests "
            "one after the other",
            line,
        )
    if ctx.role == "server" and (
        line := line_with(text, "unable to start listener", "operation not permitted")
        or line_with(text, "bind failed", "operation not permitted")
    ):
        hint = (
            f"On ESXi the shipped {BUNDLED_IPERF3} may not listen: use the copied binary "
            f"{BUNDLED_IPERF3_COPY} (binary=...; esxilab.iperf.esxi_iperf_install creates it) "
            "or put iperf3 in a security domain that may listen"
        )
        message = f"the server could not listen on {ep}: {strip_prefix(line)}. {hint}"
        return Diagnosis("listener_not_permitted", message, line)
    if line := line_with(text, "address already in use"):
        return Diagnosis(
            "port_in_use",
            f"port {ctx.port} is already in use on this host ({strip_prefix(line)}). Stop the other server "
            f"(mode=stop port={ctx.port} if this module started it) or choose another port",
            line,
        )
    if line := line_with(text, "cannot assign requested address"):
        address = ctx.bind or "the bind address"
        return Diagnosis(
            "bind_address",
            f"{address} is not an address of this host ({strip_prefix(line)}); set bind to an address configured "
            "on one of its interfaces (on ESXi: a vmk interface) or leave it unset",
            line,
        )
    if ctx.role == "client":
        diagnosis = _diagnose_client(text, ctx, ep, other, had_intervals, ran_seconds)
        if diagnosis is not None:
            return diagnosis
    exec_line = (
        line_with(text, "permission denied")
        or line_with(text, "operation not permitted")
        or line_with(text, "not found")
    )
    if rc in (126, 127) or (ctx.role == "server" and exec_line):
        line = exec_line or f"exit status {rc}"
        return Diagnosis(
            "exec_failed",
            f"the shell could not run {ctx.binary or 'iperf'}: {line}. {EXEC_HINT}",
            line,
        )
    if timed_out:
        hint = ""
        if ctx.role == "client" and not had_intervals:
            hint = (
                f" No interval was reported: the server may not be {ctx.tool} ({ctx.tool} and {other} do not "
                "interoperate; an iperf3 client waits forever for an iperf2 server), or a firewall drops the "
                "test traffic"
            )
        return Diagnosis(
            "timeout",
            f"iperf did not finish within timeout={timeout:g} s and was killed.{hint} Raise timeout for long tests"
            if timeout
            else f"iperf did not finish in time and was killed.{hint}",
            "timed out",
        )
    return None


def _is_ip_literal(value: str | None) -> bool:
    try:
        ipaddress.ip_address((value or "").split("%", 1)[0])
    except ValueError:
        return False
    return True


def _resolve_diagnosis(ctx: Context, line: str) -> Diagnosis:
    """A name did not resolve: the bind address (``-B``) or the server, whichever is a name.

    iperf3 says ``unable to connect to server: Name or service not known`` for both; iperf2
    starts the line with the name (``nosuch: Unknown host``).
    """
    words = strip_prefix(line)
    bind_named = bool(ctx.bind) and not _is_ip_literal(ctx.bind)
    server_named = not _is_ip_literal(ctx.server)
    if bind_named and (not server_named or line.startswith(f"{ctx.bind}:")):
        return Diagnosis(
            "bind_resolve",
            f"bind={ctx.bind!r} (the client's source address, -B) cannot be resolved on this host ({words}); "
            "set bind to an IP address of this host (on ESXi: the vmk interface's address) or leave it unset",
            line,
        )
    if bind_named and not line.startswith(f"{ctx.server}:"):
        return Diagnosis(
            "resolve",
            f"the server name {ctx.server!r} or bind={ctx.bind!r} cannot be resolved on this host ({words}); "
            "use IP addresses for both",
            line,
        )
    return Diagnosis(
        "resolve",
        f"the server name {ctx.server!r} cannot be resolved on this host ({words}); use an IP address",
        line,
    )


_CONNECT_WORD = re.compile(r"\bconnect\b", re.IGNORECASE)


def _diagnose_client(
    text: str, ctx: Context, ep: str, other: Tool, had_intervals: bool, ran_seconds: float | None
) -> Diagnosis | None:
    if ctx.tool == "iperf2" and ctx.protocol == "udp":
        line = line_with(text, "read failed", "connection refused") or line_with(text, "did not receive ack")
        if line:
            return Diagnosis(
                "udp_no_server",
                f"no iperf2 UDP server answered on {ep} ({line}): start the server with protocol=udp (an iperf2 "
                "server listens for one protocol only) and open UDP port "
                f"{ctx.port} in the firewall. Some iperf2 2.1.x UDP servers answer only their first test: start "
                "one server per UDP test",
                line,
            )
    line = line_with(text, "connection refused")
    if line and _CONNECT_WORD.search(line):
        return Diagnosis(
            "refused",
            f"connection refused by {ep}: is a server listening on {ep}? Start one with mode=server "
            f"(tool={ctx.tool}, port={ctx.port}) on that host, and check that the port is right",
            line,
        )
    for needle in ("no route to host", "network is unreachable", "host is unreachable"):
        if line := line_with(text, needle):
            return Diagnosis(
                "unreachable",
                f"the server {ctx.server} cannot be reached from this host ({strip_prefix(line)}): check the address, "
                "the routes (on ESXi: the vmk interfaces and their netstack) and the VLAN/uplinks between the hosts",
                line,
            )
    for needle in ("connection timed out", "operation timed out"):
        if line := line_with(text, needle):
            return Diagnosis(
                "connect_timeout",
                f"connecting to {ep} timed out ({strip_prefix(line)}): a firewall may drop the packets (on ESXi: "
                "esxcli network firewall) or the address is wrong",
                line,
            )
    for needle in ("name or service not known", "unknown host", "temporary failure in name resolution", "nodename nor"):
        if line := line_with(text, needle):
            return _resolve_diagnosis(ctx, line)
    if ctx.tool == "iperf3":
        # An iperf2 server answers the iperf3 handshake with any of these (seen with iperf 2.1.8).
        line = (
            line_with(text, "unknown control message")
            or line_with(text, "control socket has closed unexpectedly")
            or line_with(text, "unable to receive control message")
        )
        if line and not had_intervals:
            return Diagnosis(
                "not_iperf3_server",
                f"the server on {ep} does not speak the iperf3 protocol ({strip_prefix(line)}); it is probably an "
                "iperf2 server -- iperf2 and iperf3 do not interoperate. Start the server with tool=iperf3, or run "
                "the client with tool=iperf2",
                line,
            )
        if line:
            return Diagnosis(
                "server_gone",
                f"the server on {ep} closed the control connection during the test ({strip_prefix(line)}): "
                "was it stopped, killed by its server_timeout, or did it crash? Check its log",
                line,
            )
    if ctx.tool == "iperf2" and (line := line_with(text, "connection reset by peer")):
        short = ran_seconds is not None and ctx.duration is not None and ran_seconds < ctx.duration / 2
        if short or ran_seconds is None:
            ran = f" after {ran_seconds:g} s of {ctx.duration:g} s" if ran_seconds is not None and ctx.duration else ""
            return Diagnosis(
                "not_iperf2_server",
                f"the server on {ep} reset the connection{ran} ({line}); it is probably an iperf3 server -- iperf2 "
                "and iperf3 do not interoperate. Start the server with tool=iperf2, or run the client with tool=iperf3",
                line,
            )
        return Diagnosis("reset", f"the server on {ep} reset the connection during the test ({line})", line)
    return None
