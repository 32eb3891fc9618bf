# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation of ``esxilab.iperf.iperf_facts``; the work is done by plugins/action/iperf_facts.py."""

from __future__ import annotations

DOCUMENTATION = r"""
module: iperf_facts
short_description: Find iperf2 and iperf3 binaries and read iperf results on hosts without Python
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Gathers C(ansible_facts.iperf_tools), every iperf2 and iperf3 binary on the host with its version and what it
    supports, and C(ansible_facts.iperf_results), normalized results parsed from iperf output files on the host or
    from text given in O(content).
  - The host needs no Python. The module runs one plain POSIX C(sh) command per task over the connection (the
    busybox shell of ESXi 6.7, 7.x and 8.x is enough) and parses everything on the controller.
  - 'Binaries looked for: C(iperf), C(iperf2), C(iperf3), C(iperf3.copy) and C(iperf.copy) in every directory of the
    host''s E(PATH); the ESXi locations C(/usr/lib/vmware/vsan/bin/iperf3), C(/usr/lib/vmware/vsan/bin/iperf3.copy)
    (bundled iperf3 and the copy that can listen), C(/opt/iperf/bin/iperf) and C(/opt/iperf/bin/iperf.copy) (the
    iperf 2.0.5 community VIB); and the paths in O(paths). A binary found under several names of the same directory
    (for example C(/bin) linked to C(/usr/bin)) is listed once, under its real directory.'
  - Each binary is run once with C(-v) (both families accept it and exit at once). A binary is runnable when it prints
    an iperf version banner; the exit status is not used, because iperf2 exits 1 after printing its version.
  - Results are parsed as P(esxilab.iperf.iperf_parse#filter) does, but a log holding several tests gives one result
    per test.
  - 'A source that is not iperf output is a parse error (see O(on_parse_error)), also JSON that is not an iperf3 C(-J)
    document, for example C({"foo": [1, 2, 3]}). Error messages name the source and what was expected; they never
    quote the content of a file.'
options:
  gather_tools:
    description:
      - Look for iperf binaries and set C(ansible_facts.iperf_tools).
    type: bool
    default: true
  paths:
    description:
      - More binaries to probe, as absolute paths on the host, for example an iperf3 copied to a datastore.
      - A path given here that does not exist is listed with RV(ansible_facts.iperf_tools[].runnable=false) and the
        reason in RV(ansible_facts.iperf_tools[].error).
    type: list
    elements: str
    default: []
  src:
    description:
      - Files holding iperf output on the host (text, C(-J) JSON, C(--json-stream), iperf2 CSV), as paths or globs.
      - Globs (C(*), C(?), C([...])) are expanded by the host's shell; every other character is taken literally. A
        leading C(~/) is the connection user's home directory.
      - Every file is read with C(cat) in the same command that probes the binaries.
      - A path that does not exist, a glob that matches no file, or a file that is not iperf output is handled as
        O(on_parse_error) says.
      - Must be a list, even for one file.
      - Mutually exclusive with O(content).
    type: list
    elements: str
  content:
    description:
      - The text of iperf output given directly (or an iperf3 C(-J) document already decoded with
        P(ansible.builtin.from_json#filter)), for example the C(stdout) of a task that ran iperf.
      - Its results get C(source=content).
      - Mutually exclusive with O(src).
    type: raw
  labels:
    description:
      - Labels added to every result under RV(ansible_facts.iperf_results[].labels), for example the host pair or the
        run number, so results can be grouped later.
    type: dict
    default: {}
  on_parse_error:
    description:
      - What to do with a source that cannot be read as iperf output (missing file, glob matching nothing, empty file,
        directory, text that is not iperf output).
      - A run that failed but printed iperf's own error (for example C(unable to connect to server)) is not a parse
        error; it is a result with RV(ansible_facts.iperf_results[].error) set.
    type: str
    choices:
      fail: Fail the task, naming every such source and the cause.
      skip: Leave such sources out of RV(ansible_facts.iperf_results) and warn.
      keep: Keep an item for each such source with C(error) set, C(bits_per_second=null) and the text in C(raw) (cut
        to O(raw_max_bytes)), and warn.
    default: fail
  raw_max_bytes:
    description:
      - How much of each source's text a result keeps in RV(ansible_facts.iperf_results[].raw), in bytes (UTF-8; the
        cut never splits a character). The figures are always parsed from the whole text.
      - A longer text is cut after its first O(raw_max_bytes) bytes and the result says so with
        RV(ansible_facts.iperf_results[].raw_truncated=true) and the full size in
        RV(ansible_facts.iperf_results[].raw_bytes).
      - V(0) keeps no text (RV(ansible_facts.iperf_results[].raw) is C(null)). Must not be negative.
      - The default, 64 KiB, holds the whole output of a usual run (a 60 s C(-J) run with 1 s intervals is about
        40 KiB) and keeps a large log from filling the facts.
    type: int
    default: 65536
  link_speed_of:
    description:
      - IP addresses of the host whose interface's link speed to read into RV(ansible_facts.iperf_link_speeds), in the
        same command (Linux - the interface that holds the address, found with C(ip -o addr show to), and its
        C(/sys/class/net/<interface>/speed)). Used by the role C(esxilab.iperf.paired_test) for C(% of line rate).
      - On ESXi (where C(esxcli network nic list) answers) - the VMkernel adapter holding the address
        (C(esxcli network ip interface ipv4 list)), its vSwitch (C(ip interface list)) and the lowest speed among that
        vSwitch's uplinks whose link is up (C(vswitch standard list), C(nic list)).
      - A speed of V(-1), an unreadable file (a link that is down, a device without a speed), a host without C(ip)
        or an address no interface holds gives C(speed_mbps=null) with the reason - never a guess.
    type: list
    elements: str
    default: []
  nic_counters_of:
    description:
      - IP addresses of the host whose NIC counters and driver to read into RV(ansible_facts.iperf_nic_counters), in the
        same command. Read-only; the role C(esxilab.iperf.paired_test) reads them around its runs
        (O(esxilab.iperf.paired_test#role:main:paired_test_nic_counters)) for the report's NIC columns.
      - Linux - the interface holding the address (as for O(link_speed_of)), C(ip -s -s -j link show dev <if>) (the
        text form where C(ip) has no C(-j)), C(ethtool -i <if>) and C(ethtool -S <if>) where C(ethtool) is installed,
        and C(tc -s qdisc show dev <if>) where C(tc) is; when that interface is a Linux bridge
        (C(/sys/class/net/<if>/bridge)) or an Open vSwitch bridge's port (C(ovs-vsctl port-to-br), C(ovs-vsctl) on
        the PATH), also each port of the bridge - C(ip -s -s -j link show dev <port>), C(ethtool -i <port>) and its
        link speed.
      - ESXi - the uplinks whose link is up of the standard vSwitch behind the VMkernel adapter holding the address,
        each with C(esxcli network nic stats get -n <vmnic>), C(esxcli network nic get -n <vmnic>) and the driver's
        private statistics C(localcli --plugin-dir /usr/lib/vmware/esxcli/int networkinternal nic privstats get -n
        <vmnic>), read where it prints the layout recorded from Intel drivers (per-queue ring counters, C(LFC) and
        C(PFC) pause frames); not available (C(driver_stats=null)) where it is missing, fails or prints another layout.
      - A counter is a number the tool printed or absent; nothing is guessed. Neither C(ip) nor C(esxcli network nic
        stats get) prints pause-frame counters; C(ethtool -S) (Linux) and the ESXi private statistics do, where the
        driver counts them.
    type: list
    elements: str
    default: []
  cpu_times:
    description:
      - Read the host's CPU time counters into RV(ansible_facts.iperf_cpu_times), in the same command - the C(cpu)
        lines of C(/proc/stat) (the whole host and each CPU) and C(/proc/uptime). Read-only; the role
        C(esxilab.iperf.paired_test) reads them at the start and after the stop of every run
        (O(esxilab.iperf.paired_test#role:main:paired_test_host_cpu)) for the host CPU in its records and report.
      - A host without a readable C(/proc/stat) and an ESXi host (C(uname -s) prints C(VMkernel); its CPU is read
        through the vSphere API instead) give C(kind=null) and the reason - never a guess.
      - In a network namespace C(/proc/stat) is the whole machine's.
    type: bool
    default: false
extends_documentation_fragment:
  - esxilab.iperf.attributes
  - esxilab.iperf.attributes.info_module
  - esxilab.iperf.attributes.facts
  - esxilab.iperf.attributes.action
  - esxilab.iperf.attributes.platform_posix_raw
notes:
  - The command runs with the task's C(become) settings, so files only root can read are readable with
    C(become=true). With a pseudo-terminal (the ssh connection uses one for C(become)) line endings are restored, so
    file content is parsed as it is on disk.
  - Bound the task with the C(timeout) keyword if a binary on the host may hang when run with C(-v).
seealso:
  - plugin: esxilab.iperf.iperf_parse
    plugin_type: filter
    description: Parse iperf output on the controller.
  - plugin: esxilab.iperf.iperf_stats
    plugin_type: filter
    description: Statistics over the results.
"""

EXAMPLES = r"""
---
- name: Find iperf on an ESXi host (no Python needed there)
  esxilab.iperf.iperf_facts:

- name: Pick an iperf3 that can write JSON
  ansible.builtin.set_fact:
    iperf3_bin: >-
      {{ ansible_facts.iperf_tools | selectattr('runnable') | selectattr('supports.json')
         | map(attribute='path') | first }}

- name: Read every result written on the host, labelled with the pair
  esxilab.iperf.iperf_facts:
    gather_tools: false
    src:
      - /tmp/iperf/esxi01-esxi02-*.json
    labels:
      pair: esxi01-esxi02

- name: Mean throughput over those runs
  ansible.builtin.debug:
    msg: "{{ ansible_facts.iperf_results | esxilab.iperf.iperf_stats }}"

- name: Parse the output of a task that ran iperf, keeping a failed parse as an item
  esxilab.iperf.iperf_facts:
    gather_tools: false
    content: "{{ client_run.stdout }}"
    on_parse_error: keep
"""

RETURN = r"""
ansible_facts:
  description: Facts added to the host.
  returned: always
  type: dict
  contains:
    iperf_link_speeds:
      description:
        - One item per address of O(link_speed_of), keyed by the address - C(interface) (the one holding it, or
          C(null)), C(speed_mbps) (the link speed in Mb/s, or C(null)), C(source) (the file read) and C(reason) (why
          there is no speed; C(null) when there is one).
        - A veth device reports 10000 Mb/s.
      returned: when O(link_speed_of) is not empty
      type: dict
      sample: {"198.18.0.11": {interface: eth0, speed_mbps: 10000, source: /sys/class/net/eth0/speed, reason: null}}
    iperf_nic_counters:
      description:
        - One item per address of O(nic_counters_of), keyed by the address - C(interface) (the Linux interface or the
          ESXi VMkernel adapter holding it, or C(null)), C(kind) (C(linux) or C(esxi)), C(source) (the commands read),
          C(reason) (why nothing was read; C(null) when counters were), C(speed_mbps) (the link speed, as
          RV(ansible_facts.iperf_link_speeds) reads it; for a bridge without a speed of its own, its slowest port's)
          and C(nics); C(bridge) (Linux, only when the interface is a bridge) - C(kind) (C(linux) or C(ovs)), C(name)
          and C(ports), each port a further item of C(nics) with C(bridge) set to the bridge's name.
        - C(nics) - one item per NIC read (Linux - the interface; ESXi - each active uplink) with C(name), C(driver),
          C(firmware), C(version), C(bus_info) (C(null) where not printed), C(speed_mbps), C(link_up), C(counters)
          (counter name as the Linux kernel names it - C(rx_dropped), C(tx_dropped), C(rx_errors), C(tx_errors),
          C(rx_crc_errors), ... - to the number printed), C(driver_stats) (Linux C(ethtool -S) - the driver's own
          keys, as printed; empty where the driver has none or C(ethtool) is missing; ESXi C(networkinternal nic
          privstats get) - per-queue fields summed, for example C(tx_busy), C(tx_restart_queue), C(link_xoff_rx),
          C(priority_3_xon_tx); C(null) where not available, the reason in C(problems)), C(qdisc) (Linux C(tc -s qdisc)
          - C(dropped), C(overlimits), C(requeues) of the root qdisc and C(ingress_dropped) of an ingress qdisc),
          C(other) (fields not understood, as printed), C(problems)
          and C(raw) (the outputs read, C(stats) and C(info); ESXi also C(privstats)).
      returned: when O(nic_counters_of) is not empty
      type: dict
      sample:
        198.18.0.11:
          interface: eth0
          kind: linux
          source: ip -s -s -j link show dev eth0
          reason: null
          speed_mbps: 10000
          nics:
            - {name: eth0, driver: null, firmware: null, version: null, bus_info: null, speed_mbps: 10000,
               link_up: true, counters: {rx_packets: 37, tx_packets: 31, rx_dropped: 0, tx_dropped: 44},
               other: {}, problems: ["no ethtool on the host: driver and firmware not read"], raw: {}}
    iperf_cpu_times:
      description:
        - The CPU time counters of the host when O(cpu_times=true) - C(kind) (C(linux), or C(null) when nothing was
          read), C(source) (C(/proc/stat)), C(stat) (the C(cpu) lines of C(/proc/stat) as printed), C(uptime)
          (seconds since boot, from C(/proc/uptime); C(null) when not read) and C(reason) (why nothing was read;
          C(null) when read).
        - Two readings give the CPU use between them (the run record's C(cpu)).
      returned: when O(cpu_times=true)
      type: dict
      sample:
        kind: linux
        source: /proc/stat
        stat: "cpu  4686823 228 1793367 3934008 11798 0 264903 2842 0 0\ncpu0 2338705 142 896674 1971510 6876 0 131595
          1420 0 0\ncpu1 2348118 85 896693 1962498 4922 0 133307 1421 0 0\n"
        uptime: 53649.16
        reason: null
    iperf_tools:
      description: Every iperf binary found, in E(PATH) order, then the ESXi locations, then O(paths).
      returned: when O(gather_tools=true)
      type: list
      elements: dict
      contains:
        path:
          description: Path of the binary, with its directory resolved (symbolic links of directories followed).
          type: str
          sample: /usr/lib/vmware/vsan/bin/iperf3.copy
        family:
          description: C(iperf2) or C(iperf3), from the version banner; C(null) when not runnable.
          type: str
          sample: iperf3
        version:
          description: The version printed, for example C(3.12), C(3.9-nrf) or C(2.0.5); C(null) when not runnable.
          type: str
          sample: "3.12"
        supports:
          description:
            - What this binary can do, from its family and version; every value is C(null) when not runnable.
          type: dict
          contains:
            json:
              description: C(-J) JSON output (every iperf3).
              type: bool
            json_stream:
              description: C(--json-stream) (iperf3 3.17 and later).
              type: bool
            bidir:
              description: Both directions at once (iperf3 C(--bidir) from 3.7; iperf2 dual test C(-d)).
              type: bool
            get_server_output:
              description: C(--get-server-output) (iperf3 3.0.5 and later).
              type: bool
            csv:
              description: C(-y C) CSV reports (iperf2).
              type: bool
        runnable:
          description: The binary ran and printed an iperf version banner.
          type: bool
        error:
          description:
            - Why the binary is not runnable (does not exist, not executable, or what it printed instead of a
              version, for example C(Operation not permitted) under ESXi 8 C(execInstalledOnly)); C(null) when runnable.
          type: str
    iperf_results:
      description:
        - One normalized result (C(schema_version=1)) per test found in O(src) or O(content); see
          P(esxilab.iperf.iperf_parse#filter) for every key.
        - With O(on_parse_error=keep), sources that could not be parsed give items with only C(source), C(labels),
          C(raw), C(raw_truncated), C(raw_bytes), C(tool=null), C(bits_per_second=null), C(complete=false),
          C(warnings), C(error) and C(parse_error=true).
      returned: when O(src) or O(content) is set
      type: list
      elements: dict
      contains:
        source:
          description: The file the result was read from, or C(content).
          type: str
          sample: /tmp/iperf/esxi01-esxi02-1.json
        labels:
          description: The O(labels) given.
          type: dict
        raw:
          description:
            - The text the result was parsed from (the test's own part of a multi-test log), cut to its first
              O(raw_max_bytes) bytes; C(null) with O(raw_max_bytes=0) or when the source could not be read.
          type: str
        raw_truncated:
          description:
            - Whether RV(ansible_facts.iperf_results[].raw) holds less than the whole text (see O(raw_max_bytes)).
          type: bool
        raw_bytes:
          description: Size in bytes (UTF-8) of the whole text the result was parsed from, kept or not.
          type: int
        tool:
          description: C(iperf2) or C(iperf3).
          type: str
        tool_version:
          description: Version printed in the output; C(null) when not printed.
          type: str
        format:
          description: C(json), C(text) or C(csv).
          type: str
        side:
          description: C(client) or C(server), when the output says so.
          type: str
        protocol:
          description: C(tcp) or C(udp).
          type: str
        sent:
          description: Sender totals C({bytes, bits_per_second, seconds, retransmits}).
          type: dict
        received:
          description: Receiver totals C({bytes, bits_per_second, seconds, retransmits}).
          type: dict
        bits_per_second:
          description: Headline rate in bit/s, the receiver's total when usable, else the sender's; C(null) when none.
          type: float
        udp:
          description:
            - UDP receiver figures C({jitter_ms, lost_packets, packets, lost_percent}); C(null) for TCP.
            - iperf2 with several streams - the per-stream Server Reports summed (C(jitter_ms) the largest stream's).
          type: dict
        rtt:
          description:
            - TCP round-trip time in microseconds C({min_us, mean_us, max_us}) over the streams this host sent (iperf3
              JSON); C(null) when not printed or when the sender is ESXi (as with C(retransmits)).
          type: dict
        streams:
          description: Number of parallel streams seen.
          type: int
        intervals:
          description: The summed interval series, oldest first.
          type: list
          elements: dict
        complete:
          description: False when the run was cut short or a side's totals are missing.
          type: bool
        warnings:
          description: Why figures are missing or were not trusted.
          type: list
          elements: str
        error:
          description: The tool's own error message, or why the source could not be parsed; C(null) otherwise.
          type: str
"""
