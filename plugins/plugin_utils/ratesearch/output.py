# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The rate search's outputs: the document (``rate-search.json`` and the fact), CSV, Markdown and the plots.

One path per datum: :func:`document` builds the one document from the search (``SizeResult.as_dict()``),
and the CSV files, the Markdown and the plot specifications read that document, never the search again.
The plots are ``report/plot_data.py`` sweeps (x: frame size, one series per rate), drawn by
``report/plots.py``; the files are written by ``report/files.py`` into the report directory under the key
``rate_search`` of its manifest, so a ``paired_test`` report and a rate search may share a directory.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.csv_cells import csv_text
from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch.frames import (
    FRAME_OVERHEAD,
    WIRE_EXTRA,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch.run import SizeResult
from ansible_collections.esxilab.iperf.plugins.plugin_utils.ratesearch.settings import Settings
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.base import md_code, md_text
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.plot_data import SWEEP_LOG2_SPAN, PlotSpec, Series

__all__ = [
    "FILES",
    "FORMAT",
    "REPORT_KEY",
    "SIZE_COLUMNS",
    "TRIAL_COLUMNS",
    "VERSION",
    "document",
    "markdown",
    "plot_specs",
    "sizes_csv",
    "trials_csv",
]

FORMAT = "esxilab.iperf.rate-search"
VERSION = 1
REPORT_KEY = "rate_search"  # the report directory's manifest key
FILES = {
    "json": "rate-search.json",
    "csv": "rate-search.csv",
    "trials_csv": "rate-search-trials.csv",
    "markdown": "rate-search.md",
}
PLOT_FILES = {"mbps": "rate-search-mbps.png", "pps": "rate-search-pps.png"}
SIZE_COLUMNS = (
    "frame_size",
    "payload_size",
    "rate_mbps",
    "payload_mbps",
    "pps",
    "loss_percent",
    "lost_packets",
    "packets",
    "received_mbps",
    "above_mbps",
    "bound",
    "trials_made",
    "error",
)
TRIAL_COLUMNS = (
    "frame_size",
    "trial",
    "rate_mbps",
    "offered_bps",
    "offered_pps",
    "verdict",
    "loss_percent",
    "lost_packets",
    "packets",
    "sent_bps",
    "received_bps",
    "received_pps",
    "received_mbps",
    "error",
)
FRAME_NOTE = (
    f"frame size: the Ethernet frame with FCS (RFC 2544), UDP payload = frame - {FRAME_OVERHEAD} bytes (Ethernet 14, "
    f"FCS 4, IPv4 20, UDP 8); rate_mbps counts whole frames, payload_mbps what iperf counts (-b); on the wire each "
    f"frame also takes {WIRE_EXTRA} bytes of preamble and gap"
)


def document(
    settings: Settings,
    results: Sequence[SizeResult],
    *,
    name: str,
    server: str,
    client: str | None,
    generated_at: str,
) -> dict[str, Any]:
    """The document of a search: ``rate-search.json``, the action's ``results`` and the fact ``rate_search_results``."""
    rows = [r.as_dict() for r in results]
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": name,
        "generated_at": generated_at,
        "server": server,
        "client": client,
        "frame_size_note": FRAME_NOTE,
        "settings": settings.as_dict(),
        "complete": all(row["error"] is None for row in rows),
        "results": rows,
    }


def sizes_csv(doc: Mapping[str, Any]) -> str:
    """``rate-search.csv``: one row per frame size."""
    return csv_text(SIZE_COLUMNS, doc["results"])


def trials_csv(doc: Mapping[str, Any]) -> str:
    """``rate-search-trials.csv``: every trial, in the order made."""
    rows = [
        {"frame_size": row["frame_size"], "trial": number, **trial}
        for row in doc["results"]
        for number, trial in enumerate(row["trials"], 1)
    ]
    return csv_text(TRIAL_COLUMNS, rows)


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def _rate_cell(row: Mapping[str, Any]) -> str:
    if row["error"]:
        return "error"
    if row["rate_mbps"] is None:
        return f"none (below {_num(row['above_mbps'])})"
    if row["bound"] == "max_mbps":
        return f"{_num(row['rate_mbps'])} (max_mbps: may be more)"
    return f"{_num(row['rate_mbps'])} (< {_num(row['above_mbps'])})"


def markdown(doc: Mapping[str, Any], plots: Sequence[PlotSpec], plots_note: str | None) -> str:
    """``rate-search.md``: the settings, the table of frame sizes, the trials, the plots."""
    settings = doc["settings"]
    lines = [
        f"# Rate search: {md_text(doc['name'])}",
        "",
        f"Client {md_code(doc['client'] or 'n/a')} -> server {md_code(doc['server'])}, generated "
        f"{md_text(doc['generated_at'])}. Highest offered rate with loss <= {settings['loss_percent']:g} %, the "
        f"sent and the received rate at most {settings['shortfall_percent']:g} % short (verdicts sender, short); "
        f"trials of {settings['trial_seconds']} s, "
        f"searched from {settings['min_mbps']:g} to {settings['max_mbps']:g} Mbit/s to "
        f"{settings['resolution_mbps']:g} Mbit/s, MTU {settings['mtu']}.",
        "",
        f"_{md_text(doc['frame_size_note'])}._",
        "",
        "| frame (B) | payload (B) | rate (Mbit/s of frames) | payload Mbit/s | packets/s | loss % | lost/packets "
        "| trials |",
        "|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for row in doc["results"]:
        lost = f"{row['lost_packets']}/{row['packets']}" if row["packets"] is not None else "n/a"
        lines.append(
            f"| {row['frame_size']} | {row['payload_size']} | {_rate_cell(row)} | {_num(row['payload_mbps'])} "
            f"| {_num(row['pps'], 0)} | {_num(row['loss_percent'], 4)} | {lost} | {row['trials_made']} |"
        )
    errors = [row for row in doc["results"] if row["error"]]
    if errors:
        lines += ["", "**The search did not finish:**", ""]
        lines += [f"- frame size {row['frame_size']}: {md_text(row['error'])}" for row in errors]
    lines += ["", "## Trials", ""]
    for row in doc["results"]:
        if not row["trials"]:
            continue
        made = ", ".join(
            f"{_num(t['rate_mbps'])} {t['verdict']}"
            + (f" ({t['lost_packets']}/{t['packets']} lost)" if t["packets"] is not None else "")
            for t in row["trials"]
        )
        lines.append(f"- {row['frame_size']} B: {made}")
    if plots or plots_note:
        lines += ["", "## Plots", ""]
        lines += [f"![{md_text(spec.title)}]({spec.file})" for spec in plots]
        if plots_note:
            lines.append(f"Plots: {md_text(plots_note)}")
    return "\n".join(lines) + "\n"


def plot_specs(doc: Mapping[str, Any]) -> list[PlotSpec]:
    """Rate vs frame size (Mbit/s of frames and of payload) and packets/s vs frame size; none without a rate."""
    rows = [row for row in doc["results"] if row["rate_mbps"] is not None]
    if not rows:
        return []
    x = tuple(float(row["frame_size"]) for row in rows)
    log2 = max(x) >= SWEEP_LOG2_SPAN * min(x)
    xlabel = "frame size (bytes, with FCS)" + (", log2 scale" if log2 else "")
    threshold = f"loss <= {doc['settings']['loss_percent']:g} %"
    return [
        PlotSpec(
            kind="sweep",
            file=PLOT_FILES["mbps"],
            title=f"{doc['name']}: highest rate with {threshold}",
            xlabel=xlabel,
            ylabel="Mbit/s",
            series=(
                Series("frames (rate_mbps)", x, tuple(row["rate_mbps"] for row in rows)),
                Series("UDP payload (payload_mbps)", x, tuple(row["payload_mbps"] for row in rows)),
            ),
            x_log2=log2,
        ),
        PlotSpec(
            kind="sweep",
            file=PLOT_FILES["pps"],
            title=f"{doc['name']}: packets per second with {threshold}",
            xlabel=xlabel,
            ylabel="packets/s",
            series=(Series("packets/s (pps)", x, tuple(row["pps"] for row in rows)),),
            x_log2=log2,
        ),
    ]
