// Copyright (c) esxilab.iperf contributors
// GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
// SPDX-License-Identifier: GPL-3.0-or-later

// The host networking govmomi's simulator lacks or gets wrong, modelled on what a standalone
// ESXi host does through the same SOAP calls:
//
//   - AddVirtualSwitch keeps its spec (MTU, ports, uplinks, teaming policy; ESXi's defaults for
//     what is left out: MTU 1500, security all reject, route by originating port, every uplink
//     active); UpdateVirtualSwitch replaces the spec, keeping the MTU and policy when they are
//     left out and detaching the uplinks when the bridge is left out (as ESXi does);
//   - UpdatePortGroup (VLAN, policy overrides; computedPolicy is the vSwitch's policy with the
//     port group's overrides on top);
//   - AddVirtualNic, UpdateVirtualNic (partial: only what the spec sets changes — IPv4, IPv6
//     addresses by operation add/remove, MTU, a move to another port group), RemoveVirtualNic;
//   - a HostVirtualNicManager (info.netConfig, SelectVnicForNicType, DeselectVnicForNicType,
//     QueryNetConfig) with vmk0 tagged for management;
//   - ResourceInUse for removing a port group or vSwitch that still carries a VMkernel adapter.
//
// HostNetworkSystem.networkInfo is the one copy that is changed; HostSystem.config.network
// (vswitch, portgroup, vnic) and the VirtualNicManager's info are derived from it after every
// call, so a property read afterwards sees the change wherever it looks.
package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

const (
	vswitchKeyPrefix   = "key-vim.host.VirtualSwitch-"
	portgroupKeyPrefix = "key-vim.host.PortGroup-"
	pnicKeyPrefix      = "key-vim.host.PhysicalNic-"
	vnicKeyPrefix      = "key-vim.host.VirtualNic-"
	defaultMtu         = 1500
)

// networkSystem wraps the simulator's HostNetworkSystem (same managed object reference).
type networkSystem struct {
	*simulator.HostNetworkSystem

	vnicManager *vnicManager // nil with -no-vnic-manager
	nextMac     int
}

// Get gives the property collector the simulator's object (it looks for an embedded mo value).
func (s *networkSystem) Get() mo.Reference { return s.HostNetworkSystem }

// vnicManager is the host's HostVirtualNicManager; selected maps nicType -> devices.
type vnicManager struct {
	mo.HostVirtualNicManager

	network  *networkSystem
	selected map[string]map[string]bool
}

// nicTypes the manager offers, as an ESXi 8 host lists them.
var nicTypes = []string{
	"faultToleranceLogging", "management", "nvmeRdma", "nvmeTcp", "vSphereBackupNFC",
	"vSphereProvisioning", "vSphereReplication", "vSphereReplicationNFC", "vmotion", "vsan", "vsanWitness",
}

// extendNetwork replaces the ESX model's HostNetworkSystem with networkSystem and adds the
// HostVirtualNicManager the model only references (unless withVnicManager is false); the
// physical NICs named in speeds get that link speed (Mb/s).
func extendNetwork(withVnicManager bool, speeds map[string]int32) error {
	host := simulator.Map.Any("HostSystem").(*simulator.HostSystem)
	base := simulator.Map.Get(*host.ConfigManager.NetworkSystem).(*simulator.HostNetworkSystem)
	network := host.Config.Network
	network.Pnic = append([]types.PhysicalNic(nil), network.Pnic...)
	for name, speed := range speeds {
		found := false
		for i := range network.Pnic {
			if network.Pnic[i].Device == name {
				network.Pnic[i].LinkSpeed = &types.PhysicalNicLinkInfo{SpeedMb: speed, Duplex: true}
				found = true
			}
		}
		if !found {
			return fmt.Errorf("the host has no physical NIC %s", name)
		}
	}
	// Start from the host's full configuration (the simulator's networkInfo has a bare vSwitch0).
	base.NetworkInfo.Vswitch = append([]types.HostVirtualSwitch(nil), network.Vswitch...)
	base.NetworkInfo.Portgroup = append([]types.HostPortGroup(nil), network.Portgroup...)
	base.NetworkInfo.Vnic = append([]types.HostVirtualNic(nil), network.Vnic...)
	base.NetworkInfo.Pnic = append([]types.PhysicalNic(nil), network.Pnic...)
	base.NetworkInfo.ProxySwitch = network.ProxySwitch
	base.NetworkInfo.NetStackInstance = network.NetStackInstance
	base.NetworkInfo.IpV6Enabled = network.IpV6Enabled
	s := &networkSystem{HostNetworkSystem: base}
	if withVnicManager {
		m := &vnicManager{network: s, selected: map[string]map[string]bool{"management": {"vmk0": true}}}
		m.Self = *host.ConfigManager.VirtualNicManager
		s.vnicManager = m
		simulator.Map.Put(m)
	}
	s.sync()
	simulator.Map.Put(s)
	return nil
}

// sync derives HostSystem.config.network and the nic manager's info from networkInfo.
func (s *networkSystem) sync() {
	info := s.NetworkInfo
	for i := range info.Portgroup {
		pg := &info.Portgroup[i]
		if vs := s.vswitch(pg.Spec.VswitchName); vs != nil {
			pg.Vswitch = vswitchKeyPrefix + vs.Name
			pg.ComputedPolicy = computedPolicy(vs.Spec.Policy, &pg.Spec.Policy)
		}
	}
	for i := range info.Vswitch {
		vs := &info.Vswitch[i]
		vs.Portgroup = nil
		for _, pg := range info.Portgroup {
			if pg.Spec.VswitchName == vs.Name {
				vs.Portgroup = append(vs.Portgroup, pg.Key)
			}
		}
	}
	s.syncNetworks()
	network := s.Host.Config.Network
	network.Vswitch = append([]types.HostVirtualSwitch(nil), info.Vswitch...)
	network.Portgroup = append([]types.HostPortGroup(nil), info.Portgroup...)
	network.Vnic = append([]types.HostVirtualNic(nil), info.Vnic...)
	if s.vnicManager != nil {
		s.vnicManager.refresh()
	}
}

// syncNetworks makes HostSystem.network and each Network's host list follow the port groups,
// as on ESXi: the simulator's AddPortGroup only adds the Network entity to the datacenter, so a
// client looking for the port group among the host's networks (where a VM adapter can go, what
// community.vmware.vmware_guest_network does) would not find it.
func (s *networkSystem) syncNetworks() {
	names := map[string]bool{}
	for _, pg := range s.NetworkInfo.Portgroup {
		names[pg.Spec.Name] = true
	}
	dc := simulator.Map.Any("Datacenter").(*simulator.Datacenter)
	var refs []types.ManagedObjectReference
	for _, ref := range dc.Network {
		network, ok := simulator.Map.Get(ref).(*mo.Network)
		if !ok {
			continue
		}
		if names[network.Name] {
			refs = append(refs, ref)
			network.Host = []types.ManagedObjectReference{s.Host.Self}
		} else {
			network.Host = nil
		}
	}
	s.Host.Network = refs
}

func (s *networkSystem) vswitch(name string) *types.HostVirtualSwitch {
	for i := range s.NetworkInfo.Vswitch {
		if s.NetworkInfo.Vswitch[i].Name == name {
			return &s.NetworkInfo.Vswitch[i]
		}
	}
	return nil
}

func (s *networkSystem) portgroup(name string) *types.HostPortGroup {
	for i := range s.NetworkInfo.Portgroup {
		if s.NetworkInfo.Portgroup[i].Spec.Name == name {
			return &s.NetworkInfo.Portgroup[i]
		}
	}
	return nil
}

func (s *networkSystem) vnicIndex(device string) int {
	for i := range s.NetworkInfo.Vnic {
		if s.NetworkInfo.Vnic[i].Device == device {
			return i
		}
	}
	return -1
}

// vnicsOn lists the VMkernel adapters on the named port groups.
func (s *networkSystem) vnicsOn(portgroups ...string) []string {
	var devices []string
	for _, vnic := range s.NetworkInfo.Vnic {
		for _, pg := range portgroups {
			if vnic.Spec.Portgroup == pg && vnic.Spec.DistributedVirtualPort == nil {
				devices = append(devices, vnic.Device)
			}
		}
	}
	return devices
}

func fault(message string, f types.BaseMethodFault) *soap.Fault {
	return simulator.Fault(message, f)
}

func newBool(b bool) *bool { return &b }

// uplinksOf returns the bridged NICs of a spec (nil: no BondBridge).
func uplinksOf(spec types.HostVirtualSwitchSpec) []string {
	if bond, ok := spec.Bridge.(*types.HostVirtualSwitchBondBridge); ok && bond != nil {
		return bond.NicDevice
	}
	return nil
}

// defaultPolicy is what ESXi gives a new standard vSwitch that was sent no policy.
func defaultPolicy(uplinks []string) *types.HostNetworkPolicy {
	return &types.HostNetworkPolicy{
		Security: &types.HostNetworkSecurityPolicy{
			AllowPromiscuous: newBool(false), MacChanges: newBool(false), ForgedTransmits: newBool(false),
		},
		NicTeaming: &types.HostNicTeamingPolicy{
			Policy:         "loadbalance_srcid",
			ReversePolicy:  newBool(true),
			NotifySwitches: newBool(true),
			RollingOrder:   newBool(false),
			FailureCriteria: &types.HostNicFailureCriteria{
				CheckSpeed: "minimum", Speed: 10, CheckDuplex: newBool(false), FullDuplex: newBool(false),
				CheckErrorPercent: newBool(false), Percentage: 0, CheckBeacon: newBool(false),
			},
			NicOrder: &types.HostNicOrderPolicy{ActiveNic: append([]string(nil), uplinks...)},
		},
		OffloadPolicy: &types.HostNetOffloadCapabilities{
			CsumOffload: newBool(true), TcpSegmentation: newBool(true), ZeroCopyXmit: newBool(true),
		},
		ShapingPolicy: &types.HostNetworkTrafficShapingPolicy{Enabled: newBool(false)},
	}
}

// computedPolicy is the vSwitch policy with a port group's overrides (set fields) on top.
func computedPolicy(vswitch, overrides *types.HostNetworkPolicy) types.HostNetworkPolicy {
	out := types.HostNetworkPolicy{}
	if vswitch != nil {
		out = *vswitch
		if vswitch.Security != nil {
			security := *vswitch.Security
			out.Security = &security
		}
		if vswitch.NicTeaming != nil {
			teaming := *vswitch.NicTeaming
			out.NicTeaming = &teaming
		}
	}
	if overrides == nil {
		return out
	}
	if o := overrides.Security; o != nil {
		if out.Security == nil {
			out.Security = &types.HostNetworkSecurityPolicy{}
		}
		if o.AllowPromiscuous != nil {
			out.Security.AllowPromiscuous = o.AllowPromiscuous
		}
		if o.MacChanges != nil {
			out.Security.MacChanges = o.MacChanges
		}
		if o.ForgedTransmits != nil {
			out.Security.ForgedTransmits = o.ForgedTransmits
		}
	}
	if o := overrides.NicTeaming; o != nil {
		if out.NicTeaming == nil {
			out.NicTeaming = &types.HostNicTeamingPolicy{}
		}
		if o.Policy != "" {
			out.NicTeaming.Policy = o.Policy
		}
		if o.NicOrder != nil {
			out.NicTeaming.NicOrder = o.NicOrder
		}
		if o.NotifySwitches != nil {
			out.NicTeaming.NotifySwitches = o.NotifySwitches
		}
		if o.RollingOrder != nil {
			out.NicTeaming.RollingOrder = o.RollingOrder
		}
		if o.ReversePolicy != nil {
			out.NicTeaming.ReversePolicy = o.ReversePolicy
		}
	}
	if overrides.ShapingPolicy != nil {
		out.ShapingPolicy = overrides.ShapingPolicy
	}
	if overrides.OffloadPolicy != nil {
		out.OffloadPolicy = overrides.OffloadPolicy
	}
	return out
}

// checkUplinks refuses NICs the host does not have or another switch already bridges.
func (s *networkSystem) checkUplinks(name string, uplinks []string) *soap.Fault {
	for _, nic := range uplinks {
		known := false
		for _, pnic := range s.NetworkInfo.Pnic {
			known = known || pnic.Device == nic
		}
		if !known {
			return fault("physical NIC "+nic+" does not exist", &types.NotFound{})
		}
		for _, vs := range s.NetworkInfo.Vswitch {
			if vs.Name == name {
				continue
			}
			for _, used := range uplinksOf(vs.Spec) {
				if used == nic {
					return fault("physical NIC "+nic+" is an uplink of "+vs.Name, &types.ResourceInUse{Name: nic})
				}
			}
		}
		for _, proxy := range s.NetworkInfo.ProxySwitch {
			for _, key := range proxy.Pnic {
				if key == pnicKeyPrefix+nic {
					return fault("physical NIC "+nic+" is an uplink of "+proxy.DvsName, &types.ResourceInUse{Name: nic})
				}
			}
		}
	}
	return nil
}

func checkMtu(mtu int32) *soap.Fault {
	if mtu != 0 && (mtu < 1280 || mtu > 9000) {
		return fault(fmt.Sprintf("MTU %d is out of range 1280-9000", mtu), &types.InvalidArgument{InvalidProperty: "mtu"})
	}
	return nil
}

func (s *networkSystem) setSpec(vs *types.HostVirtualSwitch, spec types.HostVirtualSwitchSpec) {
	uplinks := uplinksOf(spec)
	vs.Spec = spec
	if vs.Spec.NumPorts == 0 {
		vs.Spec.NumPorts = 128
	}
	vs.NumPorts = vs.Spec.NumPorts
	vs.NumPortsAvailable = vs.Spec.NumPorts - 8
	vs.Mtu = vs.Spec.Mtu
	vs.Pnic = nil
	for _, nic := range uplinks {
		vs.Pnic = append(vs.Pnic, pnicKeyPrefix+nic)
	}
}

func (s *networkSystem) AddVirtualSwitch(req *types.AddVirtualSwitch) soap.HasFault {
	body := &methods.AddVirtualSwitchBody{}
	if s.vswitch(req.VswitchName) != nil {
		body.Fault_ = fault("", &types.AlreadyExists{Name: req.VswitchName})
		return body
	}
	spec := types.HostVirtualSwitchSpec{}
	if req.Spec != nil {
		spec = *req.Spec
	}
	if f := s.checkUplinks(req.VswitchName, uplinksOf(spec)); f != nil {
		body.Fault_ = f
		return body
	}
	if f := checkMtu(spec.Mtu); f != nil {
		body.Fault_ = f
		return body
	}
	if spec.Mtu == 0 {
		spec.Mtu = defaultMtu
	}
	if spec.Policy == nil {
		spec.Policy = defaultPolicy(uplinksOf(spec))
	}
	vs := types.HostVirtualSwitch{Name: req.VswitchName, Key: vswitchKeyPrefix + req.VswitchName}
	s.setSpec(&vs, spec)
	s.NetworkInfo.Vswitch = append(s.NetworkInfo.Vswitch, vs)
	s.sync()
	body.Res = &types.AddVirtualSwitchResponse{}
	return body
}

func (s *networkSystem) UpdateVirtualSwitch(req *types.UpdateVirtualSwitch) soap.HasFault {
	body := &methods.UpdateVirtualSwitchBody{}
	vs := s.vswitch(req.VswitchName)
	if vs == nil {
		body.Fault_ = fault("vSwitch "+req.VswitchName+" does not exist", &types.NotFound{})
		return body
	}
	spec := req.Spec
	if f := s.checkUplinks(req.VswitchName, uplinksOf(spec)); f != nil {
		body.Fault_ = f
		return body
	}
	if f := checkMtu(spec.Mtu); f != nil {
		body.Fault_ = f
		return body
	}
	if spec.Mtu == 0 {
		spec.Mtu = vs.Spec.Mtu
	}
	if spec.Policy == nil {
		spec.Policy = vs.Spec.Policy
	}
	if spec.Policy != nil && spec.Policy.NicTeaming != nil && spec.Policy.NicTeaming.NicOrder != nil {
		// ESXi refuses a teaming order naming a NIC the vSwitch does not bridge.
		bridged := map[string]bool{}
		for _, nic := range uplinksOf(spec) {
			bridged[nic] = true
		}
		order := spec.Policy.NicTeaming.NicOrder
		for _, nic := range append(append([]string(nil), order.ActiveNic...), order.StandbyNic...) {
			if !bridged[nic] {
				body.Fault_ = fault("NIC "+nic+" in the teaming order is not an uplink of "+vs.Name,
					&types.InvalidArgument{InvalidProperty: "spec.policy.nicTeaming.nicOrder"})
				return body
			}
		}
	}
	s.setSpec(vs, spec)
	s.sync()
	body.Res = &types.UpdateVirtualSwitchResponse{}
	return body
}

func (s *networkSystem) RemoveVirtualSwitch(ctx *simulator.Context, req *types.RemoveVirtualSwitch) soap.HasFault {
	body := &methods.RemoveVirtualSwitchBody{}
	if s.vswitch(req.VswitchName) == nil {
		body.Fault_ = fault("vSwitch "+req.VswitchName+" does not exist", &types.NotFound{})
		return body
	}
	var portgroups []string
	for _, pg := range s.NetworkInfo.Portgroup {
		if pg.Spec.VswitchName == req.VswitchName {
			portgroups = append(portgroups, pg.Spec.Name)
		}
	}
	if in := s.vnicsOn(portgroups...); len(in) > 0 {
		body.Fault_ = fault("vSwitch "+req.VswitchName+" carries "+strings.Join(in, ", "), &types.ResourceInUse{Name: req.VswitchName})
		return body
	}
	for _, name := range portgroups { // ESXi removes the port groups with their vSwitch
		if r := s.RemovePortGroup(ctx, &types.RemovePortGroup{PgName: name}); r.Fault() != nil {
			body.Fault_ = r.Fault()
			return body
		}
	}
	for i := range s.NetworkInfo.Vswitch {
		if s.NetworkInfo.Vswitch[i].Name == req.VswitchName {
			s.NetworkInfo.Vswitch = append(s.NetworkInfo.Vswitch[:i], s.NetworkInfo.Vswitch[i+1:]...)
			break
		}
	}
	s.sync()
	body.Res = &types.RemoveVirtualSwitchResponse{}
	return body
}

func (s *networkSystem) AddPortGroup(ctx *simulator.Context, req *types.AddPortGroup) soap.HasFault {
	if s.portgroup(req.Portgrp.Name) != nil {
		return &methods.AddPortGroupBody{Fault_: fault("", &types.AlreadyExists{Name: req.Portgrp.Name})}
	}
	if f := checkVlan(req.Portgrp.VlanId); f != nil {
		return &methods.AddPortGroupBody{Fault_: f}
	}
	// The simulator's own call adds the Network entity and a bare HostPortGroup; sync fixes the rest.
	result := s.HostNetworkSystem.AddPortGroup(ctx, req)
	if result.Fault() == nil {
		s.sync()
	}
	return result
}

func checkVlan(vlan int32) *soap.Fault {
	if vlan < 0 || vlan > 4095 {
		return fault(fmt.Sprintf("VLAN %d is out of range 0-4095", vlan), &types.InvalidArgument{InvalidProperty: "vlanId"})
	}
	return nil
}

func (s *networkSystem) UpdatePortGroup(req *types.UpdatePortGroup) soap.HasFault {
	body := &methods.UpdatePortGroupBody{}
	pg := s.portgroup(req.PgName)
	if pg == nil {
		body.Fault_ = fault("port group "+req.PgName+" does not exist", &types.NotFound{})
		return body
	}
	spec := req.Portgrp
	if spec.Name != req.PgName {
		body.Fault_ = fault("renaming a port group is not modelled", &types.NotSupported{})
		return body
	}
	if s.vswitch(spec.VswitchName) == nil {
		body.Fault_ = fault("vSwitch "+spec.VswitchName+" does not exist", &types.NotFound{})
		return body
	}
	if f := checkVlan(spec.VlanId); f != nil {
		body.Fault_ = f
		return body
	}
	pg.Spec = spec
	s.sync()
	body.Res = &types.UpdatePortGroupResponse{}
	return body
}

func (s *networkSystem) RemovePortGroup(ctx *simulator.Context, req *types.RemovePortGroup) soap.HasFault {
	pg := s.portgroup(req.PgName)
	if pg == nil {
		return &methods.RemovePortGroupBody{Fault_: fault("port group "+req.PgName+" does not exist", &types.NotFound{})}
	}
	if in := s.vnicsOn(req.PgName); len(in) > 0 {
		return &methods.RemovePortGroupBody{
			Fault_: fault("port group "+req.PgName+" carries "+strings.Join(in, ", "), &types.ResourceInUse{Name: req.PgName}),
		}
	}
	// The simulator's call removes the Network entity; it looks the port group up by name in
	// its vSwitch's list, which holds keys here.
	if vs := s.vswitch(pg.Spec.VswitchName); vs != nil {
		vs.Portgroup = append(vs.Portgroup, req.PgName)
	}
	result := s.HostNetworkSystem.RemovePortGroup(ctx, req)
	s.sync()
	return result
}

// ipConfig applies an IP configuration to the current one: IPv4 as given, IPv6 addresses by
// their operation (add/remove), the IPv6 flags when set.
func ipConfig(current *types.HostIpConfig, change *types.HostIpConfig) (*types.HostIpConfig, *soap.Fault) {
	out := types.HostIpConfig{}
	if current != nil {
		out = *current
	}
	out.Dhcp = change.Dhcp
	out.IpAddress, out.SubnetMask = change.IpAddress, change.SubnetMask
	if change.Dhcp {
		out.IpAddress, out.SubnetMask = "", ""
	} else if change.IpAddress != "" && change.SubnetMask == "" {
		return nil, fault("an IPv4 address needs a subnet mask", &types.InvalidArgument{InvalidProperty: "ip.subnetMask"})
	}
	if v6 := change.IpV6Config; v6 != nil {
		config := types.HostIpConfigIpV6AddressConfiguration{}
		if out.IpV6Config != nil {
			config = *out.IpV6Config
		}
		for _, address := range v6.IpV6Address {
			kept := config.IpV6Address[:0:0]
			for _, have := range config.IpV6Address {
				if have.IpAddress != address.IpAddress {
					kept = append(kept, have)
				}
			}
			if address.Operation != "remove" {
				address.Operation = ""
				if address.Origin == "" {
					address.Origin = "manual"
				}
				kept = append(kept, address)
			}
			config.IpV6Address = kept
		}
		if v6.AutoConfigurationEnabled != nil {
			config.AutoConfigurationEnabled = v6.AutoConfigurationEnabled
		}
		if v6.DhcpV6Enabled != nil {
			config.DhcpV6Enabled = v6.DhcpV6Enabled
		}
		out.IpV6Config = &config
	}
	return &out, nil
}

// addPort and removePort keep the port group's port list (the module counts VM ports on it).
func (s *networkSystem) addPort(portgroup string, vnic types.HostVirtualNic) {
	if pg := s.portgroup(portgroup); pg != nil {
		pg.Port = append(pg.Port, types.HostPortGroupPort{Key: "key-vim.host.PortGroup.Port-" + vnic.Device, Mac: []string{vnic.Spec.Mac}, Type: "host"})
	}
}

func (s *networkSystem) removePort(portgroup, device string) {
	if pg := s.portgroup(portgroup); pg != nil {
		var kept []types.HostPortGroupPort
		for _, port := range pg.Port {
			if port.Key != "key-vim.host.PortGroup.Port-"+device {
				kept = append(kept, port)
			}
		}
		pg.Port = kept
	}
}

func (s *networkSystem) AddVirtualNic(req *types.AddVirtualNic) soap.HasFault {
	body := &methods.AddVirtualNicBody{}
	if s.portgroup(req.Portgroup) == nil {
		body.Fault_ = fault("port group "+req.Portgroup+" does not exist", &types.NotFound{})
		return body
	}
	if req.Nic.Ip == nil {
		body.Fault_ = fault("an adapter needs an IP configuration", &types.InvalidArgument{InvalidProperty: "nic.ip"})
		return body
	}
	if f := checkMtu(req.Nic.Mtu); f != nil {
		body.Fault_ = f
		return body
	}
	ip, f := ipConfig(nil, req.Nic.Ip)
	if f != nil {
		body.Fault_ = f
		return body
	}
	number := 0
	for s.vnicIndex(fmt.Sprintf("vmk%d", number)) >= 0 {
		number++
	}
	device := fmt.Sprintf("vmk%d", number)
	spec := req.Nic
	spec.Ip = ip
	spec.Portgroup = req.Portgroup
	if spec.Mtu == 0 {
		spec.Mtu = defaultMtu
	}
	if spec.NetStackInstanceKey == "" {
		spec.NetStackInstanceKey = "defaultTcpipStack"
	}
	if spec.Mac == "" {
		s.nextMac++
		spec.Mac = fmt.Sprintf("00:50:56:6b:00:%02x", s.nextMac)
	}
	vnic := types.HostVirtualNic{Device: device, Key: vnicKeyPrefix + device, Portgroup: req.Portgroup, Spec: spec}
	s.NetworkInfo.Vnic = append(s.NetworkInfo.Vnic, vnic)
	s.addPort(req.Portgroup, vnic)
	s.sync()
	body.Res = &types.AddVirtualNicResponse{Returnval: device}
	return body
}

func (s *networkSystem) UpdateVirtualNic(req *types.UpdateVirtualNic) soap.HasFault {
	body := &methods.UpdateVirtualNicBody{}
	i := s.vnicIndex(req.Device)
	if i < 0 {
		body.Fault_ = fault("VMkernel adapter "+req.Device+" does not exist", &types.NotFound{})
		return body
	}
	vnic := &s.NetworkInfo.Vnic[i]
	if f := checkMtu(req.Nic.Mtu); f != nil {
		body.Fault_ = f
		return body
	}
	if to := req.Nic.Portgroup; to != "" && to != vnic.Spec.Portgroup {
		if s.portgroup(to) == nil {
			body.Fault_ = fault("port group "+to+" does not exist", &types.NotFound{})
			return body
		}
	}
	if req.Nic.Ip != nil {
		ip, f := ipConfig(vnic.Spec.Ip, req.Nic.Ip)
		if f != nil {
			body.Fault_ = f
			return body
		}
		vnic.Spec.Ip = ip
	}
	if req.Nic.Mtu != 0 {
		vnic.Spec.Mtu = req.Nic.Mtu
	}
	if to := req.Nic.Portgroup; to != "" && to != vnic.Spec.Portgroup {
		s.removePort(vnic.Spec.Portgroup, vnic.Device)
		vnic.Spec.Portgroup, vnic.Portgroup = to, to
		s.addPort(to, *vnic)
	}
	s.sync()
	body.Res = &types.UpdateVirtualNicResponse{}
	return body
}

func (s *networkSystem) RemoveVirtualNic(req *types.RemoveVirtualNic) soap.HasFault {
	body := &methods.RemoveVirtualNicBody{}
	i := s.vnicIndex(req.Device)
	if i < 0 {
		body.Fault_ = fault("VMkernel adapter "+req.Device+" does not exist", &types.NotFound{})
		return body
	}
	s.removePort(s.NetworkInfo.Vnic[i].Spec.Portgroup, req.Device)
	s.NetworkInfo.Vnic = append(s.NetworkInfo.Vnic[:i], s.NetworkInfo.Vnic[i+1:]...)
	if s.vnicManager != nil {
		for _, devices := range s.vnicManager.selected {
			delete(devices, req.Device)
		}
	}
	s.sync()
	body.Res = &types.RemoveVirtualNicResponse{}
	return body
}

// refresh rebuilds info.netConfig: every adapter is a candidate for every type.
func (m *vnicManager) refresh() {
	configs := make([]types.VirtualNicManagerNetConfig, 0, len(nicTypes))
	for _, nicType := range nicTypes {
		config := types.VirtualNicManagerNetConfig{NicType: nicType, MultiSelectAllowed: true}
		var devices []string
		for _, vnic := range m.network.NetworkInfo.Vnic {
			candidate := vnic
			candidate.Key = nicType + "." + vnicKeyPrefix + vnic.Device
			config.CandidateVnic = append(config.CandidateVnic, candidate)
			if m.selected[nicType][vnic.Device] {
				devices = append(devices, candidate.Key)
			}
		}
		sort.Strings(devices)
		config.SelectedVnic = devices
		configs = append(configs, config)
	}
	m.Info.NetConfig = configs
}

func (m *vnicManager) known(nicType, device string) *soap.Fault {
	for _, t := range nicTypes {
		if t == nicType {
			if m.network.vnicIndex(device) < 0 {
				return fault("VMkernel adapter "+device+" does not exist", &types.NotFound{})
			}
			return nil
		}
	}
	return fault("unknown nicType "+nicType, &types.InvalidArgument{InvalidProperty: "nicType"})
}

func (m *vnicManager) SelectVnicForNicType(req *types.SelectVnicForNicType) soap.HasFault {
	if f := m.known(req.NicType, req.Device); f != nil {
		return &methods.SelectVnicForNicTypeBody{Fault_: f}
	}
	if m.selected[req.NicType] == nil {
		m.selected[req.NicType] = map[string]bool{}
	}
	m.selected[req.NicType][req.Device] = true
	m.refresh()
	return &methods.SelectVnicForNicTypeBody{Res: &types.SelectVnicForNicTypeResponse{}}
}

func (m *vnicManager) DeselectVnicForNicType(req *types.DeselectVnicForNicType) soap.HasFault {
	if f := m.known(req.NicType, req.Device); f != nil {
		return &methods.DeselectVnicForNicTypeBody{Fault_: f}
	}
	delete(m.selected[req.NicType], req.Device)
	m.refresh()
	return &methods.DeselectVnicForNicTypeBody{Res: &types.DeselectVnicForNicTypeResponse{}}
}

func (m *vnicManager) QueryNetConfig(req *types.QueryNetConfig) soap.HasFault {
	for i := range m.Info.NetConfig {
		if m.Info.NetConfig[i].NicType == req.NicType {
			config := m.Info.NetConfig[i]
			return &methods.QueryNetConfigBody{Res: &types.QueryNetConfigResponse{Returnval: &config}}
		}
	}
	return &methods.QueryNetConfigBody{Fault_: fault("unknown nicType "+req.NicType, &types.InvalidArgument{InvalidProperty: "nicType"})}
}
