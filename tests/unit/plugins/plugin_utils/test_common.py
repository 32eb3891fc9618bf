# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The CSV helpers shared by both report writers: formula neutralisation (OWASP CSV injection)."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils._common import csv_safe, csv_text


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
