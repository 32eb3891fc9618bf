# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Ansible module esxilab.iperf.esxi_vmknic: a standard vSwitch, port group and VMkernel adapter."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: esxi_vmknic
short_description: Manage a standard vSwitch, a port group and a VMkernel adapter on an ESXi host as one unit
version_added: 0.1.0
description:
  - Makes sure a standard vSwitch (uplinks, MTU), a port group on it (VLAN) and a VMkernel adapter on that port
    group (IPv4, IPv6, MTU, TCP/IP stack, service tags) exist and look as requested, or removes them.
  - Built for benchmark labs, where a test network is added next to the management network and must not disturb it.
  - B(Only what you set is managed.) An option left out is left as it is on the host. Leaving out
    O(vswitch.uplinks) keeps the uplinks, leaving out O(portgroup.vlan_id) keeps the VLAN, leaving out an MTU keeps
    the MTU. Nothing is reset to a default.
  - B(MTU changes are ordered) so no frame outgrows its path. Raising, the vSwitch MTU goes up before the VMkernel
    adapter's. Lowering, the adapter's MTU goes down before the vSwitch's.
  - B(A change to an existing VMkernel adapter is applied or refused, never ignored.) New IP settings, a new MTU and a
    move to another port group of a standard switch are applied in place with C(UpdateVirtualNic).
  - B(A TCP/IP stack cannot be changed in place.) The module refuses the change unless O(recreate=true), which removes
    the adapter and adds it again on the new stack.
  - B(The management network is protected.) Unless O(allow_management_changes=true), the module refuses to change
    C(vmk0), any adapter tagged C(management), the port groups those adapters are on, a port group named
    C(Management Network), the vSwitches carrying those port groups and their uplinks, and the uplinks of a
    distributed switch that carries one of those adapters. The error message says so and names the override. Adding
    a new port group and VMkernel adapter to the management vSwitch does not change what is there, and is allowed.
  - B(When the management network cannot be determined, the module refuses rather than guesses.) The service tags
    come from C(HostVirtualNicManager). When they cannot be read (no privilege, or an endpoint that does not implement
    it), every adapter on the default TCP/IP stack might carry management, so it is guarded like C(vmk0), with its
    port group, vSwitch, uplinks and distributed switch. The error names the call that failed and the fix. Adapters
    on other stacks (vMotion, provisioning, custom) cannot carry management and stay changeable. O(vmknic.services)
    cannot be set then.
  - B(Uplinks of distributed and NSX switches are never taken.) The module reads the host's side of every vSphere
    Distributed Switch (C(HostProxySwitch), its C(pnicSpec) and C(pnic) list) and NSX switch (C(HostOpaqueSwitch)). A
    physical NIC bridged to one of them is refused for a standard vSwitch, with or without
    O(allow_management_changes), because this module does not manage those switches. Release the NIC in vCenter or
    NSX first. The refusal says whether that switch carries (or might carry) the management network.
  - B(Security and teaming policy) (O(vswitch.security), O(vswitch.teaming)) are set on the vSwitch, and the same
    options under O(portgroup) are overrides on the port group. Only the fields given are set; a field left out
    stays as it is (on a port group, inherited from the vSwitch). The diff shows the policy of each object whose
    policy is named. A teaming order naming a NIC the vSwitch does not bridge, a NIC both active and standby, or an
    order without an active NIC is refused before anything changes.
  - A physical NIC that is an uplink of another standard vSwitch is refused too; remove it there first (in a task on
    that vSwitch, with O(allow_management_changes=true) when that vSwitch carries management).
  - With O(state=absent), removes what is named, in this order. First the VMkernel adapter (O(vmknic.device), or the
    adapter on O(portgroup.name)). Then the port group, only if no other adapter and no VM uses it. Then the vSwitch,
    only if O(vswitch) is given and the vSwitch carries no other port group.
  - Returns the final state of the named objects and the host's physical NICs (driver, link state, speed), so a
    benchmark can report its throughput as a share of line rate.
author:
  - esxilab.iperf contributors (@esxilab)
attributes:
  check_mode:
    support: full
    details:
      - Reads the host, computes the operations and returns them in RV(operations) without calling any of them.
  diff_mode:
    support: full
    details:
      - Returns the named vSwitch, port group and VMkernel adapter before and after (predicted in check mode).
  platform:
    support: full
    platforms: esxi
    details:
      - Runs where the task runs, normally the controller, and talks to the vSphere API of an ESXi host, directly
        or through a vCenter. Nothing runs on the ESXi host itself.
extends_documentation_fragment:
  - esxilab.iperf.attributes
  - esxilab.iperf.vmware
options:
  state:
    description:
      - V(present) creates or updates what is named; V(absent) removes it (see the description for the order and
        the conditions).
    type: str
    choices: [present, absent]
    default: present
  vswitch:
    description:
      - The standard vSwitch.
      - With O(state=present) it is created when missing. Without O(vswitch), an existing O(portgroup.name) is used
        on whatever vSwitch carries it.
    type: dict
    suboptions:
      name:
        description: Name of the vSwitch (at most 32 characters).
        type: str
        required: true
      uplinks:
        description:
          - The physical NICs (for example V(vmnic1)) bridged to the vSwitch, all of them. Order does not matter.
          - NICs that are new to the vSwitch become active uplinks; NICs left out of the list are detached.
          - A NIC that is an uplink of another vSwitch is refused. Remove it there first.
          - A NIC that is an uplink of a distributed or NSX switch is always refused (see the description).
          - Leave out to keep the uplinks the vSwitch has. V([]) detaches every uplink.
        type: list
        elements: str
      mtu:
        description:
          - MTU of the vSwitch in bytes, at most 9000. Leave out to keep the current MTU (a new vSwitch gets the
            host default, 1500).
        type: int
      security:
        description:
          - Security policy of the vSwitch (C(HostNetworkSecurityPolicy)). Only the fields given are set.
          - The policy of a vSwitch carrying the management network is refused unless
            O(allow_management_changes=true).
        type: dict
        suboptions:
          allow_promiscuous:
            description: Accept promiscuous mode. Left out, the vSwitch keeps its current setting.
            type: bool
          forged_transmits:
            description: Accept forged transmits. Left out, the vSwitch keeps its current setting.
            type: bool
          mac_changes:
            description: Accept MAC address changes. Left out, the vSwitch keeps its current setting.
            type: bool
      teaming:
        description:
          - NIC teaming and failover of the vSwitch (C(HostNicTeamingPolicy) and its C(nicOrder)). Only the
            fields given are set.
          - Every NIC in the active and standby lists must be an uplink of the vSwitch (after O(vswitch.uplinks), when
            given); a NIC in both lists is refused.
        type: dict
        suboptions:
          active_uplinks:
            description:
              - The active uplinks, in failover order.
              - Left out while O(vswitch.teaming.standby_uplinks) is given, the current active uplinks (the
                vSwitch's, for a port group without an override) minus the new standby ones.
              - An uplink in neither list is unused.
            type: list
            elements: str
          standby_uplinks:
            description:
              - The standby uplinks, in failover order.
              - Left out while O(vswitch.teaming.active_uplinks) is given, the current standby uplinks minus the
                new active ones.
            type: list
            elements: str
          load_balancing:
            description:
              - How traffic is spread over the active uplinks (C(HostNicTeamingPolicy.policy)). Left out, the vSwitch
                keeps its current setting.
            type: str
            choices: [loadbalance_srcid, loadbalance_ip, loadbalance_srcmac, failover_explicit]
  portgroup:
    description:
      - The port group the VMkernel adapter is on. Created on O(vswitch.name) when missing.
      - A port group that exists on another vSwitch than O(vswitch.name) is refused. It is not moved.
    type: dict
    suboptions:
      name:
        description: Name of the port group.
        type: str
        required: true
      vlan_id:
        description:
          - VLAN ID, V(0) (untagged) to V(4095). Leave out to keep the current VLAN (a new port group gets V(0)).
        type: int
      security:
        description:
          - Security policy overrides of the port group (C(HostNetworkSecurityPolicy)). Only the fields given are
            set; the others keep inheriting the vSwitch's setting (or keep the override they have).
          - The policy of a port group carrying the management network is refused unless
            O(allow_management_changes=true).
        type: dict
        suboptions:
          allow_promiscuous:
            description:
              - Accept promiscuous mode. An override of the vSwitch's setting on this port group; left out, the port
                group keeps inheriting it (or keeps the override it has).
            type: bool
          forged_transmits:
            description:
              - Accept forged transmits. An override of the vSwitch's setting on this port group; left out, the port
                group keeps inheriting it (or keeps the override it has).
            type: bool
          mac_changes:
            description:
              - Accept MAC address changes. An override of the vSwitch's setting on this port group; left out, the port
                group keeps inheriting it (or keeps the override it has).
            type: bool
      teaming:
        description:
          - NIC teaming and failover overrides of the port group (C(HostNicTeamingPolicy) and its C(nicOrder)).
            Only the fields given are set. The failover order is overridden as a whole (active and standby lists).
          - Every NIC in the active and standby lists must be an uplink of the vSwitch (after O(vswitch.uplinks), when
            given); a NIC in both lists is refused.
        type: dict
        suboptions:
          active_uplinks:
            description:
              - The active uplinks, in failover order.
              - Left out while O(portgroup.teaming.standby_uplinks) is given, the current active uplinks (the
                vSwitch's, for a port group without an override) minus the new standby ones.
              - An uplink in neither list is unused.
            type: list
            elements: str
          standby_uplinks:
            description:
              - The standby uplinks, in failover order.
              - Left out while O(portgroup.teaming.active_uplinks) is given, the current standby uplinks minus the
                new active ones.
            type: list
            elements: str
          load_balancing:
            description:
              - How traffic is spread over the active uplinks (C(HostNicTeamingPolicy.policy)). An override of the
                vSwitch's setting on this port group; left out, the port group keeps inheriting it (or keeps the
                override it has).
            type: str
            choices: [loadbalance_srcid, loadbalance_ip, loadbalance_srcmac, failover_explicit]
  vmknic:
    description:
      - The VMkernel adapter.
      - Found by O(vmknic.device), or else as the adapter on O(portgroup.name). A standard port group holds one.
      - When none is found, one is created on O(portgroup.name) and its device name is returned in RV(vmknic.device).
    type: dict
    suboptions:
      device:
        description:
          - Device name of an existing adapter, for example V(vmk1).
          - The vSphere API chooses the name when it creates an adapter, so a device that does not exist is refused
            with O(state=present). Leave it out to create one.
          - Given together with a O(portgroup.name) the adapter is not on, the adapter is moved to that port group.
        type: str
      ip_address:
        description:
          - Static IPv4 address. Needs O(vmknic.netmask). Leave out (and O(vmknic.dhcp) too) to keep the current
            IPv4 settings.
        type: str
      netmask:
        description:
          - IPv4 netmask, dotted (V(255.255.255.0)) or as a prefix length (V(24) or V(/24), 8 to 32). A prefix
            length is turned into the dotted form, which is what the API takes and what is returned.
          - Anything else (a host mask such as V(0.0.0.255), V(33), V(255.255.255.0/24), a network wider than /8
            such as V(0)) is refused before the host is contacted.
        type: str
      dhcp:
        description:
          - V(true) gets the IPv4 address by DHCP. V(false) needs O(vmknic.ip_address).
        type: bool
      ipv6:
        description:
          - IPv6 settings. The host must have IPv6 enabled (it takes a reboot to turn it on).
          - Leave out to keep the current IPv6 settings.
        type: dict
        suboptions:
          addresses:
            description:
              - All static IPv6 addresses, as V(address/prefix) (for example V(2001:db8:10::21/64)).
              - Static addresses not listed are removed. Addresses from SLAAC, DHCPv6 and the link-local address are
                left alone. Leave out to keep the static addresses as they are.
            type: list
            elements: str
          autoconf:
            description: Router advertisement (SLAAC) address configuration.
            type: bool
          dhcp:
            description: DHCPv6 address configuration.
            type: bool
      mtu:
        description:
          - MTU of the adapter in bytes, at most 9000. Leave out to keep the current MTU (a new adapter gets 1500).
          - A warning is returned when it ends up above the MTU of its vSwitch.
        type: int
      tcpip_stack:
        description:
          - TCP/IP stack of the adapter. V(default), V(vmotion), V(provisioning) and V(vxlan) are translated to the
            API keys; the keys themselves (V(defaultTcpipStack), V(vSphereProvisioning)) are taken as well.
          - Any other value must be the key of a custom stack the host has (made with
            C(esxcli network ip netstack add)); it is checked against the host's C(netStackInstance) list, and an
            unknown stack is refused with the list. Names are case-sensitive; V(vMotion) is refused with the right
            spelling.
          - Set only when creating. For an existing adapter on another stack the task fails unless O(recreate=true).
          - Leave out to keep the stack (a new adapter goes on the default stack).
        type: str
      services:
        description:
          - All service tags of the adapter. Tags not listed are removed. V([]) removes every tag. Leave out to keep
            the tags.
          - Tags can be set only on the default TCP/IP stack.
        type: list
        elements: str
        choices:
          - management
          - vmotion
          - vsan
          - vsan_witness
          - provisioning
          - replication
          - replication_nfc
          - backup_nfc
          - fault_tolerance
          - nvme_tcp
          - nvme_rdma
  recreate:
    description:
      - Allow the removal and re-creation of an existing VMkernel adapter when its TCP/IP stack must change.
      - The adapter loses its connections while this happens, and the API may give it another device name (returned
        in RV(vmknic.device)).
      - This does not force a re-creation. Nothing is done when the stack is already right.
    type: bool
    default: false
  allow_management_changes:
    description:
      - Allow changes to the management network (see the description for what that covers), including what only
        might carry it because the host's service tags cannot be read.
      - It does not allow taking an uplink of a distributed or NSX switch, or of another standard vSwitch.
      - Keep another way into the host (console, out-of-band management) before you use this.
    type: bool
    default: false
notes:
  - O(vswitch), O(portgroup), O(vmknic) and O(vmknic.ipv6) are dictionaries. Given as a string (for example
    V(vSwitch1) for O(vswitch)) the task fails naming the option and showing the dictionary form.
  - Only standard vSwitches are managed. A VMkernel adapter on a distributed or NSX switch can be read and changed
    in place (IP, MTU, services), but it cannot be moved to a standard port group or re-created.
  - A new vSwitch gets 128 ports and the host's default policies. The teaming, security and shaping policies of an
    existing vSwitch or port group are kept as they are, except that uplinks new to the vSwitch are made active.
  - The service tag V(vsan) is set through C(HostVirtualNicManager), like the other tags. vSAN clusters managed by
    vCenter may expect it to be set through the vSAN configuration instead.
seealso:
  - name: HostNetworkSystem (vSphere Web Services API)
    description: The API calls this module makes.
    link: https://developer.broadcom.com/xapis/vsphere-web-services-api/latest/vim.host.NetworkSystem.html
"""

EXAMPLES = r"""
---
- name: Test network for iperf3 - vSwitch on vmnic1, jumbo frames, VLAN 30, static vmk
  esxilab.iperf.esxi_vmknic:
    hostname: "{{ esxi_address }}"
    username: root
    password: "{{ esxi_root_password }}"
    validate_certs: false
    vswitch:
      name: vSwitch-iperf
      uplinks: [vmnic1]
      mtu: 9000
    portgroup:
      name: iperf
      vlan_id: 30
    vmknic:
      ip_address: 10.30.0.21
      netmask: 255.255.255.0
      mtu: 9000
  delegate_to: localhost
  register: iperf_net

- name: Report the uplink speed of the test network
  ansible.builtin.debug:
    msg: >-
      {{ iperf_net.vmknic.device }} on {{ iperf_net.vswitch.name }}:
      {{ iperf_net.physical_nics | selectattr('vswitch', 'equalto', 'vSwitch-iperf')
         | map(attribute='speed_mbps') | list }} Mb/s

- name: vSwitch forwarding test - a vSwitch whose guests may sniff and forge, vmnic2 as standby
  esxilab.iperf.esxi_vmknic:
    hostname: "{{ esxi_address }}"
    username: root
    password: "{{ esxi_root_password }}"
    validate_certs: false
    vswitch:
      name: vSwitch-fwd
      uplinks: [vmnic1, vmnic2]
      security: {allow_promiscuous: true, forged_transmits: true, mac_changes: true}
      teaming: {active_uplinks: [vmnic1], standby_uplinks: [vmnic2], load_balancing: failover_explicit}
    portgroup:
      name: fwd-strict
      security: {allow_promiscuous: false}  # an override: forged transmits and MAC changes stay inherited
  delegate_to: localhost

- name: Change only the MTU of the existing adapter (uplinks, VLAN and IP stay)
  esxilab.iperf.esxi_vmknic:
    hostname: "{{ vcenter_address }}"
    username: "{{ vcenter_user }}"
    password: "{{ vcenter_password }}"
    esxi_hostname: esxi01.lab.example
    vswitch:
      name: vSwitch-iperf
      mtu: 1500
    vmknic:
      device: vmk1
      mtu: 1500
  delegate_to: localhost

- name: Move vmk1 onto the vMotion TCP/IP stack (remove + add)
  esxilab.iperf.esxi_vmknic:
    hostname: "{{ esxi_address }}"
    username: root
    password: "{{ esxi_root_password }}"
    portgroup:
      name: iperf
    vmknic:
      device: vmk1
      tcpip_stack: vmotion
    recreate: true
  delegate_to: localhost

- name: Dual-stack adapter tagged for vMotion, by DHCP, on an existing port group
  esxilab.iperf.esxi_vmknic:
    hostname: "{{ esxi_address }}"
    username: root
    password: "{{ esxi_root_password }}"
    portgroup:
      name: vmotion-a
    vmknic:
      dhcp: true
      ipv6:
        addresses: ["2001:db8:40::21/64"]
        autoconf: false
      services: [vmotion]
  delegate_to: localhost

- name: Remove the test network again (adapter, then port group, then vSwitch)
  esxilab.iperf.esxi_vmknic:
    hostname: "{{ esxi_address }}"
    username: root
    password: "{{ esxi_root_password }}"
    state: absent
    vswitch:
      name: vSwitch-iperf
    portgroup:
      name: iperf
    vmknic: {}
  delegate_to: localhost
"""

RETURN = r"""
host:
  description: Name of the ESXi host that was configured, as the API reports it.
  returned: always
  type: str
  sample: esxi01.lab.example
operations:
  description:
    - The operations run in order, or those that would run in check mode. Empty when nothing had to change.
    - Each has C(op) (V(add_vswitch), V(update_vswitch), V(remove_vswitch), V(add_portgroup), V(update_portgroup),
      V(remove_portgroup), V(set_vswitch_policy), V(set_portgroup_policy), V(add_vmknic), V(update_vmknic),
      V(remove_vmknic), V(select_service), V(deselect_service)) and the values it sends (a policy operation sends
      only the fields it sets, in C(policy)). A value of V(null) is left as it is on the host.
  returned: always
  type: list
  elements: dict
  sample:
    - {op: update_vswitch, name: vSwitch-iperf, mtu: 9000, uplinks: null}
    - {op: add_portgroup, name: iperf, vswitch: vSwitch-iperf, vlan_id: 30}
    - op: add_vmknic
      portgroup: iperf
      ipv4: {dhcp: false, address: 10.30.0.21, netmask: 255.255.255.0}
      ipv6: null
      mtu: 9000
      tcpip_stack: null
converged:
  description:
    - Whether the host, read again after the changes, matches the request. V(false) comes with a warning naming
      what the host did not take (an API endpoint may accept a call and ignore part of it).
  returned: when something was changed (not in check mode)
  type: bool
  sample: true
vswitch:
  description:
    - The vSwitch as it is on the host at the end of the task (before it, in check mode). V(null) when it does
      not exist.
  returned: when O(vswitch) is given, or O(portgroup.name) exists
  type: dict
  contains:
    name:
      description: Name.
      type: str
    mtu:
      description: MTU in bytes; V(null) when the host does not report it.
      type: int
    uplinks:
      description: Physical NICs bridged to it.
      type: list
      elements: str
    portgroups:
      description: Names of the port groups on it.
      type: list
      elements: str
    policy:
      description:
        - Its security and teaming policy, returned only when O(vswitch.security) or O(vswitch.teaming) is given.
        - C(security) (C(allow_promiscuous), C(forged_transmits), C(mac_changes)) and C(teaming)
          (C(active_uplinks), C(standby_uplinks), C(load_balancing)).
      type: dict
  sample: {name: vSwitch-iperf, mtu: 9000, uplinks: [vmnic1], portgroups: [iperf]}
portgroup:
  description: The port group at the end of the task (before it, in check mode); V(null) when it does not exist.
  returned: when O(portgroup) is given
  type: dict
  contains:
    name:
      description: Name.
      type: str
    vswitch:
      description: The vSwitch it is on.
      type: str
    vlan_id:
      description: VLAN ID, V(0) for untagged.
      type: int
    policy:
      description:
        - Its policy overrides, returned only when O(portgroup.security) or O(portgroup.teaming) is given.
        - C(security) (C(allow_promiscuous), C(forged_transmits), C(mac_changes)) and C(teaming)
          (C(active_uplinks), C(standby_uplinks), C(load_balancing)). A value of V(null) is
          inherited from the vSwitch.
      type: dict
  sample: {name: iperf, vswitch: vSwitch-iperf, vlan_id: 30}
vmknic:
  description: The VMkernel adapter at the end of the task (before it, in check mode); V(null) when it does not exist.
  returned: when O(vmknic) is given
  type: dict
  contains:
    device:
      description: Device name, for example V(vmk1).
      type: str
    portgroup:
      description: Standard port group it is on; V(null) on a distributed or NSX switch.
      type: str
    distributed:
      description: Whether it is on a distributed or NSX switch.
      type: bool
    mtu:
      description: MTU in bytes.
      type: int
    tcpip_stack:
      description: The TCP/IP stack key, for example V(defaultTcpipStack), V(vmotion) or V(vSphereProvisioning).
      type: str
    ipv4:
      description: C(dhcp) (bool), C(address) and C(netmask) (the current lease when DHCP is used).
      type: dict
    ipv6:
      description:
        - C(addresses) (static ones, V(address/prefix)), C(other_addresses) (link-local, SLAAC, DHCPv6),
          C(autoconf) and C(dhcp). V(null) when the host reports no IPv6 configuration.
      type: dict
    mac:
      description: MAC address.
      type: str
    services:
      description: Service tags (same names as O(vmknic.services)); V(null) when they could not be read.
      type: list
      elements: str
  sample:
    device: vmk1
    portgroup: iperf
    distributed: false
    mtu: 9000
    tcpip_stack: defaultTcpipStack
    ipv4: {dhcp: false, address: 10.30.0.21, netmask: 255.255.255.0}
    ipv6: {addresses: [], other_addresses: ["fe80::250:56ff:fe6a:1/64"], autoconf: false, dhcp: false}
    mac: "00:50:56:6a:00:01"
    services: []
physical_nics:
  description:
    - Every physical NIC of the host, for reporting throughput against line rate.
    - The vSphere API has no MTU for a physical NIC. C(vswitch_mtu) is the MTU of the standard vSwitch the NIC is an
      uplink of.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Device name, for example V(vmnic1).
      type: str
    driver:
      description: Driver name, for example V(ixgben).
      type: str
    mac:
      description: MAC address.
      type: str
    link_up:
      description: Whether the link is up (the API reports a link speed only then).
      type: bool
    speed_mbps:
      description: Negotiated link speed in Mb/s; V(null) when the link is down.
      type: int
    duplex:
      description: V(full) or V(half); V(null) when the link is down.
      type: str
    vswitch:
      description: Standard vSwitch it is an uplink of; V(null) when none.
      type: str
    vswitch_mtu:
      description: MTU of that vSwitch; V(null) when none or not reported.
      type: int
  sample:
    - {name: vmnic1, driver: ixgben, mac: "00:30:93:0c:05:c6", link_up: true, speed_mbps: 10000, duplex: full,
       vswitch: vSwitch-iperf, vswitch_mtu: 9000}
    - {name: vmnic2, driver: ixgben, mac: "00:30:93:0c:05:c7", link_up: false, speed_mbps: null, duplex: null,
       vswitch: null, vswitch_mtu: null}
"""

import dataclasses
from typing import Any

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_apply import (
    ApplyError,
    HostReadError,
    apply_plan,
    read_host_state,
)
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_params import (
    DesiredState,
    desired_from_params,
    shape_error,
)
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_plan import make_plan
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_policy import LOAD_BALANCING, SECURITY
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_state import SERVICES, PlanError
from ansible_collections.esxilab.iperf.plugins.module_utils._vmknic_views import pnic_views, state_views
from ansible_collections.esxilab.iperf.plugins.module_utils._vmware import (
    VSphereError,
    find_host,
    require_pyvmomi,
    vmware_argument_spec,
    vsphere_session,
)


def _policy_options() -> dict[str, Any]:
    """``security`` and ``teaming``: the same sub-options on the vSwitch and on a port group."""
    return {
        "security": {"type": "dict", "options": {name: {"type": "bool"} for name in SECURITY}},
        "teaming": {
            "type": "dict",
            "options": {
                "active_uplinks": {"type": "list", "elements": "str"},
                "standby_uplinks": {"type": "list", "elements": "str"},
                "load_balancing": {"type": "str", "choices": list(LOAD_BALANCING)},
            },
        },
    }


def argument_spec() -> dict[str, Any]:
    """The module's options (connection options included)."""
    return {
        **vmware_argument_spec(),
        "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
        "vswitch": {
            "type": "dict",
            "options": {
                "name": {"type": "str", "required": True},
                "uplinks": {"type": "list", "elements": "str"},
                "mtu": {"type": "int"},
                **_policy_options(),
            },
        },
        "portgroup": {
            "type": "dict",
            "options": {"name": {"type": "str", "required": True}, "vlan_id": {"type": "int"}, **_policy_options()},
        },
        "vmknic": {
            "type": "dict",
            "required_together": [["ip_address", "netmask"]],
            "options": {
                "device": {"type": "str"},
                "ip_address": {"type": "str"},
                "netmask": {"type": "str"},
                "dhcp": {"type": "bool"},
                "ipv6": {
                    "type": "dict",
                    "options": {
                        "addresses": {"type": "list", "elements": "str"},
                        "autoconf": {"type": "bool"},
                        "dhcp": {"type": "bool"},
                    },
                },
                "mtu": {"type": "int"},
                "tcpip_stack": {"type": "str"},
                "services": {"type": "list", "elements": "str", "choices": list(SERVICES)},
            },
        },
        "recreate": {"type": "bool", "default": False},
        "allow_management_changes": {"type": "bool", "default": False},
    }


#: The dictionary options (and the nested one), as paths into the parameters.
_DICT_OPTIONS = (
    ("vswitch",),
    ("portgroup",),
    ("vmknic",),
    ("vmknic", "ipv6"),
    *((section, part) for section in ("vswitch", "portgroup") for part in ("security", "teaming")),
)


class _Module(AnsibleModule):  # type: ignore[misc]  # ansible-core ships no type information: AnsibleModule is Any
    """AnsibleModule whose refusal of a dictionary option given as a string names the option.

    ansible-core reports ``vswitch: vSwitch1`` as just "dictionary requested, could not parse
    JSON or key=value" (its no_log scan fails before the type check that would name it).
    """

    def fail_json(self, msg: str, **kwargs: Any) -> None:
        params = getattr(self, "params", None)
        if isinstance(params, dict) and not kwargs.get("reasons"):
            shapes = []
            for path in _DICT_OPTIONS:
                value: Any = params
                for key in path:
                    value = value.get(key) if isinstance(value, dict) else None
                if value is not None and not isinstance(value, dict):
                    shapes.append(shape_error(".".join(path), value))
            if shapes:
                super().fail_json(msg="; ".join(shapes), reasons=shapes)
        super().fail_json(msg=msg, **kwargs)


def run(module: AnsibleModule, host: Any, desired: DesiredState) -> None:
    """Read current -> compute the differences -> none: exit unchanged -> check mode: exit with the
    diff -> act -> return the final state. Every path ends in exit_json or fail_json."""
    name = str(host.name)
    current = read_host_state(host)
    try:
        plan = make_plan(current, desired)
    except PlanError as err:
        module.fail_json(msg=f"{name}: {err}", reasons=list(err.reasons), host=name)
        return
    for warning in plan.warnings:
        module.warn(f"{name}: {warning}")
    result: dict[str, Any] = {"changed": plan.changed, "host": name, "operations": [op.as_dict() for op in plan.ops]}
    if plan.changed and module._diff:
        result["diff"] = {"before": plan.before, "after": plan.after}
    if not plan.changed or module.check_mode:
        module.exit_json(**result, **state_views(current, desired, plan.device), physical_nics=pnic_views(current))
        return
    try:
        created = apply_plan(host, plan.ops)
    except ApplyError as err:
        result["changed"] = bool(err.applied)
        result["applied"] = [op.as_dict() for op in err.applied]
        module.fail_json(msg=f"{name}: {err}", **result)
        return
    final = read_host_state(host)
    device = created or plan.device
    result["converged"] = _converged(module, name, final, desired, created)
    module.exit_json(**result, **state_views(final, desired, device), physical_nics=pnic_views(final))


def _converged(module: AnsibleModule, name: str, final: Any, desired: DesiredState, created: str | None) -> bool:
    """Plan again against the host as it is now; anything left to do means the host did not take it."""
    if created and desired.vmknic is not None and desired.vmknic.device:
        desired = dataclasses.replace(desired, vmknic=dataclasses.replace(desired.vmknic, device=created))
    try:
        leftover = make_plan(final, desired)
    except PlanError as err:
        module.warn(f"{name}: could not check the result: {err}")
        return False
    if leftover.ops:
        left = "; ".join(op.describe() for op in leftover.ops)
        module.warn(f"{name}: the host accepted the changes but still differs from the request: {left}")
        return False
    return True


def main() -> None:
    module = _Module(
        argument_spec=argument_spec(),
        required_one_of=[["vswitch", "portgroup", "vmknic"]],
        supports_check_mode=True,
    )
    require_pyvmomi(module)
    try:
        desired = desired_from_params(module.params)
        with vsphere_session(module.params) as service_instance:
            host = find_host(service_instance, module.params["esxi_hostname"])
            run(module, host, desired)
    except PlanError as err:
        module.fail_json(msg=str(err), reasons=list(err.reasons))
    except (VSphereError, HostReadError) as err:
        module.fail_json(msg=str(err))


if __name__ == "__main__":
    main()
