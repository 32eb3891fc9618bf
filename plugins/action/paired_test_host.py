# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.paired_test_host``: a host's probe, or a whole run from the controller.

Documentation: the module file of the same name. Each server start, client, collect, stop and NIC
read is the collection's own action (``iperf_run``, ``iperf_facts``) run over the host's own
connection (``common.links``: what ``delegate_to`` sets up), as ``ansible.builtin.template`` runs
``copy``: the same validation, scripts and results as a task of its own, without a task per step.
The run itself - the parts, the barrier, the record - is ``paired.engine``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.esxilab.iperf.plugins.modules.paired_test_host import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.controller import begin
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.links import HostLink, LinkError, link
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired import recorder
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.engine import drive
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.parts import Step, given

_NAME = "esxilab.iperf.paired_test_host"
ARGUMENT_SPEC = argument_spec(DOCUMENTATION)
_display = Display()


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """A host's probe, or a whole run on the hosts of the run."""

    TRANSFERS_FILES = False

    def _probe(self, result: dict[str, Any], args: Mapping[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        """The one probe of a host of the tests (``iperf_run mode=probe``, its result as it returns it), then the link
        speed of the host's test addresses (``iperf_facts``: the fact ``iperf_link_speeds``) - one task."""
        own = HostLink(
            str(task_vars.get("inventory_hostname")), self._connection, self._play_context, self._templar, task_vars
        )
        probe = own.step(
            self,
            "iperf_run",
            {"mode": "probe", "require": list(args["require"]), **given(binary=args["binary"])},
        )
        result.update(probe)
        if probe.get("failed") or own.lost:
            return result
        if args["link_speed_of"]:
            speeds = own.step(
                self, "iperf_facts", {"gather_tools": False, "link_speed_of": list(args["link_speed_of"])}
            )
            if speeds.get("failed") or own.lost:
                result.update(
                    failed=not own.lost,
                    unreachable=bool(own.lost),
                    msg=f"{_NAME}: the link speed of {', '.join(args['link_speed_of'])} could not be read: "
                    f"{speeds.get('msg', 'no message')}",
                )
                return result
            facts = speeds.get("ansible_facts")
            if isinstance(facts, Mapping):
                result["ansible_facts"] = dict(facts)
            result["warnings"] = [*(result.get("warnings") or []), *(speeds.get("warnings") or [])]
        return result

    def _run(self, result: dict[str, Any], args: Mapping[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        """The whole run ``args.run`` on its hosts (``paired.engine``), its record kept in the spool."""
        run: Mapping[str, Any] = args["run"]
        number = int(run["run"])
        spool = str(args["spool"])
        result.update(changed=False, run=number)
        try:
            state = recorder.read_state(spool)
            previous = recorder.read_records(spool)
        except (recorder.SpoolError, OSError) as exc:
            result.update(failed=True, msg=f"{_NAME} run {number}: the state of the series cannot be read: {exc}")
            return result
        skipped = recorder.skip_reason(state, run)
        if skipped:
            result.update(skipped=True, skip_reason=skipped, msg=f"run {number}: {skipped}")
            return result
        hosts = recorder.run_hosts(run)
        steps: dict[str, Step] = {}
        options: dict[str, dict[str, Any]] = {}
        speeds: dict[str, Any] = {}
        for host in hosts:
            try:
                own = link(self, task_vars, host)
            except LinkError as exc:
                steps[host], options[host] = _unreachable(f"{exc}"), {}
                continue
            steps[host] = _steps(self, own)
            options[host] = _host_options(own, args["host_options"])
            speeds[host] = own.value("iperf_link_speeds")
        outcome = drive(
            run,
            steps,
            options,
            state=state,
            previous=previous,
            esxi_hosts=frozenset(args["esxi_hosts"]),
            probe_dispatch=args["probe_dispatch"],
            continue_on_error=bool(args["continue_on_error"]),
            say=_display.display,
            link_speeds=speeds,
        )
        try:
            recorder.write_record(spool, outcome.record)
            recorder.write_state(spool, outcome.state)
        except (recorder.SpoolError, OSError) as exc:
            result.update(failed=True, msg=f"{_NAME} run {number}: the record of the run cannot be kept: {exc}")
            return result
        record = outcome.record
        result.update(
            ansible_facts={"__paired_test_recorded": [*previous, record], "__paired_test_halt": outcome.halt},
            record=record,
            ok=record["ok"],
            failed_hosts=outcome.failed_hosts,
            msg=f"run {number}: recorded ({'ok' if record['ok'] else 'failed'})",
        )
        if outcome.warnings:
            result["warnings"] = outcome.warnings
        return result

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result, args = begin(self, tmp, task_vars, ARGUMENT_SPEC)
        if args is None:  # wrong or unknown options
            return result
        variables = task_vars or {}
        if args["part"] == "probe":  # read-only: also in check mode
            return self._probe(result, args, variables)
        if self._play_context.check_mode:
            result.update(skipped=True, msg="part=run starts and stops processes: not in check mode")
            return result
        if args["run"] is None or not args["spool"]:
            result.update(failed=True, msg=f"{_NAME}: part=run needs run and spool")
            return result
        return self._run(result, args, variables)


def _steps(action: ActionModule, own: HostLink) -> Step:
    """The steps of a host: the collection's actions over its own connection."""
    return lambda name, args: own.step(action, name, args)


def _host_options(own: HostLink, names: Mapping[str, Any]) -> dict[str, Any]:
    """The options of the host's steps from its own variables (``host_options``: option -> variable name)."""
    found = {option: own.value(str(name)) for option, name in names.items() if name}
    probe = found.get("probe")
    found["probe"] = probe.get("probe") if isinstance(probe, Mapping) else None
    return given(**found)


def _unreachable(why: str) -> Step:
    return lambda name, args: {"unreachable": True, "msg": why}
