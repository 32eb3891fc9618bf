# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Latency under load: ping (Linux) / ``vmkping`` (ESXi) from a client host to its server address while it idles
before the transfer and during the transfer (issue 25; ``docs/latency.md``), by concern.

* ``samples`` -- the per-packet RTTs of a ping output (iputils, busybox, ``vmkping``), its counts and the
  nearest-rank percentiles;
* ``option`` -- the ``latency`` option (``iperf_run``) and setting (``paired_test``): checked, one reader;
* ``shell`` -- the ``sh`` text the client script runs (busybox ``ash`` on ESXi): the pings started, bounded and
  stopped by their own pids;
* ``figures`` -- the ``latency`` of a client result: both windows read into figures, the raw output kept.

Private package: not part of the collection's public API.
"""
