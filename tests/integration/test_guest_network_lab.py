# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Guest bring-up on the lab (issue 23): ``esxilab.iperf.guest_network`` with real ``ip`` on namespace hosts.

A lab of 2 hosts (prefix ``gnetw``, env ``ESXILAB_GUESTNET_PREFIX``; 198.19.60.0/24, env ``ESXILAB_GUESTNET_SUBNET``)
stands for two guests; each gets an extra veth end ``eth1`` of a known MAC, unaddressed and down, joined to the other
(the test vNICs on an isolated port group). The vNICs reach the role as esxi_guests reports them
(``esxi_guests_vnics``). The test network: ``ESXILAB_GUESTNET_TESTNET`` (default 198.19.61), only inside the lab's
namespaces. Everything the test asserts about the hosts it reads itself with ``ip -j`` in the namespaces.

* check mode with diff: the change is predicted, nothing changes on the host and no journal is written; the
  distribution's package manager (apt, for real, in check mode) would install a package that is missing;
* apply: address, MTU 9000 and up on ``eth1``, the journal records the MTU before, the address and "was down" before
  anything changed; a don't-fragment ping of 9000 bytes crosses the new link; the rerun changes nothing;
* a killed run (no restore of its own) is put back by ``playbooks/restore.yml``: no address, MTU 1500, down, journal
  empty;
* the management interface (``eth0``, the SSH session's address) is refused, naming the option; nothing changes;
* ``vswitch-forwarding.yml`` with the guests' ``esxi_guests_vnics`` and ``esxilab_guest_address``: check mode changes
  nothing; the run addresses the guests, tests over the new addresses, writes the report and puts the guests back.

Times (2-core machine, unloaded): lab up/down 2 s, the playbook test 9 s, the refusal 2 s (``make test``); the
check/apply/rerun/restore test 25 s (``@pytest.mark.full``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.collection_path import REPO
from tests.integration.labkit import Lab, ip_json, lab_unavailable, run_playbook, skip_if

pytestmark = [pytest.mark.lab, pytest.mark.slow]

PREFIX = os.environ.get("ESXILAB_GUESTNET_PREFIX", "gnetw")
SUBNET = os.environ.get("ESXILAB_GUESTNET_SUBNET", "198.19.60.0/24")
TESTNET = os.environ.get("ESXILAB_GUESTNET_TESTNET", "198.19.61")
PLAYBOOK = REPO / "tests" / "integration" / "targets" / "guest_network" / "guest_network.yml"
RESTORE = REPO / "playbooks" / "restore.yml"
PLAY_TIMEOUT = 120
HOSTS = ("h1", "h2")
MAC = {"h1": "02:42:c6:13:3d:01", "h2": "02:42:c6:13:3d:02"}
ADDRESS = {"h1": f"{TESTNET}.1/24", "h2": f"{TESTNET}.2/24"}


def vnics() -> dict[str, list[dict[str, Any]]]:
    """``esxi_guests_vnics`` as the role esxi_guests sets it: guest -> its vNICs on the test port group."""
    return {
        host: [{"mac_address": MAC[host], "type": "vmxnet3", "portgroup": "iperf-isolated",
                "label": "Network adapter 2", "connected": True}]
        for host in HOSTS
    }  # fmt: skip


def eth1(host: str) -> dict[str, Any]:
    """``ip -j addr show dev eth1`` in the host's namespace, read by the test itself."""
    (link,) = ip_json("-n", f"{PREFIX}-{host}", "addr", "show", "dev", "eth1")
    return {
        "mtu": link["mtu"],
        "up": "UP" in link["flags"],
        "addresses": [f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info", []) if a["family"] == "inet"],
    }


@dataclass(frozen=True)
class Setup:
    lab: Lab
    journals: Path

    def journal(self, host: str) -> dict[str, str]:
        directory = self.journals / host
        if not directory.is_dir():
            return {}
        return {p.name: p.read_text().strip() for p in sorted(directory.glob("link.*"))}

    def play(self, tmp: Path, *extra: str, playbook: Path = PLAYBOOK, **variables: Any) -> tuple[int, str]:
        values = {
            "guest_addresses": ADDRESS,
            "esxi_guests_vnics": vnics(),
            "esxilab_reports_dir": str(tmp / "reports"),
            **variables,
        }
        vars_file = tmp / f"vars-{len(list(tmp.glob('vars-*')))}.json"
        vars_file.write_text(json.dumps(values))
        proc = run_playbook(
            "-i", self.lab.inventory, playbook, "-e", f"@{vars_file}",
            "-e", f"esxilab_host_journal_dir={self.journals}/{{{{ inventory_hostname }}}}", *extra,
            timeout=PLAY_TIMEOUT,
        )  # fmt: skip
        return proc.returncode, proc.stdout + proc.stderr


def recap(output: str) -> dict[str, tuple[int, int]]:
    """(changed, failed) of each host in the PLAY RECAP."""
    found = re.findall(r"^(\S+)\s*:\s*ok=\d+\s+changed=(\d+)\s+unreachable=\d+\s+failed=(\d+)", output, re.M)
    return {host: (int(changed), int(failed)) for host, changed, failed in found}


def _sh(*argv: str) -> None:
    subprocess.run(argv, check=True, timeout=10, capture_output=True)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    skip_if(lab_unavailable(("ip", "ssh", "ssh-keygen", "ping")))
    base = tmp_path_factory.mktemp(PREFIX)
    lab = Lab(PREFIX, base / "state", timeout=120)
    journals = base / "journals"
    journals.mkdir(mode=0o700)
    with lab.session("--hosts", "2", "--subnet", SUBNET):
        try:  # the test vNICs: one veth, an end in each host, named eth1, unaddressed and down
            _sh("ip", "link", "add", f"{PREFIX}-g1", "address", MAC["h1"], "type", "veth",
                "peer", "name", f"{PREFIX}-g2", "address", MAC["h2"])  # fmt: skip
            for index, host in enumerate(HOSTS, 1):
                _sh("ip", "link", "set", f"{PREFIX}-g{index}", "netns", f"{PREFIX}-{host}")
                _sh("ip", "-n", f"{PREFIX}-{host}", "link", "set", f"{PREFIX}-g{index}", "name", "eth1")
            yield Setup(lab, journals)
        finally:  # a veth left in the root namespace by a failure above (the namespaces take the rest with them)
            for index in (1, 2):
                subprocess.run(
                    ["ip", "link", "del", f"{PREFIX}-g{index}"], capture_output=True, timeout=10, check=False
                )


@pytest.mark.full  # 4 plays, about 25 s: make test-full; the playbook test below is the one make test runs
def test_check_apply_rerun_and_a_killed_run_put_back_by_restore(setup: Setup, tmp_path: Path) -> None:
    before = {host: eth1(host) for host in HOSTS}
    assert before == {host: {"mtu": 1500, "up": False, "addresses": []} for host in HOSTS}

    # check mode with diff: predicted, nothing changed, no journal; apt (check mode) would install what is missing
    rc, out = setup.play(tmp_path, "--check", "--diff", guest_network_mtu=9000,
                         guest_network_packages=["iperf3", "iperf", "ifupdown"])  # fmt: skip
    assert rc == 0, out[-4000:]
    assert recap(out) == {"h1": (2, 0), "h2": (2, 0)}, out[-4000:]
    assert '"addresses": [\n-    ]' not in out and f'+    "{ADDRESS["h1"]}"' in out  # the diff of the interface
    assert {host: eth1(host) for host in HOSTS} == before
    assert not list(setup.journals.iterdir())

    # apply: journaled first, then the address, MTU 9000 and up; the link carries 9000-byte packets
    rc, out = setup.play(tmp_path, guest_network_mtu=9000)
    assert rc == 0, out[-4000:]
    assert recap(out) == {"h1": (1, 0), "h2": (1, 0)}, out[-4000:]  # the packages are there: no change
    for host in HOSTS:
        assert eth1(host) == {"mtu": 9000, "up": True, "addresses": [ADDRESS[host]]}
        assert setup.journal(host) == {
            "link.eth1.addr": ADDRESS[host],
            "link.eth1.down": "true",
            "link.eth1.mtu": "1500",
        }
    ping = subprocess.run(
        ["ip", "netns", "exec", f"{PREFIX}-h1", "ping", "-c", "1", "-W", "2", "-M", "do", "-s", "8972", f"{TESTNET}.2"],
        capture_output=True, text=True, timeout=10, check=False,
    )  # fmt: skip
    assert ping.returncode == 0, ping.stdout + ping.stderr

    # the rerun changes nothing (and journals nothing new)
    rc, out = setup.play(tmp_path, guest_network_mtu=9000)
    assert rc == 0 and recap(out) == {"h1": (0, 0), "h2": (0, 0)}, out[-4000:]

    # the run was "killed" before its restore: playbooks/restore.yml puts the guests back from their journal
    rc, out = setup.play(tmp_path, playbook=RESTORE, esxilab_restore_hosts="h1:h2")
    assert rc == 0, out[-4000:]
    assert {host: eth1(host) for host in HOSTS} == before
    assert setup.journal("h1") == {} and setup.journal("h2") == {}
    assert "put back" in out


def test_the_management_interface_is_refused_naming_the_option(setup: Setup, tmp_path: Path) -> None:
    (eth0,) = ip_json("-n", f"{PREFIX}-h1", "link", "show", "dev", "eth0")
    before = ip_json("-n", f"{PREFIX}-h1", "addr", "show")
    rc, out = setup.play(tmp_path, "--limit", "h1", guest_network_mac=eth0["address"], guest_network_mtu=1400)
    assert rc != 0, out[-5000:]
    assert "interface eth0" in out and "guest_network_allow_management: true" in out, out[-3000:]
    assert "the address the controller's SSH session reached" in out
    assert ip_json("-n", f"{PREFIX}-h1", "addr", "show") == before


def _overlay(tmp: Path) -> Path:
    """vswitch-forwarding.yml on the two lab hosts as its guests: h1 serves h2, both SSH-reachable Linux guests."""
    hosts = {
        host: {"esxilab_guest_address": ADDRESS[host], "esxilab_guest_mtu": 9000}
        for host in HOSTS
    }  # fmt: skip
    overlay = {
        "all": {
            "vars": {
                "paired_test_address_var": "lab_address",
                "paired_test_state_dir": "{{ ansible_ssh_private_key_file | dirname }}/hosts/{{ inventory_hostname }}",
                "esxilab_skip_esxi_network": "the local lab has no vSphere API",
                "esxilab_vswitch_networks": [],
                "esxilab_vswitch_duration": 1,
                "esxilab_vswitch_repeat": 1,
                "esxilab_vswitch_combine_swapped": False,
            },
            "children": {
                "esxi": {"hosts": {}},
                "vswitch_forwarding": {"children": {"vswitch_guests": {"hosts": hosts}}},
            },
        }
    }
    path = tmp / "overlay.yml"
    path.write_text(json.dumps(overlay))
    return path


def test_vswitch_forwarding_addresses_its_guests_tests_over_them_and_puts_them_back(
    setup: Setup, tmp_path: Path
) -> None:
    """From VMs that exist to a report with no manual step: esxi_guests' vNICs -> guest_network -> runs -> back."""
    playbook = REPO / "playbooks" / "vswitch-forwarding.yml"
    before = {host: eth1(host) for host in HOSTS}
    overlay = ("-i", str(_overlay(tmp_path)))

    rc, out = setup.play(tmp_path, *overlay, "--check", playbook=playbook)
    assert rc == 0, out[-4000:]
    assert "Guests' test interfaces: h1, h2 (esxilab.iperf.guest_network)." in out
    assert {host: eth1(host) for host in HOSTS} == before
    assert setup.journal("h1") == {} and setup.journal("h2") == {}

    rc, out = setup.play(tmp_path, *overlay, playbook=playbook)
    assert rc == 0, out[-4000:]
    (results,) = (tmp_path / "reports").glob("vswitch-forwarding-*/vswitch-forwarding/results.json")
    doc = json.loads(results.read_text())
    # the runs went over the guests' test addresses (the new vNICs), not over the lab's management network
    assert {(r["server"], r["address"]) for r in doc["results"]} == {("h1", f"{TESTNET}.1"), ("h2", f"{TESTNET}.2")}
    assert all(r["result"]["bits_per_second"] > 0 for r in doc["results"]), doc["results"]
    assert {host: eth1(host) for host in HOSTS} == before  # put back in the playbook's always:
    assert setup.journal("h1") == {} and setup.journal("h2") == {}
