# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Trials for the rate search's unit tests: iperf3 3.12's real UDP client JSON with a loss model's numbers.

``trial_result()`` takes the shape of a recorded output (``tests/fixtures/ratesearch/``), puts in the packets
sent, lost and the seconds of a model, and parses it with the collection's own parser - so what the search
reads is what ``iperf_run`` returns for such an output.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse_result

FIXTURES = Path(__file__).resolve().parents[4] / "fixtures" / "ratesearch"
PASS_FILE = FIXTURES / "iperf3-3.12-json-client-udp-l1472-b47M-t1-pass-locallab.json"
SENDER_LIMITED_FILE = FIXTURES / "iperf3-3.12-json-client-udp-l1472-b52M-t1-sender-limited-locallab.json"


def recorded(path: Path) -> dict[str, Any]:
    """``iperf_run``'s task result for the recorded output in ``path``."""
    return {"changed": True, "result": parse_result(path.read_text())}


def trial_result(
    payload: int, offered_bps: int, *, lost: int = 0, sent_fraction: float = 1.0, late: float = 0.0, seconds: int = 1
) -> dict[str, Any]:
    """``iperf_run``'s task result for a trial: ``offered_bps`` of ``payload``-byte datagrams for ``seconds``, the
    sender reaching ``sent_fraction`` of it, ``lost`` of them lost, the receiver ``late`` seconds longer."""
    document = copy.deepcopy(json.loads(PASS_FILE.read_text()))
    packets = max(1, round(offered_bps * sent_fraction * seconds / (payload * 8)))
    sent_bytes = packets * payload
    received_bytes = (packets - lost) * payload
    end = document["end"]
    end["sum_sent"].update(
        seconds=float(seconds), bytes=sent_bytes, bits_per_second=sent_bytes * 8 / seconds, packets=packets
    )
    end["sum_received"].update(
        seconds=seconds + late,
        bytes=received_bytes,
        bits_per_second=received_bytes * 8 / (seconds + late),
        packets=packets,
        lost_packets=lost,
        lost_percent=100.0 * lost / packets,
    )
    end["sum"].update(end["sum_received"])
    for stream in end["streams"]:
        stream["udp"].update(end["sum_received"])
    document["start"]["test_start"].update(blksize=payload, duration=seconds)
    document["start"]["target_bitrate"] = offered_bps
    return {"changed": True, "result": parse_result(json.dumps(document))}


#: ``(frame_size, payload_size, offered_bps) -> iperf_run's result``: RunTrial of ``run.py``.
Model = Callable[[int, int, int], dict[str, Any]]


def shaped(link_mbps: float, *, queue_bytes: int = 0, extra: int = 20) -> Model:
    """A link of ``link_mbps`` counting each frame plus ``extra`` bytes: below it every packet arrives; above it the
    excess beyond ``queue_bytes`` is lost and the rest arrives late (the receiver's rate is the link's)."""

    def model(frame: int, payload: int, offered_bps: int) -> dict[str, Any]:
        pps = offered_bps / (payload * 8)
        capacity = link_mbps * 1e6 / ((frame + extra) * 8)
        if pps <= capacity:
            return trial_result(payload, offered_bps)
        sent = round(pps)
        queued = queue_bytes // (frame + extra)
        lost = max(0, round(pps - capacity) - queued)
        late = (sent - lost) / capacity - 1.0
        return trial_result(payload, offered_bps, lost=lost, late=late)

    return model
