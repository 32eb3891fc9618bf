# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Draw the plot specifications of ``plot_data.py`` as PNG with matplotlib (Agg, no display).

matplotlib is an optional controller requirement: ``matplotlib_problem()`` says why it cannot
be used (``None`` when it can), and nothing here raises for a missing library. Drawing uses
the object-oriented API (``Figure`` + ``FigureCanvasAgg``), so no global backend is switched
and no pyplot state is shared between plots.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import importlib
import io
import math
from collections.abc import Sequence
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.plot_data import PlotSpec

__all__ = ["INSTALL_HINT", "matplotlib_problem", "render_all", "render_png"]

INSTALL_HINT = "install it on the controller (pip install matplotlib) to get the PNG plots"
WIDTH_IN, HEIGHT_IN, DPI = 9.0, 5.0, 110
# Same metadata for the same figure: a report rendered twice gives the same bytes.
PNG_METADATA = {"Software": "esxilab.iperf report"}


def matplotlib_problem() -> str | None:
    """Why matplotlib cannot draw here, or ``None`` when it can."""
    try:
        for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
            importlib.import_module(name)
    except ImportError as exc:
        return f"matplotlib is not installed on the controller ({exc}); {INSTALL_HINT}"
    except Exception as exc:  # a broken installation (e.g. numpy ABI mismatch) must not fail the play
        return f"matplotlib cannot be imported on the controller ({type(exc).__name__}: {exc}); {INSTALL_HINT}"
    return None


def _nan(values: Sequence[float | None]) -> list[float]:
    return [math.nan if v is None else float(v) for v in values]


def _sweep(ax: Any, spec: PlotSpec) -> list[Any]:
    handles: list[Any] = []
    knees: list[Any] = []
    ticks: set[float] = set()
    for series in spec.series:
        ys = _nan(series.y)
        errors = _nan(series.yerr) if series.yerr else None
        container = ax.errorbar(
            series.x, ys, yerr=errors, marker="o", markersize=6, capsize=5, linewidth=1.8, label=series.label
        )
        handles.append(container)
        ticks.update(series.x)
        if series.knee is not None and series.knee in series.x:
            y = ys[series.x.index(series.knee)]
            if not math.isnan(y):
                (star,) = ax.plot(
                    [series.knee],
                    [y],
                    marker="*",
                    markersize=18,
                    color=container.lines[0].get_color(),
                    markeredgecolor="black",
                    linestyle="none",
                    zorder=5,
                )
                knees.append(star)
    if len(knees) == 1 and len(spec.series) == 1:
        knees[0].set_label(f"knee: {spec.series[0].knee:g} streams")
        handles.append(knees[0])
    elif knees:  # one neutral legend entry for the stars of every series
        from matplotlib.lines import Line2D

        handles.append(
            Line2D(
                [], [], marker="*", markersize=14, color="0.6", markeredgecolor="black", linestyle="none", label="knee"
            )
        )
    ordered = sorted(ticks)
    if spec.x_log2:  # 1, 2, 4, 8: evenly spaced (plot_data decides, and the axis label says so)
        ax.set_xscale("log", base=2)
    ax.set_xticks(ordered, [f"{t:g}" for t in ordered])
    ax.minorticks_off()
    return handles


def _timeseries(ax: Any, spec: PlotSpec) -> list[Any]:
    handles = []
    for series in spec.series:  # x: interval starts and the last end; each rate holds until the next start
        (line,) = ax.plot(series.x, _nan(series.y), drawstyle="steps-post", linewidth=1.6, label=series.label)
        handles.append(line)
    ax.set_xlim(left=0)
    return handles


def _cpu(ax: Any, spec: PlotSpec) -> list[Any]:
    handles = []
    colors: dict[str, str] = {}
    for series in spec.series:
        value = series.label.rsplit(", ", 1)[0]  # "nic=e1000, local CPU" -> one colour per compared value
        color = colors.setdefault(value, f"C{len(colors) % 10}")
        face = "none" if series.hollow else color
        handles.append(
            ax.scatter(
                series.x, _nan(series.y), marker="o", s=46, facecolors=face, edgecolors=color, label=series.label
            )
        )
    top = max((x for series in spec.series for x in series.x), default=0.0)
    ax.set_xlim(left=0, right=max(top * 1.1, 1.0))  # CPU % may pass 100 (several cores): room at the right
    return handles


def _compare(ax: Any, spec: PlotSpec) -> list[Any]:
    handles = []
    count = max(len(spec.series), 1)
    width = 0.8 / count
    for index, series in enumerate(spec.series):
        offset = (index - (count - 1) / 2) * width
        keep = [i for i, y in enumerate(series.y) if y is not None]
        if not keep:
            continue
        positions = [series.x[i] + offset for i in keep]
        heights = [float(series.y[i] or 0.0) for i in keep]
        errors = _nan([series.yerr[i] for i in keep]) if series.yerr else None
        bars = ax.bar(positions, heights, width * 0.95, yerr=errors, capsize=4, label=series.label)
        ax.bar_label(bars, labels=[_short(h) for h in heights], padding=3, fontsize=8)
        handles.append(bars)
    ax.set_xticks(range(len(spec.categories)), list(spec.categories))
    return handles


def _short(value: float) -> str:
    size = abs(value)
    return f"{value:.0f}" if size >= 100 else f"{value:.1f}" if size >= 10 else f"{value:.2f}"


_DRAW = {"sweep": _sweep, "timeseries": _timeseries, "compare": _compare, "cpu": _cpu}


def render_png(spec: PlotSpec) -> bytes:
    """The PNG of one plot. Raises ``ImportError`` without matplotlib, ``ValueError`` for an unknown kind."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    draw = _DRAW.get(spec.kind)
    if draw is None:
        raise ValueError(f"unknown plot kind {spec.kind!r}")
    figure = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    handles = draw(ax, spec)
    if spec.line_rate is not None:
        handles.append(
            ax.axhline(spec.line_rate, color="0.35", linestyle="--", linewidth=1.2, label=spec.line_rate_label)
        )
    ax.set_title(spec.title, fontsize=12)
    ax.set_xlabel(spec.xlabel)
    ax.set_ylabel(spec.ylabel)
    ax.set_ylim(bottom=0)
    top = ax.get_ylim()[1]
    ax.set_ylim(top=top * 1.08)  # room for bar labels and the legend
    ax.grid(True, axis="y", alpha=0.3)
    if handles:  # the series first, then the knee and the line rate
        ax.legend(handles=handles, fontsize=9, loc="best", framealpha=0.9)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata=PNG_METADATA)
    return buffer.getvalue()


def render_all(specs: Sequence[PlotSpec]) -> tuple[dict[str, bytes], list[str]]:
    """PNG bytes per file name, and the problems (one per plot that could not be drawn).

    Without matplotlib: no PNG and one problem saying so. A plot that fails to draw is
    reported and skipped; the others are still drawn.
    """
    if not specs:
        return {}, []
    problem = matplotlib_problem()
    if problem is not None:
        return {}, [problem]
    images: dict[str, bytes] = {}
    problems: list[str] = []
    for spec in specs:
        try:
            images[spec.file] = render_png(spec)
        except Exception as exc:  # one bad plot must not cost the report
            problems.append(f"{spec.file} was not drawn ({type(exc).__name__}: {exc})")
    return images, problems
