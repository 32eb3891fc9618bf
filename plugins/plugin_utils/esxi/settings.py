# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Kernel (boot) and advanced settings, and what they say about execInstalledOnly.

execInstalledOnly is described in the VMware vSphere 8.0 Security documentation (the
execInstalledOnly runtime and boot options,
https://docs.vmware.com/en/VMware-vSphere/8.0/vsphere-security/GUID-DF6A7974-62F9-47DB-A990-963F3B3AEA77.html):
the runtime option ``/User/execInstalledOnly`` is on by default from 8.0; the boot (kernel) option
exists since 5.5, off by default, and overrides the runtime option when set. Recorded outputs:
``8.x__system-settings-advanced-list__int-value-fragment.txt``,
``7.0.3__system-settings-advanced-set__nomatch.txt`` (no such option on 7.0.3) and the two
``system-settings-kernel-list`` files in ``tests/fixtures/esxi/``
(rows of its ``SOURCES.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import EsxiParseError, find_esxcli_failure
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.tables import (
    int_or_none,
    kv_fields,
    parse_bool,
    parse_table,
    required_field,
)


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
            name=required_field(row, "name", "kernel settings"),
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
    kv = kv_fields(text)
    if not kv:
        raise EsxiParseError("no 'Key: value' lines in the advanced option output", raw=text)
    return AdvancedOption(
        path=kv.get("path"),
        int_value=int_or_none(kv.get("intvalue")),
        default_int_value=int_or_none(kv.get("defaultintvalue")),
        string_value=kv.get("stringvalue"),
        fields=dict(kv),
    )


@dataclass(frozen=True, slots=True)
class ExecInstalledOnly:
    """What is known about execInstalledOnly on a host (sources: this module's docstring).

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
