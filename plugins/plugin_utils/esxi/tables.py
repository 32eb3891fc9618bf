# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Text layouts esxcli prints: dashed tables, ``Key: value`` blocks, ``--formatter=csv``.

Tables are cut at the column offsets of their dashes line, so values with single spaces
(``Management VMkernel``) and right-aligned numbers stay intact; key/value outputs are read by
field name, so the 6.7/7.x and 8.x field orders both work. ``esxcli --formatter=csv`` tables are
accepted by the same table parser (keys are compared without spaces or case). The helpers here
are shared by the parser modules of this package; they know no esxcli command.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import EsxiParseError

_KV_RE = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z][A-Za-z0-9 ./()_-]*?):(?:[ \t]+(?P<value>.*?))?\s*$")
_DASHES_RE = re.compile(r"^\s*-+(?:\s+-+)*\s*$")
_BOOL = {"true": True, "false": False}


def field_key(name: str) -> str:
    """Field-name key shared by plain-text headers and ``--formatter=csv`` headers."""
    return re.sub(r"[^0-9a-z]", "", name.lower())


def parse_bool(value: str | None) -> bool | None:
    """``true``/``TRUE``/``false``/``FALSE`` as esxcli prints them; anything else is ``None``."""
    if value is None:
        return None
    return _BOOL.get(value.strip().lower())


def int_or_none(value: str | None) -> int | None:
    if value is None:
        return None
    value = value.strip()
    return int(value) if re.fullmatch(r"-?\d+", value) else None


def split_list(value: str | None) -> tuple[str, ...]:
    """``vmnic3, vmnic2, vmnic1`` -> tuple; an empty field (often a trailing space) -> ``()``."""
    if value is None or not value.strip():
        return ()
    return tuple(part.strip() for part in value.split(", ") if part.strip())


def _kv_pairs(text: str) -> list[tuple[str, str, int]]:
    """Every ``Key: value`` line as (key, value, indent); other lines are skipped."""
    pairs = []
    for line in text.splitlines():
        m = _KV_RE.match(line)
        if m:
            pairs.append((m.group("key").strip(), m.group("value") or "", len(m.group("indent"))))
    return pairs


def kv_fields(text: str) -> dict[str, str]:
    """First value of each key, keyed by :func:`field_key` (so ``Default Action`` -> ``defaultaction``)."""
    out: dict[str, str] = {}
    for key, value, _indent in _kv_pairs(text):
        out.setdefault(field_key(key), value)
    return out


def kv_blocks(text: str) -> list[tuple[str, dict[str, str]]]:
    """Titled blocks: an unindented title line followed by indented ``Key: value`` lines.

    Used by ``network ip interface list`` and ``network vswitch standard list``. A prompt line
    or anything else unindented before the title is simply replaced by the title.
    """
    blocks: list[tuple[str, dict[str, str]]] = []
    title: str | None = None
    current: dict[str, str] | None = None
    for line in text.splitlines():
        if not line.strip():
            current = None
            continue
        m = _KV_RE.match(line)
        if m and m.group("indent"):
            if current is None:
                if title is None:
                    continue
                current = {}
                blocks.append((title, current))
            current.setdefault(field_key(m.group("key")), m.group("value") or "")
            continue
        title = line.strip()
        current = None
    return blocks


def parse_table(text: str, first_column: str) -> list[dict[str, str]]:
    """Rows of an esxcli table as dicts keyed by :func:`field_key` of the header names.

    Three layouts are accepted:

    * plain text with a dashes line: columns are cut at the dash runs' offsets (this keeps
      ``Management VMkernel`` whole and reads right-aligned numbers such as ``Speed``);
    * plain text without a dashes line (an excerpt): offsets come from the header words;
    * ``esxcli --formatter=csv``: a header of field names without spaces, trailing comma.

    ``first_column`` (e.g. ``"Name"``) identifies the header line, so a shell prompt or a blank
    line above the table is ignored. Rows end at the first blank line after the table body.
    """
    lines = text.splitlines()
    want = field_key(first_column)
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        if _DASHES_RE.match(line) and index > 0:
            header = lines[index - 1]
            if not header.strip() or field_key(re.split(r"\s{2,}", header.strip())[0]) != want:
                continue
            spans = [m.start() for m in re.finditer(r"-+", line)]
            return _cut_rows(header, spans, lines[index + 1 :])
        stripped = line.strip()
        if "," in stripped and "  " not in stripped and want in {field_key(c) for c in stripped.split(",")}:
            return _csv_rows("\n".join(lines[index:]))
        words = list(re.finditer(r"\S+(?: \S+)*", line))
        if words and field_key(words[0].group()) == want and len(words) > 1:
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if _DASHES_RE.match(following):
                continue  # the dashes branch handles it on the next line
            return _cut_rows(line, [m.start() for m in words], lines[index + 1 :])
    raise EsxiParseError(f"no table with a {first_column!r} column found in the output", raw=text)


def _cut_rows(header: str, starts: list[int], body: Sequence[str]) -> list[dict[str, str]]:
    bounds = [*starts[1:], None]
    names = [field_key(header[start:end]) for start, end in zip(starts, bounds, strict=True)]
    rows: list[dict[str, str]] = []
    for line in body:
        if not line.strip():
            if rows:
                break
            continue
        if line.lstrip().startswith("[root@") or _DASHES_RE.match(line):
            break
        rows.append(
            {name: line[start:end].strip() for name, start, end in zip(names, starts, bounds, strict=True) if name}
        )
    return rows


def _csv_rows(text: str) -> list[dict[str, str]]:
    reader = csv.reader(io.StringIO(text.strip() + "\n"))
    header = [field_key(name) for name in next(reader)]
    rows = []
    for record in reader:
        if not any(cell.strip() for cell in record):
            continue
        rows.append({name: cell.strip() for name, cell in zip(header, record, strict=False) if name})
    return rows


def required_field(row: Mapping[str, str], key: str, what: str) -> str:
    try:
        return row[key]
    except KeyError:
        raise EsxiParseError(f"{what}: column {key!r} missing (have {sorted(row)})") from None
