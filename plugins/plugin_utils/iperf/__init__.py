# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Read what iperf2 and iperf3 print into the one normalized result (controller-side only).

Used by the filters (``iperf_parse``, ``iperf_stats``) and the action plugins (``iperf_run``,
``iperf_facts``) on the controller; nothing here is shipped to a host. One concern per file:

* ``records``     -- the typed result (``IperfResult`` and its parts) and the paired_test records;
* ``validate``    -- those records taken back from Ansible: upgraded by ``schema_version``, checked once;
* ``result``      -- building a result (``new_result``, ``finalize``, ``error_result``) and ``plain()``,
  the one place a typed result becomes plain data for Ansible;
* ``parse``       -- the entry point: detect the format and the tool, call its parser, split
  multi-test server logs;
* ``iperf3_json`` -- iperf3 ``-J`` and ``--json-stream``;
* ``iperf3_text`` -- iperf3 text (client and server, 3.0 - 3.21);
* ``iperf2_text`` -- iperf2 text (2.0.5 - 2.2);
* ``iperf2_csv``  -- iperf2 ``-y C``;
* ``units``, ``textutil`` -- rates, sizes and times as printed; text helpers shared by the parsers;
* ``tools``       -- the ``-v`` banners of the iperf binaries (tool, version, features);
* ``stats``       -- mean, median, stdev, CV, Student-t confidence interval, knee of a sweep.

Every figure comes from the tool's own output or is ``None``; nothing is guessed. Private to the
collection: not part of its public API.
"""
