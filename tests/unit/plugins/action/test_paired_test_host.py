# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""paired_test_host: one host's part of a run, each step the collection's own action with the run's options.

The steps themselves (iperf_run, iperf_facts) are proven by their own tests and on the lab; here the
steps are recorded, to show which ones a host makes, with which options, in which order.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.action.paired_test_host import ActionModule
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired import recorder
from tests.unit.plugins.action_harness import make_action


def _pair(number: int, server: str | None, client: str | None, **extra: Any) -> dict[str, Any]:
    return {
        "run": 3,
        "pair": number,
        "server": server,
        "client": client,
        "address": f"198.18.0.{number}",
        "port": 5200 + number,
        "bind": f"198.18.0.{number}",
        "client_bind": None,
        "one_off": False,
        "labels": {"pair": number},
        "external": None,
        "external_server": None,
        "sender": client,
        "receiver": server,
        **extra,
    }


RUN: dict[str, Any] = {
    "run": 3,
    "test": "t",
    "streams": 2,
    "direction": "forward",
    "swapped": False,
    "repetition": 1,
    "server_hosts": ["h1", "h2"],
    "client_hosts": ["h1", "h2", "h3"],
    "barrier": True,
    "start_delay": 2.2,  # planned: 1 s + 0.4 s per client
    "start_delay_auto": True,
    "nic_before": True,
    "nic_after": False,
    "nic_addresses": {"h1": ["198.18.0.1"]},
    "iperf_server": {"tool": "iperf3", "server_timeout": 130},
    "iperf_client": {"tool": "iperf3", "duration": 10, "streams": 2, "reverse": False},
    "pairs": [_pair(1, "h1", "h2"), _pair(2, "h1", "h3"), _pair(3, "h2", "h1")],
}


def _part(part: str, host: str, fail: str = "", **args: Any) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    steps: list[tuple[str, dict[str, Any]]] = []

    def step(name: str, options: Mapping[str, Any], _task_vars: dict[str, Any]) -> dict[str, Any]:
        steps.append((name, dict(options)))
        failed = bool(fail) and options.get("mode") == fail and len(steps) > 1
        return {"failed": failed, "msg": "no" if failed else "ok"}

    plugin = make_action(
        ActionModule, "esxilab.iperf.paired_test_host", {"part": part, "run": RUN, "state_dir": "/tmp", **args}
    )
    plugin._step = step  # type: ignore[method-assign,assignment]
    result: dict[str, Any] = plugin.run(task_vars={"inventory_hostname": host})
    return result, steps


def test_start_reads_the_nic_then_starts_this_hosts_servers_with_the_runs_options() -> None:
    result, steps = _part("start", "h1", probe={"p": 1})
    assert [step[0] for step in steps] == ["iperf_facts", "iperf_run", "iperf_run"]
    assert steps[0][1] == {"gather_tools": False, "nic_counters_of": ["198.18.0.1"]}
    assert steps[1][1] == {
        "tool": "iperf3",
        "server_timeout": 130,
        "mode": "server",
        "port": 5201,
        "one_off": False,
        "bind": "198.18.0.1",
        "state_dir": "/tmp",
        "probe": {"p": 1},
    }
    assert [item["item"]["pair"] for item in result["servers"]["results"]] == [1, 2]
    assert result["run"] == 3 and isinstance(result["ready_at"], float) and not result.get("failed")


def test_the_cpu_is_read_with_the_nic_in_one_iperf_facts_at_the_start_and_after_the_stop() -> None:
    """A host of ``cpu_hosts``: one iperf_facts with cpu_times (and nic_counters_of where the NIC is read too); the
    CPU reading (or why it failed) is ``cpu_before`` / ``cpu_after``; a host outside ``cpu_hosts`` reads none."""
    run = {**RUN, "cpu_hosts": ["h1", "h3"]}
    result, steps = _part("start", "h1", run=run)
    assert steps[0] == ("iperf_facts", {"gather_tools": False, "nic_counters_of": ["198.18.0.1"], "cpu_times": True})
    assert result["cpu_before"] == {"error": "ok"} and result["nic_before"] == {"failed": False, "msg": "ok",
                                                                               "ansible_facts": {}}  # fmt: skip
    result, steps = _part("stop", "h3", run=run)
    assert steps == [("iperf_facts", {"gather_tools": False, "cpu_times": True})]
    assert result["cpu_after"] == {"error": "ok"} and result["nic_after"] is None
    result, steps = _part("stop", "h2", run=run)
    assert result["cpu_after"] is None and all(step[0] == "iperf_run" for step in steps)


def test_a_server_that_does_not_start_ends_the_part_failed() -> None:
    result, steps = _part("start", "h1", fail="server")
    assert len(result["servers"]["results"]) == 1 and result["failed"] is True  # the second start is not tried
    assert "pair 1: no" in result["msg"] and len(steps) == 2


def test_clients_start_at_the_barrier_and_know_an_esxi_server() -> None:
    result, steps = _part("clients", "h1", start_at=1234.5, esxi_hosts=["h2"])
    assert steps == [
        (
            "iperf_run",
            {
                "tool": "iperf3",
                "duration": 10,
                "streams": 2,
                "reverse": False,
                "mode": "client",
                "server": "198.18.0.3",
                "port": 5203,
                "labels": {"pair": 3},
                "peer_is_esxi": True,
                "start_at": 1234.5,
                "state_dir": "/tmp",
            },
        )
    ]
    assert result["collects"] == {"results": []}


def test_stop_stops_every_server_of_this_host_and_a_host_without_servers_does_nothing() -> None:
    result, steps = _part("stop", "h1")
    assert [step[1]["port"] for step in steps] == [5201, 5202]
    assert all(step[1]["mode"] == "stop" for step in steps) and result["nic_after"] is None
    result, steps = _part("stop", "h3")
    assert steps == [] and result["stops"] == {"results": []}


def _stop(host: str, spool: str, task_vars: dict[str, Any], **args: Any) -> dict[str, Any]:
    def step(name: str, options: Mapping[str, Any], _task_vars: dict[str, Any]) -> dict[str, Any]:
        return {"changed": True, "stopped": [{"pid": 7, "status": "stopped"}], "msg": "stopped"}

    plugin = make_action(
        ActionModule,
        "esxilab.iperf.paired_test_host",
        {"part": "stop", "run": RUN, "state_dir": "/tmp", "spool": spool, **args},
    )
    plugin._step = step  # type: ignore[method-assign,assignment]
    result: dict[str, Any] = plugin.run(task_vars={"inventory_hostname": host, **task_vars})
    return result


def test_the_keepers_stop_records_the_run_from_its_pieces_and_keeps_the_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recorder, "WAIT_SECONDS", 0.2)
    spool = recorder.make_spool(str(tmp_path))
    # the start pieces (as part=start writes them) and the clients piece of h3
    for host, pairs in (("h1", RUN["pairs"][:2]), ("h2", RUN["pairs"][2:])):
        servers = {"results": [{"item": p, "pid": 7} for p in pairs]}
        recorder.write_piece(spool, 3, host, {"servers": servers, "nic_before": None, "ready_at": 10.0}, kind="start")
    barrier = {"run": 3, "start_at": 11.0, "start_delay": 1.0}
    recorder.write_piece(spool, 3, "h3", {"clients": {"results": []}, "barrier": barrier}, kind="clients")
    # h1 serves pairs 1 and 2: its stop piece goes to the spool, no record, no fact
    h1 = _stop("h1", spool, {})
    assert "ansible_facts" not in h1
    earlier = {"run": 2, "ok": True}
    keeper_vars = {
        "hostvars": {"h1": {}, "h2": {}, "h3": {"__paired_test_failure": None}},
        "ansible_play_hosts": ["h1", "h2", "h3"],
        "ansible_facts": {"__paired_test_recorded": [earlier]},
    }
    # h3 (a client, no server) is the keeper; h2 serves pair 3 and its stop never came
    result = _stop("h3", spool, keeper_vars, record=True)
    assert not result.get("failed"), result.get("msg")
    facts = result["ansible_facts"]
    *before, record = facts["__paired_test_recorded"]
    assert before == [earlier] and record["run"] == 3
    assert (record["start_at"], record["start_delay"]) == (11.0, 1.0)  # the clients' barrier
    assert [p["server_stop"] for p in record["pairs"]] == ["stopped", "stopped", "failed"]
    assert [p["server_pid"] for p in record["pairs"]] == [7, 7, 7]  # from the start pieces
    assert any("pair 3: the server on h2 port 5203 could not be stopped (failed)" in w for w in record["warnings"])
    # no client result: the run failed, and without continue_on_error the series halts - the next run is skipped
    assert record["ok"] is False and facts["__paired_test_halt"] is True and result["ok"] is False
    assert os.listdir(spool) == [recorder.STATE_FILE]  # the run's pieces are removed
    nxt = _stop("h1", spool, {}, run={**RUN, "run": 4})
    assert nxt["skipped"] is True and nxt["skip_reason"] == "not run: the series stopped after run 3 failed"


def test_the_clients_start_at_the_last_ready_host_plus_the_learnt_delay(tmp_path: Path) -> None:
    spool = recorder.make_spool(str(tmp_path))
    for host, ready in (("h1", 100.0), ("h2", 100.5)):
        recorder.write_piece(spool, 3, host, {"ready_at": ready}, kind="start")
    result, steps = _part("clients", "h2", spool=spool, probe_dispatch=0.25)
    # the first run with 3 clients: 3 x the probe's dispatch + 0.5 s, at least 1 s (paired.start_delay)
    assert result["barrier"] == {"run": 3, "start_at": 101.75, "start_delay": 1.25}
    assert [step[1]["start_at"] for step in steps] == [101.75]
    (name,) = [n for n in os.listdir(spool) if n.startswith("clients3-")]  # its piece, for the record
    assert name.endswith(".json")


def test_a_dropped_host_is_not_waited_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder, "WAIT_SECONDS", 30.0)
    spool = recorder.make_spool(str(tmp_path))
    keeper_vars = {"hostvars": {}, "ansible_play_hosts": ["h3"], "ansible_facts": {}}  # h1 and h2 failed out
    result = _stop("h3", spool, keeper_vars, record=True)
    assert [p["server_stop"] for p in result["ansible_facts"]["__paired_test_recorded"][0]["pairs"]] == ["failed"] * 3


def test_probe_is_the_probe_then_the_link_speed_in_one_task() -> None:
    steps: list[tuple[str, dict[str, Any]]] = []

    def step(name: str, options: Mapping[str, Any], _task_vars: dict[str, Any]) -> dict[str, Any]:
        steps.append((name, dict(options)))
        if name == "iperf_run":
            return {"changed": False, "probe": {"caps": {"esxi": False}}, "probe_started_at": 5.0}
        return {"changed": False, "ansible_facts": {"iperf_link_speeds": {"198.18.0.1": {"speed_mbps": 1000}}}}

    args = {"part": "probe", "require": ["iperf3"], "link_speed_of": ["198.18.0.1"]}
    plugin = make_action(ActionModule, "esxilab.iperf.paired_test_host", args)
    plugin._step = step  # type: ignore[method-assign,assignment]
    result: dict[str, Any] = plugin.run(task_vars={"inventory_hostname": "h1"})
    assert not result.get("failed"), result.get("msg")
    assert steps == [
        ("iperf_run", {"mode": "probe", "require": ["iperf3"]}),
        ("iperf_facts", {"gather_tools": False, "link_speed_of": ["198.18.0.1"]}),
    ]
    assert (result["probe"], result["probe_started_at"]) == ({"caps": {"esxi": False}}, 5.0)  # as iperf_run returns it
    assert result["ansible_facts"] == {"iperf_link_speeds": {"198.18.0.1": {"speed_mbps": 1000}}}
    # a run's part without its run fails clearly
    plugin = make_action(ActionModule, "esxilab.iperf.paired_test_host", {"part": "start"})
    assert plugin.run(task_vars={"inventory_hostname": "h1"})["msg"].endswith("part=start needs run and state_dir")
