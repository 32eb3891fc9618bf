# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Entry point of the results core: recognise any iperf output and parse it.

``parse()`` takes text (or an already decoded iperf3 JSON document) and returns one
normalized result. ``parse_all()`` returns every test found in a log.

Multi-test logs: a server that ran several tests prints a ``Server listening`` banner
before each (text); ``iperf3 -s -J`` prints one JSON document per test, one after the other,
and ``--json-stream`` one ``start`` event per test. ``split_tests()`` cuts the log there and
``parse_all()`` returns one result per test: a piece with figures, or with an error once a
client had connected (a failed test). A piece with neither is not a test: the banner a
server prints after its last test, ended there by Ctrl-C (3.10+ logs ``iperf3: interrupt -
the server has terminated``; ``-J`` a document with that error and no connection). Its
error is not a test's: it goes to the warnings of the test before it (of the first test,
for such pieces ahead of it). ``parse()``
returns the last test **with figures** (the most recent measurement) and says in
``warnings`` how many tests the log held and which later ones failed without figures, so
nothing is silently dropped. A log without any figure gives its last error piece.
``parse_result()`` / ``parse_results()`` are the same returning the typed ``IperfResult``
(``iperf/records.py``); ``parse()`` / ``parse_all()`` hand it to the Ansible layer as plain data.

Refused with ``IperfParseError`` (never turned into an empty result): text that is neither
tool's output, and JSON that is not an iperf3 ``-J`` document (for example
``{"foo": [1, 2, 3]}``). The message says what was expected and never quotes the input.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf3_json import (
    parse_iperf3_json,
    parse_iperf3_json_stream,
)
from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.result import (
    IperfParseError,
    IperfResult,
    Result,
    has_figures,
    plain,
)

__all__ = ["detect", "parse", "parse_all", "parse_result", "parse_results", "split_tests"]

_IPERF2_CSV_RE = re.compile(r"^(?:[+-]\d{4}:)?\d{14}(?:\.\d+)?,|^time,srcaddress,")
# Phrases only one of the tools prints (from iperf3 src/iperf_locale.c and iperf2 src/Locale.c).
_IPERF3_MARKERS = re.compile(
    r"iperf3: |^iperf 3\.|Connecting to host |Server listening on \d+|Accepted connection from |"
    r"\] local \S+ port \d+ connected to |\[ ID\]\[Role\]|Reverse mode, remote host |"
    r"\s(?:sender|receiver)\s*$|^- - - - |iperf Done\.|\[ ID\] Interval {11}Transfer",
    re.MULTILINE,
)
_IPERF2_MARKERS = re.compile(
    r"^Client connecting to |^Server listening on (?:TCP|UDP) port|\] local \S+ port \d+ connected with |"
    r"^iperf: |Server Report:|^iperf version 2\.|\[ ID\] Interval {7}Transfer|"
    r"^(?:[TU]CP|UDP) (?:window|buffer) size: |^\[\s*(?:\d+|SUM)\]\s+\d+\.\d-\s*\d+\.\d sec ",
    re.MULTILINE,
)
# A text report line of either tool: "[  5] 0.00-1.00 sec ..." (a CSV log has none).
_REPORT_LINE = re.compile(r"^\[\s*(?:\d+|SUM|\*\d+|SUM-\d+)\]")
# A bare interval line: "[  5]   0.00-1.00   sec ..." (iperf3, always 2 decimals) or
# "[  3]  0.0- 1.0 sec ..." / "[  1] 0.0000-1.0001 sec ..." (iperf2 legacy / fast sampling).
_BARE_INTERVAL = re.compile(r"^\[\s*(?:\d+|SUM)\](?:\[\w+\])?\s+\d+\.(\d+)-\s*\d+\.\d+\s+sec\s", re.MULTILINE)
_WEAK_DETECTION = "no banner or header names the tool; told {tool} by the interval format ({decimals} decimals)"
# Each new test of a server log starts after a banner like this one.
_IPERF3_SERVER_BANNER = re.compile(r"^(?:.*\s)?Server listening on \d+.*$", re.MULTILINE)
# Where two JSON documents meet ("}" then "{", white space between); never inside one JSON value
# except in a string, so it only decides whether the documents are worth decoding one by one.
_DOCUMENT_SEAM = re.compile(r"\}\s*\{")
# A --json-stream test begins with its "start" event.
_STREAM_START = re.compile(r'^\s*\{\s*"event"\s*:\s*"start"')


def _as_text(data: str | bytes) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", errors="replace")
    return data


def _detect(text: str) -> tuple[str, str, str | None]:
    """``(tool, kind, note)``; ``note`` says how the tool was told when no phrase names it."""
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped.startswith("{"):
        first_line = stripped.split("\n", 1)[0].strip()
        if first_line.startswith('{"event"'):
            return "iperf3", "jsonstream", None
        return "iperf3", "json", None
    # CSV, also when the client printed its banner before the CSV lines (iperf 2.1 does so).
    lines = [line.strip() for line in stripped.splitlines() if line.strip()]
    if any(_IPERF2_CSV_RE.match(line) for line in lines) and not any(_REPORT_LINE.match(line) for line in lines):
        return "iperf2", "csv", None
    iperf3_hits = len(_IPERF3_MARKERS.findall(stripped))
    iperf2_hits = len(_IPERF2_MARKERS.findall(stripped))
    if iperf3_hits or iperf2_hits:
        return ("iperf3" if iperf3_hits >= iperf2_hits else "iperf2"), "text", None
    bare = _BARE_INTERVAL.search(stripped)
    if bare:
        decimals = len(bare.group(1))
        tool = "iperf3" if decimals == 2 else "iperf2"
        return tool, "text", _WEAK_DETECTION.format(tool=tool, decimals=decimals)
    # The text may be any file: say what was looked for, never what it holds.
    lines_count = len(stripped.splitlines())
    raise IperfParseError(
        f"the text is not iperf2 or iperf3 output ({lines_count} line(s), no iperf banner, report header, "
        "interval line or CSV report found); pass the output of iperf/iperf3 itself, or the decoded iperf3 -J "
        "document"
    )


def detect(text: str) -> tuple[str, str]:
    """Tell ``(tool, kind)`` of an output: kind is ``json``, ``jsonstream``, ``text`` or ``csv``.

    Raises ``IperfParseError`` when the text is recognisably neither tool.
    """
    tool, kind, _note = _detect(text)
    return tool, kind


def _parse_one(text: str) -> IperfResult:
    tool, kind, note = _detect(text)
    if kind == "json":
        result = parse_iperf3_json(None, text, strict=True)
    elif kind == "jsonstream":
        result = parse_iperf3_json_stream(text)
    # the text and CSV parsers (about 50 regular expressions compiled on import, 15 ms on the 2-core lab) are imported
    # when an output needs them: a play of iperf3 -J runs never does
    elif kind == "csv":
        from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf2_csv import parse_iperf2_csv

        result = parse_iperf2_csv(text)
    elif tool == "iperf3":
        from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf3_text import parse_iperf3_text

        result = parse_iperf3_text(text)
    else:
        from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf2_text import parse_iperf2_text

        result = parse_iperf2_text(text)
    if note:
        result["warnings"].append(note)
    return result


def _split_json_documents(text: str) -> list[str]:
    """Consecutive JSON documents (``iperf3 -s -J``: one per test) as one text each.

    A single document (the usual case) is returned whole without decoding: two documents
    meet where a ``}`` is followed by ``{`` with only white space between, which a single
    JSON value never holds outside a string. Text after the last document that decodes (a
    document cut short) is the last piece, so its parser reports the cut.
    """
    if _DOCUMENT_SEAM.search(text) is None:
        return [text]
    decoder = json.JSONDecoder()
    pieces: list[str] = []
    pos = len(text) - len(text.lstrip())
    while pos < len(text):
        try:
            _value, end = decoder.raw_decode(text, pos)
        except ValueError:
            pieces.append(text[pos:])
            break
        pieces.append(text[pos:end])
        pos = end + len(text[end:]) - len(text[end:].lstrip())
    return pieces if len(pieces) > 1 else [text]


def _split_json_stream(text: str) -> list[str]:
    """``--json-stream`` output of several tests (a 3.17+ server): one piece from each ``start`` event."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if _STREAM_START.match(line)]
    if len(starts) <= 1:
        return [text]
    cuts = [0, *starts[1:], len(lines)]
    return ["".join(lines[a:b]) for a, b in itertools.pairwise(cuts)]


def split_tests(text: str) -> list[str]:
    """Split a server log into one piece per test (see the module docstring).

    Text: at the ``Server listening`` banners (iperf3) or at a new inbound connection (iperf2);
    text before the first banner belongs to the first piece. ``-J``: one piece per JSON
    document; ``--json-stream``: one per ``start`` event. A log of one test is returned whole.
    """
    tool, kind = detect(text)
    if kind == "json":
        return _split_json_documents(text)
    if kind == "jsonstream":
        return _split_json_stream(text)
    if kind != "text":
        return [text]
    if tool == "iperf2":
        # iperf2 prints its banner once for all the tests a server runs: split at connections.
        from ansible_collections.esxilab.iperf.plugins.plugin_utils.iperf.iperf2_text import split_iperf2_text

        return split_iperf2_text(text)
    starts = [m.start() for m in _IPERF3_SERVER_BANNER.finditer(text)]
    if len(starts) <= 1:
        return [text]
    cuts = [0, *starts[1:], len(text)]
    return [text[a:b] for a, b in itertools.pairwise(cuts) if text[a:b].strip()]


def _is_test(result: IperfResult) -> bool:
    """A test: figures, or an error once a client had connected (a failed test)."""
    return has_figures(result) or bool(result["error"] and result["remote"])


def parse_results(data: str | bytes | Mapping[str, Any], *, keep_raw: bool = False) -> list[IperfResult]:
    """Parse every test found in ``data``; see the module docstring for multi-test logs."""
    if isinstance(data, Mapping):
        return [parse_result(data, keep_raw=keep_raw)]
    text = _as_text(data)
    pieces = split_tests(text)
    results = [_parse_one(piece) for piece in pieces]
    kept: list[tuple[str, IperfResult]] = []
    before: list[str] = []  # errors of pieces without a client, ahead of the first test
    for piece, result in zip(pieces, results, strict=True):
        if _is_test(result):
            result["warnings"][:0] = [f"before this test the log holds, with no client connected: {e}" for e in before]
            before = []
            kept.append((piece, result))
        elif result["error"] and not kept:
            before.append(result["error"])
        elif result["error"]:
            # no test here (a banner, then the server stopped): its error is not a test's
            note = f"after this test the log holds no other test (no client connected), only: {result['error']}"
            if note not in kept[-1][1]["warnings"]:
                kept[-1][1]["warnings"].append(note)
    if not kept:
        # no test at all: every error the log holds (or the last piece, which says why nothing is there)
        kept = [(p, r) for p, r in zip(pieces, results, strict=True) if r["error"]] or [(pieces[-1], results[-1])]
    out = []
    for piece, result in kept:
        if keep_raw or result["error"]:
            result.setdefault("raw", piece)
        out.append(result)
    return out


def parse_result(data: str | bytes | Mapping[str, Any], *, keep_raw: bool = False) -> IperfResult:
    """Parse one iperf output (text, bytes, or a decoded iperf3 JSON document) into a result.

    ``keep_raw`` puts the input text under ``raw``; it is always kept when ``error`` is set.
    """
    if isinstance(data, Mapping):
        result = parse_iperf3_json(data, None, strict=True)
        if keep_raw or result["error"]:
            result.setdefault("raw", json.dumps(data))
        return result
    results = parse_results(data, keep_raw=keep_raw)
    measured = [index for index, result in enumerate(results) if has_figures(result)]
    chosen = measured[-1] if measured else len(results) - 1
    result = results[chosen]
    if len(results) > 1:
        which = "the last one" if chosen == len(results) - 1 else "the last one with figures"
        result["warnings"].append(
            f"this log holds {len(results)} tests; this is {which} (use all=true / parse_all for every test)"
        )
    for later in results[chosen + 1 :]:
        result["warnings"].append(f"a later test failed without figures: {later['error']}")
    return result


def parse_all(data: str | bytes | Mapping[str, Any], *, keep_raw: bool = False) -> list[Result]:
    """``parse_results()`` as plain data, for the Ansible layer."""
    return [plain(result) for result in parse_results(data, keep_raw=keep_raw)]


def parse(data: str | bytes | Mapping[str, Any], *, keep_raw: bool = False) -> Result:
    """``parse_result()`` as plain data, for the Ansible layer."""
    return plain(parse_result(data, keep_raw=keep_raw))
