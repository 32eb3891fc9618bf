# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The options of ``up``/``status`` validated into a LabSpec: a clear error naming the option before anything runs."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from pathlib import Path

from .common import DEFAULT_SUBNET, HOST_OFFSET, LAB_RANGE, MAX_HOSTS, MAX_MTU, MIN_HOSTS, MIN_MTU, NAME_RE, LabError
from .shaping import (
    DEFAULT_GSO_MAX_SEGS,
    ETHERNET_OVERHEAD,
    Shaping,
    check_flow_rate,
    format_rate,
    parse_delay,
    parse_rate,
    tbf_burst,
    tbf_limit,
)
from .spec import HostSpec, LabSpec, mac_for
from .standin import parse_host_bind, parse_host_env


def build_spec(
    *,
    name: str,
    hosts: int,
    state_dir: Path,
    subnet: str = DEFAULT_SUBNET,
    mtu: int = 1500,
    host_mtu: Sequence[str] = (),
    rate: str | None = None,
    flow_rate: str | None = None,
    delay: str | None = None,
    ethernet_overhead: bool = False,
    host_env: Sequence[str] = (),
    host_bind: Sequence[str] = (),
    host_rate: Sequence[str] = (),
) -> LabSpec:
    """Validate the options and compute every object of the lab."""
    if not NAME_RE.match(name):
        raise LabError(f"--name {name!r}: use 1-11 lowercase letters/digits starting with a letter")
    if not MIN_HOSTS <= hosts <= MAX_HOSTS:
        raise LabError(f"--hosts {hosts}: must be between {MIN_HOSTS} and {MAX_HOSTS}")
    try:
        net = ipaddress.IPv4Network(subnet, strict=True)
    except ValueError as exc:
        raise LabError(f"--subnet {subnet!r}: {exc}") from exc
    if not net.subnet_of(LAB_RANGE):
        raise LabError(f"--subnet {net}: must lie inside {LAB_RANGE} (RFC 2544 benchmarking range)")
    if net.num_addresses < HOST_OFFSET + hosts + 2:
        raise LabError(f"--subnet {net}: too small for the controller and {hosts} hosts at .{HOST_OFFSET + 1}+")

    def check_mtu(value: int, what: str) -> int:
        if not MIN_MTU <= value <= MAX_MTU:
            raise LabError(f"{what} {value}: MTU must be between {MIN_MTU} and {MAX_MTU}")
        return value

    check_mtu(mtu, "--mtu")
    overrides: dict[str, int] = {}
    for item in host_mtu:
        host, sep, value = item.partition("=")
        if not sep or not re.fullmatch(r"h[1-9]\d*", host) or not value.isdigit():
            raise LabError(f"--host-mtu {item!r}: use HOST=MTU, e.g. h2=9000")
        if int(host[1:]) > hosts:
            raise LabError(f"--host-mtu {item!r}: the lab has only h1..h{hosts}")
        overrides[host] = check_mtu(int(value), f"--host-mtu {host}")
    rate_bps = parse_rate(rate) if rate else None
    flow_rate_bps = check_flow_rate(flow_rate, rate_bps, delay, ethernet_overhead) if flow_rate else None
    host_rates: dict[str, int] = {}
    for item in host_rate:
        host, sep, value = item.partition("=")
        if not sep or not re.fullmatch(r"h[1-9]\d*", host) or not value:
            raise LabError(f"--host-rate {item!r}: use HOST=RATE, e.g. h4=300mbit")
        if int(host[1:]) > hosts:
            raise LabError(f"--host-rate {item!r}: the lab has only h1..h{hosts}")
        host_rates[host] = parse_rate(value)
        if flow_rate_bps is not None and host_rates[host] <= flow_rate_bps:
            raise LabError(
                f"--host-rate {item!r}: must be above --flow-rate {format_rate(flow_rate_bps)} (the flows share the "
                "host's link); raise it or lower --flow-rate"
            )
    delay_us = parse_delay(delay) if delay else None
    envs = parse_host_env(host_env, hosts)
    binds = parse_host_bind(host_bind, hosts)

    state_dir = state_dir.resolve()
    base = int(net.network_address)
    specs = []
    controller = ipaddress.IPv4Interface(f"{ipaddress.IPv4Address(base + 1)}/{net.prefixlen}")
    for index in range(1, hosts + 1):
        host_name = f"h{index}"
        host_mtu_value = overrides.get(host_name, mtu)
        link_bps = host_rates.get(host_name, rate_bps)
        burst = tbf_burst(link_bps, host_mtu_value) if link_bps else None
        limit = tbf_limit(link_bps) if link_bps else None
        overhead = ETHERNET_OVERHEAD if ethernet_overhead and link_bps else 0
        specs.append(
            HostSpec(
                index=index,
                name=host_name,
                netns=f"{name}-{host_name}",
                veth=f"{name}-v{index}",
                address=ipaddress.IPv4Interface(f"{ipaddress.IPv4Address(base + HOST_OFFSET + index)}/{net.prefixlen}"),
                mac=mac_for(0x02, ipaddress.IPv4Address(base + HOST_OFFSET + index)),
                veth_mac=mac_for(0x06, ipaddress.IPv4Address(base + HOST_OFFSET + index)),
                mtu=host_mtu_value,
                egress=Shaping(
                    rate_bps=link_bps,
                    burst=burst,
                    limit=limit,
                    overhead=overhead,
                    delay_us=delay_us,
                    flow_rate_bps=flow_rate_bps if link_bps else None,
                ),
                ingress=Shaping(rate_bps=link_bps, burst=burst, limit=limit, overhead=overhead),
                gso_max_segs=1 if overhead else DEFAULT_GSO_MAX_SEGS,
                env=envs.get(host_name, ()),
                binds=binds.get(host_name, ()),
            )
        )
    return LabSpec(
        name=name,
        bridge=f"{name}-br0",
        subnet=net,
        controller=controller,
        bridge_mac=mac_for(0x02, controller.ip),
        mtu=mtu,
        rate_bps=rate_bps,
        flow_rate_bps=flow_rate_bps,
        delay_us=delay_us,
        ethernet_overhead=bool(ethernet_overhead and (rate_bps or host_rates)),
        hosts=tuple(specs),
        state_dir=state_dir,
    )
