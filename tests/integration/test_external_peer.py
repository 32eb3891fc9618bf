# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""External peer (single-ended) mode of the paired_test role, for real, on the local lab.

A pair ``{server: h1, external: {count, deadline, from}}`` has no client in the inventory: the role
starts the server on h1 and waits (``iperf_run mode=collect``). While ``ansible-playbook`` waits,
THIS test plays the person with ``iperf3.exe``: a thread runs the clients outside Ansible
(``ip netns exec <prefix>-h2 iperf3 -c <h1> ...``), each bounded by ``timeout``. The role's record
must hold what the server measured (``measured_by: server``, ``side: server``), equal to what the
client's own output says within the usual difference between the two ends, and no iperf of ours may
be left on the hosts afterwards.

Lab: prefix ``per`` (env ``ESXILAB_PEER_PREFIX``), 3 hosts on 198.19.180.0/24 (env
``ESXILAB_PEER_SUBNET``), 1 Gbit/s tbf per host.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

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

pytestmark = [pytest.mark.lab, pytest.mark.slow]

PREFIX = os.environ.get("ESXILAB_PEER_PREFIX", "per")
SUBNET = os.environ.get("ESXILAB_PEER_SUBNET", "198.19.180")
HOSTS = ("h1", "h2", "h3")
ADDRESS = {f"h{i}": f"{SUBNET}.{10 + i}" for i in range(1, 4)}
PORT = 25801
PLAY_TIMEOUT = 180
CLIENT_SECONDS = 2
# A client waits at most this long for the server to listen (the role's preflight comes first).
LISTEN_WAIT = 90.0


def _run(argv: Sequence[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)


def _netns(host: str) -> str:
    return f"{PREFIX}-{host}"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    skip_if(lab_unavailable(("ip", "tc", "ssh", "iperf3", "iperf", "timeout")))
    the_lab = Lab(PREFIX, tmp_path_factory.mktemp("per") / "state", timeout=120)
    with the_lab.session("--hosts", "3", "--subnet", f"{SUBNET}.0/24", "--rate", "1gbit"):
        yield the_lab


# --------------------------------------------------------------------------------------------
# The person at the other end: clients started outside Ansible
# --------------------------------------------------------------------------------------------


@dataclass
class Person:
    """Runs ``count`` clients from h2, one after the other, once the server on h1 listens; or, with
    ``together``, one client from each of ``hosts`` at the same time."""

    tool: str
    count: int
    argv_extra: Sequence[str] = ()
    hosts: Sequence[str] = ("h2",)
    together: bool = False
    outputs: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    thread: threading.Thread | None = None

    def argv(self, host: str) -> list[str]:
        binary = "iperf3" if self.tool == "iperf3" else "iperf"
        form = ["-J"] if self.tool == "iperf3" else ["-f", "b"]
        command = [binary, "-c", ADDRESS["h1"], "-p", str(PORT), "-t", str(CLIENT_SECONDS), *form, *self.argv_extra]
        return ["timeout", "-k", "2", str(CLIENT_SECONDS + 20), "ip", "netns", "exec", _netns(host), *command]

    def _one(self, host: str = "h2") -> None:
        # the server serves one iperf3 test at a time: right after a test it may still say "busy"
        for _attempt in range(10):
            proc = _run(self.argv(host), CLIENT_SECONDS + 30)
            text = proc.stdout
            if proc.returncode == 0 and "busy" not in text and "error" not in text.lower()[:2000]:
                self.outputs.append(text)
                return
            time.sleep(0.5)
        self.problems.append(f"the client failed 10 times: {proc.stdout[-500:]} {proc.stderr[-500:]}")

    def _work(self) -> None:
        end = time.monotonic() + LISTEN_WAIT
        while not listening(_netns("h1"), PORT) and time.monotonic() < end:
            time.sleep(0.2)
        if not listening(_netns("h1"), PORT):
            self.problems.append(f"the server never listened on {ADDRESS['h1']}:{PORT} within {LISTEN_WAIT} s")
            return
        if self.together:
            # one output per host, in the order of hosts (the threads append in any order)
            results: dict[str, list[str]] = {host: [] for host in self.hosts}
            threads = [threading.Thread(target=self._together, args=(host, results[host])) for host in self.hosts]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=CLIENT_SECONDS + 40)
            self.outputs.extend(text for host in self.hosts for text in results[host])
            return
        for _number in range(self.count):
            self._one()
            time.sleep(0.5)  # the server logs the end of one test before the next begins

    def _together(self, host: str, out: list[str]) -> None:
        proc = _run(self.argv(host), CLIENT_SECONDS + 30)
        if proc.returncode == 0:
            out.append(proc.stdout)
        else:
            self.problems.append(f"the client on {host} failed: {proc.stdout[-500:]} {proc.stderr[-500:]}")

    def start(self) -> None:
        self.thread = threading.Thread(target=self._work, daemon=True)
        self.thread.start()

    def join(self) -> None:
        assert self.thread is not None
        self.thread.join(timeout=LISTEN_WAIT + self.count * (CLIENT_SECONDS + 40))
        assert not self.thread.is_alive(), "the client thread did not end"


def client_received_bytes(tool: str, output: str) -> int:
    """What the client's own output says the server received (iperf3 -J) or the client sent (iperf2 -f b)."""
    if tool == "iperf3":
        return int(json.loads(output)["end"]["sum_received"]["bytes"])
    # iperf2 client, -f b: "[  1] 0.0000-2.0152 sec  246415360 Bytes  978226862 bits/sec" (the total starts at 0)
    totals = re.findall(r"^\[\s*(?:\d+|SUM)\]\s+0\.0+-\s*[\d.]+ sec\s+(\d+) Bytes\s+(\d+) bits/sec", output, re.M)
    assert totals, output
    return int(totals[-1][0])


# --------------------------------------------------------------------------------------------
# Running the role
# --------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    rc: int
    output: str
    report: dict[str, Any] | None
    report_dir: Path | None
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


def _play(lab: Lab, tmp: Path, test: dict[str, Any], person: Person | None) -> Outcome:
    variables = paired_test_vars(tmp, [test])
    if person is not None:
        person.start()
    proc = run_playbook("-i", lab.inventory, PAIRED_TEST_PLAYBOOK, "-e", f"@{variables}", timeout=PLAY_TIMEOUT)
    if person is not None:
        person.join()
    found = sorted(p for p in (tmp / "reports").glob("report-*")) if (tmp / "reports").exists() else []
    report = json.loads((found[0] / "results.json").read_text()) if found else None
    return Outcome(proc.returncode, proc.stdout + proc.stderr, report, found[0] if found else None, tmp / "remote")


def _external_test(
    tool: str, count: int, deadline: float, *, peer: str | None = ADDRESS["h2"], **extra: Any
) -> dict[str, Any]:
    pair = {"server": "h1", "port": PORT, "external": {"count": count, "deadline": deadline, "from": peer}}
    return {"name": f"external-{tool}-{count}", "tool": tool, "duration": CLIENT_SECONDS, "pairs": [pair], **extra}


def _assert_stopped(outcome: Outcome) -> None:
    assert wait_no_iperf(PREFIX, HOSTS) == [], "an iperf process of ours is still running"
    assert sorted(p.name for p in outcome.state_dir.rglob("*.pid")) == []


def _assert_server_measured(pair: dict[str, Any], tool: str, client_output: str, host: str = "h2") -> None:
    assert pair["measured_by"] == "server" and pair["client"] == "external"
    assert pair["sender"] == f"external {ADDRESS[host]}" and pair["receiver"] == "h1"
    result = pair["result"]
    assert (result["tool"], result["side"], result["format"]) == (tool, "server", "text")
    assert result["remote"]["host"] == ADDRESS[host]
    assert "Server listening" in result["raw"] or "listening" in result["raw"]  # the server's own piece of its log
    # the headline is the server's received figure, and it equals what the client says within the
    # rounding of the server's text (3 significant digits) and the ends' different clocks
    assert result["bits_per_second"] == result["received"]["bits_per_second"]
    client_bytes = client_received_bytes(tool, client_output)
    assert result["received"]["bytes"] == pytest.approx(client_bytes, rel=0.02), (result["received"], client_bytes)
    assert result["received"]["seconds"] == pytest.approx(CLIENT_SECONDS, abs=0.3)
    rate = client_bytes * 8 / CLIENT_SECONDS
    assert result["bits_per_second"] == pytest.approx(rate, rel=0.06), (result["bits_per_second"], rate)


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", ["iperf3", "iperf2"])
@pytest.mark.parametrize("count", [1, 2])
def test_external_clients_are_measured_by_the_server(lab: Lab, tmp_path: Path, tool: str, count: int) -> None:
    person = Person(tool, count)
    outcome = _play(lab, tmp_path, _external_test(tool, count, deadline=60), person)
    assert person.problems == [], person.problems
    assert outcome.rc == 0, outcome.output[-4000:]
    (run,) = outcome.records
    assert len(run["pairs"]) == count and len(person.outputs) == count
    for index, (pair, output) in enumerate(zip(run["pairs"], person.outputs, strict=True), start=1):
        assert pair["ok"], pair["error"]
        assert pair["external"]["index"] == index and pair["external"]["came"] == count
        assert pair["external"]["reason"] == "all_came" or (tool == "iperf3" and count == 1)
        _assert_server_measured(pair, tool, output)
    # one-off iperf3 server (count 1) ends by itself; the others are stopped once every client came
    expected_stop = "exited" if (tool, count) == ("iperf3", 1) else ("stopped", "killed")
    assert all(p["server_stop"] in expected_stop for p in run["pairs"]), [p["server_stop"] for p in run["pairs"]]
    if count > 1:
        assert run["total_bits_per_second"] is None  # one after the other: no total
        assert any("one after the other" in w for w in run["warnings"])
    else:
        assert run["total_bits_per_second"] == pytest.approx(sum(p["result"]["bits_per_second"] for p in run["pairs"]))
    # the play told the person what to run, before it waited
    binary = "iperf3" if tool == "iperf3" else "iperf"
    assert (
        f"on the external host run (iperf3.exe on Windows takes the same arguments): {binary} -c {ADDRESS['h1']} "
        f"-p {PORT} -t {CLIENT_SECONDS} -P 1" in " ".join(outcome.output.split())
    )
    assert outcome.report_dir is not None
    summary = (outcome.report_dir / "summary.md").read_text()
    assert "measured by the server" in summary
    _assert_stopped(outcome)


def test_iperf2_clients_from_two_hosts_at_the_same_time_add_up(lab: Lab, tmp_path: Path) -> None:
    """The server logs them as one test; the record tells them apart by address, and their rates add up."""
    person = Person("iperf2", 2, hosts=("h2", "h3"), together=True)
    outcome = _play(lab, tmp_path, _external_test("iperf2", 2, deadline=60, peer=None), person)
    assert person.problems == [], person.problems
    assert outcome.rc == 0, outcome.output[-4000:]
    (run,) = outcome.records
    by_host = {pair["sender"]: pair for pair in run["pairs"]}
    assert set(by_host) == {f"external {ADDRESS['h2']}", f"external {ADDRESS['h3']}"}
    for host, output in zip(("h2", "h3"), person.outputs, strict=True):
        pair = by_host[f"external {ADDRESS[host]}"]
        assert pair["ok"] and pair["external"]["group"] == 1, pair
        # the two share a 1 Gbit/s link into h1: each its own share, as its client says
        client_bytes = client_received_bytes("iperf2", output)
        assert pair["result"]["received"]["bytes"] == pytest.approx(client_bytes, rel=0.02)
        _assert_server_measured(pair, "iperf2", output, host)
    total = run["total_bits_per_second"]
    assert total == pytest.approx(sum(p["result"]["bits_per_second"] for p in run["pairs"]))
    assert total == pytest.approx(1e9 * 1448 / 1514, rel=0.08)  # together they fill h1's link
    _assert_stopped(outcome)


def test_fewer_clients_than_asked_by_the_deadline(lab: Lab, tmp_path: Path) -> None:
    person = Person("iperf3", 1)
    started = time.monotonic()
    outcome = _play(lab, tmp_path, _external_test("iperf3", 2, deadline=15), person)
    seconds = time.monotonic() - started
    assert person.problems == [], person.problems
    assert outcome.rc != 0  # the run failed: one client did not come
    assert "did not come" in outcome.output
    (run,) = outcome.records
    came, missing = run["pairs"]
    assert came["ok"] and came["external"]["came"] == 1 and came["external"]["reason"] == "deadline"
    _assert_server_measured(came, "iperf3", person.outputs[0])
    assert not missing["ok"] and missing["result"] is None and "did not come within the deadline" in missing["error"]
    assert run["total_bits_per_second"] is None and run["failed_pairs"] == 1  # no invented second figure
    assert seconds > 15  # it waited for the second client until the deadline
    _assert_stopped(outcome)
