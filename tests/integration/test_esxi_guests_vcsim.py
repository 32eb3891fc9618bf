# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The esxi_guests role through ansible-playbook against govmomi's ESXi simulator (vcsim), over SOAP.

The simulator (tests/vcsim, built and started by the fixtures of test_vcsim_vmknic.py) is given
guests with ``-vm``: ``gst-e1000`` (an e1000 vNIC on "VM Network"), ``gst-vmx`` (a vmxnet3 vNIC on the
test port group ``iperf-guests``, which the flag adds to vSwitch0) and ``gst-none`` (no vNIC). The
role reads them with community.vmware (vmware_vm_info, vmware_portgroup_info, vmware_guest_network)
and adds/removes vNICs with vmware_guest_network; every step's effect is read back here with pyVmomi,
independently of the role: check mode predicts with a diff and changes nothing; apply; the rerun is
unchanged; a type mismatch is refused without the opt-in (nothing changed) and replaced with it; the
management guard; a missing VM and a missing port group are named, and nothing changes for the
other guests either.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyVmomi import vim

from tests.integration.labkit import (
    VCSIM_PASSWORD,
    VCSIM_USERNAME,
    ansible_env,
    run_playbook,
    simulator,
    vcsim_service,
    vcsim_vms,
)

pytestmark = pytest.mark.slow

PG = "iperf-guests"
VMS = ["gst-e1000=e1000", f"gst-vmx=vmxnet3@{PG}", "gst-none=none"]

PLAYBOOK = """
- name: esxi_guests against govmomi's ESXi simulator
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Wire the guests
      block:
        - name: The role
          ansible.builtin.include_role:
            name: esxilab.iperf.esxi_guests
      rescue:
        - name: Keep the failure
          ansible.builtin.set_fact:
            failure: "{{ ansible_failed_result.msg }}"
      always:
        - name: Write what the role published
          ansible.builtin.copy:
            dest: "{{ out }}"
            content: >-
              {{ {'plan': esxi_guests_plan | default(none), 'vnics': esxi_guests_vnics | default(none),
                  'failure': failure | default(none)} | to_json }}
            mode: "0600"
          check_mode: false
          changed_when: false
"""


def vm_nics(port: int) -> dict[str, list[tuple[str, str, str]]]:
    """Every VM's vNICs as the simulator holds them: (class, MAC, network), read with pyVmomi."""
    with vcsim_service(port) as si:
        found: dict[str, list[tuple[str, str, str]]] = {}
        for vm in vcsim_vms(si):
            nics: list[tuple[str, str, str]] = []
            for device in vm.config.hardware.device:
                if isinstance(device, vim.vm.device.VirtualEthernetCard):
                    backing: Any = device.backing  # a standard port group: NetworkBackingInfo
                    nics.append(
                        (type(device).__name__.rsplit(".", 1)[-1], str(device.macAddress), str(backing.deviceName))
                    )
            found[vm.name] = sorted(nics)
        return found


class Guests:
    """Runs the role against one simulator; each run's published facts, recap and diff output."""

    def __init__(self, port: int, work: Path) -> None:
        self.port, self.work, self.count = port, work, 0
        (work / "play.yml").write_text(PLAYBOOK)

    def run(self, guests: list[dict[str, Any]], *extra: str, **variables: Any) -> dict[str, Any]:
        self.count += 1
        out = self.work / f"out-{self.count}.json"
        values = {
            "out": str(out),
            "esxi_guests_hostname": "127.0.0.1",
            "esxi_guests_port": self.port,
            "esxi_guests_username": VCSIM_USERNAME,
            "esxi_guests_password": VCSIM_PASSWORD,
            "esxi_guests_validate_certs": False,
            "esxi_guests_portgroup": PG,
            "esxi_guests_guests": guests,
            "ansible_python_interpreter": sys.executable,
            **variables,
        }
        (self.work / "vars.json").write_text(json.dumps(values))
        env = ansible_env(ANSIBLE_LOCAL_TEMP=str(self.work / "tmp"), ANSIBLE_HOME=str(self.work / "home"))
        env.pop("ANSIBLE_CONFIG", None)
        before = vm_nics(self.port)
        run = run_playbook(
            "-i", "localhost,", "-c", "local", "-e", f"@{self.work / 'vars.json'}", "play.yml", *extra,
            timeout=300, env=env, cwd=self.work,
        )  # fmt: skip
        assert run.returncode == 0, f"ansible-playbook failed ({run.returncode}):\n{run.stdout}\n{run.stderr}"
        result: dict[str, Any] = json.loads(out.read_text())
        recap = re.search(r"localhost\s*:\s*ok=\d+\s+changed=(\d+)", run.stdout)
        assert recap, run.stdout
        result["changed_tasks"] = int(recap.group(1))
        result["stdout"] = run.stdout
        result["before"], result["after"] = before, vm_nics(self.port)
        return result


@pytest.fixture(scope="module")
def guests(vcsim_binary: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Guests]:
    extra = [arg for vm in VMS for arg in ("-vm", vm)]
    with simulator(vcsim_binary, *extra) as variables:
        yield Guests(variables["vcsim_port"], tmp_path_factory.mktemp("guests"))


WANTED = [
    {"vm": "gst-e1000", "type": "vmxnet3", "name": "guest-a"},
    {"vm": "gst-vmx", "type": "vmxnet3"},
    {"vm": "gst-none", "type": "e1000e"},
]


def actions(result: dict[str, Any]) -> list[str]:
    return [g["action"] for g in result["plan"]["guests"]]


def test_the_simulator_offers_the_guests(guests: Guests) -> None:
    nics = vm_nics(guests.port)
    assert nics["gst-e1000"] == [("VirtualE1000", nics["gst-e1000"][0][1], "VM Network")]
    assert nics["gst-vmx"] == [("VirtualVmxnet3", nics["gst-vmx"][0][1], PG)]
    assert nics["gst-none"] == []


# make test-full's (about 100 s on the 2-core machine): make test wires guests through esxi_guests on the simulator in
# tests/integration/test_guests_playbooks_lab.py (vswitch-forwarding.yml, vnic-compare.yml) and keeps the power test
@pytest.mark.full
def test_check_apply_unchanged_mismatch_replace(guests: Guests) -> None:
    # check mode: the plan and the modules' diff predict the adds; the simulator is untouched
    checked = guests.run(WANTED, "--check", "--diff")
    assert checked["failure"] is None, checked["stdout"]
    assert actions(checked) == ["add", "unchanged", "add"]
    assert checked["plan"]["changes"] == 2 and checked["changed_tasks"] == 1  # one add task, two items
    assert checked["after"] == checked["before"]
    assert checked["stdout"].count('"network_name": "iperf-guests"') >= 2  # the diff of each predicted vNIC
    assert checked["vnics"]["guest-a"] == [
        {"mac_address": None, "type": "vmxnet3", "portgroup": PG, "label": None, "connected": True}
    ]

    # apply: a vmxnet3 vNIC for gst-e1000 beside its e1000 on VM Network (untouched), an e1000e for gst-none
    applied = guests.run(WANTED)
    assert applied["failure"] is None, applied["stdout"]
    assert actions(applied) == ["add", "unchanged", "add"]
    after = applied["after"]
    assert after["gst-e1000"][0] == applied["before"]["gst-e1000"][0]  # the e1000 on VM Network, as it was
    assert [(kind, net) for kind, _mac, net in after["gst-e1000"]] == [
        ("VirtualE1000", "VM Network"),
        ("VirtualVmxnet3", PG),
    ]
    assert after["gst-vmx"] == applied["before"]["gst-vmx"]
    assert [(kind, net) for kind, _mac, net in after["gst-none"]] == [("VirtualE1000e", PG)]
    # published: read back from the host, with the new MACs
    assert [(n["type"], n["portgroup"]) for n in applied["vnics"]["guest-a"]] == [("vmxnet3", PG)]
    assert applied["vnics"]["guest-a"][0]["mac_address"] == next(
        m for k, m, _net in after["gst-e1000"] if k == "VirtualVmxnet3"
    )

    # the rerun and its check mode: nothing to do
    for extra in ((), ("--check",)):
        again = guests.run(WANTED, *extra)
        assert again["failure"] is None and actions(again) == ["unchanged"] * 3
        assert again["changed_tasks"] == 0 and again["after"] == after

    # a type mismatch without the opt-in: refused for the whole wiring, naming the option; nothing changed
    mismatch = [{"vm": "gst-vmx", "type": "e1000"}, {"vm": "gst-e1000", "type": "vmxnet3"}]
    refused = guests.run(mismatch)
    assert refused["failure"] is not None and refused["failure"].startswith(
        "Nothing was changed. VM gst-vmx has vmxnet3"
    )
    assert "esxi_guests_replace_mismatched: true" in refused["failure"] and "new MAC address" in refused["failure"]
    assert actions(refused) == ["refuse", "unchanged"]
    assert refused["after"] == refused["before"] and refused["changed_tasks"] == 0

    # with the opt-in: predicted in check mode, then an e1000 added and the vmxnet3 removed
    predicted = guests.run(mismatch, "--check", "--diff", esxi_guests_replace_mismatched=True)
    assert predicted["failure"] is None and actions(predicted) == ["replace", "unchanged"]
    old_mac = refused["before"]["gst-vmx"][0][1]
    assert predicted["plan"]["guests"][0]["remove"] == [old_mac]
    assert predicted["after"] == predicted["before"]
    replaced = guests.run(mismatch, esxi_guests_replace_mismatched=True)
    assert replaced["failure"] is None and replaced["changed_tasks"] == 2  # the add, then the remove
    assert [(kind, net) for kind, _mac, net in replaced["after"]["gst-vmx"]] == [("VirtualE1000", PG)]
    assert replaced["vnics"]["gst-vmx"][0]["type"] == "e1000"
    assert guests.run(mismatch)["changed_tasks"] == 0  # and unchanged without the opt-in now


def test_the_management_portgroup_is_refused_before_anything_is_read(guests: Guests) -> None:
    before = vm_nics(guests.port)
    result = guests.run([{"vm": "gst-none", "type": "vmxnet3", "portgroup": "Management Network"}])
    assert result["failure"] is not None
    assert "is the management port group (esxi_guests_management_portgroup)" in result["failure"]
    assert "esxi_guests_allow_management: true" in result["failure"]
    assert result["plan"] is None  # refused in the preflight: nothing was read
    assert vm_nics(guests.port) == before


def test_a_missing_vm_and_port_group_are_named_and_nothing_changes(guests: Guests) -> None:
    wanted = [
        {"vm": "gst-none", "type": "vmxnet3", "portgroup": "VM Network"},  # would be added: not while others fail
        {"vm": "gst-nosuch", "type": "vmxnet3"},
        {"vm": "gst-e1000", "type": "e1000", "portgroup": "iperf-missing"},
    ]
    result = guests.run(wanted)
    assert actions(result) == ["add", "refuse", "refuse"]
    assert result["failure"] is not None and result["failure"].startswith("Nothing was changed.")
    assert "VM gst-nosuch was not found" in result["failure"]
    assert "port group iperf-missing of VM gst-e1000 does not exist on the host" in result["failure"]
    assert result["after"] == result["before"] and result["changed_tasks"] == 0


def test_bad_input_is_refused_naming_the_option(guests: Guests) -> None:
    result = guests.run([{"vm": "gst-none", "type": "vmxnet3"}, {"vm": "gst-none", "type": "e1000"}])
    assert result["failure"] is not None
    assert "esxi_guests_guests[1].vm: VM gst-none is also esxi_guests_guests[0]" in result["failure"]
    assert result["plan"] is None


def power_states(port: int) -> dict[str, str]:
    """Every VM's power state, read with pyVmomi."""
    with vcsim_service(port) as si:
        return {vm.name: str(vm.runtime.powerState) for vm in vcsim_vms(si)}


def test_the_power_state_is_set_only_when_asked(guests: Guests) -> None:
    wanted = [{"vm": "gst-none", "type": "e1000e"}]
    assert power_states(guests.port)["gst-none"] == "poweredOff"  # the simulator's -vm guests start off
    guests.run(wanted)  # whatever the wiring needs; no power state asked: left as it is
    assert power_states(guests.port)["gst-none"] == "poweredOff"
    checked = guests.run(wanted, "--check", esxi_guests_power_state="powered-on")
    assert checked["failure"] is None and checked["changed_tasks"] == 1
    assert power_states(guests.port)["gst-none"] == "poweredOff"  # check mode: predicted only
    on = guests.run(wanted, esxi_guests_power_state="powered-on")
    assert on["failure"] is None and on["changed_tasks"] == 1
    assert power_states(guests.port)["gst-none"] == "poweredOn"
    again = guests.run(wanted, esxi_guests_power_state="powered-on")
    assert again["failure"] is None and again["changed_tasks"] == 0


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("gst-x=pcnet32", 'TYPE must be e1000, e1000e, vmxnet3 or none, not "pcnet32"'),
        ("bad name", "give NAME[=TYPE[@PORTGROUP]]"),
    ],
)
def test_the_simulator_refuses_a_bad_vm_flag(vcsim_binary: Path, flag: str, message: str) -> None:
    run = subprocess.run(
        [str(vcsim_binary), "-lifetime", "5s", "-vm", flag], capture_output=True, text=True, timeout=30, check=False
    )
    assert run.returncode == 2 and message in run.stderr, run
