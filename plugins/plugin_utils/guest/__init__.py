# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A guest's test interface (``guest_network``): found by the MAC of its vNIC, addressed, journaled, put back.

* ``request``  -- the options checked before anything runs (MAC, address/prefix, MTU, persistence);
* ``links``    -- what ``ip -j addr`` / ``ip -o link`` / ``ip -o addr`` / ``ip route`` print, as plain data;
* ``plan``     -- which interface, what changes at runtime, what the journal records first;
* ``persist``  -- the persistent setting (NetworkManager, netplan, ifupdown): detected, rendered, planned;
* ``packages`` -- iperf3 and iperf (iperf2) package names per package manager;
* ``run``      -- the backend: one probe, the plan, the journal, the commands, the check that they took.

Private to the collection: not part of its public API.
"""
