# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""paired_test with external clients (a pair's ``external``): the plan's checks and shape, and the records
built from what ``iperf_run mode=collect`` registered (made here by the real collect functions from the
recorded multi-client server logs of ``tests/fixtures/iperf/``)."""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.collect import server_tests, task_tests
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.checks import PairedTestError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan, run_seconds
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.record import build_record
from tests.collection_path import FIXTURES

IPERF3_LOG = (FIXTURES / "iperf3-3.12-text-server-tcp-3-clients-P2-cut-locallab.txt").read_text()
PEER = "198.19.181.12"
SERVER = {"server": "esx1", "address": "198.18.0.10"}


def external(**values: Any) -> dict[str, Any]:
    return {**SERVER, "external": {"count": 1, "deadline": 120, **values}}


def plan(*pairs: dict[str, Any], **settings: Any) -> dict[str, Any]:
    result: dict[str, Any] = build_plan(
        [{"name": "win", "pairs": list(pairs), **settings}],
        inventory_hosts=["esx1", "h2"],
        play_hosts=["esx1", "h2"],
    )
    return result


# ------------------------------------------------------------------------------------------
# The plan
# ------------------------------------------------------------------------------------------


def test_an_external_pair_plans_a_server_and_no_client() -> None:
    made = plan(external(count=2, deadline=300, **{"from": "198.18.0.50"}), streams=4, duration=30)
    assert made["problem_count"] == 0 and made["hosts"] == ["esx1"] and made["tools_by_host"] == {"esx1": ["iperf3"]}
    (run,) = made["runs"]
    (pair,) = run["pairs"]
    assert (pair["server"], pair["client"], pair["sender"], pair["receiver"]) == ("esx1", None, "external", "esx1")
    assert pair["external"] == {
        "count": 2, "deadline": 300.0, "from": "198.18.0.50", "command": "iperf3 -c 198.18.0.10 -p 5201 -t 30 -P 4",
    }  # fmt: skip
    assert pair["one_off"] is False  # iperf3 serves several clients one after the other
    assert (run["external"], run["external_wait"], run["barrier"], run["client_hosts"]) == (True, 300.0, False, [])
    # the guard outlives the wait; the planned seconds (the ESXi dead-man timer) are the wait
    assert run["server_timeout"] == run["iperf_server"]["server_timeout"] == 420
    assert run_seconds(run) == 300.0
    assert pair["labels"]["streams"] == 4  # the -P the person is asked to use


def test_a_host_with_two_external_pairs_waits_for_them_in_turn() -> None:
    second = {"server": "esx1", "address": "198.18.5.21", "external": {"deadline": 60}}
    (run,) = plan(external(deadline=100), second)["runs"]
    assert [p["port"] for p in run["pairs"]] == [5201, 5202]
    # the guard of either server outlives both waits; the planned seconds are both waits
    assert (run["external_wait"], run["server_timeout"], run_seconds(run)) == (160.0, 280, 160.0)


def test_one_iperf3_client_gets_a_one_off_server_and_iperf2_never() -> None:
    assert plan(external())["runs"][0]["pairs"][0]["one_off"] is True
    assert plan(external(), tool="iperf2")["runs"][0]["pairs"][0]["one_off"] is False
    assert plan(external(count=2))["runs"][0]["pairs"][0]["one_off"] is False
    # a pair's own client is one test per run too: its iperf3 server ends by itself after it (issue 21)
    inside = {**SERVER, "client": "h2"}
    assert plan(inside)["runs"][0]["pairs"][0]["one_off"] is True
    assert plan(inside, tool="iperf2")["runs"][0]["pairs"][0]["one_off"] is False
    # count defaults to 1; a string from -e is read as Ansible would
    assert plan({**SERVER, "external": {"deadline": "60"}})["runs"][0]["pairs"][0]["external"]["count"] == 1


def test_the_command_asked_of_the_person_has_the_test_settings() -> None:
    settings = {"duration": 30, "streams": 4, "window": "512K", "interval": 2, "omit": 2}
    assert plan(external(), **settings)["runs"][0]["pairs"][0]["external"]["command"] == (
        "iperf3 -c 198.18.0.10 -p 5201 -t 30 -P 4 -w 512K -i 2 -O 2"
    )
    udp = {"tool": "iperf2", "protocol": "udp", "bandwidth": "1G", "length": "1460", "interval": 0.5}
    assert plan({**external(), "port": 5001}, **udp)["runs"][0]["pairs"][0]["external"]["command"] == (
        "iperf -c 198.18.0.10 -p 5001 -t 10 -P 1 -i 0.5 -l 1460 -u -b 1G"
    )


def test_ordinary_pairs_are_unchanged() -> None:
    (run,) = plan({"server": "esx1", "client": "h2", "address": "198.18.0.10"})["runs"]
    assert (run["external"], run["external_wait"], run["pairs"][0]["external"], run["pairs"][0]["one_off"]) == (
        False, None, None, True,  # one test per run: a one-off iperf3 server (issue 21)
    )  # fmt: skip
    assert run["client_hosts"] == ["h2"] and run["server_timeout"] == 10 + 2 + 120


@pytest.mark.parametrize(
    ("pairs", "settings", "needle"),
    [
        ([{**SERVER, "client": "h2", "external": {"deadline": 5}}], {}, "client and external are both set"),
        ([{**SERVER, "client_address": "1.2.3.4", "external": {"deadline": 5}}], {}, "external.from"),
        ([SERVER], {}, "client is missing (an inventory host name); for clients outside the inventory"),
        ([{**SERVER, "external": {"count": 2}}], {}, "external.deadline is missing"),
        ([{**SERVER, "external": {"deadline": 0}}], {}, "deadline must be a number of seconds above 0"),
        ([{**SERVER, "external": {"deadline": "soon"}}], {}, "deadline must be a number of seconds above 0"),
        ([{**SERVER, "external": {"count": 0, "deadline": 5}}], {}, "external.count must be a whole number"),
        ([{**SERVER, "external": {"count": 65, "deadline": 5}}], {}, "from 1 to 64"),
        ([{**SERVER, "external": {"deadline": 5, "form": "1.2.3.4"}}], {}, "unknown key(s) form (did you mean from?)"),
        ([{**SERVER, "external": {"deadline": 5, "from": "1.2.3.4/24"}}], {}, "external.from='1.2.3.4/24'"),
        ([{**SERVER, "external": "yes"}], {}, "external must be a dictionary such as {count: 1, deadline: 300}"),
        # issue 21: a host name never matches the address the server logs, so no client would ever be counted
        (
            [{**SERVER, "external": {"deadline": 5, "from": "win10.lab"}}],
            {},
            "paired_test_tests[0].pairs[0] (test 'win' pair 1): external.from='win10.lab' is not an IP address: the "
            "server's log names each client by the address its connection came from, so only an address can match (a "
            "host name never would, and no client test would be counted) - give the external host's IP address, for "
            "example external.from: 198.18.1.51, or leave external.from out to count a test from any address",
        ),
        (
            [{**SERVER, "external": {"deadline": 5, "from": "0.0.0.0"}}],
            {},
            "external.from=0.0.0.0 is the unspecified address",
        ),
        (
            [{**SERVER, "external": {"deadline": 1e9}}],
            {},
            "paired_test_tests[0].pairs[0].external.deadline (test 'win' pair 1) is 1000000000.0 s, more than 86400 s "
            "(1 day): the server listens, and a firewall window stays open, for the whole deadline - give the seconds "
            "the person at the other end needs to start, for example deadline: 600",
        ),
        ([{**SERVER, "external": {"deadline": "86401"}}], {}, "external.deadline (test 'win' pair 1) is '86401' s"),
        ([{"server": "esx1", "address": "224.0.0.1", "external": {"deadline": 5}}], {}, "224.0.0.1 is a multicast"),
        ([external(), {"server": "esx1", "client": "h2"}], {}, "pair(s) 2 have a client in the inventory"),
        ([external()], {"direction": "both"}, "direction='both' cannot be used with external clients"),
        ([external()], {"swap_roles": True}, "swap_roles=True cannot be used with external clients"),
        ([external()], {"server_timeout": 100}, "server_timeout=100 is not longer than external.deadline=120"),
    ],
)
def test_external_pairs_are_checked(pairs: list[dict[str, Any]], settings: dict[str, Any], needle: str) -> None:
    with pytest.raises(PairedTestError) as caught:
        plan(*pairs, **settings)
    assert needle in str(caught.value)
    assert "test 'win'" in str(caught.value)  # the message names the test


def test_a_day_of_deadline_and_an_address_in_from_are_accepted() -> None:
    (run,) = plan(external(deadline=86400, **{"from": " 198.18.1.51 "}))["runs"]
    assert run["pairs"][0]["external"]["deadline"] == 86400.0
    assert run["pairs"][0]["external"]["from"] == "198.18.1.51"


# ------------------------------------------------------------------------------------------
# The record
# ------------------------------------------------------------------------------------------


def registered(run: dict[str, Any], collect: dict[str, Any] | None, *, stop: str = "not running") -> list[Any]:
    pair = run["pairs"][0]
    item = {"run": run["run"], "pair": pair["pair"]}
    server = {"item": item, "pid": 4242, "tool_version": "3.12", "command": "/usr/bin/iperf3 -s -p 5201"}
    return [
        {
            "host": "esx1",
            "servers": {"results": [server]},
            "collects": {"results": [] if collect is None else [{"item": item, **collect}]},
            "stops": {"results": [{"item": item, "stopped": [{"status": stop}] if stop != "not running" else []}]},
        }
    ]


def collected(log: str, clients: int, reason: str, peer: str | None = None) -> dict[str, Any]:
    tests = server_tests(log, exited=True, peer=peer)
    return {
        "came": sum(t.counted for t in tests),
        "reason": reason,
        "server_stop": "stopped",
        "tests": task_tests(tests, clients, {"test": "win"}),
    }


# the first two tests of the recorded log: two clients came, one after the other
TWO = IPERF3_LOG[: IPERF3_LOG.index("Server listening on 25811 (test #3)")]
ONE = IPERF3_LOG[: IPERF3_LOG.index("Server listening on 25811 (test #2)")]


def test_the_records_hold_what_the_server_measured() -> None:
    (run,) = plan(external(count=2, **{"from": PEER}))["runs"]
    record = build_record(run, registered(run, collected(TWO, 2, "all_came", PEER)))
    first, second = record["pairs"]
    for index, pair in enumerate((first, second), start=1):
        assert pair["ok"] and pair["error"] is None
        assert (pair["measured_by"], pair["client"], pair["sender"]) == ("server", "external", f"external {PEER}")
        assert pair["external"] == {
            "count": 2, "deadline": 120.0, "from": PEER, "command": "iperf3 -c 198.18.0.10 -p 5201 -t 10 -P 1",
            "came": 2, "reason": "all_came", "index": index, "peer": PEER, "group": index,
        }  # fmt: skip
        assert pair["result"] is not None and pair["result"]["side"] == "server"
        received = pair["result"]["received"]
        assert received is not None and pair["result"]["bits_per_second"] == received["bits_per_second"] == 958e6
        assert pair["result"]["labels"] == {"test": "win"} and "Accepted connection" in pair["result"]["raw"]
        assert (pair["server_stop"], pair["server_pid"], pair["tool_version"]) == ("stopped", 4242, "3.12")
    assert first["result"] is not None and second["result"] is not None
    assert (first["result"]["streams"], second["result"]["streams"]) == (1, 2)
    # one after the other: ok, but no total; the stream count the person used differs from the test's
    assert record["ok"] and record["failed_pairs"] == 0 and record["total_bits_per_second"] is None
    assert any("one after the other" in w for w in record["warnings"])
    assert any("external client 2 of 2 (198.19.181.12) used 2 stream(s); the test asks for 1" in w
               for w in record["warnings"])  # fmt: skip


def test_a_client_that_ran_reverse_is_warned_about() -> None:
    (run,) = plan(external())["runs"]
    collect = collected(ONE, 1, "all_came")
    collect["tests"][0]["result"]["reverse"] = True  # as the server's log of a -R client says
    record = build_record(run, registered(run, collect))
    assert any("ran -R: the server sent" in w for w in record["warnings"])


def test_iperf2_clients_at_the_same_time_add_up() -> None:
    log = (FIXTURES / "iperf2-2.1.8-text-server-tcp-2-clients-concurrent-2-addresses-locallab.txt").read_text()
    (run,) = plan(external(count=2), tool="iperf2")["runs"]
    record = build_record(run, registered(run, collected(log, 2, "all_came")))
    assert [(p["sender"], p["external"]["group"]) for p in record["pairs"]] == [
        ("external 198.19.187.13", 1), ("external 198.19.187.12", 1),
    ]  # fmt: skip
    # one server test, two clients: their rates add up (333 + 629 Mbit/s, each from the server's own lines)
    assert record["ok"] and record["total_bits_per_second"] == 333e6 + 629e6
    assert record["warnings"] == [
        "pair 1: external client 2 of 2 (198.19.187.12) used 2 stream(s); the test asks for 1 (-P 1)"
    ]


def test_one_client_gives_the_total() -> None:
    (run,) = plan(external())["runs"]
    collect = {**collected(ONE, 1, "server_exited"), "server_stop": "exited"}
    record = build_record(run, registered(run, collect))
    (pair,) = record["pairs"]
    assert pair["ok"] and pair["server_stop"] == "exited"
    assert record["ok"] and record["total_bits_per_second"] == 958e6 and record["warnings"] == []


def test_a_client_that_did_not_come_is_a_failed_record_without_a_figure() -> None:
    (run,) = plan(external(count=2, deadline=15))["runs"]
    record = build_record(run, registered(run, collected(ONE, 2, "deadline")))
    came, missing = record["pairs"]
    assert came["ok"] and came["result"] is not None
    assert not missing["ok"] and missing["result"] is None and missing["external"]["peer"] is None
    assert missing["error"] == "external client 2 of 2 did not come within the deadline of 15 s (1 came); no figure"
    assert not record["ok"] and record["failed_pairs"] == 1 and record["total_bits_per_second"] is None
    assert record["errors"] == [f"pair 1 (external -> esx1): {missing['error']}"]


def test_a_test_cut_by_the_stop_fails_and_extra_or_foreign_tests_are_only_warned_about() -> None:
    (run,) = plan(external(count=2))["runs"]
    collect = collected(IPERF3_LOG, 2, "all_came")
    collect["tests"][1]["ended"] = False  # as if the stop had cut the second
    record = build_record(run, registered(run, collect))
    assert [p["ok"] for p in record["pairs"]] == [True, False]
    assert "was still running when the wait ended" in str(record["pairs"][1]["error"])
    assert any("came after the 2 expected; not counted" in w for w in record["warnings"])  # the third
    (run,) = plan(external(count=1, **{"from": "198.19.181.99"}))["runs"]
    record = build_record(run, registered(run, collected(IPERF3_LOG, 1, "deadline", "198.19.181.99")))
    assert [p["result"] for p in record["pairs"]] == [None]
    assert sum("another address than external.from" in w for w in record["warnings"]) == 3


@pytest.mark.parametrize(
    ("collect", "needle"),
    [
        (None, "the wait for the external clients on esx1 did not run: esx1 gave no report"),
        ({"failed": True, "msg": "the private directory is a symlink"}, "failed: the private directory is a"),
        ({"unreachable": True, "msg": "ssh: timed out"}, "failed: ssh: timed out"),
    ],
)
def test_a_failed_wait_is_one_failed_record(collect: dict[str, Any] | None, needle: str) -> None:
    (run,) = plan(external(count=3))["runs"]
    record = build_record(run, registered(run, collect))
    (pair,) = record["pairs"]
    assert not pair["ok"] and needle in str(pair["error"]) and pair["result"] is None
    assert record["total_bits_per_second"] is None


def test_a_server_that_did_not_start_is_named() -> None:
    (run,) = plan(external())["runs"]
    reports = registered(run, None)
    reports[0]["servers"]["results"][0].update(failed=True, msg="port 5201 is already in use")
    (pair,) = build_record(run, reports)["pairs"]
    assert pair["error"] == "the server on esx1 (198.18.0.10:5201) failed to start: port 5201 is already in use"
