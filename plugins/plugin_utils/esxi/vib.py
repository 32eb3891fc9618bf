# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Software: ``esxcli software vib list`` / ``vib install`` (and profile update) results, the
fixes named for install errors, and the iperf ``-v`` banner.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import (
    EsxcliFailure,
    EsxiParseError,
    VibInstallError,
    find_esxcli_failure,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.tables import (
    kv_fields,
    parse_bool,
    parse_table,
    required_field,
    split_list,
)


@dataclass(frozen=True, slots=True)
class Vib:
    """A row of ``esxcli software vib list``. ``platforms`` is ``None`` before 8.0 (no column)."""

    name: str
    version: str
    vendor: str
    acceptance_level: str
    install_date: str
    platforms: tuple[str, ...] | None = None


def parse_vib_list(text: str) -> list[Vib]:
    """``esxcli software vib list`` (6.7/7.x five columns; 8.x adds ``Platforms``)."""
    vibs = []
    for row in parse_table(text, "Name"):
        platforms = row.get("platforms")
        vibs.append(
            Vib(
                name=required_field(row, "name", "vib list"),
                version=required_field(row, "version", "vib list"),
                vendor=row.get("vendor", ""),
                acceptance_level=row.get("acceptancelevel", ""),
                install_date=row.get("installdate", ""),
                platforms=None if platforms is None else tuple(p for p in re.split(r"[,\s]+", platforms) if p),
            )
        )
    return vibs


def find_vib(vibs: Iterable[Vib], name: str) -> Vib | None:
    """The installed VIB called ``name`` (the Name column, e.g. ``iperf``), if any."""
    return next((vib for vib in vibs if vib.name == name), None)


def parse_vib_id(vib_id: str) -> tuple[str, str, str] | None:
    """``DAST_bootbank_iperf_2.0.5-1`` -> ``("DAST", "iperf", "2.0.5-1")``; ``None`` if not that shape.

    The id is ``<vendor>_<bootbank|locker>_<name>_<version>``; names may contain ``_``-free
    dots and dashes (``elx-esx-libelxima.so``), versions never contain ``_``.
    """
    m = re.fullmatch(r"(?P<vendor>[^_]+)_(?P<bank>[^_]+)_(?P<name>.+)_(?P<version>[^_]+)", vib_id.strip())
    if not m:
        return None
    return m.group("vendor"), m.group("name"), m.group("version")


@dataclass(frozen=True, slots=True)
class VibInstallResult:
    """``Installation Result`` / ``Update Result`` / ``Removal Result`` of ``esxcli software``.

    ``dpu_results`` is ``None`` when the field is absent (before 8.0) and ``""`` when printed empty.
    """

    kind: str
    message: str
    reboot_required: bool | None
    installed: tuple[str, ...]
    removed: tuple[str, ...]
    skipped: tuple[str, ...]
    dpu_results: str | None

    @property
    def installed_names(self) -> tuple[str, ...]:
        """Names (``iperf``) of the installed VIB ids (``DAST_bootbank_iperf_2.0.5-1``)."""
        return tuple(parsed[1] for parsed in map(parse_vib_id, self.installed) if parsed)


_RESULT_HEADER_RE = re.compile(r"^\s*(?P<kind>Installation|Update|Removal) Result\s*$", re.MULTILINE)

# Fixes for the error classes esxcli prints on install. The AcceptanceConfigError and
# DependencyError texts are recorded (SOURCES.md); VibDownloadError and MaintenanceModeError
# are matched by class name only -- their message text is not recorded.
_VIB_FIXES: dict[str, tuple[str, str | None]] = {
    "AcceptanceConfigError": (
        "set allow_unsigned: true so the install runs with --no-sig-check (bypasses the acceptance"
        " level and signature checks; vSphere then shows a SECURITY ALERT), or lower the host"
        " acceptance level yourself with 'esxcli software acceptance set --level=CommunitySupported'.",
        "allow_unsigned",
    ),
    "DependencyError": (
        "the VIB requires something this ESXi release does not provide (e.g. an esx-version range):"
        " use a VIB built for this release, or on ESXi 7.0 and later use method: bundled"
        " (the iperf3 shipped in /usr/lib/vmware/vsan/bin).",
        "method",
    ),
    "NoMatchError": (
        "the named VIB or image profile is not in the given source: check vib_source.",
        "vib_source",
    ),
    "ProfileValidationError": (
        "the source does not fit this host's image profile: use a VIB or bundle made for this ESXi release.",
        "vib_source",
    ),
    "VibDownloadError": (
        "the ESXi host could not fetch vib_source: upload the offline bundle to the host and point"
        " vib_source at its path, or allow outgoing HTTP (ruleset httpClient).",
        "vib_source",
    ),
    "MaintenanceModeError": (
        "this VIB can only be installed in maintenance mode: put the host in maintenance mode first"
        " (this collection does not do that for you).",
        None,
    ),
}


def vib_install_error(failure: EsxcliFailure) -> VibInstallError:
    """Wrap an esxcli failure of ``software vib install`` with the fix for its class."""
    fix, option = _VIB_FIXES.get(
        failure.error_class or "",
        ("see /var/log/esxupdate.log on the host for the cause.", None),
    )
    return VibInstallError(failure, fix=fix, option=option)


def parse_vib_install_result(text: str) -> VibInstallResult:
    """Parse an install/update/removal result; raise :class:`VibInstallError` on ``[...Error]``.

    Field order differs by release (6.7: Message, Reboot Required, VIBs ...; 8.x: Message,
    VIBs ..., Reboot Required, DPU Results) -- fields are read by name. Empty lists may carry a
    trailing space (``VIBs Removed: ``).
    """
    failure = find_esxcli_failure(text)
    if failure is not None:
        raise vib_install_error(failure)
    header = _RESULT_HEADER_RE.search(text)
    if header is None:
        raise EsxiParseError("no 'Installation Result'/'Update Result'/'Removal Result' block", raw=text)
    kv = kv_fields(text[header.end() :])
    return VibInstallResult(
        kind=header.group("kind"),
        message=kv.get("message", ""),
        reboot_required=parse_bool(kv.get("rebootrequired")),
        installed=split_list(kv.get("vibsinstalled")),
        removed=split_list(kv.get("vibsremoved")),
        skipped=split_list(kv.get("vibsskipped")),
        dpu_results=kv.get("dpuresults"),
    )


def parse_iperf_version_banner(text: str) -> str | None:
    """``iperf version 2.0.5 (08 Jul 2010) pthreads`` (iperf2 ``-v``) or ``iperf 3.x`` -> version."""
    m = re.search(r"^\s*iperf (?:version )?(?P<ver>\d+\.\d+(?:\.\d+)*\S*)", text, re.MULTILINE)
    return m.group("ver") if m else None
