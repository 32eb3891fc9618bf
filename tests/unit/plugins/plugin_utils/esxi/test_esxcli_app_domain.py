# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The appDom route of ``plugin_utils/esxi/secpolicy.py``: plan_app_domain_install / plan_app_domain_restore."""

from __future__ import annotations

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import PlanError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.paths import BUNDLED_IPERF3
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.secpolicy import (
    SecurityDomain,
    parse_secpolicy_domains,
    plan_app_domain_install,
    plan_app_domain_restore,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.versions import EsxiVersion

V8 = EsxiVersion(version=(8, 0, 3), build=24585383, update=3)
V67 = EsxiVersion(version=(6, 7, 0), build=19195723, update=3)
# the fully recorded rows of 'esxcli system secpolicy domain list'
# (unknown__system-secpolicy-domain-list__truncated.txt in tests/fixtures/esxi,
# without its cut last row)
LISTING = """\
Domain Name             Enforcement Level
----------------------  -----------------
superDom                enforcing
regularVMDom            enforcing
appDom                  enforcing
daemonFrameworkDom      enforcing
globalVMDom             enforcing
"""
ENFORCING = parse_secpolicy_domains(LISTING)
DISABLED = [SecurityDomain(d.name, "disabled" if d.name == "appDom" else d.level) for d in ENFORCING]


def test_disables_app_dom_and_runs_the_shipped_binary() -> None:
    plan = plan_app_domain_install(V8, {BUNDLED_IPERF3}, ENFORCING)
    assert plan.previous_level == "enforcing"
    assert [s.command for s in plan.install.steps] == ["localcli system secpolicy domain set -n appDom -l disabled"]
    assert (plan.install.binary, plan.install.source_binary, plan.install.tool) == (
        BUNDLED_IPERF3,
        BUNDLED_IPERF3,
        "iperf3",
    )
    assert plan.install.restore.created_files == () and plan.install.restore.exec_installed_only_previous is None
    assert plan_app_domain_restore("enforcing", DISABLED)[0].command == (
        "localcli system secpolicy domain set -n appDom -l enforcing"
    )


def test_already_disabled_is_left_alone() -> None:
    plan = plan_app_domain_install(V8, {BUNDLED_IPERF3}, DISABLED)
    assert plan.previous_level is None and plan.install.steps == ()
    assert plan.install.warnings == ("the appDom security domain is already not enforcing; left as it is",)
    assert plan_app_domain_restore(None, DISABLED) == ()
    assert plan_app_domain_restore("enforcing", ENFORCING) == ()  # already back


@pytest.mark.parametrize(
    ("version", "present", "domains", "message"),
    [
        (V67, {BUNDLED_IPERF3}, ENFORCING, "the appDom route is meant for ESXi 7.x, 8.x"),
        (V8, set(), ENFORCING, f"{BUNDLED_IPERF3} does not exist on this VMware ESXi 8.0.3 Update 3 build-24585383"),
        (V8, {BUNDLED_IPERF3}, ENFORCING[:2], "shows no appDom domain on this VMware ESXi 8.0.3"),
        (V8, {BUNDLED_IPERF3}, [SecurityDomain("appDom", "en...")], "enforcement level 'en...' is not one of"),
    ],
)
def test_refusals(version: EsxiVersion, present: set[str], domains: list[SecurityDomain], message: str) -> None:
    with pytest.raises(PlanError) as err:
        plan_app_domain_install(version, present, domains)
    assert message in str(err.value)


def test_restore_refuses_an_unknown_level() -> None:
    with pytest.raises(PlanError, match="appDom level 'off' is not one of"):
        plan_app_domain_restore("off", ENFORCING)
