# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A server outside the inventory (a pair's ``external: {server: true}``), for real, on the local lab.

THIS test plays the Windows box with ``iperf3.exe -s``: it starts the server itself in the h1 namespace, outside
Ansible (``ip netns exec <prefix>-h1 iperf3 -s -B <h1> -p PORT -1 -J``, bounded by ``timeout``), and runs the
paired_test play limited to h2 (``--limit h2``: h1 is not touched by Ansible at all) with a pair whose only inventory
host is h2. The role's record must hold the client's own figure (``measured_by: client``), equal to what the outside
server itself measured (its own ``-J`` output, or iperf2's text read by the collection's parser) within a few %, in
both directions; a server that is not there must give a failed record without a figure and a failed play; and no
iperf process or pidfile of ours may be left behind.

Lab: prefix ``xsrv`` (env ``ESXILAB_XSRV_PREFIX``), 2 hosts on 198.19.121.0/24 (env ``ESXILAB_XSRV_SUBNET``),
1 Gbit/s tbf per host.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse
from tests.integration.labkit import (
    PAIRED_TEST_PLAYBOOK,
    Lab,
    lab_unavailable,
    listening,
    paired_test_vars,
    run_playbook,
    skip_if,
    wait_no_iperf,
)
from tests.processes import end_process

pytestmark = [pytest.mark.lab, pytest.mark.slow]

PREFIX = os.environ.get("ESXILAB_XSRV_PREFIX", "xsrv")
SUBNET = os.environ.get("ESXILAB_XSRV_SUBNET", "198.19.121")
HOSTS = ("h1", "h2", "h3")
ADDRESS = {f"h{i}": f"{SUBNET}.{10 + i}" for i in range(1, 4)}
PORT = 25901
SECONDS = 2
PLAY_TIMEOUT = 150
# The outside server's own bound: the play's preflight comes before its client (well under a minute on the lab).
SERVER_LIFETIME = 120
LISTEN_WAIT = 10.0


def _run(argv: Sequence[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)


def _netns(host: str) -> str:
    return f"{PREFIX}-{host}"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    skip_if(lab_unavailable(("ip", "tc", "ss", "ssh", "iperf3", "iperf", "timeout")))
    the_lab = Lab(PREFIX, tmp_path_factory.mktemp("xsrv") / "state", timeout=120)
    with the_lab.session("--hosts", "3", "--subnet", f"{SUBNET}.0/24", "--rate", "1gbit"):
        yield the_lab


# --------------------------------------------------------------------------------------------
# The server outside the inventory, started by this test
# --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def outside_server(tool: str, output: Path) -> Iterator[Path]:
    """An iperf server in h1's namespace, outside Ansible, writing its own output to ``output``: iperf3 serves one
    test (``-1``) with ``-J``; iperf2 (no one-off mode) serves until it is stopped here. Always ended."""
    if tool == "iperf3":
        command = ["iperf3", "-s", "-B", ADDRESS["h1"], "-p", str(PORT), "-1", "-J"]
    else:
        command = ["iperf", "-s", "-B", ADDRESS["h1"], "-p", str(PORT), "-f", "b"]
    argv = ["timeout", "-k", "2", str(SERVER_LIFETIME), "ip", "netns", "exec", _netns("h1"), *command]
    with output.open("w") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT)
    try:
        end = time.monotonic() + LISTEN_WAIT
        while not listening(_netns("h1"), PORT) and time.monotonic() < end:
            time.sleep(0.1)
        assert listening(_netns("h1"), PORT), f"the outside {tool} server did not listen: {output.read_text()[-500:]}"
        yield output
    finally:
        # -1: an iperf3 server exits after its test, given the time to write its JSON; timeout passes TERM on
        end_process(process, finish=10 if tool == "iperf3" else 0)


def server_measured(tool: str, output: str) -> tuple[int, float]:
    """``(bytes, bits_per_second)`` the outside server itself measured: what it received (forward) or sent (reverse,
    iperf3 only), from its own ``-J`` document; iperf2's text through the collection's parser."""
    if tool == "iperf3":
        doc = json.loads(output)
        reverse = bool(doc["start"]["test_start"]["reverse"])
        total = doc["end"]["sum_sent" if reverse else "sum_received"]
        return int(total["bytes"]), float(total["bits_per_second"])
    result = parse(output)
    assert result["side"] == "server", result
    received = result["received"]
    assert received is not None and received["bytes"] is not None and received["bits_per_second"] is not None
    return int(received["bytes"]), float(received["bits_per_second"])


# --------------------------------------------------------------------------------------------
# Running the role on h2 only
# --------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    rc: int
    output: str
    report: dict[str, Any] | None
    state_dir: Path

    @property
    def records(self) -> list[dict[str, Any]]:
        assert self.report is not None, self.output[-3000:]
        pairs = iter(self.report["results"])
        return [
            {
                **run["record"],
                "pairs": [{**r["record"], "result": r["result"]} for r in itertools.islice(pairs, run["pairs"])],
            }
            for run in self.report["runs"]
        ]


def _test(tool: str, direction: str) -> dict[str, Any]:
    pair = {"client": "h2", "address": ADDRESS["h1"], "port": PORT, "external": {"server": True}}
    return {"name": f"outside-{tool}-{direction}", "tool": tool, "direction": direction, "duration": SECONDS,
            "pairs": [pair]}  # fmt: skip


def _play(lab: Lab, tmp: Path, test: dict[str, Any], limit: str = "h2") -> Outcome:
    variables = paired_test_vars(tmp, [test])
    proc = run_playbook(
        "-i", lab.inventory, "--limit", limit, PAIRED_TEST_PLAYBOOK, "-e", f"@{variables}", timeout=PLAY_TIMEOUT
    )
    found = sorted((tmp / "reports").glob("report-*")) if (tmp / "reports").exists() else []
    report = json.loads((found[0] / "results.json").read_text()) if found else None
    return Outcome(proc.returncode, proc.stdout + proc.stderr, report, tmp / "remote")


def _assert_nothing_left(outcome: Outcome) -> None:
    assert wait_no_iperf(PREFIX, HOSTS) == [], "an iperf process is still running"
    assert sorted(p.name for p in outcome.state_dir.rglob("*.pid")) == []


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("tool", "direction"), [("iperf3", "forward"), ("iperf3", "reverse"), ("iperf2", "forward")])
def test_the_client_measures_against_a_server_outside_the_inventory(
    lab: Lab, tmp_path: Path, tool: str, direction: str
) -> None:
    with outside_server(tool, tmp_path / "outside-server.out") as server_output:
        outcome = _play(lab, tmp_path, _test(tool, direction))
    assert outcome.rc == 0, outcome.output[-4000:]
    (run,) = outcome.records
    (pair,) = run["pairs"]
    assert pair["ok"], pair["error"]
    outside = f"external {ADDRESS['h1']}"
    assert (pair["server"], pair["client"], pair["measured_by"]) == ("external", "h2", "client")
    expected_flow = ("h2", outside) if direction == "forward" else (outside, "h2")
    assert (pair["sender"], pair["receiver"]) == expected_flow
    assert pair["external"]["server"] is True and pair["external"]["address"] == ADDRESS["h1"]
    assert pair["server_pid"] is None and pair["server_stop"] is None  # nothing of Ansible's served
    result = pair["result"]
    assert (result["tool"], result["side"]) == (tool, "client")
    assert bool(result.get("reverse")) == (direction == "reverse")
    assert ('"sum_received"' if tool == "iperf3" else "Client connecting to") in pair["raw"]  # the client's, kept
    # the headline is the client's own, and equals what the outside server itself measured within a few %
    server_bytes, server_rate = server_measured(tool, server_output.read_text())
    print(f"{tool} {direction}: record {result['bits_per_second']:.6g} bit/s, outside server {server_rate:.6g} bit/s")
    assert result["bits_per_second"] == pytest.approx(server_rate, rel=0.05), (result["bits_per_second"], server_rate)
    figures = result["received"] or result["sent"]
    assert figures["bytes"] == pytest.approx(server_bytes, rel=0.05), (result["received"], result["sent"], server_bytes)
    assert 0.5e9 < result["bits_per_second"] < 1.0e9  # a 1 Gbit/s link, really used
    assert run["total_bits_per_second"] == result["bits_per_second"]
    # the play said where its client connects and what must run there
    said = " ".join(outcome.output.split())
    told = f"connects to {ADDRESS['h1']}:{PORT}, a server outside the inventory - it must be listening there now"
    assert told in said
    assert f"{'iperf3' if tool == 'iperf3' else 'iperf'} -s -p {PORT}" in said
    _assert_nothing_left(outcome)


def test_a_server_that_is_not_there_gives_a_failed_record_without_a_figure(lab: Lab, tmp_path: Path) -> None:
    assert not listening(_netns("h1"), PORT)
    started = time.monotonic()
    outcome = _play(lab, tmp_path, _test("iperf3", "forward"))
    assert time.monotonic() - started < PLAY_TIMEOUT
    assert outcome.rc != 0, outcome.output[-3000:]  # the run failed, so the play failed
    (run,) = outcome.records
    (pair,) = run["pairs"]
    # no figure: the client's -J document is iperf3's error only (kept as the result, its figures null)
    result = pair["result"]
    assert not pair["ok"] and (result is None or result["bits_per_second"] is None), pair
    assert result is None or (result["sent"], result["received"]) == (None, None), result
    assert run["total_bits_per_second"] is None and run["failed_pairs"] == 1
    assert "connection refused" in pair["error"].lower(), pair["error"]
    assert "the server is outside the inventory: is it running and listening" in pair["error"]
    assert "unable to connect to server" in pair["raw"]  # iperf3's own error, kept
    _assert_nothing_left(outcome)


def test_a_test_mixes_a_server_outside_with_an_inventory_pair(lab: Lab, tmp_path: Path) -> None:
    """h2 -> the outside server on h1, and h3 -> h2 (a server of the role's own): both clients start together at the
    barrier, each record is its client's, and the run's total is their sum."""
    test = _test("iperf3", "forward")
    test["pairs"].append({"server": "h2", "client": "h3", "port": PORT + 1})
    with outside_server("iperf3", tmp_path / "outside-server.out") as server_output:
        outcome = _play(lab, tmp_path, test, limit="h2,h3")
    assert outcome.rc == 0, outcome.output[-4000:]
    (run,) = outcome.records
    outside, inside = run["pairs"]
    assert outside["ok"] and inside["ok"], run["errors"]
    assert (outside["server"], outside["measured_by"], outside["server_pid"]) == ("external", "client", None)
    assert (inside["server"], inside["client"], inside.get("measured_by")) == ("h2", "h3", None)
    # a one-off iperf3 server (one test per run, issue 21) may have ended by itself before the stop
    assert inside["server_pid"] is not None and inside["server_stop"] in ("stopped", "killed", "gone", "not running")
    assert run["start_at"] is not None and inside["late_by"] is not None and outside["late_by"] is not None
    _bytes, server_rate = server_measured("iperf3", server_output.read_text())
    assert outside["result"]["bits_per_second"] == pytest.approx(server_rate, rel=0.05)
    assert run["total_bits_per_second"] == pytest.approx(
        outside["result"]["bits_per_second"] + inside["result"]["bits_per_second"]
    )
    _assert_nothing_left(outcome)
