# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation of ``esxilab.iperf.paired_test_report`` (deprecated); plugins/action/paired_test_report.py works."""

from __future__ import annotations

DOCUMENTATION = r"""
module: paired_test_report
short_description: Write the JSON and CSV reports of paired iperf tests on the controller
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
deprecated:
  removed_in: "2.0.0"
  why: The collection has one report builder and one report writer; the role C(esxilab.iperf.paired_test) now
    writes its report through the role C(esxilab.iperf.report).
  alternative: Use M(esxilab.iperf.report_write) (or the role C(esxilab.iperf.report)) with O(results) as its C(runs).
description:
  - Deprecated, see above. Kept for the deprecation period as a thin shim over the report builder of
    M(esxilab.iperf.report_write).
  - Writes three files in O(dest) on the Ansible controller - C(<name>.json) (the C(results.json) document of
    M(esxilab.iperf.report_write) - C(format=esxilab.iperf.report) - with O(meta) as its C(environment)),
    C(<name>.csv) (its C(results.csv), one row per pair and run) and C(<name>-summary.csv) (its C(summary.csv), one
    row per test, direction, swap and streams value).
  - Runs on the controller only; the host of the task is not contacted and no module is run, so it is fast. Use it
    with C(run_once=true).
  - Each file is written atomically (a temporary file renamed over it) and only when its content or mode differs.
  - 'O(dest) may hold other reports and other files: a manifest C(.esxilab-iperf-report.json) in O(dest) lists the
    files each report of ours wrote. A file of the same name that it does not list (not written by a report of ours)
    is never overwritten - the task fails naming it - unless O(force=true).'
  - 'CSV cells that start with C(=), C(+), C(-), C(@), a tab or a carriage return get a leading C('') so a spreadsheet
    shows them as text instead of running them as formulas (OWASP "CSV Injection"); plain numbers such as C(-1.5)
    are written as they are.'
  - An empty O(results) is refused; no report is written.
options:
  dest:
    description:
      - Directory for the files, created (mode C(0755)) if missing. A relative path is relative to the playbook's
        directory.
    type: path
    required: true
  name:
    description: Base name of the files, letters, digits and C(._+-).
    type: str
    required: true
  results:
    description:
      - The run records (C(paired_test_results), see P(esxilab.iperf.paired_test_record#filter)).
      - At least one; an empty list fails the task.
    type: list
    elements: dict
    required: true
  summary:
    description: Ignored - the summary is computed from O(results) by the report builder.
    type: list
    elements: dict
    default: []
  sweeps:
    description: Ignored - the sweeps and knees are computed from O(results) by the report builder.
    type: list
    elements: dict
    default: []
  tests:
    description: Ignored - the report is made from the runs.
    type: list
    elements: dict
    default: []
  meta:
    description:
      - Written as the C(environment) of the JSON document, for example C(began), C(finished), C(complete).
    type: dict
    default: {}
  mode:
    description: Permissions of the files, in octal, for example V('0644').
    type: raw
    default: "0644"
  force:
    description:
      - Replace files of the report's names in O(dest) that no report of ours wrote (the manifest does not list
        them), and start a new manifest when the one in O(dest) cannot be read.
      - V(false) - such files make the task fail, naming them, before anything is written.
    type: bool
    default: false
extends_documentation_fragment:
  - esxilab.iperf.attributes
  - esxilab.iperf.attributes.action
attributes:
  check_mode:
    support: full
    details:
      - Reports which files would change, writes nothing.
  diff_mode:
    support: none
    details:
      - The reports are new data, not configuration; no diff is shown.
  platform:
    support: full
    platforms: posix
    details:
      - Runs on the controller only.
seealso:
  - module: esxilab.iperf.report_write
    description: The report writer this module is a shim over.
"""

EXAMPLES = r"""
---
- name: Write the reports of the paired tests
  esxilab.iperf.paired_test_report:
    dest: "{{ playbook_dir }}/reports"
    name: vswitch-forwarding
    results: "{{ paired_test_results }}"
    meta:
      lab: rack-2
  run_once: true
"""

RETURN = r"""
files:
  description: The report files.
  returned: success
  type: dict
  contains:
    json:
      description: The JSON document - the C(results.json) of M(esxilab.iperf.report_write)
        (C(format=esxilab.iperf.report), C(version=1), C(environment) from O(meta), C(runs), C(results), C(summary),
        C(sweeps)).
      type: str
      sample: /srv/lab/reports/vswitch-forwarding.json
    csv:
      description: One row per pair and run.
      type: str
      sample: /srv/lab/reports/vswitch-forwarding.csv
    summary_csv:
      description: One row per test, direction, swap and streams value.
      type: str
      sample: /srv/lab/reports/vswitch-forwarding-summary.csv
written:
  description: The files written (in check mode, that would be written).
  returned: success
  type: list
  elements: str
removed:
  description:
    - Files the previous report of the same O(name) wrote and this one does not (in check mode, that would be
      removed). Only files the manifest lists are ever removed.
  returned: success
  type: list
  elements: str
msg:
  description: What was done.
  returned: always
  type: str
  sample: wrote 3 of 3 report file(s) in /srv/lab/reports
"""
