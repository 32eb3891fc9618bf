# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plan how to make a listening-capable iperf runnable on an ESXi host, and how to undo it.

Pure: from (release, VIB list, files present, execInstalledOnly state, options) to the
:class:`~ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.steps.Step` list and the
:class:`RestoreRecord` a later restore reads. Nothing is run here.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import ExecPolicyError, PlanError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.releases import (
    EXEC_OPTION,
    METHODS,
    families,
    release_of,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.settings import ExecInstalledOnly
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.steps import Step, esxcli_step, make_step
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.versions import EsxiVersion
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.vib import Vib, find_vib


@dataclass(frozen=True, slots=True)
class InstallOptions:
    """Options of the install planner (they mirror the module options of the same names).

    * ``method`` -- ``auto`` (6.x: ``vib``; 7.0 and later: ``bundled``), ``vib`` (install the
      community iperf2 VIB, then copy ``/opt/iperf/bin/iperf``) or ``bundled`` (copy the
      shipped ``/usr/lib/vmware/vsan/bin/iperf3``).
    * ``vib_source`` -- where ``esxcli software vib install`` reads the VIB: a path or URL
      ending in ``.zip`` is an offline bundle (``-d``), anything else a ``.vib`` (``-v``).
    * ``allow_unsigned`` -- add ``--no-sig-check`` (the community VIB is unsigned).
    * ``relax_exec_policy`` -- on a host where execInstalledOnly is active, set
      ``/User/execInstalledOnly`` to 0 for the test (recorded for restore).
    """

    method: Literal["auto", "vib", "bundled"] = "auto"
    vib_source: str | None = None
    allow_unsigned: bool = False
    relax_exec_policy: bool = False
    vib_name: str = "iperf"


@dataclass(frozen=True, slots=True)
class RestoreRecord:
    """What an install plan changes, so a later restore can put it back (JSON-able).

    * ``created_files`` -- copies this run creates (a pre-existing copy is never listed);
    * ``installed_vib`` -- the VIB name this run installs;
    * ``exec_installed_only_previous`` -- the ``/User/execInstalledOnly`` value before this run
      changed it, ``None`` when it was left alone.
    """

    created_files: tuple[str, ...] = ()
    installed_vib: str | None = None
    exec_installed_only_previous: int | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RestoreRecord:
        previous = data.get("exec_installed_only_previous")
        vib = data.get("installed_vib")
        return cls(
            created_files=tuple(str(f) for f in data.get("created_files") or ()),
            installed_vib=None if vib is None else str(vib),
            exec_installed_only_previous=None if previous is None else int(previous),
        )


@dataclass(frozen=True, slots=True)
class InstallPlan:
    """Commands that make an iperf server binary runnable, and how to undo them."""

    esxi: str
    method: Literal["vib", "bundled"]
    tool: Literal["iperf2", "iperf3"]
    source_binary: str
    binary: str
    steps: tuple[Step, ...]
    restore: RestoreRecord
    warnings: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.steps)


def plan_iperf_install(
    esxi_version: EsxiVersion,
    vib_list: Sequence[Vib],
    files_present: Collection[str],
    exec_installed_only: ExecInstalledOnly | None,
    options: InstallOptions,
) -> InstallPlan:
    """Plan how to get a listening-capable iperf on this host (sources: the docstrings of
    ``paths`` -- vSAN doc, Dell KB 000212752, V-Front VIB recordings -- and ``settings`` in this package).

    * 6.x (``method: auto`` -> ``vib``): install the community VIB from ``vib_source`` unless
      ``vib list`` already shows it (``--no-sig-check`` only with ``allow_unsigned``), then
      ``cp /opt/iperf/bin/iperf /opt/iperf/bin/iperf.copy`` (the recorded 6.7 recipe).
    * 7.0 and later (``auto`` -> ``bundled``): ``cp`` the shipped iperf3 to ``iperf3.copy``
      unless the copy is already there ("In ESXi 7.0 that has been done for you" on some builds).
    * execInstalledOnly active (the ESXi 8.0 default): the copy is a non-installed file and
      would be refused. Refuse unless ``relax_exec_policy``; then set the runtime option to 0
      and record its previous value. If the *boot* option is enforcing, relaxing the runtime
      option cannot help: refuse with the reason.

    ``files_present`` holds the paths of :data:`INSTALL_PROBE_PATHS` that exist on the host.
    Nothing already in place is re-done, and nothing that existed before is recorded for removal.
    """
    version = esxi_version
    release, known = release_of(version.major, str(version))
    present = set(files_present)
    warnings: list[str] = []
    if not known:
        warnings.append(f"{version} is newer than the releases this collection was checked against ({families()})")
    method: Literal["vib", "bundled"] = release.install_method if options.method == "auto" else options.method
    tool, source, binary = METHODS[method].tool, METHODS[method].source, METHODS[method].binary

    steps: list[Step] = []
    created: list[str] = []
    installed_vib: str | None = None
    if method == "bundled":
        if binary not in present and source not in present:
            raise PlanError(
                f"{source} does not exist on this {version} host, so there is no bundled iperf3 to copy.",
                fix="use method: vib with vib_source pointing at the iperf VIB or its offline bundle.",
            )
    else:
        if find_vib(vib_list, options.vib_name) is None:
            if not options.vib_source:
                raise PlanError(
                    f"the {options.vib_name!r} VIB is not installed on this {version} host and vib_source is not set.",
                    fix="set vib_source to the offline bundle uploaded to the host (e.g."
                    " /tmp/iperf-2.0.5-1-offline_bundle.zip) or to the VIB's URL (e.g."
                    " http://vibsdepot.v-front.de/depot/DAST/iperf-2.0.5/iperf-2.0.5-1.x86_64.vib).",
                )
            flag = "-d" if options.vib_source.lower().endswith(".zip") else "-v"
            argv = ["esxcli", "software", "vib", "install", flag, options.vib_source]
            if options.allow_unsigned:
                argv.append("--no-sig-check")
            steps.append(
                make_step("vib_install", f"install the {options.vib_name} VIB from {options.vib_source}", *argv)
            )
            installed_vib = options.vib_name
            if not release.vib_verified:
                warnings.append(
                    f"the 2015 community iperf VIB was not verified on ESXi {release.family} (VIB packaging changed"
                    " in 8.0); method: bundled is the tested route there"
                )
        elif source not in present and binary not in present:
            raise PlanError(
                f"the {options.vib_name!r} VIB is installed but {source} is missing.",
                fix=f"reinstall it: 'esxcli software vib remove -n {options.vib_name}', then run again"
                " with vib_source.",
            )
    if binary not in present:
        steps.append(make_step("copy_binary", f"copy {source} to {binary} (the copy can listen)", "cp", source, binary))
        created.append(binary)
    else:
        warnings.append(f"{binary} already exists; it is used as is and left in place by restore")

    previous_exec: int | None = None
    policy = exec_installed_only
    active = None if policy is None else policy.active
    if active is None:
        if release.exec_on_by_default:
            raise PlanError(
                f"the execInstalledOnly state of this {version} host is unknown, and it is on by default in 8.0.",
                fix="read it first: 'esxcli system settings kernel list -o execInstalledOnly' and"
                " 'esxcli system settings advanced list -o /User/execInstalledOnly'.",
            )
        warnings.append("execInstalledOnly was not read; it is off by default before ESXi 8.0")
    elif active and policy is not None:  # active is None whenever policy is None
        if policy.boot_runtime is True:
            raise ExecPolicyError(
                f"execInstalledOnly is enforced by the boot option on this {version} host, so {binary}"
                " (not installed from a VIB) would be refused, and the runtime option cannot override it.",
                fix="the boot option changes only with 'esxcli system settings kernel set -s execInstalledOnly"
                " -v FALSE' and a reboot; this collection does not reboot hosts.",
            )
        if policy.runtime_option is None:
            raise ExecPolicyError(
                f"execInstalledOnly is active on this {version} host but /User/execInstalledOnly could not be read.",
                fix="read it with 'esxcli system settings advanced list -o /User/execInstalledOnly'.",
            )
        if not options.relax_exec_policy:
            raise ExecPolicyError(
                f"execInstalledOnly is active on this {version} host: {binary} is not installed from a VIB"
                " and would be refused.",
                fix="set relax_exec_policy: true to set /User/execInstalledOnly to 0 for the test (the restore"
                " step puts the previous value back; vCenter warns while it is off).",
            )
        previous_exec = policy.runtime_option
        relax = esxcli_step(
            "relax_exec_policy",
            f"set {EXEC_OPTION} to 0 (was {previous_exec}) so {binary} may run",
            "system settings advanced set",
            *("-o", EXEC_OPTION, "-i", "0"),
        )
        steps.insert(0, relax)
    elif release.exec_on_by_default:
        warnings.append("execInstalledOnly is already off on this host (it is on by default in ESXi 8.0)")

    return InstallPlan(
        esxi=str(version),
        method=method,
        tool=tool,
        source_binary=source,
        binary=binary,
        steps=tuple(steps),
        restore=RestoreRecord(
            created_files=tuple(created), installed_vib=installed_vib, exec_installed_only_previous=previous_exec
        ),
        warnings=tuple(warnings),
    )


def plan_install_restore(
    record: RestoreRecord,
    *,
    files_present: Collection[str],
    exec_installed_only: ExecInstalledOnly | None,
    vib_list: Sequence[Vib] = (),
    remove_vib: bool = False,
) -> tuple[Step, ...]:
    """Undo what an install plan recorded, skipping what is already back (idempotent).

    The execInstalledOnly value is put back first, then the copies are removed, then -- only
    when ``remove_vib`` -- the VIB this run installed.
    """
    steps: list[Step] = []
    previous = record.exec_installed_only_previous
    if previous is not None:
        current = None if exec_installed_only is None else exec_installed_only.runtime_option
        if current != previous:
            steps.append(
                esxcli_step(
                    "restore_exec_policy",
                    f"set {EXEC_OPTION} back to {previous}",
                    "system settings advanced set",
                    *("-o", EXEC_OPTION, "-i", str(previous)),
                )
            )
    present = set(files_present)
    for path in record.created_files:
        if path in present:
            steps.append(make_step("remove_copy", f"remove {path} (created by the install step)", "rm", "-f", path))
    if remove_vib and record.installed_vib and find_vib(vib_list, record.installed_vib) is not None:
        steps.append(
            esxcli_step(
                "vib_remove",
                f"remove the {record.installed_vib} VIB (installed by the install step)",
                "software vib remove",
                *("-n", record.installed_vib),
            )
        )
    return tuple(steps)
