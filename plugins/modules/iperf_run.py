# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation of ``esxilab.iperf.iperf_run``; the work is done by plugins/action/iperf_run.py."""

from __future__ import annotations

DOCUMENTATION = r"""
module: iperf_run
short_description: Start an iperf2/iperf3 server, run a client test, or stop the server, on hosts without Python
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Runs iperf2 or iperf3 on the host over its plain POSIX shell. The host needs no Python; the busybox shell of
    ESXi 6.7, 7.x and 8.x is enough, as are C(dash) and C(bash) on Linux. Everything else (building the command
    line, parsing the output, telling what went wrong) happens on the controller.
  - O(mode=server) starts a server in the background and returns its RV(pid) and RV(log); O(mode=client) runs one
    test against a server and returns the normalized RV(result); O(mode=stop) stops servers this module started.
  - 'Each task runs a read-only probe on the host (which iperf binaries exist and their versions, which clock and sleep
    tools the shell has), then the action itself. O(mode=probe) runs only the probe and returns it as RV(probe);
    hand that to later tasks on the same host as O(probe) and O(mode=server), O(mode=client) and O(mode=stop) (by
    O(port)) need one session instead of two (the role M(esxilab.iperf.paired_test) probes each host once per play).
    What can change between tasks (the private directory, the servers this module started, the listening ports, the
    process checks before a kill) is always checked by the action''s own script on the host.'
  - The client result is parsed as P(esxilab.iperf.iperf_parse#filter) does. iperf3 runs with C(-J) (JSON).
    iperf2 runs with text output, C(-f b) and, from iperf2 2.1 on, C(-e). Text output is used because iperf2
    2.1.8 leaves the UDP server report (the receiver's loss and jitter) out of its CSV output (C(-y C)); C(-f b) makes
    byte counts and rates exact integers (the default adaptive units keep three significant digits); C(-e) adds the
    TCP retry counts. iperf2 before 2.1 (for example 2.0.5 on ESXi) prints the legacy format, which has no C(-e).
  - 'Servers left by an interrupted run (Ctrl-C, a killed controller) - O(mode=server) finds a server this module
    started still running on its port and stops it before it starts, with a warning and an RV(leftovers) line
    naming its pid, port and start time, when the run that started it
    is gone - each server''s pidfile names its run (the controller''s host name, the process id and start time of
    its C(ansible-playbook)), and that process no longer runs on this controller. The pid is checked to be that
    server (the pidfile lists it and its command line is C(<binary> -s -p <port>)) right before the C(kill). A
    server of a run that still goes on, of this same run, or of another controller is never killed - the start
    is refused (V(port_in_use)) naming the holder, its start and when its guard ends it, and the command that
    stops it. A port held by a process that is not a server of this module is refused naming the port and, where
    C(ss -p)/C(netstat -p)/C(esxcli) tell, the process that holds it.'
  - 'What ends a server - O(mode=stop) (the role M(esxilab.iperf.paired_test) stops every server in its
    C(always:)); with O(one_off=true) (iperf3) the server itself, right after its one test, and, when no client
    came, iperf3''s C(--idle-timeout) (3.11 and later, O(server_timeout) seconds); in every case its guard after
    O(server_timeout) seconds; and the next O(mode=server) on that port after an interrupted run (above). The role
    runs every iperf3 server with O(one_off=true), as each serves one test per run; an iperf2 server (no one-off
    mode) ends by the stop, the guard or the next run.'
  - A failure is reported with a message that names the cause and the fix, and with everything known anyway
    (RV(command), RV(raw), RV(stderr), RV(result)).
  - 'Failures recognised, as RV(error_kind): V(refused) (no server on that port), V(unreachable) (no route),
    V(connect_timeout), V(resolve) (unknown host name), V(busy) (the server is running a test for another client),
    V(listener_not_permitted) (ESXi''s shipped iperf3 may not listen: use C(iperf3.copy)), V(port_in_use),
    V(bind_address) (the bind address is not on the host), V(not_iperf3_server) and V(not_iperf2_server) (iperf2 and
    iperf3 do not interoperate), V(server_gone) (the server closed the connection during the test),
    V(udp_no_server) (no iperf2 UDP server answered), V(timeout), V(exec_failed), V(iperf_error), V(no_result),
    V(bind_resolve) (the client''s O(bind) is a name that does not resolve), V(state_dir) (O(state_dir) or the
    private directory in it cannot be used safely; nothing was done), V(not_installed) (O(mode=probe) found no runnable
    binary of a family in O(require)), V(no_server) (O(mode=collect) found no server of this module on that port).'
options:
  mode:
    description:
      - V(server) starts a server in the background, V(client) runs one test, V(stop) stops servers this module
        started, V(probe) only reads what the host offers (RV(probe)), to be handed to later tasks as O(probe).
      - V(collect) serves clients outside the inventory (an external peer - a Windows box with C(iperf3.exe), an
        appliance) - it waits until O(clients) client tests have ended at the server this module started on O(port)
        (and O(bind)), the server has exited (iperf3 C(--one-off), O(one_off)) or O(deadline) seconds have passed,
        then stops the server and returns what the server measured, one RV(tests) item per client test.
        Once a second it reads the bytes the server's log gained since the last read (only those), and parses the
        whole log only when enough lines that may end a test (iperf3's next banner, iperf2's totals) came to make
        up the tests still missing. No server of this module on that port (no pidfile and no log of it) fails at
        once with RV(error_kind=no_server), naming the port and the fix (start one with O(mode=server) first).
      - An option that does not apply to the mode is an error, so a mistake is not silently ignored.
    type: str
    required: true
    choices: [server, client, stop, probe, collect]
  tool:
    description:
      - Which iperf to run. When unset, the family of the binary found (see O(binary)).
      - iperf2 and iperf3 do not interoperate; set the same O(tool) on the server and client tasks of a pair.
      - Not used with O(mode=stop).
    type: str
    choices: [iperf3, iperf2]
  binary:
    description:
      - Path (or name on the host's E(PATH)) of the iperf binary to run.
      - 'When unset, the first runnable of, in this order: C(/usr/lib/vmware/vsan/bin/iperf3.copy),
        C(/opt/iperf/bin/iperf.copy), C(/usr/lib/vmware/vsan/bin/iperf3), C(/opt/iperf/bin/iperf),
        C(/usr/lib/vmware/vsan/bin/iperf.copy), C(/usr/lib/vmware/vsan/bin/iperf), then C(iperf3) and C(iperf) on
        E(PATH); restricted to the family of O(tool) when it is set. Each candidate is probed with C([ -x ]) and run
        once with C(-v), as M(esxilab.iperf.iperf_facts) does.'
      - 'On ESXi the copied binaries come first because the shipped C(/usr/lib/vmware/vsan/bin/iperf3) cannot listen
        (C(unable to start listener for connections: Operation not permitted)); M(esxilab.iperf.esxi_iperf_install)
        makes the copy.'
    type: str
  port:
    description:
      - Server port to listen on (O(mode=server)), to connect to (O(mode=client)), or of the server to stop
        (O(mode=stop)).
      - Default the tool's own, 5201 for iperf3 and 5001 for iperf2. Use one port per client/server pair; a server
        runs one test at a time.
    type: int
  bind:
    description:
      - Address to bind to (C(-B)). For a server, the address it listens on; for a client, the source address of
        the test (on ESXi, the address of the vmk interface to test).
      - With O(mode=stop), stop only the server bound to this address (together with O(port)); servers on the same
        port but different addresses of one host are told apart by it.
    type: str
  protocol:
    description:
      - V(udp) runs a UDP test (C(-u)); set O(bandwidth) too, iperf's UDP default is 1 Mbit/s.
      - With O(mode=server) it matters for iperf2 only, whose server listens for one protocol; an iperf3 server
        serves both.
    type: str
    choices: [tcp, udp]
    default: tcp
  interval:
    description:
      - Seconds between interval reports (C(-i)); V(0) turns them off. The intervals are in RV(result.intervals).
        Negative, NaN and infinite values are refused.
    type: float
  window:
    description:
      - Socket buffer size (C(-w)), for example V(256K), in the tool's own notation.
    type: str
  extra_args:
    description:
      - More iperf arguments, appended last and verbatim (each item one argument, quoted for the shell).
      - 'A list, one item per argument: V([-w, 256K]), not the string V(-w 256K); a string is refused (Ansible
        would otherwise split it at commas and pass V(-w 256K) to iperf as one argument).'
      - Arguments that change the output format (C(-y), C(-f), C(-J), C(--json-stream)) break the parsing of the
        result; use the options of this module instead.
      - 'Refused, because they break the module''s own files and process handling or make iperf read or write a file
        the task does not name (as the task''s user, often root): C(-D)/C(--daemon) (the server detaches from the
        process the module started, so O(mode=stop) and the guard lose it), C(-I)/C(--pidfile) (iperf3 writes a
        pidfile of its own; iperf2''s C(-I) reads standard input), C(--logfile) (the output goes elsewhere: no banner,
        no result), C(-F)/C(--file)/C(--fileinput) (the client sends a file''s content, an iperf3 server writes the
        received data into that file), iperf2''s C(-o)/C(--output). Long options are refused by any unambiguous
        prefix too (C(--log)), as iperf accepts those, and short ones inside a cluster of flags (C(-sD)).'
    type: list
    elements: str
    default: []
  require:
    description:
      - With O(mode=probe), the iperf families (V(iperf3), V(iperf2)) the host must be able to run; the task fails
        with RV(error_kind=not_installed), naming the missing family and the fix, when one has no runnable binary
        (the probe is returned all the same).
    type: list
    elements: str
    choices: [iperf3, iperf2]
    default: []
  probe:
    description:
      - What an earlier O(mode=probe) task returned as RV(probe) on the same host, with the same O(binary) (both
        unset, or the same path). Then O(mode=server) and O(mode=client) skip their own probe and need one session on
        the host.
      - It is checked (its shape, and that it was made for this task's O(binary)); a value of another host or a binary
        removed since makes the start fail with the error the host gives (for example V(exec_failed)).
      - With O(mode=stop), O(port) and no O(pid), only its shell tools count (whatever O(binary) it was made for) and
        the stop needs one session; its script reads the pidfile of that port itself and makes the same checks before
        any kill. Not used with O(mode=collect) and O(mode=probe).
    type: dict
  reading:
    description:
      - With O(mode=server), O(mode=stop) and O(mode=client), read the NIC counters and the CPU times as
        M(esxilab.iperf.iperf_facts) does with its O(esxilab.iperf.iperf_facts#module:nic_counters_of) and
        O(esxilab.iperf.iperf_facts#module:cpu_times), in the same SSH session - just before the server starts, just
        before it is stopped, or just after the client's test - returned as RV(reading). No session of its own;
        where a reading takes seconds (esxcli on ESXi), a second session made at the same time as a start or a stop
        is quicker.
      - With O(mode=probe), read the link speeds of O(reading.link_speed_of) as
        M(esxilab.iperf.iperf_facts) does with its O(esxilab.iperf.iperf_facts#module:link_speed_of), just before
        the probe, in its session.
      - Not made in check mode, except with O(mode=probe) (it only reads, as the probe does).
    type: dict
    suboptions:
      nic_counters_of:
        description:
          - The addresses whose interface counters are read (each address's NIC, as
            O(esxilab.iperf.iperf_facts#module:nic_counters_of)).
        type: list
        elements: str
        default: []
      cpu_times:
        description:
          - Read the host's CPU times (C(/proc/stat)), as O(esxilab.iperf.iperf_facts#module:cpu_times).
        type: bool
        default: false
      link_speed_of:
        description:
          - The addresses whose link speed is read (each address's NIC, as
            O(esxilab.iperf.iperf_facts#module:link_speed_of)); with O(mode=probe).
        type: list
        elements: str
        default: []
  state_dir:
    description:
      - 'Directory on the host under which the module keeps its files, in a private directory
        C(<state_dir>/esxilab-iperf-<uid>) (C(<uid>) the numeric id of the user the task runs as on the host, 0
        with C(become)): the server''s pidfile C(esxilab-iperf-<port>[-<bind>].pid) and log
        C(esxilab-iperf-<port>[-<bind>].log), and the client''s temporary output
        C(esxilab-iperf-<shell pid>.out), C(.err), C(.timedout).'
      - The private directory is created with mode 0700. It is refused, with an error naming it and the fix, when it
        is a symbolic link, not a directory, owned by another user, or has another mode; O(state_dir) itself is
        refused when it does not exist, when every user may write to it and it has no sticky bit, or when it
        belongs to a user other than root and the task's user (in both cases another user could swap the private
        directory). Nothing is started or stopped then.
      - Servers are found again (by O(mode=server) to stop a leftover of an interrupted run or refuse a second one
        on the same port, and by O(mode=stop)) through the pidfiles of the private directory only; a pidfile also
        names the run that started the server (C(owner)), when (C(started), the host's epoch time) and when its
        guard ends it (C(until)). Servers started as another user, or by a release before
        1.1.0 (pidfiles directly in O(state_dir)), are not found; their guard still ends them after O(server_timeout).
      - Must be an absolute path of letters, digits and C(._+-/).
    type: str
    default: /tmp
  server_timeout:
    description:
      - Seconds after which a server started by this module is killed, whatever it is doing, so that a forgotten
        server dies by itself. A shell guard started with the server does it; it works with every tool and version.
      - Choose it longer than the whole test series; stop the server earlier with O(mode=stop).
      - With O(one_off=true) and iperf3 3.11 or later, it is also passed as C(--idle-timeout), so the server exits
        when no client came within that time (before 3.11, C(--idle-timeout) restarts the server instead of ending
        it and is not used).
      - V(0) disables the guard's time limit (the server then runs until stopped, or until the next O(mode=server)
        on its port after the run that started it was interrupted).
    type: int
    default: 600
  one_off:
    description:
      - iperf3 only (3.0.11 or later) - the server exits after its first test (C(-1)), so it ends by itself soon
        after its test even when nobody stops it (an interrupted run).
    type: bool
    default: false
  server:
    description:
      - Address (or name) of the server to test against. Required with O(mode=client).
    type: str
  duration:
    description:
      - Test length in seconds (C(-t)). Default the tool's own, 10 s. Mutually exclusive with O(bytes).
    type: int
  bytes:
    description:
      - Bytes to send instead of a duration (C(-n)). Mutually exclusive with O(duration).
    type: int
  streams:
    description:
      - Parallel streams (C(-P)), 1 to 128.
    type: int
  reverse:
    description:
      - The server sends, the client receives (C(-R)). iperf3, and iperf2 from 2.1 on; an older iperf2 (2.0.5 on
        ESXi) is refused rather than run in the wrong direction.
    type: bool
    default: false
  bidir:
    description:
      - Both directions at once - iperf3 C(--bidir) (3.7 or later), iperf2 C(-d) (dual test; the server connects
        back to the client, so the client's firewall must let it in).
      - Mutually exclusive with O(reverse).
    type: bool
    default: false
  bandwidth:
    description:
      - Target rate in bits per second (C(-b)), for example V(100M), V(1G), or V(0) for unlimited (iperf3, and
        iperf2 UDP). iperf3 also takes a burst count (V(100M/10)).
      - iperf2 before 2.0.13 treats C(-b) as "UDP test", so with O(protocol=tcp) it is refused there.
    type: str
  length:
    description:
      - Read/write buffer length, or UDP datagram size (C(-l)), for example V(1460) or V(128K).
    type: str
  mss:
    description:
      - TCP maximum segment size (C(-M)).
    type: int
  omit:
    description:
      - iperf3 only - seconds at the start left out of the totals (C(-O)); they stay in RV(result.intervals) with
        C(omitted=true).
    type: int
  zerocopy:
    description:
      - iperf3 only - send with C(sendfile()) (C(-Z)). (iperf2's C(-Z) is something else and is refused.)
    type: bool
    default: false
  tos:
    description:
      - IP type-of-service byte of the test packets (C(-S)), 0 to 255, for example V(184) (DSCP EF, C(0xb8)). iperf3
        also sets it on the server's packets of a O(reverse) or O(bidir) test. Unset - the system's default (0).
    type: int
  connect_timeout:
    description:
      - iperf3 only (3.2 or later) - milliseconds to wait for the control connection (C(--connect-timeout)).
    type: int
  timeout:
    description:
      - Seconds the client may run before it is killed and the task fails with RV(error_kind=timeout); counted from
        the start of iperf, after the O(start_at) barrier.
      - Default O(duration) (10 s when unset) + O(omit) + 30 s; 600 s for a test limited by O(bytes). At most 86400
        (one day); not a number (NaN) or infinite is refused.
      - GNU C(timeout) wraps iperf when the host has it; elsewhere (busybox, ESXi) a shell watchdog kills it.
    type: float
  start_at:
    description:
      - Epoch time (seconds, fractions allowed) at which iperf starts; the host's shell waits until then. Give every
        client of a concurrent test the same value (for example now + 5 s) to start them together.
      - The time is read from the HOST's clock; keep the hosts in sync (NTP).
      - 'How closely the start is hit depends on the host''s shell (see RV(barrier.method)). With a sub-second clock
        (C($EPOCHREALTIME) in bash 5 and recent busybox, or GNU C(date +%s.%N)) and a sub-second sleep (C(sleep 0.1) in
        GNU coreutils and some busybox builds, or busybox C(usleep) as on ESXi), iperf starts a few milliseconds after
        the target (reading the clock and starting a process; 2 to 4 ms measured on Linux). With only whole seconds
        (busybox C(date)) the script busy-waits for the target second to begin and then sleeps the fraction, again to a
        few milliseconds, or, without any sub-second sleep, starts at the next whole second.'
      - Waiting counts neither in O(timeout) nor in RV(result); it does make the task last that long.
      - Values that look like milliseconds, lie more than an hour ahead, are not positive or are not a finite number,
        are refused.
    type: float
  labels:
    description:
      - Copied into RV(result.labels), for example the host pair or the run number, so results can be grouped later.
    type: dict
    default: {}
  clients:
    description:
      - O(mode=collect) - how many client tests to wait for. An iperf3 server serves one test at a time, so the
        clients come one after the other; an iperf2 server serves them at once.
    type: int
  deadline:
    description:
      - O(mode=collect) - seconds to wait, from the start of the task, for the O(clients) client tests to end. A test
        still running then is cut by the stop (its result is incomplete); a client that did not come has no result.
      - The server's O(server_timeout) should be longer, or its guard ends the server first.
      - More than 0 and at most 86400 (one day); for a longer wait run several collect tasks one after the other.
    type: float
  peer:
    description:
      - O(mode=collect) - the address the external client comes from. Client tests from other addresses are
        returned but not counted (RV(tests[].counted)). Unset - every client counts.
    type: str
  pid:
    description:
      - With O(mode=stop), the server to stop, by process id. It must be a server this module started (a pidfile in
        the private directory under O(state_dir) lists it, and the process still runs the recorded binary with
        C(-s -p <port>)); another running process is refused, never killed.
      - With neither O(pid) nor O(port), every server this module started on the host is stopped.
    type: int
  peer_is_esxi:
    description:
      - 'O(mode=client) - the server is an ESXi host. When the server sends (O(reverse), or the server-to-client part
        of O(bidir)), the client''s iperf3 output carries the server''s C(TCP_INFO) figures, and ESXi''s bundled iperf3
        cannot read C(TCP_INFO): its retransmit counts are garbage (for example 8634728). With V(true) they are set
        to null in RV(result) with a warning. The server''s congestion window is never in the client''s output.'
      - The role C(esxilab.iperf.paired_test) sets it from the servers' RV(host_is_esxi).
      - A client that runs on ESXi itself, or a run with C(--get-server-output) from an ESXi server, is recognised
        from the output (C(system_info) says C(VMkernel)) without this option.
    type: bool
    default: false
  latency:
    description:
      - 'O(mode=client) - latency under load: ping the server address (O(server)) while the client idles before the
        transfer and during it (iputils C(ping -n) on Linux, C(vmkping) on ESXi), and return the round-trip times of
        both windows in RV(latency) (p50, p90, p99, max; see C(docs/latency.md)).'
      - V(true) - one probe every 0.2 s, an idle window as long as the transfer. A dictionary sets C(interval)
        (seconds between probes, 0.01 to 10; Linux ping allows an unprivileged user 0.002 s or more, iputils before
        20210202 0.2 s or more), C(idle) (seconds of the idle window, 0 to 3600; 0 - none; unset - the transfer's
        O(duration) + O(omit)) and C(interface) (ESXi - the VMkernel adapter for C(vmkping -I), for example V(vmk1);
        Linux - C(ping -I), default the O(bind) address).
      - The idle ping starts when the script reaches the host and runs before O(start_at) in the background, so the
        start time is never delayed; a ping still running at O(start_at) is stopped there (RV(latency.idle.cut)).
        Without O(start_at) the client waits for the idle window to end, then starts iperf. The role
        C(esxilab.iperf.paired_test) plans the idle window into the start delay (setting C(latency)).
      - Each ping is stopped only by the process id the script started it with, before that child is reaped.
    type: raw
extends_documentation_fragment:
  - esxilab.iperf.attributes
  - esxilab.iperf.attributes.action
  - esxilab.iperf.attributes.platform_posix_raw
attributes:
  check_mode:
    support: partial
    details:
      - O(mode=client) is skipped in check mode (a test cannot be simulated); the probe still runs, so a missing
        binary or an option the tool version lacks is reported, and RV(command) shows what would run.
      - O(mode=server) and O(mode=stop) report what they would start or stop (and refuse a port in use) without
        doing it.
      - O(mode=collect) is skipped in check mode (nothing is waited for, the server is not stopped).
  diff_mode:
    support: none
    details:
      - Nothing on the host is configured; there is nothing to diff.
notes:
  - 'ESXi: the shipped C(/usr/lib/vmware/vsan/bin/iperf3) fails as a server with C(unable to start listener for
    connections: Operation not permitted); a copy (C(iperf3.copy)) may listen. On ESXi 8, C(execInstalledOnly) may
    block binaries that no VIB installed, such as a copy made by hand; see M(esxilab.iperf.esxi_iperf_install).'
  - 'ESXi: the shipped iperf3 cannot read C(TCP_INFO) and prints C(getsockopt - Function not implemented); its
    retransmit counts are then meaningless, so they are set to C(null) in RV(result) with a warning.'
  - The server is started with C(trap '' HUP) (what C(nohup) does), so it survives the end of the SSH session; its
    output goes to the log, so the task does not wait for it. A client run returns C(changed=false) - a test
    changes nothing on the hosts.
  - 'Security: the module never trusts files another user can write. Its pidfiles, logs and client output live
    in a private directory (see O(state_dir)); every file there is removed and created again with C(set -C)
    (noclobber), so a symbolic link is never followed. Pidfiles hold only C(pid), C(guard), C(tool), C(port),
    C(bind) and C(binary), written as C(printf ''%s\n'') arguments; paths are derived from the file names, never
    from content, and a log is shown only when it is a regular file of the private directory. Before any C(kill),
    the stop script checks again that the pidfile lists the pid and that the process''s command line still shows
    C(<binary> -s -p <port>) (C(/proc/<pid>/cmdline) on Linux; C(ps -o pid,args) of busybox elsewhere; ESXi''s
    own C(ps -c) format is not verified on a real host); the guard is killed only when its command line is the
    guard of that server. A pid reused by another process is left alone (status V(reused)).'
  - O(binary) may not hold line breaks or other control characters.
  - Opening the firewall for the test port is not done by this module (on ESXi the firewall blocks iperf's ports
    unless a ruleset allows them).
seealso:
  - module: esxilab.iperf.iperf_facts
    description: Find the iperf binaries of a host and read result files there.
  - plugin: esxilab.iperf.iperf_parse
    plugin_type: filter
    description: Parse iperf output into the same normalized result.
  - plugin: esxilab.iperf.iperf_stats
    plugin_type: filter
    description: Statistics over a list of results.
"""

EXAMPLES = r"""
---
- name: Probe the host once (binaries, versions, clock and sleep tools)
  esxilab.iperf.iperf_run:
    mode: probe
  register: iperf_probe

- name: Start a server without probing again (one session)
  esxilab.iperf.iperf_run:
    mode: server
    port: 5201
    probe: "{{ iperf_probe.probe }}"

- name: Start an iperf3 server on the ESXi vmk address (killed after 15 minutes if forgotten)
  esxilab.iperf.iperf_run:
    mode: server
    tool: iperf3
    bind: 192.168.50.11
    port: 5201
    server_timeout: 900
  register: iperf_server

- name: Wait up to 5 minutes for two clients outside the inventory (iperf3.exe on Windows), then stop the server
  esxilab.iperf.iperf_run:
    mode: collect
    port: 5201
    bind: 192.168.50.11
    clients: 2
    deadline: 300
  register: external

- name: Run a 10 s TCP test with 4 streams from the other host
  esxilab.iperf.iperf_run:
    mode: client
    tool: iperf3
    server: 192.168.50.11
    port: 5201
    bind: 192.168.50.12
    duration: 10
    streams: 4
    labels:
      pair: esx2-to-esx1
  delegate_to: esx2
  register: iperf_test

- name: Show the throughput the receiver measured
  ansible.builtin.debug:
    msg: "{{ (iperf_test.result.bits_per_second / 1e9) | round(2) }} Gbit/s"

- name: UDP at 1 Gbit/s, server to client (reverse)
  esxilab.iperf.iperf_run:
    mode: client
    server: 192.168.50.11
    protocol: udp
    bandwidth: 1G
    reverse: true
    duration: 5
  delegate_to: esx2

- name: Start the clients of several pairs at the same moment (barrier)
  esxilab.iperf.iperf_run:
    mode: client
    server: "{{ pair_server }}"
    port: "{{ pair_port }}"
    duration: 20
    start_at: "{{ barrier_time }}"
  vars:
    barrier_time: "{{ lookup('ansible.builtin.pipe', 'date +%s') | int + 10 }}"

- name: Latency under load - ping the server while idle for 5 s, then during a 10 s transfer (ESXi - vmkping -I vmk1)
  esxilab.iperf.iperf_run:
    mode: client
    server: 192.168.50.11
    duration: 10
    latency:
      interval: 0.2
      idle: 5
      interface: vmk1
  register: loaded
  delegate_to: esx2

- name: Show the idle and loaded median round-trip times
  ansible.builtin.debug:
    msg: "idle p50 {{ loaded.latency.idle.p50_ms }} ms, loaded p50 {{ loaded.latency.loaded.p50_ms }} ms"

- name: Stop the server started above
  esxilab.iperf.iperf_run:
    mode: stop
    port: 5201

- name: Stop every server this module started on the host (cleanup)
  esxilab.iperf.iperf_run:
    mode: stop
"""

RETURN = r"""
probe:
  description:
    - What the probe found on the host, to hand to later tasks on that host as O(probe).
    - C(caps) (C(clock), C(nap), C(gnu_timeout), C(esxi), C(bash)) - the shell's clock and sleep tools (C(bash) - the
      path of a C(bash) whose C($EPOCHREALTIME) works, else empty; the client runs its script under it, so its
      barrier and start time read the clock without a fork, and with GNU C(timeout) it is started before the barrier
      and let go at the start time); C(binaries) - each
      candidate binary as M(esxilab.iperf.iperf_facts) lists it (C(path), C(family), C(version), C(runnable),
      C(error), C(supports)); C(missing) - candidates not found; C(candidates) - what was looked for (O(binary), else
      the default list).
  returned: mode is probe
  type: dict
  sample: {caps: {clock: epochrealtime, nap: fracsleep, gnu_timeout: true, esxi: false, bash: ""}, binaries: [],
    missing: [],
    candidates: [iperf3]}
msg:
  description: What was done, or why it failed (the cause and the fix).
  returned: always
  type: str
  sample: "connection refused by 192.168.50.11:5201: is a server listening on 192.168.50.11:5201? Start one with
    mode=server (tool=iperf3, port=5201) on that host, and check that the port is right"
tool:
  description: The iperf family run.
  returned: mode is server or client
  type: str
  sample: iperf3
tool_version:
  description: Version of the binary, from its C(-v) banner.
  returned: mode is server or client
  type: str
  sample: "3.12"
binary:
  description: Path of the binary run on the host.
  returned: mode is server or client
  type: str
  sample: /usr/lib/vmware/vsan/bin/iperf3.copy
port:
  description: The server port used.
  returned: mode is server or client
  type: int
  sample: 5201
command:
  description:
    - The exact iperf command line run on the host (quoted for C(sh)); in check mode, the one that would run.
    - It runs inside a small wrapper script (barrier, clock reading, timeout, output capture).
  returned: mode is server or client
  type: str
  sample: /usr/bin/iperf3 -c 192.168.50.11 -p 5201 -J -t 10 -P 4 -B 192.168.50.12
pid:
  description: Process id of the server (null in check mode).
  returned: mode is server
  type: int
  sample: 48213
leftovers:
  description:
    - Servers an interrupted run of this module left on the port and this start stopped first (or, in check mode,
      would stop), one line each, naming the run that left it, the server's pid, its port and its start time (see
      the sample). Also given as warnings.
  returned: mode is server
  type: list
  elements: str
  sample: ["stopped a server left by an interrupted run (ansible pid 9457 on ctl, which is gone): pid 10025, port
      5201, started at 2026-12-06T15:57:24Z"]
guard_pid:
  description: Process id of the shell guard that enforces O(server_timeout) and removes the pidfile.
  returned: mode is server and a server was started
  type: int
  sample: 48214
bind:
  description: The address the server listens on (null for all addresses).
  returned: mode is server
  type: str
  sample: 192.168.50.11
log:
  description: Path on the host of the server's output (its text log).
  returned: mode is server
  type: str
  sample: /tmp/esxilab-iperf-0/esxilab-iperf-5201.log
status:
  description:
    - V(listening) when the server printed its C(Server listening) banner into the fresh log of this start within a
      second of starting and, where the host can tell (see RV(listener)), a socket listens on the port;
      V(running) when the process runs but that was not seen yet (iperf3 before 3.1.5 buffers its log).
  returned: mode is server and a server was started
  type: str
  sample: listening
listener:
  description:
    - V(seen) when a socket listened on the port when the start returned (Linux C(/proc/net/tcp), C(udp) for an
      iperf2 UDP server; else C(ss) or C(netstat)); V(unchecked) where the host has none of them (ESXi, whose
      C(esxcli) listing takes seconds; the banner in the start's own fresh log is the sign there); V(none) when
      no listener was seen.
  returned: mode is server and a server was started
  type: str
  sample: seen
reading:
  description:
    - The reading asked for by O(reading), as M(esxilab.iperf.iperf_facts) returns it - C(ansible_facts) with
      C(iperf_nic_counters), C(iperf_cpu_times) and C(iperf_link_speeds) - or C(failed) and C(msg) when it did not
      complete. Not set when the probe, the start, the stop or the client failed.
  returned: O(reading) is set, mode is probe (also in check mode), server, stop or client (not in check mode)
  type: dict
  sample:
    changed: false
    ansible_facts:
      iperf_cpu_times: {kind: linux, uptime: 885.7, cpus: {cpu: [35856, 0, 20692, 114484, 313, 0, 2415, 20, 0, 0]}}
host_is_esxi:
  description: Whether the host is ESXi (C(uname -s) prints C(VMkernel)). Pass a server's value to the clients as
    O(peer_is_esxi).
  returned: mode is server or client
  type: bool
  sample: false
server_timeout:
  description: Seconds after which the guard kills the server (0 = never).
  returned: mode is server
  type: int
  sample: 600
raw:
  description:
    - O(mode=client) - the client's own output (standard output; iperf3 JSON or iperf2 text), unchanged.
    - O(mode=server) - the server's log as it was right after the start.
    - O(mode=collect) - the server's whole log when it was stopped (or exited); each RV(tests) item's result holds
      its own piece as C(raw).
  returned: mode is server, client or collect, when something ran
  type: str
stderr:
  description: The client's standard error (iperf2 errors, ESXi's C(getsockopt) messages).
  returned: mode is client and the client ran
  type: str
rc:
  description: Exit status of the client (of GNU C(timeout) when it wrapped the client). iperf3 before 3.14 exits 0
    even when it failed with C(-J), so the status alone proves nothing.
  returned: mode is client and the client ran
  type: int
  sample: 0
timed_out:
  description: Whether the client was killed for exceeding O(timeout).
  returned: mode is client and the client ran
  type: bool
  sample: false
timeout:
  description: The limit applied to the client, in seconds.
  returned: mode is client and the client ran
  type: float
  sample: 40.0
started_at:
  description:
    - Epoch time read on the client host just before iperf was started (after the O(start_at) barrier).
    - Its resolution is RV(started_at_resolution); the reading precedes the start of iperf by the time it takes to
      start a process (a millisecond or so on Linux), and iperf's first packet comes later still (connection
      set-up).
  returned: mode is client and the client ran
  type: float
  sample: 1717171717.123456
started_at_source:
  description: How RV(started_at) was read - C(EPOCHREALTIME) (the shell's variable, microseconds), C(date +%s.%N)
    (nanosecond digits) or C(date +%s) (whole seconds; busybox C(date) has no C(%N)).
  returned: mode is client and the client ran
  type: str
  sample: EPOCHREALTIME
started_at_resolution:
  description: Resolution of RV(started_at) in seconds (C(1e-06), C(1e-09) or C(1.0)).
  returned: mode is client and the client ran
  type: float
  sample: 1e-06
barrier:
  description: How the O(start_at) barrier went.
  returned: mode is client and O(start_at) is set
  type: dict
  contains:
    start_at:
      description: The requested start time.
      type: float
    arrived_at:
      description: The host's time when its script reached the barrier (whole seconds on a whole-second clock).
      type: float
    late_by:
      description: RV(started_at) minus O(start_at), in seconds; null when the clock has only whole seconds.
      type: float
    method:
      description: How the host waited, in words.
      type: str
      sample: whole-second sleep, then usleep to the target (clock EPOCHREALTIME)
latency:
  description:
    - Latency under load (O(latency)) - the round-trip times to O(server) while idle before the transfer and during
      it. Every figure is read from the ping's output or null.
  returned: mode is client, O(latency) is set and the client ran
  type: dict
  contains:
    tool:
      description: C(ping) (Linux) or C(vmkping) (ESXi).
      type: str
    target:
      description: The address pinged (O(server)).
      type: str
    interface:
      description: The interface or address given to C(-I); null when none was.
      type: str
    interval:
      description: Seconds between probes.
      type: float
    idle:
      description: The idle window before the transfer; null when O(latency) has C(idle=0).
      type: dict
      contains:
        command:
          description: The ping command line.
          type: str
        seconds:
          description: The window planned, in seconds (the idle window; the transfer's length).
          type: float
        rc:
          description: The ping's exit status.
          type: int
        transmitted:
          description: Probes sent, from the ping's summary; null when it printed none (RV(latency.idle.cut)).
          type: int
        received:
          description: Probes answered (one per sequence number).
          type: int
        duplicates:
          description: Replies beyond the first of a probe (C(DUP!)); no samples.
          type: int
        lost:
          description: RV(latency.idle.transmitted) minus RV(latency.idle.received); null without a summary.
          type: int
        lost_percent:
          description: The loss in percent of the probes sent; null without a summary.
          type: float
        cut:
          description: The ping was stopped before it printed its summary (the start time came, or iperf failed).
          type: bool
        samples:
          description: Round-trip times read (one per answered probe).
          type: int
        min_ms:
          description: The smallest round-trip time in ms; null without a reply.
          type: float
        p50_ms:
          description: Nearest-rank median in ms; null with fewer than 2 samples.
          type: float
        p90_ms:
          description: Nearest-rank 90th percentile in ms; null with fewer than 10 samples.
          type: float
        p99_ms:
          description: Nearest-rank 99th percentile in ms; null with fewer than 100 samples.
          type: float
        max_ms:
          description: The largest round-trip time in ms; null without a reply.
          type: float
        error:
          description: Why the window has no figure (no reply, the tool is missing); null otherwise.
          type: str
        raw:
          description: The ping's own output.
          type: str
    loaded:
      description: The window during the transfer (the same keys as RV(latency.idle)).
      type: dict
    p50_increase_ms:
      description: The loaded p50 minus the idle p50, in ms; null when either is null.
      type: float
result:
  description:
    - The normalized result (C(schema_version=1)) parsed from RV(raw), as P(esxilab.iperf.iperf_parse#filter)
      returns it, plus C(labels) when O(labels) is set. Rates are bit/s, byte counts bytes, times seconds; a
      figure the output does not carry is null, never guessed.
    - The headline RV(result.bits_per_second) is the receiver's total when the output has a usable one, else the
      sender's.
    - Null when the output could not be parsed (RV(raw) and RV(stderr) keep what was printed).
  returned: mode is client and the client ran
  type: dict
  contains:
    tool:
      description: C(iperf2) or C(iperf3).
      type: str
    tool_version:
      description: Version printed in the output itself (null when it prints none, as iperf2 does).
      type: str
    side:
      description: C(client) or C(server), as the output says.
      type: str
    protocol:
      description: C(tcp) or C(udp).
      type: str
    reverse:
      description: Whether the server sent (C(-R)).
      type: bool
    bidir:
      description: Whether both directions ran at once.
      type: bool
    streams:
      description: Number of parallel streams.
      type: int
    sent:
      description: The sender's totals (C(bytes), C(bits_per_second), C(seconds), C(retransmits)).
      type: dict
    received:
      description: The receiver's totals.
      type: dict
    bits_per_second:
      description: The headline rate.
      type: float
    udp:
      description:
        - C(jitter_ms), C(lost_packets), C(packets), C(lost_percent) from the receiver (UDP only).
        - iperf2 with several streams - the per-stream Server Reports summed (C(jitter_ms) the largest stream's).
      type: dict
    rtt:
      description:
        - TCP round-trip time in microseconds C({min_us, mean_us, max_us}) over the streams this host sent (iperf3
          JSON); C(null) when not printed or when the sender is ESXi (as with C(retransmits)).
      type: dict
    intervals:
      description: The interval reports, oldest first.
      type: list
      elements: dict
    per_stream:
      description: Totals per stream.
      type: list
      elements: dict
    complete:
      description: False when the run was cut short or a side's totals are missing (see C(warnings)).
      type: bool
    warnings:
      description: Why the result is incomplete or a figure was dropped.
      type: list
      elements: str
    error:
      description: The tool's own error message, if it printed one.
      type: str
    labels:
      description: The O(labels).
      type: dict
probe_started_at:
  description: O(mode=probe) - when the task began on the controller (epoch seconds).
  returned: mode is probe
  type: float
  sample: 1764979200.125
error_kind:
  description:
    - What went wrong, as a keyword (see the description); with O(mode=server) also V(port_in_use) and
      V(server_exited) (the server ended right after its start for a reason not recognised; see RV(raw)); with
      O(mode=collect) V(no_server).
  returned: when the task failed for a recognised cause
  type: str
  sample: refused
came:
  description: O(mode=collect) - how many counted client tests came (ended or cut by the stop).
  returned: mode is collect and it waited
  type: int
  sample: 2
reason:
  description: O(mode=collect) - why the wait ended - V(all_came), V(server_exited) (a one-off server after its
    test, or a server that died) or V(deadline).
  returned: mode is collect and it waited
  type: str
  sample: all_came
waited:
  description: O(mode=collect) - seconds waited.
  returned: mode is collect and it waited
  type: float
  sample: 14.2
polls:
  description: O(mode=collect) - how often the server's log was read (once a second; each read fetches only the bytes
    it gained).
  returned: mode is collect and it waited
  type: int
  sample: 15
server_stop:
  description: O(mode=collect) - how the server ended - V(stopped), V(killed), V(exited) (it had ended by itself,
    e.g. one-off) or what RV(stopped[].status) says.
  returned: mode is collect and it waited
  type: str
  sample: stopped
tests:
  description:
    - O(mode=collect) - the client tests the server logged, oldest first, each parsed from its own piece of the log.
    - 'The figures are the server''s: C(side) of each RV(tests[].result) is V(server), and its headline
      C(bits_per_second) is what the server received (or sent, when the client ran C(-R)).'
  returned: mode is collect and it waited
  type: list
  elements: dict
  contains:
    index:
      description: 1-based position in the log.
      type: int
    group:
      description:
        - 1-based number of the server's test the client test was part of. iperf2 clients that ran at the same
          time share one (the server logs them as one test; they are told apart by address), so their rates add up;
          client tests in different groups came one after the other.
      type: int
    peer:
      description: The client's address as the server printed it.
      type: str
    counted:
      description: Whether it came from O(peer) (always true without O(peer)).
      type: bool
    extra:
      description: A counted test beyond the first O(clients).
      type: bool
    ended:
      description: Whether the server logged its end before the stop; false - cut by the stop.
      type: bool
    result:
      description: The normalized result of the server's piece of the log, with that piece as C(raw) and C(labels).
      type: dict
stopped:
  description: The servers O(mode=stop) acted on.
  returned: mode is stop
  type: list
  elements: dict
  contains:
    pid:
      description: Process id of the server.
      type: int
    port:
      description: Its port.
      type: int
    tool:
      description: Its tool.
      type: str
    log:
      description: Path of its log on the host.
      type: str
    status:
      description: V(stopped) (ended by SIGTERM), V(killed) (needed SIGKILL), V(gone) (had already ended - a one-off
        server after its test; its stale pidfile was removed, or its guard had removed it), V(reused) (the pid now
        belongs to another process, which was left alone; the stale pidfile was removed), V(notours) (its pidfile
        changed meanwhile; left alone), V(would stop) (check mode).
      type: str
    raw:
      description:
        - The server's whole log; parse it with P(esxilab.iperf.iperf_parse#filter) and C(all=true) to get every test
          the server saw.
        - On ESXi (RV(host_is_esxi)) the C(Retr) and C(Cwnd) figures of the server's own sending (reverse tests) in
          this log are garbage (ESXi's bundled iperf3 cannot read C(TCP_INFO)); do not use them.
      type: str
"""
