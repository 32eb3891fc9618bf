# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""NIC context of a test address: the counters and driver/firmware of the interface(s) behind it.

``iperf_facts`` (option ``nic_counters_of``) runs one script per host and hands the outputs here:

* **Linux** - the interface holding the address (the same ``ip -o addr show to`` lookup as the link
  speed, ``speed.sysfs_speed``), ``ip -s -s -j link show dev X`` (the text form when ``ip`` has
  no ``-j``) and ``ethtool -i X`` where ``ethtool`` is installed (``host/linux_nic.py``); when X is a
  Linux bridge (``/sys/class/net/X/bridge``) or an Open vSwitch bridge's internal port (``ovs-vsctl
  port-to-br X``), also each port of that bridge (``brif`` / ``ovs-vsctl list-ports``): its counters,
  driver and link speed, as further NICs of the reading with ``bridge`` set, and the reading's
  ``bridge: {kind: linux|ovs, name, ports}`` (seed 003: a host with a bridge on the path as a pair end);
* **ESXi** - the VMkernel adapter holding the address, its vSwitch and that vSwitch's uplinks whose
  link is up (``speed.esxcli_uplinks``, the path of the link speed), each read with
  ``esxcli network nic stats get`` and ``esxcli network nic get`` (``esxi/nic.py``) and the driver's private
  statistics ``localcli --plugin-dir /usr/lib/vmware/esxcli/int networkinternal nic privstats get``
  (``esxi/privstats.py``: the recorded Intel layout only; ``driver_stats`` is ``None`` - not available - where the
  command is missing, fails or prints another layout, with the reason in ``problems``).

``reading()`` returns one plain dictionary per address (``iperf_nic_counters`` in the facts)::

    {address, interface, kind: linux|esxi|null, source, reason, speed_mbps, bridge (Linux, when it is one),
     nics: [{name, driver, firmware, version, bus_info, speed_mbps, link_up, counters, driver_stats, qdisc, other,
             problems, raw, bridge (a bridge port: the bridge's name)}]}

A counter is an ``int`` the tool printed, or absent; a NIC that could not be read has no
``counters`` and says why in ``problems``. ``driver_stats`` holds the driver's own statistics under the driver's
key names (Linux ``ethtool -S``, where installed and the driver has any; ``{}`` otherwise), ``qdisc`` the root and
ingress queueing disciplines' drops (Linux ``tc -s qdisc``, ``host/linux_nic_stats.py``). The report
(``report/nic.py``) makes the deltas, ``report/losses.py`` says which of them are drops, errors, pause frames or
ring exhaustion.

Plain data; no Ansible import, no I/O. Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import EsxiParseError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.nic import parse_nic_get, parse_nic_stats
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.privstats import PRIVSTATS_COMMAND, parse_privstats
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.linux_nic import (
    NicParseError,
    parse_ethtool_info,
    parse_ip_link_json,
    parse_ip_link_text,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.linux_nic_stats import (
    parse_ethtool_stats,
    parse_tc_qdisc,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.nic.speed import esxcli_uplinks, sysfs_speed

__all__ = ["NIC_SCRIPT", "Output", "esxi_reading", "linux_reading"]

#: ``(text, exit status)`` of one command the script ran (127: the shell did not find it).
Output = tuple[str, int | None]

# Shell functions of the iperf_facts script (its ``_ifset``, ``_ex`` and ``$M`` are used). ``lnic ADDRESS``:
# the interface's counters and driver on Linux, and when the interface is a Linux bridge or an Open vSwitch
# bridge's port (``lbridge``: ``/sys/class/net/X/bridge``, ``ovs-vsctl port-to-br``) the counters, driver and
# speed of each of the bridge's ports; ``nic_esxi``: nic get / nic stats get / privstats get of every uplink of a
# standard vSwitch (the controller keeps those of the test address's vSwitch).
NIC_SCRIPT = r"""_nx() {
  _k=$1; shift
  printf '\n%%s NICOUT %%s\n' "$M" "$_k"
  ("$@") 2>&1
  _r=$?
  printf '\n%%s NICOUTEND %%s\n' "$M" "$_r"
  return $_r
}
lnic() {
  _ifset "$1"
  printf '\n%%s NIC %%s %%s\n' "$M" "$1" "$_i"
  if [ -n "$_i" ]; then
    _nx "$1 ipjson" ip -s -s -j link show dev "$_i" || _nx "$1 iptext" ip -s -s link show dev "$_i"
    _nx "$1 ethtool" ethtool -i "$_i" || :
    _nx "$1 ethtoolS" ethtool -S "$_i" || :
    _nx "$1 tc" tc -s qdisc show dev "$_i" || :
    lbridge "$1" "$_i"
  fi
  return 0
}
lbridge() {
  _bp=
  if [ -d "/sys/class/net/$2/bridge" ]; then
    _bp=$(ls "/sys/class/net/$2/brif" 2>/dev/null)
    _nx "$1 bridge" printf 'linux %%s\n' "$2"
  elif command -v ovs-vsctl >/dev/null 2>&1 && _bb=$(ovs-vsctl --timeout=5 port-to-br "$2" 2>/dev/null); then
    _bp=$(ovs-vsctl --timeout=5 list-ports "$_bb" 2>/dev/null)
    _nx "$1 bridge" printf 'ovs %%s\n' "$_bb"
  fi
  for _p in $_bp; do
    case $_p in *[!A-Za-z0-9_.:@-]*) continue ;; esac
    _nx "$1 port:$_p" ip -s -s -j link show dev "$_p" || :
    _nx "$1 portinfo:$_p" ethtool -i "$_p" || :
    _nx "$1 portspeed:$_p" cat "/sys/class/net/$_p/speed" || :
  done
  return 0
}
nic_esxi() {
  [ -n "$_vsl" ] || return 0
  for _u in $(printf '%%s\n' "$_vsl" | sed -n 's/^ *Uplinks: *//p' | tr ',' ' '); do
    _ex "nicget $_u" esxcli network nic get -n "$_u"
    _ex "nicstats $_u" esxcli network nic stats get -n "$_u"
    _ex "privstats $_u" localcli --plugin-dir /usr/lib/vmware/esxcli/int networkinternal nic privstats get -n "$_u"
  done
  return 0
}
"""


def _nic_item(name: str | None) -> dict[str, Any]:
    return {
        "name": name,
        "driver": None,
        "firmware": None,
        "version": None,
        "bus_info": None,
        "speed_mbps": None,
        "link_up": None,
        "counters": {},
        "driver_stats": {},
        "qdisc": {},
        "other": {},
        "problems": [],
        "raw": {},
    }


def _shown(text: str) -> str:
    return " ".join(text.split())[:200] or "no output"


def linux_reading(
    address: str, interface: str, speed_text: str | None, outputs: Mapping[str, Output]
) -> dict[str, Any]:
    """The reading of ``address`` on a Linux host: ``interface`` holds it (``""``: none does), ``speed_text``
    what ``/sys/class/net/<interface>/speed`` held, ``outputs`` the commands run (``ipjson``, ``iptext``,
    ``ethtool``) as ``(text, exit status)``."""
    out: dict[str, Any] = {"address": address, "interface": interface or None, "kind": "linux", "source": None,
                           "reason": None, "speed_mbps": None, "nics": []}  # fmt: skip
    if not interface:
        out["reason"] = f"no interface of the host holds {address} (or `ip` is missing)"
        return out
    speed = sysfs_speed(interface, speed_text, address)
    nic = _nic_item(interface)
    nic["speed_mbps"] = out["speed_mbps"] = speed["speed_mbps"]
    sources = []
    for kind, parse, command in (("ipjson", parse_ip_link_json, "ip -s -s -j link show dev"),
                                 ("iptext", parse_ip_link_text, "ip -s -s link show dev")):  # fmt: skip
        if kind not in outputs or nic["counters"]:
            continue
        text, rc = outputs[kind]
        nic["raw"]["stats"] = text
        if rc != 0:
            nic["problems"].append(f"{command} {interface} failed (exit status {rc}): {_shown(text)}")
            continue
        try:
            parsed = parse(text)
        except NicParseError as exc:
            nic["problems"].append(f"{command} {interface}: {exc}")
            continue
        nic["counters"], nic["other"] = parsed["counters"], parsed["other"]
        nic["link_up"] = parsed["operstate"] == "UP" if parsed["operstate"] not in (None, "UNKNOWN") else None
        sources.append(f"{command} {interface}")
    if "ethtool" in outputs and outputs["ethtool"][1] != 127:  # 127: the shell found no ethtool
        text, rc = outputs["ethtool"]
        nic["raw"]["info"] = text
        try:
            info = parse_ethtool_info(text) if rc == 0 else None
        except NicParseError as exc:
            nic["problems"].append(f"ethtool -i {interface}: {exc}")
            info = None
        if rc != 0:
            nic["problems"].append(f"ethtool -i {interface} failed (exit status {rc}): {_shown(text)}")
        if info is not None:
            nic.update({k: info[k] for k in ("driver", "version", "firmware", "bus_info")})
            sources.append(f"ethtool -i {interface}")
    else:
        nic["problems"].append("no ethtool on the host: driver and firmware not read")
    _linux_stats(nic, interface, outputs, sources)
    out["nics"] = [nic]
    bridge = _bridge(outputs, interface)
    if bridge is not None:
        out["bridge"] = bridge
        ports = [_port(name, str(bridge["name"]), outputs) for name in bridge["ports"]]
        out["nics"].extend(ports)
        sources.append(f"{bridge['kind']} bridge {bridge['name']}: ports {', '.join(bridge['ports']) or 'none'}")
        speeds = [p["speed_mbps"] for p in ports if isinstance(p["speed_mbps"], int)]
        if out["speed_mbps"] is None and speeds:  # a bridge has no speed of its own: its slowest port's
            out["speed_mbps"] = min(speeds)
    out["source"] = "; ".join(sources) or None
    if not nic["counters"]:
        out["reason"] = f"no counters of {interface}: " + ("; ".join(nic["problems"]) or "ip printed none")
    return out


def _linux_stats(nic: dict[str, Any], interface: str, outputs: Mapping[str, Output], sources: list[str]) -> None:
    """``driver_stats`` from ``ethtool -S`` and ``qdisc`` from ``tc -s qdisc`` of ``interface`` into ``nic``; a
    missing tool (exit status 127) or a driver without statistics is no problem: nothing is read."""
    for kind, key, parse, command in (("ethtoolS", "driver_stats", parse_ethtool_stats, "ethtool -S"),
                                      ("tc", "qdisc", parse_tc_qdisc, "tc -s qdisc show dev")):  # fmt: skip
        if kind not in outputs or outputs[kind][1] == 127:
            continue
        text, rc = outputs[kind]
        try:
            nic[key] = parse(text)
        except NicParseError as exc:
            if rc == 0:  # ethtool -S of a driver without statistics exits non-zero: nothing to read, no problem
                nic["problems"].append(f"{command} {interface}: {exc}")
            continue
        sources.append(f"{command} {interface}")


def _bridge(outputs: Mapping[str, Output], interface: str) -> dict[str, Any] | None:
    """``{kind, name, ports}`` when the script found ``interface`` to be a bridge (``bridge``: ``linux NAME`` or
    ``ovs NAME``), its ports those it read (``port:NAME`` outputs), in the order printed."""
    text, rc = outputs.get("bridge", ("", None))
    kind, _sep, name = text.strip().partition(" ")
    if rc != 0 or kind not in ("linux", "ovs") or not name.strip():
        return None
    ports = [key.partition(":")[2] for key in outputs if key.startswith("port:")]
    return {"kind": kind, "name": name.strip() or interface, "ports": ports}


def _port(name: str, bridge: str, outputs: Mapping[str, Output]) -> dict[str, Any]:
    """One port of the bridge: its counters (``ip -s -s -j link``), driver (``ethtool -i``) and link speed."""
    nic = _nic_item(name)
    nic["bridge"] = bridge
    text, rc = outputs[f"port:{name}"]
    nic["raw"]["stats"] = text
    try:
        if rc != 0:
            raise NicParseError(f"failed (exit status {rc}): {_shown(text)}")
        parsed = parse_ip_link_json(text)
        nic["counters"], nic["other"] = parsed["counters"], parsed["other"]
        nic["link_up"] = parsed["operstate"] == "UP" if parsed["operstate"] not in (None, "UNKNOWN") else None
    except NicParseError as exc:
        nic["problems"].append(f"ip -s -s -j link show dev {name}: {exc}")
    info_text, info_rc = outputs.get(f"portinfo:{name}", ("", 127))
    if info_rc == 0:
        try:
            info = parse_ethtool_info(info_text)
            nic.update({k: info[k] for k in ("driver", "version", "firmware", "bus_info")})
        except NicParseError as exc:
            nic["problems"].append(f"ethtool -i {name}: {exc}")
    elif info_rc != 127:
        nic["problems"].append(f"ethtool -i {name} failed (exit status {info_rc}): {_shown(info_text)}")
    speed_text, speed_rc = outputs.get(f"portspeed:{name}", ("", None))
    if speed_rc == 0:
        nic["speed_mbps"] = sysfs_speed(name, speed_text, name)["speed_mbps"]
    return nic


def esxi_reading(address: str, listings: Mapping[str, str], outputs: Mapping[str, Output]) -> dict[str, Any]:
    """The reading of ``address`` on an ESXi host: ``listings`` the ``esxcli network`` listings of the link speed
    (``nic``, ``ipv4``, ``interfaces``, ``vswitches``), ``outputs`` ``nicget <vmnic>`` / ``nicstats <vmnic>`` /
    ``privstats <vmnic>``."""
    found = esxcli_uplinks(address, listings)
    out: dict[str, Any] = {"address": address, "interface": found["interface"], "kind": "esxi",
                           "source": None, "reason": found["reason"], "speed_mbps": None, "nics": []}  # fmt: skip
    if found["reason"] is not None:
        return out
    active = [n for n in found["uplinks"] if n.get("link_up")]
    if not active:
        out["reason"] = f"no uplink of {found['vswitch']} has its link up (esxcli network nic list)"
        return out
    privstats_read: list[str] = []
    for uplink in active:
        name = str(uplink["name"])
        nic = _nic_item(name)
        nic["speed_mbps"], nic["link_up"] = uplink.get("speed_mbps"), True
        for kind, command in (("nicstats", "esxcli network nic stats get -n"), ("nicget", "esxcli network nic get -n")):
            if f"{kind} {name}" not in outputs:
                nic["problems"].append(f"{command} {name} was not run")
                continue
            text, rc = outputs[f"{kind} {name}"]
            nic["raw"]["stats" if kind == "nicstats" else "info"] = text
            if rc != 0:
                nic["problems"].append(f"{command} {name} failed (exit status {rc}): {_shown(text)}")
                continue
            try:
                if kind == "nicstats":
                    stats = parse_nic_stats(text)
                    nic["counters"], nic["other"] = stats["counters"], stats["other"]
                else:
                    info = parse_nic_get(text)
                    nic.update({k: info[k] for k in ("driver", "firmware", "version", "bus_info")})
            except EsxiParseError as exc:
                nic["problems"].append(f"{command} {name}: {exc.message}")
        if _esxi_privstats(nic, name, outputs):
            privstats_read.append(name)
        out["nics"].append(nic)
    speeds = [n["speed_mbps"] for n in out["nics"] if isinstance(n["speed_mbps"], int)]
    out["speed_mbps"] = min(speeds) if speeds else None
    names = ", ".join(n["name"] for n in out["nics"])
    out["source"] = f"esxcli network nic stats get / nic get of the active uplinks of {found['vswitch']} ({names})"
    if privstats_read:
        out["source"] += f"; networkinternal nic privstats get of {', '.join(privstats_read)}"
    if not any(n["counters"] for n in out["nics"]):
        out["reason"] = "no counters of " + names + ": " + "; ".join(p for n in out["nics"] for p in n["problems"])
    return out


def _esxi_privstats(nic: dict[str, Any], name: str, outputs: Mapping[str, Output]) -> bool:
    """``driver_stats`` of ``nic`` from its ``privstats <name>`` output; whether they were read. Not run, a missing
    ``localcli``, a failure (the internal namespace is not on every release) or a layout that is not the recorded
    one: ``driver_stats`` is ``None`` (not available) and ``problems`` says why."""
    nic["driver_stats"] = None
    if f"privstats {name}" not in outputs:
        nic["problems"].append(f"{PRIVSTATS_COMMAND} {name} was not run: driver private statistics not available")
        return False
    text, rc = outputs[f"privstats {name}"]
    nic["raw"]["privstats"] = text
    if rc != 0:
        nic["problems"].append(
            f"{PRIVSTATS_COMMAND} {name} failed (exit status {rc}): {_shown(text)}; driver private statistics not "
            "available"
        )
        return False
    try:
        nic["driver_stats"] = parse_privstats(text)
    except EsxiParseError as exc:
        nic["problems"].append(
            f"{PRIVSTATS_COMMAND} {name} ({nic['driver'] or 'driver unknown'}): {exc.message}; its layout is not a "
            "recorded one, so the driver private statistics are not read"
        )
        return False
    return True
