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
      - Created mode C(0700); refused when it is a symlink, not a directory or not owned by the connecting user.
      - An empty string turns the journal (and the dead-man timer) off.
      - See C(docs/safety.md) in the collection.
    type: str
    default: /scratch/esxilab-iperf
  journal_copy_dir:
    description:
      - Directory on the controller that receives a copy of the journal after every change, as
        C(<inventory_hostname>.json).
      - Not set - no copy.
    type: path
"""

    # The dead-man timer option of the modules that open a window.
    DEADLINE = r"""
options:
  deadline:
    description:
      - Seconds after this change at which a detached timer on the host (the dead-man) puts back what the journal
        records, unless a restore ends the window first; it needs no controller. A later change moves the deadline
        to the later of the two.
      - Started when the firewall or the exec policy is changed. V(0) starts no timer.
    type: int
    default: 3600
"""
