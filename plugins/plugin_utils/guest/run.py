# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Backend of ``esxilab.iperf.guest_network``: find the vNIC's interface, address it, journaled first.

The idiom: check the options (``request.py``, nothing has run yet) -> one probe session (``ip``, the
routes, the SSH session's address, the package managers, the persistent configuration) -> the plan
(``plan.py``, ``persist.py``; a refusal changes nothing) -> nothing to do: unchanged -> check mode:
the diff -> the restore journal records what puts the change back (``journal.store``: the MTU
before, the address added, "was down", the persistent setting created) -> the commands -> a second
probe must plan nothing, or the task fails. ``esxilab.iperf.esxi_journal mode=restore scope=link``
(the role's ``tasks/restore.yml``, ``playbooks/restore.yml``) puts it back.

No Ansible import; the host is reached through the ``execute`` callable. Private module.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.guest import packages, persist
from ansible_collections.esxilab.iperf.plugins.plugin_utils.guest.links import (
    Link,
    LinkParseError,
    default_route_devices,
    parse_ip_json,
    parse_ip_text,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.guest.plan import RuntimePlan, journal_merge, plan_runtime
from ansible_collections.esxilab.iperf.plugins.plugin_utils.guest.request import (
    GuestNetworkError,
    Request,
    check_request,
    option,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import Execute
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.framing import marker, split_sections
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.store import Journal, JournalError

__all__ = ["Probe", "parse_probe", "probe_script", "run"]

_NAME = "esxilab.iperf.guest_network"


@dataclass(frozen=True, slots=True)
class Probe:
    """What one probe session read on the guest."""

    links: list[Link]
    routes: list[str]
    ssh_address: str | None
    uid: int | None
    tools: list[str]
    persist: persist.PersistState


def probe_script(tag: str, *, with_persist: bool) -> str:
    """One session: the SSH address, the uid, ``ip`` (JSON and text), default routes, package managers."""

    def mark(name: str, args: str = "") -> str:
        return marker(tag, name, args)

    commands = " ".join(packages.COMMANDS[m] for m in packages.MANAGERS)
    lines = [
        mark("ssh", "${SSH_CONNECTION:-}"),
        mark("uid", "$(id -u 2>/dev/null)"),
        mark("ipjson"),
        "ip -j addr show 2>/dev/null",
        mark("iplink"),
        "ip -o link show",
        mark("ipaddr"),
        "ip -o addr show",
        mark("route"),
        "ip route show default 2>/dev/null; ip -6 route show default 2>/dev/null",
        mark("tools"),
        f'for _t in {commands}; do command -v "$_t" >/dev/null 2>&1 && printf \'%s\\n\' "$_t"; done',
    ]
    if with_persist:
        lines.append(persist.probe_script(mark))
    lines.append(mark("ok"))
    return "\n".join(lines)


def parse_probe(stdout: str, tag: str) -> Probe:
    """The :class:`Probe` of :func:`probe_script`'s output (raises :class:`GuestNetworkError`)."""
    sections = split_sections(stdout, tag)
    got = {s.name: s for s in sections}
    if "ok" not in got:
        raise GuestNetworkError(f"the probe of the guest did not finish: {stdout.strip()[-300:]!r}")
    links: list[Link] = []
    text = got["ipjson"].text.strip() if "ipjson" in got else ""
    try:
        links = parse_ip_json(text) if text.startswith("[") else []
    except LinkParseError:
        links = []
    if not links:
        try:
            links = parse_ip_text(got["iplink"].text, got["ipaddr"].text)
        except LinkParseError as exc:
            raise GuestNetworkError(
                f"cannot read the guest's interfaces with ip: {exc}. Fix: install iproute2"
            ) from None
    if not links:
        raise GuestNetworkError("ip printed no interface of the guest. Fix: install iproute2 (ip) on the guest")
    words = got["ssh"].args.split()
    uid = got["uid"].args.strip()
    return Probe(
        links=links,
        routes=default_route_devices(got["route"].text),
        ssh_address=words[2] if len(words) >= 3 else None,
        uid=int(uid) if uid.isdigit() else None,
        tools=got["tools"].text.split(),
        persist=persist.parse_probe(sections),
    )


def _probe(execute: Execute, with_persist: bool) -> Probe:
    tag = f"esxilab-guest-{secrets.token_hex(6)}"
    out = execute(probe_script(tag, with_persist=with_persist))
    return parse_probe(out.stdout, tag)


def _plans(request: Request, probe: Probe) -> tuple[RuntimePlan, persist.PersistPlan | None]:
    runtime = plan_runtime(request, probe.links, probe.routes, probe.ssh_address)
    if request.persist is None:
        return runtime, None
    kind = persist.detect(request.persist, probe.persist, runtime.link.name)
    return runtime, persist.plan_persist(kind, runtime.link.name, request, probe.persist)


def _diff(runtime: RuntimePlan, saved: persist.PersistPlan | None) -> list[dict[str, Any]]:
    diffs: list[dict[str, Any]] = [
        {
            "before_header": f"{runtime.link.name} (runtime)",
            "after_header": f"{runtime.link.name} (runtime)",
            "before": json.dumps(runtime.before, indent=2, sort_keys=True) + "\n",
            "after": json.dumps(runtime.after, indent=2, sort_keys=True) + "\n",
        }
    ]
    if saved is not None:
        diffs.append(
            {
                "before_header": f"{saved.target} ({saved.kind})",
                "after_header": f"{saved.target} ({saved.kind})",
                "before": saved.before or "",
                "after": saved.after or "",
            }
        )
    return diffs


def run(args: Mapping[str, Any], execute: Execute, journal: Journal, *, check_mode: bool) -> dict[str, Any]:
    """The task result (raises :class:`GuestNetworkError` / ``JournalError``)."""
    request = check_request(args)  # bad input fails here: nothing has run on the guest yet
    install = bool(args.get("install"))
    if request.mac is None:
        if not check_mode:
            raise GuestNetworkError(
                f"{option('vnics')}[0].mac_address is null: the vNIC is not on the guest yet. Fix: run"
                " esxilab.iperf.esxi_guests without check mode first (it adds the vNIC and reports its MAC)"
            )
        return {
            "changed": True,
            "interface": None,
            "changes": ["the vNIC esxi_guests would add is addressed once it exists (its MAC is not known yet)"],
            "commands": [],
        }
    probe = _probe(execute, request.persist is not None)
    runtime, saved = _plans(request, probe)
    changes = runtime.changes + (saved.changes if saved else [])
    commands = runtime.commands + (saved.commands if saved else [])
    manager = packages.manager_of(probe.tools)
    result: dict[str, Any] = {
        "changed": bool(changes),
        "interface": runtime.link.name,
        "mac": request.mac,
        "address": str(request.address),
        "mtu": request.mtu if request.mtu is not None else runtime.link.mtu,
        "changes": changes,
        "commands": commands,
        "before": runtime.before,
        "after": runtime.after,
        "persist": None if saved is None else {"kind": saved.kind, "target": saved.target},
        "package_manager": manager,
        "packages": packages.packages_for(manager, args.get("packages")) if install else [],
        "diff": _diff(runtime, saved),
    }
    if not changes or check_mode:
        return result
    if probe.uid not in (0, None):
        raise GuestNetworkError(
            f"{runtime.link.name} needs changes ({'; '.join(changes)}) and the connecting user (uid {probe.uid}) is not"
            " root. Nothing was changed. Fix: run the role with become: true (or connect as root)",
            {"changed": False},
        )
    wanted = journal_merge(runtime.journal)
    config = {k: dict(v) for k, v in (wanted.get("config") or {}).items()}
    if saved is not None and saved.journal is not None:
        config.setdefault(runtime.link.name, {})["persist"] = saved.journal
    try:
        state = journal.record(link_mtu=wanted.get("mtu") or {}, link_config=config)
    except JournalError as exc:
        raise GuestNetworkError(f"{_NAME}: {exc.message}", {"changed": False}) from exc
    result["journal"] = state.as_dict()
    done: list[str] = []
    for command in commands:
        out = execute(command)
        if out.rc != 0:
            raise GuestNetworkError(
                f"'{command}' failed on the guest (exit status {out.rc}): {(out.stderr or out.stdout).strip()[:300]}."
                " What was done before is in the restore journal: the role's restore (or playbooks/restore.yml) puts"
                " it back",
                {**result, "commands": [*done, command]},
            )
        done.append(command)
    again = _probe(execute, request.persist is not None)
    runtime_after, saved_after = _plans(request, again)
    left = runtime_after.changes + (saved_after.changes if saved_after else [])
    if left:
        raise GuestNetworkError(
            f"the guest does not show the settings after the commands: still {'; '.join(left)}. The journal keeps what"
            " puts it back (the role's restore, playbooks/restore.yml)",
            result,
        )
    result["after"] = runtime_after.before
    return result
