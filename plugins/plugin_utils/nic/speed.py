# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Line rate read from the hosts: a NIC's link speed, the uplinks of a vSwitch, the line rate of a run.

* ``sysfs_speed()`` reads what a Linux host printed for ``/sys/class/net/<if>/speed`` (Mb/s; ``-1``
  or an unreadable file - a link that is down, a virtual device without a speed - is ``None``
  with the reason). ``iperf_facts`` runs that probe (option ``link_speed_of``).
* ``uplink_speed()`` is the line rate of a vSwitch from its physical NICs - ``esxi_vmknic``'s
  ``physical_nics`` (vSphere API) or ``esxcli_nics()`` of ``esxcli network nic list`` and
  ``network vswitch standard list``. The rule: **the lowest speed among the uplinks whose link is
  up** (a teamed vSwitch sends one flow over one uplink; the slowest active one bounds what a test
  can count on). Uplinks that are down are named in the reason, not counted.

The line rate of a paired run from these speeds is ``paired/line_rate.py`` (``run_line_rate``).

Plain data; no Ansible import, no I/O. Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.tables import kv_blocks, parse_table, split_list
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.units import positive_float

__all__ = ["esxcli_nics", "esxcli_speed", "esxcli_uplinks", "sysfs_speed", "uplink_speed"]


def sysfs_speed(interface: str | None, text: str | None, address: str) -> dict[str, Any]:
    """``{interface, speed_mbps, source, reason}`` from the probe of ``address``'s interface."""
    if not interface:
        return {"interface": None, "speed_mbps": None, "source": None,
                "reason": f"no interface of the host holds {address} (or `ip` is missing)"}  # fmt: skip
    where = f"/sys/class/net/{interface}/speed"
    word = (text or "").strip()
    try:
        speed = int(word)
    except ValueError:
        shown = " ".join(word.split())[:120] or "nothing"
        return {"interface": interface, "speed_mbps": None, "source": where,
                "reason": f"{where} could not be read ({shown}): no link speed (a link that is down or a device "
                          "without one)"}  # fmt: skip
    if speed <= 0:
        return {"interface": interface, "speed_mbps": None, "source": where,
                "reason": f"{where} says {speed}: the driver reports no speed (unknown)"}  # fmt: skip
    return {"interface": interface, "speed_mbps": speed, "source": where, "reason": None}


def esxcli_nics(nic_list: str, vswitch_list: str) -> list[dict[str, Any]]:
    """The physical NICs as ``esxi_vmknic`` returns them, from ``esxcli network nic list`` and
    ``esxcli network vswitch standard list`` (name, driver, link_up, speed_mbps, vswitch)."""
    uplink_of: dict[str, str] = {}
    for title, fields in kv_blocks(vswitch_list):
        for nic in split_list(fields.get("uplinks")):
            uplink_of.setdefault(nic, fields.get("name") or title)
    nics = []
    for row in parse_table(nic_list, "Name"):
        up = (row.get("linkstatus") or "").strip().lower() == "up"
        speed = positive_float(row.get("speed"))
        nics.append(
            {
                "name": row.get("name"),
                "driver": row.get("driver"),
                "link_up": up,
                "speed_mbps": int(speed) if up and speed else None,
                "vswitch": uplink_of.get(str(row.get("name"))),
            }
        )
    return nics


def esxcli_uplinks(address: str, listings: Mapping[str, str]) -> dict[str, Any]:
    """``{interface, vswitch, uplinks, reason}``: the VMkernel adapter holding ``address`` on an ESXi host and the
    uplinks of its standard vSwitch (``name``, ``driver``, ``link_up``, ``speed_mbps`` as ``esxcli_nics`` gives
    them), from ``esxcli network`` listings (``ipv4``: ``ip interface ipv4 list``, ``interfaces``: ``ip interface
    list``, ``vswitches``: ``vswitch standard list``, ``nic``: ``nic list``); ``reason`` says why none was found."""
    vmk = next(
        (row.get("name") for row in parse_table(listings.get("ipv4", ""), "Name") if row.get("ipv4address") == address),
        None,
    )
    if not vmk:
        return {"interface": None, "vswitch": None, "uplinks": [],
                "reason": f"no VMkernel adapter holds {address} (esxcli network ip interface ipv4 list)"}  # fmt: skip
    portset = next(
        (f.get("portset") for title, f in kv_blocks(listings.get("interfaces", "")) if (f.get("name") or title) == vmk),
        None,
    )
    if not portset or portset.upper() == "N/A":
        return {"interface": vmk, "vswitch": None, "uplinks": [],
                "reason": f"{vmk} is on no standard vSwitch (esxcli network ip interface list)"}  # fmt: skip
    nics = esxcli_nics(listings.get("nic", ""), listings.get("vswitches", ""))
    return {"interface": vmk, "vswitch": portset, "uplinks": [n for n in nics if n.get("vswitch") == portset],
            "reason": None}  # fmt: skip


def esxcli_speed(address: str, listings: Mapping[str, str]) -> dict[str, Any]:
    """``{interface, speed_mbps, source, reason}`` of the VMkernel adapter holding ``address`` on an ESXi host, from
    ``esxcli network`` listings (see ``esxcli_uplinks``): the lowest active uplink of its vSwitch."""
    found = esxcli_uplinks(address, listings)
    if found["reason"] is not None:
        return {"interface": found["interface"], "speed_mbps": None, "source": None, "reason": found["reason"]}
    speed = uplink_speed(found["uplinks"], found["vswitch"], "esxcli")
    return {"interface": found["interface"], "speed_mbps": speed["speed_mbps"], "source": speed["source"],
            "reason": speed["reason"]}  # fmt: skip


def uplink_speed(
    nics: Sequence[Mapping[str, Any]], vswitch: str, how: str, names: Sequence[str] | None = None
) -> dict[str, Any]:
    """``{speed_mbps, source, reason, uplinks}``: the lowest speed of ``vswitch``'s uplinks whose link is up.

    The uplinks are the NICs named in ``names`` (the vSwitch's own list, as ``esxi_vmknic`` returns it) or,
    without it, the NICs whose ``vswitch`` is ``vswitch``.
    """
    if names is not None:
        uplinks = [n for n in nics if isinstance(n, Mapping) and n.get("name") in names]
    else:
        uplinks = [n for n in nics if isinstance(n, Mapping) and n.get("vswitch") == vswitch]
    listed = [{"name": n.get("name"), "link_up": bool(n.get("link_up")), "speed_mbps": n.get("speed_mbps")}
              for n in uplinks]  # fmt: skip
    active = [
        (str(n["name"]), int(speed)) for n in listed if n["link_up"] and (speed := positive_float(n["speed_mbps"]))
    ]
    down = [str(n["name"]) for n in listed if not n["link_up"]]
    if not active:
        reason = f"{vswitch} has no uplink" if not listed else f"no uplink of {vswitch} has its link up with a speed"
        return {"speed_mbps": None, "source": None, "reason": f"{reason} ({how})", "uplinks": listed}
    speed = min(s for _n, s in active)
    parts = ", ".join(f"{n} {s} Mb/s" for n, s in active) + (f"; down: {', '.join(down)}" if down else "")
    return {
        "speed_mbps": speed,
        "source": f"{how}: the lowest active uplink of {vswitch} ({parts})",
        "reason": None,
        "uplinks": listed,
    }
