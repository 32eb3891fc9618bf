# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation of ``esxilab.iperf.esxi_firewall``; the work is done by plugins/action/esxi_firewall.py."""

from __future__ import annotations

DOCUMENTATION = r"""
module: esxi_firewall
short_description: Turn the ESXi firewall off for a benchmark, or set its default action and rulesets, and restore it
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Sets the ESXi host firewall's enabled state and default action (C(esxcli network firewall set)) and enables or
    disables existing rulesets (C(esxcli network firewall ruleset set)), over the host's shell. ESXi needs no Python.
  - Reads the current state first and changes only what differs from the options given; options left out are left
    as they are.
  - Returns RV(restore), the options that undo exactly what this task changed; pass it to O(restore) in a later task
    (for example in an C(always) block) to put the firewall back.
  - After changing anything it reads the state again and fails if the host does not report what was asked.
  - The vSphere API cannot turn the ESXi firewall on or off (C(HostFirewallSystem) has no such method); this module
    uses C(esxcli) for that reason.
  - Tested against recorded C(esxcli) output of ESXi 6.7, 7.0 and 8.0 (the two- and four-column ruleset lists).
options:
  enabled:
    description:
      - Whether the firewall filters traffic. V(false) lets every connection in, including the iperf server port.
      - Left as it is when not given.
    type: bool
  default_action:
    description:
      - What the firewall does with traffic no enabled ruleset allows.
      - Left as it is when not given.
    type: str
    choices:
      PASS: Allow it (C(esxcli network firewall set --default-action true)).
      DROP: Drop it (C(--default-action false)), the ESXi default.
  rulesets:
    description:
      - Ruleset ids mapped to V(true) (enable) or V(false) (disable), for example C(vsanhealth-multicasttest), which
        on ESXi 6.x opens UDP port 5001 (iperf2's default port) in both directions.
      - Only rulesets the host already has can be used; an unknown id fails and the message lists the existing ones.
        None of the recorded ruleset lists (ESXi 6.x, 8.0) has an C(iperf) ruleset, and this module does not create
        rulesets (ESXi loads custom rulesets from XML files under C(/etc/vmware/firewall/); only a VIB keeps such a
        file across reboots).
      - From ESXi 8.0 Update 2 on, rulesets owned by a system service cannot be enabled or disabled ("Enable/Disable
        configurable" is false in C(esxcli network firewall ruleset list)); asking to change one fails before anything
        is changed. Use O(enabled=false) for the test instead.
      - Rulesets left out are left as they are.
    type: dict
  restore:
    description:
      - The RV(restore) value returned by an earlier C(esxi_firewall) task on the same host; applies it.
      - Mutually exclusive with O(enabled), O(default_action) and O(rulesets).
      - An empty mapping changes nothing.
    type: dict
extends_documentation_fragment:
  - esxilab.iperf.attributes
  - esxilab.iperf.attributes.action
  - esxilab.iperf.attributes.platform_posix_raw
  - esxilab.iperf.journal
  - esxilab.iperf.journal.deadline
attributes:
  check_mode:
    support: full
    details:
      - Reads the firewall and reports the commands it would run and the state it would leave, changing nothing.
  diff_mode:
    support: full
    details:
      - The diff shows the enabled state, the default action and the rulesets named in the task, before and after.
notes:
  - B(Restore journal.) Before its first change the task records on the host (O(journal_dir)) what undoes it, the
    earliest recorded value winning, and starts the dead-man timer (O(deadline)) for a firewall or exec-policy change.
    If the journal cannot be written, nothing is changed. With O(restore), the task also puts back what the journal
    records and then clears those entries. M(esxilab.iperf.esxi_journal) and C(playbooks/restore.yml) read and
    restore the journal after an interrupted run.
  - Every failure after the first command that changed the host returns RV(restore) and C(changed=true).
  - Runs C(esxcli) with the task's C(become) settings; on ESXi log in as C(root) (ESXi has no C(sudo)).
  - When the firewall is turned on, rulesets and the default action are set first and C(--enabled true) last; when
    it is turned off, C(--enabled false) goes first. No intermediate step opens more than the final state does.
  - If a command fails halfway, the task fails, lists the commands already applied and returns RV(restore) for them.
seealso:
  - module: esxilab.iperf.iperf_facts
    description: Find the iperf binaries on the host.
"""

EXAMPLES = r"""
---
- name: Open the ESXi host for the benchmark, then put the firewall back
  block:
    - name: Turn the firewall off
      esxilab.iperf.esxi_firewall:
        enabled: false
      register: esxi_firewall_open

    - name: Run the benchmark
      ansible.builtin.debug:
        msg: iperf runs here

  always:
    - name: Restore the firewall as it was
      esxilab.iperf.esxi_firewall:
        restore: "{{ esxi_firewall_open.restore | default({}) }}"

- name: Let iperf2 UDP tests in on ESXi 6.x through the vSAN multicast test ruleset (UDP 5001)
  esxilab.iperf.esxi_firewall:
    rulesets:
      vsanhealth-multicasttest: true

- name: Report the firewall state only (no option set changes nothing)
  esxilab.iperf.esxi_firewall:
  register: esxi_firewall_state
"""

RETURN = r"""
left:
  description:
    - With O(restore), what could not be put back and stays in the restore journal - entry and reason (for example a
      ruleset the host no longer has). The rest is put back, then the task fails naming these.
  returned: when something could not be put back
  type: dict
  sample: {}
journal_clear_failed:
  description:
    - With O(restore), true when the host was put back but the journal could not be cleared (a lost session, after 3
      attempts); every value put back by a command has already left the journal with it.
  returned: when clearing the journal failed
  type: bool
journal_restored:
  description:
    - With O(restore), what the restore journal on the host recorded and this task put back too (the journal's
      values win over O(restore) because they are the earliest).
  returned: when the journal recorded something
  type: dict
  sample: {}
previous:
  description:
    - The firewall as read before the task.
    - C(rulesets) holds the rulesets named in the task (C(null) for an id the host does not have).
  returned: success
  type: dict
  contains:
    enabled:
      description: Whether the firewall was enabled.
      type: bool
      sample: true
    default_action:
      description: The default action, C(PASS) or C(DROP).
      type: str
      sample: DROP
    loaded:
      description: The C(Loaded) field of C(esxcli network firewall get); C(null) if it was not printed.
      type: bool
      sample: true
    rulesets:
      description: Ruleset id to enabled, for the rulesets named in the task.
      type: dict
      sample: {"vsanhealth-multicasttest": false}
current:
  description:
    - The firewall after the task, read back from the host. In check mode, the state the task would leave.
    - Same keys as RV(previous).
  returned: success
  type: dict
  sample: {"enabled": false, "default_action": "DROP", "loaded": true, "rulesets": {}}
restore:
  description:
    - The options that undo what this task changed (only the keys it changed); give it to O(restore) later.
    - Empty when nothing changed.
  returned: always
  type: dict
  sample: {"enabled": true}
commands:
  description: The C(esxcli) commands run (in check mode, the ones that would run), in order.
  returned: always
  type: list
  elements: str
  sample: ["esxcli network firewall set --enabled false"]
diff:
  description: Before and after, as shown in diff mode.
  returned: success
  type: dict
  contains:
    before:
      description: C(enabled), C(default_action) and C(rulesets) before.
      type: dict
    after:
      description: C(enabled), C(default_action) and C(rulesets) after.
      type: dict
"""
