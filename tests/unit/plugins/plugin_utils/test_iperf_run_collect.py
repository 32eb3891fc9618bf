# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``iperf_run mode=collect`` (external peers): splitting a server's log into its client tests, the wait,
and the whole flow against a real shell with a stand-in server process.

The server logs are real: ``tests/fixtures/iperf/*-3-clients-*-locallab.txt`` were recorded on the lab
(three client tests each; see that README), the others come from the corpus.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.action.iperf_run import ARGUMENT_SPEC as SPEC
from ansible_collections.esxilab.iperf.plugins.plugin_utils import iperf_run as r
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf2_text import split_iperf2_by_peer
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.collect import (
    build_poll_script,
    server_tests,
    wait_for_clients,
)
from tests.collection_path import FIXTURES

TOKEN = "0123abcd"
IPERF3_LOG = (FIXTURES / "iperf3-3.12-text-server-tcp-3-clients-P2-cut-locallab.txt").read_text()
IPERF2_LOG = (FIXTURES / "iperf2-2.1.8-text-server-tcp-3-clients-P2-concurrent-locallab.txt").read_text()
PEER = "198.19.181.12"
# The recorded iperf3 log up to the third test's intervals: what a live server's log holds 2.5 s into it.
IPERF3_LIVE = IPERF3_LOG[: IPERF3_LOG.index("iperf3: interrupt")]
# ... and after its first test (the banner of the second printed, nobody connected yet).
IPERF3_ONE = IPERF3_LOG[: IPERF3_LOG.index("Accepted connection from 198.19.181.12, port 37174")]


def mib(printed: float) -> int:
    return round(printed * 2**20)


# ------------------------------------------------------------------------------------------
# The log split into client tests
# ------------------------------------------------------------------------------------------


def test_the_recorded_iperf3_log_holds_three_tests_the_last_cut() -> None:
    tests = server_tests(IPERF3_LOG, exited=True)
    assert [(t.index, t.peer, t.counted, t.ended) for t in tests] == [(i, PEER, True, True) for i in (1, 2, 3)]
    first, second, third = (t.result for t in tests)
    assert all(t["side"] == "server" and t["tool"] == "iperf3" for t in (first, second, third))
    # the server's received totals, as printed ("229 MBytes 958 Mbits/sec receiver")
    assert (first["received"]["bytes"], first["bits_per_second"], first["streams"]) == (mib(229), 958e6, 1)
    assert (second["received"]["bytes"], second["bits_per_second"], second["streams"]) == (mib(229), 958e6, 2)
    assert second["remote"] == {"host": PEER, "port": 37176}  # its first data stream
    assert third["error"] == "interrupt - the server has terminated" and third["complete"] is False
    # each result keeps its own piece of the log, banner first
    assert first["raw"].lstrip("-\n").startswith("Server listening on 25811 (test #1)")
    assert "(test #2)" in second["raw"] and "(test #1)" not in second["raw"]
    assert "".join(t.result["raw"] for t in tests) == IPERF3_LOG


def test_a_live_log_tells_ended_tests_from_the_running_one() -> None:
    assert [t.ended for t in server_tests(IPERF3_LIVE, exited=False)] == [True, True, False]
    assert [t.ended for t in server_tests(IPERF3_ONE, exited=False)] == [True]  # the next banner is no test
    assert [t.ended for t in server_tests(IPERF3_LIVE, exited=True)] == [True, True, True]


def test_iperf2_sums_connections_that_overlap_into_one_test() -> None:
    tests = server_tests(IPERF2_LOG, exited=False)
    assert [(t.peer, t.ended, t.result["streams"]) for t in tests] == [(PEER, True, n) for n in (1, 2, 2)]
    # the third test: two single-stream clients at the same time, one [SUM] from the server
    assert tests[2].result["received"]["bits_per_second"] == 960e6


TWO_ADDRESSES = (FIXTURES / "iperf2-2.1.8-text-server-tcp-2-clients-concurrent-2-addresses-locallab.txt").read_text()


def test_iperf2_clients_from_two_addresses_at_once_are_told_apart() -> None:
    h3, h2 = server_tests(TWO_ADDRESSES, exited=False)  # in the order they connected
    assert (h3.peer, h3.result["streams"], h3.result["received"]["bits_per_second"]) == ("198.19.187.13", 1, 333e6)
    # the server's one [SUM] is h2's: its two streams (78.1 + 74.1 MBytes)
    assert (h2.peer, h2.result["streams"], h2.result["received"]["bits_per_second"]) == ("198.19.187.12", 2, 629e6)
    assert h2.result["received"]["bytes"] == mib(152)
    assert "198.19.187.13" not in h2.result["raw"] and "[SUM]" not in h3.result["raw"]
    assert h3.ended and h2.ended and h3.result["complete"] and h2.result["complete"]


def test_iperf2_sums_that_could_belong_to_several_addresses_are_not_split() -> None:
    # constructed from the recorded lines: h3 with a second stream, so both addresses have several and the
    # [SUM] line could be either's - the test stays whole (one result, as the server printed it)
    lines = TWO_ADDRESSES.splitlines()
    extra = lines[4].replace("[  1]", "[  4]").replace("port 32786", "port 32790")
    text = "\n".join([*lines[:5], extra, *lines[5:]]) + "\n"
    assert split_iperf2_by_peer(text) == [text]
    assert split_iperf2_by_peer(IPERF2_LOG) == [IPERF2_LOG]  # one address: whole
    assert len(split_iperf2_by_peer(TWO_ADDRESSES)) == 2


def test_tests_from_another_peer_are_not_counted() -> None:
    assert [t.counted for t in server_tests(IPERF3_LOG, exited=True, peer="198.19.181.99")] == [False] * 3
    assert [t.counted for t in server_tests(IPERF3_LOG, exited=True, peer=PEER)] == [True] * 3
    mapped = IPERF3_LOG.replace("connection from 198.19.181.12", "connection from ::ffff:198.19.181.12")
    assert {t.peer for t in server_tests(mapped, exited=True, peer=PEER)} == {PEER}


@pytest.mark.parametrize(
    "name",
    [
        "iperf3-3.9-text-server-listening-sigitp.txt",  # only the banner
        "iperf3-3.1.3-windows-text-server-listening.txt",
        "iperf3-3.0or3.1-text-server-error-unable-to-receive-parameters-too-many-errors-issue445.txt",  # probes
    ],
)
def test_a_log_without_a_client_has_no_test(name: str) -> None:
    assert server_tests((FIXTURES / name).read_text(), exited=True) == []


def test_an_empty_or_foreign_log_has_no_test() -> None:
    assert server_tests("", exited=False) == []
    assert server_tests("no iperf here\n", exited=True) == []


# ------------------------------------------------------------------------------------------
# The wait, with canned reads of the log and a fake clock
# ------------------------------------------------------------------------------------------


class Polls:
    """Answers the poll script with the next (alive, log) and keeps a fake clock."""

    def __init__(self, *reads: tuple[bool, str]) -> None:
        self.reads = list(reads)
        self.clock = 1000.0
        self.polls = 0
        self.served = 0  # bytes of the log sent to the controller

    def __call__(self, script: str) -> r.CommandOutput:
        assert " poll alive=" in script
        alive, log = self.reads[min(self.polls, len(self.reads) - 1)]
        self.polls += 1
        offset = re.search(r"_of=(\d+)", script)
        assert offset
        data = log.encode()
        start = int(offset.group(1)) if int(offset.group(1)) <= len(data) else 0
        chunk = data[start:].decode()
        self.served += len(chunk)
        poll = f"poll alive={int(alive)} pidfile=1 log=1 size={len(data)} from={start}"
        out = f"\n{r.MARKER}{TOKEN} state status=ok error= uid=0\n\n{r.MARKER}{TOKEN} {poll}\n{chunk}"
        return r.CommandOutput(0, out + f"\n{r.MARKER}{TOKEN} done\n", "")

    def sleep(self, seconds: float) -> None:
        self.clock += seconds


def _wait(host: Polls, clients: int, deadline: float, peer: str | None = None) -> Any:
    return wait_for_clients(
        host, token=TOKEN, state_dir="/tmp", port=5201, bind=None, clients=clients, deadline=deadline,
        peer=peer, now=lambda: host.clock, sleep=host.sleep,
    )  # fmt: skip


def test_the_wait_ends_when_the_clients_came() -> None:
    host = Polls((True, ""), (True, IPERF3_ONE), (True, IPERF3_LIVE), (True, IPERF3_LOG))
    waited = _wait(host, clients=2, deadline=60)
    assert (waited.reason, waited.polls, waited.waited, waited.alive) == ("all_came", 3, 2.0, True)
    assert waited.log == IPERF3_LIVE


def test_the_wait_ends_at_the_deadline_with_fewer_clients() -> None:
    host = Polls((True, ""), (True, IPERF3_ONE))
    waited = _wait(host, clients=2, deadline=4.5)
    # reads at 0, 1, 2, 3, 4 and the last one at the deadline itself
    assert (waited.reason, waited.polls, waited.waited) == ("deadline", 6, 4.5)


def test_the_wait_ends_when_the_server_exits() -> None:
    host = Polls((True, ""), (False, IPERF3_ONE))  # iperf3 --one-off after its test
    assert (_wait(host, clients=1, deadline=60).reason, host.polls) == ("all_came", 2)
    host = Polls((True, ""), (False, ""))  # died without a client
    assert _wait(host, clients=1, deadline=60).reason == "server_exited"


def test_a_client_from_elsewhere_does_not_end_the_wait() -> None:
    host = Polls((True, IPERF3_LOG))
    assert _wait(host, clients=1, deadline=3, peer="198.19.181.99").reason == "deadline"


# ------------------------------------------------------------------------------------------
# The whole flow on a real shell, a stand-in server process and the recorded log
# ------------------------------------------------------------------------------------------


class Server:
    """A process whose command line is ``<tmp>/bin/iperf3 -s -p PORT``, with its pidfile and log in the private dir."""

    def __init__(self, tmp: Path, port: int, log: str) -> None:
        self.base = tmp / "state"
        self.base.mkdir()
        self.base.chmod(0o1777)
        self.private = self.base / f"esxilab-iperf-{os.getuid()}"
        self.private.mkdir(mode=0o700)
        fake = tmp / "bin" / "iperf3"
        fake.parent.mkdir()
        fake.write_text("#!/bin/sh\nsleep 30\n")
        fake.chmod(0o755)
        self.proc = subprocess.Popen([str(fake), "-s", "-p", str(port)], start_new_session=True)
        time.sleep(0.2)
        pidfile = f"pid={self.proc.pid}\nguard=\ntool=iperf3\nport={port}\nbind=\nbinary={fake}\n"
        (self.private / f"esxilab-iperf-{port}.pid").write_text(pidfile)
        (self.private / f"esxilab-iperf-{port}.log").write_text(log)

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, 9)
        self.proc.wait(timeout=10)


@pytest.fixture
def server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Server]:
    the_server = Server(tmp_path, 15871, request.param)
    try:
        yield the_server
    finally:
        the_server.close()


def sh(script: str) -> r.CommandOutput:
    out = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, timeout=30, check=False)
    return r.CommandOutput(out.returncode, out.stdout, out.stderr)


def collect(server: Server, **values: Any) -> dict[str, Any]:
    full: dict[str, Any] = {name: spec.get("default") for name, spec in SPEC.items()}
    full.update(mode="collect", port=15871, state_dir=str(server.base), **values)
    result: dict[str, Any] = r.run(
        full, sh, spec=SPEC, check_mode=False, token=TOKEN, now=time.monotonic, sleep=time.sleep
    )
    return result


@pytest.mark.parametrize("server", [IPERF3_LIVE], indirect=True)
def test_collect_stops_the_server_and_returns_what_it_measured(server: Server) -> None:
    result = collect(server, clients=2, deadline=20, peer=PEER, labels={"test": "win"})
    assert (result["reason"], result["came"], result["server_stop"]) == ("all_came", 3, "stopped")
    assert result["changed"] is True
    assert server.proc.wait(timeout=10) is not None  # stopped by the stop flow's own checks
    assert list(server.private.glob("*.pid")) == []
    assert [(t["index"], t["counted"], t["extra"], t["ended"]) for t in result["tests"]] == [
        (1, True, False, True), (2, True, False, True), (3, True, True, False),
    ]  # fmt: skip
    assert all(t["result"]["labels"] == {"test": "win"} and t["result"]["side"] == "server" for t in result["tests"])
    assert result["raw"] == IPERF3_LIVE
    assert any("3 client tests came, 2 were expected" in w for w in result["warnings"])
    assert any("client test 3 from 198.19.181.12 was still running" in w for w in result["warnings"])


@pytest.mark.parametrize("server", [IPERF3_ONE], indirect=True)
def test_collect_waits_until_the_deadline_for_a_missing_client(server: Server) -> None:
    started = time.monotonic()
    result = collect(server, clients=2, deadline=1.5)
    assert time.monotonic() - started >= 1.5
    assert (result["reason"], result["came"], result["server_stop"]) == ("deadline", 1, "stopped")
    assert result["polls"] >= 2
    assert [w for w in result["warnings"] if "1 of 2 external client test(s) came within the deadline" in w]
    (only,) = result["tests"]
    assert only["ended"] and only["result"]["bits_per_second"] == 958e6


@pytest.mark.parametrize("server", [""], indirect=True)
def test_collect_in_check_mode_waits_for_nothing(server: Server) -> None:
    full: dict[str, Any] = {name: spec.get("default") for name, spec in SPEC.items()}
    full.update(mode="collect", port=15871, clients=1, deadline=5, state_dir=str(server.base))
    result = r.run(full, sh, spec=SPEC, check_mode=True, token=TOKEN, now=time.monotonic, sleep=time.sleep)
    assert result["skipped"] and server.proc.poll() is None


def test_the_poll_script_reads_only_and_sees_a_foreign_pid_as_gone(tmp_path: Path) -> None:
    server = Server(tmp_path, 15872, "Server listening on 15872\n")
    try:
        out = sh(build_poll_script(TOKEN, state_dir=str(server.base), port=15872, bind=None))
        (poll,) = [s for s in r.parse_sections(out.stdout, TOKEN) if s.name == "poll"]
        assert (poll.args, poll.text) == ("alive=1 pidfile=1 log=1 size=26 from=0", "Server listening on 15872\n")
        # the pidfile now names a process that is not our server: not alive, and nothing is killed
        other = subprocess.Popen(["sleep", "30"])
        try:
            (server.private / "esxilab-iperf-15872.pid").write_text(f"pid={other.pid}\nbinary=/usr/bin/iperf3\n")
            out = sh(build_poll_script(TOKEN, state_dir=str(server.base), port=15872, bind=None))
            assert "alive=0" in out.stdout and other.poll() is None and server.proc.poll() is None
        finally:
            other.kill()
            other.wait(timeout=10)
    finally:
        server.close()


@pytest.mark.parametrize(
    ("values", "needle"),
    [
        ({"mode": "collect", "deadline": 5}, "clients"),
        ({"mode": "collect", "clients": 1, "deadline": 0}, "deadline must be more than 0 and at most 86400 seconds"),
        ({"mode": "collect", "clients": 0, "deadline": 5}, "clients must be at least 1"),
        ({"mode": "collect", "clients": 1, "deadline": 5, "peer": "-x"}, "peer='-x' is not a host name"),
        ({"mode": "collect", "clients": 1, "deadline": 5, "duration": 3}, "duration (mode=client)"),
        ({"mode": "server", "clients": 1}, "clients (mode=collect)"),
    ],
)
def test_collect_options_are_checked(values: dict[str, Any], needle: str) -> None:
    full: dict[str, Any] = {name: spec.get("default") for name, spec in SPEC.items()}
    full.update(values)
    if "clients" not in values:  # what Ansible's required_if refuses before the backend
        assert ["mode", "collect", ["clients", "deadline"]] in r.REQUIRED_IF
        return
    with pytest.raises(r.IperfRunError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        r.validate_params(full, SPEC)


# ------------------------------------------------------------------------------------------
# Incremental reads (issue 21): a poll costs the bytes the log gained, the log is parsed rarely
# ------------------------------------------------------------------------------------------


def _many_tests(count: int) -> str:
    """A server log of ``count`` client tests: the recorded first test, then the recorded second (-P 2) again and
    again, each under its own banner number, then the banner after the last one (it has ended)."""
    first, second = (str(t.result["raw"]) for t in server_tests(IPERF3_LOG, exited=True)[:2])
    again = [second.replace("(test #2)", f"(test #{n})") for n in range(2, count + 1)]
    banner = second[: second.index("Accepted connection")].replace("(test #2)", f"(test #{count + 1})")
    return first + "".join(again) + banner


def test_a_poll_reads_only_the_new_bytes_and_the_log_is_parsed_twice() -> None:
    log = _many_tests(150)  # 220 kB
    step = 2000  # bytes the log gains per poll (a live -P 2 test with interval reports: ~1 kB/s)
    host = Polls(*[(True, log[:end]) for end in range(step, len(log) + step, step)])
    waited = _wait(host, clients=150, deadline=10_000)
    assert (waited.reason, waited.log) == ("all_came", log)
    assert waited.polls == -(-len(log) // step)  # 111 polls
    assert host.served == len(log)  # every byte crossed once: O(new bytes) per poll
    # parsed when 150 banners had come (149 tests ended), then when the 150th ended - not once per poll
    assert waited.parses == 2


def test_an_iperf2_log_read_line_by_line_is_parsed_a_few_times() -> None:
    lines = IPERF2_LOG.splitlines(keepends=True)
    host = Polls(*[(True, "".join(lines[:n])) for n in range(1, len(lines) + 1)])
    waited = _wait(host, clients=3, deadline=10_000)
    # the third test's totals came before the log's last lines
    assert waited.reason == "all_came" and IPERF2_LOG.startswith(waited.log) and host.served == len(waited.log)
    assert waited.polls == len(waited.log.splitlines()) and waited.parses <= 4, (waited.polls, waited.parses)


def test_a_new_log_is_read_from_its_start() -> None:
    host = Polls((True, IPERF3_LIVE), (True, IPERF3_ONE), (False, IPERF3_ONE))  # started again: a shorter log
    waited = _wait(host, clients=5, deadline=60)
    assert (waited.reason, waited.log) == ("server_exited", IPERF3_ONE)


class Absent(Polls):
    """No private directory, or neither pidfile nor log of the port: no server was ever started there."""

    def __init__(self, state: str, poll: str) -> None:
        super().__init__((False, ""))
        self.state, self.poll = state, poll

    def __call__(self, script: str) -> r.CommandOutput:
        self.polls += 1
        out = f"\n{r.MARKER}{TOKEN} state {self.state}\n" + (f"\n{r.MARKER}{TOKEN} {self.poll}\n" if self.poll else "")
        return r.CommandOutput(0, out + f"\n{r.MARKER}{TOKEN} done\n", "")


@pytest.mark.parametrize(
    ("state", "poll"),
    [
        ("status=absent error= uid=0", ""),  # nothing of ours on this host at all
        ("status=ok error= uid=0", "poll alive=0 pidfile=0 log=0 size=0 from=0"),  # not on this port
    ],
)
def test_collect_without_a_server_says_none_was_started(state: str, poll: str) -> None:
    host = Absent(state, poll)
    with pytest.raises(r.IperfRunError) as err:
        _wait(host, clients=1, deadline=60)
    assert err.value.result["error_kind"] == "no_server" and host.polls == 1
    message = err.value.message
    assert "mode=collect found no server of ours for port 5201 on this host" in message
    assert "/tmp/esxilab-iperf-0" in message and "Start one first with an esxilab.iperf.iperf_run task mode=server" in (
        message
    )
    assert "exited" not in message


def test_a_one_off_server_that_already_exited_is_collected() -> None:
    host = Absent("status=ok error= uid=0", "poll alive=0 pidfile=0 log=1 size=0 from=0")  # its log is there
    assert _wait(host, clients=1, deadline=60).reason == "server_exited"


def test_the_poll_script_reads_from_the_offset(tmp_path: Path) -> None:
    server = Server(tmp_path, 15873, IPERF3_ONE)
    size = len(IPERF3_ONE.encode())
    try:
        for offset, start in ((0, 0), (100, 100), (size, size), (size + 5, 0)):  # beyond the end: a new log
            out = sh(build_poll_script(TOKEN, state_dir=str(server.base), port=15873, bind=None, offset=offset))
            (poll,) = [s for s in r.parse_sections(out.stdout, TOKEN) if s.name == "poll"]
            assert poll.args == f"alive=1 pidfile=1 log=1 size={size} from={start}"
            assert poll.text == IPERF3_ONE[start:]
    finally:
        server.close()
