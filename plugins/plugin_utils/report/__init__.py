# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The collection's one report builder: runs -> rows, statistics, knees, comparison, Markdown, CSV, plots.

Every summary of iperf runs comes from here: the ``esxilab.iperf.report`` role and the
``esxilab.iperf.paired_test`` role (which writes its report through the report role and takes
its ``paired_test_summary`` / ``paired_test_sweeps`` facts from what ``report_write`` returned:
the ``results.json`` document it wrote, ``report_doc()``; nothing is read back from disk).

What lives where (one concern per file):

* ``base.py`` -- constants (``FILES``, ``NA``, ``REPORT_FORMAT``), ``ReportError``, units
  (``Unit``, ``pick_unit``, ``format_rate``) and text formatting, including ``md_text`` /
  ``md_code`` (text from the input made safe for ``summary.md``);
* ``rows.py`` -- the input read into rows: ``read_runs()`` turns run records (``RunRecord``)
  and/or normalized results (``IperfResult``, both in ``plugin_utils/iperf/records.py``) into
  ``RunRow`` items with one ``ResultRow`` per pair;
* ``figures.py`` -- the figures beside throughput (CPU, retransmits, RTT, UDP loss and jitter, the
  reverse direction of bidirectional runs) of a result, a run and a group (``Figures``);
* ``groups.py`` -- grouping, statistics and knees (``Group``, ``Sweep``, ``build_groups``);
* ``parts.py`` -- runs whose pairs differ in the compared label, split into one part per value
  (``split_runs``): the sum over that value's pairs, beside the whole run, never counted twice;
* ``comparison.py`` -- the groups side by side by one label (``Comparison``);
* ``build.py`` -- ``build_report()`` and the ``Report`` every file is rendered from;
* ``results_json.py`` -- ``results.json`` (``report_doc``, the document as data; ``json_text`` / ``to_json``,
  its text);
* ``csv_tables.py`` -- ``results.csv`` / ``summary.csv`` (``results_csv``, ``summary_csv``);
* ``markdown.py`` -- ``summary.md`` (``to_markdown``);
* ``console.py`` -- the compact table printed at the end of the play (``table_lines``);
* ``plot_data.py`` -- what to draw, as plain data (``plot_specs``, ``PlotSpec``);
* ``plots.py`` -- draws the specs as PNG with matplotlib, optional (``render_all``);
* ``files.py`` -- writes a report directory with its manifest, never overwriting what is not
  ours (``write_report``);
* ``nic.py`` -- the NIC counter deltas around the runs (``NicDelta``);
* after the report is written, the action ``report_gate``: ``history.py`` (with ``history_url.py``,
  ``history_sqlite.py``, ``history_pg.py``), ``baseline.py`` (Welch's baseline vs now), ``gate.py``
  (the tolerances) and ``gate_run.py`` (one gate run over a written report directory).

Plain data in, plain data out: apart from ``plots.py`` (matplotlib), ``files.py`` (the
directory) and the history and gate files (the database, the report directory), no file here
imports Ansible or matplotlib, reads a clock or does I/O. The action
``report_write`` calls ``build_report()`` once, then renders the files from the ``Report``.

Input (``runs``) is either the run records of ``esxilab.iperf.paired_test``
(``paired_test_results``: ``RunRecord`` items, each with its ``PairRecord`` items) or plain
normalized results carrying ``labels``; both may be mixed. A plain result is one run of its
own; its test, streams, direction and repetition come from its labels (``test``,
``streams``, ``direction``, ``repetition``), else from the result itself. A run record's own
fields (barrier, start spread, server stop, sender and receiver, ...) are kept in
``results.json`` as ``record`` of the run (without its pairs) and of each result (the pair
without its result).

Honesty rules: every figure comes from the results (a run's figure is the record's
``total_bits_per_second`` or the result's headline ``bits_per_second``); a run without a
usable figure is skipped by the statistics and shown as ``n/a``, never as 0. A percentage
of line rate is given only when a line rate is known: a pair's is its label ``line_rate_bps`` or
``link_speed_mbps`` (of the result, else of the run), else the report's ``line_rate_bps``; a run's
is the sum over its pairs (they ran at the same time), omitted with a reason (``line_rate_note``)
when only some pairs have one. Direction labels name sender and receiver when the records do
(``sender`` / ``receiver`` of paired_test's pairs, labels of plain results).

Input is not trusted: an empty ``runs`` is refused (``ReportError``), text from the input is
HTML-escaped in ``summary.md`` (``md_text``), and CSV cells go through ``csv_cells.csv_safe``.

The builder's names below are the package's interface, imported from here; ``plots`` and
``files`` (the effects) are imported as modules. Each name is imported from its module when it is first used
(PEP 562): a reader of one module - the preflight's ``history``, the progress callbacks' ``base`` - does not import
the whole builder (about 20 modules compiled from source by Ansible's collection loader on every play).

Private package: not part of the collection's public API.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as the type checker sees them; at run time, __getattr__ imports each on first use
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.base import (
        FILES,
        NA,
        REPORT_FORMAT,
        REPORT_VERSION,
        ReportError,
        Unit,
        format_rate,
        pick_unit,
    )
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.build import Report, build_report
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.comparison import Comparison
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.console import table_lines
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.csv_tables import (
        RESULT_COLUMNS,
        SUMMARY_COLUMNS,
        results_csv,
        summary_csv,
    )
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.groups import Group, Sweep
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.markdown import to_markdown
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.plot_data import PlotSpec, Series, plot_specs
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.results_json import (
        json_text,
        report_doc,
        to_json,
    )
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.rows import ResultRow, RunRow, read_runs

#: The package's interface: each name and the module of the package that defines it.
_WHERE = {
    "FILES": "base",
    "NA": "base",
    "REPORT_FORMAT": "base",
    "REPORT_VERSION": "base",
    "RESULT_COLUMNS": "csv_tables",
    "SUMMARY_COLUMNS": "csv_tables",
    "Comparison": "comparison",
    "Group": "groups",
    "PlotSpec": "plot_data",
    "Report": "build",
    "ReportError": "base",
    "ResultRow": "rows",
    "RunRow": "rows",
    "Series": "plot_data",
    "Sweep": "groups",
    "Unit": "base",
    "build_report": "build",
    "format_rate": "base",
    "json_text": "results_json",
    "pick_unit": "base",
    "plot_specs": "plot_data",
    "read_runs": "rows",
    "report_doc": "results_json",
    "results_csv": "csv_tables",
    "summary_csv": "csv_tables",
    "table_lines": "console",
    "to_json": "results_json",
    "to_markdown": "markdown",
}

__all__ = [
    "FILES",
    "NA",
    "REPORT_FORMAT",
    "REPORT_VERSION",
    "RESULT_COLUMNS",
    "SUMMARY_COLUMNS",
    "Comparison",
    "Group",
    "PlotSpec",
    "Report",
    "ReportError",
    "ResultRow",
    "RunRow",
    "Series",
    "Sweep",
    "Unit",
    "build_report",
    "format_rate",
    "json_text",
    "pick_unit",
    "plot_specs",
    "read_runs",
    "report_doc",
    "results_csv",
    "summary_csv",
    "table_lines",
    "to_json",
    "to_markdown",
]


def __getattr__(name: str) -> Any:
    """A name of the interface, imported from its module on first use (then kept in the package)."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
