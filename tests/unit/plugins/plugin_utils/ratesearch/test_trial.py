# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One trial's verdict from what iperf_run returned: the threshold's edges, short trials, and honest errors."""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse_result
from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch.trial import Trial, judge
from tests.unit.plugins.plugin_utils.ratesearch.iperf_model import (
    PASS_FILE,
    SENDER_LIMITED_FILE,
    recorded,
    trial_result,
)


def verdict_of(step: dict[str, Any], offered: int, loss: float = 0.0, shortfall: float = 0.5) -> Trial:
    return judge(
        step, frame_size=1518, rate_mbps=offered / 1e6, offered_bps=offered, loss_percent=loss,
        shortfall_percent=shortfall,
    )  # fmt: skip


def test_a_recorded_trial_below_the_link_passes_with_iperfs_figures() -> None:
    trial = verdict_of(recorded(PASS_FILE), 47_000_000)
    assert trial.verdict == "pass" and trial.error is None
    assert (trial.lost_packets, trial.packets) == (0, 3988)  # iperf3's receiver counts, as printed
    assert trial.sent_bps == pytest.approx(46958884.33) and trial.received_bps == pytest.approx(46942925.03)
    assert trial.loss_percent == 0.0 and trial.payload_size == 1472
    assert trial.offered_pps == pytest.approx(47e6 / (1472 * 8))


def test_a_recorded_sender_limited_trial_is_not_passed() -> None:
    """52 Mbit/s asked, 48.6 sent (the sender's own shaped link blocked the socket), nothing lost: not a pass."""
    trial = verdict_of(recorded(SENDER_LIMITED_FILE), 52_000_000)
    assert trial.verdict == "sender" and trial.lost_packets == 0
    assert trial.received_mbps == pytest.approx(48036421.04 / 1472 * 1518 / 1e6)


@pytest.mark.parametrize(
    ("lost", "threshold", "verdict"),
    [
        (0, 0.0, "pass"),
        (1, 0.0, "loss"),  # zero loss means zero: one packet fails it
        (4, 0.1, "pass"),  # 4 of 4000 = exactly 0.1 %: at the threshold passes
        (5, 0.1, "loss"),
        (40, 1.0, "pass"),
        (41, 1.0, "loss"),
    ],
)
def test_the_loss_threshold_edges(lost: int, threshold: float, verdict: str) -> None:
    step = trial_result(1000, 32_000_000)  # 4000 packets
    step["result"]["udp"].update(lost_packets=lost, packets=4000)
    assert verdict_of(step, 32_000_000, loss=threshold, shortfall=99).verdict == verdict


@pytest.mark.parametrize(("late", "shortfall", "verdict"), [(0.0, 0.0, "pass"), (0.004, 0.5, "pass"),
                                                            (0.006, 0.5, "short"), (0.2, 25.0, "pass")])  # fmt: skip
def test_a_receiver_rate_below_the_offered_is_short(late: float, shortfall: float, verdict: str) -> None:
    """The excess held in a queue until the end of the trial: nothing lost, but received late (its rate lower)."""
    offered = 3400 * 1472 * 8  # a whole number of datagrams a second
    step = trial_result(1472, offered, late=late)
    assert step["result"]["received"]["bits_per_second"] == pytest.approx(offered / (1 + late))
    assert verdict_of(step, offered, shortfall=shortfall).verdict == verdict


@pytest.mark.parametrize(("sent_fraction", "verdict"), [(1.0, "pass"), (0.996, "pass"), (0.99, "sender")])
def test_a_sender_below_the_offered_rate_is_no_pass(sent_fraction: float, verdict: str) -> None:
    offered = 3400 * 1472 * 8
    step = trial_result(1472, offered, sent_fraction=sent_fraction)
    assert verdict_of(step, offered).verdict == verdict


def test_loss_outranks_short() -> None:
    assert verdict_of(trial_result(1472, 40_000_000, lost=100, late=0.5), 40_000_000).verdict == "loss"


def test_a_failed_iperf_run_is_an_error_with_its_message() -> None:
    step = {"failed": True, "msg": "connection refused by 198.19.63.11:25631: is a server listening?"}
    trial = verdict_of(step, 1_000_000)
    assert trial.verdict == "error" and trial.error == step["msg"] and trial.loss_percent is None


def test_an_unreachable_host_is_an_error() -> None:
    assert verdict_of({"unreachable": True, "msg": "ssh: lost"}, 1_000_000).error == "ssh: lost"


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ({"changed": True}, "iperf_run returned no result"),
        ({"changed": True, "result": "text"}, "no usable result: the trial's result: must be a dictionary"),
    ],
)
def test_no_result_is_an_error(step: dict[str, Any], message: str) -> None:
    trial = verdict_of(step, 1_000_000)
    assert trial.verdict == "error" and trial.error is not None and message in trial.error


def test_a_tcp_result_has_no_loss_figures_and_is_an_error() -> None:
    tcp = parse_result((PASS_FILE.parent.parent / "iperf" / "iperf3-3.0or3.1-text-client-tcp-attfiber.txt").read_text())
    trial = verdict_of({"result": tcp}, 1_000_000)
    assert trial.verdict == "error" and trial.error is not None and "no usable loss figures" in trial.error


@pytest.mark.parametrize(("lost", "packets"), [(None, 4000), (0, 0), (0, None), (5, 4), (-1, 4000), (True, 4000)])
def test_missing_or_impossible_counts_are_an_error(lost: Any, packets: Any) -> None:
    step = trial_result(1000, 32_000_000)
    step["result"]["udp"].update(lost_packets=lost, packets=packets)
    trial = verdict_of(step, 32_000_000)
    # a boolean count is refused where the record enters (validate.result_from), the others by the verdict
    assert trial.verdict == "error" and trial.error is not None and "no usable" in trial.error


def test_no_receiver_rate_is_an_error() -> None:
    step = trial_result(1000, 32_000_000)
    step["result"]["received"] = None
    assert verdict_of(step, 32_000_000).error == "iperf printed no sender or receiver rate for the trial"


def test_iperfs_own_error_is_an_error() -> None:
    step = trial_result(1000, 32_000_000)
    step["result"]["error"] = "the server is busy running a test. try again later"
    assert verdict_of(step, 32_000_000).error == "iperf: the server is busy running a test. try again later"
