# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A run driven from the controller: each host's part (paired.parts) as the collection's own steps with the run's
options, then the whole run (paired.engine) - starts, the barrier, clients, stops, the record.

The steps themselves (iperf_run, iperf_facts) are proven by their own tests and on the lab; here the steps are
recorded, to show which ones each host makes, with which options, in which order, and what the record makes of them.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired import recorder
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.engine import ControllerGone, drive, first_dispatch
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.parts import (
    Step,
    clients_part,
    probe_part,
    start_part,
    stop_part,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.planned import PlannedPair, PlannedRun


def _pair(number: int, server: str, client: str) -> PlannedPair:
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
    }


# a whole run of the plan (paired.planned.PlannedRun: the task of a run checks it is one), with three pairs
RUN: PlannedRun = {
    "run": 3,
    "test": "t",
    "sweep": False,
    "streams": 2,
    "direction": "forward",
    "reverse": False,
    "swapped": False,
    "repetition": 1,
    "repeat": 1,
    "point": "t|forward|2|unswapped",
    "stability": None,
    "order": "interleaved",
    "shuffle_seed": None,
    "combine_swapped": False,
    "duration": 10,
    "tool": "iperf3",
    "protocol": "tcp",
    "bandwidth": None,
    "omit": None,
    "interval": None,
    "window": None,
    "length": None,
    "mss": None,
    "zerocopy": False,
    "tos": None,
    "connect_timeout": None,
    "client_timeout": None,
    "server_timeout": 130,
    "server_extra_args": [],
    "client_extra_args": [],
    "latency": None,
    "labels": {},
    "external": False,
    "external_wait": None,
    "external_servers": False,
    "latency_idle": 0.0,
    "nic_counters": "test",
    "cpu_hosts": [],
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
OPTIONS = {"state_dir": "/tmp"}


class Steps:
    """The steps of one host, recorded; ``fail`` - the mode whose steps fail (from the second step on)."""

    def __init__(self, fail: str = "", lost: str = "") -> None:
        self.made: list[tuple[str, dict[str, Any]]] = []
        self.fail, self.lost = fail, lost

    def __call__(self, name: str, args: Mapping[str, Any]) -> dict[str, Any]:
        self.made.append((name, dict(args)))
        if self.lost and args.get("mode") == self.lost:
            return {"unreachable": True, "msg": "connection lost"}
        if self.fail and args.get("mode") == self.fail and len(self.made) > 1:
            return {"failed": True, "msg": "no"}
        if args.get("mode") == "client":
            return {"changed": True, "msg": "ok", "arrived_at": 0.0}
        return {"changed": True, "msg": "ok", "pid": 7, "stopped": [{"pid": 7, "status": "stopped"}]}


def _said() -> tuple[list[str], Any]:
    lines: list[str] = []
    return lines, lines.append


def test_start_reads_the_nic_then_starts_this_hosts_servers_with_the_runs_options() -> None:
    steps = Steps()
    part = start_part(steps, RUN, "h1", {**OPTIONS, "probe": {"p": 1}}, _said()[1])
    assert [step[0] for step in steps.made] == ["iperf_facts", "iperf_run", "iperf_run"]
    assert steps.made[0][1] == {"gather_tools": False, "nic_counters_of": ["198.18.0.1"]}
    assert steps.made[1][1] == {
        "tool": "iperf3",
        "server_timeout": 130,
        "mode": "server",
        "port": 5201,
        "one_off": False,
        "bind": "198.18.0.1",
        "state_dir": "/tmp",
        "probe": {"p": 1},
    }
    assert [item["item"]["pair"] for item in part.piece["servers"]["results"]] == [1, 2] and not part.failed


def test_the_cpu_is_read_with_the_nic_in_one_iperf_facts_at_the_start_and_after_the_stop() -> None:
    """A host of ``cpu_hosts``: one iperf_facts with cpu_times (and nic_counters_of where the NIC is read too); the
    CPU reading (or why it failed) is ``cpu_before`` / ``cpu_after``; a host outside ``cpu_hosts`` reads none."""
    run = {**RUN, "cpu_hosts": ["h1", "h3"]}
    steps = Steps()
    part = start_part(steps, run, "h1", OPTIONS, _said()[1])
    assert steps.made[0] == (
        "iperf_facts",
        {"gather_tools": False, "nic_counters_of": ["198.18.0.1"], "cpu_times": True},
    )
    assert part.piece["cpu_before"] == {"error": "ok"} and part.piece["nic_before"]["msg"] == "ok"
    steps = Steps()
    part = stop_part(steps, run, "h3", OPTIONS)
    assert steps.made == [("iperf_facts", {"gather_tools": False, "cpu_times": True})]
    assert part.piece["cpu_after"] == {"error": "ok"} and part.piece["nic_after"] is None
    steps = Steps()
    part = stop_part(steps, run, "h2", OPTIONS)
    assert part.piece["cpu_after"] is None and all(step[0] == "iperf_run" for step in steps.made)


def test_a_server_that_does_not_start_ends_the_part_failed() -> None:
    steps = Steps(fail="server")
    part = start_part(steps, RUN, "h1", OPTIONS, _said()[1])
    assert len(part.piece["servers"]["results"]) == 1  # the second start is not tried
    assert part.failed == ["pair 1: no"] and len(steps.made) == 2


def test_clients_start_at_the_barrier_and_know_an_esxi_server() -> None:
    steps = Steps()
    part = clients_part(steps, RUN, "h1", OPTIONS, _said()[1], start_at=1234.5, esxi_hosts=frozenset({"h2"}))
    assert steps.made == [
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
    assert part.piece["collects"] == {"results": []}


def test_stop_stops_every_server_of_this_host_and_a_host_without_servers_does_nothing() -> None:
    steps = Steps()
    part = stop_part(steps, RUN, "h1", OPTIONS)
    assert [step[1]["port"] for step in steps.made] == [5201, 5202]
    assert all(step[1]["mode"] == "stop" for step in steps.made) and part.piece["nic_after"] is None
    steps = Steps()
    assert stop_part(steps, RUN, "h3", OPTIONS).piece["stops"] == {"results": []} and steps.made == []


def _drive(steps: Mapping[str, Step], **options: Any) -> Any:
    settings: dict[str, Any] = {
        "state": recorder.new_state(),
        "previous": [],
        "esxi_hosts": frozenset(),
        "continue_on_error": False,
        "say": _said()[1],
        **options,
    }
    return drive(RUN, steps, dict.fromkeys(steps, OPTIONS), **settings)


def test_a_run_starts_every_host_then_the_clients_at_the_barrier_then_stops_and_records() -> None:
    steps = {host: Steps() for host in ("h1", "h2", "h3")}
    ticks, lock = iter(range(100)), threading.Lock()

    def clock() -> float:  # 100.0 when the start begins, then 0.1 s later at every reading, whichever thread reads
        with lock:
            return 100.0 + 0.1 * next(ticks)

    outcome = _drive(steps, clock=clock)
    # each host's first command answers (h3 has no server and reads nothing before the run: none), then the host is
    # ready: the readings after 100.0 come from the threads in any order
    # The barrier: the last host ready + the first run's delay, learnt from the start (start_delay.FIRST_RUN_FACTOR x
    # first_dispatch + FIRST_RUN_MARGIN)
    record = outcome.record
    starts = [a["start_at"] for s in steps.values() for _n, a in s.made if a.get("mode") == "client"]
    assert starts == [record["start_at"]] * 3
    assert 0.3 <= record["start_delay"] < 1.5  # learnt from the start (first_dispatch), not the planned 2.2 s
    assert 100.3 < record["start_at"] - record["start_delay"] <= 100.8  # the last ready
    for host, made in steps.items():  # each host: its start, then its clients, then its stop - in this order
        modes = [a.get("mode", "nic") for _n, a in made.made]
        assert modes == sorted(modes, key=["nic", "server", "client", "stop"].index), (host, modes)
    assert record["run"] == 3
    assert [p["server_stop"] for p in record["pairs"]] == ["stopped"] * 3
    assert outcome.state == recorder.next_state(recorder.new_state(), record, outcome.halt)


def test_a_host_whose_start_failed_runs_no_client_and_its_servers_are_still_stopped() -> None:
    steps = {"h1": Steps(fail="server"), "h2": Steps(), "h3": Steps()}
    outcome = _drive(steps)
    modes = [a.get("mode", "nic") for _n, a in steps["h1"].made]
    assert modes == ["nic", "server", "stop", "stop"]  # no second server, no client; both ports stopped
    assert "h1" in outcome.failed_hosts and outcome.record["ok"] is False
    errors = " ".join(p["error"] or "" for p in outcome.record["pairs"])
    assert "the client on h1 did not run: Start the servers" in errors, errors
    assert outcome.halt is True  # without continue_on_error the series stops
    assert _drive({h: Steps() for h in ("h1", "h2", "h3")}, continue_on_error=True).halt is False


def test_a_lost_host_fails_its_pairs_and_a_bug_in_one_host_fails_only_that_host() -> None:
    class Broken(Steps):
        def __call__(self, name: str, args: Mapping[str, Any]) -> dict[str, Any]:
            raise KeyError("port")

    steps = {"h1": Steps(), "h2": Steps(lost="client"), "h3": Broken()}
    outcome = _drive(steps)
    by_pair = {p["pair"]: p for p in outcome.record["pairs"]}
    assert by_pair[1]["ok"] is False and "connection lost" in str(by_pair[1]["error"])  # h2's client
    assert "KeyError" in str(by_pair[2]["error"])  # h3's client never ran
    assert outcome.failed_hosts.keys() == {"h2", "h3"} and "KeyError: 'port'" in outcome.failed_hosts["h3"]


def test_the_hosts_of_a_part_work_at_the_same_time() -> None:
    """Every start of the run is under way before any ends (a barrier of 3 threads: one at a time would hang)."""
    together = threading.Barrier(3, timeout=10)

    class Waits(Steps):
        def __call__(self, name: str, args: Mapping[str, Any]) -> dict[str, Any]:
            if name == "iperf_run" and args.get("mode") == "client":
                together.wait()
            return super().__call__(name, args)

    outcome = _drive({h: Waits() for h in ("h1", "h2", "h3")})
    assert not outcome.failed_hosts, outcome.failed_hosts


def test_when_the_play_has_ended_nothing_more_is_done_on_the_hosts() -> None:
    """Ctrl-C ends ansible-playbook; a stop made later by this task could end the next run's servers on the same
    ports, so the run stops where it is (the servers' guards and the next run's start end what it started)."""
    steps = {h: Steps() for h in ("h1", "h2", "h3")}
    with pytest.raises(ControllerGone, match="run 3: the play has ended"):
        _drive(steps, alive=lambda: False)
    assert {a.get("mode") for s in steps.values() for _n, a in s.made} == {None, "server"}  # no client, no stop


def test_the_first_runs_dispatch_is_the_starts_time_per_step_times_the_clients_at_least_one_steps_latency() -> None:
    # 32 hosts made 48 steps in 0.6 s: 16 clients take about 0.2 s; the quickest first answer (0.05 s) is less
    assert first_dispatch(10.0, [10.05, 10.5], [10.6, 10.55], 48, 16) == pytest.approx(0.2)
    # one server made 2 steps in 0.5 s on a far host: one step took 0.3 s, more than the start's 0.25 s per step
    assert first_dispatch(10.0, [10.3], [10.5], 2, 1) == pytest.approx(0.3)
    assert first_dispatch(10.0, [], [10.5], 0, 1) is None  # nothing made: the plan's delay


def test_a_hosts_readings_go_over_its_second_step_function_beside_its_servers() -> None:
    steps, reader = Steps(), Steps()
    part = start_part(steps, RUN, "h1", OPTIONS, _said()[1], reader)
    assert [step[0] for step in steps.made] == ["iperf_run", "iperf_run"]  # the servers
    assert reader.made == [("iperf_facts", {"gather_tools": False, "nic_counters_of": ["198.18.0.1"]})]
    assert part.piece["nic_before"] is not None
    steps, reader = Steps(), Steps()
    stopped = stop_part(steps, {**RUN, "nic_after": True}, "h1", {**OPTIONS, "probe": {"p": 1}}, reader)
    assert [a["mode"] for _n, a in steps.made] == ["stop", "stop"] and all(
        a["probe"] == {"p": 1} for _n, a in steps.made
    )
    assert [name for name, _a in reader.made] == ["iperf_facts"] and stopped.piece["nic_after"] is not None
    lost, reader = Steps(lost="stop"), Steps()  # the stop lost the host: what was read there is not kept
    assert stop_part(lost, {**RUN, "nic_after": True}, "h1", OPTIONS, reader).piece["nic_after"] is None


class Riding(Steps):
    """Steps whose ``iperf_run`` returns the reading it was asked for (option ``reading``)."""

    def __call__(self, name: str, args: Mapping[str, Any]) -> dict[str, Any]:
        out = super().__call__(name, args)
        if args.get("reading"):
            out["reading"] = {"ansible_facts": {"iperf_cpu_times": {"kind": "linux"}, "iperf_nic_counters": {}}}
        return out


LINUX = {"caps": {"esxi": False}}


def test_a_linux_hosts_readings_ride_in_its_first_server_start_and_stop() -> None:
    """A host known not to be ESXi reads in the session of its first start and of its first stop (no session of its
    own); a host without a server, an ESXi host and a host whose probe is unknown read with ``iperf_facts``."""
    run = {**RUN, "nic_after": True, "cpu_hosts": ["h1", "h3"]}
    steps, reader = Riding(), Riding()
    part = start_part(steps, run, "h1", {**OPTIONS, "probe": LINUX}, _said()[1], reader)
    assert not reader.made and [a.get("reading") for _n, a in steps.made] == [
        {"nic_counters_of": ["198.18.0.1"], "cpu_times": True},
        None,
    ]
    assert part.piece["cpu_before"] == {"kind": "linux"} and part.piece["nic_before"]["ansible_facts"] == {
        "iperf_nic_counters": {}
    }
    assert all("reading" not in item for item in part.piece["servers"]["results"])
    steps, reader = Riding(), Riding()
    part = stop_part(steps, run, "h1", {**OPTIONS, "probe": LINUX}, reader)
    assert not reader.made and [a["mode"] for _n, a in steps.made] == ["stop", "stop"]
    assert steps.made[0][1]["reading"] == {"nic_counters_of": ["198.18.0.1"], "cpu_times": True}
    assert part.piece["cpu_after"] == {"kind": "linux"} and part.piece["nic_after"] is not None
    for host, probe in (("h3", LINUX), ("h1", {"caps": {"esxi": True}}), ("h1", None)):
        steps, reader = Riding(), Riding()
        start_part(steps, run, host, {**OPTIONS, "probe": probe}, _said()[1], reader)
        assert [n for n, _a in reader.made] == ["iperf_facts"] and all("reading" not in a for _n, a in steps.made)
    # the first start lost the host, with its reading: the readings say why; a stop that lost it keeps none
    lost = start_part(Steps(lost="server"), run, "h1", {**OPTIONS, "probe": LINUX}, _said()[1])
    assert lost.failed and lost.piece["cpu_before"] == {"error": "no reading: connection lost"}
    lost = stop_part(Steps(lost="stop"), run, "h1", {**OPTIONS, "probe": LINUX})
    assert lost.piece["cpu_after"] is None and lost.piece["nic_after"] is None


def test_a_linux_host_that_only_runs_a_client_reads_after_its_test_in_its_session_and_is_not_stopped() -> None:
    run = {**RUN, "nic_after": True, "cpu_hosts": ["h1", "h2", "h3"]}
    steps = Riding()
    part = clients_part(
        steps, run, "h3", {**OPTIONS, "probe": LINUX}, _said()[1], start_at=None, esxi_hosts=frozenset()
    )
    assert [a.get("reading") for _n, a in steps.made] == [{"cpu_times": True}]
    assert part.piece["cpu_after"] == {"kind": "linux"} and part.piece["nic_after"] is None
    assert "reading" not in part.piece["clients"]["results"][0]
    assert recorder.stop_hosts(run, {"h3": part.piece}) == ["h1", "h2"]  # its stop has nothing left to do
    assert recorder.stop_hosts(run) == ["h1", "h2", "h3"]
    (report,) = [r for r in recorder.reports(run, {"clients": {"h3": part.piece}}, str, "no stop") if r["host"] == "h3"]
    assert report["cpu_after"] == {"kind": "linux"} and report["stops"] == {"results": []}
    steps = Riding()  # h2 also serves (pair 3): it reads at its stop
    clients_part(steps, run, "h2", {**OPTIONS, "probe": LINUX}, _said()[1], start_at=None, esxi_hosts=frozenset())
    assert all("reading" not in a for _n, a in steps.made)


class Probing(Steps):
    def __call__(self, name: str, args: Mapping[str, Any]) -> dict[str, Any]:
        self.made.append((name, dict(args)))
        if self.fail:
            return {"probe": {"caps": {}}, "failed": True, "msg": "no iperf3"}
        reading = args.get("reading")
        speeds = {"ansible_facts": {"iperf_link_speeds": {"198.18.0.1": {"speed_mbps": 100}}}}
        return {"probe": {"caps": {}}, **({"reading": speeds} if reading else {})}


def test_the_probe_reads_the_link_speeds_in_its_own_session() -> None:
    """One step per host: the probe, with the link speed reading riding in its session (``iperf_run``'s
    ``reading``) - no second session."""
    steps = Probing()
    part = probe_part(steps, ["iperf3"], ["198.18.0.1"])
    assert steps.made == [
        ("iperf_run", {"mode": "probe", "require": ["iperf3"], "reading": {"link_speed_of": ["198.18.0.1"]}})
    ]
    assert part.piece["link_speeds"] == {"198.18.0.1": {"speed_mbps": 100}} and not part.failed
    nothing = Probing()  # no test address of the host: no reading
    assert probe_part(nothing, ["iperf3"], []).piece["link_speeds"] is None
    assert "reading" not in nothing.made[0][1]
    failed = probe_part(Probing(fail="x"), ["iperf3"], ["198.18.0.1"])
    assert failed.failed == ["no iperf3"] and failed.piece["link_speeds"] is None  # a failed probe: nothing kept


def test_a_probe_whose_reading_failed_fails_the_host_with_the_reason() -> None:
    def step(_name: str, _args: Mapping[str, Any]) -> dict[str, Any]:
        return {"probe": {"caps": {}}, "reading": {"failed": True, "msg": "the reading did not complete"}}

    part = probe_part(step, ["iperf3"], ["198.18.0.1"])
    assert part.failed == ["the link speed of 198.18.0.1 could not be read: the reading did not complete"]
    assert probe_part(lambda _n, _a: {"probe": {"caps": {}}}, ["iperf3"], ["198.18.0.1"]).failed == [
        "the link speed of 198.18.0.1 could not be read: the probe made no reading"
    ]
