# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tc shaping of the lab's links: rates and delays, the qdiscs up installs, and reading them back.

Shaping (``--rate``/``--delay``) uses tc on both ends of every host's veth:

* ``--rate R`` puts a ``tbf`` qdisc on the host's ``eth0`` (what the host sends) and on the
  bridge-side ``<name>-v<i>`` (what the host receives), so each host has an access link
  of R in each direction, like a NIC of that speed.
* ``--flow-rate F`` (with ``--rate``) limits every flow a host sends to F as well: the host's
  ``eth0`` gets an ``htb`` root instead of ``tbf`` - one class at R for the link with
  ``FLOW_CLASSES`` leaf classes at F under it, chosen by a ``u32`` hash of the source port
  (IPv4 without options; TCP and UDP) - so throughput rises with parallel streams (1 stream
  = F) and plateaus at R, like a path whose single flows are limited (window, per-flow
  policer) below the link. Parallel streams of one client get distinct classes when it connects
  without binding first: connect() hands out even ports a few apart (measured: 2-16 on kernel
  6.x), far less than the 128 ports the classes repeat after. A socket bound before it connects
  (iperf's ``-B``, ``paired_test_client_bind``) gets a random port, and two such flows share a
  class (and F) with a chance of 1 in 64 - the demo turns client_bind off for that reason. ``fq`` with
  ``maxrate`` would be the natural qdisc, but not every kernel has it (``sch_fq``);
  ``htb`` + ``u32`` are everywhere ``tc`` shaping is.
* ``--host-rate HOST=R`` gives one host an access link of R instead (both directions, as
  ``--rate`` does for every host; with ``--flow-rate`` R must be above it), e.g. ``h4=300mbit``
  beside ``--rate 1gbit``, so concurrent pairs run at different rates. The host's inventory
  variables ``lab_rate``/``lab_rate_bps`` say its rate.
* The inventory gives every shaped host ``paired_test_link_speed_mbps`` (its rate in Mbit/s):
  ``esxilab.iperf.paired_test`` takes it for the line rate instead of the 10000 Mb/s a veth reports.
* ``--delay D`` puts a ``netem`` qdisc on the host's ``eth0`` only (root ``netem``, ``tbf``
  as its child when a rate is set): every packet a host sends is delayed by D, so the RTT
  between two hosts is 2*D and between the controller and a host D. It needs
  ``sch_netem`` in the kernel; ``up`` refuses early when the kernel lacks it.
"""

from __future__ import annotations

import contextlib
import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .common import JSONDict, LabError, run, run_json, tc_cmd

TBF_MIN_LIMIT = 1 << 20  # bytes; see tbf_limit()
NETEM_LIMIT = 10000
ETHERNET_OVERHEAD = 24  # preamble+SFD 8, FCS 4, inter-frame gap 12: bytes on the wire not in the skb
DEFAULT_GSO_MAX_SEGS = 65535
FLOW_CLASSES = 64  # --flow-rate: htb leaf classes 1:100.. chosen by bits 1-6 of the source port
FLOW_CLASS_BASE = 0x100
HTB_DEFAULT_CLASS = 2  # unhashed traffic (non-IP): at most the link rate, no flow limit
HTB_QUANTUM = 65536  # bytes; set so htb does not warn about rate/r2q quanta at Gbit rates
_RATE_RE = re.compile(r"^(?P<num>\d+(?:\.\d+)?)(?P<prefix>[kmgt]?)(?P<unit>bit|bps)$", re.IGNORECASE)
_DELAY_RE = re.compile(r"^(?P<num>\d+(?:\.\d+)?)(?P<unit>us|ms|s)$", re.IGNORECASE)
_SI = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}


def parse_rate(text: str) -> int:
    """``"100mbit"`` -> 100000000 bit/s. tc units: ``bit`` (SI prefixes) or ``bps`` (bytes/s)."""
    match = _RATE_RE.match(text.strip())
    if not match:
        raise LabError(f"rate {text!r}: use a tc rate such as 100mbit, 1gbit, 500kbit")
    bits = float(match["num"]) * _SI[match["prefix"].lower()] * (8 if match["unit"].lower() == "bps" else 1)
    if bits < 10**6 or bits > 100 * 10**9:
        raise LabError(f"rate {text!r}: must be between 1mbit and 100gbit")
    return int(bits)


def parse_delay(text: str) -> int:
    """``"1ms"`` -> 1000 microseconds."""
    match = _DELAY_RE.match(text.strip())
    if not match:
        raise LabError(f"delay {text!r}: use a time such as 500us, 1ms, 0.2s")
    usec = float(match["num"]) * {"us": 1, "ms": 1000, "s": 1_000_000}[match["unit"].lower()]
    if usec < 1 or usec > 10_000_000:
        raise LabError(f"delay {text!r}: must be between 1us and 10s")
    return round(usec)


def format_rate(bits: int) -> str:
    for prefix, factor in (("g", 10**9), ("m", 10**6), ("k", 10**3)):
        if bits % factor == 0:
            return f"{bits // factor}{prefix}bit"
    return f"{bits}bit"


def format_delay(usec: int) -> str:
    return f"{usec // 1000}ms" if usec % 1000 == 0 else f"{usec}us"


@dataclass(frozen=True)
class Shaping:
    """tc shaping of one veth end: rate in bit/s, tbf burst and per-frame overhead in bytes, netem delay in µs."""

    rate_bps: int | None = None
    burst: int | None = None
    limit: int | None = None
    overhead: int = 0
    delay_us: int | None = None
    flow_rate_bps: int | None = None  # --flow-rate: htb + u32 per-flow classes instead of tbf

    @property
    def empty(self) -> bool:
        return self.rate_bps is None and self.delay_us is None

    def describe(self) -> str:
        parts = []
        if self.rate_bps is not None and self.flow_rate_bps is not None:
            parts.append(
                f"htb rate {format_rate(self.rate_bps)} burst {self.burst}"
                f" with {FLOW_CLASSES} flow classes of {format_rate(self.flow_rate_bps)}"
            )
        elif self.rate_bps is not None:
            extra = f" overhead {self.overhead}" if self.overhead else ""
            parts.append(f"tbf rate {format_rate(self.rate_bps)} burst {self.burst} limit {self.limit}{extra}")
        if self.delay_us is not None:
            parts.append(f"netem delay {format_delay(self.delay_us)}")
        return " + ".join(parts) or "none"


def tbf_limit(rate_bps: int) -> int:
    """Queue size: 50 ms at line rate, at least 1 MiB.

    The host-side tbf is the host's own NIC queue: TCP in the namespace queues into it
    directly (TSQ allows up to tcp_limit_output_bytes, 4 MiB), and a short queue there makes
    the sender drop its own packets (measured: ~600 retransmits per 5 s at 10mbit with a
    20 ms queue, none with 1 MiB), which no physical NIC does.
    """
    return max(rate_bps // 8 // 20, TBF_MIN_LIMIT)


def tbf_burst(rate_bps: int, mtu: int) -> int:
    """Bucket size: 5 ms at line rate, at least four full frames and 16 KiB."""
    return max(rate_bps // 8 // 200, 4 * (mtu + 14), 16 * 1024)


def check_flow_rate(flow_rate: str, rate_bps: int | None, delay: str | None, ethernet_overhead: bool) -> int:
    """--flow-rate: a rate below --rate, on a lab without --delay/--ethernet-overhead."""
    if rate_bps is None:
        raise LabError(f"--flow-rate {flow_rate}: needs --rate (the link the flows share), e.g. --rate 1gbit")
    if delay or ethernet_overhead:
        raise LabError(f"--flow-rate {flow_rate}: cannot be combined with --delay or --ethernet-overhead; drop one")
    flow_rate_bps = parse_rate(flow_rate)
    if flow_rate_bps >= rate_bps:
        raise LabError(
            f"--flow-rate {flow_rate}: must be below --rate {format_rate(rate_bps)} (a flow limit at or above"
            " the link rate changes nothing); omit it or lower it"
        )
    return flow_rate_bps


def parse_htb_classes(text: str) -> list[JSONDict]:
    """``tc class show`` of htb classes (iproute2 prints no JSON for them): handle, rate/ceil bit/s, burst bytes."""
    found: list[JSONDict] = []
    for line in text.splitlines():
        words = line.split()
        if words[:2] != ["class", "htb"] or len(words) < 3:
            continue
        item: JSONDict = {"handle": words[2]}
        for key, value in itertools.pairwise(words[3:]):
            if key in ("rate", "ceil"):
                with contextlib.suppress(LabError):
                    item[key] = parse_rate(value.lower())
            elif key == "burst" and value.endswith("b") and value[:-1].isdigit():
                item[key] = int(value[:-1])
        found.append(item)
    return found


def observe_htb(classes: Sequence[Mapping[str, Any]]) -> Shaping | None:
    """The --flow-rate layout (link class 1:1, flow classes 1:100..) from parse_htb_classes(); None otherwise."""
    by_handle = {str(c.get("handle", "")): c for c in classes}
    link = by_handle.get("1:1", {})
    flow = by_handle.get(f"1:{FLOW_CLASS_BASE:x}", {})
    flows = [h for h in by_handle if re.fullmatch(r"1:[0-9a-f]+", h) and int(h[2:], 16) >= FLOW_CLASS_BASE]
    if len(flows) != FLOW_CLASSES or not {"rate", "burst"} <= link.keys() or "ceil" not in flow:
        return None
    return Shaping(rate_bps=int(link["rate"]), burst=int(link["burst"]), flow_rate_bps=int(flow["ceil"]))


def observe_shaping(qdiscs: Sequence[Mapping[str, Any]], classes: Sequence[Mapping[str, Any]] = ()) -> Shaping | None:
    """Read back the layout this script installs; None when it is something else."""
    root = next((q for q in qdiscs if q.get("root")), None)
    if root is None or root.get("kind") in ("noqueue", "noop", "pfifo_fast", "mq"):
        return Shaping()

    def tbf(q: Mapping[str, Any], delay_us: int | None = None) -> Shaping | None:
        options = q.get("options", {})
        if q.get("kind") != "tbf" or "rate" not in options or "burst" not in options:
            return None
        rate_bytes, burst = int(options["rate"]), int(options["burst"])
        # tc reports the queue as "lat" (µs at rate after the burst), not as the byte limit
        limit = round(float(options["lat"]) * rate_bytes / 1e6) + burst if "lat" in options else None
        return Shaping(
            rate_bps=rate_bytes * 8,
            burst=burst,
            limit=limit,
            overhead=int(options.get("overhead", 0)),
            delay_us=delay_us,
        )

    if root.get("kind") == "tbf":
        return tbf(root)
    if root.get("kind") == "htb":
        return observe_htb(classes)
    if root.get("kind") == "netem":
        raw = root.get("options", {}).get("delay")
        if isinstance(raw, dict):
            raw = raw.get("delay")
        if not isinstance(raw, int | float):
            return None
        handle = str(root.get("handle", ""))
        child = next((q for q in qdiscs if q is not root and str(q.get("parent", "")) == f"{handle}1"), None)
        delay_us = round(float(raw) * 1_000_000)
        if child is None:
            return Shaping(delay_us=delay_us)
        return tbf(child, delay_us)
    return None


def shaping_matches(current: Shaping | None, desired: Shaping) -> bool:
    if current is None:
        return False
    if (current.rate_bps is None) != (desired.rate_bps is None):
        return False
    if current.flow_rate_bps != desired.flow_rate_bps:
        if current.flow_rate_bps is None or desired.flow_rate_bps is None:
            return False
        if abs(current.flow_rate_bps - desired.flow_rate_bps) > 8:
            return False
    if (current.delay_us is None) != (desired.delay_us is None):
        return False
    if desired.rate_bps is not None and current.rate_bps is not None:
        if abs(current.rate_bps - desired.rate_bps) > 8:
            return False
        if current.burst is None or desired.burst is None or abs(current.burst - desired.burst) > desired.burst // 50:
            return False
        if desired.flow_rate_bps is None and (
            current.limit is None or desired.limit is None or abs(current.limit - desired.limit) > desired.limit // 50
        ):
            return False
        if current.overhead != desired.overhead:
            return False
    return not (
        desired.delay_us is not None and current.delay_us is not None and abs(current.delay_us - desired.delay_us) > 1
    )


def qdiscs(netns: str | None, dev: str) -> list[JSONDict]:
    return run_json(tc_cmd(netns, "-j", "qdisc", "show", "dev", dev))


def current_shaping(netns: str | None, dev: str) -> Shaping | None:
    """The shaping of one veth end as this script would have installed it; None for a foreign layout."""
    found = qdiscs(netns, dev)
    root = next((q for q in found if q.get("root")), {})
    if root.get("kind") != "htb":
        return observe_shaping(found)
    return observe_shaping(found, parse_htb_classes(run(tc_cmd(netns, "class", "show", "dev", dev)).stdout))


def shaping_commands(netns: str | None, dev: str, current: Shaping | None, desired: Shaping) -> list[list[str]]:
    commands: list[list[str]] = []
    if current is None or not current.empty:
        commands.append(tc_cmd(netns, "qdisc", "del", "dev", dev, "root"))
    tbf_args = []
    if desired.rate_bps is not None and desired.burst is not None and desired.limit is not None:
        tbf_args = ["tbf", "rate", f"{desired.rate_bps}bit", "burst", str(desired.burst), "limit", str(desired.limit)]
        if desired.overhead:
            tbf_args += ["overhead", str(desired.overhead)]
    if desired.delay_us is not None:
        netem = ["netem", "delay", f"{desired.delay_us}us", "limit", str(NETEM_LIMIT)]
        commands.append(tc_cmd(netns, "qdisc", "add", "dev", dev, "root", "handle", "1:", *netem))
        if tbf_args:
            commands.append(tc_cmd(netns, "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", *tbf_args))
    elif desired.flow_rate_bps is not None and desired.rate_bps is not None and desired.burst is not None:
        commands += flow_limit_commands(netns, dev, desired.rate_bps, desired.burst, desired.flow_rate_bps)
    elif tbf_args:
        commands.append(tc_cmd(netns, "qdisc", "add", "dev", dev, "root", "handle", "1:", *tbf_args))
    return commands


def flow_limit_commands(netns: str | None, dev: str, rate_bps: int, burst: int, flow_rate_bps: int) -> list[list[str]]:
    """htb root: link class 1:1 at rate, FLOW_CLASSES leaves at flow rate, a u32 hash of the source port picks one."""

    def htb_class(classid: str, rate: int, ceil: int, class_burst: int) -> list[str]:
        return tc_cmd(
            netns, "class", "add", "dev", dev, "parent", "1:" if classid == "1:1" else "1:1", "classid", classid,
            "htb", "rate", f"{rate}bit", "ceil", f"{ceil}bit", "burst", str(class_burst), "cburst", str(class_burst),
            "quantum", str(HTB_QUANTUM),
        )  # fmt: skip

    flow_burst = max(burst * flow_rate_bps // rate_bps, 16 * 1024)
    u32 = ("filter", "add", "dev", dev, "parent", "1:", "prio", "1", "protocol", "ip")
    commands = [
        tc_cmd(netns, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", str(HTB_DEFAULT_CLASS)),
        htb_class("1:1", rate_bps, rate_bps, burst),
        htb_class(f"1:{HTB_DEFAULT_CLASS}", max(rate_bps // 100, 8000), rate_bps, burst),
        *(
            htb_class(f"1:{FLOW_CLASS_BASE + i:x}", flow_rate_bps, flow_rate_bps, flow_burst)
            for i in range(FLOW_CLASSES)
        ),
        tc_cmd(netns, *u32, "handle", "2:", "u32", "divisor", str(FLOW_CLASSES)),
        # bits 1-6 of the source port (the word at offset 20 of an IPv4 header without options:
        # source port << 16 | destination port); connect() hands out even ports, so bit 0 is skipped
        tc_cmd(
            netns,
            *u32,
            "u32",
            "ht",
            "800::",
            "match",
            "u8",
            "0",
            "0",
            "hashkey",
            "mask",
            f"0x{(FLOW_CLASSES - 1) << 17:08x}",
            "at",
            "20",
            "link",
            "2:",
        ),
        *(
            tc_cmd(
                netns, *u32, "u32", "ht", f"2:{i:x}:", "match", "u8", "0", "0", "flowid", f"1:{FLOW_CLASS_BASE + i:x}"
            )
            for i in range(FLOW_CLASSES)
        ),
    ]
    return commands
