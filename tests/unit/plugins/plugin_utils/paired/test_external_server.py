# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""paired_test with a server outside the inventory (a pair's ``external: {server: true}``): the option checks
(each message names ``paired_test_tests[i].pairs[j].<key>`` or the test), the plan's shape, and the records built
from what the client registered (a recorded iperf3 client output, parsed by the collection's parser)."""

from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.checks import PairedTestError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.line_rate import with_line_rates
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.plan import build_plan
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.record import build_record
from tests.collection_path import FIXTURES

CLIENT_OUTPUT = (FIXTURES / "iperf3-3.1.3-json-client-tcp-pscheduler.json").read_text()
OUTSIDE = {"client": "h2", "address": "198.18.1.50", "port": 5301, "external": {"server": True}}
ADDRESSES = {"h1": "198.18.0.11", "h2": "198.18.0.12", "h3": "198.18.0.13"}


def plan(*pairs: dict[str, Any], **settings: Any) -> dict[str, Any]:
    result: dict[str, Any] = build_plan(
        [{"name": "win", "pairs": list(pairs), **settings}],
        addresses=ADDRESSES,
        address_var="lab_address",
        inventory_hosts=["h1", "h2", "h3"],
        play_hosts=["h1", "h2", "h3"],
    )
    return result


# ------------------------------------------------------------------------------------------
# The options
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pair", "needle"),
    [
        # issue 21: the client would connect to itself (0.0.0.0, ::), or to no one host
        (
            {**OUTSIDE, "address": "0.0.0.0"},
            "paired_test_tests[0].pairs[0] (test 'win' pair 1): address=0.0.0.0 is the unspecified address (a client "
            "connecting to it reaches its own host), not the address of one host; give the unicast address of the "
            "host's test interface",
        ),
        ({**OUTSIDE, "address": "::"}, "address=:: is the unspecified address"),
        ({**OUTSIDE, "address": "239.1.2.3"}, "address=239.1.2.3 is a multicast address"),
        ({**OUTSIDE, "address": "ff02::1"}, "address=ff02::1 is a multicast address"),
        ({**OUTSIDE, "address": "255.255.255.255"}, "address=255.255.255.255 is the broadcast address"),
        ({**OUTSIDE, "client_address": "0.0.0.0"}, "client_address=0.0.0.0 is the unspecified address"),
        (
            {**OUTSIDE, "server": "h1"},
            "paired_test_tests[0].pairs[0].server (test 'win' pair 1) is set, but external.server is true",
        ),
        (
            {k: v for k, v in OUTSIDE.items() if k != "address"},
            "paired_test_tests[0].pairs[0].address (test 'win' pair 1) is missing: the server is outside the "
            "inventory (external.server: true), so its address cannot come from a host variable - give address:",
        ),
        (
            {k: v for k, v in OUTSIDE.items() if k != "client"},
            "paired_test_tests[0].pairs[0].client (test 'win' pair 1) is missing: the server is outside the inventory",
        ),
        (
            {**OUTSIDE, "external": {"server": True, "count": 1, "deadline": 60}},
            "paired_test_tests[0].pairs[0].external (test 'win' pair 1) has server: true (the server is outside the "
            "inventory) and count, deadline (for clients outside it): a pair with both ends outside the inventory",
        ),
        (
            {**OUTSIDE, "external": {"server": "maybe"}},
            "paired_test_tests[0].pairs[0].external.server (test 'win' pair 1) must be true or false, got str",
        ),
        (
            {**OUTSIDE, "external": {"server": True, "sever": 1}},
            "paired_test_tests[0].pairs[0].external (test 'win' pair 1): unknown key(s) sever (did you mean server?)",
        ),
        (
            {"client": "h2", "address": "198.18.1.50"},
            "paired_test_tests[0].pairs[0].server (test 'win' pair 1) is missing (an inventory host name); for a "
            "server outside the inventory (iperf3.exe -s on a Windows box, an appliance) give external: {server: true}",
        ),
    ],
)
def test_a_pair_with_the_server_outside_is_checked(pair: dict[str, Any], needle: str) -> None:
    with pytest.raises(PairedTestError) as caught:
        plan(pair)
    assert needle in str(caught.value)


def test_server_false_is_the_external_clients_form() -> None:
    with pytest.raises(PairedTestError, match=r"external.deadline is missing"):
        plan({"server": "h1", "external": {"server": False}})
    # a string from -e is read as Ansible would
    assert plan({**OUTSIDE, "external": {"server": "yes"}})["runs"][0]["pairs"][0]["external_server"] is not None


@pytest.mark.parametrize(
    ("pairs", "settings", "needle"),
    [
        (
            [OUTSIDE],
            {"swap_roles": True},
            "test 'win': swap_roles=True cannot be used with a server outside the inventory (pair(s) 1): the swapped "
            "run would need a server on the client host and a client on the external host",
        ),
        (
            [{"server": "h1", "external": {"deadline": 30}}, OUTSIDE],
            {},
            "test 'win': pair(s) 2 have their server outside the inventory (an inventory client that starts with the "
            "others) and pair(s) 1 external clients (which come when they come); put the external-client pairs in a "
            "test of their own",
        ),
        (
            [OUTSIDE, {**OUTSIDE, "client": "h3", "port": 5302}],
            {"server_extra_args": ["-w", "4M"], "server_bind": False},
            "test 'win': server_extra_args, server_bind set, but every pair of the test has its server outside the "
            "inventory, so this role starts no server to give it to; remove it from the test",
        ),
    ],
)
def test_a_test_with_the_server_outside_is_checked(
    pairs: list[dict[str, Any]], settings: dict[str, Any], needle: str
) -> None:
    with pytest.raises(PairedTestError) as caught:
        plan(*pairs, **settings)
    assert needle in str(caught.value)


# ------------------------------------------------------------------------------------------
# The plan
# ------------------------------------------------------------------------------------------


def test_only_the_client_is_planned() -> None:
    made = plan(OUTSIDE, direction="both")
    assert made["problem_count"] == 0, made["problems"]
    assert made["hosts"] == ["h2"] and made["tools_by_host"] == {"h2": ["iperf3"]}
    assert made["addresses_by_host"] == {"h2": ["198.18.0.12"]}  # the client's own (bound) address only
    forward, reverse = made["runs"]
    for run in (forward, reverse):
        (pair,) = run["pairs"]
        assert (pair["server"], pair["client"], pair["address"], pair["port"]) == (None, "h2", "198.18.1.50", 5301)
        assert pair["bind"] is None and pair["client_bind"] == "198.18.0.12" and pair["external"] is None
        assert pair["external_server"] == {"command": "iperf3 -s -p 5301"}
        assert (run["server_hosts"], run["client_hosts"], run["barrier"]) == ([], ["h2"], False)
        assert run["external_servers"] is True and run["external"] is False
        assert run["nic_addresses"] == {"h2": ["198.18.0.12"]}
    assert (forward["pairs"][0]["sender"], forward["pairs"][0]["receiver"]) == ("h2", "external 198.18.1.50")
    assert (reverse["pairs"][0]["sender"], reverse["pairs"][0]["receiver"]) == ("external 198.18.1.50", "h2")
    assert (forward["reverse"], reverse["reverse"], reverse["iperf_client"]["reverse"]) == (False, True, True)


def test_the_server_command_asked_for_has_what_the_server_needs() -> None:
    def command(**settings: Any) -> str:
        return str(plan(OUTSIDE, **settings)["runs"][0]["pairs"][0]["external_server"]["command"])

    assert command(window="512K") == "iperf3 -s -p 5301 -w 512K"
    assert command(tool="iperf2", protocol="udp", bandwidth="100M") == "iperf -s -p 5301 -u"
    # the port defaults to port_base + the pair's index as for any pair
    no_port = {k: v for k, v in OUTSIDE.items() if k != "port"}
    assert plan({"server": "h1", "client": "h3"}, no_port)["runs"][0]["pairs"][1]["port"] == 5202


def test_a_test_may_mix_inventory_pairs_and_servers_outside() -> None:
    made = plan({"server": "h1", "client": "h3"}, OUTSIDE)
    # a server setting is for the inventory server of the test, so it is taken
    assert plan({"server": "h1", "client": "h3"}, OUTSIDE, server_timeout=300)["problem_count"] == 0
    assert made["problem_count"] == 0, made["problems"]
    (run,) = made["runs"]
    assert (run["server_hosts"], run["client_hosts"], run["barrier"]) == (["h1"], ["h2", "h3"], True)
    assert [p["external_server"] is not None for p in run["pairs"]] == [False, True]
    # two clients on one host are still a problem, whichever server they go to
    busy = plan({"server": "h1", "client": "h2"}, OUTSIDE)
    assert any("h2 is the client of pairs 1, 2" in p for p in busy["problems"]["busy_clients"])
    # and two pairs to one external address and port
    twice = plan(OUTSIDE, {**OUTSIDE, "client": "h3"})
    assert any("all use 198.18.1.50:5301" in p for p in twice["problems"]["duplicate_endpoints"])


def test_the_line_rate_is_the_inventory_ends() -> None:
    made = plan(OUTSIDE)
    speeds = {"h2": {"198.18.0.12": {"speed_mbps": 1000, "source": "sysfs", "reason": None}}}
    labels = with_line_rates(made, speeds)["runs"][0]["labels"]
    assert labels["line_rate_bps"] == 1e9 and "h2 198.18.0.12" in labels["line_rate_source"]


# ------------------------------------------------------------------------------------------
# The record
# ------------------------------------------------------------------------------------------


def client_item(run: dict[str, Any], **values: Any) -> dict[str, Any]:
    return {"item": {"run": run["run"], "pair": 1}, "started_at": 1700000000.5, "command": "iperf3 -c ...", **values}


def test_the_record_holds_what_the_client_measured() -> None:
    (run,) = plan(OUTSIDE)["runs"]
    result = parse(CLIENT_OUTPUT)
    item = client_item(run, result=result, raw=CLIENT_OUTPUT)
    record = build_record(run, [{"host": "h2", "clients": {"results": [item]}}])
    (pair,) = record["pairs"]
    assert pair["ok"] and pair["error"] is None
    assert pair["raw"] == CLIENT_OUTPUT  # the only output of the test anybody here has: kept, also when ok
    assert (pair["server"], pair["client"], pair["measured_by"]) == ("external", "h2", "client")
    assert (pair["sender"], pair["receiver"]) == ("h2", "external 198.18.1.50")
    assert pair["external"] == {"server": True, "address": "198.18.1.50", "port": 5301, "command": "iperf3 -s -p 5301"}
    assert (pair["server_pid"], pair["server_stop"]) == (None, None)  # nothing was started or stopped
    assert pair["result"] is not None and pair["result"]["side"] == "client"
    assert result["bits_per_second"] is not None
    assert pair["result"]["bits_per_second"] == result["bits_per_second"]
    assert record["ok"] and record["total_bits_per_second"] == result["bits_per_second"]
    assert record["warnings"] == []


def test_a_server_that_is_not_listening_is_a_failed_record_without_a_figure() -> None:
    (run,) = plan(OUTSIDE)["runs"]
    refused = '{"start": {}, "intervals": [], "end": {}, "error": "unable to connect to server: Connection refused"}'
    item = client_item(run, failed=True, msg="iperf3 reported an error: unable to connect to server", raw=refused)
    record = build_record(run, [{"host": "h2", "clients": {"results": [item]}}])
    (pair,) = record["pairs"]
    assert not pair["ok"] and pair["result"] is None and pair["raw"] == refused
    assert pair["error"] == (
        "the client on h2 -> 198.18.1.50:5301 failed: iperf3 reported an error: unable to connect to server - the "
        "server is outside the inventory: is it running and listening on 198.18.1.50:5301 (iperf3 -s -p 5301 "
        "there), and does its firewall let port 5301 in?"
    )
    assert not record["ok"] and record["total_bits_per_second"] is None
    assert record["errors"] == [f"pair 1 (h2 -> external 198.18.1.50:5301): {pair['error']}"]


def test_a_client_that_did_not_run_is_named() -> None:
    (run,) = plan(OUTSIDE)["runs"]
    failure = {"run": run["run"], "task": "Run the iperf client of this host", "msg": "boom"}
    (pair,) = build_record(run, [{"host": "h2", "failure": failure}])["pairs"]
    assert pair["error"] == "the client on h2 did not run: Run the iperf client of this host: boom"
