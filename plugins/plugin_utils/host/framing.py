# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one output protocol of the host scripts: marker lines split one command's output into sections.

A script prints a *marker line* ``<tag> <name> [<args>]`` to start a section; the lines up to
the next marker line are its text. ``tag`` carries a random token, so no command output can
forge a marker. Markers are printed with a newline in front (``printf '\\n%s\\n'``), so a
section always starts on a fresh line; the reader removes exactly that one newline again, so a
section holds the command output byte for byte (also a file without a final newline). Text
before the first marker is dropped (a login banner, a shell's notice).

A pseudo-terminal (ssh ``-tt``, used with become) turns every ``\\n`` into ``\\r\\n``; when
every newline of the output has one, that is undone (:func:`undo_pty`), so ``\\r\\n`` inside a
file read on the host comes back as it was.

Used by ``iperf_run`` (tag ``@@ESXILAB:<token>``, lower-case names), ``iperf_facts`` (tag
``ESXILAB_IPERF_<hex>``, upper-case names) and the restore journal's scripts (tag
``esxilab-journal``: one-line records, the values in the arguments). Plain data; no Ansible import.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Section", "first", "marker", "parse_kv", "split_sections", "undo_pty"]


@dataclass
class Section:
    """One marker-delimited part of a script's output."""

    name: str
    args: str
    text: str


def marker(tag: str, name: str, args: str = "") -> str:
    """Shell command printing a marker line (``args`` is shell text, expanded by the shell)."""
    label = f"{tag} {name}"
    if args:
        return f"printf '\\n%s\\n' \"{label} {args}\""
    return f"printf '\\n%s\\n' '{label}'"


def undo_pty(text: str) -> tuple[str, bool]:
    """``(text, True)`` with a pty's ``\\r\\n`` undone when every newline has one; else ``(text, False)``."""
    if "\r\n" in text and text.count("\r\n") == text.count("\n"):
        return text.replace("\r\n", "\n"), True
    return text, False


def split_sections(stdout: str, tag: str) -> list[Section]:
    """Split a script's stdout into sections; text before the first marker is dropped."""
    text, _pty = undo_pty(stdout)
    prefix = f"{tag} "
    sections: list[Section] = []
    current: Section | None = None
    lines: list[str] = []
    for line in text.split("\n"):
        if line.startswith(prefix):
            if current is not None:
                current.text = "\n".join(lines)
                sections.append(current)
            name, _sep, args = line[len(prefix) :].partition(" ")
            current = Section(name=name, args=args, text="")
            lines = []
        elif current is not None:
            lines.append(line)
    if current is not None:
        # The body is "\n".join(lines) + "\n", and that last "\n" is the one printed in front of
        # the next marker: without it, the join is the command output exactly.
        current.text = "\n".join(lines)
        sections.append(current)
    return sections


def parse_kv(args: str) -> dict[str, str]:
    """The ``key=value`` words of a marker's arguments."""
    out: dict[str, str] = {}
    for item in args.split():
        key, sep, value = item.partition("=")
        if sep:
            out[key] = value
    return out


def first(sections: Sequence[Section], name: str) -> Section | None:
    """The first section called ``name``, if any."""
    for section in sections:
        if section.name == name:
            return section
    return None
