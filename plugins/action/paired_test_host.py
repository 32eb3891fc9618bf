# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.paired_test_host``: one host's part of one run, in one task.

Documentation: the module file of the same name. Each server start, client, collect, stop and NIC
read is the collection's own action (``iperf_run``, ``iperf_facts``) run over this task's
connection, as ``ansible.builtin.template`` runs ``copy``: the same validation, scripts and
results as a task of its own, without a task per step.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from ansible.errors import AnsibleConnectionFailure
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.esxilab.iperf.plugins.modules.paired_test_host import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.controller import begin
from ansible_collections.esxilab.iperf.plugins.plugin_utils.latency.option import with_interface
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired import recorder
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.record import build_record
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.start_delay import auto_start_delay

_NAME = "esxilab.iperf.paired_test_host"
ARGUMENT_SPEC = argument_spec(DOCUMENTATION)
_display = Display()


def _given(**options: Any) -> dict[str, Any]:
    """The options that are set (Ansible's ``omit``: a falsy value is left out)."""
    return {name: value for name, value in options.items() if value not in (None, "")}


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """Do this host's part of a run with the collection's own actions."""

    TRANSFERS_FILES = False
    _lost: str | None = None  # the connection was lost in a step: no later step is tried

    def _step(self, name: str, args: Mapping[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        """Run the action ``esxilab.iperf.<name>`` with ``args`` over this task's connection; its result."""
        if self._lost:
            return {"unreachable": True, "msg": self._lost}
        task = self._task.copy()
        task.args = dict(args)
        task.action = f"esxilab.iperf.{name}"
        action = self._shared_loader_obj.action_loader.get(
            f"esxilab.iperf.{name}",
            task=task,
            connection=self._connection,
            play_context=self._play_context,
            loader=self._loader,
            templar=self._templar,
            shared_loader_obj=self._shared_loader_obj,
        )
        try:
            result: dict[str, Any] = action.run(task_vars=task_vars)
        except AnsibleConnectionFailure as exc:  # as a looped task's item: this item unreachable, the host too
            self._lost = f"{exc}"
            return {"unreachable": True, "msg": self._lost}
        return result

    def _nic(self, run: Mapping[str, Any], host: str, task_vars: dict[str, Any]) -> dict[str, Any] | None:
        addresses = (run.get("nic_addresses") or {}).get(host)
        if not addresses:
            return None
        return self._step("iperf_facts", {"gather_tools": False, "nic_counters_of": list(addresses)}, task_vars)

    def _record(
        self, result: dict[str, Any], args: Mapping[str, Any], piece: Mapping[str, Any], task_vars: dict[str, Any]
    ) -> dict[str, Any]:
        """The keeper's stop: the other stop hosts' pieces (waited for), the run's start and clients pieces, the
        record of the run from them, the state of the series, and the records so far as this host's fact."""
        run: Mapping[str, Any] = args["run"]
        spool = str(args["spool"])
        number = int(run["run"])
        host = str(task_vars.get("inventory_hostname"))
        active = set(task_vars.get("ansible_play_hosts") or ())  # a host Ansible dropped runs no stop
        others = [h for h in recorder.stop_hosts(run) if h != host and h in active]
        stops = recorder.wait_pieces(spool, number, others, seconds=recorder.WAIT_SECONDS) if others else {}
        if host in recorder.stop_hosts(run):
            stops[host] = dict(piece)
        pieces = {
            "start": recorder.read_pieces(spool, number, recorder.run_hosts(run), "start"),
            "clients": recorder.read_pieces(spool, number, recorder.clients_hosts(run), "clients"),
            "stop": stops,
        }
        barriers = [b for p in pieces["clients"].values() if isinstance(b := p.get("barrier"), Mapping)]
        hostvars: Any = task_vars.get("hostvars") or {}

        def failure(name: str) -> Any:
            """What the rescue saw on a host that wrote no piece of a part (Ansible's HostVars.raw_get: untemplated)."""
            try:
                values = hostvars.raw_get(name) if hasattr(hostvars, "raw_get") else hostvars[name]
                return values.get("__paired_test_failure")
            except (KeyError, TypeError, AttributeError):
                return None

        missing = f"no stop result came from this host within {recorder.WAIT_SECONDS:g} s"
        previous = recorder.recorded(task_vars.get("ansible_facts"))
        record = build_record(
            run,
            recorder.reports(run, pieces, failure, missing),
            barrier=barriers[0] if barriers else None,
            previous=previous,
        )
        halt = recorder.halts(record, bool(args["continue_on_error"]))
        recorder.write_state(spool, recorder.next_state(recorder.read_state(spool), record, halt))
        recorder.remove_pieces(spool, number, recorder.run_hosts(run))
        lost = f"; this host's own part: {self._lost}" if self._lost else ""
        result.update(
            ansible_facts={"__paired_test_recorded": [*previous, record], "__paired_test_halt": halt},
            ok=record["ok"],
            msg=f"run {number}: recorded ({'ok' if record['ok'] else 'failed'}){lost}",
        )
        return result

    def _probe(self, result: dict[str, Any], args: Mapping[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        """The one probe of a host of the tests (``iperf_run mode=probe``, its result as it returns it), then the link
        speed of the host's test addresses (``iperf_facts``: the fact ``iperf_link_speeds``) - one task."""
        probe = self._step(
            "iperf_run", {"mode": "probe", "require": list(args["require"]), **_given(binary=args["binary"])}, task_vars
        )
        result.update(probe)
        if probe.get("failed") or self._lost:
            return result
        if args["link_speed_of"]:
            speeds = self._step(
                "iperf_facts", {"gather_tools": False, "link_speed_of": list(args["link_speed_of"])}, task_vars
            )
            if speeds.get("failed") or self._lost:
                result.update(
                    failed=not self._lost,
                    unreachable=bool(self._lost),
                    msg=f"{_NAME}: the link speed of {', '.join(args['link_speed_of'])} could not be read: "
                    f"{speeds.get('msg', 'no message')}",
                )
                return result
            facts = speeds.get("ansible_facts")
            if isinstance(facts, Mapping):
                result["ansible_facts"] = dict(facts)
            result["warnings"] = [*(result.get("warnings") or []), *(speeds.get("warnings") or [])]
        return result

    def _barrier(self, run: Mapping[str, Any], args: Mapping[str, Any], state: Mapping[str, Any]) -> dict[str, Any]:
        """The clients' common start time: when the last host of the run was ready (the start pieces), plus the
        start delay learnt from the runs so far (``paired.start_delay``); every client computes the same."""
        if not args["spool"]:
            return {"run": run.get("run"), "start_at": args["start_at"], "start_delay": None}
        delay = auto_start_delay(run, state.get("dispatch") or (), args["probe_dispatch"])
        starts = recorder.read_pieces(str(args["spool"]), int(run["run"]), recorder.run_hosts(run), "start")
        return {"run": run.get("run"), "start_at": recorder.start_at(starts, delay, time.time()), "start_delay": delay}

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result, args = begin(self, tmp, task_vars, ARGUMENT_SPEC)
        if args is None:  # wrong or unknown options
            return result
        variables = task_vars or {}
        host = str(variables.get("inventory_hostname"))
        if args["part"] == "probe":  # read-only: also in check mode
            return self._probe(result, args, variables)
        if self._play_context.check_mode:
            result.update(skipped=True, msg=f"part={args['part']} starts and stops processes: not in check mode")
            return result
        if args["run"] is None or not args["state_dir"]:
            result.update(failed=True, msg=f"{_NAME}: part={args['part']} needs run and state_dir")
            return result
        run: Mapping[str, Any] = args["run"]
        number = run.get("run")
        pairs = [p for p in run.get("pairs") or [] if isinstance(p, Mapping)]
        served = [p for p in pairs if p.get("server") == host]
        common = _given(state_dir=args["state_dir"])
        tool = _given(binary=args["binary"], probe=args["probe"])
        result.update(changed=False, run=number)
        failed: list[str] = []
        part = args["part"]
        spool = args["spool"]
        try:
            state = recorder.read_state(spool) if spool else recorder.new_state()
        except (recorder.SpoolError, OSError) as exc:
            result.update(failed=True, msg=f"{_NAME} run {number}: the state of the series cannot be read: {exc}")
            return result
        skipped = recorder.skip_reason(state, run)
        if skipped:
            result.update(skipped=True, skip_reason=skipped, msg=f"run {number}: {skipped}")
            return result

        if part == "start":
            result["nic_before"] = self._nic(run, host, variables) if run.get("nic_before") else None
            for pair in pairs:
                outside = pair.get("external_server")
                if pair.get("client") == host and isinstance(outside, Mapping):
                    _display.display(
                        f"Pair {pair['pair']}: the client on {host} connects to {pair['address']}:{pair['port']}, a "
                        "server outside the inventory - it must be listening there now (iperf3.exe on Windows takes "
                        f"the same arguments): {outside.get('command')}"
                    )
            items = []
            for pair in served:
                if pair.get("external_server"):
                    continue
                step = {
                    **(run.get("iperf_server") or {}),
                    "mode": "server",
                    "port": pair["port"],
                    "one_off": bool(pair.get("one_off")),
                    **_given(bind=pair.get("bind")),
                    **common,
                    **tool,
                }
                outcome = self._step("iperf_run", step, variables)
                items.append({**outcome, "item": pair})
                # servers an interrupted run left on this port, stopped before this start: said, not only recorded
                leftovers = [f"pair {pair['pair']}: {note}" for note in outcome.get("leftovers") or []]
                result["warnings"] = [*(result.get("warnings") or []), *leftovers]
                if outcome.get("failed") or self._lost:
                    failed.append(f"pair {pair['pair']}: {outcome.get('msg', 'the server did not start')}")
                    break  # the ones started are stopped by part=stop (always)
            result["servers"] = {"results": items}
            result["ready_at"] = round(time.time(), 3)
            piece = {"servers": result["servers"], "nic_before": result["nic_before"], "ready_at": result["ready_at"]}

        elif part == "clients":
            barrier = self._barrier(run, args, state) if run.get("barrier") else None
            items = []
            for pair in pairs:
                if pair.get("client") != host:
                    continue
                peer = pair.get("server")
                address = [pair.get("client_bind"), *(run.get("nic_addresses") or {}).get(host, [])]
                step = {
                    **(run.get("iperf_client") or {}),
                    **with_interface(run.get("iperf_client"), variables.get("iperf_link_speeds"), address),
                    "mode": "client",
                    "server": pair["address"],
                    "port": pair["port"],
                    "labels": pair.get("labels") or {},
                    "peer_is_esxi": peer is not None and peer in args["esxi_hosts"],
                    **_given(bind=pair.get("client_bind")),
                    **(_given(start_at=barrier["start_at"]) if barrier else {}),
                    **common,
                    **tool,
                }
                outcome = self._step("iperf_run", step, variables)
                items.append({**outcome, "item": pair})
                if outcome.get("failed") or self._lost:
                    failed.append(f"pair {pair['pair']}: {outcome.get('msg', 'the client failed')}")
            result["clients"] = {"results": items}
            collects = []
            for pair in served:
                external = pair.get("external")
                if failed or self._lost or not isinstance(external, Mapping):
                    continue
                _display.display(
                    f"Pair {pair['pair']}: waiting up to {external.get('deadline')} s for {external.get('count')} "
                    f"client test(s){(' from ' + str(external['from'])) if external.get('from') else ''}; on the "
                    "external host run (iperf3.exe on Windows takes the same arguments): "
                    f"{external.get('command')}"
                )
                step = {
                    "mode": "collect",
                    "port": pair["port"],
                    "clients": external.get("count"),
                    "deadline": external.get("deadline"),
                    "labels": pair.get("labels") or {},
                    **_given(bind=pair.get("bind"), peer=external.get("from")),
                    **common,
                }
                outcome = self._step("iperf_run", step, variables)
                collects.append({**outcome, "item": pair})
            result["collects"] = {"results": collects}
            result["barrier"] = barrier
            piece = {"clients": result["clients"], "collects": result["collects"], "barrier": barrier}

        else:  # stop
            items = []
            for pair in served:
                if pair.get("external_server") or self._lost:
                    continue
                step = {"mode": "stop", "port": pair["port"], **_given(bind=pair.get("bind")), **common}
                outcome = self._step("iperf_run", step, variables)
                items.append({**outcome, "item": pair})
            result["stops"] = {"results": items}
            result["nic_after"] = self._nic(run, host, variables) if run.get("nic_after") and not self._lost else None
            piece = {"stops": result["stops"], "nic_after": result["nic_after"]}
            if args["record"]:
                try:
                    return self._record(result, args, piece, variables)
                except (recorder.SpoolError, OSError) as exc:
                    result.update(failed=True, msg=f"{_NAME} run {number}: the record of the run failed: {exc}")
                    return result

        # what this host did, for the run's record (the keeper reads it in the stop)
        if spool and (part != "stop" or host in recorder.stop_hosts(run)):
            try:
                recorder.write_piece(spool, int(run["run"]), host, piece, kind=part)
            except (recorder.SpoolError, OSError) as exc:
                failed.append(f"its part could not be handed to the record: {exc}")

        if self._lost:
            result.update(unreachable=True, msg=f"{_NAME} run {number} part {part} on {host}: {self._lost}")
        elif failed:
            result.update(failed=True, msg=f"{_NAME} run {number} part {part} on {host}: " + "; ".join(failed))
        else:
            result["msg"] = f"run {number}: {part} done on {host}"
        return result
