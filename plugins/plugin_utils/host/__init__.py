# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The host-shell layer: how the controller-side backends speak to a host without Python.

Every SSH action of the collection (``esxi_firewall``, ``esxi_iperf_install``, ``esxi_journal``,
``iperf_run``, ``iperf_facts``) runs plain POSIX ``sh`` commands on the host through the
connection (busybox ``ash`` on ESXi is enough) and reads their output. The pieces they share:

* :mod:`.command` -- :class:`~.command.CommandOutput` (what one command gave back), the
  ``Execute`` callable type, :class:`~.command.HostError` (the one error a backend raises:
  ``message`` naming the cause and the fix, ``result`` keeping what is known);
* :mod:`.framing` -- the one output protocol: marker lines that split the output of one
  command into named sections;
* :mod:`.pathwalk` -- the one ``$PATH`` walker (shell text);
* :mod:`.action` -- :class:`~.action.HostAction`, the action-plugin base: validate the task
  arguments against the module's documentation, run the backend with an ``execute`` over
  ``_low_level_execute_command``, convert a :class:`~.command.HostError` into ``failed``/``msg``.

Only :mod:`.action` imports Ansible; the rest is plain data and shell text. Nothing here knows
ESXi: esxcli error output (``esxi/esxcli.py``), the restore journal (``journal/``) and the ESXi action
base (``esxi/action.py``) build on this package, never the other way round.

Private package: not part of the collection's public API.
"""
