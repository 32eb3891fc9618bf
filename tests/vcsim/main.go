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
	"syscall"
	"time"

	"github.com/vmware/govmomi/simulator"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "host:port to listen on (loopback only)")
	username := flag.String("username", "user", "the only user name accepted")
	password := flag.String("password", "pass", "the only password accepted")
	lifetime := flag.Duration("lifetime", 5*time.Minute, "exit after this long")
	flag.Parse()

	model := simulator.ESX()
	if err := model.Create(); err != nil {
		fmt.Fprintln(os.Stderr, "vcsim-esx: cannot create the ESX model:", err)
		os.Exit(1)
	}
	defer model.Remove()

	model.Service.TLS = new(tls.Config)
	model.Service.Listen = &url.URL{Host: *listen, User: url.UserPassword(*username, *password)}
	server := model.Service.NewServer()
	defer server.Close()

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
