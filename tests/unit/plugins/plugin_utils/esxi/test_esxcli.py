# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parsers and planners of ``plugin_utils/esxi`` against the recorded ESXi outputs in
``tests/fixtures/esxi``.

Every expected figure below is copied from the fixture text by hand (see SOURCES.md there).
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import (
    EsxiParseError,
    ExecPolicyError,
    FirewallError,
    PlanError,
    VibInstallError,
    failure_from_output,
    find_esxcli_failure,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.firewall import (
    FirewallStatus,
    Ruleset,
    parse_firewall_get,
    parse_ruleset_list,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.firewall_plan import FirewallDesired, plan_firewall
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.install_plan import (
    InstallOptions,
    RestoreRecord,
    plan_install_restore,
    plan_iperf_install,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.paths import (
    BUNDLED_IPERF3,
    BUNDLED_IPERF3_COPY,
    VIB_IPERF,
    VIB_IPERF_COPY,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.ping import parse_linux_ping, parse_vmkping
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.secpolicy import parse_secpolicy_domains
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.settings import (
    ExecInstalledOnly,
    exec_installed_only_from,
    parse_advanced_option,
    parse_kernel_settings,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.steps import Step, to_dict
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.tables import parse_bool, parse_table
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.versions import (
    EsxiVersion,
    parse_system_version,
    parse_vmware_version,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.vib import (
    Vib,
    find_vib,
    parse_iperf_version_banner,
    parse_vib_id,
    parse_vib_install_result,
    parse_vib_list,
)
from tests.collection_path import ESXI_RECORDINGS
from tests.unit.plugins.esxi_parsers_for_tests import (
    ipv4_payload_for_mtu,
    parse_acceptance_get,
    parse_acceptance_set,
    parse_ip_interface_list,
    parse_ipv4_list,
    parse_nic_list,
    parse_portgroup_list,
    parse_vswitch_list,
)

ESXI_FIXTURES = ESXI_RECORDINGS


def fx(name: str) -> str:
    return (ESXI_FIXTURES / name).read_text(encoding="utf-8")


def unwrap(text: str, prefix: str) -> str:
    """Remove a page's per-line comment prefix (documented per file in SOURCES.md)."""
    out = []
    for line in text.splitlines():
        if line.startswith(prefix):
            out.append(line[len(prefix) :])
        elif line.strip() == prefix.strip():
            out.append("")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def test_every_fixture_is_listed_in_sources() -> None:
    sources = fx("SOURCES.md")
    names = sorted(p.name for p in ESXI_FIXTURES.iterdir() if p.name != "SOURCES.md")
    assert len(names) == 75
    for name in names:
        stem = name.replace(".stdout.txt", "").replace(".stderr.txt", "")
        assert f"`{name}`" in sources or f"`{stem}" in sources, name


def test_fixtures_keep_trailing_spaces() -> None:
    assert "   VIBs Removed: \n   VIBs Skipped: \n" in fx("6.7__software-vib-install__iperf-offline-bundle.txt")
    assert fx("6.7.0__network-vswitch-standard-list.txt").count("   Beacon Required By: \n") == 2


# --------------------------------------------------------------------------------------------
# versions
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "version", "build", "update", "family"),
    [
        ("6.7.0__vmware-vl.txt", (6, 7, 0), 19195723, 3, "6.7"),
        ("7.0.3__vmware-vl.txt", (7, 0, 3), 22348816, 3, "7.0"),
        ("8.0.1__vmware-vl.txt", (8, 0, 1), 21813344, 1, "8.0"),
        ("8.0.3__vmware-lv__system-version-get.txt", (8, 0, 3), 24585383, 3, "8.0"),
        ("7.0.3__vmware-v.txt", (7, 0, 3), 20328353, None, "7.0"),
        ("6.7.0__vmware-l.txt", (6, 7, 0), None, 3, "6.7"),
    ],
)
def test_vmware_version(
    name: str, version: tuple[int, ...], build: int | None, update: int | None, family: str
) -> None:
    parsed = parse_vmware_version(fx(name))
    assert parsed.version == version
    assert parsed.build == build
    assert parsed.update == update
    assert parsed.patch is None  # vmware -v/-l never print the patch level
    assert parsed.family == family
    assert parsed.product == "VMware ESXi"


def test_vmware_version_text() -> None:
    assert str(parse_vmware_version(fx("7.0.3__vmware-vl.txt"))) == "VMware ESXi 7.0.3 Update 3 build-22348816"


def test_vmware_version_rejects_other_text() -> None:
    with pytest.raises(EsxiParseError) as err:
        parse_vmware_version(fx("7.0.3__network-firewall-get.txt"))
    assert err.value.raw is not None and "Default Action" in err.value.raw


@pytest.mark.parametrize(
    ("name", "version", "build", "update", "patch"),
    [
        ("6.7.0__system-version-get.txt", (6, 7, 0), 8169922, 0, 0),
        ("7.0.1__system-version-get__rebroken.txt", (7, 0, 1), 16850804, 1, 0),
        ("8.0.1__system-version-get.txt", (8, 0, 1), 21495797, 1, 0),
        ("8.0.3__vmware-lv__system-version-get.txt", (8, 0, 3), 24585383, 3, 60),
    ],
)
def test_system_version_get(name: str, version: tuple[int, ...], build: int, update: int, patch: int) -> None:
    parsed = parse_system_version(fx(name))
    assert (parsed.version, parsed.build, parsed.update, parsed.patch) == (version, build, update, patch)
    assert parsed.major == version[0]
    assert parsed.minor == version[1]


def test_system_version_rejects_other_text() -> None:
    with pytest.raises(EsxiParseError):
        parse_system_version(fx("6.7.0__vmware-vl.txt"))


# --------------------------------------------------------------------------------------------
# software
# --------------------------------------------------------------------------------------------


def test_vib_list_7x_columns() -> None:
    vibs = parse_vib_list(fx("7.0.1__software-vib-list__head.txt"))
    assert [v.name for v in vibs] == [
        "bnxtnet",
        "bnxtroce",
        "brcmfcoe",
        "brcmnvmefc",
        "elxiscsi",
        "elxnet",
        "i40en",
        "i40iwn",
        "iavmd",
    ]
    i40en = vibs[6]
    assert i40en == Vib(
        name="i40en",
        version="1.8.1.123-1vmw.701.0.0.16850804",
        vendor="VMW",
        acceptance_level="VMwareCertified",
        install_date="2021-01-03",
        platforms=None,
    )
    assert find_vib(vibs, "iavmd") is vibs[8]
    assert find_vib(vibs, "iperf") is None


def test_vib_list_8x_platforms_column_without_dashes() -> None:
    vibs = parse_vib_list(unwrap(fx("8.0.2__software-vib-list__platforms.txt"), "    # "))
    assert vibs == [
        Vib(
            name="esx-base",
            version="8.0.2-0.40.23825572",
            vendor="VMware",
            acceptance_level="VMwareCertified",
            install_date="2024-05-24",
            platforms=("host",),
        )
    ]


def test_vib_install_67_order_with_trailing_spaces() -> None:
    result = parse_vib_install_result(fx("6.7__software-vib-install__iperf-offline-bundle.txt"))
    assert result.kind == "Installation"
    assert result.message == "Operation finished successfully."
    assert result.reboot_required is False
    assert result.installed == ("DAST_bootbank_iperf_2.0.5-1",)
    assert result.installed_names == ("iperf",)
    assert result.removed == ()
    assert result.skipped == ()
    assert result.dpu_results is None  # no such field before 8.0


def test_vib_install_8x_order_with_dpu_results() -> None:
    result = parse_vib_install_result(fx("8.x__software-vib-install__esxcli-nsx-ext.txt"))
    assert result.kind == "Installation"
    assert result.reboot_required is False
    assert result.installed == ("esxcliext_bootbank_esxcli-nsx-ext_1.0.0-0.0.0",)
    assert result.installed_names == ("esxcli-nsx-ext",)
    assert result.removed == ()
    assert result.dpu_results == ""


def test_profile_update_8x_reboot_required() -> None:
    result = parse_vib_install_result(fx("8.0.3__software-profile-update__reboot-required.txt"))
    assert result.kind == "Update"
    assert result.reboot_required is True
    assert result.message.startswith("The update completed successfully, but the system needs to be rebooted")
    assert len(result.installed) == 53
    assert len(result.removed) == 53
    assert len(result.skipped) == 71
    assert result.installed[0] == "VMW_bootbank_iavmd_3.0.0.1010-13vmw.803.0.79.24859861"
    assert result.installed[-1] == "VMware_locker_tools-light_12.5.4.24964629-25066677"
    assert result.skipped[-1] == "VMware_bootbank_vmware-hbrsrv_8.0.3-0.0.24022510"
    assert "esx-base" in result.installed_names
    assert result.dpu_results == ""


def test_profile_update_67_reboot_required_elided_list() -> None:
    result = parse_vib_install_result(fx("6.7__software-profile-update__reboot-required-elided.txt"))
    assert result.kind == "Update"
    assert result.reboot_required is True
    # the page author shortened the list with ", ..." -- kept as printed, not guessed
    assert result.installed == ("VMW_bootbank_bnxtnet_20.6.101.7-24vmw.670.3.73.14320388", "...")
    assert result.installed_names == ("bnxtnet",)


def test_vib_install_acceptance_error_names_allow_unsigned() -> None:
    with pytest.raises(VibInstallError) as err:
        parse_vib_install_result(fx("8.0__software-vib-install__acceptance-config-error.txt"))
    exc = err.value
    assert exc.error_class == "AcceptanceConfigError"
    assert exc.option == "allow_unsigned"
    assert exc.failure.message == (
        "VIB esxcliext_bootbank_esxcli-nsx-ext_1.0.0-0.0.0's acceptance level is community, which is not"
        " compliant with the ImageProfile acceptance level partner To change the host acceptance level,"
        " use the 'esxcli software acceptance set' command."
    )
    assert "allow_unsigned: true" in str(exc)
    assert "--no-sig-check" in str(exc)
    assert exc.raw is not None and "[AcceptanceConfigError]" in exc.raw


@pytest.mark.parametrize(
    ("name", "error_class", "option", "message_start"),
    [
        (
            "7.0__vxrail-lcm__dependency-error-message.txt",
            "DependencyError",
            "method",
            "VIB DEL_bootbank_dcism_3.6.0.2249-DEL.700.0.0.15843807 requires esx-version >= 7.0.0",
        ),
        (
            "8.0.3__software-profile-update__nomatch.txt",
            "NoMatchError",
            "vib_source",
            "No image profile found with name 'ESXi-8.0U3-standard' id = ESXi-8.0U3-standard",
        ),
        (
            "8.0U2__software-vib-update__profile-validation-error.txt",
            "ProfileValidationError",
            "vib_source",
            "Profile (Updated) ESXi-8.0b-21203435-USBNIC is missing component(s) ESXi,Mellanox-nmlx5.",
        ),
    ],
)
def test_vib_install_errors(name: str, error_class: str, option: str, message_start: str) -> None:
    with pytest.raises(VibInstallError) as err:
        parse_vib_install_result(fx(name))
    assert err.value.error_class == error_class
    assert err.value.option == option
    assert err.value.failure.message.startswith(message_start)
    assert "Please refer to the log file" not in err.value.failure.message
    assert err.value.fix


def test_vib_install_result_missing_block() -> None:
    with pytest.raises(EsxiParseError):
        parse_vib_install_result(fx("7.0.3__network-firewall-get.txt"))


def test_esxcli_failure_message_before_class() -> None:
    failure = find_esxcli_failure(fx("7.0.3__system-settings-advanced-set__nomatch.txt"))
    assert failure is not None
    assert failure.error_class == "NoMatchError"
    assert failure.message == "Unable to find option execInstalledOnly"


def test_esxcli_failure_without_class_needs_exit_status() -> None:
    text = fx("8.0U2__network-firewall-ruleset-allowedip__owned-by-system.txt")
    assert find_esxcli_failure(text) is None
    assert failure_from_output(text, 0) is None
    failure = failure_from_output(text, 1)
    assert failure is not None
    assert failure.error_class is None
    assert failure.message == (
        "Invalid operation requested: Can not change allowed ip list this ruleset, it is owned by system service."
    )
    assert failure_from_output("", 2) is not None


def test_vib_id() -> None:
    assert parse_vib_id("DAST_bootbank_iperf_2.0.5-1") == ("DAST", "iperf", "2.0.5-1")
    assert parse_vib_id("VMware_bootbank_elx-esx-libelxima.so_12.0.1200.0-6vmw.803.0.0.24022510") == (
        "VMware",
        "elx-esx-libelxima.so",
        "12.0.1200.0-6vmw.803.0.0.24022510",
    )
    assert parse_vib_id("VMware_locker_tools-light_12.5.4.24964629-25066677") == (
        "VMware",
        "tools-light",
        "12.5.4.24964629-25066677",
    )
    assert parse_vib_id("...") is None


def test_acceptance_level() -> None:
    assert parse_acceptance_get(fx("unknown__software-acceptance-get.txt")) == "PartnerSupported"
    assert parse_acceptance_set(fx("7.0.1-arm__software-acceptance-set__community.txt")) == "CommunitySupported"
    with pytest.raises(EsxiParseError):
        parse_acceptance_get("")
    with pytest.raises(EsxiParseError):
        parse_acceptance_set("PartnerSupported")


def test_iperf_banner() -> None:
    assert parse_iperf_version_banner(fx("6.0__opt-iperf-bin-iperf-v.txt")) == "2.0.5"
    assert parse_iperf_version_banner("nothing here") is None


# --------------------------------------------------------------------------------------------
# firewall
# --------------------------------------------------------------------------------------------


def test_firewall_get() -> None:
    assert parse_firewall_get(fx("7.0.3__network-firewall-get.txt")) == FirewallStatus(
        enabled=True, default_action="DROP", loaded=True
    )
    with pytest.raises(EsxiParseError):
        parse_firewall_get(fx("6.7.0__system-version-get.txt"))


def test_ruleset_list_two_columns() -> None:
    rulesets = parse_ruleset_list(fx("6.x__network-firewall-ruleset-list__2col.txt"))
    assert len(rulesets) == 43
    assert rulesets[0] == Ruleset(name="sshServer", enabled=True)
    assert rulesets[1] == Ruleset(name="sshClient", enabled=False)
    assert rulesets[-1] == Ruleset(name="vsanhealth-multicasttest", enabled=False)
    assert sum(r.enabled for r in rulesets) == 22
    assert all(r.enable_disable_configurable is None for r in rulesets)


def test_ruleset_list_four_columns() -> None:
    rulesets = {r.name: r for r in parse_ruleset_list(fx("8.0U2b__network-firewall-ruleset-list__4col.txt"))}
    assert len(rulesets) == 57
    assert rulesets["sshServer"] == Ruleset("sshServer", True, True, True)
    assert rulesets["nfsClient"] == Ruleset("nfsClient", False, False, False)
    assert rulesets["vsanhealth-unicasttest"] == Ruleset("vsanhealth-unicasttest", False, False, True)
    assert rulesets["trusted-infrastructure-kmxd"] == Ruleset("trusted-infrastructure-kmxd", False, False, False)
    assert rulesets["vsanmgmt-https-tunnel"] == Ruleset("vsanmgmt-https-tunnel", True, False, True)
    assert "vsanhealth-multicasttest" not in rulesets


# --------------------------------------------------------------------------------------------
# network
# --------------------------------------------------------------------------------------------


def test_nic_list_67_down_links_speed_zero() -> None:
    nics = parse_nic_list(fx("6.7.0__network-nic-list.txt"))
    assert [n.name for n in nics] == ["vmnic0", "vmnic1", "vmnic2", "vmnic3"]
    up, down = nics[0], nics[2]
    assert (up.link_up, up.speed_mbps, up.duplex, up.mtu) == (True, 1000, "Full", 1500)
    assert (down.link_up, down.speed_mbps, down.duplex) == (False, 0, "Half")
    assert down.admin_up is True
    assert down.mac_address == "20:67:7c:d9:a1:6e"
    assert down.pci_device == "0000:02:00.2"
    assert down.driver == "ntg3"
    assert down.description == "Broadcom Corporation NetXtreme BCM5719 Gigabit Ethernet"


def test_nic_list_60_jumbo() -> None:
    nics = parse_nic_list(fx("6.0__network-nic-list__jumbo.txt"))
    assert [(n.name, n.driver, n.speed_mbps, n.mtu) for n in nics] == [
        ("vmnic0", "tg3", 1000, 1500),
        ("vmnic1", "ixgbe", 10000, 9000),
        ("vmnic2", "ixgbe", 10000, 9000),
    ]
    assert nics[1].description == "Intel Corporation Ethernet Controller 10 Gigabit X540-AT2"


def test_ip_interface_list() -> None:
    (vmk0,) = parse_ip_interface_list(fx("unknown__network-ip-interface-list.txt"))
    assert vmk0.name == "vmk0"
    assert vmk0.mac_address == "00:50:56:6c:01:11"
    assert vmk0.enabled is True
    assert vmk0.portset == "vSwitch0"
    assert vmk0.portgroup == "Management"
    assert vmk0.netstack == "defaultTcpipStack"
    assert vmk0.mtu == 1500
    assert vmk0.tso_mss == 65535
    assert vmk0.port_id == 33554443
    assert vmk0.vds_name is None  # printed N/A
    assert vmk0.fields["vdsconnection"] == "-1"
    assert vmk0.fields["rxdispqueuesize"] == "1"
    with pytest.raises(EsxiParseError):
        parse_ip_interface_list("no blocks\n")


def test_ipv4_list() -> None:
    vmk0, vmk1 = parse_ipv4_list(fx("6.7__network-ip-interface-ipv4-list.txt"))
    assert (vmk0.name, vmk0.address, vmk0.netmask, vmk0.broadcast) == (
        "vmk0",
        "192.168.0.28",
        "255.255.255.0",
        "192.168.0.255",
    )
    assert (vmk0.address_type, vmk0.gateway, vmk0.dhcp_dns) == ("STATIC", "192.168.0.1", False)
    assert (vmk1.address, vmk1.broadcast, vmk1.gateway, vmk1.dhcp_dns) == (
        "192.168.100.28",
        "192.168.100.255",
        "0.0.0.0",
        False,
    )


def test_vswitch_list() -> None:
    vs0, vs1 = parse_vswitch_list(fx("6.7.0__network-vswitch-standard-list.txt"))
    assert vs0.name == "vSwitch0"
    assert (vs0.switch_class, vs0.num_ports, vs0.used_ports, vs0.configured_ports) == ("cswitch", 4736, 4, 128)
    assert (vs0.mtu, vs0.cdp_status, vs0.beacon_enabled) == (1500, "listen", False)
    assert vs0.uplinks == ("vmnic0",)
    assert vs0.portgroups == ("Management VMkernel",)
    assert vs1.used_ports == 10
    assert vs1.configured_ports == 1024
    assert vs1.uplinks == ("vmnic3", "vmnic2", "vmnic1")
    assert vs1.portgroups == ("Server Network",)


def test_portgroup_list_text_and_csv() -> None:
    text = parse_portgroup_list(fx("6.7.0__network-vswitch-standard-portgroup-list.txt"))
    assert [(p.name, p.vswitch, p.active_clients, p.vlan_id) for p in text] == [
        ("Management VMkernel", "vSwitch0", 1, 0),
        ("Server Network", "vSwitch1", 3, 0),
    ]
    csv = parse_portgroup_list(fx("unknown__csv__network-vswitch-standard-portgroup-list.txt"))
    assert [(p.name, p.vswitch, p.active_clients, p.vlan_id) for p in csv] == [
        ("Management Network", "vSwitch0", 1, 0),
        ("VM Network", "vSwitch0", 3, 0),
    ]


def test_parse_table_without_the_column() -> None:
    with pytest.raises(EsxiParseError):
        parse_table(fx("6.7.0__network-nic-list.txt"), "Domain Name")


# --------------------------------------------------------------------------------------------
# settings, execInstalledOnly, security domains
# --------------------------------------------------------------------------------------------


def test_kernel_settings_both_column_orders() -> None:
    (old,) = parse_kernel_settings(fx("5.5__system-settings-kernel-list__iovDisableIR.txt"))
    assert (old.name, old.type, old.configured, old.runtime, old.default) == (
        "iovDisableIR",
        "Bool",
        "true",
        "TRUE",
        "FALSE",
    )
    assert old.description == "Disable Interrrupt Routing in the IOMMU"
    assert (old.configured_bool, old.runtime_bool) == (True, True)
    (new,) = parse_kernel_settings(fx("unknown__system-settings-kernel-list__vga.txt"))
    assert (new.name, new.configured, new.runtime, new.default) == ("vga", "FALSE", "TRUE", "TRUE")
    assert new.description == "Enable/Disable VGA support."
    assert (new.configured_bool, new.runtime_bool) == (False, True)


def test_advanced_option() -> None:
    option = parse_advanced_option(fx("8.x__system-settings-advanced-list__int-value-fragment.txt"))
    assert option is not None
    assert option.int_value == 0
    assert option.path is None  # not in the recorded fragment
    assert parse_advanced_option(fx("7.0.3__system-settings-advanced-set__nomatch.txt")) is None
    with pytest.raises(EsxiParseError):
        parse_advanced_option(fx("8.0__software-vib-install__acceptance-config-error.txt"))
    with pytest.raises(EsxiParseError):
        parse_advanced_option("\n")


def test_exec_installed_only_from_recorded_outputs() -> None:
    on_70 = exec_installed_only_from(None, fx("7.0.3__system-settings-advanced-set__nomatch.txt"))
    assert on_70 == ExecInstalledOnly(runtime_option=None, boot_runtime=None, boot_configured=None)
    assert on_70.active is None
    off_8x = exec_installed_only_from(None, fx("8.x__system-settings-advanced-list__int-value-fragment.txt"))
    assert off_8x.runtime_option == 0
    # a kernel list without an execInstalledOnly row leaves the boot option unknown
    assert exec_installed_only_from(fx("unknown__system-settings-kernel-list__vga.txt"), None).boot_runtime is None


@pytest.mark.parametrize(
    ("runtime_option", "boot_runtime", "active"),
    [
        (1, None, True),
        (1, False, True),
        (0, True, True),
        (None, True, True),
        (0, False, False),
        (None, False, False),
        (0, None, None),
        (None, None, None),
    ],
)
def test_exec_installed_only_active(runtime_option: int | None, boot_runtime: bool | None, active: bool | None) -> None:
    assert ExecInstalledOnly(runtime_option=runtime_option, boot_runtime=boot_runtime).active is active


def test_secpolicy_domains_truncated_row() -> None:
    domains = parse_secpolicy_domains(fx("unknown__system-secpolicy-domain-list__truncated.txt"))
    assert [(d.name, d.level) for d in domains[:5]] == [
        ("superDom", "enforcing"),
        ("regularVMDom", "enforcing"),
        ("appDom", "enforcing"),
        ("daemonFrameworkDom", "enforcing"),
        ("globalVMDom", "enforcing"),
    ]
    assert domains[2].enforcing is True
    assert domains[5].name == "ioFilterDom"
    assert domains[5].level == "en..."
    assert domains[5].enforcing is None


def test_parse_bool() -> None:
    assert [parse_bool(v) for v in ("true", "TRUE", "false", "FALSE", "yes", None)] == [
        True,
        True,
        False,
        False,
        None,
        None,
    ]


# --------------------------------------------------------------------------------------------
# path MTU
# --------------------------------------------------------------------------------------------


def test_payload_for_mtu() -> None:
    assert ipv4_payload_for_mtu(9000) == 8972
    assert ipv4_payload_for_mtu(1500) == 1472


def test_vmkping_jumbo_ok() -> None:
    result = parse_vmkping(unwrap(fx("unknown__vmkping__jumbo-ok-8980.txt"), "# "))
    assert result.ok is True
    assert result.reason == "ok"
    assert (result.target, result.payload_size) == ("10.200.1.1", 8972)
    assert (result.transmitted, result.received, result.loss_percent) == (3, 3, 0.0)
    assert result.reply_bytes == 8980
    assert (result.rtt_min_ms, result.rtt_avg_ms, result.rtt_max_ms) == (0.339, 0.458, 0.695)
    assert result.errors == ()


def test_vmkping_vsan_doc_leading_space() -> None:
    result = parse_vmkping(fx("unknown__vmkping__jumbo-ok-9008-vsan-doc.txt"))
    assert result.ok is True
    assert (result.target, result.payload_size, result.reply_bytes) == ("172.32.0.3", 8972, 9008)
    assert (result.rtt_min_ms, result.rtt_avg_ms, result.rtt_max_ms) == (0.533, 0.575, 0.638)


def test_vmkping_message_too_long() -> None:
    result = parse_vmkping(fx("unknown__vmkping__message-too-long.txt"))
    assert result.ok is False
    assert result.reason == "message_too_long"
    assert (result.target, result.payload_size) == ("192.168.6.1", 1500)
    assert (result.transmitted, result.received, result.loss_percent) == (3, 0, 100.0)
    assert result.errors == ("sendto() failed (Message too long)",) * 3
    assert result.reply_bytes is None
    assert "vmk/vSwitch MTU" in result.message


def test_vmkping_silent_loss_and_garbage() -> None:
    # the recorded failure form without its sendto() lines: what a silently dropping path prints
    text = fx("unknown__vmkping__message-too-long.txt").replace("sendto() failed (Message too long)\n", "")
    result = parse_vmkping(text)
    assert (result.ok, result.reason, result.errors) == (False, "no_reply", ())
    garbage = parse_vmkping("Unknown interface 'vmk9'\n")
    assert (garbage.ok, garbage.reason, garbage.transmitted) == (False, "unrecognized", None)


@pytest.mark.parametrize(
    ("output", "tool", "fix"),
    [
        # what Debian 12's coreutils env, dash, busybox sh and bash print (recorded on the lab machine, 2026-12-06)
        ("env: \u2018ping\u2019: No such file or directory\n", "ping", "install iputils-ping"),
        ("env: 'ping': No such file or directory\n", "ping", "install iputils-ping"),
        ("sh: 1: ping: not found\n", "ping", "install iputils-ping"),
        ("bash: line 1: ping: command not found\n", "ping", "install iputils-ping"),
        ("sh: vmkping: not found\n", "vmkping", "set path_mtu_platform to linux"),
    ],
)
def test_a_missing_ping_is_named_with_its_package_not_unrecognised(output: str, tool: str, fix: str) -> None:
    for result in (parse_linux_ping("", output), parse_vmkping(output)):
        assert (result.ok, result.reason, result.tool) == (False, "tool_missing", tool)
        assert result.message.startswith(f"{tool} is not on this host (")
        assert fix in result.message and "not recognised" not in result.message


def test_unrecognised_output_is_quoted_in_the_message() -> None:
    result = parse_linux_ping("", "ping: 198.18.0.300: Name or service not known\n")
    assert result.reason == "unrecognized"
    assert "ping output not recognised: 'ping: 198.18.0.300: Name or service not known'" in result.message


def test_linux_ping_ok() -> None:
    result = parse_linux_ping(fx("linux-iputils20221126__ping-M-do__ok-1472.txt"))
    assert (result.ok, result.reason, result.tool) == (True, "ok", "ping")
    assert (result.target, result.payload_size, result.reply_bytes) == ("198.51.100.2", 1472, 1480)
    assert (result.transmitted, result.received, result.loss_percent) == (3, 3, 0.0)
    assert (result.rtt_min_ms, result.rtt_avg_ms, result.rtt_max_ms) == (0.045, 0.049, 0.053)


def test_linux_ping_frag_needed() -> None:
    result = parse_linux_ping(fx("linux-iputils20221126__ping-M-do__frag-needed-merged.txt"))
    assert (result.ok, result.reason, result.mtu_reported) == (False, "fragmentation_needed", 1500)
    assert (result.transmitted, result.received, result.loss_percent) == (3, 0, 100.0)
    assert result.errors == ("ping: local error: message too long, mtu=1500",) * 2


def test_linux_ping_local_message_too_long() -> None:
    merged = parse_linux_ping(fx("linux-iputils20221126__ping-M-do__local-message-too-long-merged.txt"))
    apart = parse_linux_ping(
        fx("linux-iputils20221126__ping-M-do__local-message-too-long.stdout.txt"),
        fx("linux-iputils20221126__ping-M-do__local-message-too-long.stderr.txt"),
    )
    for result in (merged, apart):
        assert (result.ok, result.reason, result.mtu_reported) == (False, "message_too_long", 1500)
        assert (result.target, result.payload_size) == ("198.51.100.1", 8972)
        assert len(result.errors) == 3
        assert "interface MTU" in result.message


def test_linux_ping_silent_drop() -> None:
    result = parse_linux_ping(fx("linux-iputils20221126__ping-M-do__silent-drop.txt"))
    assert (result.ok, result.reason, result.mtu_reported, result.errors) == (False, "no_reply", None, ())
    assert (result.target, result.payload_size, result.loss_percent) == ("203.0.113.2", 8972, 100.0)
    assert "drops frames" in result.message


def test_linux_ping_partial_and_send_failure() -> None:
    ok = fx("linux-iputils20221126__ping-M-do__ok-1472.txt")
    partial = parse_linux_ping(ok.replace("3 received, 0% packet loss", "2 received, 33.3333% packet loss"))
    assert (partial.ok, partial.reason, partial.received, partial.loss_percent) == (True, "partial_loss", 2, 33.3333)
    drop = fx("linux-iputils20221126__ping-M-do__silent-drop.txt")
    failed = parse_linux_ping(drop, "ping: sendmsg: No buffer space available\n")
    assert (failed.ok, failed.reason, failed.errors) == (
        False,
        "send_failed",
        ("ping: sendmsg: No buffer space available",),
    )


# --------------------------------------------------------------------------------------------
# install planner
# --------------------------------------------------------------------------------------------

V67 = parse_vmware_version(fx("6.7.0__vmware-vl.txt"))
V70 = parse_vmware_version(fx("7.0.3__vmware-vl.txt"))
V80 = parse_vmware_version(fx("8.0.3__vmware-lv__system-version-get.txt"))
VIBS_70 = parse_vib_list(fx("7.0.1__software-vib-list__head.txt"))
IPERF_VIB = Vib("iperf", "2.0.5-1", "DAST", "CommunitySupported", "2024-01-01")
EXEC_OFF = ExecInstalledOnly(runtime_option=None, boot_runtime=False, boot_configured=False)
EXEC_8_DEFAULT = ExecInstalledOnly(runtime_option=1, boot_runtime=False, boot_configured=False)
BUNDLE = "/tmp/iperf-2.0.5-1-offline_bundle.zip"
VIB_URL = "http://vibsdepot.v-front.de/depot/DAST/iperf-2.0.5/iperf-2.0.5-1.x86_64.vib"


def commands(plan_steps: Iterable[Step]) -> list[str]:
    return [step.command for step in plan_steps]


def test_plan_67_needs_vib_source() -> None:
    with pytest.raises(PlanError) as err:
        plan_iperf_install(V67, [], set(), EXEC_OFF, InstallOptions())
    assert "vib_source" in str(err.value)
    assert BUNDLE in str(err.value)


def test_plan_67_offline_bundle_signed_check_kept() -> None:
    plan = plan_iperf_install(V67, [], set(), EXEC_OFF, InstallOptions(vib_source=BUNDLE))
    assert (plan.method, plan.tool, plan.binary) == ("vib", "iperf2", VIB_IPERF_COPY)
    assert commands(plan.steps) == [
        f"esxcli software vib install -d {BUNDLE}",
        f"cp {VIB_IPERF} {VIB_IPERF_COPY}",
    ]
    assert plan.restore == RestoreRecord(created_files=(VIB_IPERF_COPY,), installed_vib="iperf")
    assert plan.changed is True


def test_plan_67_url_unsigned() -> None:
    plan = plan_iperf_install(V67, [], set(), None, InstallOptions(vib_source=VIB_URL, allow_unsigned=True))
    assert commands(plan.steps)[0] == f"esxcli software vib install -v {VIB_URL} --no-sig-check"
    assert "execInstalledOnly was not read; it is off by default before ESXi 8.0" in plan.warnings


def test_plan_quotes_paths() -> None:
    plan = plan_iperf_install(
        V67, [], set(), EXEC_OFF, InstallOptions(vib_source="/vmfs/volumes/datastore 1/iperf.zip")
    )
    assert commands(plan.steps)[0] == "esxcli software vib install -d '/vmfs/volumes/datastore 1/iperf.zip'"


def test_plan_67_vib_installed_copy_missing() -> None:
    plan = plan_iperf_install(V67, [*VIBS_70, IPERF_VIB], {VIB_IPERF}, EXEC_OFF, InstallOptions())
    assert commands(plan.steps) == [f"cp {VIB_IPERF} {VIB_IPERF_COPY}"]
    assert plan.restore == RestoreRecord(created_files=(VIB_IPERF_COPY,))


def test_plan_67_everything_in_place() -> None:
    plan = plan_iperf_install(V67, [IPERF_VIB], {VIB_IPERF, VIB_IPERF_COPY}, EXEC_OFF, InstallOptions())
    assert plan.steps == ()
    assert plan.changed is False
    assert plan.restore == RestoreRecord()
    assert f"{VIB_IPERF_COPY} already exists; it is used as is and left in place by restore" in plan.warnings


def test_plan_67_vib_installed_binary_missing() -> None:
    with pytest.raises(PlanError) as err:
        plan_iperf_install(V67, [IPERF_VIB], set(), EXEC_OFF, InstallOptions())
    assert "esxcli software vib remove -n iperf" in str(err.value)


def test_plan_67_bundled_on_request() -> None:
    plan = plan_iperf_install(V67, [], {BUNDLED_IPERF3}, EXEC_OFF, InstallOptions(method="bundled"))
    assert (plan.method, plan.tool) == ("bundled", "iperf3")
    assert commands(plan.steps) == [f"cp {BUNDLED_IPERF3} {BUNDLED_IPERF3_COPY}"]


def test_plan_70_bundled_copy() -> None:
    plan = plan_iperf_install(V70, VIBS_70, {BUNDLED_IPERF3}, EXEC_OFF, InstallOptions())
    assert (plan.method, plan.tool, plan.source_binary, plan.binary) == (
        "bundled",
        "iperf3",
        BUNDLED_IPERF3,
        BUNDLED_IPERF3_COPY,
    )
    assert commands(plan.steps) == [
        "cp /usr/lib/vmware/vsan/bin/iperf3 /usr/lib/vmware/vsan/bin/iperf3.copy",
    ]
    assert plan.restore == RestoreRecord(created_files=(BUNDLED_IPERF3_COPY,))
    assert plan.esxi == "VMware ESXi 7.0.3 Update 3 build-22348816"


def test_plan_70_copy_already_shipped() -> None:
    plan = plan_iperf_install(V70, VIBS_70, {BUNDLED_IPERF3, BUNDLED_IPERF3_COPY}, EXEC_OFF, InstallOptions())
    assert plan.steps == ()
    assert plan.restore.created_files == ()


def test_plan_70_no_bundled_binary() -> None:
    with pytest.raises(PlanError) as err:
        plan_iperf_install(V70, VIBS_70, set(), EXEC_OFF, InstallOptions())
    assert "method: vib" in str(err.value)


def test_plan_70_boot_option_enforced() -> None:
    policy = ExecInstalledOnly(runtime_option=None, boot_runtime=True, boot_configured=True)
    with pytest.raises(ExecPolicyError) as err:
        plan_iperf_install(V70, VIBS_70, {BUNDLED_IPERF3}, policy, InstallOptions(relax_exec_policy=True))
    assert "boot option" in str(err.value)
    assert "reboot" in str(err.value)


def test_plan_80_policy_unknown() -> None:
    with pytest.raises(PlanError) as err:
        plan_iperf_install(V80, [], {BUNDLED_IPERF3}, None, InstallOptions())
    assert "esxcli system settings advanced list -o /User/execInstalledOnly" in str(err.value)
    with pytest.raises(PlanError):
        plan_iperf_install(V80, [], {BUNDLED_IPERF3}, ExecInstalledOnly(runtime_option=0), InstallOptions())


def test_plan_80_refuses_without_relax() -> None:
    with pytest.raises(ExecPolicyError) as err:
        plan_iperf_install(V80, [], {BUNDLED_IPERF3}, EXEC_8_DEFAULT, InstallOptions())
    assert "relax_exec_policy: true" in str(err.value)
    assert BUNDLED_IPERF3_COPY in str(err.value)


def test_plan_80_relax_records_previous() -> None:
    plan = plan_iperf_install(V80, [], {BUNDLED_IPERF3}, EXEC_8_DEFAULT, InstallOptions(relax_exec_policy=True))
    assert commands(plan.steps) == [
        "esxcli system settings advanced set -o /User/execInstalledOnly -i 0",
        f"cp {BUNDLED_IPERF3} {BUNDLED_IPERF3_COPY}",
    ]
    assert plan.restore == RestoreRecord(created_files=(BUNDLED_IPERF3_COPY,), exec_installed_only_previous=1)


def test_plan_80_relax_needs_runtime_option() -> None:
    policy = ExecInstalledOnly(runtime_option=None, boot_runtime=None)
    with pytest.raises(PlanError):
        plan_iperf_install(V80, [], {BUNDLED_IPERF3}, policy, InstallOptions(relax_exec_policy=True))


def test_plan_80_policy_already_off() -> None:
    policy = ExecInstalledOnly(runtime_option=0, boot_runtime=False, boot_configured=False)
    plan = plan_iperf_install(V80, [], {BUNDLED_IPERF3}, policy, InstallOptions())
    assert commands(plan.steps) == [f"cp {BUNDLED_IPERF3} {BUNDLED_IPERF3_COPY}"]
    assert plan.restore.exec_installed_only_previous is None
    assert "execInstalledOnly is already off on this host (it is on by default in ESXi 8.0)" in plan.warnings


def test_plan_80_vib_method_warns() -> None:
    plan = plan_iperf_install(
        V80, [], set(), EXEC_8_DEFAULT, InstallOptions(method="vib", vib_source=BUNDLE, relax_exec_policy=True)
    )
    assert [s.action for s in plan.steps] == ["relax_exec_policy", "vib_install", "copy_binary"]
    assert any("not verified on ESXi 8" in w for w in plan.warnings)


def test_plan_unsupported_and_newer_releases() -> None:
    with pytest.raises(PlanError):
        plan_iperf_install(EsxiVersion((5, 5, 0)), [], set(), EXEC_OFF, InstallOptions())
    plan = plan_iperf_install(
        EsxiVersion((9, 0, 0)), [], {BUNDLED_IPERF3}, EXEC_8_DEFAULT, InstallOptions(relax_exec_policy=True)
    )
    assert plan.method == "bundled"
    assert any("newer than the releases" in w for w in plan.warnings)


def test_restore_after_relax_and_vib() -> None:
    record = RestoreRecord(created_files=(VIB_IPERF_COPY,), installed_vib="iperf", exec_installed_only_previous=1)
    steps = plan_install_restore(
        record,
        files_present={VIB_IPERF, VIB_IPERF_COPY},
        exec_installed_only=ExecInstalledOnly(runtime_option=0),
        vib_list=[IPERF_VIB],
        remove_vib=True,
    )
    assert commands(steps) == [
        "esxcli system settings advanced set -o /User/execInstalledOnly -i 1",
        f"rm -f {VIB_IPERF_COPY}",
        "esxcli software vib remove -n iperf",
    ]


def test_restore_is_idempotent_and_keeps_vib_by_default() -> None:
    record = RestoreRecord(created_files=(VIB_IPERF_COPY,), installed_vib="iperf", exec_installed_only_previous=1)
    assert (
        plan_install_restore(
            record,
            files_present={VIB_IPERF},
            exec_installed_only=ExecInstalledOnly(runtime_option=1),
            vib_list=[IPERF_VIB],
        )
        == ()
    )
    assert (
        plan_install_restore(record, files_present=set(), exec_installed_only=None, vib_list=[], remove_vib=True)[
            0
        ].action
        == "restore_exec_policy"
    )


def test_restore_record_roundtrip_through_result_dict() -> None:
    plan = plan_iperf_install(V80, [], {BUNDLED_IPERF3}, EXEC_8_DEFAULT, InstallOptions(relax_exec_policy=True))
    data = to_dict(plan)
    assert data["changed"] is True
    assert data["steps"][0] == {
        "action": "relax_exec_policy",
        "description": f"set /User/execInstalledOnly to 0 (was 1) so {BUNDLED_IPERF3_COPY} may run",
        "command": "esxcli system settings advanced set -o /User/execInstalledOnly -i 0",
    }
    assert data["restore"] == {
        "created_files": [BUNDLED_IPERF3_COPY],
        "installed_vib": None,
        "exec_installed_only_previous": 1,
    }
    assert RestoreRecord.from_dict(data["restore"]) == plan.restore


# --------------------------------------------------------------------------------------------
# firewall planner
# --------------------------------------------------------------------------------------------

FW_70 = parse_firewall_get(fx("7.0.3__network-firewall-get.txt"))
RULESETS_6X = parse_ruleset_list(fx("6.x__network-firewall-ruleset-list__2col.txt"))
RULESETS_8X = parse_ruleset_list(fx("8.0U2b__network-firewall-ruleset-list__4col.txt"))


def test_firewall_disable_and_restore() -> None:
    plan = plan_firewall(FW_70, FirewallDesired(enabled=False))
    assert plan.changed is True
    assert commands(plan.steps) == ["esxcli network firewall set --enabled false"]
    assert plan.before == {"enabled": True, "default_action": "DROP", "rulesets": {}}
    assert plan.after == {"enabled": False, "default_action": "DROP", "rulesets": {}}
    assert plan.previous == FirewallDesired(enabled=True)
    now = FirewallStatus(enabled=False, default_action="DROP", loaded=True)
    restore = plan_firewall(now, plan.previous)
    assert commands(restore.steps) == ["esxcli network firewall set --enabled true"]
    assert plan_firewall(FW_70, plan.previous).changed is False


def test_firewall_unchanged() -> None:
    plan = plan_firewall(FW_70, FirewallDesired(enabled=True, default_action="DROP"))
    assert (plan.changed, plan.steps, plan.changes) == (False, (), ())
    assert plan.previous == FirewallDesired()
    assert plan_firewall(FW_70, FirewallDesired()).changed is False


def test_firewall_opening_order() -> None:
    plan = plan_firewall(FW_70, FirewallDesired(enabled=False, default_action="PASS"))
    assert commands(plan.steps) == [
        "esxcli network firewall set --enabled false",
        "esxcli network firewall set --default-action true",
    ]
    assert [(c.key, c.before, c.after) for c in plan.changes] == [
        ("default_action", "DROP", "PASS"),
        ("enabled", True, False),
    ]
    now = FirewallStatus(enabled=False, default_action="PASS")
    restore = plan_firewall(now, plan.previous)
    assert commands(restore.steps) == [
        "esxcli network firewall set --default-action false",
        "esxcli network firewall set --enabled true",
    ]


def test_firewall_ruleset_on_6x() -> None:
    current = FirewallStatus(enabled=True, default_action="DROP")
    plan = plan_firewall(
        current, FirewallDesired(rulesets={"vsanhealth-multicasttest": True, "sshServer": True}), RULESETS_6X
    )
    assert commands(plan.steps) == [
        "esxcli network firewall ruleset set --ruleset-id vsanhealth-multicasttest --enabled true"
    ]
    assert plan.before["rulesets"] == {"sshServer": True, "vsanhealth-multicasttest": False}
    assert plan.after["rulesets"] == {"sshServer": True, "vsanhealth-multicasttest": True}
    assert plan.previous == FirewallDesired(rulesets={"vsanhealth-multicasttest": False})


def test_firewall_unknown_ruleset() -> None:
    with pytest.raises(FirewallError) as err:
        plan_firewall(FW_70, FirewallDesired(rulesets={"iperf": True}), RULESETS_6X)
    assert "'iperf' does not exist" in str(err.value)
    assert "/etc/vmware/firewall/" in str(err.value)


def test_firewall_ruleset_not_configurable_on_8x() -> None:
    with pytest.raises(FirewallError) as err:
        plan_firewall(FW_70, FirewallDesired(rulesets={"nfsClient": True}), RULESETS_8X)
    assert "'Enable/Disable configurable' is false" in str(err.value)
    assert "enabled: false" in str(err.value)
    plan = plan_firewall(FW_70, FirewallDesired(rulesets={"sshClient": True}), RULESETS_8X)
    assert commands(plan.steps) == ["esxcli network firewall ruleset set --ruleset-id sshClient --enabled true"]
    # asking for the state it already has is fine even when not configurable
    assert plan_firewall(FW_70, FirewallDesired(rulesets={"nfsClient": False}), RULESETS_8X).changed is False


def test_firewall_not_loaded_warning_and_dict() -> None:
    current = FirewallStatus(enabled=True, default_action="DROP", loaded=False)
    plan = plan_firewall(current, FirewallDesired(enabled=False))
    assert plan.warnings == ("the firewall module reports Loaded: false",)
    data = to_dict(plan)
    assert data["steps"] == [
        {
            "action": "firewall_enabled",
            "description": "disable the ESXi firewall",
            "command": "esxcli network firewall set --enabled false",
        }
    ]
    assert data["changes"] == [{"key": "enabled", "before": True, "after": False}]
    assert data["previous"] == {"enabled": True, "default_action": None, "rulesets": {}}
