# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the NICs behind a test address say: their link speed and their counters (Linux and ESXi).

* :mod:`.speed` -- a NIC's link speed (Linux sysfs), a vSwitch's uplinks and their lowest active
  speed (``esxcli``, or ``esxi_vmknic``'s ``physical_nics``);
* :mod:`.counters` -- the counters and driver/firmware of the interface(s) behind an address
  (``iperf_facts`` option ``nic_counters_of``); the report makes their deltas (``report/nic.py``).

The parsers of the tools' own output live beside their host kind (``host/linux_nic.py``,
``esxi/nic.py``); a run's line rate from these readings is ``paired/line_rate.py``.
Plain data; no Ansible import, no I/O.

Private package: not part of the collection's public API.
"""
