# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""guest_network's options: each bad input names the role variable and the fix; good ones are normalised."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.guest.request import (
    GuestNetworkError,
    check_request,
)

VNIC = {"mac_address": "00:50:56:AA:BB:CC", "type": "vmxnet3", "portgroup": "iperf-isolated", "label": "x"}


def _args(**kwargs: Any) -> dict[str, Any]:
    return {"vnics": [VNIC], "address": "198.18.60.12/24", **kwargs}


def test_the_vnic_as_esxi_guests_reports_it_gives_the_mac() -> None:
    request = check_request(_args(mtu=9000, persist=True, persist_with="netplan"))
    assert request.mac == "00:50:56:aa:bb:cc"
    assert request.address == ipaddress.ip_interface("198.18.60.12/24")
    assert (request.mtu, request.persist, request.allow_management) == (9000, "netplan", False)
    assert check_request(_args(mac="00-50-56-01-02-03")).mac == "00:50:56:01:02:03"  # mac wins over vnics
    assert check_request(_args(vnics=[{**VNIC, "mac_address": None}])).mac is None  # esxi_guests' check mode
    assert check_request(_args(address="2001:db8:60::12/64", mtu=1280)).address.version == 6
    assert check_request(_args()).persist is None


@pytest.mark.parametrize(
    ("args", "option", "fix"),
    [
        ({"mac": "00:50:56:aa:bb"}, "guest_network_mac: '00:50:56:aa:bb' is not a MAC address", "six two-digit hex"),
        ({"mac": "00:50:56:aa:bb:zz"}, "guest_network_mac: '00:50:56:aa:bb:zz' is not a MAC", "Fix: give six"),
        ({"mac": "01:00:5e:00:00:01"}, "guest_network_mac: 01:00:5e:00:00:01 is not the address of one NIC", "own MAC"),
        ({"mac": "00:00:00:00:00:00"}, "guest_network_mac: 00:00:00:00:00:00 is not the address", "own MAC"),
        ({"vnics": [{**VNIC, "mac_address": "zz"}]}, "guest_network_vnics[0].mac_address: 'zz' is not a MAC", "Fix:"),
        ({"vnics": []}, "guest_network_vnics: no vNIC of this guest is known", "run esxilab.iperf.esxi_guests first"),
        (
            {"vnics": [VNIC, {**VNIC, "mac_address": "00:50:56:00:00:09"}]},
            "the guest has 2 vNICs",
            "give guest_network_mac",
        ),
        (
            {"vnics": ["00:50:56:aa:bb:cc"]},
            "guest_network_vnics[0]: '00:50:56:aa:bb:cc' is not a vNIC",
            "esxi_guests_vnics",
        ),
        ({"address": "198.18.60.12"}, "guest_network_address: '198.18.60.12' has no prefix length", "198.18.60.12/24"),
        ({"address": None}, "guest_network_address: None has no prefix length", "Fix:"),
        ({"address": "198.18.60.300/24"}, "guest_network_address: '198.18.60.300/24' is not an address/prefix", "Fix:"),
        ({"address": "198.18.60.12/33"}, "is not an address/prefix", "with its prefix length"),
        (
            {"address": "198.18.60.0/24"},
            "198.18.60.0/24 is the network address of 198.18.60.0/24",
            "198.18.60.1 and 198.18.60.254",
        ),
        ({"address": "198.18.60.255/24"}, "is the broadcast address of 198.18.60.0/24", "a host address"),
        ({"address": "127.0.0.2/8"}, "127.0.0.2/8 is a loopback address", "Fix:"),
        ({"address": "169.254.3.4/16"}, "is a link-local address", "Fix:"),
        ({"address": "224.0.0.5/24"}, "is a multicast address", "Fix:"),
        ({"address": "0.0.0.0/0"}, "is the unspecified address", "Fix:"),
        ({"mtu": 40}, "guest_network_mtu: 40 is not an MTU for IPv4", "68-65535"),
        ({"mtu": 70000}, "guest_network_mtu: 70000 is not an MTU", "leave it unset"),
        ({"address": "2001:db8::5/64", "mtu": 1200}, "guest_network_mtu: 1200 is not an MTU for IPv6", "1280-65535"),
        ({"persist": True, "persist_with": "systemd"}, "guest_network_persist_with: 'systemd'", "auto or one of"),
    ],
)
def test_bad_input_names_the_option_and_the_fix(args: dict[str, Any], option: str, fix: str) -> None:
    with pytest.raises(GuestNetworkError) as error:
        check_request(_args(**args))
    assert option in error.value.message and fix in error.value.message
