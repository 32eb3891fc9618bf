# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation of ``esxilab.iperf.guest_network``; the work is done by plugins/action/guest_network.py."""

from __future__ import annotations

DOCUMENTATION = r"""
module: guest_network
short_description: Give a Linux guest's test vNIC its address and MTU, found by the MAC esxi_guests reported
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Finds the guest's interface whose MAC is the vNIC's (O(vnics) as the role esxilab.iperf.esxi_guests reports it in
    C(esxi_guests_vnics), or O(mac)) with C(ip -j addr show), or C(ip -o link show) / C(ip -o addr show) where C(ip)
    has no JSON.
  - Gives it the test address O(address) and the MTU O(mtu) at runtime (C(ip link set mtu), C(ip addr add), C(ip link
    set up)); other addresses of the interface are left as they are.
  - With O(persist=true), also writes a persistent setting of its own for the interface - a NetworkManager connection
    C(esxilab-iperf-IF) (created and activated with C(nmcli)), a netplan file C(/etc/netplan/60-esxilab-iperf-IF.yaml)
    or an ifupdown file C(/etc/network/interfaces.d/esxilab-iperf-IF) - as the guest uses (O(persist_with)). The
    guest's own configuration is never edited.
  - Before the first change, the restore journal on the guest (O(journal_dir)) records what puts it back - the MTU
    before, the address added, that the interface was down, the persistent setting created - and
    M(esxilab.iperf.esxi_journal) with O(esxilab.iperf.esxi_journal#module:mode=restore) and
    O(esxilab.iperf.esxi_journal#module:scope=[link]) puts it back (the role's C(tasks_from=restore),
    C(playbooks/restore.yml) after a killed run).
  - Refuses the interface of the guest's default route and the one holding the address the controller's SSH session
    reached, unless O(allow_management=true). Refuses an address that another interface of the guest has, or whose
    network overlaps one of another interface.
  - Bad options (a malformed MAC, a vNIC list that is empty or has several vNICs, an address without a prefix or not a
    host address, an MTU out of range) fail before anything runs on the guest, naming the role variable and the fix.
  - After the commands a second read must show the settings, or the task fails.
  - Returns the package manager found on the guest and the iperf3 / iperf packages of its distribution (RV(packages))
    for C(ansible.builtin.package); this module installs nothing itself.
  - Over the guest's shell (C(sh), C(ip)); needs root for a change (C(become)).
options:
  vnics:
    description:
      - The guest's vNICs on the test port group, as esxilab.iperf.esxi_guests reports them
        (C(esxi_guests_vnics[guest]), each with C(mac_address)); exactly one is expected.
      - A vNIC with C(mac_address=null) (the one esxi_guests would add, in check mode) is reported as a change in check
        mode and refused otherwise.
    type: list
    elements: dict
    default: []
  mac:
    description: The MAC of the test vNIC; when set, O(vnics) is not used.
    type: str
  address:
    description:
      - The test address with its prefix length, for example C(198.18.60.12/24) or C(2001:db8:60::12/64).
      - Not the network or broadcast address of its prefix, not loopback, link-local, multicast or unspecified.
    type: str
    required: true
  mtu:
    description: The MTU of the test interface (68-65535, at least 1280 for an IPv6 address); not set - left as it is.
    type: int
  persist:
    description: Also write the persistent setting (see O(persist_with)); V(false) changes the runtime only.
    type: bool
    default: false
  persist_with:
    description:
      - V(auto) - NetworkManager when it runs and manages the interface, else netplan when C(/etc/netplan) has a
        C(*.yaml), else ifupdown when C(/etc/network/interfaces) exists (it must source C(/etc/network/interfaces.d)).
      - Or name one of V(networkmanager), V(netplan), V(ifupdown).
    type: str
    choices: [auto, networkmanager, netplan, ifupdown]
    default: auto
  allow_management:
    description: Allow the interface of the default route or of the controller's SSH address to be changed.
    type: bool
    default: false
  install:
    description: >-
      Return the iperf3 / iperf packages of the guest's package manager in RV(packages) (for the role's install
      task).
    type: bool
    default: true
  packages:
    description: The packages to return instead of the distribution's iperf3 and iperf.
    type: list
    elements: str
  journal_dir:
    description:
      - Directory on the guest that holds the restore journal (created C(0700) with a marker file; an existing one that
        the collection did not create, or that others can write, is refused). The same directory as
        C(esxilab_host_journal_dir) of C(playbooks/restore.yml).
    type: str
    default: /var/lib/esxilab-iperf
  journal_copy_dir:
    description: Directory on the controller that receives a copy of the journal after every change (C(<host>.json)).
    type: path
  takeover:
    description: Record over a journal window another live run holds (see M(esxilab.iperf.esxi_journal)).
    type: bool
    default: false
extends_documentation_fragment:
  - esxilab.iperf.attributes
  - esxilab.iperf.attributes.action
  - esxilab.iperf.attributes.platform_posix_raw
attributes:
  check_mode:
    support: full
    details:
      - Reads the guest and reports the changes it would make; changes nothing, journals nothing.
  diff_mode:
    support: full
    details:
      - The interface before and after (MTU, state, addresses), and the persistent file or connection before and after.
notes:
  - What is tested where (a namespace host of the lab standing for the guest, real C(ip)), the Windows recipe and what
    a real guest may do differently are in C(docs/guests.md) in the collection.
seealso:
  - module: esxilab.iperf.esxi_journal
    description: Puts the journaled change back.
"""

EXAMPLES = r"""
---
- name: Address the test vNIC esxi_guests reported for this guest
  esxilab.iperf.guest_network:
    vnics: "{{ esxi_guests_vnics[inventory_hostname] }}"
    address: 198.18.60.12/24
    mtu: 9000
  become: true
  register: guest_network_result

- name: Put it back
  esxilab.iperf.esxi_journal:
    mode: restore
    scope: [link]
    journal_dir: /var/lib/esxilab-iperf
  become: true
"""

RETURN = r"""
interface:
  description: The guest's interface with the vNIC's MAC (null in check mode for a vNIC not added yet).
  returned: success
  type: str
  sample: ens224
mac:
  description: The MAC looked for.
  returned: success
  type: str
  sample: 00:50:56:aa:bb:cc
address:
  description: The test address.
  returned: success
  type: str
  sample: 198.18.60.12/24
mtu:
  description: The MTU asked for, or the interface's when none was.
  returned: success
  type: int
changes:
  description: What changed (or would, in check mode).
  returned: always
  type: list
  elements: str
  sample: ["mtu 1500 -> 9000", "address 198.18.60.12/24 added", "down -> up"]
commands:
  description: The commands run (or that would run).
  returned: always
  type: list
  elements: str
before:
  description: The interface before - C(interface), C(mac), C(mtu), C(up), C(addresses).
  returned: success
  type: dict
after:
  description: The interface after (predicted in check mode).
  returned: success
  type: dict
persist:
  description: The persistent setting - C(kind) and C(target) (file or connection name); null without O(persist).
  returned: success
  type: dict
  sample: {"kind": "netplan", "target": "/etc/netplan/60-esxilab-iperf-ens224.yaml"}
package_manager:
  description: The package manager found on the guest (C(apt), C(dnf), C(yum), C(zypper)), or null.
  returned: success
  type: str
packages:
  description: The packages to install (O(packages), or the distribution's iperf3 and iperf); empty without O(install).
  returned: success
  type: list
  elements: str
  sample: ["iperf3", "iperf"]
journal:
  description: The restore journal after recording (see M(esxilab.iperf.esxi_journal)); only when something changed.
  returned: changed
  type: dict
"""
