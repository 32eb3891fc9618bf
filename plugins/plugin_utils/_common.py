# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Small helpers shared by the controller-side backends (``paired/``, ``report/``).

* ``csv_cell()`` -- the collection's CSV cell convention: empty for ``None``, ``true`` /
  ``false`` for booleans, floats written exactly (``repr``).
* ``csv_text()`` -- a CSV table (header row + one row per mapping) with ``\\n`` line ends,
  every cell passed through ``csv_safe()``.
* ``csv_safe()`` -- CSV injection guard (OWASP "CSV Injection"): a cell starting with ``=``,
  ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'`` so a spreadsheet shows it
  as text instead of running it as a formula; plain numbers such as ``-1.5`` stay as they are.

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

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def csv_safe(value: Any) -> Any:
    """``value`` with a leading ``'`` when a spreadsheet would read it as a formula; numbers as they are."""
    if not isinstance(value, str) or not value.startswith(_FORMULA_START) or _PLAIN_NUMBER.fullmatch(value):
        return value
    return "'" + value


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
