# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared documentation of the restore journal options (``esxilab.iperf.journal``).

Private to this collection: it may change in any release.
"""

from __future__ import annotations


class ModuleDocFragment:
    """The journal options of esxi_firewall, esxi_iperf_install and esxi_journal."""

    DOCUMENTATION = r"""
options:
  journal_dir:
    description:
      - Directory on the ESXi host that holds the restore journal - what must be put back, written before the first
        change, the earliest value winning - and the dead-man timer's files.
      - The default is under C(/scratch), which ESXi points at persistent storage (the OSDATA volume or a datastore),
        so the journal survives a reboot; ESXi's C(/tmp) is a ramdisk that a reboot empties. On a host whose
        C(/scratch) is itself on the ramdisk (no persistent scratch configured) give a directory on a datastore, for
        example C(/vmfs/volumes/datastore1/.esxilab-iperf).
      - Created mode C(0700) with a marker file C(.esxilab-journal) in it; an existing directory is never changed, only
        checked - refused (nothing is changed on the host) when it is a symlink, not a directory, not owned by the
        connecting user, writable by group or others, has no marker file (not created by this collection, for example
        a shared directory), or when its parent is writable by group or others and not sticky.
      - On a Linux host give a directory such as C(/var/lib/esxilab-iperf) (the playbooks do).
      - An empty string turns the journal (and the dead-man timer) off.
      - See C(docs/safety.md) in the collection.
    type: str
    default: /scratch/esxilab-iperf
  journal_copy_dir:
    description:
      - Directory on the controller that receives a copy of the journal after every change, as
        C(<inventory_hostname>.json).
      - Not set - no copy. It must be a directory (or a path that can become one), not a file.
    type: path
  takeover:
    description:
      - The journal records which run holds the window (controller host name, C(ansible-playbook) pid and start
        time). When another run still holds it - on this controller its process runs; on another, its deadline is
        still ahead or it has none - the task refuses and names that run. V(true) takes the window over (the other
        run's restore then leaves the journal to this one). A window of a run that is gone is recovered without it.
    type: bool
    default: false
"""

    # The dead-man timer option of the modules that open a window.
    DEADLINE = r"""
options:
  deadline:
    description:
      - Seconds after this change at which a detached timer on the host (the dead-man) puts back what the journal
        records, unless a restore ends the window first; it needs no controller. A later change moves the deadline
        to the later of the two.
      - Started when the firewall or the exec policy is changed. V(0) starts no timer. At most V(604800) (7 days);
        a negative or a longer value is refused.
      - The roles derive it from the planned test time C(esxilab_planned_seconds) plus a margin of a quarter of it
        (at least 600 s); see C(docs/safety.md).
    type: int
    default: 3600
"""
