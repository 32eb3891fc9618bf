// Copyright (c) esxilab.iperf contributors
// GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
// SPDX-License-Identifier: GPL-3.0-or-later

// Guests to wire: -vm NAME[=TYPE[@PORTGROUP]] (repeatable) creates a powered-off VM NAME with
// one network adapter of TYPE (e1000, e1000e, vmxnet3; "none": no adapter; default e1000) on
// PORTGROUP (default "VM Network"; a port group the host lacks is added to vSwitch0 first),
// through the simulator's own CreateVM_Task over SOAP, as a client would. The adapter's MAC is
// the simulator's (derived from the VM's UUID and the device's unit number).
package main

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"
)

// vmSpec is one -vm flag: a VM name, its adapter type ("" for none) and the adapter's port group.
type vmSpec struct {
	name      string
	nicType   string
	portgroup string
}

// vmFlags collects the repeated -vm flags.
type vmFlags []vmSpec

var vmName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

func (v *vmFlags) String() string { return fmt.Sprint(*v) }

// Set parses NAME[=TYPE[@PORTGROUP]].
func (v *vmFlags) Set(text string) error {
	name, rest, _ := strings.Cut(text, "=")
	nicType, portgroup, _ := strings.Cut(rest, "@")
	if !vmName.MatchString(name) {
		return fmt.Errorf("%q: give NAME[=TYPE[@PORTGROUP]], NAME of letters, digits, '.', '_', '-'", text)
	}
	switch nicType {
	case "":
		nicType = "e1000"
	case "none":
		nicType = ""
	case "e1000", "e1000e", "vmxnet3":
	default:
		return fmt.Errorf("%q: TYPE must be e1000, e1000e, vmxnet3 or none, not %q", text, nicType)
	}
	if portgroup == "" {
		portgroup = "VM Network"
	}
	for _, known := range *v {
		if known.name == name {
			return fmt.Errorf("%q: VM %s is given twice", text, name)
		}
	}
	*v = append(*v, vmSpec{name: name, nicType: nicType, portgroup: portgroup})
	return nil
}

// createVMs creates the VMs of specs on the simulator at u (its URL with the login).
func createVMs(u *url.URL, specs []vmSpec) error {
	if len(specs) == 0 {
		return nil
	}
	ctx := context.Background()
	client, err := govmomi.NewClient(ctx, u, true)
	if err != nil {
		return err
	}
	defer func() { _ = client.Logout(ctx) }()
	finder := find.NewFinder(client.Client, true)
	dc, err := finder.DefaultDatacenter(ctx)
	if err != nil {
		return err
	}
	finder.SetDatacenter(dc)
	folders, err := dc.Folders(ctx)
	if err != nil {
		return err
	}
	host, err := finder.DefaultHostSystem(ctx)
	if err != nil {
		return err
	}
	pool, err := host.ResourcePool(ctx)
	if err != nil {
		return err
	}
	networkSystem, err := host.ConfigManager().NetworkSystem(ctx)
	if err != nil {
		return err
	}
	for _, spec := range specs {
		var devices object.VirtualDeviceList
		if spec.nicType != "" {
			if _, err := finder.Network(ctx, spec.portgroup); err != nil {
				pg := types.HostPortGroupSpec{Name: spec.portgroup, VswitchName: "vSwitch0", Policy: types.HostNetworkPolicy{}}
				if err := networkSystem.AddPortGroup(ctx, pg); err != nil {
					return fmt.Errorf("VM %s: cannot add port group %s to vSwitch0: %w", spec.name, spec.portgroup, err)
				}
			}
			backing := &types.VirtualEthernetCardNetworkBackingInfo{
				VirtualDeviceDeviceBackingInfo: types.VirtualDeviceDeviceBackingInfo{DeviceName: spec.portgroup},
			}
			nic, err := devices.CreateEthernetCard(spec.nicType, backing)
			if err != nil {
				return err
			}
			devices = append(devices, nic)
		}
		config := types.VirtualMachineConfigSpec{
			Name:    spec.name,
			GuestId: string(types.VirtualMachineGuestOsIdentifierOtherLinux64Guest),
			Files:   &types.VirtualMachineFileInfo{VmPathName: "[LocalDS_0] " + path.Join(spec.name, spec.name+".vmx")},
		}
		config.DeviceChange, err = devices.ConfigSpec(types.VirtualDeviceConfigSpecOperationAdd)
		if err != nil {
			return err
		}
		task, err := folders.VmFolder.CreateVM(ctx, config, pool, host)
		if err != nil {
			return fmt.Errorf("VM %s: %w", spec.name, err)
		}
		if _, err := task.WaitForResult(ctx, nil); err != nil {
			return fmt.Errorf("VM %s: %w", spec.name, err)
		}
	}
	return nil
}
