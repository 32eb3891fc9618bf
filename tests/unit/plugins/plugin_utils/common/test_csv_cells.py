# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The CSV helpers shared by both report writers: formula neutralisation (OWASP CSV injection)."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.csv_cells import csv_safe, csv_text


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("=1+1", "'=1+1"),
        ('=HYPERLINK("http://x","y")', '\'=HYPERLINK("http://x","y")'),
        ("+cmd", "'+cmd"),
        ("-cmd", "'-cmd"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("-1.5", "-1.5"),
        ("+2", "+2"),
        ("-1e-3", "-1e-3"),
        ("-.5", "-.5"),
        ("-1.5\n", "'-1.5\n"),  # not a plain number
        ("-", "'-"),
        ("- 1", "'- 1"),
        ("a=1", "a=1"),
        # the first non-blank character, after spaces, tabs and line breaks (issue 21)
        (" =1+1", "' =1+1"),
        ("  \t@SUM(A1)", "'  \t@SUM(A1)"),
        ("\n=1", "'\n=1"),
        ("\r\n+cmd", "'\r\n+cmd"),
        (" -cmd", "' -cmd"),
        # a trigger after a separator or a line break, inside the cell
        ("a;=1", "a;'=1"),
        ("a;  @x", "a;  '@x"),
        ("a\n=cmd|' /C calc'!A0", "a\n'=cmd|' /C calc'!A0"),
        ("a\r+cmd", "a\r'+cmd"),
        ("a,\t-cmd", "a,\t'-cmd"),
        ("a;\n=1", "a;\n'=1"),
        ("x\t=1;y", "x\t'=1;y"),
        # plain numbers after a separator, and ordinary text, stay as they are
        ("1,-2", "1,-2"),
        ("a;-1.5 ;=2", "a;-1.5 ;'=2"),
        ("vm2 -> vm1", "vm2 -> vm1"),
        ("2026-12-01T10:00:00Z", "2026-12-01T10:00:00Z"),
        ("", ""),
        (-1.5, -1.5),
        (None, None),
    ],
)
def test_csv_safe(value: Any, expected: Any) -> None:
    assert csv_safe(value) == expected


def test_csv_text_neutralises_every_cell_and_the_header() -> None:
    text = csv_text(["name", "=x"], [{"name": "=1+1", "=x": -2}, {"name": "-0.5"}])
    assert list(csv.reader(io.StringIO(text))) == [["name", "'=x"], ["'=1+1", "-2"], ["-0.5", ""]]


def test_csv_text_keeps_a_split_cell_harmless() -> None:
    """A reader splitting at ``;`` or at line breaks sees no cell starting with a trigger (issue 21)."""
    text = csv_text(["label"], [{"label": "ok;=HYPERLINK(1)"}, {"label": "ok\n=1+1"}, {"label": " =2"}])
    cells = [
        cell for row in csv.reader(io.StringIO(text)) for value in row for cell in value.replace("\n", ";").split(";")
    ]
    assert not [cell for cell in cells if cell.strip(" \t\r").startswith(("=", "+", "-", "@"))], cells
