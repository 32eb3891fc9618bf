# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The backend of guest_network on a fake guest (``fake_guest.py``) with the real restore journal in ``sh``:
check mode changes nothing, the journal is written before the first change, the rerun is unchanged, the journal's
restore (esxi_journal) puts everything back; refusals change nothing. And the probe script in a real ``sh``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.journal_run import run as journal_run
from ansible_collections.esxilab.iperf.plugins.plugin_utils.guest.request import GuestNetworkError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.guest.run import parse_probe, probe_script, run
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.owner import RunId
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.store import Journal
from tests.unit.plugins.plugin_utils.guest.fake_guest import FakeGuest, Iface, guest

A = RunId("controller-a", 4242, "170000")
VNICS = [{"mac_address": "00:50:56:AA:BB:CC", "type": "vmxnet3", "portgroup": "iperf-isolated"}]


def _args(**kwargs: Any) -> dict[str, Any]:
    return {"vnics": VNICS, "address": "198.18.61.12/24", "mtu": 9000, "install": True, **kwargs}


def _journal(host: FakeGuest, tmp: Path) -> Journal:
    return Journal(host.execute, str(tmp / "journal"), run=A, deadline_seconds=0)


def _entries(tmp: Path) -> dict[str, str]:
    return {p.name: p.read_text().strip() for p in sorted((tmp / "journal").glob("link.*"))}


def test_check_apply_rerun_restore(tmp_path: Path) -> None:
    host = guest()
    journal = _journal(host, tmp_path)

    checked = run(_args(), host.execute, journal, check_mode=True)
    assert checked["changed"] is True and checked["interface"] == "eth1"
    assert checked["changes"] == ["mtu 1500 -> 9000", "address 198.18.61.12/24 added", "down -> up"]
    assert checked["packages"] == ["iperf3", "iperf"] and checked["package_manager"] == "apt"
    assert '"mtu": 9000' in checked["diff"][0]["after"] and '"mtu": 1500' in checked["diff"][0]["before"]
    assert len(host.log) == 1 and not (tmp_path / "journal").exists()  # one probe; nothing journaled or run
    assert host.ifaces["eth1"] == Iface("00:50:56:aa:bb:cc")

    applied = run(_args(), host.execute, journal, check_mode=False)
    assert applied["changed"] is True and applied["after"]["addresses"] == ["198.18.61.12/24"]
    assert host.ifaces["eth1"] == Iface("00:50:56:aa:bb:cc", 9000, True, ["198.18.61.12/24"])
    assert _entries(tmp_path) == {
        "link.eth1.addr": "198.18.61.12/24",
        "link.eth1.down": "true",
        "link.eth1.mtu": "1500",
    }
    first_change = next(i for i, c in enumerate(host.log) if c.startswith("ip "))
    journaled = next(i for i, c in enumerate(host.log) if "link.eth1.mtu" in c and "esxilab-journal" in c)
    assert journaled < first_change  # the journal is written before the first change
    assert applied["journal"]["link"]["config"] == {"eth1": {"addr": "198.18.61.12/24", "down": "true"}}

    again = run(_args(), host.execute, journal, check_mode=False)
    assert (again["changed"], again["changes"], again["commands"]) == (False, [], [])

    restored = journal_run({"mode": "restore", "scope": ["link"]}, journal, host.execute, check_mode=False)
    assert restored["restored"] == {
        "link": {"config": {"eth1": {"addr": "198.18.61.12/24", "down": "true"}}, "mtu": {"eth1": 1500}}
    }
    assert host.ifaces["eth1"] == Iface("00:50:56:aa:bb:cc")  # as it was
    assert _entries(tmp_path) == {} and restored["journal"]["pending"] is False
    assert journal_run({"mode": "restore"}, journal, host.execute, check_mode=False)["changed"] is False


def test_a_killed_run_keeps_the_earliest_values_and_a_gone_vnic_drops_its_address(tmp_path: Path) -> None:
    host = guest()
    journal = _journal(host, tmp_path)
    run(_args(), host.execute, journal, check_mode=False)
    # a second run (the first was killed before its restore) asks for another MTU: the journal keeps 1500
    run(_args(mtu=4000), host.execute, journal, check_mode=False)
    assert _entries(tmp_path)["link.eth1.mtu"] == "1500" and host.ifaces["eth1"].mtu == 4000
    del host.ifaces["eth1"]  # the vNIC was removed meanwhile: its address and state went with it, its MTU is named
    with pytest.raises(Exception, match=r"link\.eth1\.mtu: interface eth1 is gone"):
        journal_run({"mode": "restore", "scope": ["link"]}, journal, host.execute, check_mode=False)
    assert _entries(tmp_path) == {"link.eth1.mtu": "1500"}


def test_the_text_forms_of_ip_work_as_json_does(tmp_path: Path) -> None:
    host = guest(json=False)
    result = run(_args(), host.execute, _journal(host, tmp_path), check_mode=False)
    assert result["changed"] and host.ifaces["eth1"].addresses == ["198.18.61.12/24"]
    assert run(_args(), host.execute, _journal(host, tmp_path), check_mode=False)["changed"] is False


def test_persistent_setting_is_journaled_and_removed_by_the_restore(tmp_path: Path) -> None:
    host = guest()
    journal = _journal(host, tmp_path)
    result = run(_args(persist=True), host.execute, journal, check_mode=False)
    assert result["persist"] == {"kind": "ifupdown", "target": "/etc/network/interfaces.d/esxilab-iperf-eth1"}
    assert result["diff"][1]["after"].splitlines()[1:] == [
        "allow-hotplug eth1",
        "iface eth1 inet static",
        "    address 198.18.61.12/24",
        "    mtu 9000",
    ]
    assert _entries(tmp_path)["link.eth1.persist"] == "file:/etc/network/interfaces.d/esxilab-iperf-eth1"
    assert "mktemp /etc/network/interfaces.d/.esxilab-iperf.XXXXXX" in host.config[0]
    assert run(_args(persist=True), host.execute, journal, check_mode=False)["changed"] is False  # read back: same
    journal_run({"mode": "restore", "scope": ["link"]}, journal, host.execute, check_mode=False)
    assert host.config[-1] == "rm -f -- /etc/network/interfaces.d/esxilab-iperf-eth1" and _entries(tmp_path) == {}
    assert host.files == {}


@pytest.mark.parametrize(
    ("kwargs", "args", "message"),
    [
        (
            {"uid": 1000},
            {},
            "the connecting user (uid 1000) is not root. Nothing was changed. Fix: run the role with become",
        ),
        ({"routes": ["eth1"]}, {}, "interface eth1 (MAC 00:50:56:aa:bb:cc) is the guest's management interface"),
        ({"ssh": "198.18.61.1 5 198.18.61.12 22"}, {"address": "198.18.61.12/24"}, "the address the controller's SSH"),
        ({"tools": []}, {}, "guest_network_install: the guest has none of the package managers"),
    ],
    ids=["not-root", "default-route", "ssh-address", "no-package-manager"],
)
def test_refusals_change_nothing(tmp_path: Path, kwargs: dict[str, Any], args: dict[str, Any], message: str) -> None:
    host = guest(**kwargs)
    if "ssh" in kwargs:
        host.ifaces["eth1"].addresses.append("198.18.61.12/24")
    before = {name: Iface(i.mac, i.mtu, i.up, list(i.addresses)) for name, i in host.ifaces.items()}
    with pytest.raises(GuestNetworkError) as error:
        run(_args(**args), host.execute, _journal(host, tmp_path), check_mode=False)
    assert message in error.value.message
    assert host.ifaces == before and not (tmp_path / "journal").exists()


def test_bad_input_fails_before_anything_runs(tmp_path: Path) -> None:
    host = guest()
    with pytest.raises(GuestNetworkError, match=r"guest_network_address: 198\.18\.61\.0/24 is the network address"):
        run(_args(address="198.18.61.0/24"), host.execute, _journal(host, tmp_path), check_mode=False)
    assert host.log == []


def test_a_failed_command_names_it_and_the_journal_puts_back_what_was_done(tmp_path: Path) -> None:
    host = guest(fail="ip addr add")
    journal = _journal(host, tmp_path)
    with pytest.raises(GuestNetworkError) as error:
        run(_args(), host.execute, journal, check_mode=False)
    assert "'ip addr add 198.18.61.12/24 dev eth1' failed on the guest (exit status 2)" in error.value.message
    assert error.value.result["commands"] == ["ip link set dev eth1 mtu 9000", "ip addr add 198.18.61.12/24 dev eth1"]
    assert host.ifaces["eth1"].mtu == 9000
    journal_run({"mode": "restore", "scope": ["link"]}, journal, host.execute, check_mode=False)
    assert host.ifaces["eth1"] == Iface("00:50:56:aa:bb:cc")


def test_a_vnic_not_added_yet_is_a_change_in_check_mode_and_an_error_otherwise(tmp_path: Path) -> None:
    host = guest()
    vnics = [{**VNICS[0], "mac_address": None}]
    checked = run(_args(vnics=vnics), host.execute, _journal(host, tmp_path), check_mode=True)
    assert checked["changed"] is True and checked["interface"] is None and host.log == []
    with pytest.raises(GuestNetworkError, match=r"guest_network_vnics\[0\].mac_address is null"):
        run(_args(vnics=vnics), host.execute, _journal(host, tmp_path), check_mode=False)


def test_the_probe_script_runs_in_a_real_shell() -> None:
    """Quoting: the SSH session's address is one marker argument (a real ``sh``; ``ip`` of this machine, read only)."""
    tag = "esxilab-guest-0123456789ab"
    env = {**os.environ, "SSH_CONNECTION": "198.18.60.1 50000 198.18.60.11 22"}
    proc = subprocess.run(
        ["/bin/sh", "-c", probe_script(tag, with_persist=True)],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
        check=False,
    )
    probe = parse_probe(proc.stdout, tag)
    assert probe.ssh_address == "198.18.60.11" and probe.uid == os.getuid()
    assert any(link.name == "lo" for link in probe.links)
    with pytest.raises(GuestNetworkError, match="the probe of the guest did not finish"):
        parse_probe("sh: ip: not found\n", tag)
