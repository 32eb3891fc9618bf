# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``report.html``: the report in one self-contained file, rendered from the ``results.json`` document.

One path per datum: ``to_html()`` reads the document ``results_json.report_doc()`` built - the one
``results.json`` holds - and nothing else of the report, so every figure on the page is a figure of
``results.json``. A number is shown in the report's unit and carries the figure itself and where it is in
``results.json`` (``data-path="summary/0/stats/mean"``, ``data-value``), so a reader (and the tests, in a real
browser) can check one against the other.

Self-contained: the plots are embedded as ``data:`` PNG images, the style is inline, there is no script, and a
Content-Security-Policy meta tag (``default-src 'none'``; images only from ``data:``) tells the browser to load
nothing else. The only links are relative ones to the files beside it (``results.json``, ``summary.md``, the raw
iperf outputs ``raw-run<N>-<K>.txt``): sent alone, the page still shows everything but the raw text.

The baseline and the gate are known only after ``report_gate`` ran: their section sits between ``GATE_BEGIN`` and
``GATE_END``, written by ``report_write`` from the document it has (no gate yet), and replaced by ``with_gate()``
from the document ``report_gate`` writes into ``results.json``.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.base import (
    NA,
    UNITS,
    Unit,
    format_rate,
    label_text,
)

__all__ = ["CSP", "GATE_BEGIN", "GATE_END", "HTML_FILE", "html_files", "raw_files", "to_html", "with_gate"]

HTML_FILE = "report.html"
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
GATE_BEGIN = "<!-- esxilab.iperf gate -->"
GATE_END = "<!-- /esxilab.iperf gate -->"
# Bidi overrides, embeddings, isolates and marks: they reorder what is shown, so they are shown as escapes.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
_STYLE = """
body{font-family:sans-serif;margin:1.5em;color:#222;max-width:80em}
table{border-collapse:collapse;margin:.5em 0 1.2em}
th,td{border:1px solid #bbb;padding:.2em .5em;vertical-align:top}
th{background:#eee}td.n{text-align:right;font-variant-numeric:tabular-nums}
.warn{background:#fff3cd;border:1px solid #e0b000;padding:.4em .6em;margin:.3em 0}
.fail{color:#a00;font-weight:bold}.pass{color:#070;font-weight:bold}
img{max-width:100%;border:1px solid #ddd}pre{white-space:pre-wrap}
"""


def _text(value: Any) -> str:
    """``value`` as escaped HTML text; bidi control characters shown as ``\\u202e`` escapes."""
    shown = "".join(f"\\u{ord(c):04x}" if c in _BIDI else c for c in label_text(value))
    return html.escape(shown, quote=True)


def _unit(document: Mapping[str, Any]) -> Unit:
    return next((u for u in UNITS if u.name == document.get("unit")), UNITS[0])


def _at(document: Any, path: str) -> Any:
    """The value at ``path`` (``summary/0/stats/mean``) of the document, ``None`` when absent."""
    value = document
    for part in path.split("/"):
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, Mapping) and part in value:
            value = value[part]
        else:
            return None
    return value


class _Page:
    """The document and the unit: number cells read their figure from the document by path."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.doc = document
        self.unit = _unit(document)

    def num(self, path: str, kind: str = "rate") -> str:
        """A number cell: the figure at ``path`` in the report's unit (``rate``), as a percentage (``pct``) or as
        a count (``int``); ``data-value`` holds the figure as results.json has it."""
        value = _at(self.doc, path)
        number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
        if number is None:
            shown = NA
        elif kind == "rate":
            shown = format_rate(float(number), self.unit)
        elif kind == "pct":
            shown = f"{number:.1f}"
        else:
            shown = f"{number:,}" if isinstance(number, int) else f"{number:g}"
        data = html.escape(json.dumps(number), quote=True)
        return f'<td class="n" data-path="{html.escape(path, quote=True)}" data-value="{data}">{shown}</td>'


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A table; ``rows`` hold finished cells (``<td>...</td>``)."""
    if not rows:
        return []
    out = ["<table>", "<tr>" + "".join(f"<th>{_text(h)}</th>" for h in head) + "</tr>"]
    out += ["<tr>" + "".join(row) + "</tr>" for row in rows]
    return [*out, "</table>"]


def _td(value: Any) -> str:
    return f"<td>{_text(value)}</td>"


def _summary(page: _Page) -> list[str]:
    groups = page.doc.get("summary") or []
    with_compare = page.doc.get("compare_by") is not None
    head = ["test", "direction", "streams", *([str(page.doc["compare_by"])] if with_compare else [])]
    head += ["runs", f"mean {page.unit.name}", "+/- 95 % CI", "min", "max", "stdev", "% of line rate", "knee"]
    rows = []
    for i, group in enumerate(groups):
        path = f"summary/{i}"
        row = [_td(group.get("test")), _td(("swapped " if group.get("swapped") else "") + str(group.get("direction")))]
        row.append(_td(group.get("streams")))
        if with_compare:
            row.append(_td(group.get("compare")))
        row += [page.num(f"{path}/stats/count", "int"), page.num(f"{path}/stats/mean")]
        row += [page.num(f"{path}/stats/ci95/half_width"), page.num(f"{path}/stats/min"), page.num(f"{path}/stats/max")]
        row += [page.num(f"{path}/stats/stdev"), page.num(f"{path}/percent_of_line_rate", "pct")]
        row.append(_td("*" if group.get("knee") is not None and group.get("knee") == group.get("streams") else ""))
        rows.append(row)
    lines = ["<h2>Summary</h2>", f"<p>Throughput in {_text(page.unit.name)}; * the knee of a stream sweep.</p>"]
    return lines + _table(head, rows)


def _comparison(page: _Page) -> list[str]:
    comparison = page.doc.get("comparison")
    if not isinstance(comparison, Mapping) or not comparison.get("rows"):
        return []
    values = [str(v) for v in comparison.get("values") or []]
    head = ["row", *(f"{v} mean {page.unit.name}" for v in values), *(f"{v} vs {values[0]} %" for v in values[1:])]
    rows = []
    for i, row in enumerate(comparison["rows"]):
        key = ", ".join(
            f"{k}={label_text(v)}"
            for k, v in row.items()
            if k not in ("means", "ci95_half_width", "delta_percent", "difference")
        )
        cells = [_td(key), *(page.num(f"comparison/rows/{i}/means/{v}") for v in values)]
        cells += [page.num(f"comparison/rows/{i}/delta_percent/{v}", "pct") for v in values[1:]]
        rows.append(cells)
    return [f"<h2>Comparison by {_text(comparison.get('label'))}</h2>", *_table(head, rows)]


def gate_section(document: Mapping[str, Any]) -> str:
    """The baseline and gate section between ``GATE_BEGIN`` and ``GATE_END``, from ``baseline`` / ``gate``."""
    page = _Page(document)
    out = [GATE_BEGIN, '<section id="gate">', "<h2>Baseline and regression gate</h2>"]
    baseline, gate = document.get("baseline"), document.get("gate")
    if not isinstance(baseline, Mapping) and not isinstance(gate, Mapping):
        out.append("<p>Not compared: no history, baseline or tolerance was set (or the gate has not run).</p>")
    if isinstance(baseline, Mapping):
        out.append(f"<p>Baseline: {_text(baseline.get('source') or 'none')}</p>")
        rows = []
        for i, item in enumerate(baseline.get("comparisons") or []):
            path = f"baseline/comparisons/{i}"
            title = f"{item.get('test')} {item.get('direction')} {item.get('streams')} stream(s)"
            rows.append(
                [
                    _td(title),
                    page.num(f"{path}/baseline/mean"),
                    page.num(f"{path}/now/mean"),
                    page.num(f"{path}/difference_percent", "pct"),
                    _td(item.get("verdict")),
                ]
            )
        out += _table(["entry", f"baseline {page.unit.name}", f"now {page.unit.name}", "difference %", "verdict"], rows)
    if isinstance(gate, Mapping):
        checks = [
            [
                _td(c.get("test")),
                _td(c.get("limit")),
                f'<td class="{_text(c.get("status"))}">{_text(c.get("status"))}</td>',
                _td(c.get("detail")),
            ]
            for c in gate.get("checks") or []
        ]
        out += _table(["test", "tolerance", "status", "figures"], checks)
        verdict = "passed" if gate.get("passed") else "FAILED"
        message = f" - {_text(gate['message'])}" if gate.get("message") else ""
        out.append(f'<p class="{"pass" if gate.get("passed") else "fail"}">Gate: {verdict}{message}</p>')
    return "\n".join([*out, "</section>", GATE_END])


def with_gate(page_text: str, document: Mapping[str, Any]) -> str:
    """``page_text`` with its baseline and gate section rendered anew from ``document``; unchanged when it has no
    such section (not a page of ours)."""
    start, end = page_text.find(GATE_BEGIN), page_text.find(GATE_END)
    if start < 0 or end < start:
        return page_text
    return page_text[:start] + gate_section(document) + page_text[end + len(GATE_END) :]


def raw_files(document: Mapping[str, Any]) -> dict[int, tuple[str, str]]:
    """``{index in results: (file name, raw text)}`` of the results whose raw output results.json holds; the
    file name is ``raw-run<run>-<k>.txt`` (``k``: the result's place in its run, from 1)."""
    out: dict[int, tuple[str, str]] = {}
    seen: dict[object, int] = {}
    for index, item in enumerate(document.get("results") or []):
        run = item.get("run")
        seen[run] = seen.get(run, 0) + 1
        raw = _at(item, "result/raw")
        if isinstance(raw, str) and raw and isinstance(run, int):
            out[index] = (f"raw-run{run}-{seen[run]}.txt", raw)
    return out


def _runs(page: _Page, raw: Mapping[int, tuple[str, str]]) -> list[str]:
    lines = ["<h2>Runs</h2>"]
    results = page.doc.get("results") or []
    for i, run in enumerate(page.doc.get("runs") or []):
        path = f"runs/{i}"
        title = (
            f"run {run.get('run')}: {run.get('test')}, {run.get('direction')}, {run.get('streams')} stream(s),"
            f" repetition {label_text(run.get('repetition'))}"
        )
        lines.append(f'<details id="run-{_text(run.get("run"))}"><summary>{_text(title)}</summary>')
        lines += _table(
            ["bits/s in " + page.unit.name, "% of line rate", "retransmits", "complete"],
            [
                [
                    page.num(f"{path}/bits_per_second"),
                    page.num(f"{path}/percent_of_line_rate", "pct"),
                    page.num(f"{path}/retransmits", "int"),
                    _td(run.get("complete")),
                ]
            ],
        )
        labels = run.get("labels") or {}
        if isinstance(labels, Mapping) and labels:
            lines.append("<p>Labels: " + ", ".join(f"{_text(k)}={_text(v)}" for k, v in labels.items()) + "</p>")
        for problem in [*(run.get("errors") or []), *(run.get("warnings") or [])]:
            lines.append(f'<p class="warn">{_text(problem)}</p>')
        rows = []
        for index, item in enumerate(results):
            if item.get("run") != run.get("run"):
                continue
            link = raw.get(index)
            cell = f'<td><a href="{html.escape(link[0], quote=True)}">{_text(link[0])}</a></td>' if link else _td(NA)
            rows.append(
                [
                    _td(item.get("pair")),
                    _td(item.get("client")),
                    _td(item.get("server")),
                    page.num(f"results/{index}/result/bits_per_second"),
                    _td(item.get("error") or ""),
                    cell,
                ]
            )
        lines += _table(["pair", "client", "server", f"bits/s in {page.unit.name}", "error", "raw output"], rows)
        nic = run.get("nic")
        if isinstance(nic, Mapping):
            counters = nic.get("counters") or {}
            lines += _table(
                [f"NIC {name}" for name in counters],
                [[page.num(f"{path}/nic/counters/{name}", "int") for name in counters]],
            )
        lines.append("</details>")
    return lines


def _value(value: Any) -> str:
    """An environment value: a list of dictionaries (e.g. the NICs read) as a table, anything else as text."""
    if isinstance(value, list) and value and all(isinstance(item, Mapping) for item in value):
        keys = list(dict.fromkeys(key for item in value for key in item))
        return "\n".join(_table(keys, [[_td(item.get(key)) for key in keys] for item in value]))
    return _text(value)


def _environment(document: Mapping[str, Any]) -> list[str]:
    environment = document.get("environment") or {}
    rows = (
        [[_td(key), f"<td>{_value(value)}</td>"] for key, value in environment.items()]
        if isinstance(environment, Mapping)
        else []
    )
    return ["<h2>Environment</h2>", *(_table(["key", "value"], rows) or ["<p>Not given.</p>"])]


def to_html(
    document: Mapping[str, Any],
    plots: Sequence[tuple[str, bytes]] = (),
    *,
    files: Sequence[str] = (),
    plots_note: str | None = None,
) -> str:
    """``report.html`` of ``document`` (``results_json.report_doc()``); ``plots`` the drawn PNGs as (caption,
    bytes), ``files`` the names of the report's other files (linked), ``plots_note`` why plots are missing."""
    page = _Page(document)
    runs, results = document.get("runs") or [], document.get("results") or []
    nic = document.get("nic")
    warnings = nic.get("loss_warnings") or [] if isinstance(nic, Mapping) else []
    raw = raw_files(document)
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        f"<title>{_text(document.get('title'))}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{_text(document.get('title'))}</h1>",
        f"<p>Report <code>{_text(document.get('name'))}</code>, generated {_text(document.get('generated_at'))}: "
        f'<span id="run-count">{len(runs)}</span> run(s), <span id="result-count">{len(results)}</span> result(s).'
        + (
            f" Line rate per pair: {format_rate(document['line_rate_bps'], page.unit)} {page.unit.name}."
            if isinstance(document.get("line_rate_bps"), int | float)
            else ""
        )
        + "</p>",
    ]
    body = [f'<p class="warn">Warning: {_text(line)}</p>' for line in warnings]
    body += _environment(document) + _summary(page) + _comparison(page)
    body.append("<h2>Plots</h2>")
    if plots_note:
        body.append(f"<p>Plots: {_text(plots_note)}</p>")
    for caption, png in plots:
        data = base64.b64encode(png).decode("ascii")
        body.append(
            f'<figure><img alt="{_text(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{_text(caption)}</figcaption></figure>"
        )
    if not plots and not plots_note:
        body.append("<p>No plot: the results hold no figure to draw.</p>")
    body.append(gate_section(document))
    body += _runs(page, raw)
    links = [f'<a href="{html.escape(name, quote=True)}">{_text(name)}</a>' for name in files]
    body.append(f"<p>Files beside this page: {', '.join(links)}. Written by esxilab.iperf.report.</p>")
    return "\n".join([*head, *body, "</body></html>"]) + "\n"


def html_files(
    document: Mapping[str, Any],
    plots: Sequence[tuple[str, bytes]] = (),
    *,
    files: Sequence[str] = (),
    plots_note: str | None = None,
) -> dict[str, bytes]:
    """``{file name: content}`` of ``report.html`` and the raw outputs it links (``raw_files``), for
    ``files.write_report``; the arguments are those of ``to_html``."""
    out = {name: text.encode() for name, text in raw_files(document).values()}
    out[HTML_FILE] = to_html(document, plots, files=files, plots_note=plots_note).encode()
    return out
