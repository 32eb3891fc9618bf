# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parsers of ESXi outputs that no plugin calls, kept here for the tests that read them.

They were part of the ESXi parsers (now ``plugins/plugin_utils/esxi/``) with no caller there: the esxcli
network listings (``nic list``, ``ip interface list``, ``ip interface ipv4 list``, ``vswitch
standard list``, ``portgroup list``), ``software acceptance get``/``set`` and the vmkping payload
arithmetic. The tests keep using them to check the recorded outputs in
``tests/fixtures/esxi`` and that the ESXi stand-in prints what real hosts print. Built on the
collection's shared table helpers (``plugin_utils/esxi/tables.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import EsxiParseError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.tables import (
    int_or_none,
    kv_blocks,
    parse_bool,
    parse_table,
    required_field,
    split_list,
)


def na_to_none(value: str | None) -> str | None:
    """esxcli prints ``N/A`` (and sometimes nothing) for an unset text field (only these listings have one)."""
    if value is None:
        return None
    value = value.strip()
    return None if value in ("", "N/A") else value


@dataclass(frozen=True, slots=True)
class Nic:
    """A row of ``esxcli network nic list``. A down link prints ``Speed 0`` and ``Duplex Half``;
    ``speed_mbps`` keeps that 0 as printed -- read it together with ``link_up``."""

    name: str
    pci_device: str
    driver: str
    admin_up: bool | None
    link_up: bool
    speed_mbps: int
    duplex: str
    mac_address: str
    mtu: int
    description: str


def _updown(value: str | None) -> bool | None:
    if value is None:
        return None
    return {"up": True, "down": False}.get(value.strip().lower())


def parse_nic_list(text: str) -> list[Nic]:
    nics = []
    for row in parse_table(text, "Name"):
        link = _updown(row.get("linkstatus", row.get("link")))
        speed = int_or_none(row.get("speed"))
        mtu = int_or_none(row.get("mtu"))
        if link is None or speed is None or mtu is None:
            raise EsxiParseError(f"nic list row {row.get('name')!r}: Link/Speed/MTU not readable", raw=text)
        nics.append(
            Nic(
                name=required_field(row, "name", "nic list"),
                pci_device=row.get("pcidevice", ""),
                driver=row.get("driver", ""),
                admin_up=_updown(row.get("adminstatus")),
                link_up=link,
                speed_mbps=speed,
                duplex=row.get("duplex", ""),
                mac_address=row.get("macaddress", ""),
                mtu=mtu,
                description=row.get("description", ""),
            )
        )
    return nics


@dataclass(frozen=True, slots=True)
class VmkInterface:
    """A block of ``esxcli network ip interface list``; ``fields`` keeps every printed field."""

    name: str
    mac_address: str | None
    enabled: bool | None
    portset: str | None
    portgroup: str | None
    netstack: str | None
    mtu: int | None
    tso_mss: int | None
    port_id: int | None
    vds_name: str | None
    fields: dict[str, str] = field(default_factory=dict)


def parse_ip_interface_list(text: str) -> list[VmkInterface]:
    result = []
    for title, kv in kv_blocks(text):
        name = kv.get("name", title)
        result.append(
            VmkInterface(
                name=name,
                mac_address=na_to_none(kv.get("macaddress")),
                enabled=parse_bool(kv.get("enabled")),
                portset=na_to_none(kv.get("portset")),
                portgroup=na_to_none(kv.get("portgroup")),
                netstack=na_to_none(kv.get("netstackinstance")),
                mtu=int_or_none(kv.get("mtu")),
                tso_mss=int_or_none(kv.get("tsomss")),
                port_id=int_or_none(kv.get("portid")),
                vds_name=na_to_none(kv.get("vdsname")),
                fields=dict(kv),
            )
        )
    if not result:
        raise EsxiParseError("no interface blocks ('vmkN' followed by indented fields)", raw=text)
    return result


@dataclass(frozen=True, slots=True)
class Ipv4Interface:
    """A row of ``esxcli network ip interface ipv4 list`` / ``ipv4 get``."""

    name: str
    address: str
    netmask: str
    broadcast: str
    address_type: str
    gateway: str | None
    dhcp_dns: bool | None


def parse_ipv4_list(text: str) -> list[Ipv4Interface]:
    rows = parse_table(text, "Name")
    return [
        Ipv4Interface(
            name=required_field(row, "name", "ipv4"),
            address=row.get("ipv4address", ""),
            netmask=row.get("ipv4netmask", ""),
            broadcast=row.get("ipv4broadcast", ""),
            address_type=row.get("addresstype", ""),
            gateway=na_to_none(row.get("gateway")),
            dhcp_dns=parse_bool(row.get("dhcpdns")),
        )
        for row in rows
    ]


@dataclass(frozen=True, slots=True)
class StandardVswitch:
    """A block of ``esxcli network vswitch standard list``.

    ``portgroups`` is split on ``", "``: a port-group name that itself contains ``", "`` cannot
    be told apart in this output (use :func:`parse_portgroup_list` for exact names).
    """

    name: str
    switch_class: str | None
    num_ports: int | None
    used_ports: int | None
    configured_ports: int | None
    mtu: int | None
    cdp_status: str | None
    beacon_enabled: bool | None
    uplinks: tuple[str, ...]
    portgroups: tuple[str, ...]


def parse_vswitch_list(text: str) -> list[StandardVswitch]:
    result = []
    for title, kv in kv_blocks(text):
        result.append(
            StandardVswitch(
                name=kv.get("name", title),
                switch_class=na_to_none(kv.get("class")),
                num_ports=int_or_none(kv.get("numports")),
                used_ports=int_or_none(kv.get("usedports")),
                configured_ports=int_or_none(kv.get("configuredports")),
                mtu=int_or_none(kv.get("mtu")),
                cdp_status=na_to_none(kv.get("cdpstatus")),
                beacon_enabled=parse_bool(kv.get("beaconenabled")),
                uplinks=split_list(kv.get("uplinks")),
                portgroups=split_list(kv.get("portgroups")),
            )
        )
    if not result:
        raise EsxiParseError("no vSwitch blocks found", raw=text)
    return result


@dataclass(frozen=True, slots=True)
class Portgroup:
    """A row of ``esxcli network vswitch standard portgroup list`` (text or ``--formatter=csv``)."""

    name: str
    vswitch: str
    active_clients: int | None
    vlan_id: int | None


def parse_portgroup_list(text: str) -> list[Portgroup]:
    return [
        Portgroup(
            name=required_field(row, "name", "portgroup list"),
            vswitch=required_field(row, "virtualswitch", "portgroup list"),
            active_clients=int_or_none(row.get("activeclients")),
            vlan_id=int_or_none(row.get("vlanid")),
        )
        for row in parse_table(text, "Name")
    ]


ACCEPTANCE_LEVELS = ("VMwareCertified", "VMwareAccepted", "PartnerSupported", "CommunitySupported")


def parse_acceptance_get(text: str) -> str:
    """``esxcli software acceptance get`` prints the level alone, e.g. ``PartnerSupported``."""
    for line in text.splitlines():
        if line.strip() in ACCEPTANCE_LEVELS:
            return line.strip()
    raise EsxiParseError("no acceptance level in the output", raw=text)


def parse_acceptance_set(text: str) -> str:
    """``Host acceptance level changed to 'CommunitySupported'.`` -> ``CommunitySupported``."""
    m = re.search(r"Host acceptance level changed to '(?P<level>\w+)'", text)
    if not m:
        raise EsxiParseError("no 'Host acceptance level changed to' line", raw=text)
    return m.group("level")


def ipv4_payload_for_mtu(mtu: int) -> int:
    """ICMP payload that fills an IPv4 packet of ``mtu`` bytes: mtu - 20 (IP) - 8 (ICMP).

    ``-s 8972`` for MTU 9000 is the figure every vmkping jumbo check uses.
    """
    return mtu - 28
