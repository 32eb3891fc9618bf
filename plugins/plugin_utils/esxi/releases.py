# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What differs between the ESXi releases the collection prepares: one row per release family.

Read by the install planners (``install_plan``, ``secpolicy``, ``install_run``), the firewall
parser (``firewall``: the ruleset list's columns) and the restore journal (``journal/store.py``:
the execInstalledOnly knob and the security domain its dead-man puts back); the test stand-in's
recording list (``tests/esxi_standin/releases``) is checked against it. Adding a release is adding
a row here and a row there (``docs/architecture.md``, "an ESXi release").

Sources: ``paths`` and ``secpolicy`` (vSAN doc, Dell KB 000212752), ``settings`` (execInstalledOnly,
on by default from 8.0), the recordings of ``tests/fixtures/esxi/`` (the
2-column ruleset list of 6.x/7.x, the 4-column one of 8.0 U2b; ``[NoMatchError]`` for
``/User/execInstalledOnly`` on 7.0.3).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import PlanError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.paths import (
    BUNDLED_IPERF3,
    BUNDLED_IPERF3_COPY,
    VIB_IPERF,
    VIB_IPERF_COPY,
)

__all__ = [
    "APP_DOMAIN",
    "COPIES",
    "EXEC_OPTION",
    "METHODS",
    "RELEASES",
    "RULESET_COLUMNS",
    "InstallMethod",
    "Release",
    "families",
    "release_of",
    "releases_with",
    "supported",
]

InstallMethod = Literal["vib", "bundled"]

#: The advanced option behind execInstalledOnly at run time (8.0 and later; ``[NoMatchError]`` before).
EXEC_OPTION = "/User/execInstalledOnly"
#: The security domain the shipped iperf3 runs in; enforcing, it denies the listen (Dell KB 000212752).
APP_DOMAIN = "appDom"

#: ``esxcli network firewall ruleset list``: the two columns every release prints, then the two
#: 8.0 U2 added (Ruleset fields ``name``, ``enabled``, ``enable_disable_configurable``, ``allowed_ip_configurable``).
RULESET_COLUMNS: tuple[str, ...] = ("Name", "Enabled", "Enable/Disable configurable", "Allowed IP configurable")
_TWO_COLUMNS = RULESET_COLUMNS[:2]


@dataclass(frozen=True, slots=True)
class Method:
    """An install method: the tool it gives, the binary it starts from and the copy that can listen."""

    tool: Literal["iperf2", "iperf3"]
    source: str
    binary: str


#: ``bundled``: a copy of the shipped iperf3; ``vib``: the community iperf 2.0.5 VIB, then its copy.
METHODS: dict[InstallMethod, Method] = {
    "bundled": Method("iperf3", BUNDLED_IPERF3, BUNDLED_IPERF3_COPY),
    "vib": Method("iperf2", VIB_IPERF, VIB_IPERF_COPY),
}
#: The copies the install makes: the only files a restore (and the journal's dead-man) may remove.
COPIES: tuple[str, ...] = tuple(method.binary for method in METHODS.values())


@dataclass(frozen=True, slots=True)
class Release:
    """One ESXi release family.

    * ``family`` -- as the documentation names it (``6.7``, ``7.x``, ``8.x``); ``major`` -- its ``vmware -v`` major;
    * ``install_method`` -- what ``method: auto`` installs;
    * ``vib_verified`` -- the 2015 community VIB was checked on it (else ``method: vib`` warns);
    * ``exec_option`` -- the execInstalledOnly knob at run time (:data:`EXEC_OPTION`), ``None`` where the
      option does not exist; ``exec_on_by_default`` -- execInstalledOnly is on unless someone turned it off;
    * ``app_domain`` -- the security domain the ``relax_mode: app_domain`` route disables, ``None``
      where that route does not apply;
    * ``ruleset_layouts`` -- the column layouts its ``network firewall ruleset list`` prints.
    """

    family: str
    major: int
    install_method: InstallMethod
    vib_verified: bool
    exec_option: str | None
    exec_on_by_default: bool
    app_domain: str | None
    ruleset_layouts: tuple[tuple[str, ...], ...]

    @property
    def method(self) -> Method:
        """The paths and tool of :attr:`install_method`."""
        return METHODS[self.install_method]


#: The releases this collection prepares, oldest first. One place to add a release.
RELEASES: tuple[Release, ...] = (
    Release(
        family="6.7",
        major=6,
        install_method="vib",
        vib_verified=True,
        exec_option=None,
        exec_on_by_default=False,
        app_domain=None,
        ruleset_layouts=(_TWO_COLUMNS,),
    ),
    Release(
        family="7.x",
        major=7,
        install_method="bundled",
        vib_verified=True,
        exec_option=None,
        exec_on_by_default=False,
        app_domain=APP_DOMAIN,
        ruleset_layouts=(_TWO_COLUMNS,),
    ),
    Release(
        family="8.x",
        major=8,
        install_method="bundled",
        vib_verified=False,
        exec_option=EXEC_OPTION,
        exec_on_by_default=True,
        app_domain=APP_DOMAIN,
        ruleset_layouts=(_TWO_COLUMNS, RULESET_COLUMNS),  # 8.0 U2 added the two configurable columns
    ),
)


def families() -> str:
    """``6.7, 7.x, 8.x``: the families of :data:`RELEASES`, for messages."""
    return ", ".join(release.family for release in RELEASES)


def supported() -> str:
    """``6.7, 7.x and 8.x``: the families of :data:`RELEASES`, for messages."""
    names = [release.family for release in RELEASES]
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]


def releases_with(feature: str) -> str:
    """``7.x, 8.x``: the families whose ``feature`` (a :class:`Release` field) is set, for messages."""
    return ", ".join(release.family for release in RELEASES if getattr(release, feature))


def release_of(major: int, shown: str | None = None) -> tuple[Release, bool]:
    """The row for a ``major`` release and whether it is in the table.

    A release newer than the newest row is planned like that row (``False``: the caller warns);
    one older than the oldest is refused (:class:`~.errors.PlanError` naming ``shown``, the release as printed).
    """
    for release in RELEASES:
        if release.major == major:
            return release, True
    if major > RELEASES[-1].major:
        return RELEASES[-1], False
    raise PlanError(
        f"{shown or major} is not supported: this collection prepares ESXi {supported()}.",
        fix="upgrade the host or install iperf by hand.",
    )
