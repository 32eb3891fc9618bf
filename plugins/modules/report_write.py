# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation of ``esxilab.iperf.report_write``; the work is done by plugins/action/report_write.py."""

from __future__ import annotations

DOCUMENTATION = r"""
module: report_write
short_description: Write an iperf report (JSON, CSV, Markdown summary, PNG plots) on the controller
version_added: "1.0.0"
author:
  - esxilab.iperf contributors (@esxilab)
description:
  - Writes a report directory O(dest) on the Ansible controller from iperf results - C(results.json) (every
    normalized result with its labels, the environment, the runs, the summary, the sweeps and the comparison),
    C(results.csv) (one row per result), C(summary.csv) (one row per summary group), C(summary.md) (a readable
    summary), PNG plots and C(report.html) (all of it in one self-contained page, O(html)).
  - 'Where the packets went: for runs whose NIC counters were read (C(paired_test_nic_counters)), every drop, ring
    or buffer exhaustion, pause frame and error counter that grew during a run - Linux C(ip -s -s link),
    C(ethtool -S) and C(tc -s qdisc), ESXi C(esxcli network nic stats get) and the driver private statistics
    (C(localcli ... networkinternal nic privstats get), Intel layout) - gives a warning line, for example
    C(run 3 dropped 1,204 packets on vmnic1 of esx1 (rx_missed_errors)), at the top of C(summary.md) and
    C(report.html), in C(nic.loss_warnings) of C(results.json) and as a warning of the task.'
  - 'C(summary.md) holds: the environment given in O(environment); one table per test with, per direction (naming
    sender and receiver, for example C(forward: vm2 → vm1) or C(forward, swapped: vm1 → vm2)), streams value and
    (with O(compare_by)) label value, the runs, mean, median, standard deviation, 95 % confidence interval (Student t),
    min, max and percentage of line rate; a second table per test with the figures beside throughput - CPU (local and
    remote, as iperf printed it), retransmits per run, RTT (mean, min - max in µs), for UDP the loss, jitter and
    lost/total datagrams, for bidirectional runs the reverse direction and both directions together; the knee of each
    stream sweep; the comparison by O(compare_by) side by side with its CPU-vs-throughput table; the plots; every run
    with its status and figures.'
  - 'The same figures are columns of C(results.csv) (per result: C(cpu_local_percent), C(cpu_remote_percent),
    C(retransmits), C(rtt_min_us), C(rtt_mean_us), C(rtt_max_us), C(lost_percent), C(jitter_ms), C(lost_packets),
    C(packets), C(reverse_bits_per_second), C(bidir_sum_bits_per_second), C(flow), C(run_line_rate_bps),
    C(run_percent_of_line_rate)) and of C(summary.csv) (per group, the same names: means over the runs with the
    figure; RTT min/max the smallest/largest; datagrams summed; C(flows)), and C(figures) of each run, result and
    summary item of C(results.json).'
  - 'Plots (matplotlib, Agg backend): throughput vs parallel streams for sweeps (C(sweep-<direction>.png)), with
    95 % CI error bars and the knee marked; grouped bars for the comparison by O(compare_by)
    (C(compare-<label>.png)) and CPU use vs throughput, one point per run (C(cpu-vs-throughput-<label>.png));
    throughput per interval (C(timeseries-<test>-<direction>-streams-<n>.png)) of the results whose intervals say
    something over time (see O(timeseries_min_seconds)). Without matplotlib on the controller the other files are
    still written, the plots are skipped, the task warns and says so in RV(plots_skipped) - the task does not fail
    for it.'
  - Every figure comes from the results. A run without a usable figure is left out of the statistics and shown as
    C(n/a), never as 0. A percentage of line rate is shown only when a line rate is known; the line rate of a run
    whose pairs ran at the same time is the sum over its pairs' line rates, and when only some pairs have one the
    percentage is omitted and C(summary.md) says why.
  - Used by the role C(esxilab.iperf.report). Runs on the controller only; the host of the task is not contacted and
    no module is run. Use it with C(run_once=true).
  - Each file is written atomically (a temporary file renamed over it) and only when its content differs.
  - 'O(dest) is the report: the report keeps a manifest C(.esxilab-iperf-report.json) there listing the files it
    wrote. A non-empty O(dest) without that manifest (not a report of ours), or a file of a report name there that the
    manifest does not list, makes the task fail before anything is written, unless O(force=true). When the report is
    written again in the same O(dest), the files the previous report wrote and this one does not (for example plots
    of a sweep that is gone) are removed - only those; other files are never touched.'
  - 'Text from the input (labels, test names, the title, the environment, error messages) is made inert in
    C(summary.md) by one function - C(&) and C(<) HTML-escaped, so no tag and no autolink in angle brackets;
    backslash, C([), C(]), backtick, C(@) and C(|) backslash-escaped, so no image, no link (also none to
    C(javascript:)), no code span and no e-mail autolink; C(://) and C(www.) broken, so no bare URL is linked; line
    breaks joined; control characters and the Unicode bidi controls U+202A-U+202E, U+2066-U+2069, U+200E, U+200F
    shown as their code, for example C(<U+202E>). A label such as C(<img src=x onerror=alert> [x]) is shown as
    text.'
  - 'CSV cells whose first non-blank character is C(=), C(+), C(-) or C(@), or that start with a tab or a carriage
    return, get a leading C(''); inside a cell, such a character after a separator or line break (C(,) C(;), tab,
    line feed, carriage return, then blanks) gets a C('') before it - so a spreadsheet, also one that splits at C(;),
    shows them as text instead of running them as formulas (OWASP "CSV Injection"); plain numbers such as C(-1.5)
    are written as they are.'
options:
  runs:
    description:
      - The runs to report. Either the run records of the role C(esxilab.iperf.paired_test) (C(paired_test_results),
        one record per run with its pairs and C(total_bits_per_second)), or normalized results with C(labels) (from
        P(esxilab.iperf.iperf_parse#filter), M(esxilab.iperf.iperf_facts) or M(esxilab.iperf.iperf_run)), or both
        mixed.
      - A normalized result is one run of its own. Its test, stream count, direction and repetition come from its
        labels C(test), C(streams), C(direction) and C(repetition); without them the test is V(default), the stream
        count and direction those of the result.
      - A run's figure is the record's C(total_bits_per_second) (the sum of its pairs), or the result's headline
        C(bits_per_second).
      - Each record and result is checked once against its type, after an upgrade from the shape its
        C(schema_version) names (a record or result without it is read as the oldest shape, with the keys it lacks
        taken as not recorded); a key of the wrong kind fails the task naming its path, for example
        C(runs[2].pairs[0].port), and no report is written.
      - At least one run; an empty list fails the task and no report is written.
    type: list
    elements: dict
    required: true
  dest:
    description:
      - Directory of the report, created (mode C(0755)) if missing. A relative path is relative to the playbook's
        directory.
    type: path
    required: true
  name:
    description: Short name of the report, shown in the summary and C(results.json).
    type: str
    default: iperf
  title:
    description: "Title of C(summary.md) and the printed table. Unset - C(iperf report: <name>)."
    type: str
  environment:
    description:
      - What was measured on, copied into C(results.json) and shown in C(summary.md) - for example the ESXi version,
        the NIC, its driver and link speed, the MTU, the iperf tool and version.
      - A list of dictionaries (for example RV(esxilab.iperf.esxi_vmknic#module:physical_nics)) is shown as a table.
    type: dict
    default: {}
  line_rate_bps:
    description:
      - Line rate in bit/s of one pair's path (10 Gbit/s - V(10000000000)), for example the speed of the link a
        client sends over. A run of several pairs running at the same time is compared with the sum over its pairs'
        line rates (two pairs over 1 Gbit/s links - 2 Gbit/s).
      - A run or result whose labels hold C(line_rate_bps) (bit/s) or C(link_speed_mbps) (Mb/s, as
        M(esxilab.iperf.esxi_vmknic) reports C(speed_mbps)) uses that instead, per pair.
      - Unset and no such label - no percentage of line rate.
    type: float
  compare_by:
    description:
      - A label whose values are compared side by side, for example V(nic) for C(e1000) vs C(vmxnet3), or V(mtu) for
        1500 vs 9000. Runs are grouped by its value, the comparison table shows the means of each value and their
        difference relative to the first value seen.
      - When every test has one value of the label (a test per NIC), tests are compared with each other; otherwise the
        values are compared within each test.
      - A paired run whose pairs differ in the label (pair labels) is split - per value a part, the sum over that
        value's pairs of the run (pairs without the label - the part C((none))), beside the whole run's sum. Parts
        are summarized per value over the repetitions and compared; they are never counted as runs.
    type: str
  knee_tolerance:
    description: Fraction of the best mean within which a stream count counts as reaching the plateau (the knee).
    type: float
    default: 0.05
  plots:
    description: Draw the PNG plots (needs matplotlib on the controller).
    type: bool
    default: true
  html:
    description:
      - Write C(report.html) too - the report in one self-contained file, for a person to open or send (under AWX the
        report directory goes with the job's container). It holds the summary, the comparison, the plots (embedded
        as C(data:) PNG images), the baseline and the gate (filled in by M(esxilab.iperf.report_gate)), every run
        with its pairs and NIC counters, and the warnings of where the packets went; every number is read from the
        C(results.json) document and carries its path in it (C(data-path), C(data-value)).
      - No script and no external asset - a Content-Security-Policy meta tag (C(default-src 'none'), images from
        C(data:) only) makes a browser load nothing else. Its only links are relative, to the files beside it -
        C(results.json), C(summary.md), and the raw iperf output of each result, written as
        C(raw-run<run>-<k>.txt) (the C(raw) text results.json holds).
      - V(false) - neither C(report.html) nor the raw files are written.
    type: bool
    default: true
  timeseries_min_seconds:
    description:
      - A result gets a time-series plot (throughput per interval) only when its intervals cover at least this many
        seconds, or there are at least 10 of them - the plot of a 5 s run with 1 s intervals says nothing the mean
        does not. Never for fewer than 2 intervals.
      - V(0) - every result with 2 or more intervals. C(summary.md) says how many results were left out and why.
    type: float
    default: 10
  generated_at:
    description:
      - Time stamp shown in the summary and C(results.json), for example V(2025-01-31T12:00:00Z) (the role
        C(esxilab.iperf.report) gives the time of the task). Unset - none (the same runs give the same files).
    type: str
  dest_time:
    description:
      - End the directory's name with the time of O(generated_at) (unset - now, UTC) -
        O(dest)C(-20250131T120000Z) - so that earlier reports are kept beside it.
    type: bool
    default: false
  print_table:
    description:
      - Print the compact summary (RV(table)) as text at the end of the task, at Ansible's default verbosity. In
        check mode without it, one line says where the report would be.
    type: bool
    default: false
  force:
    description:
      - Write the report into a non-empty O(dest) that holds no report of ours, replacing files of the report's
        names there (other files are kept, never removed); start a new manifest when the one in O(dest) cannot be
        read.
      - V(false) - such a O(dest) makes the task fail, naming its files, before anything is written.
    type: bool
    default: false
requirements:
  - matplotlib (optional, on the controller) for the PNG plots
extends_documentation_fragment:
  - esxilab.iperf.attributes
  - esxilab.iperf.attributes.action
attributes:
  check_mode:
    support: full
    details:
      - Reports which files would be written and returns the table, whose last line says that no report was written;
        writes nothing and draws no plot.
  diff_mode:
    support: none
    details:
      - A report is new data, not configuration; no diff is shown.
  platform:
    support: full
    platforms: posix
    details:
      - Runs on the controller only.
seealso:
  - plugin: esxilab.iperf.iperf_stats
    plugin_type: filter
    description: The same statistics as a filter.
"""

EXAMPLES = r"""
---
- name: Write the report of a paired test and print its table
  esxilab.iperf.report_write:
    runs: "{{ paired_test_results }}"
    dest: "{{ playbook_dir }}/reports/vswitch-forwarding"
    name: vswitch-forwarding
    line_rate_bps: 10000000000
    environment:
      esxi_version: 8.0.3
      nic: vmxnet3
      mtu: 9000
  run_once: true
  register: report

- name: Show the table
  ansible.builtin.debug:
    msg: "{{ report.table }}"
  run_once: true

- name: Compare two NIC types from results parsed on the controller
  esxilab.iperf.report_write:
    runs: "{{ e1000_results + vmxnet3_results }}"
    dest: /srv/lab/reports/nic-types
    name: nic-types
    compare_by: nic
  run_once: true
"""

RETURN = r"""
dir:
  description: The report directory.
  returned: success
  type: str
  sample: /srv/lab/reports/vswitch-forwarding
files:
  description: The files of the report.
  returned: success
  type: dict
  contains:
    json:
      description: C(results.json) - the document RV(report) (C(format=esxilab.iperf.report), C(version=1)).
      type: str
      sample: /srv/lab/reports/vswitch-forwarding/results.json
    csv:
      description: C(results.csv) - one row per result, empty cells for figures a result does not have.
      type: str
      sample: /srv/lab/reports/vswitch-forwarding/results.csv
    summary_csv:
      description: C(summary.csv) - one row per test, direction, swap, streams value and compared label value.
      type: str
      sample: /srv/lab/reports/vswitch-forwarding/summary.csv
    markdown:
      description: C(summary.md) - the readable summary.
      type: str
      sample: /srv/lab/reports/vswitch-forwarding/summary.md
    html:
      description: C(report.html) - the self-contained report (O(html)); V(null) with O(html=false).
      type: str
      sample: /srv/lab/reports/vswitch-forwarding/report.html
    raw:
      description: The raw iperf outputs linked from C(report.html) (C(raw-run<run>-<k>.txt)); empty with
        O(html=false).
      type: list
      elements: str
      sample: [/srv/lab/reports/vswitch-forwarding/raw-run1-1.txt]
    plots:
      description: The PNG plots written (in check mode, that would be written); empty when plots were skipped.
      type: list
      elements: str
      sample: [/srv/lab/reports/vswitch-forwarding/sweep-forward.png,
        /srv/lab/reports/vswitch-forwarding/timeseries-vswitch-forwarding-forward-streams-8.png]
written:
  description: The files written (in check mode, that would be written); files that already held the same content
    are not listed.
  returned: success
  type: list
  elements: str
removed:
  description:
    - Files the previous report in O(dest) wrote and this one does not, for example stale PNG plots (in check mode,
      that would be removed). Only files the manifest lists are ever removed.
  returned: success
  type: list
  elements: str
plots_skipped:
  description: Why plots are missing (for example matplotlib is not installed on the controller); V(null) when every
    plot was drawn.
  returned: success
  type: str
  sample: skipped - matplotlib is not installed on the controller (No module named 'matplotlib'); install it on the
    controller (pip install matplotlib) to get the PNG plots
table:
  description: The compact summary - one line per test, direction, streams value and compared label value - for
    P(ansible.builtin.debug#module) C(msg).
  returned: success
  type: list
  elements: str
  sample:
    - "iperf report: sweep: 6 run(s), 1 without a usable figure"
    - "test   direction  streams  runs  mean Gbit/s  +/-95% CI    min    max  % line"
    - "sweep  forward          1   2/2        0.932      0.083  0.926  0.939     9.3"
ansible_facts:
  description: Where the report is, as the fact C(report_files).
  returned: success
  type: dict
  contains:
    report_files:
      description: RV(files) and C(dir) (RV(dir)).
      type: dict
report:
  description:
    - The C(results.json) document of the report, as data - exactly what the file holds (what it reads back as; in
      check mode, what it would hold). A play uses the summary from here; nothing needs to read the file back.
      M(esxilab.iperf.report_gate), run on the report afterwards, adds its C(baseline) and C(gate) sections to the
      file and returns the same two sections itself.
    - Besides the keys below - C(name), C(title), C(generated_at), C(environment), C(line_rate_bps), C(compare_by),
      C(knee_tolerance), C(unit), C(runs) (one item per run), C(results) (every normalized result with its labels;
      the run records of C(paired_test_results) are kept as recorded - C(runs[].record) without the pairs and
      C(results[].record), each pair without its result; V(null) for plain results), C(comparison) (by
      O(compare_by); V(null) without it), C(combined) (swapped + unswapped groups of tests with C(combine_swapped),
      shaped as RV(report.summary)), C(nic) (the NIC counter deltas per test; V(null) when none was read), and
      C(parts) (only when a run's pairs differ in the O(compare_by) label).
  returned: success
  type: dict
  contains:
    format:
      description: V(esxilab.iperf.report).
      type: str
    version:
      description: The format's version, V(1).
      type: int
    sweeps:
      description:
        - The stream sweeps - one item per test, direction, swap and compared value with more than one streams value
          (C(points) of C({streams, mean, ci95_half_width, count}), C(knee), C(best_streams), C(best_bits_per_second),
          C(tolerance)); C(plateau_streams) - the stream counts from the knee on whose mean is within the tolerance
          of the best - and C(plateau_bits_per_second), the mean of their means (the level the sweep reaches; empty
          and V(null) without a knee).
      type: list
      elements: dict
    summary:
      description: The summary groups - one item per test, direction, swap, streams value and compared label value.
      type: list
      elements: dict
      contains:
        test:
          description: Test name.
          type: str
        direction:
          description: V(forward), V(reverse) or V(bidir).
          type: str
        swapped:
          description: Whether servers and clients were swapped.
          type: bool
        streams:
          description: Parallel streams per client; V(null) when not known.
          type: int
        compare:
          description:
            - Value of the O(compare_by) label; V(null) without O(compare_by), and for the whole runs whose pairs
              differ in the label (their parts have groups of their own).
          type: str
        part:
          description:
            - V(true) - the group sums, within each run, only the pairs with its RV(report.summary[].compare) value
              (parts of runs whose pairs differ in the O(compare_by) label); V(false) - whole runs.
          type: bool
        runs:
          description: The numbers of the runs in the group.
          type: list
          elements: int
        stats:
          description:
            - Throughput over the group's runs in bit/s - C(count) (runs with a usable figure), C(skipped), C(mean),
              C(median), C(min), C(max), C(stdev), C(cv), C(sum) and C(ci95) (half width of the 95 % confidence
              interval; V(null) below 2 figures). V(null) each when no run has a figure.
          type: dict
        line_rate_bps:
          description: The line rate the group is compared with (bit/s); V(null) when none is known.
          type: float
        line_rate_source:
          description: Where the line rate came from (a label, O(line_rate_bps), a link speed read on the host).
          type: str
        percent_of_line_rate:
          description: Mean as a percentage of the line rate; V(null) when no line rate is known.
          type: float
        sweep:
          description: Whether the group is a point of a stream sweep.
          type: bool
        knee:
          description: Knee of the group's sweep (stream count); V(null) outside sweeps.
          type: int
        stability:
          description: The C(repeat) stability of the group's point (as the run records give it), or V(null).
          type: dict
        combined:
          description: Whether the group combines the swapped and unswapped runs of a point (C(combine_swapped)).
          type: bool
        flows:
          description: The flows of the group's runs (who sent to whom).
          type: list
          elements: str
        line_rate_note:
          description:
            - Why the percentage of line rate is missing or what it assumes; V(null) when there is nothing to say.
          type: str
        figures:
          description:
            - The figures beside throughput over the group's runs (V(null) each when no run has it) -
              C(cpu_local_percent), C(cpu_remote_percent), C(retransmits) (mean per run), C(rtt_min_us),
              C(rtt_mean_us), C(rtt_max_us), C(lost_percent), C(jitter_ms), C(lost_packets), C(packets),
              C(reverse_bits_per_second), C(bidir_sum_bits_per_second).
          type: dict
        nic:
          description: The NIC counter deltas of the group's runs, when they were read; V(null) otherwise.
          type: dict
msg:
  description: What was done.
  returned: always
  type: str
  sample: wrote 7 file(s) in /srv/lab/reports/vswitch-forwarding
"""
