# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Small helpers shared by the controller-side backends (``paired/``, ``report/``).

* ``csv_cell()`` -- the collection's CSV cell convention: empty for ``None``, ``true`` /
  ``false`` for booleans, floats written exactly (``repr``).
* ``csv_text()`` -- a CSV table (header row + one row per mapping) with ``\\n`` line ends,
  every cell passed through ``csv_safe()``.
* ``csv_safe()`` -- CSV injection guard (OWASP "CSV Injection"): a cell whose first non-blank
  character (after spaces, tabs, line breaks) is ``=``, ``+``, ``-`` or ``@``, or that starts with a
  tab or a carriage return, gets a leading ``'``; inside a cell, a trigger after a field separator
  or line break (``,`` ``;`` tab, ``\n``, ``\r``, then blanks) gets a ``'`` before it - a reader
  that splits on ``;`` or at line breaks would otherwise see a cell starting with it. So a
  spreadsheet shows the text instead of running it as a formula; plain numbers such as ``-1.5``
  (the whole cell, or the whole piece after a separator) stay as they are.

Plain data in, plain data out; no Ansible import, no I/O.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

__all__ = ["csv_cell", "csv_safe", "csv_text"]

_FORMULA_TRIGGERS = "=+-@"
_LEADING = ("\t", "\r")  # triggers themselves at the start of a cell (a spreadsheet may drop them)
_BLANKS = " \t\r\n\v\f"
_SEPARATORS = ",;\t\n\r"
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_PIECE_END = re.compile(r"[,;\t\n\r]")


def _guard_inner(body: str) -> str:
    """``body`` with a ``'`` before each trigger that starts a piece after a separator or line break (and blanks),
    unless that piece is a plain number."""
    out: list[str] = []
    at_start = False
    for index, char in enumerate(body):
        if at_start and char in _FORMULA_TRIGGERS:
            piece = _PIECE_END.split(body[index:], maxsplit=1)[0]
            if not _PLAIN_NUMBER.fullmatch(piece.rstrip(_BLANKS)):
                out.append("'")
            at_start = False
        elif char in _SEPARATORS:
            at_start = True
        elif char not in " \v\f":
            at_start = False
        out.append(char)
    return "".join(out)


def csv_safe(value: Any) -> Any:
    """``value`` with a ``'`` before each formula trigger a spreadsheet could run (see the module docstring); numbers
    and other values as they are."""
    if not isinstance(value, str) or _PLAIN_NUMBER.fullmatch(value):
        return value
    body = value.lstrip(_BLANKS)
    head = value[: len(value) - len(body)]
    text = head + _guard_inner(body)
    if value.startswith(_LEADING) or body.startswith(tuple(_FORMULA_TRIGGERS)):
        text = "'" + text
    return text


def csv_cell(value: Any) -> Any:
    """One CSV cell: ``""`` for ``None``, ``true``/``false``, ``repr`` of a float; anything else as is."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return value


def csv_text(
    columns: Sequence[str],
    rows: Iterable[Mapping[str, Any]],
    cell: Callable[[Any], Any] = csv_cell,
) -> str:
    """CSV text: the header ``columns``, then per row the cells ``csv_safe(cell(row.get(column)))``;
    ``\\n`` line ends."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([csv_safe(c) for c in columns])
    for row in rows:
        writer.writerow([csv_safe(cell(row.get(c))) for c in columns])
    return buffer.getvalue()
