# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Text from the input in ``summary.md`` (``report/base.md_text`` / ``md_code``) and in the CSV files
(``csv_cells.csv_safe``): each attack string of issue 21 is shown as text, never run - no image, no link, no HTML, no
bidi reordering, no control character, no formula."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.parse import parse
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report import (
    build_report,
    results_csv,
    summary_csv,
    to_markdown,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.base import md_code, md_text
from tests.collection_path import FIXTURES

LABLOG = "iperf3-ge3.2-text-client-basic-tcp-t2-lablog.txt"

# (attack, what md_text makes of it)
ATTACKS = [
    ("![x](http://evil/p.png)", "!\\[x\\](http:\\//evil/p.png)"),
    ("[click](javascript:alert(1))", "\\[click\\](javascript:alert(1))"),
    ("[a][1]", "\\[a\\]\\[1\\]"),
    ("<https://evil>", "&lt;https:\\//evil>"),
    ("https://evil.example/x", "https:\\//evil.example/x"),
    ("see WWW.evil.example", "see WWW\\.evil.example"),
    ("mail me@evil.example", "mail me\\@evil.example"),
    ("<script>alert(1)</script>", "&lt;script>alert(1)&lt;/script>"),
    ("&lt;b&gt;", "&amp;lt;b&amp;gt;"),
    ("`code` span", "\\`code\\` span"),
    ("a\\[b", "a\\\\\\[b"),  # a backslash of the input cannot escape ours
    ("nic\u202eexe.txt", "nic&lt;U+202E>exe.txt"),
    ("\u2066isolate\u2069", "&lt;U+2066>isolate&lt;U+2069>"),
    ("\u202a\u202b\u202c\u202d", "&lt;U+202A>&lt;U+202B>&lt;U+202C>&lt;U+202D>"),
    ("mark\u200f\u200e\u061c", "mark&lt;U+200F>&lt;U+200E>&lt;U+061C>"),
    ("bell\x07nul\x00esc\x1b[31m", "bell&lt;U+0007>nul&lt;U+0000>esc&lt;U+001B>\\[31m"),
    ("del\x7f c1\x9b", "del&lt;U+007F> c1&lt;U+009B>"),
    ("zero\u200bwidth", "zero&lt;U+200B>width"),
    ("two\nlines\r\n\tand|pipe", "two lines and\\|pipe"),
    ("vm2 -> vm1", "vm2 -> vm1"),
]


@pytest.mark.parametrize(("attack", "expected"), ATTACKS)
def test_md_text_escapes_each_attack(attack: str, expected: str) -> None:
    assert md_text(attack) == expected


@pytest.mark.parametrize(
    ("attack", "expected"),
    [
        ("a`b", "`a'b`"),
        ("x|y", "`x\\|y`"),
        ("rtl\u202eexe", "`rtl<U+202E>exe`"),
        ("line\nbreak\x07", "`line break<U+0007>`"),
        ("[x](javascript:1)", "`[x](javascript:1)`"),  # literal inside a code span: not a link
    ],
)
def test_md_code_keeps_a_span_literal_and_visible(attack: str, expected: str) -> None:
    assert md_code(attack) == expected


# What a Markdown renderer would turn into something active, in raw summary.md text.
_ACTIVE = [
    re.compile(r"(?<!\\)!?(?<!\\)\[[^\]]*(?<!\\)\]\("),  # an image or a link: [..]( not escaped
    re.compile(r"<[A-Za-z/!?]"),  # an HTML tag, comment or autolink
    re.compile(r"(?i)(?<![\\`])\b(?:https?|ftp|javascript)://"),  # a bare URL a GFM renderer links
    re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\x00-\x08\x0b-\x1f\x7f-\x9f]"),
]


def _report(**labels: Any) -> Any:
    parsed: dict[str, Any] = parse((FIXTURES / LABLOG).read_text())
    parsed["labels"] = labels
    return build_report(
        [parsed],
        name="x",
        title="![t](http://evil/t.png) \u202etitle",
        compare_by="nic",
        environment={"[k](javascript:alert(1))": "<img src=x onerror=alert(1)>", "t": [{"c\u2066": "v\x1b"}]},
    )


def test_no_attack_string_is_active_anywhere_in_the_summary() -> None:
    attacks = [attack for attack, _expected in ATTACKS]
    report = _report(nic="[vmx](javascript:alert(1))", note=" ".join(attacks), test="![i](http://x/y.png)\u202e")
    text = to_markdown(report)
    # the code spans (```...```) show their content literally; what is outside them must hold nothing active
    outside = re.sub(r"`[^`\n]*`", "``", text)
    for pattern in _ACTIVE:
        assert not pattern.search(outside), (pattern.pattern, pattern.search(outside))
    assert "| \\[vmx\\](javascript:alert(1)) |" in text  # the compared label, in a table cell
    assert "| !\\[i\\](http:\\//x/y.png)&lt;U+202E> |" in text  # the test name, in the runs table
    assert "### Test `![i](http://x/y.png)<U+202E>`" in text  # in a code span: literal, never an image


def test_csv_cells_are_neutralised_wherever_the_trigger_is() -> None:
    report = _report(nic=" =1+1", note="ok;=HYPERLINK(1)", other="a\n@SUM(A1)")
    for text in (results_csv(report), summary_csv(report)):
        for row in csv.reader(io.StringIO(text)):
            for cell in row:
                for piece in re.split(r"[;\n\r,\t]", cell):
                    assert not piece.strip(" ").startswith(("=", "+", "@")), (cell, piece)
