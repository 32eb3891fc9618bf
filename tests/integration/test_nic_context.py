# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""NIC context on the local lab: the paired_test role reads the counters of the lab's veths around its runs
(``paired_test_nic_counters``) and the report carries the deltas.

One lab for the module: prefix ``nicctx`` (env ``ESXILAB_NIC_PREFIX``), 2 hosts on 198.19.191.0/24 (env
``ESXILAB_NIC_SUBNET``), torn down with ``down --purge`` by the fixture's finalizer.

* A clean TCP run: zero drops and errors on both ends, and bytes moved (the counters were really read).
* A run with drops: h2's ``eth0`` is set to MTU 9000 while its bridge-side peer stays at 1500, so every UDP
  datagram of 3000 bytes h2 sends is dropped by the veth (``tx_dropped``); TCP (the control connection, SSH) keeps
  to the peer's MSS and is not touched. The test reads ``ip -s -j link`` of h2's ``eth0`` itself before and after
  the play: the report's ``tx_dropped`` delta of h2 is exactly that difference, and not 0.
* Where the packets went (issue 25): a tbf shaper with a tiny queue on h2's ``eth0`` drops most of a UDP stream
  above its rate - drops ``ip -s link`` does not see, ``tc -s qdisc`` does. The test reads ``tc -s qdisc`` itself
  before and after the play: the run's ``qdisc.dropped`` delta is exactly that difference, and the warning line
  ``run 1 dropped N packets on eth0 of h2 (qdisc.dropped)`` is in summary.md, report.html, results.json and the
  play's output.
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.labkit import (
    PAIRED_TEST_PLAYBOOK,
    Lab,
    ip_json,
    lab_unavailable,
    paired_test_vars,
    run_playbook,
    skip_if,
)

pytestmark = [pytest.mark.lab, pytest.mark.slow]

PLAYBOOK = PAIRED_TEST_PLAYBOOK
PREFIX = os.environ.get("ESXILAB_NIC_PREFIX", "nicctx")
SUBNET = os.environ.get("ESXILAB_NIC_SUBNET", "198.19.191")
ADDRESS = {"h1": f"{SUBNET}.11", "h2": f"{SUBNET}.12"}
PORT_BASE = 25501
PLAY_TIMEOUT = 180


def _counters(host: str) -> dict[str, int]:
    """``ip -s -j link`` of a lab host's eth0, read by the test itself (not through the collection)."""
    (link,) = ip_json("-n", f"{PREFIX}-{host}", "-s", "link", "show", "dev", "eth0")
    stats = link["stats64"]
    return {f"{d}_{k}": int(v) for d in ("rx", "tx") for k, v in stats[d].items()}


def _set_mtu(host: str, mtu: int) -> None:
    subprocess.run(["ip", "-n", f"{PREFIX}-{host}", "link", "set", "dev", "eth0", "mtu", str(mtu)],
                   check=True, timeout=10)  # fmt: skip


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    skip_if(lab_unavailable(("ip", "ssh", "iperf3"), needs="network namespaces, bridge"))
    the_lab = Lab(PREFIX, tmp_path_factory.mktemp("nicctx") / "state")
    with the_lab.session("--hosts", "2", "--subnet", f"{SUBNET}.0/24"):
        yield the_lab


def _play(
    lab: Lab, tmp: Path, tests: list[dict[str, Any]], **settings: Any
) -> tuple[subprocess.CompletedProcess[str], Path | None]:
    variables = paired_test_vars(tmp, tests, paired_test_port_base=PORT_BASE, report_history="", **settings)
    proc = run_playbook("-i", lab.inventory, PLAYBOOK, "-e", f"@{variables}", timeout=PLAY_TIMEOUT)
    found = sorted(p for p in (tmp / "reports").glob("report-*") if p.is_dir()) if (tmp / "reports").exists() else []
    return proc, found[0] if found else None


def _host_delta(run_or_span: dict[str, Any], host: str) -> dict[str, Any]:
    (nic,) = [n for n in run_or_span["nics"] if n["host"] == host]
    return dict(nic["deltas"])


def test_a_clean_run_shows_zero_drops_and_errors(lab: Lab, tmp_path: Path) -> None:
    tests = [{"name": "clean", "pairs": [{"server": "h1", "client": "h2"}], "duration": 2}]
    proc, report_dir = _play(lab, tmp_path, tests, paired_test_nic_counters="run")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    assert report_dir is not None
    document = json.loads((report_dir / "results.json").read_text())
    (run,) = document["runs"]
    assert run["nic"]["counters"] == {"rx_dropped": 0, "tx_dropped": 0, "rx_errors": 0, "tx_errors": 0}
    assert run["nic"]["warnings"] == []
    # really read: h2 sent the test's bytes, h1 received them (TCP: at least 1 MB in 2 s on a veth)
    assert _host_delta(run["nic"], "h2")["tx_bytes"] > 1_000_000
    assert _host_delta(run["nic"], "h1")["rx_bytes"] > 1_000_000
    nics = {n["host"]: n for n in document["environment"]["nics"]}
    assert nics["h1"]["interface"] == nics["h1"]["nic"] == "eth0" and nics["h1"]["speed_mbps"] == 10000
    assert nics["h2"]["address"] == ADDRESS["h2"]
    (row,) = csv.DictReader((report_dir / "results.csv").read_text().splitlines())
    assert (row["nic_rx_dropped"], row["nic_tx_dropped"], row["nic_rx_errors"], row["nic_tx_errors"]) == ("0",) * 4
    assert "## NIC counters" in (report_dir / "summary.md").read_text()


def test_dropped_datagrams_show_in_the_delta_as_ip_counts_them(lab: Lab, tmp_path: Path) -> None:
    tests = [{"name": "drops", "pairs": [{"server": "h1", "client": "h2"}], "duration": 2, "protocol": "udp",
              "length": "3000", "bandwidth": "10M"}]  # fmt: skip
    _set_mtu("h2", 9000)  # the bridge-side peer stays at 1500: it drops what h2 sends above that
    try:
        before = _counters("h2")
        proc, report_dir = _play(lab, tmp_path, tests, paired_test_continue_on_error=True)
        after = _counters("h2")
    finally:
        _set_mtu("h2", 1500)
    assert report_dir is not None, (proc.stdout + proc.stderr)[-4000:]
    independent = after["tx_dropped"] - before["tx_dropped"]
    assert independent > 0
    document = json.loads((report_dir / "results.json").read_text())
    span = document["nic"]["tests"]["drops"]
    assert (span["first_run"], span["last_run"]) == (1, 1)
    assert _host_delta(span, "h2")["tx_dropped"] == independent
    assert span["counters"]["tx_dropped"] == independent  # h1 dropped nothing
    assert span["counters"]["rx_errors"] == span["counters"]["tx_errors"] == 0
    # test mode with one run: the run has the same delta
    (run,) = document["runs"]
    assert run["nic"]["counters"]["tx_dropped"] == independent
    (row,) = csv.DictReader((report_dir / "results.csv").read_text().splitlines())
    assert row["nic_tx_dropped"] == str(independent)


def _qdisc_dropped(host: str) -> int:
    """The root qdisc's ``dropped`` of a lab host's eth0, read by the test itself (``tc -s qdisc``)."""
    text = subprocess.run(["ip", "netns", "exec", f"{PREFIX}-{host}", "tc", "-s", "qdisc", "show", "dev", "eth0"],
                          capture_output=True, text=True, check=True, timeout=10).stdout  # fmt: skip
    return int(re.findall(r"qdisc tbf .*\n Sent \d+ bytes \d+ pkt \(dropped (\d+)", text)[0])


def test_a_shaper_drops_and_the_report_says_where_the_packets_went(lab: Lab, tmp_path: Path) -> None:
    tests = [{"name": "shaped", "pairs": [{"server": "h1", "client": "h2"}], "duration": 2, "protocol": "udp",
              "bandwidth": "60M"}]  # fmt: skip
    tbf = ["ip", "netns", "exec", f"{PREFIX}-h2", "tc", "qdisc"]
    subprocess.run([*tbf, "add", "dev", "eth0", "root", "tbf", "rate", "20mbit", "burst", "10kb", "limit", "20kb"],
                   check=True, timeout=10)  # fmt: skip
    try:
        before = _qdisc_dropped("h2")
        proc, report_dir = _play(lab, tmp_path, tests, paired_test_nic_counters="run", report_html=True)
        after = _qdisc_dropped("h2")
    finally:
        subprocess.run([*tbf, "del", "dev", "eth0", "root"], check=True, timeout=10)
    assert proc.returncode == 0 and report_dir is not None, (proc.stdout + proc.stderr)[-4000:]
    independent = after - before
    assert independent > 100  # 60 Mbit/s offered into 20 Mbit/s for 2 s
    document = json.loads((report_dir / "results.json").read_text())
    (run,) = document["runs"]
    assert _host_delta(run["nic"], "h2")["qdisc.dropped"] == independent
    assert run["nic"]["counters"]["tx_dropped"] == 0  # ip -s link does not see a qdisc's drops
    lost = document["results"][0]["result"]["udp"]["lost_packets"]
    assert lost > 0  # the receiver missed datagrams: real loss
    line = f"run 1 dropped {independent:,} packets on eth0 of h2 (qdisc.dropped)"
    assert document["nic"]["loss_warnings"] == [line]
    assert f"> **Warning:** {line}" in (report_dir / "summary.md").read_text()
    assert f"Warning: {line}" in (report_dir / "report.html").read_text()
    assert line in " ".join((proc.stdout + proc.stderr).split())  # the play's warning
