# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Backend of ``esxilab.iperf.esxi_iperf_install``: read, plan, apply, verify and restore over the ESXi shell.

Controller-side only. The host is reached through ``execute(command) -> CommandOutput`` (the
action plugin lends the connection's plain shell: ESXi has no Python) and, for a VIB bundle kept
on the controller, ``upload(local_path) -> remote_path``. Parsing and planning are the pure
functions of ``plugin_utils/esxi/``; this file strings them together in the collection's
idempotency order: read current -> plan -> nothing to do: unchanged -> check mode: report ->
apply -> read again and verify (the binary prints its version) -> return what changed and the
``restore`` value that undoes it.

One concern, one file: the install flow and its restore (the parsers and planners it strings
together live in ``plugin_utils/esxi/``).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.secrets import mask_url, redact, url_secrets
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import (
    EsxiError,
    EsxiParseError,
    PlanError,
    VibInstallError,
    failure_from_output,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.esxcli import checked
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.install_plan import (
    InstallOptions,
    InstallPlan,
    RestoreRecord,
    plan_install_restore,
    plan_iperf_install,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.paths import (
    INSTALL_PROBE_PATHS,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.releases import (
    APP_DOMAIN,
    COPIES,
    release_of,
    supported,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.secpolicy import (
    SecurityDomain,
    parse_secpolicy_domains,
    plan_app_domain_install,
    plan_app_domain_restore,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.settings import (
    ExecInstalledOnly,
    exec_installed_only_from,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.steps import Step
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.versions import (
    EsxiVersion,
    parse_system_version,
    parse_vmware_version,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.vib import (
    Vib,
    find_vib,
    parse_iperf_version_banner,
    parse_vib_install_result,
    parse_vib_list,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.host.command import (
    CommandOutput,
    Execute,
    HostError,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.merge import earliest_wins
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.owner import describe
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.store import Journal, JournalError

__all__ = [
    "MUTUALLY_EXCLUSIVE",
    "RESTORE_KEYS",
    "UPLOAD_PLACEHOLDER",
    "EsxiInstallError",
    "install",
    "restore",
    "run",
]

_NAME = "esxilab.iperf.esxi_iperf_install"

MUTUALLY_EXCLUSIVE = [("vib_source", "vib_upload"), ("restore", "vib_source"), ("restore", "vib_upload")]

#: The keys of the ``restore`` value (each present only when there is something to undo).
RESTORE_KEYS = ("created_files", "installed_vib", "exec_installed_only_previous", "app_domain_previous")
#: Files a restore may remove: only the copies this module makes.
_REMOVABLE = COPIES
_VIB_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
#: Stands for the upload directory in check mode, where nothing is uploaded.
UPLOAD_PLACEHOLDER = "<upload dir>"

VERSION_COMMANDS = ("vmware -vl", "esxcli system version get")
VIB_LIST = "esxcli software vib list"
KERNEL_EIO = "esxcli system settings kernel list -o execInstalledOnly"
ADVANCED_EIO = "esxcli system settings advanced list -o /User/execInstalledOnly"
DOMAIN_LIST = "localcli system secpolicy domain list"


Upload = Callable[[str], str]
#: Runs one command with the given standard input (``HostAction.execute_input``).
ExecuteInput = Callable[[str, str], CommandOutput]


class EsxiInstallError(HostError):
    """The install backend's :class:`~.host.command.HostError`; its ``result`` keeps ``restore``."""


# --------------------------------------------------------------------------------------------
# Reading the host
# --------------------------------------------------------------------------------------------


def _checked(execute: Execute, command: str) -> str:
    return checked(execute, command, name=_NAME, error=EsxiInstallError)


def read_version(execute: Execute) -> EsxiVersion:
    """``vmware -vl``, else ``esxcli system version get``; a host answering neither is not ESXi."""
    problems = []
    for command, parser in zip(VERSION_COMMANDS, (parse_vmware_version, parse_system_version), strict=True):
        out = execute(command)
        if out.rc == 0:
            try:
                return parser(out.stdout)
            except EsxiParseError as exc:
                problems.append(f"'{command}': {exc.message}")
                continue
        problems.append(f"'{command}' exited {out.rc}: {out.text.strip()[:200]}")
    raise EsxiInstallError(
        f"{_NAME}: this host does not look like ESXi ({'; '.join(problems)}). The module prepares ESXi {supported()}"
        " hosts over SSH; for a Linux host install the iperf3 or iperf package instead."
    )


def read_present(execute: Execute, paths: Sequence[str] = INSTALL_PROBE_PATHS) -> set[str]:
    """Which of ``paths`` exist (one POSIX ``sh`` loop; busybox ``ash`` runs it)."""
    words = " ".join(shlex.quote(p) for p in paths)
    out = _checked(execute, f'for p in {words}; do if [ -e "$p" ]; then echo "$p"; fi; done')
    wanted = set(paths)
    return {line.strip() for line in out.splitlines() if line.strip() in wanted}


def read_exec_policy(execute: Execute) -> ExecInstalledOnly:
    """The kernel (boot) option and ``/User/execInstalledOnly``; what cannot be read stays ``None``."""
    kernel = execute(KERNEL_EIO)
    advanced = execute(ADVANCED_EIO)
    try:
        kernel_text = kernel.stdout if kernel.rc == 0 else None
        policy = exec_installed_only_from(kernel_text, None)
    except EsxiError:
        policy = ExecInstalledOnly()
    try:
        # exits 1 with [NoMatchError] before 8.0 (the option does not exist): runtime_option None
        option = exec_installed_only_from(None, advanced.text)
    except EsxiError:
        return policy
    return ExecInstalledOnly(
        runtime_option=option.runtime_option,
        boot_runtime=policy.boot_runtime,
        boot_configured=policy.boot_configured,
    )


def read_vibs(execute: Execute) -> list[Vib]:
    try:
        return parse_vib_list(_checked(execute, VIB_LIST))
    except EsxiParseError as exc:
        raise EsxiInstallError(f"{_NAME}: '{VIB_LIST}' printed something unexpected: {exc.message}") from exc


def read_domains(execute: Execute) -> list[SecurityDomain]:
    try:
        return parse_secpolicy_domains(_checked(execute, DOMAIN_LIST))
    except EsxiParseError as exc:
        raise EsxiInstallError(f"{_NAME}: '{DOMAIN_LIST}' printed something unexpected: {exc.message}") from exc


def _app_domain_level(domains: Sequence[SecurityDomain] | None) -> str | None:
    if domains is None:
        return None
    return next((d.level for d in domains if d.name == APP_DOMAIN), None)


def _view(
    *,
    binary: str | None,
    present: Collection[str],
    policy: ExecInstalledOnly | None,
    domains: Sequence[SecurityDomain] | None,
    vibs: Sequence[Vib] | None,
) -> dict[str, Any]:
    """What this module manages, as read (``null`` for what was not read)."""
    vib = find_vib(vibs, "iperf") if vibs is not None else None
    return {
        "binary_present": None if binary is None else binary in present,
        "exec_installed_only": None if policy is None else policy.runtime_option,
        "exec_installed_only_active": None if policy is None else policy.active,
        "app_domain": _app_domain_level(domains),
        "vib": None if vibs is None else (vib.version if vib else ""),
    }


def read_tool_version(execute: Execute, binary: str, tool: str) -> str:
    """Run ``BINARY -v`` (both families print their banner and exit; iperf2 exits 1) -> version."""
    out = execute(f"{shlex.quote(binary)} -v 2>&1")
    version = parse_iperf_version_banner(out.stdout + out.stderr)
    if version is not None:
        return version
    text = (out.stdout + out.stderr).strip()
    hint = ""
    if out.rc == 126 or "Permission denied" in text or "Operation not permitted" in text:
        hint = (
            " The host refused to run it: with execInstalledOnly active ESXi runs only files installed from a VIB"
            " (a copy is not); set relax_exec_policy: true, or check 'esxcli system settings kernel list -o"
            " execInstalledOnly' (the boot option cannot be relaxed without a reboot)."
        )
    raise EsxiInstallError(
        f"{_NAME}: '{binary} -v' printed no {tool} version banner (exit status {out.rc}): {text[:300]!r}.{hint}"
    )


# --------------------------------------------------------------------------------------------
# Install
# --------------------------------------------------------------------------------------------


def _method(args: Mapping[str, Any], version: EsxiVersion) -> str:
    method = str(args.get("method") or "auto")
    if method == "auto":
        try:
            return release_of(version.major, str(version))[0].install_method
        except PlanError as exc:  # older than every release of the table
            raise EsxiInstallError(
                f"{_NAME}: {exc}",
                {"esxi_version": ".".join(map(str, version.version)), "changed": False, "restore": {}},
            ) from exc
    return method


def _restore_value(
    record: RestoreRecord, app_domain_previous: str | None, done: Sequence[Step] | None = None
) -> dict[str, Any]:
    """The ``restore`` return value: only keys with something to undo.

    With ``done`` (a failure halfway), only what those steps did.
    """
    actions = None if done is None else {step.action for step in done}
    copied = None if done is None else {step.argv[-1] for step in done if step.action == "copy_binary"}
    out: dict[str, Any] = {}
    files = [f for f in record.created_files if copied is None or f in copied]
    if files:
        out["created_files"] = files
    if record.installed_vib and (actions is None or "vib_install" in actions):
        out["installed_vib"] = record.installed_vib
    if record.exec_installed_only_previous is not None and (actions is None or "relax_exec_policy" in actions):
        out["exec_installed_only_previous"] = record.exec_installed_only_previous
    if app_domain_previous is not None and (actions is None or "app_domain" in actions):
        out["app_domain_previous"] = app_domain_previous
    return out


def _predicted(before: Mapping[str, Any], plan: InstallPlan) -> dict[str, Any]:
    after = dict(before)
    actions = {step.action for step in plan.steps}
    after["binary_present"] = True
    if "relax_exec_policy" in actions:
        after["exec_installed_only"] = 0
        after["exec_installed_only_active"] = False
    if "app_domain" in actions:
        after["app_domain"] = "disabled"
    if "vib_install" in actions:
        after["vib"] = "(installed by this task)"
    return after


def _plan(
    args: Mapping[str, Any],
    version: EsxiVersion,
    method: str,
    vibs: Sequence[Vib],
    present: Collection[str],
    policy: ExecInstalledOnly,
    domains: Sequence[SecurityDomain] | None,
    vib_source: str | None,
) -> tuple[InstallPlan, str | None]:
    options = InstallOptions(
        method="vib" if method == "vib" else "bundled",
        vib_source=vib_source,
        allow_unsigned=bool(args.get("allow_unsigned")),
        relax_exec_policy=bool(args.get("relax_exec_policy")),
    )
    if domains is not None:
        app = plan_app_domain_install(version, present, domains)
        return app.install, app.previous_level
    return plan_iperf_install(version, vibs, present, policy, options), None


def install(
    args: Mapping[str, Any],
    execute: Execute,
    *,
    check_mode: bool,
    upload: Upload | None = None,
    local_upload: str | None = None,
    journal: Journal | None = None,
    execute_input: ExecuteInput | None = None,
) -> dict[str, Any]:
    """Make a runnable iperf available; the task result (raises :class:`EsxiInstallError`).

    ``execute_input(command, stdin)`` (the action's) carries a ``vib_source`` that holds a secret
    to the host on standard input instead of the command line (``_vib_install_command``).

    With a ``journal``, what the plan would undo is recorded on the host before its first command.
    """
    version = read_version(execute)
    method = _method(args, version)
    warnings: list[str] = []
    if method != "vib" and (args.get("vib_source") or args.get("vib_upload")):
        warnings.append(
            f"vib_source/vib_upload is not used: this {version} host gets the bundled iperf3 (method {method})"
        )
    vibs = read_vibs(execute) if method == "vib" else []
    present = read_present(execute)
    policy = read_exec_policy(execute)
    app_domain_route = (
        bool(args.get("relax_exec_policy")) and args.get("relax_mode") == "app_domain" and policy.active is True
    )
    if app_domain_route and method != "bundled":
        raise EsxiInstallError(
            f"{_NAME}: relax_mode app_domain lets the shipped iperf3 listen; it does not apply to method {method}."
            " Fix: use relax_mode: runtime_option for the VIB's iperf, or method: bundled."
        )
    domains = read_domains(execute) if app_domain_route else None
    vib_source: str | None = args.get("vib_source")
    if local_upload is not None:
        vib_source = f"{UPLOAD_PLACEHOLDER}/{local_upload.rstrip('/').rsplit('/', 1)[-1]}"
    if method == "vib" and not vib_source and find_vib(vibs, "iperf") is None:
        raise EsxiInstallError(
            f"{_NAME}: the iperf VIB is not installed on this {version} host and neither vib_upload nor vib_source"
            " is set. Fix: set vib_upload to the VIB or its offline bundle on the controller (e.g."
            " files/iperf-2.0.5-1-offline_bundle.zip), or vib_source to a URL or path the host can read (e.g."
            " http://vibsdepot.v-front.de/depot/DAST/iperf-2.0.5/iperf-2.0.5-1.x86_64.vib).",
            {"esxi_version": ".".join(map(str, version.version)), "changed": False, "restore": {}},
        )
    try:
        plan, app_previous = _plan(args, version, method, vibs, present, policy, domains, vib_source)
    except EsxiError as exc:
        raise EsxiInstallError(
            f"{_NAME}: {exc}",
            {"esxi_version": ".".join(map(str, version.version)), "changed": False, "restore": {}},
        ) from exc

    before = _view(
        binary=plan.binary,
        present=present,
        policy=policy,
        domains=domains,
        vibs=vibs if method == "vib" else None,
    )
    result: dict[str, Any] = {
        "changed": plan.changed,
        "esxi_version": ".".join(map(str, version.version)),
        "esxi_build": version.build,
        "method": plan.method,
        "tool": plan.tool,
        "binary": plan.binary,
        "source_binary": plan.source_binary,
        "tool_version": None,
        "verified": False,
        "commands": [step.command for step in plan.steps],
        "changes": [step.as_dict() for step in plan.steps],
        "previous": before,
        "restore": _restore_value(plan.restore, app_previous),
        "diff": {"before": before, "after": _predicted(before, plan) if plan.changed else dict(before)},
    }
    warnings += [f"{_NAME}: {w}" for w in plan.warnings]

    if check_mode or not plan.changed:
        result["current"] = result["diff"]["after"]
        if not plan.changed:
            # nothing pending: the binary is there and allowed to run, so running it changes nothing
            result["tool_version"] = read_tool_version(execute, plan.binary, plan.tool)
            result["verified"] = True
        if warnings:
            result["warnings"] = warnings
        return result

    if any(step.action == "vib_install" for step in plan.steps) and local_upload is not None:
        if upload is None:
            raise EsxiInstallError(f"{_NAME}: vib_upload is set but this connection cannot upload files")
        remote = upload(local_upload)
        plan, app_previous = _plan(args, version, method, vibs, present, policy, domains, remote)
        result["commands"] = [step.command for step in plan.steps]
        result["changes"] = [step.as_dict() for step in plan.steps]

    if journal is not None:
        try:
            journal.record(install=_restore_value(plan.restore, app_previous))
        except JournalError as exc:
            raise EsxiInstallError(
                f"{_NAME}: nothing was changed: the restore journal could not be written: {exc.message}",
                {**result, "changed": False, "commands": [], "changes": [], "restore": {}},
            ) from exc

    done: list[Step] = []
    for step in plan.steps:
        try:
            _apply(execute, step, warnings, execute_input)
        except EsxiInstallError as exc:
            partial = _restore_value(plan.restore, app_previous, done)
            tail = (
                f" Commands already applied: {[s.command for s in done]}; the 'restore' value in this result undoes"
                " them."
                if done
                else " Nothing was changed."
            )
            raise EsxiInstallError(
                exc.message + tail,
                {**result, "changed": bool(done), "commands": [s.command for s in done], "restore": partial},
            ) from exc
        done.append(step)

    try:
        present_after = read_present(execute)
        policy_after = read_exec_policy(execute)
        domains_after = read_domains(execute) if domains is not None else None
        vibs_after = read_vibs(execute) if method == "vib" else None
    except EsxiInstallError as exc:
        if warnings:
            result["warnings"] = warnings
        raise EsxiInstallError(
            f"{exc.message}. The changes were applied but reading them back failed; the 'restore' value in this"
            " result undoes them.",
            result,
        ) from exc
    current = _view(
        binary=plan.binary, present=present_after, policy=policy_after, domains=domains_after, vibs=vibs_after
    )
    result["current"] = current
    result["diff"]["after"] = current
    if warnings:
        result["warnings"] = warnings
    if plan.binary not in present_after:
        raise EsxiInstallError(f"{_NAME}: the commands ran but {plan.binary} does not exist on the host", result)
    result["tool_version"] = read_tool_version_or_fail(execute, plan, result)
    result["verified"] = True
    return result


def read_tool_version_or_fail(execute: Execute, plan: InstallPlan, result: Mapping[str, Any]) -> str:
    try:
        return read_tool_version(execute, plan.binary, plan.tool)
    except EsxiInstallError as exc:
        raise EsxiInstallError(exc.message, result) from exc


def _vib_install_command(step: Step) -> tuple[str, str] | None:
    """``(command, stdin)`` for a ``vib_install`` step whose source holds a secret (a password, a token), else None.

    The command reads the source from standard input (``IFS= read -r``), so the secret is in no
    command line: neither in Ansible's ``-vvv`` ``SSH: EXEC`` line nor in the host's process list.
    """
    if step.action != "vib_install":
        return None
    sources = [a for a in step.argv[4:] if a != "--no-sig-check" and not a.startswith("-")]
    if len(sources) != 1 or mask_url(sources[0]) == sources[0] or "\n" in sources[0]:
        return None
    argv = ['"$src"' if a == sources[0] else shlex.quote(a) for a in step.argv]
    return "IFS= read -r src && " + " ".join(argv), sources[0] + "\n"


def _apply(execute: Execute, step: Step, warnings: list[str], execute_input: ExecuteInput | None = None) -> None:
    hidden = _vib_install_command(step) if execute_input is not None else None
    out = execute(step.command) if hidden is None or execute_input is None else execute_input(*hidden)
    if step.action == "vib_install":
        try:
            installed = parse_vib_install_result(out.text)
        except VibInstallError as exc:
            raise EsxiInstallError(f"{_NAME}: {exc}") from exc
        except EsxiParseError as exc:
            raise EsxiInstallError(
                f"{_NAME}: '{step.command}' printed no installation result (exit status {out.rc}): {out.text[:300]!r}"
            ) from exc
        if installed.reboot_required:
            warnings.append(f"{_NAME}: esxcli says the VIB installation needs a reboot (Reboot Required: true)")
        return
    failure = failure_from_output(out.text, out.rc)
    if failure is not None:
        label = f"[{failure.error_class}] " if failure.error_class else ""
        raise EsxiInstallError(
            f"{_NAME}: '{step.command}' ({step.description}) failed (exit status {out.rc}): {label}{failure.message}"
        )


# --------------------------------------------------------------------------------------------
# Restore
# --------------------------------------------------------------------------------------------


_Vibs = list[Vib] | None
_Domains = list[SecurityDomain] | None
_Observed = tuple[set[str], ExecInstalledOnly | None, _Vibs, _Domains]


def _restore_record(value: Mapping[str, Any]) -> tuple[RestoreRecord, str | None]:
    unknown = set(value) - set(RESTORE_KEYS)
    if unknown:
        raise EsxiInstallError(
            f"{_NAME}: restore has unknown keys {sorted(unknown)}; pass the 'restore' value an earlier"
            f" esxi_iperf_install task returned (keys: {', '.join(RESTORE_KEYS)})"
        )
    files = value.get("created_files") or []
    if not isinstance(files, list | tuple) or any(f not in _REMOVABLE for f in files):
        raise EsxiInstallError(
            f"{_NAME}: restore.created_files may only name the copies this module makes ({', '.join(_REMOVABLE)});"
            f" got {files!r}"
        )
    vib = value.get("installed_vib")
    if vib is not None and not (isinstance(vib, str) and _VIB_NAME_RE.match(vib)):
        raise EsxiInstallError(f"{_NAME}: restore.installed_vib must be a VIB name such as 'iperf', got {vib!r}")
    previous = value.get("exec_installed_only_previous")
    if previous is not None and (isinstance(previous, bool) or previous not in (0, 1)):
        raise EsxiInstallError(f"{_NAME}: restore.exec_installed_only_previous must be 0 or 1, got {previous!r}")
    level = value.get("app_domain_previous")
    if level is not None and level not in ("enforcing", "disabled"):
        raise EsxiInstallError(f"{_NAME}: restore.app_domain_previous must be 'enforcing' or 'disabled', got {level!r}")
    return RestoreRecord.from_dict(value), level


def restore(
    args: Mapping[str, Any], execute: Execute, *, check_mode: bool, journal: Journal | None = None
) -> dict[str, Any]:
    """Undo what an install task recorded in its ``restore`` value and in the journal (idempotent)."""
    value = args.get("restore") or {}
    recorded: dict[str, Any] = {}
    journal_warnings: list[str] = []
    if journal is not None:
        try:
            found = journal.read()
        except JournalError as exc:  # the given restore value is still put back
            journal_warnings.append(f"{_NAME}: {exc.message}")
            journal = None
        else:
            if journal.holder(found) == "live" and not journal.takeover and found.owner is not None:
                journal_warnings.append(
                    f"{_NAME}: the journal {journal.directory} now belongs to {describe(found.owner)} (it took the"
                    " window over); only this task's restore value is put back, the journal is left to that run"
                )
                journal = None
            else:
                recorded = found.install
                journal_warnings += [
                    f"{_NAME}: journal entry {key} is not applied and kept: {why}"
                    for key, why in found.rejected.items()
                    if key.startswith(("exec.", "vib", "files"))
                ]
        value = earliest_wins(value, recorded)
    record, level = _restore_record(value)
    remove_vib = bool(args.get("remove_vib"))
    # a VIB kept stays journaled: restore.yml with esxilab_restore_remove_vib=true can still remove it
    kept = set() if remove_vib else {"vib"}

    def observe() -> _Observed:
        present = read_present(execute, INSTALL_PROBE_PATHS)
        policy = read_exec_policy(execute) if record.exec_installed_only_previous is not None else None
        vibs = read_vibs(execute) if remove_vib and record.installed_vib else None
        domains = read_domains(execute) if level is not None else None
        return present, policy, vibs, domains

    def plan(
        present: set[str],
        policy: ExecInstalledOnly | None,
        vibs: list[Vib] | None,
        domains: list[SecurityDomain] | None,
    ) -> tuple[Step, ...]:
        try:
            return plan_app_domain_restore(level, domains or []) + plan_install_restore(
                record,
                files_present=present,
                exec_installed_only=policy,
                vib_list=vibs or [],
                remove_vib=remove_vib,
            )
        except EsxiError as exc:
            raise EsxiInstallError(f"{_NAME}: {exc}") from exc

    def view(
        present: set[str],
        policy: ExecInstalledOnly | None,
        vibs: list[Vib] | None,
        domains: list[SecurityDomain] | None,
    ) -> dict[str, Any]:
        return {
            "created_files": {f: f in present for f in record.created_files},
            "exec_installed_only": None if policy is None else policy.runtime_option,
            "app_domain": _app_domain_level(domains),
            "vib": None if vibs is None else bool(record.installed_vib and find_vib(vibs, record.installed_vib)),
        }

    state = observe()
    steps = plan(*state)
    before = view(*state)
    result: dict[str, Any] = {
        "changed": bool(steps),
        "commands": [step.command for step in steps],
        "changes": [step.as_dict() for step in steps],
        "previous": before,
        "restore": {},
    }
    if recorded:
        result["journal_restored"] = recorded
    if journal_warnings:
        result["warnings"] = journal_warnings
    if record.installed_vib and not remove_vib:
        result.setdefault("warnings", []).append(
            f"{_NAME}: the {record.installed_vib} VIB installed by the install task is kept (set remove_vib: true"
            " to remove it; its journal entry stays, so playbooks/restore.yml -e esxilab_restore_remove_vib=true can"
            " still remove it)"
        )
    if not steps or check_mode:
        after = dict(before)
        if steps:
            after["created_files"] = dict.fromkeys(record.created_files, False)
            if record.exec_installed_only_previous is not None:
                after["exec_installed_only"] = record.exec_installed_only_previous
            if level is not None:
                after["app_domain"] = level
            if remove_vib and record.installed_vib:
                after["vib"] = False
        result["current"] = after
        result["diff"] = {"before": before, "after": after}
        if recorded and not check_mode and journal is not None:
            _clear(journal, result, sorted(recorded_keys(recorded) - kept))
        return result

    done: list[str] = []
    failed: dict[str, str] = {}
    for step in steps:  # best effort: every step is tried, the failures are named at the end
        key = _STEP_KEYS.get(step.action)
        command = step.command
        if journal is not None and key in recorded_keys(recorded) and step.action != "remove_copy":  # together
            command = journal.dropping(command, [key])
        out = execute(command)
        failure = failure_from_output(out.text, out.rc)
        if step.action == "vib_remove" and failure is None:
            try:
                parse_vib_install_result(out.text)
            except EsxiError as exc:
                failure = failure_from_output(str(exc), 1)
        if failure is not None:
            label = f"[{failure.error_class}] " if failure.error_class else ""
            failed[step.command] = (
                f"'{step.command}' ({step.description}) failed (exit status {out.rc}): {label}{failure.message}"
            )
            continue
        done.append(step.command)

    try:
        state_after = observe()
    except EsxiInstallError as exc:
        raise EsxiInstallError(
            f"{exc.message}. The restore commands ran ({done}) but reading the host back failed; run the restore"
            " again to check (it skips what is already back).",
            {**result, "changed": bool(done), "commands": done, "restore": dict(value)},
        ) from exc
    current = view(*state_after)
    result.update(current=current, diff={"before": before, "after": current}, changed=bool(done), commands=done)
    left = plan(*state_after)
    if journal is not None and recorded:
        keys = recorded_keys(recorded) - kept - {_STEP_KEYS[s.action] for s in left if s.action in _STEP_KEYS}
        _clear(journal, result, sorted(keys))
    if left:
        why = "; ".join(failed.values()) or "the host still needs it after the restore commands ran"
        raise EsxiInstallError(
            f"{_NAME}: put back what could be put back ({done or 'nothing'}); still needed:"
            f" {[s.description for s in left]} ({why}). The journal keeps these; run the restore again once the cause"
            " is fixed (it skips what is already back).",
            {**result, "restore": dict(value), "left": {s.description: failed.get(s.command, why) for s in left}},
        )
    return result


#: The journal key each restore step puts back (``files`` goes once no copy is left).
_STEP_KEYS = {"restore_exec_policy": "exec.runtime_option", "app_domain": "exec.app_domain", "vib_remove": "vib",
              "remove_copy": "files"}  # fmt: skip


def recorded_keys(recorded: Mapping[str, Any]) -> set[str]:
    """The journal keys of an install ``restore`` value the journal recorded."""
    names = {"exec_installed_only_previous": "exec.runtime_option", "app_domain_previous": "exec.app_domain",
             "installed_vib": "vib", "created_files": "files"}  # fmt: skip
    return {names[k] for k in recorded if k in names}


def _clear(journal: Journal, result: dict[str, Any], keys: list[str] | None = None) -> None:
    if keys == []:
        return
    journal.clear_restored("install", result, name=_NAME, what="the host", keys=keys)


def run(
    args: Mapping[str, Any],
    execute: Execute,
    *,
    check_mode: bool,
    upload: Upload | None = None,
    local_upload: str | None = None,
    journal: Journal | None = None,
    execute_input: ExecuteInput | None = None,
) -> dict[str, Any]:
    """Install (default) or, with ``restore``, undo an earlier install.

    Every URL in the result or the error is masked, and so is every secret of ``vib_source`` (its
    password, query and fragment) wherever it appears: ``secrets.redact``.
    """
    secrets = url_secrets(str(args.get("vib_source") or ""))
    try:
        if args.get("restore") is not None:
            result = restore(args, execute, check_mode=check_mode, journal=journal)
        else:
            result = install(
                args,
                execute,
                check_mode=check_mode,
                upload=upload,
                local_upload=local_upload,
                journal=journal,
                execute_input=execute_input,
            )
    except EsxiInstallError as exc:
        raise EsxiInstallError(redact(exc.message, secrets), redact(exc.result, secrets)) from exc
    redacted: dict[str, Any] = redact(result, secrets)
    return redacted
