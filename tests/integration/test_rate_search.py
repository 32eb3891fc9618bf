# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The role esxilab.iperf.rate_search on the local lab, against a link whose limit is known (issue 25).

Lab: prefix ``rsrw`` (env ``ESXILAB_RATESEARCH_PREFIX``), 2 hosts on 198.19.63.0/24 (env
``ESXILAB_RATESEARCH_SUBNET``), every host shaped to 100 Mbit/s and the server h1 to 50 Mbit/s (tbf on both
ends of its veth), each frame charged 24 bytes more (``--ethernet-overhead``: preamble, FCS, gap - tbf sees
the frame without FCS). So the link into h1 carries at most 50e6 / ((F + 20) * 8) frames of F bytes (with
FCS) per second, i.e. 50 * F / (F + 20) Mbit/s of frames: 43.24 at 128 B, 49.35 at 1518 B. The sender's own
link (100 Mbit/s) is not the bottleneck, so above the limit the tbf into h1 drops: real loss, counted by iperf.

The search must find each limit within its resolution (plus the 1 % shortfall a trial may have and the tbf
burst), converted per frame size, from iperf's figures only. ``make test`` runs two frame sizes with 1 s
trials; the full run every RFC 2544 size and the loss threshold under netem random loss.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lab.nslab.shaping import tbf_burst
from tests.integration import labkit
from tests.integration.labkit import run_playbook, skip_if, wait_no_iperf

pytestmark = [pytest.mark.lab]

PREFIX = os.environ.get("ESXILAB_RATESEARCH_PREFIX", "rsrw")
SUBNET = os.environ.get("ESXILAB_RATESEARCH_SUBNET", "198.19.63")
HOSTS = ("h1", "h2")
LIMIT_MBPS = 50.0  # the tbf rate into h1 (wire bits, 24 bytes per frame added)
PORT = 25631
PLAY_TIMEOUT = 240


def limit_pps(frame: int, link: float = LIMIT_MBPS) -> float:
    """What the shaped link of ``link`` Mbit/s carries: frames of ``frame`` bytes (with FCS) per second."""
    return link * 1e6 / ((frame + 20) * 8)


def limit_mbps(frame: int, link: float = LIMIT_MBPS) -> float:
    return limit_pps(frame, link) * frame * 8 / 1e6


class Lab(labkit.Lab):
    pass


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    skip_if(labkit.lab_unavailable(("ip", "tc", "ssh", "iperf3"), probe_netns=True))
    the_lab = Lab(PREFIX, tmp_path_factory.mktemp("ratesearch") / "state")
    with the_lab.session():
        reshape(the_lab, "50mbit")
        yield the_lab


PLAYBOOK = """---
- name: Rate search
  hosts: h1,h2
  gather_facts: false
  tasks:
    - name: Search
      ansible.builtin.include_role:
        name: esxilab.iperf.rate_search

    - name: Show the fact on the server host too
      ansible.builtin.debug:
        msg: "complete: {{ rate_search_results.complete | default('no search') }}"
      when: inventory_hostname == 'h1'
"""


def search(lab: Lab, tmp: Path, *args: str, **variables: Any) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Run the role with ``variables`` over the lab's defaults; the play and its report directory."""
    (tmp / "remote").mkdir(exist_ok=True)
    report = tmp / "report"
    settings = {
        "rate_search_server": "h1",
        "rate_search_client": "h2",
        "rate_search_address": f"{SUBNET}.11",
        "rate_search_port": PORT,
        "rate_search_state_dir": str(tmp / "remote"),
        "rate_search_report_dir": str(report),
        "rate_search_trial_seconds": 1,
        **variables,
    }
    (tmp / "vars.json").write_text(json.dumps(settings))
    (tmp / "play.yml").write_text(PLAYBOOK)
    play = run_playbook(
        "-i", lab.inventory, tmp / "play.yml", "-e", f"@{tmp / 'vars.json'}", *args, timeout=PLAY_TIMEOUT
    )  # fmt: skip
    return play, report


def trials_text(row: dict[str, Any]) -> str:
    """The trials of ``row``, for a failure's message."""
    return "; ".join(
        f"{t['rate_mbps']:.3f} {t['verdict']} lost {t['lost_packets']}/{t['packets']} sent {t['sent_bps']} received "
        f"{t['received_bps']} offered {t['offered_bps']}"
        for t in row["trials"]
    )


def check_found(
    row: dict[str, Any], resolution: float, link: float = LIMIT_MBPS, seconds: int = 1, loss: float = 0.0
) -> None:
    """The search found the shaped limit of ``row``'s frame size within its resolution, from iperf's figures: a
    link of ``link`` Mbit/s, trials of ``seconds``, ``loss`` percent allowed (the found rate is then the limit's
    1 / (1 - loss / 100), where the excess is dropped rather than queued)."""
    frame = row["frame_size"]
    expected = limit_mbps(frame, link) / (1 - loss / 100)
    assert row["bound"] == "resolution", row
    # below: at most the resolution (and 1 % of noise); above: the 0.5 % shortfall a passing trial may have and
    # tbf's bucket (its burst, sent at once at the start of a trial), as a frame rate over the trial
    burst = tbf_burst(int(link * 1e6), 1500) * 8 / seconds / 1e6 * frame / (frame + 20)
    low, high = expected * 0.99 - resolution, (expected + burst) / 0.995
    assert low <= row["rate_mbps"] <= high, (low, high, trials_text(row))
    assert row["above_mbps"] - row["rate_mbps"] <= resolution
    assert row["pps"] == pytest.approx(row["rate_mbps"] * 1e6 / (frame * 8))
    assert row["payload_mbps"] == pytest.approx(row["rate_mbps"] * (frame - 46) / frame, rel=1e-6)
    assert row["packets"] > 0 and row["loss_percent"] <= loss
    if not loss:
        assert row["lost_packets"] == 0 and row["loss_percent"] == 0.0


@pytest.mark.serial  # a UDP rate against the shaped link: another lab's load on the 2 cores costs trials packets
def test_finds_the_shaped_limit_per_frame_size(lab: Lab, tmp_path: Path) -> None:
    resolution = 2.5
    play, report = search(
        lab, tmp_path, rate_search_frame_sizes=[1518, 512], rate_search_max_mbps=80,
        rate_search_resolution_mbps=resolution,
    )  # fmt: skip
    output = play.stdout + play.stderr
    assert play.returncode == 0, output[-4000:]
    doc = json.loads((report / "rate-search.json").read_text())
    assert doc["complete"] is True and [r["frame_size"] for r in doc["results"]] == [512, 1518]
    for row in doc["results"]:
        check_found(row, resolution)
        first = row["trials"][0]
        # 80 Mbit/s into a 50 Mbit/s link for 1 s overflows tbf's 1 MB queue: iperf counts real loss
        assert first["rate_mbps"] == 80 and first["verdict"] == "loss" and first["lost_packets"] > 0, first
        rates = {t["rate_mbps"] for t in row["trials"]}
        assert len(rates) <= 1 + 5 and row["trials_made"] <= 2 * len(rates)  # log2(80 / 2.5) = 5; a sender's retry
    csv_lines = (report / "rate-search.csv").read_text().splitlines()
    assert csv_lines[0].startswith("frame_size,payload_size,rate_mbps,payload_mbps,pps,")
    assert csv_lines[1].startswith(f"512,466,{doc['results'][0]['rate_mbps']!r},")
    assert "rate_search 512 B: 80.000 Mbit/s -> loss" in output
    assert "[WARNING]" not in output, output[-4000:]
    assert "complete: True" in output  # the fact reached the server host too
    markdown = (report / "rate-search.md").read_text()
    assert "| 1518 | 1472 |" in markdown
    assert wait_no_iperf(PREFIX, HOSTS) == []  # the always: stop ended the server
    print(json.dumps([(r["frame_size"], r["rate_mbps"], r["pps"], r["trials_made"]) for r in doc["results"]]))


def test_bad_settings_fail_before_the_server_starts(lab: Lab, tmp_path: Path) -> None:
    play, report = search(
        lab, tmp_path, rate_search_frame_sizes=[64, 1600], rate_search_loss_percent=-1, rate_search_resolution_mbps=0,
        rate_search_max_mbps=80,
    )  # fmt: skip
    output = " ".join((play.stdout + play.stderr).split())
    assert play.returncode != 0
    assert "frame_sizes (role variable rate_search_frame_sizes) item 2 is 1600" in output, output[-3000:]
    assert "largest frame of the path, 1518 bytes (MTU 1500 + 18" in output
    assert "loss_percent (role variable rate_search_loss_percent) is -1.0" in output
    assert "resolution_mbps (role variable rate_search_resolution_mbps) is 0.0" in output
    assert "Start the iperf3 server" not in output and not report.exists()


def test_check_mode_plans_and_runs_nothing(lab: Lab, tmp_path: Path) -> None:
    play, report = search(lab, tmp_path, "--check", "-v", rate_search_frame_sizes=[1518], rate_search_max_mbps=80)
    output = " ".join((play.stdout + play.stderr).split())
    assert play.returncode == 0, output[-3000:]
    assert "check mode: the search would make at most 8 trial(s) of 1 s" in output, output[-3000:]
    assert "complete: no search" in output and not report.exists() and wait_no_iperf(PREFIX, HOSTS) == []


def reshape(lab: Lab, server_rate: str) -> None:
    """The server h1's link (both directions) at ``server_rate``, the others at 100 Mbit/s."""
    lab.cli(
        "up", "--hosts", "2", "--subnet", f"{SUBNET}.0/24", "--rate", "100mbit", "--host-rate", f"h1={server_rate}",
        "--ethernet-overhead",
    )  # fmt: skip


@pytest.mark.full
@pytest.mark.serial  # a UDP rate against the shaped link: another lab's load on the 2 cores costs trials packets
def test_every_rfc2544_frame_size(lab: Lab, tmp_path: Path) -> None:
    """64 to 1518 bytes into a 4 Mbit/s link (5952 frames/s at 64 B: few enough for a loaded 2-core machine's
    iperf3 to receive without losing any itself)."""
    resolution = 0.1
    reshape(lab, "4mbit")
    try:
        play, report = search(
            lab, tmp_path, rate_search_frame_sizes=[64, 128, 256, 512, 1024, 1280, 1518], rate_search_max_mbps=6,
            rate_search_min_mbps=2, rate_search_resolution_mbps=resolution, rate_search_trial_seconds=2,
        )  # fmt: skip
        assert play.returncode == 0, (play.stdout + play.stderr)[-4000:]
        doc = json.loads((report / "rate-search.json").read_text())
        for row in doc["results"]:
            check_found(row, resolution, link=4.0, seconds=2)
        assert (report / "rate-search-mbps.png").stat().st_size > 1000
        assert (report / "rate-search-pps.png").stat().st_size > 1000
    finally:
        reshape(lab, "50mbit")


@pytest.mark.full
@pytest.mark.serial  # a UDP rate against the shaped link: another lab's load on the 2 cores costs trials packets
def test_the_loss_threshold_where_the_excess_is_dropped(lab: Lab, tmp_path: Path) -> None:
    """The link into h1 with a queue of 32 frames (a switch port's, not tbf's 1 MB): above the limit c the excess is
    dropped, so a trial at r > c loses about (r - c) / r of its packets - real loss, counted by iperf. With 10 %
    allowed the search passes rates above c, up to about (c + what the queue and tbf's bucket hold) / 0.9, with
    the loss at the found rate above 0 and at most 10 %, and the next rate tried above it over 10 %."""
    queue, seconds, frame = 32 * 1538, 2, 1518
    burst = tbf_burst(int(LIMIT_MBPS * 1e6), 1500)
    short_queue = ["tc", "qdisc", "change", "dev", f"{PREFIX}-v1", "root", "tbf", "rate", f"{int(LIMIT_MBPS)}mbit",
                   "burst", str(burst), "limit", str(queue), "overhead", "24"]  # fmt: skip
    subprocess.run(short_queue, check=True, timeout=10)
    try:
        play, report = search(
            lab, tmp_path, rate_search_frame_sizes=[frame], rate_search_max_mbps=80, rate_search_loss_percent=10,
            rate_search_resolution_mbps=1, rate_search_trial_seconds=seconds,
        )  # fmt: skip
        assert play.returncode == 0, (play.stdout + play.stderr)[-4000:]
        row = json.loads((report / "rate-search.json").read_text())["results"][0]
        held = (queue + burst) * 8 / seconds / 1e6 * frame / (frame + 20)  # Mbit/s of frames over a trial
        top = (limit_mbps(frame) + held) / 0.9
        assert limit_mbps(frame) < row["rate_mbps"] <= top * 1.01, (top, trials_text(row))
        assert row["lost_packets"] > 0 and 0 < row["loss_percent"] <= 10, trials_text(row)
        above = next(t for t in row["trials"] if t["rate_mbps"] == row["above_mbps"])
        assert above["verdict"] == "loss" and above["loss_percent"] > 10, trials_text(row)
    finally:
        reshape(lab, "50mbit")  # tbf's own queue again
