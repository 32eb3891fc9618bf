# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation of ``esxilab.iperf.report_gate``; the work is done by plugins/action/report_gate.py."""

from __future__ import annotations

DOCUMENTATION = r"""
module: report_gate
short_description: Compare a report with its baseline, record it in the history and fail on a regression
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Reads the C(results.json) of a report written by M(esxilab.iperf.report_write) in O(report_dir), compares each
    test, direction, swap and stream count with its baseline, appends the report to the history O(history), writes
    the comparison and the gate's verdict into C(results.json) (keys C(baseline) and C(gate)) and C(summary.md) (the
    section C(Baseline and regression gate)), and fails when a tolerance is breached - after the report is recorded,
    so a regression stays in the history.
  - 'Comparable (the baseline of an entry): the same test name, direction, swapped flag, stream count, tool, protocol
    and identifying labels - every run label except C(run), C(repetition), C(test), C(streams), C(direction),
    C(swapped), C(pair) and the line-rate labels C(line_rate_bps) and C(link_speed_mbps) (a line rate describes the
    link, which a regression may have changed). See C(docs/history.md).'
  - "Per entry: baseline mean vs now, the difference in % of the baseline mean with its 95 % confidence interval
    (Welch's t with the Welch-Satterthwaite degrees of freedom), C(not significant) when the interval crosses zero,
    C(n=1, no statistics) when a side has fewer than 2 figures."
  - A run that is not complete (for example an implausible figure claimed by a peer outside the inventory) is counted
    but its figure is not a sample - neither gated nor a baseline; O(baseline=previous) takes the newest earlier
    comparable entry that has a sample.
  - The history is one schema in SQLite or PostgreSQL (tables C(schema_version), C(history_runs),
    C(history_entries)), created and migrated by this module (concurrent first writers are serialized - a
    PostgreSQL advisory lock, SQLite's write lock); a report is written in one transaction, and once - its directory
    and C(generated_at) are its key, so gating the same report again, or twice at once, records it once.
  - A history file that is not a SQLite database (damaged, truncated, another program's file) or a stored value this
    module never writes (NaN, Infinity, samples that are not JSON) fails the task with one message naming the file
    or the run and the fix.
  - Runs on the controller only; the host of the task is not contacted. Use it with C(run_once=true).
extends_documentation_fragment:
  - esxilab.iperf.attributes
  - esxilab.iperf.attributes.action
attributes:
  check_mode:
    support: full
    details:
      - Compares and returns the verdict (the baseline is read from an existing history); records nothing, writes no
        file and does not fail the task on a regression - RV(gate) says whether it would.
  diff_mode:
    support: none
    details:
      - A report is new data; no diff is shown.
  platform:
    support: full
    platforms: posix
    details:
      - Runs on the controller only.
options:
  report_dir:
    description:
      - The report directory written by M(esxilab.iperf.report_write) (its C(results.json) and C(summary.md)). A
        relative path is relative to the playbook's directory.
    type: path
    required: true
  history:
    description:
      - "Where reports are recorded: V(sqlite:///PATH) (a SQLite file, created with its directory; an absolute path
        as V(sqlite:////srv/iperf/history.sqlite), a relative one relative to the playbook's directory),
        V(postgresql://USER@HOST:PORT/DB) (a libpq URI; a Unix socket as V(postgresql:///DB?host=/run/postgresql);
        libpq's environment such as C(PGPASSWORD) applies), or V(none) to record nothing."
      - The URL is checked as libpq reads it before anything is read or written - a port that is not a number from 1
        to 65535, an IPv6 address without its closing bracket, or an at-sign or slash in the password that is not
        percent-encoded (V(%40), V(%2F)) is refused naming the option and the fix.
      - "Secrets are never shown - in the task's messages, C(results.json), C(summary.md) or the history: the password
        of USER:PASSWORD@ (up to the last at-sign, so a raw C(#), C(?) or C(:) in it is masked whole) and the libpq
        parameters C(password), C(sslpassword) and C(oauth_client_secret) appear as C(***). Prefer O(history_password)
        or C(PGPASSWORD) to a password in the URL."
      - PostgreSQL needs the Python package C(psycopg) (3) on the controller.
    type: str
    default: none
  history_password:
    description:
      - Password for a PostgreSQL history, passed to libpq apart from the URL and never shown. Unset - C(PGPASSWORD)
        or C(~/.pgpass), as for C(psql).
    type: str
  baseline:
    description:
      - V(previous) - per entry, the newest comparable entry of an earlier report in O(history) (needs a history).
      - A path to an earlier C(results.json) (relative to the playbook's directory).
      - Unset - no comparison; the line-rate, retransmit, loss and loaded RTT ceiling tolerances still apply.
    type: str
  max_drop_percent:
    description:
      - Fail when an entry's mean throughput dropped by more than this percentage of the baseline mean and the 95 %
        interval of the difference excludes zero. A drop without statistics (n=1) is shown and not gated.
      - From 0 to 100 (a drop is at most 100 % of the baseline mean); anything else, V(nan) included, fails the task
        before the report is read.
    type: float
  min_line_rate_percent:
    description:
      - Fail when an entry's mean is below this percentage of its line rate (an entry without one is noted).
      - From 0 to 100 - iperf measures goodput, always below the line rate (headers, gaps), so a bound above 100 %
        would fail every run.
    type: float
  max_retransmits:
    description: Fail when a run of an entry had more TCP retransmits (the senders' sum) than this (0 or more).
    type: int
  max_loss_percent:
    description: Fail when a run of an entry lost more than this percentage of its UDP datagrams (0 to 100).
    type: float
  max_latency_increase_percent:
    description:
      - Fail when an entry's loaded ping RTT (the percentile O(latency_percentile), the largest over the entry's pairs
        and runs) grew by more than this percentage of its baseline row's same figure (0 or more; 100 - it doubled).
      - Needs O(baseline) and runs measured with the test setting C(latency) (C(docs/latency.md)). A row without the
        figure on either side (latency not measured, too few replies for the percentile, no baseline row) is shown
        as C(not compared) with the reason - neither a pass nor a failure.
    type: float
  max_loaded_rtt_ms:
    description:
      - Fail when an entry's loaded ping RTT (the percentile O(latency_percentile), the largest over the entry's pairs
        and runs) is above this many milliseconds (0 or more). Needs no baseline.
      - A row without the figure is shown as C(not compared) with the reason.
    type: float
  latency_percentile:
    description:
      - The loaded RTT percentile the latency checks O(max_latency_increase_percent) and O(max_loaded_rtt_ms) compare.
        Nearest-rank - p50 needs 2 replies in a window, p90 10, p99 100 (20 s of probes every 0.2 s).
    type: int
    choices: [50, 90, 99]
    default: 99
  fail_on_regression:
    description:
      - Fail the task when a tolerance is breached (after the report is recorded). V(false) - return the verdict in
        RV(gate) and let the play decide.
    type: bool
    default: true
  print_verdict:
    description:
      - Print baseline vs now and the gate's verdict (RV(lines)) as text at the end of the task, at Ansible's default
        verbosity. They are printed whenever a tolerance is breached, also without it.
    type: bool
    default: false
seealso:
  - module: esxilab.iperf.report_write
"""

EXAMPLES = r"""
- name: Compare with the last comparable run and fail on a significant drop of more than 5 %
  esxilab.iperf.report_gate:
    report_dir: "{{ report_files.dir }}"
    history: "sqlite:///{{ playbook_dir }}/reports/history.sqlite"
    baseline: previous
    max_drop_percent: 5
  run_once: true

- name: A shared PostgreSQL history, an earlier report as the baseline, and floors/ceilings
  esxilab.iperf.report_gate:
    report_dir: "{{ report_files.dir }}"
    history: postgresql://iperf@db.lab.example/iperf
    history_password: "{{ vault_iperf_db_password }}"
    baseline: /srv/reports/vswitch-20260101T120000Z/results.json
    max_drop_percent: 10
    min_line_rate_percent: 80
    max_retransmits: 1000
  run_once: true

- name: Latency under load - fail when the loaded p99 grew by more than 50 % or is above 20 ms
  esxilab.iperf.report_gate:
    report_dir: "{{ report_files.dir }}"
    history: "sqlite:///{{ playbook_dir }}/reports/history.sqlite"
    baseline: previous
    max_latency_increase_percent: 50
    max_loaded_rtt_ms: 20
    latency_percentile: 99
  run_once: true
"""

RETURN = r"""
gate:
  description: The verdict, as in C(results.json) - C(limits), C(passed), C(message) and C(checks).
  returned: always
  type: dict
  sample: {passed: false, message: "regression gate failed: one-pair forward, 1 stream: drop <= 5 % breached - ..."}
baseline:
  description: The comparison, as in C(results.json) - C(source), C(history) and C(comparisons).
  returned: always
  type: dict
lines:
  description: What the role prints - baseline vs now per entry, then the verdict; empty without O(baseline) and
    without any tolerance (the report is only recorded).
  returned: always
  type: list
  elements: str
history_run_id:
  description: The report's C(history_runs.id); V(null) without a history or in check mode.
  returned: always
  type: int
msg:
  description: What was done; the failure message when the gate failed.
  returned: always
  type: str
"""
