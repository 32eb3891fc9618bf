# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Security domains and the appDom route: run the shipped iperf3 itself, with its security domain
set to not enforcing for the test and put back afterwards.

Source of the route: Dell KB 000212752 "VxRail: iperf3 error - unable to start listener for
connections: Operation not permitted" (``localcli system secpolicy domain set -n appDom -l
disabled``, reverted with ``-l enforcing``). ``esxcli system secpolicy domain list`` is recorded in
``unknown__system-secpolicy-domain-list__truncated.txt`` (``tests/fixtures/esxi/``,
row of its ``SOURCES.md``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import PlanError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.install_plan import InstallPlan, RestoreRecord
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.paths import BUNDLED_IPERF3
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.releases import APP_DOMAIN, release_of, releases_with
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.steps import Step, make_step
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.tables import parse_table, required_field
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.versions import EsxiVersion


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
        SecurityDomain(name=required_field(row, "domainname", "secpolicy"), level=row.get("enforcementlevel", ""))
        for row in parse_table(text, "Domain Name")
    ]


_DOMAIN_LEVELS = ("enforcing", "disabled")


@dataclass(frozen=True, slots=True)
class AppDomainPlan:
    """An install plan that runs the shipped iperf3 in place, and the appDom level to put back.

    ``previous_level`` is ``None`` when appDom was already not enforcing (nothing to undo).
    """

    install: InstallPlan
    previous_level: str | None


def _domain_step(level: str, why: str) -> Step:
    # the recorded recipe uses localcli for this (Dell KB 000212752)
    return make_step(
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
    try:
        release = release_of(esxi_version.major, str(esxi_version))[0]
    except PlanError:
        release = None
    if release is None or release.app_domain is None:
        raise PlanError(
            f"the {APP_DOMAIN} route is meant for ESXi {releases_with('app_domain')}; this host runs {esxi_version}.",
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
