// Copyright (c) esxilab.iperf contributors
// GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
// SPDX-License-Identifier: GPL-3.0-or-later

// Command vcsim-esx starts govmomi's vSphere API simulator in its standalone-ESXi model
// (what `vcsim -esx` does; Debian ships the simulator library but no vcsim binary).
//
// It listens on -listen (default 127.0.0.1:0, i.e. a free loopback port), accepts only the
// -username/-password given, prints one line "VCSIM_URL=https://HOST:PORT/sdk" once it
// accepts connections, and stops on SIGINT/SIGTERM, when its standard input closes, or
// after -lifetime, whichever comes first, so a crashed test never leaves it running.
//
// With -dvs-uplink NIC the host is also a member of a distributed switch "DSwitch-mgmt" (a
// HostProxySwitch in HostSystem.config.network, uplink NIC) carrying a second VMkernel adapter
// vmk1 on the default TCP/IP stack: what a host managed by vCenter looks like to the API. The
// simulator has no such state of its own (it implements no host side of a DVS).
//
// The host's standard-switch networking (vSwitches, port groups, VMkernel adapters, service
// tags) is completed in network.go, so a module can create, change and remove it over SOAP;
// -no-vnic-manager leaves out the HostVirtualNicManager (service tags cannot be read).
// -extra-nics N adds N free physical NICs (vmnic2, vmnic3, ...) beside the model's vmnic0 and
// vmnic1, for a test vSwitch with more than one uplink (teaming: active and standby).
//
// With -pnic-speed NAME=MBPS[,NAME=MBPS...] those physical NICs report that negotiated link
// speed (PhysicalNic.linkSpeed.speedMb, full duplex) instead of the model's 10000 Mb/s: a host
// with a slower NIC, for the line rate the esxi_network role publishes from esxi_vmknic's data.
//
// -vm NAME[=TYPE[@PORTGROUP]] (repeatable) adds a powered-off VM with one network adapter of that
// type (e1000 by default, or none) on that port group ("VM Network" by default), for the guest
// role (vms.go); the model's own two VMs (ha-host_VM0, ha-host_VM1) are there as well.
//
// Build offline against Debian's golang-github-vmware-govmomi-dev in GOPATH mode:
//
//	GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= go build -o vcsim-esx ./tests/vcsim
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/simulator/esx"
	"github.com/vmware/govmomi/vim25/types"
)

const dvsUUID = "50 1a 2b 3c 4d 5e 6f 70-81 92 a3 b4 c5 d6 e7 f8"

// addNics adds count physical NICs vmnic2... (copies of vmnic1 with their own key and MAC).
func addNics(count int) {
	network := esx.HostConfigInfo.Network
	template := network.Pnic[len(network.Pnic)-1]
	for i := 0; i < count; i++ {
		nic := template
		nic.Device = fmt.Sprintf("vmnic%d", len(network.Pnic))
		nic.Key = "key-vim.host.PhysicalNic-" + nic.Device
		nic.Mac = fmt.Sprintf("00:0c:29:aa:00:%02x", len(network.Pnic))
		network.Pnic = append(network.Pnic, nic)
	}
}

// joinDVS adds the host side of a distributed switch with the uplink nic and a vmk1 on it.
func joinDVS(nic string) {
	network := esx.HostConfigInfo.Network
	network.ProxySwitch = append(network.ProxySwitch, types.HostProxySwitch{
		DvsUuid:           dvsUUID,
		DvsName:           "DSwitch-mgmt",
		Key:               "key-vim.host.ProxySwitch-" + dvsUUID,
		NumPorts:          512,
		NumPortsAvailable: 500,
		Mtu:               1500,
		Pnic:              []string{"key-vim.host.PhysicalNic-" + nic},
		Spec: types.HostProxySwitchSpec{
			Backing: &types.DistributedVirtualSwitchHostMemberPnicBacking{
				PnicSpec: []types.DistributedVirtualSwitchHostMemberPnicSpec{
					{PnicDevice: nic, UplinkPortKey: "0", UplinkPortgroupKey: "dvportgroup-up"},
				},
			},
		},
	})
	network.Vnic = append(network.Vnic, types.HostVirtualNic{
		Device: "vmk1",
		Key:    "key-vim.host.VirtualNic-vmk1",
		Spec: types.HostVirtualNicSpec{
			Ip:  &types.HostIpConfig{IpAddress: "192.0.2.11", SubnetMask: "255.255.255.0"},
			Mac: "00:50:56:6a:00:01",
			DistributedVirtualPort: &types.DistributedVirtualSwitchPortConnection{
				SwitchUuid: dvsUUID, PortgroupKey: "dvportgroup-mgmt", PortKey: "10",
			},
			Mtu:                 1500,
			NetStackInstanceKey: "defaultTcpipStack",
		},
	})
}

// parseSpeeds reads -pnic-speed: NAME=MBPS pairs separated by commas.
func parseSpeeds(text string) (map[string]int32, error) {
	speeds := map[string]int32{}
	for _, item := range strings.Split(text, ",") {
		if item == "" {
			continue
		}
		name, value, found := strings.Cut(item, "=")
		speed, err := strconv.ParseInt(value, 10, 32)
		if !found || name == "" || err != nil || speed <= 0 {
			return nil, fmt.Errorf("%q: give NAME=MBPS, for example vmnic1=1000", item)
		}
		speeds[name] = int32(speed)
	}
	return speeds, nil
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "host:port to listen on (loopback only)")
	username := flag.String("username", "user", "the only user name accepted")
	password := flag.String("password", "pass", "the only password accepted")
	lifetime := flag.Duration("lifetime", 5*time.Minute, "exit after this long")
	dvsUplink := flag.String("dvs-uplink", "", "make the host a member of a distributed switch with this uplink")
	noVnicManager := flag.Bool("no-vnic-manager", false, "leave out the HostVirtualNicManager (service tags unreadable)")
	extraNics := flag.Int("extra-nics", 0, "add this many free physical NICs (vmnic2, vmnic3, ...)")
	pnicSpeed := flag.String("pnic-speed", "", "NAME=MBPS[,NAME=MBPS...]: the link speed of these physical NICs")
	var vms vmFlags
	flag.Var(&vms, "vm", "NAME[=TYPE[@PORTGROUP]]: a VM with one adapter (e1000, e1000e, vmxnet3 or none); repeatable")
	flag.Parse()

	addNics(*extraNics)
	speeds, err := parseSpeeds(*pnicSpeed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vcsim-esx: -pnic-speed:", err)
		os.Exit(2)
	}

	if *dvsUplink != "" {
		joinDVS(*dvsUplink)
	}

	model := simulator.ESX()
	if err := model.Create(); err != nil {
		fmt.Fprintln(os.Stderr, "vcsim-esx: cannot create the ESX model:", err)
		os.Exit(1)
	}
	defer model.Remove()
	if err := extendNetwork(!*noVnicManager, speeds); err != nil {
		fmt.Fprintln(os.Stderr, "vcsim-esx: -pnic-speed:", err)
		os.Exit(2)
	}

	model.Service.TLS = new(tls.Config)
	model.Service.Listen = &url.URL{Host: *listen, User: url.UserPassword(*username, *password)}
	server := model.Service.NewServer()
	defer server.Close()

	if err := createVMs(server.URL, vms); err != nil {
		fmt.Fprintln(os.Stderr, "vcsim-esx: -vm:", err)
		server.Close()
		model.Remove()
		os.Exit(2)
	}

	shown := url.URL{Scheme: server.URL.Scheme, Host: server.URL.Host, Path: server.URL.Path}
	fmt.Printf("VCSIM_URL=%s\n", shown.String())

	done := make(chan string, 3)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	go func() { done <- "signal " + (<-signals).String() }()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		done <- "standard input closed"
	}()
	go func() {
		time.Sleep(*lifetime)
		done <- "lifetime over"
	}()
	fmt.Fprintln(os.Stderr, "vcsim-esx: stopping:", <-done)
}
