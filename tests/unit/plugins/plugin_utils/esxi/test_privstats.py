# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""ESXi NIC drivers' private statistics (``localcli ... networkinternal nic privstats get``, ``esxi/privstats.py``)
against the recorded outputs (``tests/fixtures/esxi/SOURCES.md``), their reading into ``driver_stats``
(``nic/counters.py``: not available, never guessed, where the command is missing, fails or prints another layout)
and the warning lines their growth gives (``report/losses.py``).

Every expected figure is copied from the fixture text by hand.
"""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import EsxiParseError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.privstats import PRIVSTATS_COMMAND, parse_privstats
from ansible_collections.esxilab.iperf.plugins.plugin_utils.nic.counters import _esxi_privstats
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.losses import kind_of
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.nic import span_delta
from tests.collection_path import ESXI_RECORDINGS

QUEUES = "unknown__networkinternal-nic-privstats-get__intel-32q-lfc.txt"
PFC = "unknown__networkinternal-nic-privstats-get__intel-pfc-tail.txt"


def fx(name: str) -> str:
    return (ESXI_RECORDINGS / name).read_text(encoding="utf-8")


def test_the_queue_fields_are_summed_per_direction_and_lfc_read_from_its_title_line() -> None:
    """32 TX and 32 RX queues; ``LFC: RxXon: 0`` holds the first item on the title line."""
    assert parse_privstats(fx(QUEUES)) == {
        "rx_invalid_queue_packets": 0,
        "tx_total_pkts": 17,
        "tx_total_bytes": 1030,
        "tx_restart_queue": 0,
        "tx_busy": 0,
        "tx_queue_full": 0,
        "tx_queue_dropped": 0,
        "rx_total_pkts": 30009 + 20000 + 30000 + 20000,  # rxq0, rxq8, rxq9, rxq10
        "rx_total_bytes": 1801559 + 1200000 + 1800000 + 1200000,
        "rx_non_eop_descs": 0,
        "rx_alloc_buf_failed": 0,
        "rx_csum_errors": 0,
        "link_xon_rx": 0,
        "link_xoff_rx": 0,
        "link_xon_tx": 0,
        "link_xoff_tx": 0,
    }


def test_lfc_below_its_title_and_pfc_per_traffic_class() -> None:
    found = parse_privstats(fx(PFC))
    assert {k: found[k] for k in ("link_xon_rx", "link_xoff_rx", "link_xon_tx", "link_xoff_tx")} == dict.fromkeys(
        ("link_xon_rx", "link_xoff_rx", "link_xon_tx", "link_xoff_tx"), 0
    )
    assert sorted(k for k in found if k.startswith("priority_")) == sorted(
        f"priority_{tc}_{item}" for tc in range(8) for item in ("xon_rx", "xoff_rx", "xon_tx", "xoff_tx", "xon_2_xoff")
    )
    assert found["rx_total_pkts"] == 0 and "tx_total_pkts" not in found  # the recording starts at rxq28


def test_each_name_has_the_kind_the_report_counts() -> None:
    kinds = {name: kind_of(f"driver.{name}") for name in {**parse_privstats(fx(QUEUES)), **parse_privstats(fx(PFC))}}
    assert {name for name, kind in kinds.items() if kind == "ring"} == {
        "tx_restart_queue", "tx_busy", "tx_queue_full", "rx_alloc_buf_failed"}  # fmt: skip
    assert {name for name, kind in kinds.items() if kind == "drop"} == {"tx_queue_dropped"}
    assert {name for name, kind in kinds.items() if kind == "error"} == {"rx_csum_errors"}
    assert {name for name, kind in kinds.items() if kind == "pause"} == {
        "link_xon_rx", "link_xoff_rx", "link_xon_tx", "link_xoff_tx",
        *(f"priority_{tc}_{item}" for tc in range(8) for item in ("xon_rx", "xoff_rx", "xon_tx", "xoff_tx")),
    }  # fmt: skip
    # totals of traffic, transitions and the invalid-queue count are kept, never counted as a loss
    assert {name for name, kind in kinds.items() if kind is None} == {
        "tx_total_pkts", "tx_total_bytes", "rx_total_pkts", "rx_total_bytes", "rx_non_eop_descs",
        "rx_invalid_queue_packets", *(f"priority_{tc}_xon_2_xoff" for tc in range(8))}  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        fx("unknown__network-nic-stats-get__kb341594.txt"),  # another command's real output
        "sh: localcli: not found\n",
        "",
    ],
)
def test_another_layout_is_not_read(text: str) -> None:
    with pytest.raises(EsxiParseError, match="no line of the recorded privstats layout"):
        parse_privstats(text)


def _nic(driver: str | None = "i40en") -> dict[str, Any]:
    return {"driver": driver, "driver_stats": {}, "problems": [], "raw": {}}


def test_the_reading_degrades_to_not_available() -> None:
    ok = _nic()
    assert _esxi_privstats(ok, "vmnic4", {"privstats vmnic4": (fx(QUEUES), 0)}) is True
    assert ok["driver_stats"]["tx_total_pkts"] == 17 and ok["problems"] == [] and ok["raw"]["privstats"] == fx(QUEUES)
    cases = {
        "missing": ({}, f"{PRIVSTATS_COMMAND} vmnic4 was not run: driver private statistics not available"),
        "no localcli": (
            {"privstats vmnic4": ("sh: localcli: not found\n", 127)},
            f"{PRIVSTATS_COMMAND} vmnic4 failed (exit status 127): sh: localcli: not found; driver private "
            "statistics not available",
        ),
        "other layout": (
            {"privstats vmnic4": ("rx_bytes : 10\n", 0)},
            f"{PRIVSTATS_COMMAND} vmnic4 (i40en): no line of the recorded privstats layout (e.g. 'txq0: "
            "totalPkts=... pktDropped=0', 'LFC:', 'PFC TC[0]: ...') in the output; its layout is not a recorded "
            "one, so the driver private statistics are not read",
        ),
    }
    for case, (outputs, problem) in cases.items():
        nic = _nic()
        assert _esxi_privstats(nic, "vmnic4", outputs) is False, case
        assert nic["driver_stats"] is None and nic["problems"] == [problem], case


def test_ring_exhaustion_and_pause_frames_on_an_esxi_uplink_give_warning_lines() -> None:
    """The recorded output before, and the same output with a TX queue's ``txBusy`` and ``restartQueue`` raised and
    ``TxXoff`` of the LFC block raised after (an edited copy: the delta needs two readings of one NIC, no such pair
    was recorded)."""
    text = fx(QUEUES)
    later = (
        text.replace("txq3: totalPkts=0 totalBytes=0 restartQueue=0 txBusy=0", "txq3: totalPkts=9 totalBytes=0 "
                     "restartQueue=2 txBusy=41")
        .replace("TxXoff: 0", "TxXoff: 1500")
    )  # fmt: skip
    assert later != text and later.count("txBusy=41") == 1

    def reading(stats: str) -> dict[str, Any]:
        nic = {"name": "vmnic4", "counters": {}, "driver_stats": parse_privstats(stats)}
        return {"esx1": {"198.18.165.21": {"interface": "vmk1", "nics": [nic]}}}

    delta = span_delta(reading(text), reading(later), first_run=2, last_run=2)
    assert delta.loss_lines() == [
        "run 2 ran out of ring / buffer space 41 times on vmnic4 of esx1 (driver.tx_busy 41, "
        "driver.tx_restart_queue 2)",
        "run 2 counted 1,500 pause frames on vmnic4 of esx1 (driver.link_xoff_tx)",
    ]
    # not available on one side: the counters are null in the delta, never counted
    unread = {"esx1": {"198.18.165.21": {"interface": "vmk1", "nics": [{"name": "vmnic4", "counters": {},
                                                                       "driver_stats": None}]}}}  # fmt: skip
    gap = span_delta(unread, reading(later), first_run=2, last_run=2)
    assert gap.loss_lines() == [] and gap.nics[0]["deltas"]["driver.tx_busy"] is None  # type: ignore[index]
