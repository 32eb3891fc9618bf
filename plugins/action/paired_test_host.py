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
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.engine import drive, each
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.parts import Step, given, probe_part

_NAME = "esxilab.iperf.paired_test_host"
ARGUMENT_SPEC = argument_spec(DOCUMENTATION)
_display = Display()


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """A host's probe, or a whole run on the hosts of the run."""

    TRANSFERS_FILES = False

    def _links(
        self, hosts: list[str], names: Mapping[str, Any], task_vars: dict[str, Any]
    ) -> tuple[dict[str, Step], dict[str, dict[str, Any]], dict[str, str]]:
        """Each host's steps and the options of its steps from its own variables (``host_options``); a host whose
        connection cannot be set up gets steps that say why (its part fails), and the reason."""
        steps: dict[str, Step] = {}
        options: dict[str, dict[str, Any]] = {}
        unlinked: dict[str, str] = {}
        for host in hosts:
            try:
                own = link(self, task_vars, host)
            except LinkError as exc:
                unlinked[host] = f"{exc}"
                steps[host], options[host] = _unreachable(unlinked[host]), {}
                continue
            steps[host] = _steps(self, own)
            options[host] = _host_options(own, names)
        return steps, options, unlinked

    def _probe(self, result: dict[str, Any], args: Mapping[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        """The one probe of every host of the tests at once (``paired.parts.probe_part``: ``iperf_run mode=probe``,
        then the link speed of the host's test addresses) - one task; every host's problem at once."""
        hosts = [str(h) for h in args["hosts"]]
        steps, options, _unlinked = self._links(hosts, args["host_options"], task_vars)
        require: Mapping[str, Any] = args["require"]
        speed_of: Mapping[str, Any] = args["link_speed_of"]
        parts = each(
            hosts,
            lambda h: probe_part(
                steps[h], list(require.get(h) or ()), list(speed_of.get(h) or ()), options[h].get("binary")
            ),
        )
        probes = {h: part.piece.get("probe") for h, part in parts.items()}
        esxi = []
        for host in hosts:
            found = probes[host]
            caps = found.get("caps") if isinstance(found, Mapping) else None
            if isinstance(caps, Mapping) and caps.get("esxi"):
                esxi.append(host)
        result.update(
            changed=False,
            probes=probes,
            link_speeds={h: part.piece.get("link_speeds") or {} for h, part in parts.items()},
            esxi_hosts=esxi,
        )
        warnings = [f"{h}: {w}" for h, part in parts.items() for w in part.warnings]
        if warnings:
            result["warnings"] = warnings
        failed = [f"{h}: {'; '.join(part.failed)}" for h, part in parts.items() if part.failed]
        if failed:
            result.update(
                failed=True, msg=f"{_NAME}: the probe failed on {len(failed)} host(s) - " + " | ".join(failed)
            )
        else:
            result["msg"] = f"probed {len(hosts)} host(s)"
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
        steps, options, _unlinked = self._links(recorder.run_hosts(run), args["host_options"], task_vars)
        for host in options:
            options[host] = given(**options[host], probe=(args["probes"] or {}).get(host))
        outcome = drive(
            run,
            steps,
            options,
            state=state,
            previous=previous,
            esxi_hosts=frozenset(args["esxi_hosts"]),
            continue_on_error=bool(args["continue_on_error"]),
            say=_display.display,
            link_speeds=args["link_speeds"],
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
    return given(**{option: own.value(str(name)) for option, name in names.items() if name})


def _unreachable(why: str) -> Step:
    return lambda name, args: {"unreachable": True, "msg": why}
