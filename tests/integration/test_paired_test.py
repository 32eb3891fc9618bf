# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The paired_test role for real, on the local lab (``lab/esxilab_lab.py``).

One lab for the module: prefix ``pttest``, 4 hosts on 198.19.242.0/24 (inside the RFC 2544
range, apart from the ``esxilab`` demo lab and the lab tests), a temporary state dir, every
link shaped by tbf. Its finalizer runs ``down --purge`` and checks that no namespace, link or
process of the lab is left, even when a test failed. Each test runs
``tests/integration/targets/paired_test/paired_test.yml`` with its own extra vars, its own
remote state dir (pidfiles and server logs) and report dir, under a subprocess timeout.

The role writes its report through the one report builder (role ``esxilab.iperf.report``):
one directory ``report-<UTC time>/`` in the report dir. The run records the tests check are
read back from its ``results.json`` (each run's and each pair's ``record``, the result beside it).

Expected goodput on a tbf-shaped link: tbf charges the skb length, which for a full TCP
segment is the frame without preamble/FCS - MTU + 14 bytes - while TCP carries MTU - 52
payload bytes (IP 20, TCP 20, timestamps 12). So goodput = rate x 1448/1514 at MTU 1500 and
rate x 8948/9014 at MTU 9000.

The links are shaped to 100 Mbit/s, not 1 Gbit/s, so that the shaper and not the CPU decides the
goodput: on a busy 2-core CI machine a 1 Gbit/s flow through veth, bridge and tbf is CPU-bound
(measured under load: 856-943 Mbit/s for the four pairs of the ring; in CI 893 for one pair at
MTU 1500; against 956 expected), and a CPU-bound run misses the formula by more than any tolerance
that still tells MTU 1500 from 9000 (3.8 %). At 100 Mbit/s the ring moves 400 Mbit/s in all, a
tenth of the packets the ring moved at 1 Gbit/s; the tbf queue (1 MiB, 84 ms at 100 Mbit/s) keeps
the link busy through a sender's scheduling gaps. The tolerances below stay as they were.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.integration import labkit
from tests.integration.labkit import (
    ANSIBLE_PLAYBOOK,
    ip_json,
    live_cmdline,
    netns_pids,
    paired_test_vars,
    skip_if,
    wait_no_iperf,
)

pytestmark = [pytest.mark.lab, pytest.mark.slow]

PLAYBOOK = labkit.PAIRED_TEST_PLAYBOOK
PREFIX = os.environ.get("ESXILAB_PAIRED_PREFIX", "pttest")
SUBNET = os.environ.get("ESXILAB_PAIRED_SUBNET", "198.19.242")
HOSTS = ("h1", "h2", "h3", "h4")
ADDRESS = {f"h{i}": f"{SUBNET}.{10 + i}" for i in range(1, 5)}
DEAD_ADDRESS = f"{SUBNET}.250"  # in the lab subnet, held by no host: ARP gets no answer
RATE = 100_000_000  # bit/s; see the module docstring for why not 1 Gbit/s
GOODPUT_1500 = RATE * 1448 / 1514  # 95.641 Mbit/s
GOODPUT_9000 = RATE * 8948 / 9014  # 99.268 Mbit/s
PORT_BASE = 25301
PLAY_TIMEOUT = 150
# A client aimed at an address nobody holds fails when ARP gives up, ~3 s after it starts; the defects this
# catches wait for the client's timeout (duration + 30 s) or TCP's SYN retries (over 2 min)
DEAD_CLIENT_SECONDS = 15
# A host that sends one flow and receives another (the ring, RING[:2]) also sends the ACKs of the flow it
# receives through its own tbf, and those ACKs wait behind up to 84 ms of its data, which slows the other
# flow's ramp: measured at load average 3, h1 <-> h2 at once got 90.6 and 93.6 Mbit/s (-5.3 %, -2.2 %)
# where one flow alone gets 95.64 (0.0 %); load takes more (to -15 % at load average 17). A link shared by
# two pairs - the defect these tests look for - gives each at most half: SHARED_LINK_CUT sits between.
# The upper bound stays 5 % over the goodput (an iperf2 client counts what it wrote).
SHARED_LINK_CUT = 0.75


# --------------------------------------------------------------------------------------------
# The lab
# --------------------------------------------------------------------------------------------


def _tx_bytes(host: str) -> int:
    (link,) = ip_json("-n", f"{PREFIX}-{host}", "-s", "link", "show", "eth0")
    return int(link["stats64"]["tx"]["bytes"])


class Lab(labkit.Lab):
    def up(self, *host_mtu: str, rate: int = RATE) -> None:
        args = ["--hosts", "4", "--subnet", f"{SUBNET}.0/24", "--rate", f"{rate // 1_000_000}mbit"]
        for item in host_mtu:
            args += ["--host-mtu", item]
        self.cli("up", *args)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    skip_if(labkit.lab_unavailable(("ip", "tc", "ssh", "iperf3", "iperf"), probe_netns=True))
    the_lab = Lab(PREFIX, tmp_path_factory.mktemp("pttest") / "state")
    with the_lab.session():
        the_lab.up()
        yield the_lab


# --------------------------------------------------------------------------------------------
# Running the role
# --------------------------------------------------------------------------------------------


def records(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """paired_test_results as the role recorded them, from the report's results.json."""
    # the results come run after run, each run's pairs in order (run numbers repeat when the runs of
    # several calls of paired_test are reported together)
    pairs = iter(doc["results"])
    return [
        {
            **run["record"],
            "pairs": [{**r["record"], "result": r["result"]} for r in itertools.islice(pairs, run["pairs"])],
        }
        for run in doc["runs"]
    ]


@dataclass
class Outcome:
    rc: int
    output: str
    seconds: float
    report: dict[str, Any] | None  # results.json of the report directory
    state_dir: Path
    report_dir: Path | None

    @property
    def results(self) -> list[dict[str, Any]]:
        assert self.report is not None, self.output[-3000:]
        return records(self.report)


def _playbook_argv(lab: Lab, tmp: Path, tests: Sequence[dict[str, Any]], **settings: Any) -> list[str]:
    vars_file = paired_test_vars(tmp, tests, paired_test_port_base=PORT_BASE, **settings)
    return [str(ANSIBLE_PLAYBOOK), "-i", str(lab.inventory), str(PLAYBOOK), "-e", f"@{vars_file}"]


def _env(**extra: str) -> dict[str, str]:
    return labkit.ansible_env(ANSIBLE_FORKS="10", **extra)


def _outcome(tmp: Path, rc: int, output: str, seconds: float) -> Outcome:
    # the report directory and nothing else (labkit.paired_test_vars turns the history off)
    found = sorted((tmp / "reports").glob("*")) if (tmp / "reports").exists() else []
    assert len(found) <= 1, found  # one report directory per play, nothing else
    assert all(p.is_dir() and p.name.startswith("report-") for p in found), found
    report = json.loads((found[0] / "results.json").read_text()) if found else None
    return Outcome(rc, output, seconds, report, tmp / "remote", found[0] if found else None)


def _play(
    lab: Lab, tmp: Path, tests: Sequence[dict[str, Any]], env: dict[str, str] | None = None, **settings: Any
) -> Outcome:
    argv = _playbook_argv(lab, tmp, tests, **settings)
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=PLAY_TIMEOUT, check=False, env=env or _env())
    return _outcome(tmp, proc.returncode, proc.stdout + proc.stderr, time.monotonic() - started)


def _assert_clean(outcome: Outcome) -> None:
    """No iperf left on any lab host, no pidfile left, every server stopped by the always: step."""
    assert wait_no_iperf(PREFIX, HOSTS) == []
    # iperf_run keeps its pidfiles in a private esxilab-iperf-<uid> directory inside the state dir
    assert sorted(p.name for p in outcome.state_dir.rglob("*.pid")) == []
    for run in outcome.results:
        for pair in run["pairs"]:
            # killed: it needed SIGKILL after the grace (an iperf2 server whose SIGTERM reached a thread
            # not blocked in accept() ignores it); either way the stop in always: ended it. An iperf3 server
            # serves one test per run (--one-off) and may have ended by itself first: gone / not running
            one_off = str(pair["tool_version"] or "").startswith("3.")
            ended = ("stopped", "killed", "gone", "not running") if one_off else ("stopped", "killed")
            assert pair["server_stop"] in ended, (run["run"], pair)


def _pair(server: str, client: str, **extra: Any) -> dict[str, Any]:
    return {"server": server, "client": client, **extra}


RING = [_pair("h1", "h2"), _pair("h2", "h3"), _pair("h3", "h4"), _pair("h4", "h1")]


# --------------------------------------------------------------------------------------------
# Measurements
# --------------------------------------------------------------------------------------------


def test_goodput_on_a_shaped_link_is_rate_times_mss_over_frame(lab: Lab, tmp_path: Path) -> None:
    lab.up()
    outcome = _play(lab, tmp_path, [{"name": "one", "pairs": [_pair("h1", "h2")], "duration": 3}])
    assert outcome.rc == 0, outcome.output[-3000:]
    (run,) = outcome.results
    (pair,) = run["pairs"]
    assert (pair["server"], pair["client"], pair["address"], pair["port"]) == ("h1", "h2", ADDRESS["h1"], PORT_BASE)
    result = pair["result"]
    assert (result["tool"], result["side"], result["streams"], result["complete"]) == ("iperf3", "client", 1, True)
    assert result["remote"]["host"] == ADDRESS["h1"] and result["local"]["host"] == ADDRESS["h2"]
    assert result["received"]["seconds"] == pytest.approx(3.0, abs=0.1)
    assert run["total_bits_per_second"] == result["bits_per_second"] == result["received"]["bits_per_second"]
    assert abs(run["total_bits_per_second"] / GOODPUT_1500 - 1) < 0.03, run["total_bits_per_second"]
    assert isinstance(pair["started_at"], float) and run["start_at"] is None  # one pair: no barrier
    _assert_clean(outcome)
    assert outcome.report_dir is not None
    rows = (outcome.report_dir / "results.csv").read_text().splitlines()
    assert len(rows) == 2 and rows[1].startswith(f"1,one,forward,false,1,1,1,h1,h2,{ADDRESS['h1']},{PORT_BASE},")
    assert (pair["sender"], pair["receiver"]) == ("h2", "h1")  # the client sends


@pytest.mark.full  # at 1 Gbit/s a busy 2-core machine, not the shaper, may set the goodput: a quiet run only
def test_goodput_at_1_gbit_s_is_rate_times_mss_over_frame(lab: Lab, tmp_path: Path) -> None:
    rate = 1_000_000_000
    lab.up(rate=rate)
    try:
        outcome = _play(lab, tmp_path, [{"name": "one", "pairs": [_pair("h1", "h2")], "duration": 3}])
    finally:
        lab.up()
    assert outcome.rc == 0, outcome.output[-3000:]
    (run,) = outcome.results
    assert abs(run["total_bits_per_second"] / (rate * 1448 / 1514) - 1) < 0.03, run["total_bits_per_second"]
    _assert_clean(outcome)


def test_stream_sweep_plateaus_and_the_knee_is_reported(lab: Lab, tmp_path: Path) -> None:
    lab.up()
    # 1-4 streams: 8 streams of one iperf3 process fell 20 % short of the link on the 2-core machine while the other
    # test worker loaded both cores (iperf3's single thread, not the link, was the bound)
    tests = [{"name": "sweep", "pairs": [_pair("h1", "h2")], "duration": 2, "streams": [1, 2, 4]}]
    outcome = _play(lab, tmp_path, tests)
    assert outcome.rc == 0, outcome.output[-3000:]
    assert [(r["streams"], r["pairs"][0]["result"]["streams"]) for r in outcome.results] == [
        (1, 1), (2, 2), (4, 4),
    ]  # fmt: skip
    (sweep,) = outcome.report["sweeps"] if outcome.report else []
    means = {p["streams"]: p["mean"] for p in sweep["points"]}
    # the shaped link is full with one stream already: every stream count is on the plateau
    for streams, mean in means.items():
        assert abs(mean / GOODPUT_1500 - 1) < 0.05, (streams, mean)
    assert sweep["knee"] == min(s for s, m in means.items() if m >= 0.95 * max(means.values())) == 1
    assert sweep["best_bits_per_second"] == max(means.values())
    assert outcome.report_dir is not None
    summary_rows = list(csv.DictReader((outcome.report_dir / "summary.csv").read_text().splitlines()))
    assert len(summary_rows) == 3 and all(row["knee"] == "1" for row in summary_rows)
    _assert_clean(outcome)


def test_mtu_9000_against_1500_on_the_same_shaped_link(lab: Lab, tmp_path: Path) -> None:
    lab.up("h3=9000", "h4=9000")
    try:
        tests = [
            {"name": "mtu1500", "pairs": [_pair("h1", "h2")], "duration": 3},
            {"name": "mtu9000", "pairs": [_pair("h3", "h4")], "duration": 3},
        ]
        outcome = _play(lab, tmp_path, tests)
    finally:
        lab.up()
    assert outcome.rc == 0, outcome.output[-3000:]
    standard, jumbo = (r["total_bits_per_second"] for r in outcome.results)
    assert abs(standard / GOODPUT_1500 - 1) < 0.02, standard
    assert abs(jumbo / GOODPUT_9000 - 1) < 0.02, jumbo
    # the difference is the header overhead: 8948/9014 over 1448/1514 = 1.0379
    assert jumbo / standard == pytest.approx(GOODPUT_9000 / GOODPUT_1500, abs=0.015)
    _assert_clean(outcome)


def test_four_concurrent_pairs_start_together_and_are_summed(lab: Lab, tmp_path: Path) -> None:
    lab.up()
    outcome = _play(lab, tmp_path, [{"name": "ring", "pairs": RING, "duration": 3}])
    assert outcome.rc == 0, outcome.output[-3000:]
    (run,) = outcome.results
    starts = [p["started_at"] for p in run["pairs"]]
    assert max(starts) - min(starts) < 0.1, starts
    assert run["start_spread"] == pytest.approx(max(starts) - min(starts))
    assert all(abs(p["late_by"]) < 0.1 for p in run["pairs"]), [p["late_by"] for p in run["pairs"]]
    assert all(p["started_at"] >= run["start_at"] for p in run["pairs"])
    rates = [p["result"]["bits_per_second"] for p in run["pairs"]]
    assert run["total_bits_per_second"] == math.fsum(rates)
    # every host sends one flow and receives one: no two pairs share a link, each pair gets the goodput
    # less what the ACKs of the flow its sender receives take (see SHARED_LINK_CUT)
    for rate in rates:
        assert SHARED_LINK_CUT * GOODPUT_1500 < rate < 1.05 * GOODPUT_1500, rates
    # the tests ran over the four distinct pairs of hosts and ports
    assert [(p["server"], p["client"], p["port"]) for p in run["pairs"]] == [
        ("h1", "h2", PORT_BASE), ("h2", "h3", PORT_BASE + 1), ("h3", "h4", PORT_BASE + 2), ("h4", "h1", PORT_BASE + 3),
    ]  # fmt: skip
    _assert_clean(outcome)


# test name: (direction, swap_roles, sender and receiver of the last run)
DIRECTIONS = {
    "fwd": ("forward", False, "h2", "h1"),  # the client (h2) sends
    "rev": ("reverse", False, "h1", "h2"),  # -R: the server (h1) sends
    "fwd-swap": ("forward", True, "h1", "h2"),  # swapped: the client runs on h1
    "rev-swap": ("reverse", True, "h2", "h1"),  # swapped and -R
}


def test_reverse_and_swap_send_the_other_way(lab: Lab, tmp_path: Path) -> None:
    """direction x swap_roles in one play (4 tests, 6 runs): each run's sender and receiver, and the kernel's
    counters of both links against the bytes of the runs each host sent."""
    lab.up()
    tests = [
        {"name": name, "pairs": [_pair("h1", "h2")], "duration": 2, "direction": direction, "swap_roles": swap}
        for name, (direction, swap, _sender, _receiver) in DIRECTIONS.items()
    ]
    before = {h: _tx_bytes(h) for h in ("h1", "h2")}
    outcome = _play(lab, tmp_path, tests)
    after = {h: _tx_bytes(h) for h in ("h1", "h2")}
    assert outcome.rc == 0, outcome.output[-3000:]
    for name, (direction, swap, sender, receiver) in DIRECTIONS.items():
        runs = [r for r in outcome.results if r["test"] == name]
        # with swap_roles the test runs unswapped, then swapped
        assert [(r["direction"], r["swapped"]) for r in runs] == [(direction, False)] + (
            [(direction, True)] if swap else []
        ), name
        last = runs[-1]["pairs"][0]
        assert (last["sender"], last["receiver"]) == (sender, receiver), name
        assert (last["server"], last["client"]) == (("h2", "h1") if swap else ("h1", "h2")), name
        assert last["address"] == ADDRESS["h2" if swap else "h1"], name
        assert last["result"]["reverse"] is (direction == "reverse"), name
        assert last["result"]["remote"]["host"] == last["address"], name  # iperf's own view of the server
        assert last["result"]["received"]["bytes"] > 0, name
    assert len(outcome.results) == 6
    # the kernel's counters: each host's link carried the bytes of the runs it sent, plus ACKs
    expected = dict.fromkeys(("h1", "h2"), 0)
    for run in outcome.results:
        expected[run["pairs"][0]["sender"]] += run["pairs"][0]["result"]["received"]["bytes"]
    moved = sum(expected.values())
    for host in ("h1", "h2"):
        sent = after[host] - before[host]
        assert expected[host] < sent < expected[host] + 0.1 * moved, (host, sent, expected)
    _assert_clean(outcome)


@pytest.mark.parametrize(("tool", "version"), [("iperf3", "3.12"), ("iperf2", "2.1.8")])
def test_iperf2_and_iperf3(lab: Lab, tmp_path: Path, tool: str, version: str) -> None:
    lab.up()
    tests = [{"name": tool, "pairs": RING[:2], "duration": 2, "tool": tool}]
    outcome = _play(lab, tmp_path, tests)
    assert outcome.rc == 0, outcome.output[-3000:]
    (run,) = outcome.results
    for pair in run["pairs"]:
        assert (pair["result"]["tool"], pair["tool_version"], pair["result"]["side"]) == (tool, version, "client")
        # h2 serves one pair and is the client of the other: see SHARED_LINK_CUT
        rate = pair["result"]["bits_per_second"]
        assert SHARED_LINK_CUT * GOODPUT_1500 < rate < 1.05 * GOODPUT_1500, rate
    assert run["total_bits_per_second"] == math.fsum(p["result"]["bits_per_second"] for p in run["pairs"])
    assert run["start_spread"] < 0.1
    _assert_clean(outcome)


def test_every_host_has_the_results(lab: Lab, tmp_path: Path) -> None:
    """paired_test_results is a fact of every host; a later play on another host reads it."""
    lab.up()
    extra = tmp_path / "check.yml"
    extra.write_text(
        f"- ansible.builtin.import_playbook: {PLAYBOOK}\n"
        "- name: Read the results from every host\n"
        "  hosts: lab\n"
        "  gather_facts: false\n"
        "  tasks:\n"
        "    - name: Show how many runs and the total of the first\n"
        "      ansible.builtin.debug:\n"
        '        msg: "RESULTS {{ inventory_hostname }} {{ paired_test_results | length }} '
        '{{ paired_test_results[0].total_bits_per_second > 0 }} {{ paired_test_summary | length }}"\n'
    )
    argv = _playbook_argv(lab, tmp_path, [{"name": "one", "pairs": [_pair("h3", "h4")], "duration": 1}])
    argv[argv.index(str(PLAYBOOK))] = str(extra)
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=PLAY_TIMEOUT, check=False, env=_env())
    assert proc.returncode == 0, proc.stdout[-3000:]
    for host in HOSTS:
        assert f"RESULTS {host} 1 True 1" in proc.stdout


# --------------------------------------------------------------------------------------------
# Preflight
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tests", "settings", "message"),
    [
        # refusals of the Python plan, each proven by its unit test (paired/test_plan_and_record.py in tests/unit):
        # on the lab in make test-full only
        pytest.param(
            [{"name": "t", "pairs": [_pair("h1", "vm9")]}],
            {},
            "vm9 is not in the inventory; server and client are inventory host names",
            marks=pytest.mark.full,
        ),
        pytest.param(
            [{"name": "t", "pairs": [_pair("h1", "h2", port=6000), _pair("h1", "h3", port=6000)]}],
            {},
            f"test 't': pairs 1, 2 all use {ADDRESS['h1']}:6000; one server per address and port",
            marks=pytest.mark.full,
        ),
        pytest.param(
            [{"name": "t", "pairs": [_pair("h1", "h2")], "swap_roles": True}],
            {"paired_test_address_var": ""},
            "no address for the server h1; set address in the pair",
            marks=pytest.mark.full,
        ),
        # found only by probing the hosts: on the lab in make test
        (
            [{"name": "t", "pairs": [_pair("h1", "h2")]}],
            {"paired_test_binary": "/nonexistent/iperf3"},
            "no runnable iperf3 on this host (looked at /nonexistent/iperf3; found none)",
        ),
    ],
)
def test_preflight_stops_before_anything_runs(
    lab: Lab, tmp_path: Path, tests: list[dict[str, Any]], settings: dict[str, Any], message: str
) -> None:
    outcome = _play(lab, tmp_path, tests, **settings)
    assert outcome.rc != 0
    assert message in " ".join(outcome.output.split()), outcome.output[-3000:]
    assert outcome.report is None  # nothing ran, nothing was written
    assert "Start the iperf servers" not in outcome.output


# --------------------------------------------------------------------------------------------
# Failure injection
# --------------------------------------------------------------------------------------------


def test_client_aimed_at_a_dead_address_fails_clearly_and_quickly(lab: Lab, tmp_path: Path) -> None:
    lab.up()
    tests = [{"name": "dead", "pairs": [_pair("h1", "h2", address=DEAD_ADDRESS)], "duration": 3}]
    proc, started = _start_play(lab, tmp_path, tests, paired_test_server_bind=False)
    try:
        lived = _client_lifetime(proc, "h2")
    finally:
        outcome = _finish_play(proc, tmp_path, started)
    assert outcome.rc == 2
    # quickly: the client gives up when ARP does (3 unanswered probes 1 s apart, kernel timers), not at its
    # timeout (duration + 30 s = 33 s) nor TCP's SYN timeout; its own lifetime says so, the play's time does
    # not (Ansible around it took 61 s at load average 17)
    assert lived is not None and lived < DEAD_CLIENT_SECONDS, (lived, outcome.seconds)
    text = " ".join(outcome.output.split())
    assert (
        "Run 1 of 1 (dead, 1 stream(s), forward, repetition 1) failed - pair 1 (h2 -> h1): the client on h2 -> "
        f"{DEAD_ADDRESS}:{PORT_BASE} failed: the server {DEAD_ADDRESS} cannot be reached from this host "
        "(unable to connect to server: No route to host)"
    ) in text
    (run,) = outcome.results
    assert (run["ok"], run["total_bits_per_second"], run["failed_pairs"]) == (False, None, 1)
    assert run["pairs"][0]["result"]["error"] == "unable to connect to server: No route to host"
    # the report was written before the role failed; its run is marked failed
    assert outcome.report is not None and outcome.report["runs"][0]["complete"] is False
    _assert_clean(outcome)


def _start_play(
    lab: Lab, tmp: Path, tests: Sequence[dict[str, Any]], **settings: Any
) -> tuple[subprocess.Popen[str], float]:
    argv = _playbook_argv(lab, tmp, tests, **settings)
    log = (tmp / "play.log").open("w")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, text=True, env=_env())
    return proc, time.monotonic()


def _finish_play(proc: subprocess.Popen[str], tmp: Path, started: float) -> Outcome:
    try:
        rc = proc.wait(timeout=PLAY_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
        raise
    return _outcome(tmp, rc, (tmp / "play.log").read_text(), time.monotonic() - started)


def _clients(host: str) -> list[int]:
    """The pids of the iperf3 clients running on ``host``."""
    found = []
    for pid in netns_pids(f"{PREFIX}-{host}"):
        cmdline = live_cmdline(pid)
        if cmdline and cmdline.split(" ", 1)[0].endswith("iperf3") and " -c " in cmdline:
            found.append(pid)
    return found


def _wait_for_client(proc: subprocess.Popen[str], host: str) -> int:
    """The pid of the iperf3 client on ``host`` once it has run for a second.

    Waits as long as the play may run (PLAY_TIMEOUT), not a fixed time: Ansible's start-up, the
    preflight and the server start come first, and took more than 30 s at load average 17.
    """
    deadline = time.monotonic() + PLAY_TIMEOUT
    while time.monotonic() < deadline and proc.poll() is None:
        for pid in _clients(host):
            time.sleep(1.0)
            return pid
        time.sleep(0.1)
    raise AssertionError(f"no iperf3 client appeared on {host} (play ended: rc {proc.poll()})")


def _client_lifetime(proc: subprocess.Popen[str], host: str) -> float | None:
    """Seconds from the first to the last sighting of an iperf3 client on ``host`` while the play runs."""
    first = last = None
    deadline = time.monotonic() + PLAY_TIMEOUT
    while time.monotonic() < deadline and proc.poll() is None:
        if _clients(host):
            last = time.monotonic()
            first = first or last
        time.sleep(0.1)
    return None if first is None or last is None else last - first


TWO_PAIRS = [{"name": "long", "pairs": [_pair("h1", "h2"), _pair("h3", "h4")], "duration": 8}]


def test_client_killed_mid_test(lab: Lab, tmp_path: Path) -> None:
    lab.up()
    proc, started = _start_play(lab, tmp_path, TWO_PAIRS)
    try:
        os.kill(_wait_for_client(proc, "h2"), signal.SIGKILL)
    finally:
        outcome = _finish_play(proc, tmp_path, started)
    assert outcome.rc == 2
    (run,) = outcome.results
    assert (run["ok"], run["total_bits_per_second"], run["failed_pairs"]) == (False, None, 1)
    killed, other = run["pairs"]
    assert killed["error"].startswith(f"the client on h2 -> {ADDRESS['h1']}:{PORT_BASE} failed: ")
    assert killed["result"] is None or killed["result"]["bits_per_second"] is None
    assert other["ok"] is True and abs(other["result"]["bits_per_second"] / GOODPUT_1500 - 1) < 0.05
    assert "Run 1 of 1 (long, 1 stream(s), forward, repetition 1) failed - pair 1 (h2 -> h1)" in outcome.output
    _assert_clean(outcome)


def test_ssh_connection_cut_mid_test(lab: Lab, tmp_path: Path) -> None:
    lab.up()
    listener = int((lab.state_dir / "hosts" / "h2" / "sshd.pid").read_text().split()[0])
    proc, started = _start_play(lab, tmp_path, TWO_PAIRS)
    try:
        _wait_for_client(proc, "h2")
        on_h2 = netns_pids(f"{PREFIX}-h2")
        sessions = [p for p in on_h2 if p != listener and (live_cmdline(p) or "").startswith("sshd")]
        assert sessions, "no ssh session to h2"
        for pid in sessions:
            os.kill(pid, signal.SIGKILL)
    finally:
        outcome = _finish_play(proc, tmp_path, started)
    assert outcome.rc == 2
    (run,) = outcome.results
    cut, other = run["pairs"]
    assert cut["error"].startswith("lost the connection to the client host h2 during the test: ")
    assert run["total_bits_per_second"] is None and other["ok"] is True
    # h2 stayed in the play (ignore_unreachable), so the run was recorded and every server stopped
    assert "lost the connection to the client host h2" in outcome.output
    _assert_clean(outcome)


def test_continue_on_error_records_the_failed_run_and_goes_on(lab: Lab, tmp_path: Path) -> None:
    lab.up()
    tests = [
        {"name": "dead", "pairs": [_pair("h1", "h2", address=DEAD_ADDRESS)], "duration": 1},
        {"name": "alive", "pairs": [_pair("h3", "h4")], "duration": 1},
    ]
    outcome = _play(lab, tmp_path, tests, paired_test_server_bind=False, paired_test_continue_on_error=True)
    assert outcome.rc == 0, outcome.output[-3000:]
    dead, alive = outcome.results
    assert (dead["ok"], dead["total_bits_per_second"]) == (False, None)
    assert alive["ok"] is True and alive["total_bits_per_second"] > 0.9 * GOODPUT_1500
    summary = {s["test"]: s for s in outcome.report["summary"]} if outcome.report else {}
    dead_stats = summary["dead"]["stats"]
    assert (dead_stats["skipped"], dead_stats["count"], dead_stats["mean"]) == (1, 0, None)  # the failed run
    _assert_clean(outcome)


def _banners(output: str) -> list[str]:
    return re.findall(r"^TASK \[(.*?)\]", output, flags=re.MULTILINE)


def test_a_run_is_one_task_and_one_line_and_idle_hosts_are_not_contacted(lab: Lab, tmp_path: Path) -> None:
    """The tasks a play runs (every task banner of Ansible's output and every item of the runs' loop, every task
    shown: the stdout callback's runs=tasks): a one-run play with its report, and what each run adds; the hosts no
    test uses (h1, h2) are not contacted after the preflight (-vvv: no SSH command to their addresses). Then the
    output at Ansible's default verbosity with the collection's stdout callback: one line per run, the summary table
    as text."""
    lab.up()
    counts = []
    tests = [{"name": "one", "pairs": [_pair("h3", "h4")], "duration": 1}]
    for repeat in (1, 3):
        folder = tmp_path / f"repeat{repeat}"
        folder.mkdir()
        argv = [*_playbook_argv(lab, folder, [{**tests[0], "repeat": repeat}]), "-vvv"]
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=PLAY_TIMEOUT,
            check=False,
            env=_env(ESXILAB_CONCISE_RUNS="tasks"),
        )
        assert proc.returncode == 0, proc.stdout[-3000:]
        items = re.findall(r"^ok: \[\w+\] => \(item=run \d", proc.stdout, flags=re.MULTILINE)
        assert len(items) == repeat, proc.stdout[-3000:]
        counts.append(len(_banners(proc.stdout)) - 1 + len(items))  # the loop's banner is its first item
        probe = proc.stdout.index("TASK [esxilab.iperf.paired_test : Check every setting of the tests")
        after = proc.stdout[proc.stdout.index("TASK [", probe + 10) :]  # after the preflight and its probe
        for host in ("h1", "h2"):
            assert f"<{ADDRESS[host]}>" not in after, after[:3000]
        assert f"<{ADDRESS['h3']}> SSH: EXEC" in after  # the control: the run's hosts are reached
    one, three = counts
    print(f"tasks: one run {one}, three runs {three} ({(three - one) / 2:g} per added run)")
    assert (three - one) / 2 == 1, counts  # one task per run
    assert one <= 15, counts  # it was 45 (issue 20)

    folder = tmp_path / "lines"
    folder.mkdir()
    outcome = _play(lab, folder, [{**tests[0], "repeat": 3}])
    assert outcome.rc == 0, outcome.output[-3000:]
    first = outcome.output.index("\nrun 1/3 ")
    shown = outcome.output[first : outcome.output.index("TASK [", first)]
    lines = [line for line in shown.splitlines() if line.strip()]
    assert len(lines) == 3, shown  # one line per run, nothing else
    assert all(
        re.match(rf"run {n}/3 one 1 stream forward( repetition {n})?: [\d.]+ Mbit/s", line)
        for n, line in enumerate(lines, 1)
    ), lines
    (table,) = labkit.printed_text(outcome.output, "Write the report on the controller")
    assert table[0] == "iperf report: report: 3 run(s)" and table[-1].startswith("report: "), table
    assert len(re.findall(r"^skipping: ", outcome.output, flags=re.MULTILINE)) <= 8  # h1, h2: not in the tests
