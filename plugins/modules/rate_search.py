# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation of ``esxilab.iperf.rate_search``; the work is done by plugins/action/rate_search.py."""

from __future__ import annotations

DOCUMENTATION = r"""
module: rate_search
short_description: Find the highest UDP rate per frame size with loss at most a threshold (RFC 2544 style)
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - For each frame size of O(frame_sizes), a binary search of the offered UDP rate between O(min_mbps) and
    O(max_mbps) to O(resolution_mbps) - the highest rate whose trial of O(trial_seconds) lost at most O(loss_percent)
    of its packets (default 0, zero loss). The result gives per frame size the rate in Mbit/s (of frames and of UDP
    payload) and in packets per second, the loss at that rate, and every trial made.
  - 'A frame size is the Ethernet frame with FCS, as RFC 2544 counts it (64 to 1518 bytes at MTU 1500): the UDP
    payload iperf sends (C(-l)) is the frame less 46 bytes (Ethernet header 14, FCS 4, IPv4 20, UDP 8) - 64 B is
    18 B of payload, 1518 B is 1472 B. The search offers a frame rate (RV(results.results[].rate_mbps), whole frames
    in Mbit/s) and gives iperf the payload rate of the same packets per second (C(-b),
    RV(results.results[].payload_mbps)). Preamble and inter-frame gap (20 bytes per frame) are not counted.'
  - 'Each trial is the collection''s own O(mode=client) of M(esxilab.iperf.iperf_run) (C(-u -l PAYLOAD -b RATE -t
    SECONDS -i 0)) over this task''s connection against the iperf3 server at O(server):O(port), which must be running
    (the role C(esxilab.iperf.rate_search) starts it on the server host and stops it afterwards). The trials run one
    after the other inside this one task, so the search costs one Ansible task however many trials it makes.'
  - 'A trial passes when iperf''s receiver counts (C(lost_packets) / C(packets)) give at most O(loss_percent), the
    sender reached the offered rate (less O(shortfall_percent)) and the receiver got what was sent less the counted
    loss (less O(shortfall_percent)). A sender that falls short fails it as C(sender) (the rate was not offered); a
    queue that holds the excess until the end of a short trial, or a receiver too busy to read in time, as C(short).
    Both rest on timing, so such a trial is repeated once and the second counts. No rate the path did not carry
    passes. Every figure is iperf''s; a trial without loss figures (iperf failed, a TCP result) ends the search with
    no rate for that frame size and the ones after it, and the task fails after writing what it has.'
  - The first trial offers O(max_mbps); when it passes, the search of that frame size ends there
    (RV(results.results[].bound) C(max_mbps) - the path may carry more). Otherwise the rate lies between the
    highest passing and the lowest failing rate, at most O(resolution_mbps) apart, when it ends (C(resolution)); when
    no rate passed, the rate is null (C(none)).
  - Every setting is checked before a trial runs, all problems in one message naming the option, the role variable and
    the fix - a frame size above the path's largest frame (O(mtu) + 18) or below 64, a negative threshold, a zero
    resolution; an unknown option is named with the closest valid one.
  - With O(dest), writes C(rate-search.json) (RV(results)), C(rate-search.csv) (one row per frame size),
    C(rate-search-trials.csv) (every trial), C(rate-search.md) and the plots C(rate-search-mbps.png) (rate vs frame
    size) and C(rate-search-pps.png) (packets/s vs frame size) on the controller, through the report directory of
    M(esxilab.iperf.report_write) (its manifest; the two may share a directory). Without matplotlib the plots are
    skipped with a warning.
  - Sets the fact C(rate_search_results) (the same document as RV(results)).
options:
  mode:
    description:
      - V(search) runs the trials; V(plan) only checks the settings and returns RV(plan) (nothing runs on the host).
      - In check mode the task plans and runs no trial.
    type: str
    choices: [search, plan]
    default: search
  server:
    description: Address of the iperf3 server the trials send to (the server host's test address).
    type: str
    required: true
  port:
    description: Port of the iperf3 server.
    type: int
    default: 5201
  bind:
    description: Source address of the trials (C(-B)); on ESXi, the address of the VMkernel NIC to send from.
    type: str
  binary:
    description: The iperf3 binary on this host, as O(esxilab.iperf.iperf_run#module:binary).
    type: str
  state_dir:
    description: Directory for M(esxilab.iperf.iperf_run)'s private files on this host.
    type: str
    default: /tmp
  frame_sizes:
    description:
      - Ethernet frame sizes in bytes, with FCS (RFC 2544), each from 64 to O(mtu) + 18; searched smallest first.
    type: list
    elements: int
    default: [64, 128, 256, 512, 1024, 1280, 1518]
  mtu:
    description:
      - The path's IPv4 MTU, 576 to 9216. Frame sizes above O(mtu) + 18 are refused (their packets would be
        fragmented). Check what the path carries with the role C(esxilab.iperf.path_mtu) first.
    type: int
    default: 1500
  loss_percent:
    description:
      - The loss a passing trial may have, in percent of its packets, from 0 (zero loss) to below 100 (for example
        V(0.1)).
    type: float
    default: 0.0
  shortfall_percent:
    description:
      - How far the sender's rate may fall below the offered rate, and the receiver's below the sender's less the
        packets iperf counted lost, in a passing trial, in percent, 0 to below 100. Covers iperf's pacing and the
        timing of a short trial; above it the trial fails as C(sender) or C(short).
    type: float
    default: 0.5
  trial_seconds:
    description:
      - Length of one trial in whole seconds, 1 to 3600 (RFC 2544 uses 60; a deep buffer hides a rate above the
        path's in a short trial).
    type: int
    default: 2
  resolution_mbps:
    description:
      - The search stops when the highest passing and the lowest failing rate are at most this far apart, in Mbit/s
        of frames; above 0.
    type: float
    default: 1.0
  min_mbps:
    description:
      - The lowest rate searched, Mbit/s of frames, 0 or more. Above 0 it is tried last when no higher rate passed.
    type: float
    default: 0.0
  max_mbps:
    description:
      - The highest rate searched and the first one tried, in Mbit/s of frames (the link speed, for example
        V(10000)).
    type: float
    required: true
  dest:
    description: Report directory on the controller for the files; none are written when unset.
    type: path
  name:
    description: Name of the search in the files and the plot titles.
    type: str
    default: rate-search
  client:
    description: Name of the sending host in the document (default the inventory name of the task's host).
    type: str
  force:
    description:
      - Write into O(dest) even when it holds files that are not of a report of ours (as
        O(esxilab.iperf.report_write#module:force)).
    type: bool
    default: false
extends_documentation_fragment:
  - esxilab.iperf.attributes
  - esxilab.iperf.attributes.action
  - esxilab.iperf.attributes.facts
attributes:
  check_mode:
    support: full
    details:
      - In check mode the settings are checked and the plan returned; no trial runs and no file is written.
  diff_mode:
    support: none
    details:
      - The search measures; it changes nothing on the hosts to diff.
  platform:
    support: full
    platforms: posix
    details:
      - The trials run iperf3 over the connection's plain shell (M(esxilab.iperf.iperf_run)); no Python on the host.
seealso:
  - module: esxilab.iperf.iperf_run
  - module: esxilab.iperf.report_write
notes:
  - The search assumes that loss grows with the rate. On a noisy path a rate above the result may pass in another
    trial; the result is always a rate that passed, and every trial is in RV(results.results[].trials).
"""

EXAMPLES = r"""
---
- name: Start the iperf3 server on the receiving host for the whole search
  esxilab.iperf.iperf_run:
    mode: server
    port: 5201
    server_timeout: 900
  delegate_to: vm1

- name: Search 64, 512 and 1518-byte frames on a 1 Gbit/s path, zero loss, 1 s trials, to 5 Mbit/s
  esxilab.iperf.rate_search:
    server: 192.168.50.11
    frame_sizes: [64, 512, 1518]
    max_mbps: 1000
    resolution_mbps: 5
    trial_seconds: 1
    dest: reports/rate-search
  delegate_to: vm2
  run_once: true

- name: Allow 0.1 % loss
  esxilab.iperf.rate_search:
    server: 192.168.50.11
    loss_percent: 0.1
    max_mbps: 10000
  delegate_to: vm2
  run_once: true
"""

RETURN = r"""
msg:
  description: What was found, or why the search failed (the option and the fix).
  returned: always
  type: str
  sample: "3 frame size(s) searched in 21 trial(s): 64 B 38.125 Mbit/s, 512 B 48.125 Mbit/s, 1518 B 49.375 Mbit/s"
plan:
  description: What the search makes at most - trials per frame size and in all, the seconds they take, and the
    server lifetime they need (C(server_timeout), for the server's start); the frame sizes with their payloads.
  returned: always, unless an option is wrong
  type: dict
  sample: {frame_sizes: [{frame_size: 64, payload_size: 18}], trials_per_size: 11, max_trials: 11, max_seconds: 77,
           server_timeout: 137}
results:
  description: The search, as C(rate-search.json) holds it and the fact C(rate_search_results).
  returned: mode is search, not in check mode
  type: dict
  contains:
    format:
      description: C(esxilab.iperf.rate-search).
      type: str
    version:
      description: Version of the document's shape (1).
      type: int
    complete:
      description: True when every frame size was searched to its end (no trial failed).
      type: bool
    settings:
      description: The checked settings (O(frame_sizes), O(mtu), O(loss_percent), O(shortfall_percent),
        O(trial_seconds), O(resolution_mbps), O(min_mbps), O(max_mbps)).
      type: dict
    results:
      description: One item per frame size, smallest first.
      type: list
      elements: dict
      contains:
        frame_size:
          description: Ethernet frame size in bytes, with FCS.
          type: int
        payload_size:
          description: UDP payload (iperf's C(-l)), the frame less 46 bytes.
          type: int
        rate_mbps:
          description: The highest offered rate that passed, in Mbit/s of frames; null when none passed or on error.
          type: float
        payload_mbps:
          description: The same rate as iperf's payload rate (C(-b)) in Mbit/s.
          type: float
        pps:
          description: The same rate in packets (frames) per second.
          type: float
        loss_percent:
          description: The loss of the passing trial at that rate (100 x lost / packets of iperf's receiver counts).
          type: float
        lost_packets:
          description: Packets lost in that trial (iperf's receiver count).
          type: int
        packets:
          description: Packets of that trial (iperf's receiver count).
          type: int
        received_mbps:
          description: The frame rate the receiver measured in that trial (Mbit/s).
          type: float
        above_mbps:
          description:
            - The lowest offered rate that failed; the limit lies between RV(results.results[].rate_mbps) and it.
              Null when max_mbps passed.
          type: float
        bound:
          description: V(max_mbps) (the first trial passed - the path may carry more), V(resolution) (the limit found to
            O(resolution_mbps)) or V(none) (no rate passed); null on error.
          type: str
        trials_made:
          description: How many trials the search of this frame size made.
          type: int
        error:
          description: Why the frame size has no rate (its trial failed, or an earlier one did); null otherwise.
          type: str
        trials:
          description: Every trial in the order made - C(rate_mbps), C(offered_bps) (iperf's C(-b)), C(offered_pps),
            C(verdict) (V(pass), V(loss), V(sender), V(short), V(error)), C(loss_percent), C(lost_packets), C(packets),
            C(sent_bps), C(received_bps), C(received_pps), C(received_mbps), C(error).
          type: list
          elements: dict
  sample: {format: esxilab.iperf.rate-search, version: 1, complete: true, results: [{frame_size: 1518,
           payload_size: 1472, rate_mbps: 49.375, payload_mbps: 47.876, pps: 4065.9, loss_percent: 0.0,
           bound: resolution, above_mbps: 50.0, trials_made: 8}]}
ansible_facts:
  description: The search as a fact.
  returned: mode is search, not in check mode
  type: dict
  contains:
    rate_search_results:
      description: The same document as RV(results).
      type: dict
files:
  description: The files written (full paths), when O(dest) is set.
  returned: mode is search and dest is set
  type: dict
  sample: {json: reports/rate-search/rate-search.json, csv: reports/rate-search/rate-search.csv,
           plots: [reports/rate-search/rate-search-mbps.png]}
plots_skipped:
  description: Why plots are missing (matplotlib missing, or no frame size has a rate), or null.
  returned: mode is search and dest is set
  type: str
"""
