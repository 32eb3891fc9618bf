# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The restore journal on a host (ESXi or Linux): what a window must put back, written before the change.

* ``store``  -- the journal directory, its scripts (record, read, clear, the dead-man timer), trust and values;
* ``owner``  -- the run that holds a window (run id, token) and whether it still lives;
* ``merge``  -- "the earliest value wins": a journal's values over a task's ``restore`` value;
* ``link``   -- a Linux interface's MTU, read and put back with ``ip link``.

The ESXi backends (``esxi/firewall_run.py``, ``esxi/install_run.py``, ``esxi/journal_run.py``) use
it; nothing here runs anything but the ``execute`` callable a caller passes in.

Private to the collection: not part of its public API.
"""
