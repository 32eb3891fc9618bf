# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Recognise an iperf binary from its version banner and tell what it supports.

Both families answer ``-v`` (``--version``) and exit without touching the network:

* iperf3 prints ``iperf 3.12 (cJSON 1.7.15)`` on stdout, then the kernel line and the
  optional features, and exits 0. 3.0.x prints ``iperf 3.0.11``; ports add a suffix
  (``iperf 3.9-nrf``);
* iperf2 prints ``iperf version 2.1.8 (12 August 2022) pthreads`` on **stderr** and exits
  **1** (2.0.5 on ESXi: ``iperf version 2.0.5 (08 Jul 2010) pthreads``).

So a probe must merge stderr into stdout and must not judge by the exit status: a binary
is ``runnable`` when its version command printed a version banner.

Feature thresholds (from the iperf3 release notes and the fixture README):
``-J`` in every 3.x release, ``--get-server-output`` since 3.0.5, ``--bidir`` since 3.7,
``--json-stream`` since 3.17. iperf2 has no JSON; it has CSV (``-y C``) and the dual test
(``-d``) for both directions at once.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import re
from typing import Any, Literal

__all__ = [
    "SUPPORT_KEYS",
    "Family",
    "describe_tool",
    "parse_version_output",
    "supports",
    "version_tuple",
]

Family = Literal["iperf2", "iperf3"]

SUPPORT_KEYS = ("json", "json_stream", "bidir", "get_server_output", "csv")

# "iperf 3.12 (cJSON 1.7.15)", "iperf 3.0.11", "iperf 3.9-nrf", "iperf 3.17.1"
_IPERF3_BANNER = re.compile(r"^\s*iperf (?P<version>3\.\d+(?:\.\d+)*[^\s()]*)", re.MULTILINE)
# "iperf version 2.1.8 (12 August 2022) pthreads", "iperf version 2.0.14a (...)"
_IPERF2_BANNER = re.compile(r"^\s*iperf version (?P<version>2\.\d+(?:\.\d+)*[^\s()]*)", re.MULTILINE)
_LEADING_NUMBERS = re.compile(r"^\d+(?:\.\d+)*")


def parse_version_output(text: str) -> tuple[Family | None, str | None]:
    """Return ``(family, version)`` from the output of ``iperf -v`` / ``iperf3 --version``.

    ``(None, None)`` when the text holds no iperf version banner.
    """
    match = _IPERF3_BANNER.search(text)
    if match:
        return "iperf3", match.group("version")
    match = _IPERF2_BANNER.search(text)
    if match:
        return "iperf2", match.group("version")
    return None, None


def version_tuple(version: str) -> tuple[int, ...]:
    """The leading numeric components: ``"3.9-nrf"`` -> ``(3, 9)``, ``"2.0.14a"`` -> ``(2, 0, 14)``."""
    match = _LEADING_NUMBERS.match(version.strip())
    if not match:
        raise ValueError(f"not a version number: {version!r}")
    return tuple(int(part) for part in match.group(0).split("."))


def supports(family: Family | None, version: str | None) -> dict[str, bool | None]:
    """What this binary can do; every value is ``None`` when the binary could not be identified."""
    if family is None or version is None:
        return dict.fromkeys(SUPPORT_KEYS)
    if family == "iperf2":
        return {"json": False, "json_stream": False, "bidir": True, "get_server_output": False, "csv": True}
    numbers = version_tuple(version)
    return {
        "json": True,
        "json_stream": numbers >= (3, 17),
        "bidir": numbers >= (3, 7),
        "get_server_output": numbers >= (3, 0, 5),
        "csv": False,
    }


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def describe_tool(path: str, output: str | None, rc: int | None, *, problem: str | None = None) -> dict[str, Any]:
    """One ``iperf_tools`` entry for ``path``.

    ``output`` is what ``path -v`` printed (stdout and stderr merged), ``rc`` its exit
    status; ``problem`` says why it was not run at all (``not executable``, ``does not exist``).
    """
    family: Family | None = None
    version: str | None = None
    error = problem
    if problem is None:
        family, version = parse_version_output(output or "")
        if family is None:
            shown = _first_line(output or "") or "no output"
            error = f"'{path} -v' printed no iperf version banner (exit status {rc}): {shown}"
    return {
        "path": path,
        "family": family,
        "version": version,
        "supports": supports(family, version),
        "runnable": family is not None,
        "error": error,
    }
