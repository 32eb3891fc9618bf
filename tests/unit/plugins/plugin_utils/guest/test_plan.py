# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which interface is the vNIC and what it needs: ``ip`` output read (JSON and text), the plan, the refusals."""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.guest.links import (
    Link,
    LinkParseError,
    default_route_devices,
    parse_ip_json,
    parse_ip_text,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.guest.plan import (
    find_link,
    journal_merge,
    management,
    plan_runtime,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.guest.request import GuestNetworkError, check_request

# iproute2 6.1.0 (Debian 12), a veth pair in one namespace (eth2's "link" is its peer), one end up with an address
IP_JSON = (
    '[{"ifindex":1,"ifname":"lo","flags":["LOOPBACK"],"mtu":65536,"qdisc":"noop","operstate":"DOWN","group":"default",'
    '"txqlen":1000,"link_type":"loopback","address":"00:00:00:00:00:00","broadcast":"00:00:00:00:00:00","addr_info":[]},'
    '{"ifindex":2,"link":"eth1","ifname":"eth2","flags":["BROADCAST","MULTICAST","UP","LOWER_UP"],"mtu":1500,'
    '"qdisc":"noqueue","operstate":"UP","group":"default","txqlen":1000,"link_type":"ether","address":"3e:f6:5e:82:88:13",'
    '"broadcast":"ff:ff:ff:ff:ff:ff","addr_info":[{"family":"inet","local":"198.18.160.5","prefixlen":24,'
    '"broadcast":"198.18.160.255","scope":"global","label":"eth2","valid_life_time":4294967295,'
    '"preferred_life_time":4294967295}]},{"ifindex":3,"link":"eth2","ifname":"eth1","flags":["BROADCAST","MULTICAST",'
    '"M-DOWN"],"mtu":1500,"qdisc":"noop","operstate":"DOWN","group":"default","txqlen":1000,"link_type":"ether",'
    '"address":"d2:38:a7:e4:a2:87","broadcast":"ff:ff:ff:ff:ff:ff","addr_info":[]}]'
)
IP_LINK = (
    "1: lo: <LOOPBACK> mtu 65536 qdisc noop state DOWN mode DEFAULT group default qlen 1000\\    link/loopback"
    " 00:00:00:00:00:00 brd 00:00:00:00:00:00\n"
    "2: eth2@eth1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP mode DEFAULT group default qlen"
    " 1000\\    link/ether 3e:f6:5e:82:88:13 brd ff:ff:ff:ff:ff:ff\n"
    "3: eth1@eth2: <BROADCAST,MULTICAST,M-DOWN> mtu 1500 qdisc noop state DOWN mode DEFAULT group default qlen 1000\\"
    "    link/ether d2:38:a7:e4:a2:87 brd ff:ff:ff:ff:ff:ff\n"
    "4: ens224: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc mq master br0 state UP mode DEFAULT group default"
    " qlen 1000\\    link/ether 00:50:56:aa:bb:cc brd ff:ff:ff:ff:ff:ff\n"
)
IP_ADDR = (
    "2: eth2    inet 198.18.160.5/24 brd 198.18.160.255 scope global eth2\\       valid_lft forever preferred_lft"
    " forever\n"
    "2: eth2    inet6 fe80::3cf6:5eff:fe82:8813/64 scope link \\       valid_lft forever preferred_lft forever\n"
)


def test_ip_json_and_text_read_alike() -> None:
    by_json = {link.name: link for link in parse_ip_json(IP_JSON)}
    by_text = {link.name: link for link in parse_ip_text(IP_LINK, IP_ADDR)}
    assert by_json["eth2"] == Link("eth2", "3e:f6:5e:82:88:13", 1500, True, ("198.18.160.5/24",), parent="eth1")
    assert by_json["eth1"] == Link("eth1", "d2:38:a7:e4:a2:87", 1500, False, (), parent="eth2")
    assert by_json["lo"].mac is None  # not an Ethernet interface
    assert by_text["eth2"].addresses == ("198.18.160.5/24", "fe80::3cf6:5eff:fe82:8813/64")
    assert (by_text["eth1"].up, by_text["eth1"].mtu, by_text["eth1"].parent) == (False, 1500, "eth2")
    assert by_text["ens224"] == Link("ens224", "00:50:56:aa:bb:cc", 9000, True, (), master="br0")
    assert parse_ip_text("", "") == []
    with pytest.raises(LinkParseError, match="not the JSON of ip -j addr show"):
        parse_ip_json("Option -j is unknown")
    with pytest.raises(LinkParseError, match="not the output of ip -o link show"):
        parse_ip_text("Usage: ip link", "")


def test_default_routes() -> None:
    text = "default via 10.0.0.1 dev ens192 proto dhcp metric 100\ndefault dev wg0 scope link\n"
    assert default_route_devices(text + "default via fe80::1 dev ens192 proto ra\n") == ["ens192", "wg0"]
    assert default_route_devices("") == []


def _links(**kwargs: Any) -> list[Link]:
    base = {
        "ens192": Link("ens192", "00:50:56:00:00:01", 1500, True, ("10.0.0.5/24",)),
        "ens224": Link("ens224", "00:50:56:aa:bb:cc", 1500, False, ()),
    }
    base.update(kwargs)
    return list(base.values())


def _request(**kwargs: Any) -> Any:
    return check_request({"mac": "00:50:56:aa:bb:cc", "address": "198.18.60.12/24", **kwargs})


def test_the_plan_journals_what_puts_each_change_back() -> None:
    plan = plan_runtime(_request(mtu=9000), _links(), ["ens192"], "10.0.0.5")
    assert plan.link.name == "ens224"
    assert plan.changes == ["mtu 1500 -> 9000", "address 198.18.60.12/24 added", "down -> up"]
    assert plan.commands == [
        "ip link set dev ens224 mtu 9000",
        "ip addr add 198.18.60.12/24 dev ens224",
        "ip link set dev ens224 up",
    ]
    assert plan.journal == {"mtu": {"ens224": 1500}, "config": {"ens224": {"addr": "198.18.60.12/24", "down": "true"}}}
    assert plan.before == {"interface": "ens224", "mac": "00:50:56:aa:bb:cc", "mtu": 1500, "up": False, "addresses": []}
    assert plan.after == {**plan.before, "mtu": 9000, "up": True, "addresses": ["198.18.60.12/24"]}
    assert journal_merge(plan.journal, {"config": {"ens224": {"persist": "x"}}})["config"]["ens224"] == {
        "addr": "198.18.60.12/24",
        "down": "true",
        "persist": "x",
    }


def test_what_is_already_so_is_not_touched() -> None:
    done = Link("ens224", "00:50:56:aa:bb:cc", 9000, True, ("198.18.60.12/24", "192.0.2.7/24"))
    plan = plan_runtime(_request(mtu=9000), _links(ens224=done), ["ens192"], None)
    assert (plan.changes, plan.commands, plan.journal) == ([], [], {})
    # no MTU asked: the interface keeps its own; another address of it stays
    plan = plan_runtime(
        _request(), _links(ens224=Link("ens224", "00:50:56:aa:bb:cc", 1400, True, ("192.0.2.7/24",))), [], None
    )
    assert plan.changes == ["address 198.18.60.12/24 added"] and plan.journal == {
        "config": {"ens224": {"addr": "198.18.60.12/24"}}
    }


@pytest.mark.parametrize(
    ("routes", "ssh", "why"),
    [
        (["ens224"], None, "it carries the guest's default route"),
        ([], "198.18.60.99", "it holds 198.18.60.99, the address the controller's SSH session reached"),
    ],
)
def test_the_management_interface_is_refused_unless_allowed(routes: list[str], ssh: str | None, why: str) -> None:
    mgmt = Link("ens224", "00:50:56:aa:bb:cc", 1500, True, ("198.18.60.99/24",))
    with pytest.raises(GuestNetworkError) as error:
        plan_runtime(_request(address="198.18.60.12/24"), _links(ens224=mgmt), routes, ssh)
    assert f"interface ens224 (MAC 00:50:56:aa:bb:cc) is the guest's management interface: {why}" in error.value.message
    assert (
        "Nothing was changed" in error.value.message and "guest_network_allow_management: true" in error.value.message
    )
    allowed = plan_runtime(_request(address="198.18.60.99/24", allow_management=True), _links(ens224=mgmt), routes, ssh)
    assert allowed.changes == []


def test_a_port_of_a_bridge_with_the_default_route_is_management() -> None:
    links = [
        Link("br0", "00:50:56:00:00:07", 1500, True, ("10.0.0.5/24",)),
        Link("eth0", "00:50:56:00:00:08", 1500, True, (), master="br0"),
    ]
    assert management(links, ["br0"], "10.0.0.5") == {
        "br0": "it carries the guest's default route and it holds 10.0.0.5, the address the controller's SSH"
        " session reached",
        "eth0": "it is a port of br0, which carries the guest's default route and it holds 10.0.0.5, the address the"
        " controller's SSH session reached",
    }


@pytest.mark.parametrize(
    ("links", "message"),
    [
        (
            _links(ens224=Link("ens224", "00:50:56:aa:bb:00", 1500, False, ())),
            "no interface of the guest has MAC 00:50:56:aa:bb:cc (its interfaces: ens192 00:50:56:00:00:01,"
            " ens224 00:50:56:aa:bb:00)",
        ),
        (
            _links(ens256=Link("ens256", "00:50:56:aa:bb:cc", 1500, False, ())),
            "interfaces ens224, ens256 all have MAC 00:50:56:aa:bb:cc",
        ),
        (
            _links(ens192=Link("ens192", "00:50:56:00:00:01", 1500, True, ("198.18.60.12/24",))),
            "198.18.60.12 is already on interface ens192",
        ),
        (
            _links(ens192=Link("ens192", "00:50:56:00:00:01", 1500, True, ("198.18.0.5/16",))),
            "198.18.60.12/24 overlaps 198.18.0.5/16 on interface ens192",
        ),
        (
            _links(ens224=Link("ens224", "00:50:56:aa:bb:cc", 1500, True, ("198.18.60.12/16",))),
            "ens224 has 198.18.60.12/16, the same address with another prefix length",
        ),
    ],
    ids=["mac-not-found", "mac-twice", "address-elsewhere", "network-overlaps", "other-prefix"],
)
def test_refusals_name_the_option_and_the_fix(links: list[Link], message: str) -> None:
    with pytest.raises(GuestNetworkError) as error:
        plan_runtime(_request(), links, [], None)
    assert message in error.value.message and "Fix:" in error.value.message
    assert "guest_network_" in error.value.message


def test_a_vlan_or_bond_sharing_the_mac_is_not_the_vnic() -> None:
    vlan = Link("ens224.10", "00:50:56:aa:bb:cc", 1500, False, (), parent="ens224")
    assert find_link([*_links(), vlan], "00:50:56:aa:bb:cc").name == "ens224"
