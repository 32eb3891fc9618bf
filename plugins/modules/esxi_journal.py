# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation of ``esxilab.iperf.esxi_journal``; the work is done by plugins/action/esxi_journal.py."""

from __future__ import annotations

DOCUMENTATION = r"""
module: esxi_journal
short_description: Read, record, restore or clear the restore journal of an ESXi or Linux host
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - M(esxilab.iperf.esxi_firewall) and M(esxilab.iperf.esxi_iperf_install) record on the host, before their first
    change, what undoes it - the firewall's enabled state, default action and rulesets, the C(execInstalledOnly) or
    C(appDom) value, the copies made, the VIB installed. The earliest recorded value wins. This module reads that
    journal, puts back what it records, or drops it.
  - On a Linux host O(mode=record) journals the MTU of O(links) as it is now, before a playbook changes it
    (C(playbooks/mtu-compare.yml)); O(mode=restore) puts it back with C(ip link). M(esxilab.iperf.guest_network)
    also journals the address it adds, that the interface was down and the persistent setting it creates;
    O(mode=restore) removes them (setting, address, then MTU and state).
  - O(mode=restore) puts back everything the journal records for O(scope) (exec policy and copies, then rulesets,
    default action and the firewall's enabled state, then interface MTUs), verifies it, clears those entries and,
    when nothing is pending any more, stops the dead-man timer. Nothing pending - nothing is run and the task reports
    no change.
  - Best effort, then loud - every entry is tried; one that cannot be put back (a ruleset the host no longer has, a
    value the collection never writes, a failed command) is kept in the journal, the others are put back and cleared,
    and the task fails at the end naming what is left and why (RV(left)).
  - A window another live run holds is refused, naming that run, unless O(takeover=true). A dead-man timer that fired
    is reported as a warning (when, what it did; RV(fired)) and then acknowledged by O(mode=restore).
  - The esxi_firewall and esxi_iperf roles run this before anything else, so a window left open by an interrupted
    earlier run is put back (with a warning) before the original state could be read as the changed one.
    C(playbooks/restore.yml) runs it on every host of the inventory.
  - Over the host's shell; ESXi needs no Python.
options:
  mode:
    description:
      - V(read) - report the journal; changes nothing.
      - V(restore) - put back what it records for O(scope), then clear those entries.
      - V(clear) - drop the entries for O(scope) without restoring (after putting the host back by hand).
      - V(record) - journal the MTU of O(links) as it is now (Linux hosts; the earliest value wins).
    type: str
    choices: [read, record, restore, clear]
    default: read
  scope:
    description:
      - V(firewall) - the firewall entries; V(install) - exec policy, copies and VIB; V(link) - Linux interface MTUs,
        and the address, state and persistent setting M(esxilab.iperf.guest_network) changed.
    type: list
    elements: str
    choices: [firewall, install, link]
    default: [firewall, install, link]
  links:
    description:
      - With O(mode=record), the Linux interfaces whose MTU is about to change (names of 1-15 letters, digits, C(.),
        C(_), C(-)).
    type: list
    elements: str
    default: []
  remove_vib:
    description:
      - With O(mode=restore), also remove a VIB the journal records as installed by esxi_iperf_install. Without it the
        VIB and its journal entry are kept, so a later O(mode=restore) with O(remove_vib=true) (C(playbooks/restore.yml
        -e esxilab_restore_remove_vib=true)) can still remove it. A kept VIB is not a pending window - no run is
        refused for it, and a restore without O(remove_vib) leaves it alone.
    type: bool
    default: false
extends_documentation_fragment:
  - esxilab.iperf.attributes
  - esxilab.iperf.attributes.action
  - esxilab.iperf.attributes.platform_posix_raw
  - esxilab.iperf.journal
attributes:
  check_mode:
    support: full
    details:
      - Reads the journal and reports what O(mode=restore) or O(mode=clear) would do; changes nothing.
  diff_mode:
    support: full
    details:
      - The diff shows the pending entries of O(scope) before and after.
notes:
  - The journal's layout, where it lives and why, the dead-man timer and what is not yet confirmed on a real ESXi host
    are described in C(docs/safety.md) in the collection.
seealso:
  - module: esxilab.iperf.esxi_firewall
    description: Writes the firewall entries.
  - module: esxilab.iperf.esxi_iperf_install
    description: Writes the exec-policy, copy and VIB entries.
"""

EXAMPLES = r"""
---
- name: Put back whatever an interrupted run left changed on the ESXi host
  esxilab.iperf.esxi_journal:
    mode: restore
  register: esxi_journal_restored

- name: Show what is pending, changing nothing
  esxilab.iperf.esxi_journal:
    mode: read
    journal_dir: /vmfs/volumes/datastore1/.esxilab-iperf

- name: Journal a Linux interface's MTU before changing it (root, or become)
  esxilab.iperf.esxi_journal:
    mode: record
    links: [eth1]
    journal_dir: /var/lib/esxilab-iperf
  become: true

- name: Forget the firewall entries after the firewall was put back by hand
  esxilab.iperf.esxi_journal:
    mode: clear
    scope: [firewall]
"""

RETURN = r"""
journal:
  description: The journal as read (after the task with O(mode=restore) or O(mode=clear)).
  returned: success
  type: dict
  contains:
    directory:
      description: The journal directory on the host.
      type: str
      sample: /scratch/esxilab-iperf
    exists:
      description: Whether the directory exists.
      type: bool
    pending:
      description: Whether anything is recorded.
      type: bool
    firewall:
      description: The recorded firewall values, in the RV(esxilab.iperf.esxi_firewall#module:restore) format.
      type: dict
      sample: {"enabled": true}
    install:
      description: The recorded install values, in the RV(esxilab.iperf.esxi_iperf_install#module:restore) format.
      type: dict
      sample: {"created_files": ["/usr/lib/vmware/vsan/bin/iperf3.copy"], "exec_installed_only_previous": 1}
    deadman:
      description: The dead-man timer - C(running), C(pid) and C(deadline) (epoch seconds).
      type: dict
      sample: {"running": true, "pid": 12345, "deadline": 1796170000}
    link:
      description: >-
        The recorded interface MTUs (key C(mtu), a mapping of interface name to MTU) and the other interface settings
        (key C(config), interface name to C(addr) - the address added, C(down) - it was down, C(persist) - the
        persistent setting created).
      type: dict
      sample: {"mtu": {"eth1": 1500}, "config": {"eth1": {"addr": "198.18.60.12/24", "down": "true"}}}
    rejected:
      description: Entries that are not what the collection writes (never applied, kept), with the reason.
      type: dict
    owner:
      description: The run that holds the window (C(run=TOKEN owner=HOST:PID:START)), or null.
      type: str
    fired:
      description: The record a dead-man timer left when it fired (see RV(fired)), or null.
      type: dict
pending:
  description: The entries of O(scope) found before the task, by scope (C(firewall), C(install), C(link)).
  returned: always
  type: dict
  sample: {"firewall": {"enabled": true}}
left:
  description: What could not be put back and is kept in the journal - entry and reason.
  returned: always
  type: dict
  sample: {"firewall.ruleset.iperfVib": "the host has no ruleset 'iperfVib' any more"}
fired:
  description: >-
    A dead-man timer that fired and restored the host without a controller - C(at) (epoch seconds), C(run) (the run's
    token) and C(log) (the last lines of C(deadman.log)); null when none fired since the last restore.
  returned: always
  type: dict
holder:
  description: >-
    Who holds the window - V(none), V(mine) (this run), V(live) (another run still working), V(gone) (an interrupted
    run, recovered by O(mode=restore)).
  returned: always
  type: str
recorded:
  description: With O(mode=record), what was journaled now (an interface already journaled keeps its earliest value).
  returned: success
  type: dict
  sample: {"link": {"mtu": {"eth1": 9000}}}
restored:
  description: What O(mode=restore) put back, by scope.
  returned: always
  type: dict
  sample: {"firewall": {"enabled": true}}
commands:
  description: The commands the restore ran, in order.
  returned: always
  type: list
  elements: str
  sample: ["esxcli network firewall set --enabled true"]
diff:
  description: The pending entries before and after.
  returned: success
  type: dict
"""
