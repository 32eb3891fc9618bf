# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``summary.md``: header, environment, tables per test (with knees), comparison, plots, runs. Text from the
input goes through ``md_text`` / ``md_code``.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.base import (
    FILES,
    NA,
    UNIT_TEXT,
    Unit,
    as_number,
    format_rate,
    label_text,
    md_code,
    md_text,
    pct,
    rate_with_unit,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.build import Report
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.figures import Figures
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.groups import Group, common_value, in_order
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.latency import LATENCY_FIGURES, result_latency
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.nic import DELTA_COUNTERS
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.parts import ALL_PAIRS, NO_VALUE
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.plot_data import PlotSpec


def _table(header: Sequence[str], align: str, rows: Iterable[Sequence[str]]) -> list[str]:
    """A Markdown table; ``align`` holds ``l`` or ``r`` per column."""
    marks = {"l": "---", "r": "--:"}
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(marks[a] for a in align) + " |"]
    lines.extend("| " + " | ".join(md_text(c) for c in row) + " |" for row in rows)
    return lines


def _flatten(prefix: str, value: Any, out: list[tuple[str, str]], tables: list[tuple[str, list[Any]]]) -> None:
    if isinstance(value, Mapping):
        if not value and prefix:
            out.append((prefix, "{}"))
        for key, item in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), item, out, tables)
    elif isinstance(value, list | tuple) and value and all(isinstance(v, Mapping) for v in value):
        tables.append((prefix, list(value)))
    elif isinstance(value, list | tuple):
        out.append((prefix, ", ".join(label_text(v) for v in value)))
    else:
        out.append((prefix, label_text(value)))


def _environment_md(report: Report) -> list[str]:
    lines = ["## Environment", ""]
    scalars: list[tuple[str, str]] = []
    tables: list[tuple[str, list[Any]]] = []
    _flatten("", report.environment, scalars, tables)
    if scalars:
        lines += _table(["Item", "Value"], "ll", scalars)
        lines.append("")
    for name, items in tables:
        columns = in_order(str(k) for item in items for k in item)
        lines += [f"{md_code(name)}:", ""]
        lines += _table(
            [md_text(c) for c in columns], "l" * len(columns), ([label_text(i.get(c)) for c in columns] for i in items)
        )
        lines.append("")
    if not scalars and not tables:
        lines += ["No environment was given (role variable `report_environment`).", ""]
    tools = report.tools()
    if tools:
        seen = "; ".join(
            f"{md_text(tool)} {md_text(version)}: {count} result{'s' if count != 1 else ''}"
            if version
            else f"{md_text(tool)}, version not printed: {count} result{'s' if count != 1 else ''}"
            for tool, version, count in tools
        )
        lines += [f"Tools in the results: {seen}.", ""]
    return lines


def _nic_md(report: Report) -> list[str]:
    """The NIC counters: per test the deltas over its runs, per run where read around it, and the warnings."""
    if not report.has_nic:
        return []
    names = ("rx dropped", "tx dropped", "rx errors", "tx errors")
    lines = [
        "## NIC counters",
        "",
        "Counter changes of the NICs behind the test addresses (Linux: `ip -s -s link`, `ethtool -S` and "
        "`tc -s qdisc`; ESXi: `esxcli network nic stats get` and the driver's `networkinternal nic privstats get` of "
        "the active uplinks), summed over the NICs read; "
        f"{NA}: not read, `?`: unknown (a counter went backwards or was not printed). Drops, ring exhaustion, pause "
        "frames and errors of each run: the warnings at the top and `nic.loss_warnings` in results.json. Drivers "
        "and firmware: `nics` in the environment.",
        "",
    ]

    def cells(counters: Mapping[str, int | None] | None) -> list[str]:
        if counters is None:
            return [NA] * len(DELTA_COUNTERS)
        return ["?" if counters.get(c) is None else str(counters.get(c)) for c in DELTA_COUNTERS]

    rows = []
    for test in report.tests:
        delta = report.nic_tests.get(test)
        span = NA if delta is None else f"{delta.first_run} - {delta.last_run}"
        rows.append([test, span, *cells(None if delta is None else delta.counters)])
    lines += _table(["Test", "Runs", *names], "llrrrr", rows)
    lines.append("")
    per_run = [run for run in report.runs if run.nic is not None]
    if per_run:
        lines += _table(
            ["Run", "Test", *names],
            "rlrrrr",
            ([str(run.run), run.test, *cells(run.nic.counters)] for run in per_run if run.nic is not None),
        )
        lines.append("")
    warnings = in_order(w for d in [*report.nic_tests.values(), *(r.nic for r in per_run)] if d for w in d.warnings)
    lines += [f"* {md_text(w)}" for w in warnings]
    return [*lines, ""] if warnings else lines


def _core_text(percent: float | None, core: str | None) -> str:
    return pct(percent) if percent is None or core is None else f"{pct(percent)} ({md_text(core)})"


def _host_cpu_md(report: Report) -> list[str]:
    """The hosts' CPU beside throughput: per run (each host of its pairs) and, with ``compare_by``, per compared
    value (seed 001's CPU of e1000 vs vmxnet3); nothing when no run read it."""
    runs = [run for run in report.runs if run.host_cpu is not None]
    if not runs:
        return []
    unit = report.unit
    lines = [
        "## Host CPU",
        "",
        "The CPU of each host of a run, from its start to its stop (Linux: the `cpu` lines of `/proc/stat`; raw "
        "readings in the run record's `cpu`): the host's mean over all its CPUs and its busiest core. A lab host "
        "in a network namespace shares the machine's `/proc/stat`: its CPU is the whole machine's. "
        f"{NA}: no figure (why: the last column).",
        "",
    ]
    rows = []
    for run in runs:
        for host, cpu in (run.host_cpu or {}).items():
            rows.append([str(run.run), md_text(run.test), *([md_text(run.compare or NA)] if report.compare_by else []),
                         format_rate(run.bits_per_second, unit), md_text(host), pct(cpu.mean_percent),
                         _core_text(cpu.max_core_percent, cpu.max_core), md_text(cpu.reason or "")])  # fmt: skip
    compared = [md_text(report.compare_by)] if report.compare_by else []
    header = ["Run", "Test", *compared, f"Throughput ({unit.name})", "Host", "CPU mean %", "Max core %", "Why n/a"]
    lines += [*_table(header, "rl" + "l" * len(compared) + "rlrrl", rows), ""]
    comparison = report.comparison
    if comparison is None or not comparison.values or not comparison.rows:
        return lines
    dims = [k for k in ("test", "direction", "streams") if k in comparison.rows[0].key]
    rows = []
    for row in comparison.rows:
        for value in comparison.values:
            group = row.cells.get(value)
            for host, over in ((group.host_cpu or {}) if group is not None else {}).items():
                rows.append([*(_key_text(row.key, d) for d in dims), md_text(value),
                             format_rate(group.mean if group is not None else None, unit), md_text(host),
                             pct(over.mean_percent), pct(over.max_core_percent), str(over.runs)])  # fmt: skip
    if rows:
        header = [d.capitalize() for d in dims] + [md_text(comparison.label), f"Throughput ({unit.name})", "Host",
                                                   "CPU mean %", "Max core %", "Runs"]  # fmt: skip
        lines += [
            f"### Host CPU by {md_code(comparison.label)}",
            "",
            f"Per {md_text(comparison.label)}: the mean throughput, and each host's CPU mean % (the mean over the "
            "runs with the figure) and its busiest core (the largest over the runs).",
            "",
            *_table(header, "l" * (len(dims) + 1) + "rlrrr", rows),
            "",
        ]
    return lines


def _group_row(report: Report, group: Group, with_compare: bool, with_rate: bool) -> list[str]:
    unit = report.unit
    stats = group.stats
    ci95 = stats.get("ci95") or {}
    low, high = as_number(ci95.get("low")), as_number(ci95.get("high"))
    count, total = int(stats.get("count") or 0), len(group.runs)
    row = [group.direction_text, NA if group.streams is None else str(group.streams)]
    if with_compare:
        row.append(group.compare_text or NA)
    row += [
        str(total) if count == total else f"{count} of {total}",
        format_rate(group.mean, unit),
        format_rate(as_number(stats.get("median")), unit),
        format_rate(as_number(stats.get("stdev")), unit),
        NA if low is None or high is None else f"{format_rate(low, unit)} - {format_rate(high, unit)}",
        format_rate(as_number(stats.get("min")), unit),
        format_rate(as_number(stats.get("max")), unit),
    ]
    if with_rate:
        row.append(pct(group.percent_of_line_rate))
    if group.sweep and group.knee is not None and group.streams == group.knee:
        row[1] += " (knee)"
    return row


def _tests_md(report: Report) -> list[str]:
    unit = report.unit.name
    with_compare = report.compare_by is not None
    with_rate = report.has_line_rate
    lines = ["## Results by test", ""]
    lines.append(
        f"Throughput in {unit} ({UNIT_TEXT[unit]}). Runs: the runs with a usable figure, of all runs (a run without "
        f"one is left out of the statistics, never counted as 0). 95 % CI: Student t interval of the mean, {NA} "
        "below 2 runs."
        + ("" if with_rate else " No line rate is known (set `report_line_rate_bps` or a `line_rate_bps` label).")
    )
    lines += ["", _figures_text(*figure_columns(report))]
    lines.append("")
    if report.parts:
        lines += [_parts_text(report), ""]
    header = ["Direction", "Streams"]
    if with_compare:
        header.append(md_text(str(report.compare_by)))
    header += ["Runs", f"Mean ({unit})", "Median", "Stdev", "95 % CI", "Min", "Max"]
    if with_rate:
        header.append("% of line rate")
    for test in report.tests:
        groups = [g for g in report.groups if g.test == test]
        runs = [r for r in report.runs if r.test == test]
        lines += [f"### Test {md_code(test)}", ""]
        facts = []
        protocols = in_order(r.protocol for r in runs if r.protocol)
        if protocols:
            facts.append("protocol " + ", ".join(md_text(p) for p in protocols))
        external = any(
            row.record is not None and row.record.get("measured_by") == "server" for r in runs for row in r.results
        )
        if external:
            facts.append(
                "measured by the server (external client): each figure is what the server's own output says it "
                "received from a client outside the inventory"
            )
        pairs = in_order(len(r.results) for r in runs if r.source == "paired_test")
        if pairs:
            facts.append("pairs per run " + ", ".join(str(p) for p in pairs))
        rate = common_value(r.line_rate_bps for r in runs)
        if rate is not None:
            sources = {r.line_rate_source for r in runs}
            source = sources.pop() if len(sources) == 1 else None
            if source == "given: report_line_rate_bps":
                source = None  # the header says it (Line rate: ...)
            per_pair = common_value(p.line_rate_bps for r in runs for p in r.results)
            if external and per_pair is not None:
                text = f"line rate {rate_with_unit(per_pair)} per client test (the server's end)"
            elif len(pairs) == 1 and pairs[0] > 1 and per_pair is not None:
                text = (
                    f"line rate {rate_with_unit(rate)} (the sum over the {pairs[0]} pairs running at the same time, "
                    f"{rate_with_unit(per_pair)} each)"
                )
            else:
                text = f"line rate {rate_with_unit(rate)}"
            facts.append(text + (f" ({md_text(source)})" if source else ""))
        facts.append(f"{len(runs)} run{'s' if len(runs) != 1 else ''}")
        sentence = "; ".join(facts)
        lines += [sentence[:1].upper() + sentence[1:] + ".", ""]
        lines += _table(
            header,
            "ll" + ("l" if with_compare else "") + "r" * (len(header) - 2 - with_compare),
            (_group_row(report, g, with_compare, with_rate) for g in groups),
        )
        lines.append("")
        stability = [
            f"- {md_text(g.direction_text)}, {g.streams} stream(s): {md_text(g.stability)}"
            for g in groups
            if g.stability is not None
        ]
        if stability:
            lines += ["Stability (repeat until_cv / ci_percent):", "", *stability, ""]
        combined = [g for g in report.combined if g.test == test]
        if combined:
            lines += ["Swapped and unswapped runs combined (combine_swapped):", ""]
            lines += _table(
                header,
                "ll" + ("l" if with_compare else "") + "r" * (len(header) - 2 - with_compare),
                (_group_row(report, g, with_compare, with_rate) for g in combined),
            )
            lines.append("")
        notes = in_order(r.line_rate_note for r in runs if r.line_rate_note)
        if notes:
            lines += [f"% of line rate omitted: {md_text(n)}." for n in notes]
            lines.append("")
        lines += _figures_md(report, groups, with_compare)
        for sweep in (s for s in report.sweeps if s.test == test):
            where = md_text(sweep.direction_text) + (
                f", {md_text(report.compare_by)}={md_text(sweep.compare)}" if sweep.compare else ""
            )
            if sweep.knee is None:
                lines.append(f"Knee ({where}): {NA} - no stream count has a usable figure.")
            else:
                lines.append(
                    f"Knee ({where}): **{sweep.knee} stream{'s' if sweep.knee != 1 else ''}** - the smallest stream "
                    f"count whose mean is within {sweep.tolerance * 100:g} % of the best mean "
                    f"({rate_with_unit(sweep.best_bits_per_second)} at {sweep.best_streams} "
                    f"stream{'s' if sweep.best_streams != 1 else ''}). Plateau: "
                    f"{rate_with_unit(sweep.plateau_bits_per_second)}, the mean over "
                    f"{', '.join(str(n) for n in sweep.plateau_streams)} streams (from the knee on, within the "
                    "tolerance of the best)."
                )
            lines.append("")
    return lines


def us(value: float | None) -> str:
    return NA if value is None else f"{value:.0f}"


def _count_text(value: float | None) -> str:
    return NA if value is None else (f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}")


def _rtt_text(figures: Figures) -> str:
    if figures.rtt_mean_us is None:
        return NA
    if figures.rtt_min_us is None or figures.rtt_max_us is None:
        return us(figures.rtt_mean_us)
    return f"{us(figures.rtt_mean_us)} ({us(figures.rtt_min_us)} - {us(figures.rtt_max_us)})"


def _lost_text(figures: Figures) -> str:
    if figures.lost_packets is None or figures.packets is None:
        return NA
    return f"{figures.lost_packets}/{figures.packets}"


def figure_columns(report: Report) -> tuple[bool, bool]:
    """Whether the report has UDP figures, and reverse figures of bidirectional runs (their columns are shown)."""
    figures = [run.figures for run in report.runs]
    udp = any(r.protocol == "udp" for r in report.runs) or any(f.has_udp for f in figures)
    return udp, any(f.has_reverse for f in figures)


def _figures_header(report: Report, udp: bool, reverse: bool) -> list[str]:
    header = ["CPU local %", "CPU remote %", "Retr.", "RTT µs mean (min - max)"]
    if udp:
        header += ["Loss %", "Jitter ms", "Lost/total"]
    if reverse:
        header += [f"Reverse ({report.unit.name})", f"Both ({report.unit.name})"]
    return header


def _figures_cells(report: Report, figures: Figures, udp: bool, reverse: bool) -> list[str]:
    cells = [
        pct(figures.cpu_local_percent),
        pct(figures.cpu_remote_percent),
        _count_text(figures.retransmits),
        _rtt_text(figures),
    ]
    if udp:
        cells += [pct(figures.lost_percent), _jitter(figures.jitter_ms), _lost_text(figures)]
    if reverse:
        cells += [
            format_rate(figures.reverse_bits_per_second, report.unit),
            format_rate(figures.bidir_sum_bits_per_second, report.unit),
        ]
    return cells


def _jitter(value: float | None) -> str:
    return NA if value is None else f"{value:.3f}"


def _figures_md(report: Report, groups: Sequence[Group], with_compare: bool) -> list[str]:
    """The figures beside throughput of a test's groups (CPU, retransmits, RTT; UDP and reverse when present)."""
    udp, reverse = figure_columns(report)
    header = ["Direction", "Streams"]
    if with_compare:
        header.append(md_text(str(report.compare_by)))
    header += _figures_header(report, udp, reverse)
    rows = []
    for group in groups:
        row = [group.direction_text, NA if group.streams is None else str(group.streams)]
        if with_compare:
            row.append(group.compare_text or NA)
        rows.append(row + _figures_cells(report, group.figures, udp, reverse))
    fixed = 3 if with_compare else 2
    return ["Beside throughput:", "", *_table(header, "l" * fixed + "r" * (len(header) - fixed), rows), ""]


def _figures_text(udp: bool, reverse: bool) -> str:
    """What the figures beside throughput are (said once, above the tests)."""
    return (
        "Beside throughput: CPU as the tool printed it (local: the host that printed the result, the client in "
        "paired tests; remote: its peer); retransmits of the senders; RTT of the senders in µs, mean (smallest "
        "minimum - largest maximum)"
        + ("; UDP loss of the receivers, jitter in ms, lost/total datagrams" if udp else "")
        + (
            "; reverse: the reverse direction of bidirectional runs, both: the two directions together"
            if reverse
            else ""
        )
        + ". A run of several pairs has a figure only when every pair has it: CPU and RTT the mean over its pairs, "
        "retransmits, datagrams and rates the sum, jitter the largest. A group's figure is the mean over its runs "
        "with the figure (retransmits per run; datagrams summed); n/a: no run has it."
    )


def _cpu_md(report: Report) -> list[str]:
    """The CPU-vs-throughput view of the comparison: per condition and compared value, throughput and CPU."""
    comparison = report.comparison
    if comparison is None or not comparison.values or not comparison.rows:
        return []
    cells = [g for row in comparison.rows for g in row.cells.values() if g is not None]
    if not any(g.figures.has_cpu for g in cells):
        return [
            f"CPU vs throughput by {md_code(comparison.label)}: no CPU figure in the results (iperf3 prints CPU "
            "use with -V or --json; iperf2 does not print it).",
            "",
        ]
    unit = report.unit
    lines = [
        f"### CPU vs throughput by {md_code(comparison.label)}",
        "",
        f"Mean throughput and mean CPU use per {md_text(comparison.label)}; throughput per CPU % divides the mean "
        f"throughput by the mean local CPU (higher: less CPU for the same rate).",
        "",
    ]
    dims = [k for k in ("test", "direction", "streams") if k in comparison.rows[0].key]
    header = [d.capitalize() for d in dims] + [
        md_text(comparison.label),
        f"Throughput ({unit.name})",
        "CPU local %",
        "CPU remote %",
        f"{unit.name} per CPU % (local)",
    ]
    rows = []
    for row in comparison.rows:
        for value in comparison.values:
            group = row.cells.get(value)
            if group is None:
                continue
            figures = group.figures
            per_cpu = (
                None if group.mean is None or not figures.cpu_local_percent else group.mean / figures.cpu_local_percent
            )
            rows.append(
                [
                    *(_key_text(row.key, d) for d in dims),
                    value,
                    format_rate(group.mean, unit),
                    pct(figures.cpu_local_percent),
                    pct(figures.cpu_remote_percent),
                    format_rate(per_cpu, unit),
                ]
            )
    lines += _table(header, "l" * (len(dims) + 1) + "r" * 4, rows)
    lines.append("")
    return lines


def _key_text(key: Mapping[str, Any], dim: str) -> str:
    value = key.get(dim)
    if dim == "direction":
        return f"{value}{', swapped' if key.get('swapped') else ''}"
    return NA if value is None else str(value)


def _comparison_md(report: Report) -> list[str]:
    comparison = report.comparison
    if comparison is None:
        return []
    unit = report.unit
    lines = [f"## Comparison by {md_code(comparison.label)}", ""]
    if not comparison.values:
        return [*lines, f"No run has the label {md_code(comparison.label)}; nothing to compare.", ""]
    lines.append(
        f"Mean ± half width of the 95 % CI in {unit.name} (n = runs with a figure)"
        + ("; % of line rate" if report.has_line_rate else "")
        + f". The last column(s): difference of the means relative to {md_text(comparison.label)}="
        f"{md_text(comparison.values[0])}, with its 95 % interval (Welch, as the regression gate) - "
        '"not significant" when the interval crosses zero, "n=1, no statistics" with fewer than 2 runs a side.'
    )
    lines.append("")
    dims = [k for k in ("test", "direction", "streams") if k in comparison.rows[0].key] if comparison.rows else []
    header = [d.capitalize() for d in dims]
    header += [f"{md_text(comparison.label)}={md_text(v)}" for v in comparison.values]
    header += [f"{md_text(v)} vs {md_text(comparison.values[0])}" for v in comparison.values[1:]]
    rows = []
    for row in comparison.rows:
        cells = [_key_text(row.key, dim) for dim in dims]
        for value in comparison.values:
            cells.append(_compare_cell(row.cells.get(value), unit, report.has_line_rate))
        cells += [comparison.difference(row, v).text for v in comparison.values[1:]]
        rows.append(cells)
    lines += _table(header, "l" * len(dims) + "r" * (len(header) - len(dims)), rows)
    lines.append("")
    if comparison.left_out:
        lines += [
            f"{comparison.left_out} run(s) without the label {md_code(comparison.label)} are not in this comparison.",
            "",
        ]
    lines += _cpu_md(report)
    return lines


def _compare_cell(group: Group | None, unit: Unit, with_rate: bool) -> str:
    if group is None:
        return "-"
    if group.mean is None:
        return f"{NA} (n=0)"
    text = format_rate(group.mean, unit)
    if group.half_width is not None:
        text += f" ± {format_rate(group.half_width, unit)}"
    text += f" (n={group.stats['count']}"
    if with_rate and group.percent_of_line_rate is not None:
        text += f", {pct(group.percent_of_line_rate)} %"
    return text + ")"


def _parts_text(report: Report) -> str:
    """What the rows of split runs are (said once, above the tests, when some run is split)."""
    label = md_code(report.compare_by)
    return (
        f"Runs whose pairs differ in {label} are split: a row with a value of {label} sums, within each run, only the "
        f"pairs with that value (a part of the run; its statistics are over the runs' parts, its % of line rate is "
        f"against the sum of those pairs' line rates); {md_text(ALL_PAIRS)} is the whole run's sum. A part is never "
        f"added to a run's total, so nothing is counted twice; pairs without the label are in {md_text(NO_VALUE)}. "
        "The parts of each run are listed under Runs."
    )


def _parts_md(report: Report) -> list[str]:
    """The parts of the split runs: per run and compared value, the sum over that value's pairs."""
    if not report.parts:
        return []
    unit = report.unit
    with_rate = report.has_line_rate
    header = ["Run", "Test", "Direction", md_text(str(report.compare_by)), "Pairs", f"Throughput ({unit.name})"]
    if with_rate:
        header.append("% of line rate")
    header.append("Status")
    rows = []
    for part in report.parts:
        row = [
            str(part.run),
            part.test,
            part.direction_text,
            part.compare or NA,
            ", ".join(str(r.pair) for r in part.results),
            format_rate(part.bits_per_second, unit),
        ]
        if with_rate:
            row.append(pct(part.percent_of_line_rate))
        row.append("failed" if part.bits_per_second is None else ("ok" if part.complete else "incomplete"))
        rows.append(row)
    lines = [f"### Parts of the runs by {md_code(report.compare_by)}", ""]
    lines += [
        f"Per run and value of {md_code(report.compare_by)}: the sum over the run's pairs with that value (the "
        "pairs are numbered as in the run). The parts of a run add up to the run's throughput when every pair has a "
        "figure.",
        "",
    ]
    lines += _table(header, "rlllr" + "r" * (len(header) - 6) + "l", rows)
    lines.append("")
    return lines


def _ms(value: Any) -> str:
    number = as_number(value)
    return NA if number is None else f"{number:.3f}"


def _latency_md(report: Report) -> list[str]:
    """Latency under load: per run and pair (so per direction), the ping RTT percentiles idle and loaded."""
    rows = []
    for run in report.runs:
        for row in run.results:
            latency = result_latency(row.record)
            if latency is None:
                continue
            idle: Mapping[str, Any] = latency["idle"] or {}
            loaded = latency["loaded"]
            lost = loaded.get("lost")
            rows.append(
                [
                    str(run.run),
                    run.test,
                    run.direction + (", swapped" if run.swapped else ""),
                    str(row.pair) if row.pair is not None else NA,
                    row.flow or NA,
                    f"{row.client or NA} → {latency['target']}",
                    *(_ms(idle.get(name)) for name in LATENCY_FIGURES),
                    *(_ms(loaded.get(name)) for name in LATENCY_FIGURES),
                    _ms(latency["p50_increase_ms"]),
                    f"{loaded['samples']} / {NA if lost is None else lost}",
                ]
            )
    if not rows:
        return []
    header = [
        "Run",
        "Test",
        "Direction",
        "Pair",
        "Flow",
        "Ping",
        *(f"idle {name[:-3]} ms" for name in LATENCY_FIGURES),
        *(f"loaded {name[:-3]} ms" for name in LATENCY_FIGURES),
        "p50 increase ms",
        "loaded replies / lost",
    ]
    return [
        "## Latency under load",
        "",
        "Round-trip times of the client's pings to its server address, idle before the transfer and during it "
        "(nearest-rank percentiles; n/a - too few replies: p50 needs 2, p90 10, p99 100; see docs/latency.md).",
        "",
        *_table(header, "rllrll" + "r" * 10, rows),
        "",
    ]


def _runs_md(report: Report) -> list[str]:
    unit = report.unit
    with_compare = report.compare_by is not None
    with_rate = report.has_line_rate
    udp, reverse = figure_columns(report)
    header = ["Run", "Test", "Direction", "Streams", "Rep."]
    if with_compare:
        header.append(md_text(str(report.compare_by)))
    header += ["Pairs", f"Throughput ({unit.name})"]
    if with_rate:
        header.append("% of line rate")
    header += ["Retr.", "CPU local/remote %", "RTT µs"]
    if udp:
        header += ["Loss %", "Jitter ms"]
    if reverse:
        header += [f"Reverse ({unit.name})", f"Both ({unit.name})"]
    header.append("Status")
    rows = []
    for run in report.runs:
        row = [
            str(run.run),
            run.test,
            run.direction_text,
            NA if run.streams is None else str(run.streams),
            NA if run.repetition is None else str(run.repetition),
        ]
        if with_compare:
            row.append(run.compare or (ALL_PAIRS if run.parts else NA))
        row += [str(len(run.results)), format_rate(run.bits_per_second, unit)]
        if with_rate:
            row.append(pct(run.percent_of_line_rate))
        figures = run.figures
        row += [
            _count_text(figures.retransmits),
            f"{pct(figures.cpu_local_percent)}/{pct(figures.cpu_remote_percent)}" if figures.has_cpu else NA,
            us(figures.rtt_mean_us),
        ]
        if udp:
            row += [pct(figures.lost_percent), _jitter(figures.jitter_ms)]
        if reverse:
            row += [
                format_rate(figures.reverse_bits_per_second, unit),
                format_rate(figures.bidir_sum_bits_per_second, unit),
            ]
        if run.bits_per_second is None:
            row.append("failed")
        else:
            row.append("ok" if run.complete else "incomplete")
        rows.append(row)
    lines = ["## Runs", ""]
    lines += _table(
        header, "rllrr" + ("l" if with_compare else "") + "r" * (len(header) - 6 - with_compare) + "l", rows
    )
    lines.append("")
    lines += _parts_md(report)
    problems = [f"run {run.run} ({run.test}): {error}" for run in report.runs for error in run.errors]
    notes = [f"run {run.run} ({run.test}): {w}" for run in report.runs for w in run.warnings]
    if problems:
        lines += ["### Failed runs", "", *[f"- {md_text(p)}" for p in problems], ""]
    if notes:
        lines += ["### Warnings", "", *[f"- {md_text(n)}" for n in notes], ""]
    return lines


def to_markdown(
    report: Report,
    plots: Sequence[PlotSpec] = (),
    plots_note: str | None = None,
    notes: Sequence[str] = (),
) -> str:
    """``summary.md``: header, environment, tables per test (with knees), comparison, plots, runs.

    ``plots`` are the plots that were written (referenced by file name, next to summary.md);
    ``plots_note`` says why plots are missing (for example matplotlib is not installed); ``notes``
    say why some plots were not made (for example time series of short runs).
    """
    failed = len(report.failed_runs)
    results = report.results
    summary = (
        f"Report {md_code(report.name)}"
        + (f", generated {md_text(report.generated_at)}" if report.generated_at else "")
        + f": {len(report.runs)} run{'s' if len(report.runs) != 1 else ''}"
        + (f" ({failed} without a usable figure)" if failed else "")
        + f", {len(results)} result{'s' if len(results) != 1 else ''}"
        + f", {len(report.tests)} test{'s' if len(report.tests) != 1 else ''}."
        + (
            f" Line rate per pair: {rate_with_unit(report.line_rate_bps)} (a run of several pairs at the same time is "
            "compared with the sum over its pairs)."
            if report.line_rate_bps
            else ""
        )
    )
    lines = [f"# {md_text(report.title)}", "", summary, ""]
    lines += [f"> **Warning:** {md_text(line)}" for line in report.loss_warnings]
    lines += [""] if report.loss_warnings else []
    lines += _environment_md(report)
    lines += _tests_md(report)
    lines += _comparison_md(report)
    lines += ["## Plots", ""]
    if plots_note:
        lines += [f"Plots: {md_text(plots_note)}", ""]
    for kind, heading in (
        ("sweep", "Sweeps"),
        ("compare", "Comparison"),
        ("cpu", "CPU vs throughput"),
        ("timeseries", "Time series"),
    ):
        chosen = [p for p in plots if p.kind == kind]
        if chosen:
            lines += [f"### {heading}", ""]
            for plot in chosen:
                lines += [f"![{md_text(plot.caption or plot.title)}]({plot.file})", ""]
    if not plots and not plots_note and not notes:
        lines += ["No plot: the results hold no figure to draw.", ""]
    for note in notes:
        lines += [f"{md_text(note[:1].upper() + note[1:])}.", ""]
    lines += _nic_md(report)
    lines += _host_cpu_md(report)
    lines += _latency_md(report)
    lines += _runs_md(report)
    lines += [
        "---",
        "",
        f"Files: {', '.join(FILES.values())}{' and the PNG plots' if plots else ''}. Written by esxilab.iperf.report.",
        "",
    ]
    return "\n".join(lines)
