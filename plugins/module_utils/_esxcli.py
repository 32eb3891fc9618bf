# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parse what the ESXi shell prints, and plan what to run there.

ESXi has no Python for Ansible modules, so the collection talks to the busybox shell over
plain SSH and reads the text that ``esxcli``, ``vmware``, ``localcli`` and ``vmkping`` print.
This module holds the two pure halves of that work:

* **parsers** -- typed records built from the plain-text layouts recorded from real hosts
  (6.7, 7.x, 8.x; see ``tests/unit/plugins/module_utils/fixtures/esxi/SOURCES.md``). Tables
  are cut at the column offsets of their dashes line, so values with single spaces
  (``Management VMkernel``) and right-aligned numbers stay intact; key/value outputs are read
  by field name, so the 6.7/7.x and 8.x field orders both work. ``esxcli --formatter=csv``
  tables are accepted by the same table parsers (keys are compared without spaces or case);
* **planners** -- functions from (current state, wanted state, options) to a list of shell
  commands plus what must be put back afterwards. They never run anything.

Every figure comes from the output or is ``None``; nothing is guessed. Errors are domain
exceptions whose message names the object, the cause and the option or command that fixes it.

Private module: not part of the collection's public API. Stdlib only (no Ansible imports).
"""

from __future__ import annotations

import csv
import io
import re
import shlex
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = [
    "ACCEPTANCE_LEVELS",
    "APP_DOMAIN",
    "BUNDLED_IPERF3",
    "BUNDLED_IPERF3_COPY",
    "INSTALL_PROBE_PATHS",
    "VIB_IPERF",
    "VIB_IPERF_COPY",
    "AdvancedOption",
    "AppDomainPlan",
    "EsxcliFailure",
    "EsxiError",
    "EsxiParseError",
    "EsxiVersion",
    "ExecInstalledOnly",
    "ExecPolicyError",
    "FirewallChange",
    "FirewallDesired",
    "FirewallError",
    "FirewallPlan",
    "FirewallStatus",
    "InstallOptions",
    "InstallPlan",
    "Ipv4Interface",
    "KernelSetting",
    "Nic",
    "PathMtuResult",
    "PlanError",
    "Portgroup",
    "RestoreRecord",
    "Ruleset",
    "SecurityDomain",
    "StandardVswitch",
    "Step",
    "Vib",
    "VibInstallError",
    "VibInstallResult",
    "VmkInterface",
    "exec_installed_only_from",
    "failure_from_output",
    "find_esxcli_failure",
    "find_vib",
    "ipv4_payload_for_mtu",
    "parse_acceptance_get",
    "parse_acceptance_set",
    "parse_advanced_option",
    "parse_bool",
    "parse_firewall_get",
    "parse_ip_interface_list",
    "parse_iperf_version_banner",
    "parse_ipv4_list",
    "parse_kernel_settings",
    "parse_linux_ping",
    "parse_nic_list",
    "parse_portgroup_list",
    "parse_ruleset_list",
    "parse_secpolicy_domains",
    "parse_system_version",
    "parse_table",
    "parse_vib_id",
    "parse_vib_install_result",
    "parse_vib_list",
    "parse_vmkping",
    "parse_vmware_version",
    "parse_vswitch_list",
    "plan_app_domain_install",
    "plan_app_domain_restore",
    "plan_firewall",
    "plan_install_restore",
    "plan_iperf_install",
    "to_dict",
    "vib_install_error",
]

# --------------------------------------------------------------------------------------------
# Paths on the host (esxi-facts.md sections 1 and 2.1)
# --------------------------------------------------------------------------------------------

#: iperf3 shipped with ESXi (vSAN tooling); present since 6.5 U2 according to several write-ups.
BUNDLED_IPERF3 = "/usr/lib/vmware/vsan/bin/iperf3"
#: The copy that can listen ("unable to start listener ... Operation not permitted" otherwise).
BUNDLED_IPERF3_COPY = BUNDLED_IPERF3 + ".copy"
#: iperf2 installed by the V-Front community VIB ``iperf-2.0.5-1`` (vendor DAST).
VIB_IPERF = "/opt/iperf/bin/iperf"
VIB_IPERF_COPY = VIB_IPERF + ".copy"
#: The paths whose presence :func:`plan_iperf_install` needs to know (``test -e`` each).
INSTALL_PROBE_PATHS: tuple[str, ...] = (BUNDLED_IPERF3, BUNDLED_IPERF3_COPY, VIB_IPERF, VIB_IPERF_COPY)

_EXEC_OPTION = "/User/execInstalledOnly"

# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


class EsxiError(Exception):
    """Base class: ``message`` says what is wrong, ``fix`` what the user can do about it."""

    def __init__(self, message: str, *, fix: str | None = None, raw: str | None = None) -> None:
        super().__init__(message if not fix else f"{message} Fix: {fix}")
        self.message = message
        self.fix = fix
        self.raw = raw


class EsxiParseError(EsxiError):
    """The text is not the layout this parser knows; ``raw`` keeps it."""


class PlanError(EsxiError):
    """The options cannot be planned for this host (missing input, impossible combination)."""


class ExecPolicyError(PlanError):
    """execInstalledOnly would stop the copied iperf binary from running."""


class FirewallError(PlanError):
    """A firewall change cannot be made as asked."""


@dataclass(frozen=True, slots=True)
class EsxcliFailure:
    """An error esxcli printed: ``[ErrorClass]`` plus its message lines, or a bare message."""

    error_class: str | None
    message: str
    raw: str


class VibInstallError(EsxiError):
    """``esxcli software vib install`` (or profile update) refused; ``option`` names the fix."""

    def __init__(self, failure: EsxcliFailure, *, fix: str, option: str | None = None) -> None:
        label = f"[{failure.error_class}] " if failure.error_class else ""
        super().__init__(f"VIB installation failed: {label}{failure.message}", fix=fix, raw=failure.raw)
        self.error_class = failure.error_class
        self.option = option
        self.failure = failure


# --------------------------------------------------------------------------------------------
# Generic text helpers
# --------------------------------------------------------------------------------------------

_KV_RE = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z][A-Za-z0-9 ./()_-]*?):(?:[ \t]+(?P<value>.*?))?\s*$")
_DASHES_RE = re.compile(r"^\s*-+(?:\s+-+)*\s*$")
_BOOL = {"true": True, "false": False}


def _key(name: str) -> str:
    """Field-name key shared by plain-text headers and ``--formatter=csv`` headers."""
    return re.sub(r"[^0-9a-z]", "", name.lower())


def parse_bool(value: str | None) -> bool | None:
    """``true``/``TRUE``/``false``/``FALSE`` as esxcli prints them; anything else is ``None``."""
    if value is None:
        return None
    return _BOOL.get(value.strip().lower())


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    value = value.strip()
    return int(value) if re.fullmatch(r"-?\d+", value) else None


def _na(value: str | None) -> str | None:
    """esxcli prints ``N/A`` (and sometimes nothing) for an unset text field."""
    if value is None:
        return None
    value = value.strip()
    return None if value in ("", "N/A") else value


def _split_list(value: str | None) -> tuple[str, ...]:
    """``vmnic3, vmnic2, vmnic1`` -> tuple; an empty field (often a trailing space) -> ``()``."""
    if value is None or not value.strip():
        return ()
    return tuple(part.strip() for part in value.split(", ") if part.strip())


def _kv_pairs(text: str) -> list[tuple[str, str, int]]:
    """Every ``Key: value`` line as (key, value, indent); other lines are skipped."""
    pairs = []
    for line in text.splitlines():
        m = _KV_RE.match(line)
        if m:
            pairs.append((m.group("key").strip(), m.group("value") or "", len(m.group("indent"))))
    return pairs


def _kv(text: str) -> dict[str, str]:
    """First value of each key, keyed by :func:`_key` (so ``Default Action`` -> ``defaultaction``)."""
    out: dict[str, str] = {}
    for key, value, _indent in _kv_pairs(text):
        out.setdefault(_key(key), value)
    return out


def _blocks(text: str) -> list[tuple[str, dict[str, str]]]:
    """Titled blocks: an unindented title line followed by indented ``Key: value`` lines.

    Used by ``network ip interface list`` and ``network vswitch standard list``. A prompt line
    or anything else unindented before the title is simply replaced by the title.
    """
    blocks: list[tuple[str, dict[str, str]]] = []
    title: str | None = None
    current: dict[str, str] | None = None
    for line in text.splitlines():
        if not line.strip():
            current = None
            continue
        m = _KV_RE.match(line)
        if m and m.group("indent"):
            if current is None:
                if title is None:
                    continue
                current = {}
                blocks.append((title, current))
            current.setdefault(_key(m.group("key")), m.group("value") or "")
            continue
        title = line.strip()
        current = None
    return blocks


def parse_table(text: str, first_column: str) -> list[dict[str, str]]:
    """Rows of an esxcli table as dicts keyed by :func:`_key` of the header names.

    Three layouts are accepted:

    * plain text with a dashes line: columns are cut at the dash runs' offsets (this keeps
      ``Management VMkernel`` whole and reads right-aligned numbers such as ``Speed``);
    * plain text without a dashes line (an excerpt): offsets come from the header words;
    * ``esxcli --formatter=csv``: a header of field names without spaces, trailing comma.

    ``first_column`` (e.g. ``"Name"``) identifies the header line, so a shell prompt or a blank
    line above the table is ignored. Rows end at the first blank line after the table body.
    """
    lines = text.splitlines()
    want = _key(first_column)
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        if _DASHES_RE.match(line) and index > 0:
            header = lines[index - 1]
            if not header.strip() or _key(re.split(r"\s{2,}", header.strip())[0]) != want:
                continue
            spans = [m.start() for m in re.finditer(r"-+", line)]
            return _cut_rows(header, spans, lines[index + 1 :])
        stripped = line.strip()
        if "," in stripped and "  " not in stripped and want in {_key(c) for c in stripped.split(",")}:
            return _csv_rows("\n".join(lines[index:]))
        words = list(re.finditer(r"\S+(?: \S+)*", line))
        if words and _key(words[0].group()) == want and len(words) > 1:
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if _DASHES_RE.match(following):
                continue  # the dashes branch handles it on the next line
            return _cut_rows(line, [m.start() for m in words], lines[index + 1 :])
    raise EsxiParseError(f"no table with a {first_column!r} column found in the output", raw=text)


def _cut_rows(header: str, starts: list[int], body: Sequence[str]) -> list[dict[str, str]]:
    bounds = [*starts[1:], None]
    names = [_key(header[start:end]) for start, end in zip(starts, bounds, strict=True)]
    rows: list[dict[str, str]] = []
    for line in body:
        if not line.strip():
            if rows:
                break
            continue
        if line.lstrip().startswith("[root@") or _DASHES_RE.match(line):
            break
        rows.append(
            {name: line[start:end].strip() for name, start, end in zip(names, starts, bounds, strict=True) if name}
        )
    return rows


def _csv_rows(text: str) -> list[dict[str, str]]:
    reader = csv.reader(io.StringIO(text.strip() + "\n"))
    header = [_key(name) for name in next(reader)]
    rows = []
    for record in reader:
        if not any(cell.strip() for cell in record):
            continue
        rows.append({name: cell.strip() for name, cell in zip(header, record, strict=False) if name})
    return rows


def _required(row: Mapping[str, str], key: str, what: str) -> str:
    try:
        return row[key]
    except KeyError:
        raise EsxiParseError(f"{what}: column {key!r} missing (have {sorted(row)})") from None


def to_dict(obj: Any) -> dict[str, Any]:
    """A record or plan as plain JSON-able data (tuples become lists) for Ansible results."""
    data = asdict(obj)
    if isinstance(obj, InstallPlan | FirewallPlan):
        data["steps"] = [step.as_dict() for step in obj.steps]
        data["changed"] = obj.changed
    result: dict[str, Any] = _listify(data)
    return result


def _listify(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _listify(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_listify(v) for v in value]
    return value


# --------------------------------------------------------------------------------------------
# esxcli error text
# --------------------------------------------------------------------------------------------

_BRACKET_RE = re.compile(r"\[(?P<cls>[A-Z][A-Za-z]*(?:Error|Exception))\]")
_NOISE = ("Please refer to the log file for more details.",)


def find_esxcli_failure(text: str) -> EsxcliFailure | None:
    """The ``[SomethingError]`` esxcli printed, with its message, or ``None``.

    Recorded shapes: the class alone on a line followed by the message (``vib install``,
    ``profile update``), the message followed by the class (``advanced set`` on 7.0.3:
    ``Unable to find option execInstalledOnly`` / `` [NoMatchError]``) and the class inside a
    sentence (a VxRail LCM message quoting ``[DependencyError] VIB ... requires ...``).
    Prompt lines, ``> `` continuation lines and "Please refer to the log file" are dropped.
    """
    lines = [ln for ln in text.splitlines() if ln.strip()]
    for index, line in enumerate(lines):
        m = _BRACKET_RE.search(line)
        if not m:
            continue
        rest = line[m.end() :].strip()
        if rest:
            detail = [rest]
        else:
            detail = [ln.strip() for ln in lines[index + 1 :] if not _is_prompt(ln)]
            if not detail:
                detail = [ln.strip() for ln in lines[:index] if not _is_prompt(ln)]
        detail = [d for d in detail if d not in _NOISE]
        message = " ".join(d for d in (_strip_noise(d) for d in detail) if d)
        return EsxcliFailure(error_class=m.group("cls"), message=message, raw=text)
    return None


def _strip_noise(line: str) -> str:
    for noise in _NOISE:
        line = line.replace(noise, "")
    return line.strip()


def _is_prompt(line: str) -> bool:
    s = line.strip()
    return s.startswith("[root@") or s.startswith("> ") or s.startswith("~ #")


def failure_from_output(text: str, rc: int) -> EsxcliFailure | None:
    """:func:`find_esxcli_failure`, or the whole text as message when ``rc`` is non-zero.

    Some esxcli errors carry no class, e.g. (8.0 U2) ``Invalid operation requested: Can not
    change allowed ip list this ruleset, it is owned by system service.``
    """
    found = find_esxcli_failure(text)
    if found is not None:
        return found
    if rc != 0:
        message = " ".join(ln.strip() for ln in text.splitlines() if ln.strip() and not _is_prompt(ln))
        return EsxcliFailure(error_class=None, message=message or f"exit status {rc}", raw=text)
    return None


# --------------------------------------------------------------------------------------------
# Versions: vmware -v / -l / -vl, esxcli system version get
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EsxiVersion:
    """An ESXi release. ``version`` is as printed (``(7, 0, 3)``; ``vmware -l`` alone gives ``(7, 0)``)."""

    version: tuple[int, ...]
    build: int | None = None
    update: int | None = None
    patch: int | None = None
    product: str = "VMware ESXi"

    @property
    def major(self) -> int:
        return self.version[0]

    @property
    def minor(self) -> int:
        return self.version[1] if len(self.version) > 1 else 0

    @property
    def family(self) -> str:
        """``"6.7"``, ``"7.0"``, ``"8.0"`` -- what the planners branch on."""
        return f"{self.major}.{self.minor}"

    def __str__(self) -> str:
        text = f"{self.product} {'.'.join(map(str, self.version))}"
        if self.update is not None:
            text += f" Update {self.update}"
        if self.build is not None:
            text += f" build-{self.build}"
        return text


_VMWARE_BUILD_RE = re.compile(r"^\s*(?P<product>VMware ESXi) (?P<ver>\d+(?:\.\d+)*) build-(?P<build>\d+)\s*$")
_VMWARE_LEVEL_RE = re.compile(r"^\s*(?P<product>VMware ESXi) (?P<ver>\d+(?:\.\d+)*)(?: Update (?P<update>\d+))?\s*$")


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def parse_vmware_version(text: str) -> EsxiVersion:
    """``vmware -v`` (``VMware ESXi 7.0.3 build-22348816``), ``vmware -l``
    (``VMware ESXi 7.0 Update 3``) or both (``-vl``/``-lv``). Prompt lines are ignored.

    The build line's version (three parts) wins over the level line's (``7.0``). ``update`` is
    ``None`` when only ``-v`` was run; ``patch`` is never printed by ``vmware``.
    """
    build_m = level_m = None
    for line in text.splitlines():
        build_m = build_m or _VMWARE_BUILD_RE.match(line)
        level_m = level_m or _VMWARE_LEVEL_RE.match(line)
    if build_m is not None:
        version = _version_tuple(build_m.group("ver"))
        build: int | None = int(build_m.group("build"))
        product = build_m.group("product")
    elif level_m is not None:
        version = _version_tuple(level_m.group("ver"))
        build = None
        product = level_m.group("product")
    else:
        raise EsxiParseError("not 'vmware -v'/'vmware -l' output (no 'VMware ESXi <version>' line)", raw=text)
    update = int(level_m.group("update")) if level_m is not None and level_m.group("update") else None
    return EsxiVersion(version=version, build=build, update=update, patch=None, product=product)


def parse_system_version(text: str) -> EsxiVersion:
    """``esxcli system version get``: Product, Version, Build (``Releasebuild-8169922``), Update, Patch."""
    kv = _kv(text)
    if "version" not in kv or "product" not in kv:
        raise EsxiParseError("not 'esxcli system version get' output (no Product/Version fields)", raw=text)
    if not re.fullmatch(r"\d+(?:\.\d+)*", kv["version"]):
        raise EsxiParseError(f"unexpected Version field {kv['version']!r}", raw=text)
    build_m = re.search(r"(\d+)\s*$", kv.get("build", ""))
    return EsxiVersion(
        version=_version_tuple(kv["version"]),
        build=int(build_m.group(1)) if build_m else None,
        update=_int(kv.get("update")),
        patch=_int(kv.get("patch")),
        product=kv["product"],
    )


# --------------------------------------------------------------------------------------------
# Software: vib list / vib install / acceptance
# --------------------------------------------------------------------------------------------


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
                name=_required(row, "name", "vib list"),
                version=_required(row, "version", "vib list"),
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
    kv = _kv(text[header.end() :])
    return VibInstallResult(
        kind=header.group("kind"),
        message=kv.get("message", ""),
        reboot_required=parse_bool(kv.get("rebootrequired")),
        installed=_split_list(kv.get("vibsinstalled")),
        removed=_split_list(kv.get("vibsremoved")),
        skipped=_split_list(kv.get("vibsskipped")),
        dpu_results=kv.get("dpuresults"),
    )


ACCEPTANCE_LEVELS = ("VMwareCertified", "VMwareAccepted", "PartnerSupported", "CommunitySupported")


def parse_acceptance_get(text: str) -> str:
    """``esxcli software acceptance get`` prints the level alone, e.g. ``PartnerSupported``."""
    for line in text.splitlines():
        if line.strip() in ACCEPTANCE_LEVELS:
            return line.strip()
    raise EsxiParseError("no acceptance level in the output", raw=text)


def parse_acceptance_set(text: str) -> str:
    """``Host acceptance level changed to 'CommunitySupported'.`` -> ``CommunitySupported``."""
    m = re.search(r"Host acceptance level changed to '(?P<level>\w+)'", text)
    if not m:
        raise EsxiParseError("no 'Host acceptance level changed to' line", raw=text)
    return m.group("level")


def parse_iperf_version_banner(text: str) -> str | None:
    """``iperf version 2.0.5 (08 Jul 2010) pthreads`` (iperf2 ``-v``) or ``iperf 3.x`` -> version."""
    m = re.search(r"^\s*iperf (?:version )?(?P<ver>\d+\.\d+(?:\.\d+)*\S*)", text, re.MULTILINE)
    return m.group("ver") if m else None


# --------------------------------------------------------------------------------------------
# Firewall
# --------------------------------------------------------------------------------------------

DefaultAction = Literal["PASS", "DROP"]


@dataclass(frozen=True, slots=True)
class FirewallStatus:
    """``esxcli network firewall get``. ``loaded`` is ``None`` if the field was not printed."""

    enabled: bool
    default_action: DefaultAction
    loaded: bool | None = None


def parse_firewall_get(text: str) -> FirewallStatus:
    """``Default Action: DROP`` / ``Enabled: true`` / ``Loaded: true`` (any order)."""
    kv = _kv(text)
    enabled = parse_bool(kv.get("enabled"))
    action = kv.get("defaultaction", "").upper()
    if enabled is None or action not in ("PASS", "DROP"):
        raise EsxiParseError("not 'esxcli network firewall get' output (Enabled/Default Action missing)", raw=text)
    default_action: DefaultAction = "PASS" if action == "PASS" else "DROP"
    return FirewallStatus(enabled=enabled, default_action=default_action, loaded=parse_bool(kv.get("loaded")))


@dataclass(frozen=True, slots=True)
class Ruleset:
    """A row of ``esxcli network firewall ruleset list``.

    The two ``*_configurable`` columns appear from 8.0 U2 on; before that they are ``None``.
    """

    name: str
    enabled: bool
    enable_disable_configurable: bool | None = None
    allowed_ip_configurable: bool | None = None


def parse_ruleset_list(text: str) -> list[Ruleset]:
    """2-column (Name, Enabled) and 4-column (8.0 U2+) layouts."""
    rulesets = []
    for row in parse_table(text, "Name"):
        enabled = parse_bool(_required(row, "enabled", "ruleset list"))
        if enabled is None:
            raise EsxiParseError(f"ruleset {row.get('name')!r}: Enabled is {row.get('enabled')!r}", raw=text)
        rulesets.append(
            Ruleset(
                name=_required(row, "name", "ruleset list"),
                enabled=enabled,
                enable_disable_configurable=parse_bool(row.get("enabledisableconfigurable")),
                allowed_ip_configurable=parse_bool(row.get("allowedipconfigurable")),
            )
        )
    return rulesets


# --------------------------------------------------------------------------------------------
# Network: nic list, ip interface list, ipv4, vswitch, portgroup
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Nic:
    """A row of ``esxcli network nic list``. A down link prints ``Speed 0`` and ``Duplex Half``;
    ``speed_mbps`` keeps that 0 as printed -- read it together with ``link_up``."""

    name: str
    pci_device: str
    driver: str
    admin_up: bool | None
    link_up: bool
    speed_mbps: int
    duplex: str
    mac_address: str
    mtu: int
    description: str


def _updown(value: str | None) -> bool | None:
    if value is None:
        return None
    return {"up": True, "down": False}.get(value.strip().lower())


def parse_nic_list(text: str) -> list[Nic]:
    nics = []
    for row in parse_table(text, "Name"):
        link = _updown(row.get("linkstatus", row.get("link")))
        speed = _int(row.get("speed"))
        mtu = _int(row.get("mtu"))
        if link is None or speed is None or mtu is None:
            raise EsxiParseError(f"nic list row {row.get('name')!r}: Link/Speed/MTU not readable", raw=text)
        nics.append(
            Nic(
                name=_required(row, "name", "nic list"),
                pci_device=row.get("pcidevice", ""),
                driver=row.get("driver", ""),
                admin_up=_updown(row.get("adminstatus")),
                link_up=link,
                speed_mbps=speed,
                duplex=row.get("duplex", ""),
                mac_address=row.get("macaddress", ""),
                mtu=mtu,
                description=row.get("description", ""),
            )
        )
    return nics


@dataclass(frozen=True, slots=True)
class VmkInterface:
    """A block of ``esxcli network ip interface list``; ``fields`` keeps every printed field."""

    name: str
    mac_address: str | None
    enabled: bool | None
    portset: str | None
    portgroup: str | None
    netstack: str | None
    mtu: int | None
    tso_mss: int | None
    port_id: int | None
    vds_name: str | None
    fields: dict[str, str] = field(default_factory=dict)


def parse_ip_interface_list(text: str) -> list[VmkInterface]:
    result = []
    for title, kv in _blocks(text):
        name = kv.get("name", title)
        result.append(
            VmkInterface(
                name=name,
                mac_address=_na(kv.get("macaddress")),
                enabled=parse_bool(kv.get("enabled")),
                portset=_na(kv.get("portset")),
                portgroup=_na(kv.get("portgroup")),
                netstack=_na(kv.get("netstackinstance")),
                mtu=_int(kv.get("mtu")),
                tso_mss=_int(kv.get("tsomss")),
                port_id=_int(kv.get("portid")),
                vds_name=_na(kv.get("vdsname")),
                fields=dict(kv),
            )
        )
    if not result:
        raise EsxiParseError("no interface blocks ('vmkN' followed by indented fields)", raw=text)
    return result


@dataclass(frozen=True, slots=True)
class Ipv4Interface:
    """A row of ``esxcli network ip interface ipv4 list`` / ``ipv4 get``."""

    name: str
    address: str
    netmask: str
    broadcast: str
    address_type: str
    gateway: str | None
    dhcp_dns: bool | None


def parse_ipv4_list(text: str) -> list[Ipv4Interface]:
    rows = parse_table(text, "Name")
    return [
        Ipv4Interface(
            name=_required(row, "name", "ipv4"),
            address=row.get("ipv4address", ""),
            netmask=row.get("ipv4netmask", ""),
            broadcast=row.get("ipv4broadcast", ""),
            address_type=row.get("addresstype", ""),
            gateway=_na(row.get("gateway")),
            dhcp_dns=parse_bool(row.get("dhcpdns")),
        )
        for row in rows
    ]


@dataclass(frozen=True, slots=True)
class StandardVswitch:
    """A block of ``esxcli network vswitch standard list``.

    ``portgroups`` is split on ``", "``: a port-group name that itself contains ``", "`` cannot
    be told apart in this output (use :func:`parse_portgroup_list` for exact names).
    """

    name: str
    switch_class: str | None
    num_ports: int | None
    used_ports: int | None
    configured_ports: int | None
    mtu: int | None
    cdp_status: str | None
    beacon_enabled: bool | None
    uplinks: tuple[str, ...]
    portgroups: tuple[str, ...]


def parse_vswitch_list(text: str) -> list[StandardVswitch]:
    result = []
    for title, kv in _blocks(text):
        result.append(
            StandardVswitch(
                name=kv.get("name", title),
                switch_class=_na(kv.get("class")),
                num_ports=_int(kv.get("numports")),
                used_ports=_int(kv.get("usedports")),
                configured_ports=_int(kv.get("configuredports")),
                mtu=_int(kv.get("mtu")),
                cdp_status=_na(kv.get("cdpstatus")),
                beacon_enabled=parse_bool(kv.get("beaconenabled")),
                uplinks=_split_list(kv.get("uplinks")),
                portgroups=_split_list(kv.get("portgroups")),
            )
        )
    if not result:
        raise EsxiParseError("no vSwitch blocks found", raw=text)
    return result


@dataclass(frozen=True, slots=True)
class Portgroup:
    """A row of ``esxcli network vswitch standard portgroup list`` (text or ``--formatter=csv``)."""

    name: str
    vswitch: str
    active_clients: int | None
    vlan_id: int | None


def parse_portgroup_list(text: str) -> list[Portgroup]:
    return [
        Portgroup(
            name=_required(row, "name", "portgroup list"),
            vswitch=_required(row, "virtualswitch", "portgroup list"),
            active_clients=_int(row.get("activeclients")),
            vlan_id=_int(row.get("vlanid")),
        )
        for row in parse_table(text, "Name")
    ]


# --------------------------------------------------------------------------------------------
# Kernel / advanced settings, execInstalledOnly, security domains
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KernelSetting:
    """A row of ``esxcli system settings kernel list [-o NAME]``.

    Values are kept as printed (``Configured`` may be ``true`` while ``Runtime`` is ``TRUE``);
    the ``*_bool`` properties read them. ``Configured`` takes effect at the next boot.
    """

    name: str
    type: str
    configured: str
    runtime: str
    default: str
    description: str

    @property
    def configured_bool(self) -> bool | None:
        return parse_bool(self.configured)

    @property
    def runtime_bool(self) -> bool | None:
        return parse_bool(self.runtime)


def parse_kernel_settings(text: str) -> list[KernelSetting]:
    """Both recorded column orders (``... Description Configured Runtime Default`` on 5.5,
    ``... Configured Runtime Default Description`` later) -- columns are read by name."""
    return [
        KernelSetting(
            name=_required(row, "name", "kernel settings"),
            type=row.get("type", ""),
            configured=row.get("configured", ""),
            runtime=row.get("runtime", ""),
            default=row.get("default", ""),
            description=row.get("description", ""),
        )
        for row in parse_table(text, "Name")
    ]


@dataclass(frozen=True, slots=True)
class AdvancedOption:
    """``esxcli system settings advanced list -o PATH`` (key/value block)."""

    path: str | None
    int_value: int | None
    default_int_value: int | None
    string_value: str | None
    fields: dict[str, str] = field(default_factory=dict)


def parse_advanced_option(text: str) -> AdvancedOption | None:
    """The option block, or ``None`` when esxcli says the option does not exist
    (``Unable to find option ...`` / ``[NoMatchError]``, recorded on 7.0.3 for execInstalledOnly)."""
    failure = find_esxcli_failure(text)
    if failure is not None:
        if failure.error_class == "NoMatchError":
            return None
        raise EsxiParseError(f"advanced option query failed: [{failure.error_class}] {failure.message}", raw=text)
    kv = _kv(text)
    if not kv:
        raise EsxiParseError("no 'Key: value' lines in the advanced option output", raw=text)
    return AdvancedOption(
        path=kv.get("path"),
        int_value=_int(kv.get("intvalue")),
        default_int_value=_int(kv.get("defaultintvalue")),
        string_value=kv.get("stringvalue"),
        fields=dict(kv),
    )


@dataclass(frozen=True, slots=True)
class ExecInstalledOnly:
    """What is known about execInstalledOnly on a host (esxi-facts.md section 2.2).

    * ``runtime_option`` -- ``/User/execInstalledOnly`` Int Value (ESXi 8.0+, on by default,
      changeable without reboot); ``None`` when the option does not exist (7.0.3 prints
      NoMatchError) or was not read.
    * ``boot_runtime`` / ``boot_configured`` -- the kernel (boot) option's Runtime and
      Configured columns; the boot option, when enabled, overrides the runtime option.
    """

    runtime_option: int | None = None
    boot_runtime: bool | None = None
    boot_configured: bool | None = None

    @property
    def active(self) -> bool | None:
        """True/False when the read values decide it, ``None`` when they do not."""
        if self.boot_runtime is True:
            return True
        if self.runtime_option is not None and self.runtime_option != 0:
            return True
        if self.boot_runtime is False:
            return False
        return None


def exec_installed_only_from(kernel_text: str | None, advanced_text: str | None) -> ExecInstalledOnly:
    """Combine ``kernel list -o execInstalledOnly`` and ``advanced list -o /User/execInstalledOnly``."""
    boot_runtime = boot_configured = None
    if kernel_text is not None:
        rows = [s for s in parse_kernel_settings(kernel_text) if s.name.lower() == "execinstalledonly"]
        if rows:
            boot_runtime, boot_configured = rows[0].runtime_bool, rows[0].configured_bool
    runtime_option = None
    if advanced_text is not None:
        option = parse_advanced_option(advanced_text)
        runtime_option = None if option is None else option.int_value
    return ExecInstalledOnly(runtime_option=runtime_option, boot_runtime=boot_runtime, boot_configured=boot_configured)


@dataclass(frozen=True, slots=True)
class SecurityDomain:
    """A row of ``esxcli system secpolicy domain list``; ``enforcing`` is ``None`` for an
    unreadable level (e.g. a truncated capture)."""

    name: str
    level: str

    @property
    def enforcing(self) -> bool | None:
        return {"enforcing": True, "disabled": False}.get(self.level)


def parse_secpolicy_domains(text: str) -> list[SecurityDomain]:
    return [
        SecurityDomain(name=_required(row, "domainname", "secpolicy"), level=row.get("enforcementlevel", ""))
        for row in parse_table(text, "Domain Name")
    ]


# --------------------------------------------------------------------------------------------
# Path MTU: vmkping -d -s N, Linux ping -M do -s N
# --------------------------------------------------------------------------------------------

MtuReason = Literal[
    "ok",
    "partial_loss",
    "message_too_long",
    "fragmentation_needed",
    "no_reply",
    "send_failed",
    "unrecognized",
]


@dataclass(frozen=True, slots=True)
class PathMtuResult:
    """Outcome of a don't-fragment ping of ``payload_size`` bytes.

    ``ok`` means at least one reply of that size came back. ``reason``:

    * ``message_too_long`` -- the sending interface's MTU is below payload + 28 (vmkping
      ``sendto() failed (Message too long)``; Linux ``local error: message too long, mtu=N``);
    * ``fragmentation_needed`` -- a router on the path has a smaller MTU (Linux ``Frag needed
      and DF set (mtu = N)``); ``mtu_reported`` is that MTU;
    * ``no_reply`` -- 100% loss without any error: something on the path silently drops frames
      of this size (a switch MTU too small), or the target does not answer at all -- repeat
      with a small payload to tell the two apart;
    * ``partial_loss`` -- some replies came back (``ok`` is true);
    * ``send_failed`` -- another send error (``sendto() failed (...)``, ``sendmsg: ...``).
    """

    ok: bool
    reason: MtuReason
    tool: Literal["vmkping", "ping"]
    target: str | None
    payload_size: int | None
    transmitted: int | None
    received: int | None
    loss_percent: float | None
    reply_bytes: int | None
    rtt_min_ms: float | None
    rtt_avg_ms: float | None
    rtt_max_ms: float | None
    mtu_reported: int | None
    errors: tuple[str, ...]
    message: str
    raw: str


def ipv4_payload_for_mtu(mtu: int) -> int:
    """ICMP payload that fills an IPv4 packet of ``mtu`` bytes: mtu - 20 (IP) - 8 (ICMP).

    ``-s 8972`` for MTU 9000 is the figure every vmkping jumbo check uses.
    """
    return mtu - 28


_REPLY_RE = re.compile(r"^\s*(?P<bytes>\d+) bytes from (?P<ip>\S+?):? icmp_seq=\d+ ttl=\d+ time=(?P<ms>[\d.]+) ms")


def _mtu_message(reason: MtuReason, tool: str, size: int | None, target: str | None, mtu: int | None) -> str:
    what = f"{size}-byte don't-fragment ping to {target}" if size is not None else f"ping to {target}"
    interface = "vmk/vSwitch" if tool == "vmkping" else "interface"
    return {
        "ok": f"{what}: all replies received",
        "partial_loss": f"{what}: some replies received (the path carries this size; some packets were lost)",
        "message_too_long": f"{what}: the sending interface MTU is too small"
        + (f" (mtu {mtu})" if mtu else "")
        + f"; raise the {interface} MTU",
        "fragmentation_needed": f"{what}: a router on the path has MTU {mtu}; packets of this size cannot pass",
        "no_reply": f"{what}: no reply and no error -- a device on the path drops frames of this size (check"
        " switch MTU) or the target is unreachable; retry with a small payload to tell them apart",
        "send_failed": f"{what}: the send failed",
        "unrecognized": f"{what}: output not recognised",
    }[reason]


def _mtu_result(
    *,
    tool: Literal["vmkping", "ping"],
    raw: str,
    target: str | None,
    size: int | None,
    transmitted: int | None,
    received: int | None,
    loss: float | None,
    replies: list[int],
    rtt: tuple[float, float, float] | None,
    too_long: bool,
    frag_mtu: int | None,
    local_mtu: int | None,
    errors: list[str],
) -> PathMtuResult:
    reason: MtuReason
    if received:
        reason = "ok" if transmitted is not None and received >= transmitted else "partial_loss"
    elif too_long:
        reason = "message_too_long"
    elif frag_mtu is not None:
        reason = "fragmentation_needed"
    elif errors:
        reason = "send_failed"
    elif transmitted is not None and received == 0:
        reason = "no_reply"
    else:
        reason = "unrecognized"
    mtu = frag_mtu if reason == "fragmentation_needed" else local_mtu
    return PathMtuResult(
        ok=bool(received),
        reason=reason,
        tool=tool,
        target=target,
        payload_size=size,
        transmitted=transmitted,
        received=received,
        loss_percent=loss,
        reply_bytes=replies[0] if replies else None,
        rtt_min_ms=rtt[0] if rtt else None,
        rtt_avg_ms=rtt[1] if rtt else None,
        rtt_max_ms=rtt[2] if rtt else None,
        mtu_reported=mtu,
        errors=tuple(errors),
        message=_mtu_message(reason, tool, size, target, mtu),
        raw=raw,
    )


def parse_vmkping(text: str) -> PathMtuResult:
    """``vmkping [-I vmkN] -d -s SIZE HOST`` output (busybox-style summary lines)."""
    head = re.search(r"PING (?P<host>\S+) \((?P<ip>[^)]+)\): (?P<size>\d+) data bytes", text)
    stats = re.search(
        r"(?P<tx>\d+) packets transmitted, (?P<rx>\d+) packets received, (?P<loss>[\d.]+)% packet loss", text
    )
    rtt_m = re.search(r"round-trip min/avg/max = (?P<a>[\d.]+)/(?P<b>[\d.]+)/(?P<c>[\d.]+) ms", text)
    errors = [m.group(0).strip() for m in re.finditer(r"sendto\(\) failed \((?P<why>[^)]*)\)", text)]
    too_long = any("Message too long" in e for e in errors)
    return _mtu_result(
        tool="vmkping",
        raw=text,
        target=head.group("ip") if head else None,
        size=int(head.group("size")) if head else None,
        transmitted=int(stats.group("tx")) if stats else None,
        received=int(stats.group("rx")) if stats else None,
        loss=float(stats.group("loss")) if stats else None,
        replies=[int(m.group("bytes")) for line in text.splitlines() if (m := _REPLY_RE.match(line))],
        rtt=(float(rtt_m.group("a")), float(rtt_m.group("b")), float(rtt_m.group("c"))) if rtt_m else None,
        too_long=too_long,
        frag_mtu=None,
        local_mtu=None,
        errors=errors,
    )


def parse_linux_ping(stdout: str, stderr: str = "") -> PathMtuResult:
    """iputils ``ping -M do -s SIZE HOST`` (stdout and stderr apart, or merged into ``stdout``).

    Recorded on this project's lab machine (iputils 20221126): success, ``local error: message
    too long, mtu=1500`` (stderr), ``From R icmp_seq=1 Frag needed and DF set (mtu = 1500)``
    and a silent 100% loss.
    """
    text = stdout if not stderr else f"{stdout}\n{stderr}"
    head = re.search(r"PING (?P<host>\S+) \((?P<ip>[^)]+)\) (?P<size>\d+)\((?P<total>\d+)\) bytes of data", text)
    stats = re.search(
        r"(?P<tx>\d+) packets transmitted, (?P<rx>\d+) received,(?: \+(?P<err>\d+) errors,)?"
        r" (?P<loss>[\d.]+)% packet loss",
        text,
    )
    rtt_m = re.search(r"rtt min/avg/max/mdev = (?P<a>[\d.]+)/(?P<b>[\d.]+)/(?P<c>[\d.]+)/[\d.]+ ms", text)
    local = re.search(r"local error: message too long, mtu=(?P<mtu>\d+)", text)
    frag = re.search(r"Frag needed and DF set \(mtu = (?P<mtu>\d+)\)", text)
    errors = [m.group(0).strip() for m in re.finditer(r"ping: (?:sendmsg: .*|local error: .*)", text)]
    replies = [int(m.group("bytes")) for line in text.splitlines() if (m := _REPLY_RE.match(line))]
    return _mtu_result(
        tool="ping",
        raw=text,
        target=head.group("ip") if head else None,
        size=int(head.group("size")) if head else None,
        transmitted=int(stats.group("tx")) if stats else None,
        received=int(stats.group("rx")) if stats else None,
        loss=float(stats.group("loss")) if stats else None,
        replies=replies,
        rtt=(float(rtt_m.group("a")), float(rtt_m.group("b")), float(rtt_m.group("c"))) if rtt_m else None,
        # a router's Frag-needed reply makes the kernel cache the path MTU, after which the
        # later sends fail locally too: the router's report is the finding then.
        too_long=bool(local) and not frag,
        frag_mtu=int(frag.group("mtu")) if frag else None,
        local_mtu=int(local.group("mtu")) if local else None,
        errors=errors,
    )


# --------------------------------------------------------------------------------------------
# Plans
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Step:
    """One command for the ESXi shell. ``command`` is ``argv`` quoted for busybox ``sh``."""

    action: str
    description: str
    argv: tuple[str, ...]

    @property
    def command(self) -> str:
        return shlex.join(self.argv)

    def as_dict(self) -> dict[str, Any]:
        return {"action": self.action, "description": self.description, "command": self.command}


def _step(action: str, description: str, *argv: str) -> Step:
    return Step(action=action, description=description, argv=tuple(argv))


def _esxcli(action: str, description: str, namespace: str, *args: str) -> Step:
    """``_esxcli(..., "network firewall set", "--enabled", "false")`` -> an esxcli step."""
    return _step(action, description, "esxcli", *namespace.split(), *args)


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
    """Plan how to get a listening-capable iperf on this host (esxi-facts.md sections 1, 2).

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
    if version.major < 6:
        raise PlanError(
            f"{version} is not supported: this collection prepares ESXi 6.7, 7.x and 8.x.",
            fix="upgrade the host or install iperf by hand.",
        )
    present = set(files_present)
    warnings: list[str] = []
    if version.major > 8:
        warnings.append(f"{version} is newer than the releases this collection was checked against (6.7, 7.x, 8.x)")
    method: Literal["vib", "bundled"] = (
        ("vib" if version.major == 6 else "bundled") if options.method == "auto" else options.method
    )

    steps: list[Step] = []
    created: list[str] = []
    installed_vib: str | None = None
    if method == "bundled":
        tool: Literal["iperf2", "iperf3"] = "iperf3"
        source, binary = BUNDLED_IPERF3, BUNDLED_IPERF3_COPY
        if binary not in present and source not in present:
            raise PlanError(
                f"{source} does not exist on this {version} host, so there is no bundled iperf3 to copy.",
                fix="use method: vib with vib_source pointing at the iperf VIB or its offline bundle.",
            )
    else:
        tool = "iperf2"
        source, binary = VIB_IPERF, VIB_IPERF_COPY
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
            steps.append(_step("vib_install", f"install the {options.vib_name} VIB from {options.vib_source}", *argv))
            installed_vib = options.vib_name
            if version.major >= 8:
                warnings.append(
                    "the 2015 community iperf VIB was not verified on ESXi 8 (VIB packaging changed in 8.0);"
                    " method: bundled is the tested route there"
                )
        elif source not in present and binary not in present:
            raise PlanError(
                f"the {options.vib_name!r} VIB is installed but {source} is missing.",
                fix=f"reinstall it: 'esxcli software vib remove -n {options.vib_name}', then run again"
                " with vib_source.",
            )
    if binary not in present:
        steps.append(_step("copy_binary", f"copy {source} to {binary} (the copy can listen)", "cp", source, binary))
        created.append(binary)
    else:
        warnings.append(f"{binary} already exists; it is used as is and left in place by restore")

    previous_exec: int | None = None
    policy = exec_installed_only
    active = None if policy is None else policy.active
    if active is None:
        if version.major >= 8:
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
        relax = _esxcli(
            "relax_exec_policy",
            f"set {_EXEC_OPTION} to 0 (was {previous_exec}) so {binary} may run",
            "system settings advanced set",
            *("-o", _EXEC_OPTION, "-i", "0"),
        )
        steps.insert(0, relax)
    elif version.major >= 8:
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
                _esxcli(
                    "restore_exec_policy",
                    f"set {_EXEC_OPTION} back to {previous}",
                    "system settings advanced set",
                    *("-o", _EXEC_OPTION, "-i", str(previous)),
                )
            )
    present = set(files_present)
    for path in record.created_files:
        if path in present:
            steps.append(_step("remove_copy", f"remove {path} (created by the install step)", "rm", "-f", path))
    if remove_vib and record.installed_vib and find_vib(vib_list, record.installed_vib) is not None:
        steps.append(
            _esxcli(
                "vib_remove",
                f"remove the {record.installed_vib} VIB (installed by the install step)",
                "software vib remove",
                *("-n", record.installed_vib),
            )
        )
    return tuple(steps)


@dataclass(frozen=True, slots=True)
class FirewallDesired:
    """Wanted firewall state; ``None``/absent means "leave as is".

    ``rulesets`` maps existing ruleset ids to enabled. No ruleset named ``iperf`` exists on any
    recorded host, and ESXi reads custom rulesets only from XML files under
    ``/etc/vmware/firewall/`` -- this collection does not write them (see the module docs).
    """

    enabled: bool | None = None
    default_action: DefaultAction | None = None
    rulesets: Mapping[str, bool] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FirewallChange:
    key: str
    before: Any
    after: Any


@dataclass(frozen=True, slots=True)
class FirewallPlan:
    """Differences, the commands applying them, and the values to put back (``previous``)."""

    changes: tuple[FirewallChange, ...]
    steps: tuple[Step, ...]
    before: dict[str, Any]
    after: dict[str, Any]
    previous: FirewallDesired
    warnings: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.changes)


def _flag(value: bool) -> str:
    """esxcli boolean option value (``--default-action true`` means PASS)."""
    return "true" if value else "false"


def _firewall_view(status: FirewallStatus, rulesets: Mapping[str, bool]) -> dict[str, Any]:
    return {
        "enabled": status.enabled,
        "default_action": status.default_action,
        "rulesets": dict(sorted(rulesets.items())),
    }


def plan_firewall(
    current: FirewallStatus,
    desired: FirewallDesired,
    rulesets: Sequence[Ruleset] = (),
) -> FirewallPlan:
    """Compute the ``esxcli network firewall`` commands that turn ``current`` into ``desired``.

    Only keys the user set are compared. When the firewall is being turned **on**, rulesets and
    the default action are set first and ``--enabled true`` last; when it is being turned
    **off**, ``--enabled false`` goes first -- so no step opens more than the end state does.
    Restoring is the same function with ``desired = plan.previous``.
    """
    by_name = {r.name: r for r in rulesets}
    changes: list[FirewallChange] = []
    ruleset_steps: list[Step] = []
    warnings: list[str] = []
    touched_before: dict[str, bool] = {}
    touched_after: dict[str, bool] = {}
    for name, want in sorted(desired.rulesets.items()):
        rs = by_name.get(name)
        if rs is None:
            known = ", ".join(sorted(by_name)) or "none were listed"
            raise FirewallError(
                f"firewall ruleset {name!r} does not exist on this host.",
                fix=f"use an existing ruleset id ({known}); this collection does not create rulesets"
                " (ESXi loads them from XML files under /etc/vmware/firewall/).",
            )
        touched_before[name] = rs.enabled
        touched_after[name] = want
        if rs.enabled == want:
            continue
        if rs.enable_disable_configurable is False:
            raise FirewallError(
                f"firewall ruleset {name!r} cannot be {'enabled' if want else 'disabled'} on this host"
                " ('Enable/Disable configurable' is false; it is owned by a system service).",
                fix="leave it out of rulesets, or use enabled: false to turn the whole firewall off for the test.",
            )
        changes.append(FirewallChange(key=f"rulesets.{name}", before=rs.enabled, after=want))
        ruleset_steps.append(
            _esxcli(
                "ruleset_set",
                f"{'enable' if want else 'disable'} firewall ruleset {name}",
                "network firewall ruleset set",
                *("--ruleset-id", name, "--enabled", _flag(want)),
            )
        )
    action_steps: list[Step] = []
    if desired.default_action is not None and desired.default_action != current.default_action:
        changes.append(FirewallChange("default_action", current.default_action, desired.default_action))
        action_steps.append(
            _esxcli(
                "firewall_default_action",
                f"set the firewall default action to {desired.default_action}",
                "network firewall set",
                *("--default-action", _flag(desired.default_action == "PASS")),
            )
        )
    enable_steps: list[Step] = []
    if desired.enabled is not None and desired.enabled != current.enabled:
        changes.append(FirewallChange(key="enabled", before=current.enabled, after=desired.enabled))
        enable_steps.append(
            _esxcli(
                "firewall_enabled",
                f"{'enable' if desired.enabled else 'disable'} the ESXi firewall",
                "network firewall set",
                *("--enabled", _flag(desired.enabled)),
            )
        )
    if current.loaded is False:
        warnings.append("the firewall module reports Loaded: false")
    if desired.enabled is False:
        steps = enable_steps + action_steps + ruleset_steps
    else:
        steps = ruleset_steps + action_steps + enable_steps
    after_status = FirewallStatus(
        enabled=current.enabled if desired.enabled is None else desired.enabled,
        default_action=current.default_action if desired.default_action is None else desired.default_action,
        loaded=current.loaded,
    )
    changed_keys = {c.key for c in changes}
    previous = FirewallDesired(
        enabled=current.enabled if "enabled" in changed_keys else None,
        default_action=current.default_action if "default_action" in changed_keys else None,
        rulesets={k: v for k, v in touched_before.items() if f"rulesets.{k}" in changed_keys},
    )
    return FirewallPlan(
        changes=tuple(changes),
        steps=tuple(steps),
        before=_firewall_view(current, touched_before),
        after=_firewall_view(after_status, touched_after),
        previous=previous,
        warnings=tuple(warnings),
    )


# --------------------------------------------------------------------------------------------
# The appDom route: the shipped iperf3 itself, with its security domain not enforcing
# --------------------------------------------------------------------------------------------

#: Security domain the shipped iperf3 runs in; enforcing, it denies the listen (esxi-facts.md 2.1).
APP_DOMAIN = "appDom"
_DOMAIN_LEVELS = ("enforcing", "disabled")


@dataclass(frozen=True, slots=True)
class AppDomainPlan:
    """An install plan that runs the shipped iperf3 in place, and the appDom level to put back.

    ``previous_level`` is ``None`` when appDom was already not enforcing (nothing to undo).
    """

    install: InstallPlan
    previous_level: str | None


def _domain_step(level: str, why: str) -> Step:
    # the recorded recipe uses localcli for this (Dell KB 000212752 note, esxi-facts.md 2.1)
    return _step(
        "app_domain",
        f"set the {APP_DOMAIN} security domain to {level} ({why})",
        *("localcli", "system", "secpolicy", "domain", "set", "-n", APP_DOMAIN, "-l", level),
    )


def _app_domain(domains: Sequence[SecurityDomain], version: EsxiVersion | None = None) -> SecurityDomain:
    found = next((d for d in domains if d.name == APP_DOMAIN), None)
    if found is None:
        where = f" on this {version} host" if version is not None else ""
        raise PlanError(
            f"'localcli system secpolicy domain list' shows no {APP_DOMAIN} domain{where}.",
            fix="use relax_mode: runtime_option (copy the binary and set /User/execInstalledOnly to 0 instead).",
        )
    if found.enforcing is None:
        raise PlanError(f"the {APP_DOMAIN} enforcement level {found.level!r} is not one of {list(_DOMAIN_LEVELS)}.")
    return found


def plan_app_domain_install(
    esxi_version: EsxiVersion,
    files_present: Collection[str],
    domains: Sequence[SecurityDomain],
) -> AppDomainPlan:
    """Plan the route that needs no copy: run :data:`BUNDLED_IPERF3` itself.

    It is installed with ESXi, so execInstalledOnly lets it run; what stops it from listening is
    the ``appDom`` security domain (``unable to start listener ... Operation not permitted``).
    The recorded workaround sets that domain to ``disabled`` for the test and back to
    ``enforcing`` afterwards. Nothing is copied and execInstalledOnly stays on.
    """
    if esxi_version.major < 7:
        raise PlanError(
            f"the {APP_DOMAIN} route is meant for ESXi 7.0 and later; this host runs {esxi_version}.",
            fix="use relax_mode: runtime_option, or method: vib on ESXi 6.x.",
        )
    if BUNDLED_IPERF3 not in set(files_present):
        raise PlanError(
            f"{BUNDLED_IPERF3} does not exist on this {esxi_version} host, so there is no shipped iperf3 to run.",
            fix="use method: vib with the iperf VIB.",
        )
    domain = _app_domain(domains, esxi_version)
    steps: tuple[Step, ...] = ()
    previous: str | None = None
    if domain.enforcing:
        previous = domain.level
        steps = (_domain_step("disabled", f"so {BUNDLED_IPERF3} may listen"),)
    plan = InstallPlan(
        esxi=str(esxi_version),
        method="bundled",
        tool="iperf3",
        source_binary=BUNDLED_IPERF3,
        binary=BUNDLED_IPERF3,
        steps=steps,
        restore=RestoreRecord(),
        warnings=() if previous else (f"the {APP_DOMAIN} security domain is already not enforcing; left as it is",),
    )
    return AppDomainPlan(install=plan, previous_level=previous)


def plan_app_domain_restore(previous_level: str | None, domains: Sequence[SecurityDomain]) -> tuple[Step, ...]:
    """Put the ``appDom`` level back; nothing when it already is (idempotent) or was not changed."""
    if previous_level is None:
        return ()
    if previous_level not in _DOMAIN_LEVELS:
        raise PlanError(f"{APP_DOMAIN} level {previous_level!r} is not one of {list(_DOMAIN_LEVELS)}.")
    if _app_domain(domains).level == previous_level:
        return ()
    return (_domain_step(previous_level, "as it was before the test"),)
