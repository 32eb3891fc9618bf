# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Path MTU checks: read ``vmkping -d -s N`` (ESXi) and Linux ``ping -M do -s N`` output.

Both give a :class:`PathMtuResult`; the ``path_mtu_parse`` filter is the caller.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

MtuReason = Literal[
    "ok",
    "partial_loss",
    "message_too_long",
    "fragmentation_needed",
    "no_reply",
    "send_failed",
    "tool_missing",
    "unrecognized",
]


@dataclass(frozen=True, slots=True)
class PathMtuResult:
    """Outcome of a don't-fragment ping of ``payload_size`` bytes.

    ``ok`` means at least one reply of that size came back. ``reason``:

    * ``message_too_long`` -- the sending interface's MTU is below payload + 28 (vmkping
      ``sendto() failed (Message too long)``; Linux ``local error: message too long, mtu=N``);
    * ``fragmentation_needed`` -- a router on the path has a smaller MTU (Linux ``Frag needed
      and DF set (mtu = N)``); ``mtu_reported`` is that MTU;
    * ``no_reply`` -- 100% loss without any error: something on the path silently drops frames
      of this size (a switch MTU too small), or the target does not answer at all -- repeat
      with a small payload to tell the two apart;
    * ``partial_loss`` -- some replies came back (``ok`` is true);
    * ``send_failed`` -- another send error (``sendto() failed (...)``, ``sendmsg: ...``);
    * ``tool_missing`` -- the shell or ``env`` found no such program (``ping: not found``,
      ``env: 'ping': No such file or directory``): ``message`` names the program and the package;
    * ``unrecognized`` -- none of these; ``message`` quotes the output's first line.
    """

    ok: bool
    reason: MtuReason
    tool: Literal["vmkping", "ping"]
    target: str | None
    payload_size: int | None
    transmitted: int | None
    received: int | None
    loss_percent: float | None
    reply_bytes: int | None
    rtt_min_ms: float | None
    rtt_avg_ms: float | None
    rtt_max_ms: float | None
    mtu_reported: int | None
    errors: tuple[str, ...]
    message: str
    raw: str


_REPLY_RE = re.compile(r"^\s*(?P<bytes>\d+) bytes from (?P<ip>\S+?):? icmp_seq=\d+ ttl=\d+ time=(?P<ms>[\d.]+) ms")


# What a shell or env prints when the program does not exist (busybox sh, dash, bash, coreutils env).
_MISSING_RE = re.compile(
    r"^(?:.*?: )?['\u2018]?(?P<tool>vmkping|ping)['\u2019]?: "
    r"(?:No such file or directory|not found|command not found)\s*$",
    re.MULTILINE,
)
# Where to get the program: iputils' ping is a separate package on Debian-like and other distributions.
_INSTALL = {
    "ping": "install iputils-ping (Debian, Ubuntu) or iputils (RHEL, SUSE)",
    "vmkping": "vmkping exists on ESXi only: set path_mtu_platform to linux for a Linux host",
}


def _first_line(raw: str) -> str:
    line = next((line.strip() for line in raw.splitlines() if line.strip()), "")
    return line if len(line) <= 160 else line[:157] + "..."


def _mtu_message(
    reason: MtuReason, tool: str, size: int | None, target: str | None, mtu: int | None, raw: str = ""
) -> str:
    what = f"{size}-byte don't-fragment ping to {target}" if size is not None else f"ping to {target}"
    if reason == "tool_missing":
        return f"{tool} is not on this host ({_first_line(raw)}): {_INSTALL[tool]}"
    if reason == "unrecognized":
        shown = _first_line(raw)
        return f"{what}: {tool} output not recognised: " + (repr(shown) if shown else "(no output)")
    interface = "vmk/vSwitch" if tool == "vmkping" else "interface"
    return {
        "ok": f"{what}: all replies received",
        "partial_loss": f"{what}: some replies received (the path carries this size; some packets were lost)",
        "message_too_long": f"{what}: the sending interface MTU is too small"
        + (f" (mtu {mtu})" if mtu else "")
        + f"; raise the {interface} MTU",
        "fragmentation_needed": f"{what}: a router on the path has MTU {mtu}; packets of this size cannot pass",
        "no_reply": f"{what}: no reply and no error -- a device on the path drops frames of this size (check"
        " switch MTU) or the target is unreachable; retry with a small payload to tell them apart",
        "send_failed": f"{what}: the send failed",
    }[reason]


def _mtu_result(
    tool: Literal["vmkping", "ping"],
    raw: str,
    head: re.Match[str] | None,
    stats: re.Match[str] | None,
    rtt_m: re.Match[str] | None,
    errors: list[str],
    *,
    too_long: bool,
    frag_mtu: int | None = None,
    local_mtu: int | None = None,
) -> PathMtuResult:
    """The result from the tool's ``PING`` header (groups ``ip``, ``size``), summary (``tx``, ``rx``,
    ``loss``) and round-trip line (``a``/``b``/``c`` = min/avg/max) matches and its error findings."""
    target = head.group("ip") if head else None
    size = int(head.group("size")) if head else None
    transmitted = int(stats.group("tx")) if stats else None
    received = int(stats.group("rx")) if stats else None
    loss = float(stats.group("loss")) if stats else None
    replies = [int(m.group("bytes")) for line in raw.splitlines() if (m := _REPLY_RE.match(line))]
    rtt = (float(rtt_m.group("a")), float(rtt_m.group("b")), float(rtt_m.group("c"))) if rtt_m else None
    reason: MtuReason
    missing = _MISSING_RE.search(raw) if head is None else None
    if missing is not None:
        reason = "tool_missing"
        tool = "ping" if missing.group("tool") == "ping" else "vmkping"  # the program the shell did not find
    elif received:
        reason = "ok" if transmitted is not None and received >= transmitted else "partial_loss"
    elif too_long:
        reason = "message_too_long"
    elif frag_mtu is not None:
        reason = "fragmentation_needed"
    elif errors:
        reason = "send_failed"
    elif transmitted is not None and received == 0:
        reason = "no_reply"
    else:
        reason = "unrecognized"
    mtu = frag_mtu if reason == "fragmentation_needed" else local_mtu
    return PathMtuResult(
        ok=bool(received),
        reason=reason,
        tool=tool,
        target=target,
        payload_size=size,
        transmitted=transmitted,
        received=received,
        loss_percent=loss,
        reply_bytes=replies[0] if replies else None,
        rtt_min_ms=rtt[0] if rtt else None,
        rtt_avg_ms=rtt[1] if rtt else None,
        rtt_max_ms=rtt[2] if rtt else None,
        mtu_reported=mtu,
        errors=tuple(errors),
        message=_mtu_message(reason, tool, size, target, mtu, raw),
        raw=raw,
    )


def parse_vmkping(text: str) -> PathMtuResult:
    """``vmkping [-I vmkN] -d -s SIZE HOST`` output (busybox-style summary lines)."""
    head = re.search(r"PING (?P<host>\S+) \((?P<ip>[^)]+)\): (?P<size>\d+) data bytes", text)
    stats = re.search(
        r"(?P<tx>\d+) packets transmitted, (?P<rx>\d+) packets received, (?P<loss>[\d.]+)% packet loss", text
    )
    rtt_m = re.search(r"round-trip min/avg/max = (?P<a>[\d.]+)/(?P<b>[\d.]+)/(?P<c>[\d.]+) ms", text)
    errors = [m.group(0).strip() for m in re.finditer(r"sendto\(\) failed \((?P<why>[^)]*)\)", text)]
    too_long = any("Message too long" in e for e in errors)
    return _mtu_result("vmkping", text, head, stats, rtt_m, errors, too_long=too_long)


def parse_linux_ping(stdout: str, stderr: str = "") -> PathMtuResult:
    """iputils ``ping -M do -s SIZE HOST`` (stdout and stderr apart, or merged into ``stdout``).

    Recorded on this project's lab machine (iputils 20221126): success, ``local error: message
    too long, mtu=1500`` (stderr), ``From R icmp_seq=1 Frag needed and DF set (mtu = 1500)``
    and a silent 100% loss.
    """
    text = stdout if not stderr else f"{stdout}\n{stderr}"
    head = re.search(r"PING (?P<host>\S+) \((?P<ip>[^)]+)\) (?P<size>\d+)\((?P<total>\d+)\) bytes of data", text)
    stats = re.search(
        r"(?P<tx>\d+) packets transmitted, (?P<rx>\d+) received,(?: \+(?P<err>\d+) errors,)?"
        r" (?P<loss>[\d.]+)% packet loss",
        text,
    )
    rtt_m = re.search(r"rtt min/avg/max/mdev = (?P<a>[\d.]+)/(?P<b>[\d.]+)/(?P<c>[\d.]+)/[\d.]+ ms", text)
    local = re.search(r"local error: message too long, mtu=(?P<mtu>\d+)", text)
    frag = re.search(r"Frag needed and DF set \(mtu = (?P<mtu>\d+)\)", text)
    errors = [m.group(0).strip() for m in re.finditer(r"ping: (?:sendmsg: .*|local error: .*)", text)]
    return _mtu_result(
        "ping",
        text,
        head,
        stats,
        rtt_m,
        errors,
        # a router's Frag-needed reply makes the kernel cache the path MTU, after which the
        # later sends fail locally too: the router's report is the finding then.
        too_long=bool(local) and not frag,
        frag_mtu=int(frag.group("mtu")) if frag else None,
        local_mtu=int(local.group("mtu")) if local else None,
    )
