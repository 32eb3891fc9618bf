# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The persistent setting: which configuration the guest uses, the rendered netplan / ifupdown / nmcli, its plan.

The netplan file is also read by the real ``netplan generate --root-dir`` (netplan.io; skipped without it): what
systemd-networkd would be given matches the vNIC by its MAC and carries the address and the MTU.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.guest.persist import (
    PersistState,
    detect,
    nm_values,
    parse_nm_fields,
    parse_probe,
    plan_persist,
    render_ifupdown,
    render_netplan,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.guest.request import GuestNetworkError, check_request
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.framing import Section


def _request(**kwargs: Any) -> Any:
    return check_request({"mac": "00:50:56:aa:bb:cc", "address": "198.18.60.12/24", "mtu": 9000, **kwargs})


NM = PersistState(nm_running=True, nm_devices={"ens224": "disconnected", "lo": "unmanaged"})
NETPLAN = PersistState(netplan_files=["/etc/netplan/50-cloud-init.yaml"], interfaces=True)
IFUPDOWN = PersistState(interfaces=True, interfaces_sources=["source /etc/network/interfaces.d/*"])


@pytest.mark.parametrize(
    ("state", "kind"),
    [
        (NM, "networkmanager"),
        (
            PersistState(nm_running=True, nm_devices={"ens224": "unmanaged"}, netplan_files=["/etc/netplan/a.yaml"]),
            "netplan",
        ),
        (NETPLAN, "netplan"),
        (IFUPDOWN, "ifupdown"),
        (PersistState(interfaces=True, interfaces_sources=["source-directory interfaces.d"]), "ifupdown"),
    ],
    ids=["nm-manages-it", "nm-unmanaged-netplan", "netplan", "ifupdown", "ifupdown-source-directory"],
)
def test_auto_picks_what_the_guest_uses(state: PersistState, kind: str) -> None:
    assert detect("auto", state, "ens224") == kind


@pytest.mark.parametrize(
    ("kind", "state", "message"),
    [
        ("auto", PersistState(), "guest_network_persist: the guest uses none of the configurations"),
        ("networkmanager", NETPLAN, "guest_network_persist_with: NetworkManager does not run"),
        ("networkmanager", PersistState(nm_running=True), "NetworkManager does not manage ens224"),
        (
            "ifupdown",
            PersistState(interfaces=True, interfaces_sources=["source /etc/network/other"]),
            "does not source",
        ),
        ("ifupdown", PersistState(), "does not exist, so nothing reads"),
    ],
)
def test_a_configuration_the_role_cannot_write_is_refused(kind: str, state: PersistState, message: str) -> None:
    with pytest.raises(GuestNetworkError) as error:
        detect(kind, state, "ens224")
    assert message in error.value.message and "Fix:" in error.value.message


def test_rendered_netplan_and_ifupdown() -> None:
    assert render_netplan("ens224", _request()) == (
        "# esxilab.iperf guest_network: the test address of the vNIC 00:50:56:aa:bb:cc"
        " (removed by playbooks/restore.yml)\n"
        "network:\n  version: 2\n  ethernets:\n    esxilab-iperf-ens224:\n      match:\n"
        '        macaddress: "00:50:56:aa:bb:cc"\n      addresses:\n        - "198.18.60.12/24"\n      mtu: 9000\n'
    )
    assert render_ifupdown("ens224", _request(mtu=None)).splitlines()[1:] == [
        "allow-hotplug ens224",
        "iface ens224 inet static",
        "    address 198.18.60.12/24",
    ]
    assert "iface ens224 inet6 static" in render_ifupdown("ens224", _request(address="2001:db8:60::12/64"))


@pytest.mark.skipif(shutil.which("netplan") is None, reason="netplan.io is not installed")
def test_netplan_itself_reads_the_rendered_file(tmp_path: Path) -> None:
    etc = tmp_path / "etc" / "netplan"
    etc.mkdir(parents=True)
    target = etc / "60-esxilab-iperf-ens224.yaml"
    target.write_text(render_netplan("ens224", _request()))
    target.chmod(0o600)
    proc = subprocess.run(
        ["netplan", "generate", "--root-dir", str(tmp_path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    network = (tmp_path / "run/systemd/network/10-netplan-esxilab-iperf-ens224.network").read_text()
    assert "PermanentMACAddress=00:50:56:aa:bb:cc" in network and "Address=198.18.60.12/24" in network
    assert "MTUBytes=9000" in network
    # and a file netplan cannot read is what the test would see: the check can fail
    target.write_text(render_netplan("ens224", _request()).replace("addresses:", "addresses"))
    bad = subprocess.run(
        ["netplan", "generate", "--root-dir", str(tmp_path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert bad.returncode != 0


def test_file_plans_write_once_then_nothing() -> None:
    plan = plan_persist("netplan", "ens224", _request(), NETPLAN)
    assert plan.target == "/etc/netplan/60-esxilab-iperf-ens224.yaml"
    assert plan.changes == ["/etc/netplan/60-esxilab-iperf-ens224.yaml written"]
    assert plan.journal == "file:/etc/netplan/60-esxilab-iperf-ens224.yaml"
    (command,) = plan.commands
    assert "umask 077" in command and "mktemp /etc/netplan/.esxilab-iperf.XXXXXX" in command
    assert command.endswith('mv -f "$_t" /etc/netplan/60-esxilab-iperf-ens224.yaml )')
    done = PersistState(files={plan.target: render_netplan("ens224", _request())})
    assert plan_persist("netplan", "ens224", _request(), done).commands == []
    # another MTU: rewritten; no new journal entry (the first one already removes the file)
    changed = plan_persist("netplan", "ens224", _request(mtu=1500), done)
    assert changed.changes == [f"{plan.target} rewritten"] and changed.journal is None
    ifupdown = plan_persist("ifupdown", "ens224", _request(), IFUPDOWN)
    assert ifupdown.journal == "file:/etc/network/interfaces.d/esxilab-iperf-ens224"


def test_networkmanager_connection_created_activated_then_unchanged() -> None:
    plan = plan_persist("networkmanager", "ens224", _request(), NM)
    assert plan.commands == [
        "nmcli connection add type ethernet con-name esxilab-iperf-ens224 ifname ens224 connection.autoconnect yes"
        " 802-3-ethernet.mac-address 00:50:56:AA:BB:CC ipv4.method manual ipv4.addresses 198.18.60.12/24 ipv6.method"
        " ignore ipv6.addresses '' 802-3-ethernet.mtu 9000",
        "nmcli connection up id esxilab-iperf-ens224",
    ]
    assert plan.journal == "nm:esxilab-iperf-ens224"
    # what nmcli -g prints for it (colons escaped), read back: nothing to do
    shown = "ens224\n00\\:50\\:56\\:AA\\:BB\\:CC\n9000\nmanual\n198.18.60.12/24\nignore\n\n"
    now = PersistState(nm_running=True, connections={"esxilab-iperf-ens224": parse_nm_fields(shown)})
    assert plan_persist("networkmanager", "ens224", _request(), now).commands == []
    modified = plan_persist("networkmanager", "ens224", _request(mtu=1500), now)
    assert modified.commands[0].startswith("nmcli connection modify id esxilab-iperf-ens224 ")
    assert modified.changes == ["NetworkManager connection esxilab-iperf-ens224: 802-3-ethernet.mtu '9000' -> '1500'"]
    assert nm_values("ens224", _request(address="2001:db8:60::12/64"))["ipv4.method"] == "disabled"


def test_the_probe_sections_give_the_state() -> None:
    sections = [
        Section("nm-devices", "", "ens192:connected\nens224:disconnected\nlo:unmanaged"),
        Section("nm-connection", "esxilab-iperf-ens224", "ens224\n00\\:50\\:56\\:AA\\:BB\\:CC\n9000"),
        Section("netplan", "", "/etc/netplan/50-cloud-init.yaml\n/etc/netplan/60-esxilab-iperf-ens224.yaml\n"),
        Section("interfaces", "", "source /etc/network/interfaces.d/*\n"),
        Section("file", "/etc/netplan/60-esxilab-iperf-ens224.yaml", "network:\n"),
    ]
    state = parse_probe(sections)
    assert state.nm_running and state.nm_devices["ens224"] == "disconnected"
    assert state.connections["esxilab-iperf-ens224"]["802-3-ethernet.mac-address"] == "00:50:56:AA:BB:CC"
    assert state.netplan_files == ["/etc/netplan/50-cloud-init.yaml"]  # the role's own file is not the guest's
    assert state.interfaces and state.files == {"/etc/netplan/60-esxilab-iperf-ens224.yaml": "network:\n"}
    empty = parse_probe([])
    assert not (empty.nm_running or empty.netplan_files or empty.interfaces or empty.files or empty.connections)
