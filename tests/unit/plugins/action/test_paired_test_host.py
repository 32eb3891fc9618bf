# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""paired_test_host: the probe of every host at once, and a whole run in one task - its record kept in the spool, a run
the series does not make skipped.

What each host's part does is proven in tests/unit/plugins/plugin_utils/paired/test_engine.py; the connections to
the run's hosts (common.links) on the lab. Here the hosts' steps are stand-ins.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.action import paired_test_host
from ansible_collections.esxilab.iperf.plugins.action.paired_test_host import ActionModule
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired import recorder
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.progress import RECORD_KEYS, Progress, seen
from tests.unit.plugins.action_harness import make_action
from tests.unit.plugins.plugin_utils.paired.test_engine import RUN  # the run of the engine's tests


def _run(
    spool: str, monkeypatch: pytest.MonkeyPatch, run: Mapping[str, Any], fail: bool = False, **more: Any
) -> dict[str, Any]:
    made: list[tuple[str, str, dict[str, Any]]] = []

    class Link:
        """A host's link: its own variables, and its steps recorded."""

        def __init__(self, host: str) -> None:
            self.host = host
            found: dict[str, dict[str, Any]] = {"h1": {"state": "/tmp/h1"}}
            self.variables = found.get(host, {})

        def value(self, name: str) -> Any:
            return self.variables.get(name)

        def twin(self) -> Any:  # the second session of the host: the same recorded steps
            return self

        def step(self, _action: Any, name: str, args: Mapping[str, Any]) -> dict[str, Any]:
            made.append((self.host, name, dict(args)))
            if fail and args.get("mode") == "server":
                return {"failed": True, "msg": "address in use"}
            return {"changed": True, "msg": "ok", "pid": 7, "stopped": [{"pid": 7, "status": "stopped"}]}

    monkeypatch.setattr(paired_test_host, "link", lambda _action, _task_vars, host: Link(host))
    args = {"run": run, "spool": spool, "host_options": {"state_dir": "state"}, "probes": {"h2": {"p": 2}}, **more}
    plugin = make_action(ActionModule, "esxilab.iperf.paired_test_host", args)
    result: dict[str, Any] = plugin.run(task_vars={"inventory_hostname": "h1"})
    result["made"] = made
    return result


def test_a_run_is_one_task_that_records_it_and_the_next_run_after_a_failure_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spool = recorder.make_spool(str(tmp_path))
    recorder.write_record(spool, {"run": 2, "ok": True})  # an earlier run of the series
    result = _run(spool, monkeypatch, RUN, fail=True, run_count=5)
    # a failed run is recorded; the series stops after it: its task fails, saying which run and why
    assert result["failed"] is True and result["msg"].startswith(
        "Run 3 of 5 (t, 2 stream(s), forward, repetition 1) failed - "
    )
    assert "paired_test_continue_on_error=true" in result["msg"]
    options = {host: args for host, _n, args in result["made"] if args.get("mode") == "server"}
    assert options["h1"]["state_dir"] == "/tmp/h1" and "state_dir" not in options["h2"]  # each host its own
    assert options["h2"]["probe"] == {"p": 2} and "probe" not in options["h1"]
    assert {host for host, _n, _a in result["made"]} == {"h1", "h2", "h3"}
    # the run's own record (the runs before it are in their own results and in the spool), and as a fact only what the
    # callbacks read of it: Ansible copies a host's facts for every task
    assert result["ansible_facts"]["__paired_test_recorded"] == [seen(result["record"])]
    assert result["record"]["run"] == 3
    assert set(seen(result["record"])) == set(RECORD_KEYS) and "pairs" in result["record"]
    # the callbacks print the same from what the fact holds as from the whole record
    lines = []
    for facts in (result["ansible_facts"], {"__paired_test_recorded": [result["record"]]}):
        progress = Progress()
        progress.plan({"runs": [RUN]})
        progress.observe({"__paired_test_recorded": []}, 100.0)  # the preflight's facts: the clock starts
        lines.append(progress.observe(facts, 112.5))
    assert lines[0] is not None and lines[0] == lines[1]
    assert result["ok"] is False and result["ansible_facts"]["__paired_test_halt"] is True
    assert [r["run"] for r in recorder.read_records(spool)] == [2, 3]
    following = _run(spool, monkeypatch, {**RUN, "run": 4})
    assert following["skipped"] is True and following["made"] == [] and not following.get("failed")
    assert following["skip_reason"] == "not run: the series stopped after run 3 failed"
    going_on = recorder.make_spool(str(tmp_path))
    result = _run(going_on, monkeypatch, RUN, fail=True, run_count=5, continue_on_error=True)
    assert not result.get("failed") and result["ok"] is False and result["ansible_facts"]["__paired_test_halt"] is False


def test_a_run_that_is_not_one_of_the_plan_is_refused_before_any_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _run(recorder.make_spool(str(tmp_path)), monkeypatch, {**RUN, "pairs": [{"server": "h1"}]})
    assert result["failed"] is True and result["made"] == []
    assert result["msg"].startswith("esxilab.iperf.paired_test_host: not a run of the plan (13 problem(s)): ")


def test_a_run_needs_its_spool_and_is_skipped_in_check_mode(tmp_path: Path) -> None:
    plugin = make_action(ActionModule, "esxilab.iperf.paired_test_host", {"run": RUN})
    assert "missing required arguments: spool" in plugin.run(task_vars={"inventory_hostname": "h1"})["msg"]
    plugin = make_action(ActionModule, "esxilab.iperf.paired_test_host", {"run": RUN, "spool": ""})
    assert plugin.run(task_vars={"inventory_hostname": "h1"})["msg"].endswith("spool is empty")
    args = {"run": RUN, "spool": str(tmp_path)}
    plugin = make_action(ActionModule, "esxilab.iperf.paired_test_host", args, check_mode=True)
    assert plugin.run(task_vars={"inventory_hostname": "h1"})["skipped"] is True


def test_the_probe_of_every_host_is_one_call_and_says_every_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    """paired_test_host.probe - what the preflight (probe=true) runs once every check passed."""
    made: list[tuple[str, str, dict[str, Any]]] = []

    class Link:
        def __init__(self, host: str) -> None:
            self.host = host

        def value(self, name: str) -> Any:
            return {"h2": "/opt/iperf3"}.get(self.host) if name == "bin" else None

        def step(self, _action: Any, name: str, args: Mapping[str, Any]) -> dict[str, Any]:
            made.append((self.host, name, dict(args)))
            if self.host == "h3":
                return {"failed": True, "msg": "no iperf3 on the PATH"}
            speeds = {"ansible_facts": {"iperf_link_speeds": {"198.18.0.1": {"speed_mbps": 1000}}}}
            return {
                "changed": False,
                "probe": {"caps": {"esxi": self.host == "h2"}},
                **({"reading": speeds} if args.get("reading") else {}),
            }

    monkeypatch.setattr(paired_test_host, "link", lambda _action, _task_vars, host: Link(host))
    plan = {
        "hosts": ["h1", "h2"],
        "tools_by_host": {"h1": ["iperf3"], "h2": ["iperf3"]},
        "addresses_by_host": {"h1": ["198.18.0.1"]},
        "runs": [],
    }
    plugin = make_action(ActionModule, "esxilab.iperf.paired_test_host", {"part": "run"})
    task_vars = {"inventory_hostname": "h1"}
    result = paired_test_host.probe(plugin, task_vars, plan, {"binary": "bin"})
    assert not result.get("failed"), result.get("msg")
    assert sorted(made, key=lambda m: (m[0], m[1])) == [
        # the link speed read in the probe's own session
        ("h1", "iperf_run", {"mode": "probe", "require": ["iperf3"], "reading": {"link_speed_of": ["198.18.0.1"]}}),
        ("h2", "iperf_run", {"mode": "probe", "require": ["iperf3"], "binary": "/opt/iperf3"}),  # its own binary
    ]
    assert result["probes"] == {"h1": {"caps": {"esxi": False}}, "h2": {"caps": {"esxi": True}}}
    assert result["link_speeds"] == {"h1": {"198.18.0.1": {"speed_mbps": 1000}}, "h2": {}}
    assert result["esxi_hosts"] == ["h2"]
    assert result["plan"]["hosts"] == ["h1", "h2"]  # the plan with the line rates (none here: no run)
    # a host that cannot run iperf3: the probe fails naming it, every other host probed
    result = paired_test_host.probe(plugin, task_vars, {**plan, "hosts": ["h1", "h3"]}, {"binary": "bin"})
    assert result["failed"] is True and "h3: no iperf3 on the PATH" in result["msg"], result["msg"]
    assert result["probes"]["h1"] == {"caps": {"esxi": False}} and "plan" not in result


def test_the_esxi_hosts_cpu_comes_from_their_vsphere_api_after_the_last_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the series' last run, made or skipped: each ESXi host's endpoint from its own variables; one session per
    host; a host without one says why."""
    endpoints = {
        "esx1": {"hostname": "vc.lab", "password": "secret", "validate_certs": "false", "esxi_hostname": "esx1.lab"},
        "esx2": {"hostname": "esx2.lab"},  # no password: not asked
    }

    class Link:
        def __init__(self, host: str) -> None:
            self.host = host

        def value(self, name: str) -> Any:
            return endpoints[self.host].get(name)

    opened: list[tuple[Any, ...]] = []
    asked: list[tuple[Any, ...]] = []

    @contextmanager
    def session(*args: Any) -> Iterator[str]:
        opened.append(args)
        yield "si"

    def query(si: Any, name: Any, start: float, end: float) -> dict[str, Any]:
        asked.append((si, name, start, end))
        return {"reason": "the simulator is not here"}

    monkeypatch.setattr(paired_test_host, "link", lambda _action, _task_vars, host: Link(host))
    monkeypatch.setattr(paired_test_host, "session", session)
    monkeypatch.setattr(paired_test_host, "query", query)
    cpu = {"esx1": {"kind": None}, "esx2": {"kind": None}}
    spool = recorder.make_spool(str(tmp_path))
    for n in (1, 2):
        recorder.write_record(spool, {"run": n, "start_at": 100.0 * n, "duration": 10, "pairs": [], "cpu": cpu})
    recorder.write_state(spool, {"halt_after": 2})  # the series stopped after run 2: runs 3 and 4 are skipped
    names = {k: k for k in ("hostname", "port", "username", "password", "validate_certs", "esxi_hostname")}
    args = {"spool": spool, "cpu_hosts": ["esx1", "esx2"], "endpoint_options": names, "run_count": 4}
    plugin = make_action(ActionModule, "esxilab.iperf.paired_test_host", {**args, "run": {**RUN, "run": 3}})
    result: dict[str, Any] = plugin.run(task_vars={"inventory_hostname": "esx1"})
    assert result["skipped"] is True and "records" not in result and opened == []  # not the last run
    plugin = make_action(ActionModule, "esxilab.iperf.paired_test_host", {**args, "run": {**RUN, "run": 4}})
    result = plugin.run(task_vars={"inventory_hostname": "esx1"})
    assert result["skipped"] is True and not result.get("failed"), result.get("msg")
    assert opened == [("vc.lab", 443, "root", "secret", False)]  # once for both runs; the defaults of esxi_network
    assert asked == [("si", "esx1.lab", 100.0, 110.0), ("si", "esx1.lab", 200.0, 210.0)]
    entry = result["records"][1]["cpu"]["esx2"]
    assert entry["mean_percent"] is None and entry["reason"].startswith("no vSphere endpoint for esx2: set its")
    assert result["warnings"] == [f"esx2: {entry['reason']}"]
