# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A host's CPU use over a run's interval: read at the run's start and after its stop.

* :mod:`.proc_stat` -- Linux: the ``cpu``/``cpuN`` lines of ``/proc/stat`` and ``/proc/uptime`` (read by
  ``iperf_facts`` option ``cpu_times``), the busy share of the whole host and of each core between two
  readings;
* :mod:`.reading` -- the reading of one host as ``iperf_facts`` returns it (``iperf_cpu_times``), and the
  run record's ``cpu`` entry of a host from its two readings (raw text kept beside the figures);
* :mod:`.vsphere` -- ESXi: ``cpu.usage.average`` per host and per core from the vSphere API's
  PerformanceManager over a run's interval (samples of 20 s), computed from the series it returns.

A figure is parsed from the host's own counters or ``None`` with the reason; nothing is guessed.
Plain data, no Ansible import (``vsphere.query_host_cpu`` is the one call that talks to the API, given a
pyVmomi connection).

Private package: not part of the collection's public API.
"""
