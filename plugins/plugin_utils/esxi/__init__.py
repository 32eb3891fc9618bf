# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parse what the ESXi shell prints, and plan what to run there (controller-side only).

ESXi has no Python for Ansible modules, so the collection talks to the busybox shell over plain
SSH from action plugins and filters on the controller, and reads the text that ``esxcli``,
``vmware``, ``localcli`` and ``vmkping`` print. Nothing here is shipped to a host; nothing here
runs anything. Two pure halves, one concern per file:

Parsers -- typed records from the plain-text layouts recorded from real hosts (6.7, 7.x, 8.x;
see ``tests/fixtures/esxi/SOURCES.md``):

* ``tables``    -- dashed tables, ``Key: value`` blocks and ``--formatter=csv`` (shared helpers);
* ``errors``    -- the error classes, and the ``[ErrorClass]`` text esxcli prints on failure;
* ``versions``  -- ``vmware -v/-l/-vl`` and ``esxcli system version get``;
* ``vib``       -- ``software vib list`` / ``vib install`` results, install-error fixes, iperf ``-v``;
* ``firewall``  -- ``network firewall get`` and ``network firewall ruleset list``;
* ``settings``  -- kernel/advanced settings and the execInstalledOnly state they add up to;
* ``ping``      -- ``vmkping -d -s N`` and Linux ``ping -M do -s N`` (path MTU);
* ``nic``       -- ``network nic stats get`` counters and ``network nic get`` driver/firmware;
* ``privstats`` -- ``localcli ... networkinternal nic privstats get``: a driver's private statistics (ring
  exhaustion, pause frames; the recorded Intel layout).

Planners -- from (current state, wanted state, options) to a list of shell commands plus what must
be put back afterwards:

* ``releases``      -- what differs per release (install method, execInstalledOnly knob, security
  domain, ruleset list layouts): one row per release, the one place to add one;
* ``paths``         -- where iperf lives on the host (the paths the install code probes);
* ``steps``         -- one planned command (:class:`Step`) and ``to_dict`` for Ansible results;
* ``install_plan``  -- copy the shipped iperf3 or install the iperf2 VIB, and the restore;
* ``firewall_plan`` -- firewall enable/default action/rulesets, and the restore;
* ``secpolicy``     -- ``secpolicy domain list`` and the appDom route (shipped iperf3 in place);
* ``guests``        -- the guests' vNIC wiring (role ``esxi_guests``): checked, and planned per guest.

Backends -- the flows of the action plugins over ``execute`` (read, plan, apply, verify, restore):

* ``esxcli``      -- one esxcli command run checked (its error output becomes the backend's error);
* ``install_run`` -- ``esxi_iperf_install``; ``firewall_run`` -- ``esxi_firewall``;
  ``journal_run`` -- ``esxi_journal`` (the journal itself: ``plugin_utils/journal/``);
* ``action``      -- ``EsxiHostAction``: the generic ``host.action.HostAction`` plus the restore journal.

Every figure comes from the output or is ``None``; nothing is guessed. Errors are domain exceptions
(``errors.EsxiError``) whose message names the object, the cause and the option or command that
fixes it. Private to the collection: not part of its public API. Stdlib only (no Ansible imports),
except ``action`` (an action plugin base).
"""
