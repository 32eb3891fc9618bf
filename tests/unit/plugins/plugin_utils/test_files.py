# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""write_report: never overwrite what is not ours, remove only the stale files of our own report."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.files import (
    MANIFEST,
    ReportDirError,
    read_manifest,
    write_report,
)


def _write(directory: Path, contents: dict[str, bytes | None], key: str = "report", **kwargs: Any) -> Any:
    options: dict[str, Any] = {
        "mode": 0o644,
        "dir_mode": 0o755,
        "check_mode": False,
        "force": False,
        "prefix": ".test-",
    }
    options.update(kwargs)
    return write_report(str(directory), key, contents, **options)


def test_first_write_records_the_files_and_a_second_is_unchanged(tmp_path: Path) -> None:
    dest = tmp_path / "r"
    out = _write(dest, {"a.json": b"1", "plot.png": b"png"})
    assert sorted(os.listdir(dest)) == [MANIFEST, "a.json", "plot.png"]
    assert (out.written, out.removed, out.manifest_changed) == ([f"{dest}/a.json", f"{dest}/plot.png"], [], True)
    assert read_manifest(str(dest)) == {"report": ["a.json", "plot.png"]}
    again = _write(dest, {"a.json": b"1", "plot.png": b"png"})
    assert (again.written, again.removed, again.manifest_changed) == ([], [], False)


def test_stale_files_of_our_report_are_removed_and_nothing_else(tmp_path: Path) -> None:
    dest = tmp_path / "r"
    _write(dest, {"a.json": b"1", "old-sweep.png": b"png", "old-series.png": b"png"})
    (dest / "notes.txt").write_text("mine")  # the user's file in our report directory
    check = _write(dest, {"a.json": b"2", "new.png": b"png"}, check_mode=True)
    assert check.removed == [f"{dest}/old-series.png", f"{dest}/old-sweep.png"]
    assert (dest / "old-sweep.png").exists()  # check mode removes nothing
    out = _write(dest, {"a.json": b"2", "new.png": b"png"})
    assert out.removed == [f"{dest}/old-series.png", f"{dest}/old-sweep.png"]
    assert sorted(os.listdir(dest)) == [MANIFEST, "a.json", "new.png", "notes.txt"]
    assert read_manifest(str(dest)) == {"report": ["a.json", "new.png"]}


def test_a_non_empty_directory_that_is_not_ours_is_refused_unless_forced(tmp_path: Path) -> None:
    dest = tmp_path / "photos"
    dest.mkdir()
    (dest / "holiday.png").write_bytes(b"precious")
    (dest / "a.json").write_text("precious")
    with pytest.raises(ReportDirError) as info:
        _write(dest, {"a.json": b"1"})
    assert str(info.value).startswith(f"{dest} is not empty (a.json, holiday.png) and holds no report of ours")
    assert "set force=true" in str(info.value)
    assert (dest / "a.json").read_text() == "precious" and not (dest / MANIFEST).exists()
    out = _write(dest, {"a.json": b"1"}, force=True)
    assert out.written == [f"{dest}/a.json"]
    assert (dest / "holiday.png").read_bytes() == b"precious"  # forced: replaced ours only, kept the rest
    # from now on it is ours: a later write needs no force, and never removes holiday.png
    assert _write(dest, {"b.json": b"2"}).removed == [f"{dest}/a.json"]
    assert (dest / "holiday.png").exists()


def test_a_file_our_manifest_does_not_list_is_not_overwritten_unless_forced(tmp_path: Path) -> None:
    dest = tmp_path / "r"
    _write(dest, {"a.json": b"1"})
    (dest / "taken.json").write_text("someone else's")  # put into our report directory by another hand
    with pytest.raises(ReportDirError, match=r"already holds taken\.json, not written by a report of ours"):
        _write(dest, {"a.json": b"1", "taken.json": b"1"})
    assert (dest / "taken.json").read_text() == "someone else's"
    _write(dest, {"a.json": b"1", "taken.json": b"1"}, force=True)
    assert read_manifest(str(dest)) == {"report": ["a.json", "taken.json"]}


def test_a_tampered_manifest_cannot_remove_files_outside_the_report(tmp_path: Path) -> None:
    dest = tmp_path / "r"
    _write(dest, {"a.json": b"1"})
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    (dest / ".hidden").write_text("keep")
    document = json.loads((dest / MANIFEST).read_text())
    document["reports"]["report"] += ["../victim.txt", str(victim), ".hidden", "..", ""]
    (dest / MANIFEST).write_text(json.dumps(document))
    out = _write(dest, {"b.json": b"1"})
    assert out.removed == [f"{dest}/a.json"]
    assert victim.read_text() == "keep" and (dest / ".hidden").exists()


def test_an_unreadable_manifest_is_refused_unless_forced(tmp_path: Path) -> None:
    dest = tmp_path / "r"
    _write(dest, {"a.json": b"1"})
    (dest / MANIFEST).write_text("{not json")
    with pytest.raises(ReportDirError, match="cannot be read"):
        _write(dest, {"a.json": b"1"})
    _write(dest, {"a.json": b"1"}, force=True)
    assert read_manifest(str(dest)) == {"report": ["a.json"]}


def test_a_symlink_at_a_report_path_is_replaced_not_followed(tmp_path: Path) -> None:
    dest = tmp_path / "r"
    _write(dest, {"a.json": b"1"})
    target = tmp_path / "elsewhere"
    target.write_text("keep")
    (dest / "a.json").unlink()
    (dest / "a.json").symlink_to(target)
    _write(dest, {"a.json": b"2"})
    assert target.read_text() == "keep"
    assert not (dest / "a.json").is_symlink() and (dest / "a.json").read_bytes() == b"2"


def test_check_mode_on_a_new_directory_writes_nothing(tmp_path: Path) -> None:
    dest = tmp_path / "new"
    out = _write(dest, {"a.json": b"1", "p.png": None}, check_mode=True)
    assert out.written == [f"{dest}/a.json", f"{dest}/p.png"] and out.manifest_changed
    assert not dest.exists()
