# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""ESXi release from ``vmware -v`` / ``-l`` / ``-vl`` and ``esxcli system version get``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import EsxiParseError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.tables import int_or_none, kv_fields


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
    kv = kv_fields(text)
    if "version" not in kv or "product" not in kv:
        raise EsxiParseError("not 'esxcli system version get' output (no Product/Version fields)", raw=text)
    if not re.fullmatch(r"\d+(?:\.\d+)*", kv["version"]):
        raise EsxiParseError(f"unexpected Version field {kv['version']!r}", raw=text)
    build_m = re.search(r"(\d+)\s*$", kv.get("build", ""))
    return EsxiVersion(
        version=_version_tuple(kv["version"]),
        build=int(build_m.group(1)) if build_m else None,
        update=int_or_none(kv.get("update")),
        patch=int_or_none(kv.get("patch")),
        product=kv["product"],
    )
