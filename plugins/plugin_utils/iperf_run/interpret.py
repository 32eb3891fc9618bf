# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reading the client script's output: the clock reading, the barrier, the parsed result, the diagnosis.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.framing import Section, first, parse_kv
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.result import IperfParseError, Result
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.rtt import drop_rtt
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.diagnosis import (
    Context,
    Diagnosis,
    diagnose,
    line_with,
    strip_prefix,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.probe import HostCaps
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.scripts import barrier_method


def parse_started_at(raw: str) -> tuple[float | None, float | None]:
    """``(epoch seconds, resolution)`` from a clock reading; ``(None, None)`` if unreadable.

    Accepts ``1700000000.123456`` (EPOCHREALTIME; a locale may print ``,``), nanosecond
    ``date +%s.%N`` output and whole seconds; a ``date`` without ``%N`` support prints the
    format literally (``1700000000.%N`` or ``1700000000.N``): then only the seconds count.
    """
    text = raw.strip()
    match = re.match(r"^(\d+)(?:[.,](\d+))?", text)
    if not match:
        return None, None
    whole, digits = match.group(1), match.group(2)
    if digits and text == match.group(0):
        return float(f"{whole}.{digits}"), 10.0 ** -len(digits)
    return float(whole), 1.0


# --------------------------------------------------------------------------------------------
# Client output
# --------------------------------------------------------------------------------------------


def distrust_tcp_info(result: Result) -> None:
    """ESXi's iperf3 cannot read TCP_INFO: its retransmit figures are garbage, drop them."""
    for key in ("sent", "received", "reverse_sent", "reverse_received"):
        totals = result.get(key)
        if isinstance(totals, dict):
            totals["retransmits"] = None
    for stream in result.get("per_stream") or []:
        for key in ("sent", "received"):
            if isinstance(stream.get(key), dict):
                stream[key]["retransmits"] = None
    for interval in result.get("intervals") or []:
        interval["retransmits"] = None
    drop_rtt(result)
    result["warnings"].append(
        "iperf3 printed 'getsockopt - Function not implemented' (the host cannot report TCP_INFO, as on ESXi): "
        "retransmits and rtt are unknown and set to null"
    )


def distrust_esxi_server_sending(result: Result) -> None:
    """The server (an ESXi host, ``peer_is_esxi``) sent: its retransmits are ESXi iperf3 garbage.

    With ``-R`` the client's totals (``sent``, ``per_stream[].sent``) are the server's own,
    exchanged at the end of the test; with ``--bidir`` the server's sending is the reverse
    part (``reverse_sent``, ``reverse_per_stream``). The intervals are the client's (it only
    received), so they carry none. The server's cwnd is never in the client's output. The RTT
    figures of the server's sending (``--get-server-output``'s ``server_output``, the reverse
    streams) come from the same ``TCP_INFO`` and are set to null too (``iperf/rtt.py``).
    """
    if result.get("protocol") != "tcp":
        return
    if result.get("bidir"):
        totals, per_stream, series = "reverse_sent", "reverse_per_stream", "reverse_intervals"
    elif result.get("reverse"):
        totals, per_stream, series = "sent", "per_stream", "intervals"
    else:
        return
    had_any = False
    block = result.get(totals)
    if isinstance(block, dict) and block.get("retransmits") is not None:
        block["retransmits"] = None
        had_any = True
    for stream in result.get(per_stream) or []:
        sent = stream.get("sent") if isinstance(stream, dict) else None
        if isinstance(sent, dict) and sent.get("retransmits") is not None:
            sent["retransmits"] = None
            had_any = True
    for interval in result.get(series) or []:
        if isinstance(interval, dict) and interval.get("retransmits") is not None:
            interval["retransmits"] = None
            had_any = True
    if had_any:
        result["warnings"].append(
            "retransmits of the server's sending set to null: the server is an ESXi host (peer_is_esxi), whose "
            "bundled iperf3 cannot read TCP_INFO, so its retransmit counts are garbage"
        )
    server = result.get("server_output")
    if drop_rtt(result, [per_stream]) | (isinstance(server, dict) and drop_rtt(server)):
        result["warnings"].append(
            "rtt of the server's sending set to null: the server is an ESXi host (peer_is_esxi), whose bundled "
            "iperf3 cannot read TCP_INFO"
        )


def interpret_client(
    sections: Sequence[Section],
    ctx: Context,
    *,
    caps: HostCaps,
    timeout: float,
    start_at: float | None,
    labels: Mapping[str, Any],
    peer_is_esxi: bool = False,
) -> tuple[dict[str, Any], Diagnosis | None]:
    """Turn the client script's sections into the task result and, on failure, a diagnosis."""
    stdout = (first(sections, "stdout") or Section("stdout", "", "")).text
    stderr = (first(sections, "stderr") or Section("stderr", "", "")).text
    exit_kv = parse_kv((first(sections, "exit") or Section("exit", "", "")).args)
    rc = int(exit_kv["rc"]) if exit_kv.get("rc", "").lstrip("-").isdigit() else None
    timed_out = exit_kv.get("timedout") == "1"
    started_raw = (first(sections, "started_at") or Section("started_at", "", "")).args
    started_at, resolution = parse_started_at(started_raw)
    source = "date +%s" if resolution is not None and resolution >= 1.0 else caps.clock_source

    out: dict[str, Any] = {
        "raw": stdout,
        "stderr": stderr,
        "rc": rc,
        "timed_out": timed_out,
        "timeout": timeout,
        "started_at": started_at,
        "started_at_source": source if started_at is not None else None,
        "started_at_resolution": resolution,
    }
    warnings: list[str] = []
    barrier = first(sections, "barrier")
    if start_at is not None:
        info: dict[str, Any] = {"start_at": start_at, "method": barrier_method(caps), "late_by": None}
        if barrier is not None:
            kv = parse_kv(barrier.args)
            arrived = int(kv["now_us"]) / 1e6 if kv.get("now_us", "").isdigit() else None
            info["arrived_at"] = arrived
            # On a whole-second clock "arrived" is the floor of the true time: still a proof.
            if arrived is not None and arrived > start_at:
                warnings.append(
                    f"start_at had passed by {arrived - start_at:.3f} s when the host reached the barrier: the test "
                    "started at once. Give the hosts more time (start_at = now + a few seconds)"
                )
        if started_at is not None and resolution is not None and resolution < 1.0:
            info["late_by"] = round(started_at - start_at, 6)
        out["barrier"] = info

    result: Result | None = None
    if stdout.strip():
        try:
            result = parse(stdout)
        except IperfParseError:
            result = None
    if result is not None:
        if labels:
            result["labels"] = dict(labels)
        if ctx.tool == "iperf3" and line_with(stderr, "getsockopt", "function not implemented"):
            distrust_tcp_info(result)
        if peer_is_esxi:
            distrust_esxi_server_sending(result)
    out["result"] = result

    pieces = (result.get("error") if result else None, stderr, stdout if result is None else "")
    texts = "\n".join(t for t in pieces if t)
    ran = None
    intervals = False
    if result is not None:
        ran = result.get("duration")
        intervals = bool(result.get("intervals")) or bool(result.get("sent") or result.get("received"))
    diagnosis = diagnose(
        texts,
        ctx,
        timed_out=timed_out,
        timeout=timeout,
        ran_seconds=ran,
        had_intervals=intervals,
        rc=rc if result is None else None,
    )
    if diagnosis is None and result is not None and result.get("error"):
        message = f"{ctx.tool} reported an error: {strip_prefix(result['error'])}"
        diagnosis = Diagnosis("iperf_error", message, result["error"])
    if diagnosis is None and result is None:
        shown = (stderr.strip() or stdout.strip() or "no output")[-400:]
        diagnosis = Diagnosis(
            "no_result",
            f"{ctx.tool} produced no result (exit status {rc}): {shown}",
            shown,
        )
    if result is not None and not result.get("complete") and diagnosis is None:
        warnings.append("the result is incomplete; see result.warnings")
    out["warnings"] = warnings
    return out, diagnosis
