# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The controller side of the role ``esxilab.iperf.paired_test``, by concern.

* ``settings`` -- the per-test settings and the per-pair options, declared once (the role's argument
  spec and defaults are generated from it: ``hacking/generate_paired_test_settings.py``);
* ``checks`` -- the limits, the errors and the value checks of the settings;
* ``plan`` -- ``build_plan``: the tests expanded into the ordered runs, every problem at once;
* ``start_delay`` -- the clients' start delay of a run with a barrier, planned then learnt;
* ``record`` -- ``build_record``: what the run's hosts reported -> the typed ``RunRecord``;
* ``recorder`` -- the records and the state of the series, kept in a spool between the runs;
* ``parts`` / ``engine`` -- a host's start, clients and stop, and a whole run driven from the controller;
* ``line_rate`` -- each run's line rate, from labels, the report's setting or the hosts' link speeds;
* ``stability`` -- ``repeat {min, max, until_cv}``: when a point is stable, or given up;
* ``mesh`` -- the filter ``mesh_schedule``: rounds of host pairs in which no host is in two pairs;
* ``progress`` -- the callbacks' progress lines of the runs and the time left;
* ``preflight`` -- every setting of ``paired_test`` and ``report`` checked once per play, before any
  host is contacted; all problems at once, one line each, each naming the option and the fix.

Private package: not part of the collection's public API.
"""
