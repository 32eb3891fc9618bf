# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Checks of a ``report.html`` (its text, or the DOM a real browser dumped) against the ``results.json`` document:
every number cell's ``data-value`` is the figure at its ``data-path``, the shown text is that figure in the
report's unit, and nothing on the page points outside (only ``data:`` images and relative links to plain file
names). Shared by the unit tests and the browser test (``tests/integration/test_report_html_browser.py``)."""

from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser
from typing import Any

UNITS = {"Gbit/s": 1e9, "Mbit/s": 1e6, "Kbit/s": 1e3, "bit/s": 1.0}


class Page(HTMLParser):
    """The tags, the URL attributes and the number cells of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.urls: list[tuple[str, str, str]] = []  # (tag, attribute, value)
        self.cells: list[dict[str, str]] = []  # {path, value, text}
        self.csp: str | None = None
        self.texts: list[str] = []
        self._cell: dict[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = {k: v or "" for k, v in attrs}
        for name in ("src", "href", "action", "srcset", "poster", "data", "background", "formaction"):
            if name in values:
                self.urls.append((tag, name, values[name]))
        if tag == "meta" and values.get("http-equiv", "").lower() == "content-security-policy":
            self.csp = values.get("content")
        if "data-path" in values:
            self._cell = {"path": values["data-path"], "value": values.get("data-value", ""), "text": ""}

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.cells.append(self._cell)
            self._cell = None

    def handle_data(self, data: str) -> None:
        self.texts.append(data)
        if self._cell is not None:
            self._cell["text"] += data


def parse_page(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    return page


def at(document: Any, path: str) -> Any:
    """The value at ``path`` (``summary/0/stats/mean``), ``None`` where the document has none."""
    value = document
    for part in path.split("/"):
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return None
    return value


def external_urls(page: Page) -> list[tuple[str, str, str]]:
    """URL attributes that are neither a ``data:image/png`` image nor a relative link to a plain file name."""
    wrong = []
    for tag, name, value in page.urls:
        if tag == "img" and name == "src" and value.startswith("data:image/png;base64,"):
            continue
        if tag == "a" and name == "href" and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", value):
            continue
        wrong.append((tag, name, value))
    return wrong


def check_numbers(page: Page, document: dict[str, Any]) -> int:
    """Assert every number cell against ``document``; return how many cells hold a figure (not n/a)."""
    scale = UNITS[document["unit"]]
    figures = 0
    for cell in page.cells:
        expected = at(document, cell["path"])
        shown = json.loads(cell["value"])
        assert shown == expected, cell
        text = cell["text"].strip()
        if expected is None:
            assert text == "n/a", cell
            continue
        figures += 1
        number = float(text.replace(",", ""))
        if cell["path"].endswith(("bits_per_second", "/mean", "/min", "/max", "/stdev", "/half_width")) or (
            "/means/" in cell["path"]
        ):
            assert math.isclose(number * scale, expected, rel_tol=5e-3, abs_tol=scale * 1e-3), cell
        else:
            assert math.isclose(number, expected, rel_tol=5e-3, abs_tol=0.05), cell
    return figures
