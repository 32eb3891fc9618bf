# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""NIC counters and driver/firmware parsers against every recorded output (SOURCES.md of the ESXi fixtures):
``esxi/nic.py`` (esxcli network nic stats get / nic get) and ``host/linux_nic.py`` (ip -s link, ethtool -i).

Every expected figure is copied from the fixture text by hand; a guard test fails for a NIC recording that no test
here names.
"""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import EsxiParseError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.nic import (
    NIC_STATS_FIELDS,
    parse_nic_get,
    parse_nic_stats,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.linux_nic import (
    NicParseError,
    parse_ethtool_info,
    parse_ip_link_json,
    parse_ip_link_text,
)
from tests.collection_path import ESXI_RECORDINGS

FIXTURES = ESXI_RECORDINGS


def fx(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def _zero(*names: str) -> dict[str, int]:
    return dict.fromkeys(names, 0)


ALL_ZERO_ERRORS = _zero(
    "rx_errors", "rx_length_errors", "rx_over_errors", "rx_crc_errors", "rx_frame_errors", "rx_fifo_errors",
    "rx_missed_errors", "tx_errors", "tx_aborted_errors", "tx_carrier_errors", "tx_fifo_errors",
    "tx_heartbeat_errors", "tx_window_errors",
)  # fmt: skip

STATS: dict[str, dict[str, Any]] = {
    "unknown__network-nic-stats-get__kb341594.txt": {
        "nic": "vmnic2",
        "other": {},
        "counters": {
            "rx_packets": 701280499176, "tx_packets": 687061948450, "rx_bytes": 664124780523852,
            "tx_bytes": 676938646792793, "rx_dropped": 2452783244, "tx_dropped": 0, "rx_multicast": 976222150,
            "rx_broadcast": 0, "tx_multicast": 0, "tx_broadcast": 0, **ALL_ZERO_ERRORS,
        },
    },
    "unknown__network-nic-stats-get__vmnic9.txt": {
        "nic": "vmnic9",
        "other": {},
        "counters": {
            "rx_packets": 0, "tx_packets": 0, "rx_bytes": 5271156, "tx_bytes": 39259722, "rx_dropped": 0,
            "tx_dropped": 0, "rx_multicast": 60588, "rx_broadcast": 0, "tx_multicast": 60588, "tx_broadcast": 98241,
            **ALL_ZERO_ERRORS,
        },
    },
    # cut by `| grep Receive`: no title, no transmit lines - those counters are absent, not 0
    "unknown__network-nic-stats-get__grep-receive.txt": {
        "nic": None,
        "other": {},
        "counters": {
            "rx_dropped": 0, "rx_length_errors": 0, "rx_over_errors": 50571, "rx_crc_errors": 0,
            "rx_frame_errors": 0, "rx_fifo_errors": 748049, "rx_missed_errors": 0,
        },
    },
}  # fmt: skip

GETS: dict[str, dict[str, Any]] = {
    "6.0.0__network-nic-get__elxnet.txt": {
        "name": "vmnic0", "driver": "elxnet", "firmware": "10.2.615.0", "version": "10.2.309.6v",
        "bus_info": "0000:05:00:0", "link_status": "Up", "pause_rx": True, "pause_tx": True, "fields": 24,
    },
    "unknown__network-nic-get__i40en.txt": {
        "name": "vmnic0", "driver": "i40en", "firmware": "8.50 0x8000b6c5 1.2074.0", "version": "1.11.1.31",
        "bus_info": "0000:01:00:0", "link_status": "Up", "pause_rx": False, "pause_tx": False, "fields": 24,
    },
    # trailing spaces after 'Driver Info:', 'Link Status: Up', 'Cable Type:' ... (kept in the recording)
    "9.0.0__network-nic-get__nvmxnet3.txt": {
        "name": "vmnic0", "driver": "nvmxnet3", "firmware": "7", "version": "2.0.0.31",
        "bus_info": "0000:02:01:0", "link_status": "Up", "pause_rx": False, "pause_tx": False, "fields": 25,
    },
    # older layout: no 'Virtual Address' line
    "unknown__network-nic-get__bnx2x.txt": {
        "name": "vmnic2", "driver": "bnx2x", "firmware": "FFV7.10.18 bc 7.10.11", "version": "2.710.39.v55.2",
        "bus_info": "0000:01:00.2", "link_status": "Up", "pause_rx": True, "pause_tx": True, "fields": 23,
    },
}  # fmt: skip

ETHTOOL: dict[str, dict[str, Any]] = {
    "linux-unknown__ethtool-i__be2net.txt": {
        "driver": "be2net", "version": "11.4.0.0", "firmware": "4.9.311.20", "bus_info": "0000:04:00.0", "fields": 10,
    },
    "unknown__ethtool-i__bnx2x.txt": {
        "driver": "bnx2x", "version": "2.710.70.v55.7", "firmware": "FFV7.10.17 bc 7.10.11", "bus_info": "0000:01:00.0",
        "fields": 4,
    },
}  # fmt: skip

LAB = "linux-iproute2-6.1.0__"
# the lab's veth eth0 in namespace nic-h1 after oversized pings were dropped by its peer (MTU 9000 -> 1500)
LAB_COMMON = {"rx_bytes": 3078, "rx_packets": 37, "rx_errors": 0, "rx_dropped": 0, "rx_multicast": 0,
              "tx_bytes": 2711, "tx_packets": 31, "tx_errors": 0, "tx_dropped": 44, "tx_carrier_errors": 0,
              "tx_collisions": 0}  # fmt: skip
LAB_DETAIL = {"rx_length_errors": 0, "rx_crc_errors": 0, "rx_frame_errors": 0, "rx_fifo_errors": 0,
              "rx_missed_errors": 0, "rx_over_errors": 0, "tx_aborted_errors": 0, "tx_fifo_errors": 0,
              "tx_window_errors": 0, "tx_heartbeat_errors": 0, "carrier_changes": 2}  # fmt: skip
IP_LINK: dict[str, tuple[Any, dict[str, int]]] = {
    # ip -s -j prints over_errors but not missed; the text form prints missed but not overrun (-s -s has both)
    f"{LAB}ip-s-j-link-show__veth-drops.txt": (parse_ip_link_json, {**LAB_COMMON, "rx_over_errors": 0}),
    f"{LAB}ip-s-s-j-link-show__veth-drops.txt": (parse_ip_link_json, {**LAB_COMMON, **LAB_DETAIL}),
    f"{LAB}ip-s-link-show__veth-drops.txt": (parse_ip_link_text, {**LAB_COMMON, "rx_missed_errors": 0}),
    f"{LAB}ip-s-s-link-show__veth-drops.txt": (parse_ip_link_text, {**LAB_COMMON, **LAB_DETAIL}),
}


@pytest.mark.parametrize("name", sorted(STATS))
def test_nic_stats_field_by_field(name: str) -> None:
    assert parse_nic_stats(fx(name)) == STATS[name]


def test_nic_stats_keeps_what_it_does_not_know_and_reads_no_figure_it_cannot() -> None:
    text = "NIC statistics for vmnic4\n   Packets received: 12\n   Receive pause frames: 3\n   Bytes sent: n/a\n"
    parsed = parse_nic_stats(text)
    assert parsed["counters"] == {"rx_packets": 12}
    assert parsed["other"] == {"Receive pause frames": "3", "Bytes sent": "n/a"}
    with pytest.raises(EsxiParseError, match="no counter line"):
        parse_nic_stats("Error: Unknown option or set of options.\n")
    # every label of the full recording is one parse_nic_stats knows
    assert len(STATS["unknown__network-nic-stats-get__kb341594.txt"]["counters"]) == len(NIC_STATS_FIELDS)


@pytest.mark.parametrize("name", sorted(GETS))
def test_nic_get_field_by_field(name: str) -> None:
    parsed = parse_nic_get(fx(name))
    expected = dict(GETS[name])
    assert len(parsed.pop("fields")) == expected.pop("fields")
    assert parsed == expected


def test_nic_get_keeps_every_field_as_printed() -> None:
    fields = parse_nic_get(fx("9.0.0__network-nic-get__nvmxnet3.txt"))["fields"]
    assert fields["Backing DPUId"] == "N/A"
    assert fields["Advertised Link Modes"] == "10000None/Full"
    assert fields["Cable Type"] == "" and fields["Transceiver"] == ""
    assert fields["Driver Info/Firmware Version"] == "7"
    assert fields["Virtual Address"] == "00:50:56:5f:1b:e1"
    with pytest.raises(EsxiParseError, match="no 'Name:' or 'Driver Info:'"):
        parse_nic_get("   Link Status: Up\n")


@pytest.mark.parametrize("name", sorted(ETHTOOL))
def test_ethtool_info_field_by_field(name: str) -> None:
    parsed = parse_ethtool_info(fx(name))
    expected = dict(ETHTOOL[name])
    assert len(parsed.pop("fields")) == expected.pop("fields")
    assert parsed == expected


def test_ethtool_info_empty_value_and_not_ethtool() -> None:
    assert parse_ethtool_info(fx("linux-unknown__ethtool-i__be2net.txt"))["fields"]["expansion-rom-version"] == ""
    with pytest.raises(NicParseError, match="no 'driver:' line"):
        parse_ethtool_info("sh: ethtool: not found\n")


@pytest.mark.parametrize("name", sorted(IP_LINK))
def test_ip_link_field_by_field(name: str) -> None:
    parse, counters = IP_LINK[name]
    parsed = parse(fx(name))
    assert parsed == {"interface": "eth0", "mtu": 1500, "operstate": "UP", "counters": counters, "other": {}}


def test_ip_link_errors_name_the_problem() -> None:
    with pytest.raises(NicParseError, match="not the JSON"):
        parse_ip_link_json(fx(f"{LAB}ip-s-s-j-link-show__missing.stderr.txt"))
    with pytest.raises(NicParseError, match="no '<index>: <name>"):
        parse_ip_link_text(fx(f"{LAB}ip-s-s-j-link-show__missing.stderr.txt"))
    with pytest.raises(NicParseError, match="run it with -s"):
        parse_ip_link_json('[{"ifname": "eth0", "mtu": 1500}]')
    assert fx(f"{LAB}ip-s-s-j-link-show__missing.stdout.txt") == ""


def test_every_nic_recording_is_tested_here() -> None:
    named = {*STATS, *GETS, *ETHTOOL, *IP_LINK}
    kinds = ("nic-stats-get", "nic-get", "ethtool", "link-show")
    recorded = {p.name for p in FIXTURES.iterdir() if any(kind in p.name for kind in kinds)}
    recorded -= {f"{LAB}ip-s-s-j-link-show__missing.stdout.txt", f"{LAB}ip-s-s-j-link-show__missing.stderr.txt"}
    assert recorded == named
