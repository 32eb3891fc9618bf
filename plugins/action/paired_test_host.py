# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin ``esxilab.iperf.paired_test_host``: a whole run from the controller; the probe of the hosts.

Documentation: the module file of the same name. Each server start, client, collect, stop and NIC
read is the collection's own action (``iperf_run``, ``iperf_facts``) run over the host's own
connection (``common.links``: what ``delegate_to`` sets up), as ``ansible.builtin.template`` runs
``copy``: the same validation, scripts and results as a task of its own, without a task per step.
The run itself - the parts, the barrier, the record - is ``paired.engine``.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Mapping
from contextlib import ExitStack
from typing import Any

from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.esxilab.iperf.plugins.action import iperf_facts as iperf_facts_action
from ansible_collections.esxilab.iperf.plugins.action import iperf_run as iperf_run_action
from ansible_collections.esxilab.iperf.plugins.modules.paired_test_host import DOCUMENTATION
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.argspec import argument_spec
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.controller import begin
from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.links import HostLink, LinkError, link
from ansible_collections.esxilab.iperf.plugins.plugin_utils.cpu.esxi_runs import with_esxi_cpu
from ansible_collections.esxilab.iperf.plugins.plugin_utils.cpu.vsphere import query, session
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired import recorder
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.engine import ControllerGone, drive, each
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.line_rate import with_line_rates
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.parts import Step, given, probe_part
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.planned import PlannedRunError, planned_run
from ansible_collections.esxilab.iperf.plugins.plugin_utils.paired.progress import seen

_NAME = "esxilab.iperf.paired_test_host"
#: The actions of the steps, imported with this one: the play's process imports this action (its strategy reads the
#: class before it hands the task to a worker), so each worker - a fork of it - finds them loaded instead of importing
#: them again (about 0.1 s of CPU per task on the 2-core lab).
STEP_ACTIONS = (iperf_run_action.ActionModule, iperf_facts_action.ActionModule)
ARGUMENT_SPEC = argument_spec(DOCUMENTATION)
_display = Display()


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """A whole run on the hosts of the run (after the last, the ESXi hosts' CPU over the runs)."""

    TRANSFERS_FILES = False

    def _esxi_cpu(
        self, records: list[Any], hosts: list[str], names: Mapping[str, Any], task_vars: dict[str, Any]
    ) -> tuple[list[Any], list[str]]:
        """The ESXi hosts' CPU over every run of ``records`` from the vSphere API (``cpu.esxi_runs``), into the
        records, and a warning for each host without a figure: each host's endpoint and credentials from its own
        variables (``names``: ``hostname``, ``port``, ``username``, ``password``, ``validate_certs``,
        ``esxi_hostname``)."""
        _steps_of, endpoints, unlinked = links(self, hosts, names, task_vars)
        sessions: dict[str, Any] = {}
        reasons: dict[str, str] = dict(unlinked)
        with ExitStack() as stack:

            def series_of(host: str, start: float, end: float) -> Mapping[str, Any]:
                if host in reasons:
                    return {"reason": reasons[host]}
                if host not in sessions:
                    given_to = endpoints[host]
                    if not given_to.get("hostname") or given_to.get("password") in (None, ""):
                        reasons[host] = (
                            f"no vSphere endpoint for {host}: set its esxi_network_hostname and esxi_network_password "
                            "(the host's own API or its vCenter) to read its CPU from the PerformanceManager"
                        )
                        return {"reason": reasons[host]}
                    try:
                        sessions[host] = stack.enter_context(
                            session(
                                str(given_to["hostname"]),
                                int(given_to.get("port") or 443),
                                str(given_to.get("username") or "root"),
                                str(given_to["password"]),
                                boolean(given_to.get("validate_certs", True), strict=False),
                            )
                        )
                    except Exception as exc:  # pylint: disable=broad-exception-caught  # pyVmomi's and ssl's errors
                        reasons[host] = f"the vSphere API of {host} ({given_to['hostname']}) cannot be used: {exc}"
                        return {"reason": reasons[host]}
                name = endpoints[host].get("esxi_hostname")
                return query(sessions[host], str(name) if name else None, start, end)

            read = with_esxi_cpu(records, hosts, series_of)
        return read, [f"{host}: {why}" for host, why in sorted(reasons.items())]

    def _after_the_last(
        self, result: dict[str, Any], args: Mapping[str, Any], spool: str, task_vars: dict[str, Any]
    ) -> dict[str, Any]:
        """After the series' last run, made or not: the records of the runs made with the CPU of the ESXi hosts of
        ``cpu_hosts`` (RV(records)); nothing without one."""
        hosts = [str(h) for h in args["cpu_hosts"]]
        if not hosts:
            return result
        try:
            made = recorder.read_records(spool)
        except (recorder.SpoolError, OSError) as exc:
            result["warnings"] = [*result.get("warnings", ()), f"the ESXi hosts' CPU is not read: {exc}"]
            return result
        if made:
            result["records"], warnings = self._esxi_cpu(made, hosts, args["endpoint_options"], task_vars)
            if warnings:
                result["warnings"] = [*result.get("warnings", ()), *warnings]
        return result

    def _run(self, result: dict[str, Any], args: Mapping[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        """The whole run ``args.run`` on its hosts (``paired.engine``), its record kept in the spool."""
        try:
            run = planned_run(args["run"])  # checked once here: from now on a PlannedRun
        except PlannedRunError as exc:
            result.update(failed=True, msg=f"{_NAME}: {exc}")
            return result
        number = run["run"]
        spool = str(args["spool"])
        last = args["run_count"] is not None and number >= int(args["run_count"])
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
            return self._after_the_last(result, args, spool, task_vars) if last else result
        controller = os.getppid()  # ansible-playbook: a Ctrl-C ends it, and this task's process is left alone
        steps, options, unlinked = links(self, recorder.run_hosts(run), args["host_options"], task_vars)
        for host in options:
            options[host] = given(**options[host], probe=(args["probes"] or {}).get(host))
        # the links are made: link() gives each host's again (one per task and host)
        readers = {host: _read_steps(self, link(self, task_vars, host)) for host in steps if host not in unlinked}
        done = threading.Event()
        threading.Thread(target=_end_with_the_play, args=(controller, done), daemon=True).start()
        try:
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
                read_steps=readers,
                alive=lambda: os.getppid() == controller,
            )
        except ControllerGone as exc:
            result.update(failed=True, msg=f"{_NAME}: {exc}")
            return result
        finally:
            done.set()
        try:
            recorder.write_record(spool, outcome.record)
            recorder.write_state(spool, outcome.state)
        except (recorder.SpoolError, OSError) as exc:
            result.update(failed=True, msg=f"{_NAME} run {number}: the record of the run cannot be kept: {exc}")
            return result
        record = outcome.record
        result.update(
            # what the callbacks read of this run's record (paired.progress.seen), not every record so far: the facts
            # are every host's and copied again for every later task; the role lists the records from the loop's
            # results (record)
            ansible_facts={"__paired_test_recorded": [seen(record)], "__paired_test_halt": outcome.halt},
            record=record,
            ok=record["ok"],
            failed_hosts=outcome.failed_hosts,
            msg=f"run {number}: recorded ({'ok' if record['ok'] else 'failed'})",
        )
        if outcome.warnings:
            result["warnings"] = outcome.warnings
        if outcome.halt:  # the loop's later items are skipped (skip_reason); the role's always writes the report
            result.update(failed=True, msg=halt_message(record, args["run_count"]))
        return self._after_the_last(result, args, spool, task_vars) if last else result

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result, args = begin(self, tmp, task_vars, ARGUMENT_SPEC)
        if args is None:  # wrong or unknown options
            return result
        variables = task_vars or {}
        if self._play_context.check_mode:
            result.update(skipped=True, msg="a run starts and stops processes: not in check mode")
            return result
        if not args["spool"]:
            result.update(failed=True, msg=f"{_NAME}: spool is empty")
            return result
        return self._run(result, args, variables)


def halt_message(record: Mapping[str, Any], run_count: Any) -> str:
    """What the play says when the series stops after the failed run of ``record``."""
    errors = record.get("errors") or ["no figure"]
    swapped = "swapped, " if record.get("swapped") else ""
    of = f" of {run_count}" if run_count is not None else ""
    return (
        f"Run {record.get('run')}{of} ({record.get('test')}, {record.get('streams')} stream(s), "
        f"{record.get('direction')}, {swapped}repetition {record.get('repetition')}) failed - "
        f"{'; '.join(str(e) for e in errors)}. Every run up to it is in paired_test_results (and in the report, when "
        "paired_test_report_dir is set); the remaining runs were not started. Set paired_test_continue_on_error=true "
        "to record failed runs and go on."
    )


def links(
    action: ActionBase, hosts: list[str], names: Mapping[str, Any], task_vars: dict[str, Any]
) -> tuple[dict[str, Step], dict[str, dict[str, Any]], dict[str, str]]:
    """Each host's steps and the options of its steps from its own variables (``names``: option -> variable name); a
    host whose connection cannot be set up gets steps that say why (its part fails), and the reason."""
    steps: dict[str, Step] = {}
    options: dict[str, dict[str, Any]] = {}
    unlinked: dict[str, str] = {}
    for host in hosts:
        try:
            own = link(action, task_vars, host)
        except LinkError as exc:
            unlinked[host] = f"{exc}"
            steps[host], options[host] = _unreachable(unlinked[host]), {}
            continue
        steps[host] = _steps(action, own)
        options[host] = _host_options(own, names)
    return steps, options, unlinked


def probe(
    action: ActionBase,
    task_vars: dict[str, Any],
    plan: Mapping[str, Any],
    host_options: Mapping[str, Any],
    report_line_rate_bps: Any = None,
) -> dict[str, Any]:
    """The one probe of every host of the plan at once (``paired.parts.probe_part``: ``iperf_run mode=probe`` with the
    iperf families the host's runs use - ``plan.tools_by_host`` - and, in the probe's session, the link speed of the
    host's test addresses - ``plan.addresses_by_host``); every host's problem at once. Returns
    ``probes``, ``link_speeds``, ``esxi_hosts`` and the plan with the line rate of every run
    (``paired.line_rate.with_line_rates``; what ``esxi_network`` published on a host - its variable named
    ``published`` in ``host_options`` - wins), or ``failed`` and ``msg``."""
    hosts = [str(h) for h in plan.get("hosts") or ()]
    steps, options, _unlinked = links(action, hosts, host_options, task_vars)
    require: Mapping[str, Any] = plan.get("tools_by_host") or {}
    speed_of: Mapping[str, Any] = plan.get("addresses_by_host") or {}
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
    speeds = {h: part.piece.get("link_speeds") or {} for h, part in parts.items()}
    result: dict[str, Any] = {"probes": probes, "link_speeds": speeds, "esxi_hosts": esxi}
    warnings = [f"{h}: {w}" for h, part in parts.items() for w in part.warnings]
    if warnings:
        result["warnings"] = warnings
    failed = [f"{h}: {'; '.join(part.failed)}" for h, part in parts.items() if part.failed]
    if failed:
        result.update(failed=True, msg=f"the probe failed on {len(failed)} host(s) - " + " | ".join(failed))
        return result
    published = {h: options[h].get("published") or {} for h in hosts}
    try:
        result["plan"] = with_line_rates(plan, speeds, published=published, report_line_rate_bps=report_line_rate_bps)
    except (KeyError, TypeError, ValueError) as exc:
        result.update(failed=True, msg=f"the line rates of the plan cannot be set: {exc}")
    return result


def _steps(action: ActionBase, own: HostLink) -> Step:
    """The steps of a host: the collection's actions over its own connection."""
    return lambda name, args: own.step(action, name, args)


def _read_steps(action: ActionBase, own: HostLink) -> Step:
    """The host's steps over a second connection plugin (``HostLink.twin``): its readings, made while its servers
    start and stop."""
    return lambda name, args: own.twin().step(action, name, args)


def _host_options(own: HostLink, names: Mapping[str, Any]) -> dict[str, Any]:
    """The options of the host's steps from its own variables (``host_options``: option -> variable name)."""
    return given(**{option: own.value(str(name)) for option, name in names.items() if name})


def _end_with_the_play(controller: int, done: threading.Event) -> None:
    """End this task's process when ``ansible-playbook`` is gone (killed: a worker has a process group of its own, so
    it and the SSH sessions of its steps outlive a kill of the play's group, and a client waiting on its host for the
    start time would run its test against the next run's server). SIGTERM is Ansible's own end of a worker: it ends
    the worker's group - the SSH sessions, whose hosts then hang up on the clients' scripts."""
    while not done.wait(0.25):
        if os.getppid() != controller:
            os.kill(os.getpid(), signal.SIGTERM)
            return


def _unreachable(why: str) -> Step:
    return lambda name, args: {"unreachable": True, "msg": why}
