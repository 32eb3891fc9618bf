# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The flows -- probe, server, client, stop: probe (or take the probe given), decide, run the script, read its output.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import Execute
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.framing import Section, first, parse_kv
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.collect import (
    collect_summary,
    server_tests,
    task_tests,
    wait_for_clients,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.common import (
    DEFAULT_BINARIES,
    DEFAULT_PORTS,
    SERVER_START_WAIT,
    IperfRunError,
    int_or_none,
    parse_sections,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.diagnosis import Context, Diagnosis, diagnose
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.interpret import interpret_client
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.latency import client_latency, client_pings
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.leftover import (
    RunId,
    holder_state,
    leftover_note,
    refusal,
    this_run,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.options import (
    build_client_argv,
    build_server_argv,
    check_start_at,
    default_timeout,
    validate_params,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.probe import (
    HostCaps,
    Probe,
    build_probe_script,
    given_caps,
    given_probe,
    holder_lines,
    in_shell,
    parse_listeners,
    parse_probe,
    port_conflicts,
    probe_result,
    select_binary,
    with_bash_clock,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.reading import Rider
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.scripts import (
    build_client_script,
    build_server_script,
    build_stop_port_script,
    build_stop_script,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf_run.state import (
    private_dir_of,
    raise_state_error,
    read_pidfile,
    state_paths,
    state_stem,
)

# --------------------------------------------------------------------------------------------
# The flow
# --------------------------------------------------------------------------------------------


def run(
    params: Mapping[str, Any],
    execute: Execute,
    *,
    spec: Mapping[str, Mapping[str, Any]],
    check_mode: bool,
    token: str,
    now: Callable[[], float],
    sleep: Callable[[float], None] | None = None,
    run_id: RunId | None = None,
) -> dict[str, Any]:
    """Do what ``params`` ask on the host behind ``execute``; return the task result.

    ``spec`` is the module's argument spec (``validate_params``).

    ``sleep`` pauses the controller between two reads of a server's log (``mode=collect`` only).
    ``run_id`` names this run in the pidfile of a server it starts (``leftover.py``; default
    :func:`this_run`): a later run tells a server this one left when interrupted by it.
    Raises ``IperfRunError`` with a message naming the cause and the fix.
    """
    mode = validate_params(params, spec)
    reading = params.get("reading")
    # a probe's reading (the link speeds) reads only, as the probe: made in check mode too
    if reading and (mode == "probe" or (mode in ("server", "stop", "client") and not check_mode)):
        rider = Rider(reading)
        params = {**params, "reading": None}
        if mode == "probe":
            result = _run_probe(params, rider.first(execute), token=token)
        elif mode == "client":
            result = _run_client(params, execute, check_mode=check_mode, token=token, now=now, rider=rider)
        else:
            ridden = rider.first(execute)
            result = run(params, ridden, spec=spec, check_mode=check_mode, token=token, now=now, run_id=run_id)
        return {**result, "reading": rider.result()}
    if mode == "probe":
        return _run_probe(params, execute, token=token)
    if mode == "server":
        return _run_server(params, execute, check_mode=check_mode, token=token, run_id=run_id or this_run())
    if mode == "client":
        return _run_client(params, execute, check_mode=check_mode, token=token, now=now)
    if mode == "collect":
        if sleep is None:
            raise ValueError("mode=collect needs sleep")  # pragma: no cover - a programming error
        return _run_collect(params, execute, check_mode=check_mode, token=token, now=now, sleep=sleep)
    return _run_stop(params, execute, check_mode=check_mode, token=token)


def _probe(execute: Execute, token: str, **kwargs: Any) -> Probe:
    script = build_probe_script(token, **kwargs)
    return parse_probe(execute(script), token)


def _candidates(params: Mapping[str, Any]) -> tuple[str, ...]:
    binary = params.get("binary")
    return (binary,) if binary else DEFAULT_BINARIES


def _host_probe(params: Mapping[str, Any], execute: Execute, token: str) -> Probe:
    """The binaries and tools of the host: the ``probe`` option when given (no session), else a probe."""
    candidates = _candidates(params)
    if params.get("probe") is not None:
        return given_probe(params["probe"], candidates)
    return _probe(execute, token, candidates=candidates)


def _run_probe(params: Mapping[str, Any], execute: Execute, *, token: str) -> dict[str, Any]:
    candidates = _candidates(params)
    probe = _probe(execute, token, candidates=candidates)
    found = ", ".join(f"{b['path']} ({b['family']} {b['version']})" for b in probe.binaries if b["runnable"])
    result = {
        "changed": False,
        "probe": probe_result(probe, candidates),
        "host_is_esxi": probe.caps.esxi,
        "msg": f"found {found}" if found else "no runnable iperf binary found",
    }
    runnable = {b["family"] for b in probe.binaries if b["runnable"]}
    missing = [family for family in params.get("require") or [] if family not in runnable]
    if missing:
        binary = params.get("binary")
        looked = f"at {binary}" if binary else "in the ESXi locations and for iperf3 and iperf in PATH"
        raise IperfRunError(
            f"no runnable {' or '.join(missing)} on this host (looked {looked}; found {found or 'none'}). Install it "
            "(Linux - the iperf3 or iperf package; ESXi - esxilab.iperf.esxi_iperf_install), set binary "
            "(paired_test_binary) to its path, or choose another tool",
            result | {"error_kind": "not_installed"},
        )
    return result


def _run_server(
    params: Mapping[str, Any], execute: Execute, *, check_mode: bool, token: str, run_id: RunId
) -> dict[str, Any]:
    state_dir = params.get("state_dir") or "/tmp"
    probe = _host_probe(params, execute, token)
    binary = select_binary(probe, tool=params.get("tool"), binary=params.get("binary"))
    port = params.get("port") or DEFAULT_PORTS[binary.tool]
    bind = params.get("bind")
    protocol = "udp" if binary.tool == "iperf2" and params.get("protocol") == "udp" else "tcp"
    argv = build_server_argv(binary, params, port)
    base: dict[str, Any] = {
        "port": port,
        "bind": bind,
        "tool": binary.tool,
        "tool_version": binary.version,
        "binary": binary.path,
        "log": None,
        "command": shlex.join(argv),
        "server_timeout": params.get("server_timeout"),
        "host_is_esxi": probe.caps.esxi,
    }
    meta = {
        "tool": binary.tool,
        "port": str(port),
        "bind": bind or "",
        "binary": binary.path,
        "owner": run_id.text,
    }

    def start(check_listing: bool) -> list[Section]:
        script = build_server_script(
            token,
            argv,
            caps=probe.caps,
            state_dir=state_dir,
            stem=state_stem(port, bind),
            server_timeout=int(params.get("server_timeout") or 0),
            meta=meta,
            port=port,
            protocol=protocol,
            check_listing=check_listing,
            dry=check_mode,
        )
        out = execute(script)
        sections = parse_sections(out.stdout, token)
        state = first(sections, "state")
        raise_state_error(state, state_dir, base)
        base["log"] = state_paths(private_dir_of(state, state_dir), port, bind)[1]
        if first(sections, "done") is None:
            raise IperfRunError(
                f"the server start script failed (exit status {out.rc}): {(out.stderr or out.stdout).strip()[-400:]}",
                base | {"stdout": out.stdout, "stderr": out.stderr},
            )
        if first(sections, "busy") is not None:
            return sections  # a server of ours on this port: the caller decides (a leftover is stopped)
        listing = first(sections, "listing")
        if listing is not None:
            conflicts = port_conflicts(parse_listeners(listing.text), proto=protocol, port=port, bind=bind)
            if conflicts:
                held = ", ".join(f"{c.proto} {c.host or '*'}:{c.port}" for c in conflicts)
                holders = holder_lines(listing.text, conflicts)
                what = f"; held by: {' | '.join(holders)}" if holders else ""
                raise IperfRunError(
                    f"port {port} is already in use on this host ({held}, seen by {listing.args}{what}); no server "
                    "this collection started holds it (no pidfile of ours lists a live server there). Stop what "
                    "listens there or choose another port",
                    base | {"error_kind": "port_in_use"},
                )
            return start(check_listing=False)  # another address or protocol on that port: not in the way
        return sections

    sections = start(check_listing=True)
    leftovers: list[str] = []
    busy = first(sections, "busy")
    if busy is not None:
        leftovers.append(
            _stop_leftover(
                busy, execute, probe, base, state_dir=state_dir, check_mode=check_mode, token=token, run_id=run_id
            )
        )
        if not check_mode:
            sections = start(check_listing=True)
            if first(sections, "busy") is not None:
                raise IperfRunError(
                    f"a server of ours still runs on port {port} after its leftover was stopped; stop it with "
                    f"mode=stop port={port} and run again",
                    base | {"error_kind": "port_in_use"},
                )
    base["leftovers"] = leftovers
    if check_mode:
        msg = f"would start {binary.tool} server on port {port} (check mode)"
        return base | {"changed": True, "pid": None, "msg": msg, "warnings": leftovers}
    started = first(sections, "started")
    if started is None:
        raise IperfRunError("the server start script printed no result; nothing is known about the server", base)
    kv = parse_kv(started.args)
    log_text = started.text
    base |= {"pid": int_or_none(kv.get("pid")), "guard_pid": int_or_none(kv.get("guard")), "raw": log_text}
    status = kv.get("status", "")
    base["listener"] = kv.get("listener") or None
    ctx = Context("server", binary.tool, port=port, bind=bind, protocol=protocol, binary=binary.path)
    if status == "exited":
        diagnosis = diagnose(log_text, ctx)
        if diagnosis is None:
            shown = log_text.strip()[-400:] or "no output"
            diagnosis = Diagnosis("server_exited", f"the {binary.tool} server exited right after start: {shown}", shown)
        raise IperfRunError(diagnosis.message, base | {"pid": None, "status": status, "error_kind": diagnosis.kind})
    warnings = list(leftovers)
    if status != "listening" and "listening" in log_text:
        warnings.append(
            f"the server printed its 'listening' banner but no socket listened on port {port} within "
            f"{SERVER_START_WAIT:g} s; it was not verified that it accepts connections"
        )
    elif status != "listening":
        warnings.append(
            f"the server process is running but printed no 'listening' banner within {SERVER_START_WAIT:g} s "
            "(iperf3 before 3.1.5 buffers its log); it was not verified that it accepts connections"
        )
    return base | {"changed": True, "status": status, "warnings": warnings}


def _stop_leftover(
    busy: Section,
    execute: Execute,
    probe: Probe,
    base: Mapping[str, Any],
    *,
    state_dir: str,
    check_mode: bool,
    token: str,
    run_id: RunId,
) -> str:
    """The server of ours the start found on its port (``busy``): stop it when the run that started it is gone
    (an interrupted run), else refuse naming it (leftover.py). The warning to give."""
    port, bind = base["port"], base["bind"]
    entry = read_pidfile(f"{state_stem(port, bind)}.pid", busy.text) or {}
    pid = int_or_none(parse_kv(busy.args).get("pid"))
    holder = holder_state(entry.get("owner"), run_id)
    if holder != "gone" or pid is None or entry.get("pid") != pid:
        raise IperfRunError(
            refusal(entry, holder, log=base["log"]), dict(base) | {"pid": pid, "error_kind": "port_in_use"}
        )
    if check_mode:
        return "would stop" + leftover_note(entry, "stopped").removeprefix("stopped") + " (check mode)"
    out = execute(build_stop_script(token, [entry], caps=probe.caps, state_dir=state_dir))
    sections = parse_sections(out.stdout, token)
    raise_state_error(first(sections, "state"), state_dir, base)
    stopped = first(sections, "stopped")
    status = parse_kv(stopped.args).get("status", "") if stopped is not None else ""
    if status not in ("stopped", "killed", "gone"):
        raise IperfRunError(
            f"found a server left by an interrupted run on port {port} (pid {pid}) but could not stop it "
            f"(status {status or 'none'}: {(out.stderr or out.stdout).strip()[-300:]}); stop it with mode=stop "
            f"port={port} or kill pid {pid}, then run again",
            dict(base) | {"pid": pid, "error_kind": "port_in_use"},
        )
    return leftover_note(entry, status)


def _run_client(
    params: Mapping[str, Any],
    execute: Execute,
    *,
    check_mode: bool,
    token: str,
    now: Callable[[], float],
    rider: Rider | None = None,
) -> dict[str, Any]:
    start_at = params.get("start_at")
    if start_at is not None:
        check_start_at(start_at, now())
    timeout = float(params.get("timeout") or default_timeout(params))
    probe = _host_probe(params, execute, token)
    binary = select_binary(probe, tool=params.get("tool"), binary=params.get("binary"))
    port = params.get("port") or DEFAULT_PORTS[binary.tool]
    argv = build_client_argv(binary, params, port)
    base: dict[str, Any] = {
        "tool": binary.tool,
        "tool_version": binary.version,
        "binary": binary.path,
        "server": params["server"],
        "port": port,
        "command": shlex.join(argv),
        "host_is_esxi": probe.caps.esxi,
    }
    if check_mode:
        return base | {
            "changed": False,
            "skipped": True,
            "skip_reason": "check mode: the iperf client was not run (a test cannot be simulated)",
            "msg": "check mode: the iperf client was not run",
        }
    state_dir = params.get("state_dir") or "/tmp"
    pings = client_pings(params, esxi=probe.caps.esxi, timeout=timeout)
    caps = with_bash_clock(probe.caps)
    script = build_client_script(
        token, argv, caps=caps, timeout=timeout, start_at=start_at, state_dir=state_dir, latency=pings
    )
    if rider is not None:  # in the script: the shell it is handed to (exec) runs the reading too
        out = rider.seen(execute(in_shell(caps, rider.after(script))))
    else:
        out = execute(in_shell(caps, script))
    sections = parse_sections(out.stdout, token)
    raise_state_error(first(sections, "state"), state_dir, base)
    if first(sections, "exit") is None:
        raise IperfRunError(
            f"the client script failed before iperf ran (exit status {out.rc}): "
            f"{(out.stderr or out.stdout).strip()[-400:]}",
            base | {"stdout": out.stdout, "stderr": out.stderr},
        )
    ctx = Context(
        "client",
        binary.tool,
        server=params["server"],
        port=port,
        bind=params.get("bind"),
        protocol=params.get("protocol") or "tcp",
        binary=binary.path,
        duration=float(params["duration"]) if params.get("duration") else (None if params.get("bytes") else 10.0),
    )
    info, diagnosis = interpret_client(
        sections,
        ctx,
        caps=caps,
        timeout=timeout,
        start_at=start_at,
        labels=params.get("labels") or {},
        peer_is_esxi=bool(params.get("peer_is_esxi")),
    )
    result = base | info | {"changed": False}
    if pings is not None:
        result["latency"] = client_latency(pings, sections, esxi=probe.caps.esxi, target=params["server"])
    if diagnosis is not None:
        raise IperfRunError(diagnosis.message, result | {"error_kind": diagnosis.kind})
    return result


def _run_stop(params: Mapping[str, Any], execute: Execute, *, check_mode: bool, token: str) -> dict[str, Any]:
    state_dir = params.get("state_dir") or "/tmp"
    pid = params.get("pid")
    port = params.get("port")
    bind = params.get("bind")
    if params.get("probe") is not None and pid is None and port is not None and not check_mode:
        return _stop_port(given_caps(params["probe"]), execute, token=token, state_dir=state_dir, port=port, bind=bind)
    probe = _probe(execute, token, state_dir=state_dir, pid=pid)
    raise_state_error(probe.state, state_dir)
    directory = private_dir_of(probe.state, state_dir)
    targets = [
        p
        for p in probe.pidfiles
        if p.get("pid") is not None
        and (pid is None or p.get("pid") == pid)
        and (port is None or p.get("port") == port)
        and (not bind or (p.get("bind") or None) == bind)
    ]
    if pid is not None and not targets and probe.pid_alive:
        raise IperfRunError(
            f"pid {pid} is running but was not started by this module (no pidfile in {directory} lists it); "
            "refusing to kill it. Stop it yourself, or pass the port of a server this module started"
        )
    alive = [t for t in targets if t.get("alive")]
    if check_mode or not targets:
        what = ", ".join(f"pid {t.get('pid')} (port {t.get('port')})" for t in alive) or "nothing"
        return {
            "changed": bool(alive),
            "stopped": [_stopped_entry(t, directory, "would stop" if t.get("alive") else "gone") for t in targets],
            "msg": (f"would stop {what} (check mode)" if check_mode else "no server started by this module runs here"),
        }
    out = execute(build_stop_script(token, targets, caps=probe.caps, state_dir=state_dir))
    sections = parse_sections(out.stdout, token)
    raise_state_error(first(sections, "state"), state_dir)
    by_pid = {str(t.get("pid")): t for t in targets}
    stopped = []
    for section in sections:
        if section.name != "stopped":
            continue
        kv = parse_kv(section.args)
        target = by_pid.get(kv.get("pid", ""))
        if target is None:
            continue
        entry = _stopped_entry(target, directory, kv.get("status", ""))
        entry["raw"] = section.text
        stopped.append(entry)
    changed = any(s["status"] in ("stopped", "killed") for s in stopped)
    return {
        "changed": changed,
        "stopped": stopped,
        "msg": f"stopped {sum(s['status'] in ('stopped', 'killed') for s in stopped)} server(s)",
    }


def _stop_port(
    caps: HostCaps, execute: Execute, *, token: str, state_dir: str, port: int, bind: str | None
) -> dict[str, Any]:
    """``mode=stop`` of the server on ``port`` in one session (the host's tools given): the script reads the pidfile
    and makes the same checks before any kill as the stop after a probe."""
    name = f"{state_stem(port, bind)}.pid"
    out = execute(build_stop_port_script(token, name, caps=caps, state_dir=state_dir))
    sections = parse_sections(out.stdout, token)
    state = first(sections, "state")
    raise_state_error(state, state_dir)
    if first(sections, "done") is None:
        raise IperfRunError(
            f"the stop script failed (exit status {out.rc}): {(out.stderr or out.stdout).strip()[-400:]}",
            {"stdout": out.stdout, "stderr": out.stderr},
        )
    directory = private_dir_of(state, state_dir)
    pidfile = first(sections, "pidfile")
    target = read_pidfile(name, pidfile.text) if pidfile is not None else None
    done = first(sections, "stopped")
    if target is None or done is None:
        return {"changed": False, "stopped": [], "msg": "no server started by this module runs here"}
    entry = _stopped_entry(target, directory, parse_kv(done.args).get("status", ""))
    entry["raw"] = done.text
    changed = entry["status"] in ("stopped", "killed")
    return {"changed": changed, "stopped": [entry], "msg": f"stopped {int(changed)} server(s)"}


def _stopped_entry(target: Mapping[str, Any], directory: str, status: str) -> dict[str, Any]:
    return {
        "pid": target.get("pid"),
        "port": target.get("port"),
        "tool": target.get("tool"),
        "log": f"{directory}/{target['log_name']}",
        "status": status,
    }


def _run_collect(
    params: Mapping[str, Any],
    execute: Execute,
    *,
    check_mode: bool,
    token: str,
    now: Callable[[], float],
    sleep: Callable[[float], None],
) -> dict[str, Any]:
    """Wait for the external clients of the server on ``port``, stop it, and return what it measured (collect.py)."""
    state_dir = params.get("state_dir") or "/tmp"
    port = params.get("port") or DEFAULT_PORTS[params.get("tool") or "iperf3"]
    bind = params.get("bind")
    clients = int(params["clients"])
    deadline = float(params["deadline"])
    peer = params.get("peer")
    base: dict[str, Any] = {"port": port, "bind": bind, "clients": clients, "deadline": deadline, "peer": peer}
    if check_mode:
        return base | {
            "changed": False,
            "skipped": True,
            "skip_reason": "check mode: no client was waited for (a test cannot be simulated)",
            "msg": "check mode: no client was waited for",
        }
    waited = wait_for_clients(
        execute,
        token=token,
        state_dir=state_dir,
        port=port,
        bind=bind,
        clients=clients,
        deadline=deadline,
        peer=peer,
        now=now,
        sleep=sleep,
    )
    log, stop_status = waited.log, "exited"
    if waited.alive:
        target = {"port": port, "bind": bind, "state_dir": state_dir}
        stopped = _run_stop(target, execute, check_mode=False, token=token)
        entries = stopped["stopped"]
        stop_status = str(entries[0]["status"]) if entries else "not running"
        final = entries[0].get("raw") if entries else None
        if isinstance(final, str) and final.strip():
            log = final
    # what had ended before the stop; a test the stop cut is not ended (its piece is parsed all the same)
    ended_before = {t.index for t in server_tests(waited.log, exited=not waited.alive, peer=peer) if t.ended}
    tests = [
        t if t.ended and t.index in ended_before else replace(t, ended=False)
        for t in server_tests(log, exited=not waited.alive, peer=peer)
    ]
    came, warnings = collect_summary(tests, clients=clients, deadline=deadline, reason=waited.reason, peer=peer)
    what = {"all_came": "all came", "server_exited": "the server exited", "deadline": "the deadline passed"}
    return base | {
        "changed": stop_status in ("stopped", "killed"),
        "came": came,
        "reason": waited.reason,
        "waited": waited.waited,
        "polls": waited.polls,
        "server_stop": stop_status,
        "tests": task_tests(tests, clients, params.get("labels") or {}),
        "raw": log,
        "warnings": warnings,
        "msg": f"{came} of {clients} external client test(s) came ({what[waited.reason]} after {waited.waited:g} s); "
        f"server {stop_status}",
    }
