# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where the packets went: ``ethtool -S`` and ``tc -s qdisc`` parsed from real recordings
(``tests/fixtures/nic/SOURCES.md``), their keys classified (``report/losses.py``), and the warning line a run's
deltas give in summary.md, results.json and the play (``report_write``'s warnings)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.nic import parse_nic_stats
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.linux_nic import NicParseError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.linux_nic_stats import (
    parse_ethtool_stats,
    parse_tc_qdisc,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.nic.counters import linux_reading
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import build_report, to_json
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.losses import KINDS, findings, kind_of, loss_line
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.markdown import to_markdown
from tests.collection_path import ESXI_RECORDINGS, REPO

NIC_FIXTURES = REPO / "tests" / "fixtures" / "nic"
IP_JSON = (ESXI_RECORDINGS / "linux-iproute2-6.1.0__ip-s-s-j-link-show__veth-drops.txt").read_text()


def fx(name: str) -> str:
    return (NIC_FIXTURES / name).read_text(encoding="utf-8")


# -- parsing the recordings ---------------------------------------------------------------------------------------


def test_ethtool_stats_of_real_drivers_keep_the_drivers_own_keys() -> None:
    virtio = parse_ethtool_stats(fx("linux-6.18__ethtool-S__virtio_net.txt"))
    assert len(virtio) == 20 and virtio["rx_drops"] == 0 and virtio["tx_kicks"] == 101845
    assert virtio["rx0_kicks"] == virtio["rx_kicks"] == 26268  # the per-queue repeat of the total
    veth = parse_ethtool_stats(fx("linux-6.18__ethtool-S__veth.txt"))
    assert veth["peer_ifindex"] == 2 and veth["rx_queue_0_drops"] == 0 and len(veth) == 10
    intel = parse_ethtool_stats(fx("unknown__ethtool-S__em2-intel-crc.txt"))
    assert (intel["rx_errors"], intel["rx_crc_errors"], intel["rx_no_buffer_count"]) == (47, 51, 0)
    assert intel["rx_long_byte_count"] == 32454370137414 and len(intel) == 46
    ixgbe = parse_ethtool_stats(fx("ubuntu-12.04__ethtool-S__ixgbe-pause.txt"))
    assert (ixgbe["tx_flow_control_xon"], ixgbe["tx_flow_control_xoff"], ixgbe["rx_errors"]) == (2, 3, 4141831567)


def test_a_driver_without_statistics_is_said_not_guessed() -> None:
    with pytest.raises(NicParseError, match=r"no 'NIC statistics:' line.*no stats available"):
        parse_ethtool_stats(fx("linux-6.18__ethtool-S__lo-no-stats.txt"))


def test_tc_qdisc_drops_of_the_root_and_the_ingress() -> None:
    assert parse_tc_qdisc(fx("linux-6.18__tc-s-qdisc__tbf-drops.txt")) == {
        "dropped": 3894, "overlimits": 5163, "requeues": 0}  # fmt: skip
    assert parse_tc_qdisc(fx("linux-6.18__tc-s-qdisc__noqueue-ingress.txt")) == {
        "dropped": 0, "overlimits": 0, "requeues": 0, "ingress_dropped": 0}  # fmt: skip
    with pytest.raises(NicParseError, match="no qdisc with a 'Sent' line"):
        parse_tc_qdisc('Cannot find device "eth9"\n')


def test_a_child_of_a_classful_root_is_not_counted_twice() -> None:
    text = fx("linux-6.18__tc-s-qdisc__tbf-drops.txt").replace("root refcnt 3", "root refcnt 3") + (
        "qdisc fq_codel 0: parent 8069:1 limit 10240p\n Sent 5 bytes 1 pkt (dropped 7, overlimits 0 requeues 0)\n"
    )
    assert parse_tc_qdisc(text)["dropped"] == 3894


def test_the_linux_reading_carries_driver_stats_and_qdisc_drops() -> None:
    outputs = {
        "ipjson": (IP_JSON, 0),
        "ethtool": ("driver: veth\nversion: 1.0\nfirmware-version: \nbus-info: \n", 0),
        "ethtoolS": (fx("linux-6.18__ethtool-S__veth.txt"), 0),
        "tc": (fx("linux-6.18__tc-s-qdisc__tbf-drops.txt"), 0),
    }
    (nic,) = linux_reading("198.19.65.1", "htmv0", "10000\n", outputs)["nics"]
    assert nic["driver_stats"]["rx_queue_0_drops"] == 0 and nic["qdisc"]["dropped"] == 3894
    assert nic["problems"] == []
    # lo: ethtool -S exits 94 with "no stats available": nothing read, no problem; tc missing (127): the same
    quiet = dict(outputs, ethtoolS=(fx("linux-6.18__ethtool-S__lo-no-stats.txt"), 94), tc=("sh: tc: not found", 127))
    (nic,) = linux_reading("198.19.65.1", "lo", "", quiet)["nics"]
    assert nic["driver_stats"] == {} and nic["qdisc"] == {} and nic["problems"] == []
    # an output that exits 0 but is not what tc prints: the problem is named
    odd = dict(outputs, tc=("garbage\n", 0))
    (nic,) = linux_reading("198.19.65.1", "htmv0", "", odd)["nics"]
    assert nic["problems"] == ["tc -s qdisc show dev htmv0: not the output of tc -s qdisc show (no qdisc with a "
                               "'Sent' line): garbage"]  # fmt: skip


# -- the table ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("rx_dropped", "drop"),  # ip -s link / esxcli "Receive packets dropped"
        ("driver.rx_drops", "drop"),  # virtio_net
        ("qdisc.dropped", "drop"),
        ("qdisc.ingress_dropped", "drop"),
        ("rx_missed_errors", "ring"),  # esxcli "Receive missed errors"
        ("driver.rx_no_buffer_count", "ring"),  # igb / ixgbe
        ("rx_fifo_errors", "ring"),
        ("driver.rx_out_of_buffer", "ring"),  # mlx5
        ("driver.tx_flow_control_xoff", "pause"),  # ixgbe
        ("driver.rx_pause_ctrl_phy", "pause"),  # mlx5
        ("driver.tx_prio3_pause", "pause"),  # mlx5 PFC
        ("driver.link_xoff_rx", "pause"),  # i40e
        ("rx_crc_errors", "error"),
        ("driver.tx_tx_timeouts", "error"),
        ("driver.rx_queue_0_drops", None),  # per-queue repeats: raw only
        ("driver.rx0_drops", None),
        ("driver.peer_ifindex", None),  # not a counter
        ("driver.fdir_miss", None),  # unknown: kept raw
        ("qdisc.overlimits", None),  # a shaper's delay, not a loss
        ("rx_bytes", None),
    ],
)
def test_the_table_classifies_known_keys_and_leaves_the_rest_raw(name: str, kind: str | None) -> None:
    assert kind_of(name) == kind


def test_every_esxi_counter_name_is_in_the_rtnl_name_space_of_the_table() -> None:
    """The names esxi/nic.py gives ESXi's lines are the ones the table classifies (no second table for ESXi)."""
    stats = parse_nic_stats((ESXI_RECORDINGS / "unknown__network-nic-stats-get__kb341594.txt").read_text())
    classified = {name for name in stats["counters"] if kind_of(name) is not None}
    assert {"rx_dropped", "rx_missed_errors", "rx_fifo_errors", "rx_crc_errors", "tx_errors"} <= classified
    assert set(KINDS.values()) == {"drop", "ring", "pause", "error"}


def test_findings_and_the_warning_line() -> None:
    deltas: dict[str, int | None] = {"rx_missed_errors": 1204, "rx_bytes": 5, "driver.rx_no_buffer_count": 0,
                                     "driver.tx_flow_control_xon": 2, "driver.tx_flow_control_xoff": 3,
                                     "rx_dropped": None}  # fmt: skip
    found = findings(deltas)
    assert found == [
        {"kind": "ring", "count": 1204, "counters": {"rx_missed_errors": 1204}},
        {"kind": "pause", "count": 3, "counters": {"driver.tx_flow_control_xoff": 3, "driver.tx_flow_control_xon": 2}},
    ]
    assert loss_line("run 3", "esx1", "vmnic1", found[0]) == (
        "run 3 ran out of ring / buffer space 1,204 times on vmnic1 of esx1 (rx_missed_errors)"
    )
    assert loss_line("run 3", "h1", "eth1", found[1]) == (
        "run 3 counted 3 pause frames on eth1 of h1 (driver.tx_flow_control_xoff 3, driver.tx_flow_control_xon 2)"
    )
    drop = findings({"rx_dropped": 1204})[0]
    assert loss_line("run 3", "esx1", "vmnic1", drop) == "run 3 dropped 1,204 packets on vmnic1 of esx1 (rx_dropped)"


# -- into the report ----------------------------------------------------------------------------------------------


def _reading(address: str, counters: dict[str, int], driver: dict[str, int], qdisc: dict[str, int]) -> dict[str, Any]:
    nic: dict[str, Any] = {
        "name": "htmv0",
        "driver": "veth",
        "firmware": None,
        "version": None,
        "bus_info": None,
        "speed_mbps": 10000,
        "link_up": True,
        "counters": counters,
        "driver_stats": driver,
        "qdisc": qdisc,
        "other": {},
        "problems": [],
        "raw": {},
    }
    return {address: {"address": address, "interface": "htmv0", "kind": "linux", "source": "ip", "reason": None,
                      "speed_mbps": 10000, "nics": [nic]}}  # fmt: skip


def _record(run: int, before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    pair = {"pair": 1, "server": "h1", "client": "h2", "address": "198.19.65.1", "port": 5201, "ok": True,
            "sender": "h2", "receiver": "h1",
            "result": {"tool": "iperf3", "bits_per_second": 5e6, "complete": True, "protocol": "udp"}}  # fmt: skip
    return {"run": run, "test": "shaped", "streams": 1, "direction": "forward", "swapped": False, "repetition": run,
            "labels": {}, "pairs": [pair], "total_bits_per_second": 5e6, "ok": True, "complete": True,
            "errors": [], "warnings": [], "nic": {"mode": "run", "before": before, "after": after}}  # fmt: skip


def test_a_run_that_dropped_warns_in_summary_md_and_results_json() -> None:
    base = {"rx_dropped": 0, "tx_dropped": 0, "rx_errors": 0, "tx_errors": 0}
    before = {"h2": _reading("198.19.65.2", base, {"rx_queue_0_drops": 0}, {"dropped": 10, "overlimits": 3})}
    after = {"h2": _reading("198.19.65.2", dict(base, tx_dropped=2), {"rx_queue_0_drops": 9},
                            {"dropped": 3904, "overlimits": 5166})}  # fmt: skip
    clean = copy.deepcopy(before)
    report = build_report([_record(1, before, clean), _record(2, before, after)], name="shaped")
    line = "run 2 dropped 3,894 packets on htmv0 of h2 (qdisc.dropped 3,894, tx_dropped 2)"
    assert report.loss_warnings == [line]
    document = json.loads(to_json(report))
    assert document["nic"]["loss_warnings"] == [line]
    (nic,) = document["runs"][1]["nic"]["nics"]
    assert nic["deltas"]["driver.rx_queue_0_drops"] == 9  # kept raw, not classified
    assert nic["deltas"]["qdisc.overlimits"] == 5163
    assert document["runs"][0]["nic"]["nics"][0]["losses"] == []
    markdown = to_markdown(report)
    assert f"> **Warning:** {line}" in markdown.split("## ", 1)[0]  # at the top, before the first section
    # a span over a test's runs (nic_counters: test) names the test and the runs
    span = build_report([{**_record(1, before, clean), "nic": {"mode": "test", "before": before, "after": None}},
                         {**_record(2, before, after), "nic": {"mode": "test", "before": None, "after": after}}],
                        name="span")  # fmt: skip
    assert span.loss_warnings == ["test shaped: runs 1-2 dropped 3,894 packets on htmv0 of h2 (qdisc.dropped 3,894, "
                                  "tx_dropped 2)"]  # fmt: skip


def test_the_script_reads_ethtool_s_and_tc_on_this_shell() -> None:
    """The script's Linux part on the controller's own shell, for its loopback: real ``ethtool -S`` (no stats for
    lo: nothing read, no problem) and real ``tc -s qdisc`` (lo's noqueue root)."""
    import shutil
    import subprocess

    from ansible_collections.esxilab.iperf.plugins.action.iperf_facts import build_script, parse_probe_output

    if not (shutil.which("ip") and shutil.which("tc") and shutil.which("ethtool")):
        pytest.skip("ip, tc and ethtool are needed (apt-get install iproute2 ethtool)")
    script = build_script("MK", gather_tools=False, nic_counters_of=["127.0.0.1"])
    run = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60, check=True)
    probe = parse_probe_output(run.stdout, "MK")
    assert probe.nic_interfaces == {"127.0.0.1": "lo"}
    assert set(probe.nic_outputs["127.0.0.1"]) >= {"ipjson", "ethtool", "ethtoolS", "tc"}
    (nic,) = linux_reading("127.0.0.1", "lo", "", probe.nic_outputs["127.0.0.1"])["nics"]
    assert nic["driver_stats"] == {}  # ethtool -i lo fails (no driver information): that problem is ethtool -i's
    assert not [p for p in nic["problems"] if "ethtool -S" in p or "tc " in p]
    assert set(nic["qdisc"]) == {"dropped", "overlimits", "requeues"}


def test_an_esxi_uplink_that_missed_packets_warns_with_the_esxcli_counter() -> None:
    """ESXi: the recorded ``esxcli network nic stats get -n vmnic2`` (KB 341594) before, and the same output with
    its ``Receive missed errors`` line raised by 1204 after (an edited copy: the delta needs two readings of one
    NIC, no such pair was recorded)."""
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.nic import span_delta

    text = (ESXI_RECORDINGS / "unknown__network-nic-stats-get__kb341594.txt").read_text()
    later = text.replace("Receive missed errors: 0", "Receive missed errors: 1204")
    assert later != text

    def reading(stats: str) -> dict[str, Any]:
        nic = {"name": "vmnic2", "counters": parse_nic_stats(stats)["counters"]}
        return {"esx1": {"198.18.165.21": {"interface": "vmk1", "nics": [nic]}}}

    delta = span_delta(reading(text), reading(later), first_run=3, last_run=3)
    assert delta.loss_lines() == [
        "run 3 ran out of ring / buffer space 1,204 times on vmnic2 of esx1 (rx_missed_errors)"
    ]
