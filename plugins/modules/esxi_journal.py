# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation of ``esxilab.iperf.esxi_journal``; the work is done by plugins/action/esxi_journal.py."""

from __future__ import annotations

DOCUMENTATION = r"""
module: esxi_journal
short_description: Read, restore or clear the restore journal esxi_firewall and esxi_iperf_install keep on ESXi
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - M(esxilab.iperf.esxi_firewall) and M(esxilab.iperf.esxi_iperf_install) record on the host, before their first
    change, what undoes it - the firewall's enabled state, default action and rulesets, the C(execInstalledOnly) or
    C(appDom) value, the copies made, the VIB installed. The earliest recorded value wins. This module reads that
    journal, puts back what it records, or drops it.
  - O(mode=restore) puts back everything the journal records for O(scope) (exec policy and copies, then rulesets,
    default action and the firewall's enabled state), verifies it, clears those entries and, when nothing is pending
    any more, stops the dead-man timer. Nothing pending - nothing is run and the task reports no change.
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
    type: str
    choices: [read, restore, clear]
    default: read
  scope:
    description:
      - V(firewall) - the firewall entries; V(install) - exec policy, copies and VIB.
    type: list
    elements: str
    choices: [firewall, install]
    default: [firewall, install]
  remove_vib:
    description:
      - With O(mode=restore), also remove a VIB the journal records as installed by esxi_iperf_install. Without it the
        VIB is kept (with a warning) and its entry cleared.
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
pending:
  description: The entries of O(scope) found before the task, by scope (C(firewall), C(install)).
  returned: always
  type: dict
  sample: {"firewall": {"enabled": true}}
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
