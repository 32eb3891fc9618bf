# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Report files on the controller, shared by the report-writing actions.

* ``write_if_changed()`` leaves a file alone when it already holds the content (and, unless
  told otherwise, the permission bits); otherwise it writes a temporary file in the same
  directory and renames it over the target, so a reader never sees a half-written file (and a
  symbolic link planted at the target is replaced, never followed).
* ``write_report()`` writes the files of one report into a directory and keeps a manifest
  there, ``.esxilab-iperf-report.json``, listing the files each report of ours wrote. With it:

  - the directory is the report: a non-empty directory without our manifest is refused, and a
    file that exists and is not listed (not ours) is never overwritten, unless ``force``;
  - files the same report wrote last time and does not write now (stale PNG plots) are
    removed -- only those, never anything else in the directory.

Used by the action ``report_write``; ``write_if_changed()`` also by ``report_gate`` (``gate_run.py``).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["MANIFEST", "ReportDirError", "WriteOutcome", "read_manifest", "write_if_changed", "write_report"]

MANIFEST = ".esxilab-iperf-report.json"
MANIFEST_FORMAT = "esxilab.iperf.report-files"
MANIFEST_VERSION = 1


class ReportDirError(ValueError):
    """The report directory cannot be written as asked; the message names the files and the fix."""


def write_if_changed(
    path: str,
    content: bytes,
    *,
    mode: int,
    check_mode: bool,
    prefix: str,
    enforce_mode: bool = True,
) -> bool:
    """Write ``content`` to ``path`` atomically unless it already holds it; return whether it changed.

    ``mode`` is given to a file that is written. With ``enforce_mode`` a file that holds the
    content but has other permission bits is written again; without it such a file is left
    alone. In ``check_mode`` nothing is written, the return value says whether it would be.
    ``prefix`` names the temporary file (in the directory of ``path``) until it is renamed.
    """
    try:
        if not os.path.islink(path):
            with open(path, "rb") as handle:
                same = handle.read() == content
            if same and (not enforce_mode or (os.stat(path).st_mode & 0o777) == mode):
                return False
    except FileNotFoundError:
        pass
    if check_mode:
        return True
    fd, tmp = tempfile.mkstemp(prefix=prefix, dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return True


def _plain_name(name: object) -> bool:
    return (
        isinstance(name, str)
        and bool(name)
        and not name.startswith(".")
        and "/" not in name
        and "\\" not in name
        and "\0" not in name
    )


def read_manifest(directory: str) -> dict[str, list[str]] | None:
    """The reports recorded in ``directory`` (report key -> file names), ``None`` without a manifest.

    Raises ``ReportDirError`` when a manifest is there but cannot be read. Names that are
    not plain file names are dropped, so a tampered manifest cannot point outside the directory.
    """
    path = os.path.join(directory, MANIFEST)
    try:
        with open(path, "rb") as handle:
            document = json.loads(handle.read().decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ReportDirError(
            f"the manifest {path} cannot be read ({type(exc).__name__}); remove it, or set force=true to start a "
            "new one (files of earlier reports are then no longer removed when they go stale)"
        ) from exc
    reports = document.get("reports") if isinstance(document, dict) else None
    if document.get("format") != MANIFEST_FORMAT or not isinstance(reports, dict):
        raise ReportDirError(
            f"{path} is not a manifest of esxilab.iperf reports; remove it, or choose another directory"
        )
    return {
        str(key): [name for name in names if _plain_name(name)]
        for key, names in reports.items()
        if isinstance(names, list)
    }


@dataclass
class WriteOutcome:
    """What ``write_report()`` did (in check mode: would do), as full paths."""

    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    manifest_changed: bool = False


def _manifest_bytes(reports: Mapping[str, list[str]]) -> bytes:
    document = {
        "format": MANIFEST_FORMAT,
        "version": MANIFEST_VERSION,
        "note": "files written by esxilab.iperf reports in this directory; stale ones are removed on the next write",
        "reports": {key: sorted(names) for key, names in sorted(reports.items())},
    }
    return (json.dumps(document, indent=2) + "\n").encode("utf-8")


def write_report(
    directory: str,
    key: str,
    contents: Mapping[str, bytes | None],
    *,
    mode: int,
    dir_mode: int,
    check_mode: bool,
    force: bool,
    prefix: str,
    enforce_mode: bool = True,
) -> WriteOutcome:
    """Write the files ``contents`` (file name -> bytes) of report ``key`` into ``directory``.

    ``None`` content (check mode only) means the file would be written but its content is not
    known (a plot that is not drawn in check mode). See the module docstring for the ownership
    rules and the stale files. Raises ``ReportDirError`` before writing anything when the
    directory holds files that are not ours, and ``OSError`` when writing fails.
    """
    if not _plain_name(key):
        raise ReportDirError(f"report key {key!r} is not a plain name")
    for name in contents:
        if not _plain_name(name):
            raise ReportDirError(f"report file {name!r} is not a plain file name")
    outcome = WriteOutcome()
    exists = os.path.isdir(directory)
    if os.path.lexists(directory) and not exists:
        raise ReportDirError(f"{directory} exists and is not a directory; choose another directory")
    if exists:
        try:
            manifest = read_manifest(directory)
        except ReportDirError:
            if not force:
                raise
            manifest = None
        entries = set(os.listdir(directory))
    else:
        manifest, entries = None, set()
    reports = dict(manifest or {})
    ours = {name for names in reports.values() for name in names}
    if not force:
        if manifest is None and entries:
            shown = ", ".join(sorted(entries)[:5]) + (", ..." if len(entries) > 5 else "")
            raise ReportDirError(
                f"{directory} is not empty ({shown}) and holds no report of ours ({MANIFEST} is missing), so writing "
                "the report there could overwrite or mix with other files; choose a new or empty directory, or set "
                "force=true to write the report there anyway (files of the same names are replaced, others are kept)"
            )
        foreign = sorted(name for name in contents if name in entries and name not in ours)
        if foreign:
            raise ReportDirError(
                f"{directory} already holds {', '.join(foreign)}, not written by a report of ours ({MANIFEST} does "
                "not list them); choose another report name or directory, or set force=true to replace them"
            )
    stale = sorted(name for name in reports.get(key, []) if name not in contents and name in entries)

    if not exists and not check_mode:
        os.makedirs(directory, mode=dir_mode, exist_ok=True)
    missing = not os.path.isdir(directory)  # check mode: every file would be written
    for name, content in contents.items():
        path = os.path.join(directory, name)
        if missing or content is None:
            if not check_mode:
                raise ValueError(f"no content for {name} (only check mode may leave it unknown)")
            outcome.written.append(path)
        elif write_if_changed(
            path, content, mode=mode, check_mode=check_mode, prefix=prefix, enforce_mode=enforce_mode
        ):
            outcome.written.append(path)
    for name in stale:
        path = os.path.join(directory, name)
        if os.path.isdir(path) and not os.path.islink(path):
            continue  # we never wrote a directory: leave it
        if not check_mode:
            try:
                os.unlink(path)
            except FileNotFoundError:
                continue
        outcome.removed.append(path)
    reports[key] = sorted(contents)
    outcome.manifest_changed = missing or write_if_changed(
        os.path.join(directory, MANIFEST), _manifest_bytes(reports), mode=0o644, check_mode=check_mode, prefix=prefix
    )
    return outcome
