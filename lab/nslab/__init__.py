# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Local lab: N Linux network namespaces with real OpenSSH servers on a Linux bridge.

``up`` builds (or converges) the lab, ``down`` removes every object it created, ``status``
reports what exists. Each lab host is a network namespace ``<name>-h<i>`` whose ``eth0`` is
one end of a veth pair; the other end ``<name>-v<i>`` is a port of the bridge ``<name>-br0``
(the software vSwitch). The controller (this machine's root namespace) has the first
address of the lab subnet on the bridge. Each namespace runs its own ``sshd`` (own config,
own host key, root login with the generated lab key only) in its own UTS namespace, so
``uname -n`` answers the namespace name. Sessions start no rc file, as on ESXi: no
``~/.ssh/rc`` and no ``~/.bashrc`` (``SHLVL=1``; see ``sshd.sshd_config_text``). iperf/iperf3
are the Debian binaries: namespaces share the root filesystem.

The modules, by concern (each imports only those above it):

* ``common``: limits and names, ``LabError``, running commands (with a timeout), ``Plan``.
* ``shaping``: tc rates/delays, the qdiscs ``up`` installs and reading them back (``--rate``, ``--flow-rate``,
  ``--host-rate``, ``--delay``, ``--ethernet-overhead``).
* ``spec``: the desired lab (``LabSpec``, ``HostSpec``).
* ``standin``: ``--host-env``/``--host-bind`` (the ESXi stand-ins' wiring) and their mounts.
* ``options``: the options validated into a ``LabSpec`` (``build_spec``).
* ``observe``, ``procs``: what exists (links, namespaces, processes) and stopping processes.
* ``sshd``: each host's OpenSSH server, keys and known_hosts.
* ``network``: preflight, the safety net, bridge, namespaces and veth pairs.
* ``state``: inventory.yml, lab.json, the state dir's lock.
* ``lifecycle``: ``up``, ``down``, ``status``; ``cli``: the command line (``lab/esxilab_lab.py``).

Stdlib only; python3 >= 3.11; must run as root.
"""
