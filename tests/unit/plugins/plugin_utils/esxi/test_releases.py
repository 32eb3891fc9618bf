# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ESXi release table (``esxi/releases.py``): the stand-in's recording list agrees with it, and a
release is added by a row there and a row in the recording list -- nothing else (a 9.x row made from
the 8.x one is installed, opened, journaled and put back on a 9.0 stand-in)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi import firewall_run, install_run, releases
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import PlanError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.firewall import parse_ruleset_list
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.paths import BUNDLED_IPERF3, BUNDLED_IPERF3_COPY
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.tables import field_key
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.store import Journal
from tests.collection_path import ESXI_RECORDINGS
from tests.unit.plugins.esxi_standin_host import STANDIN, MappedHost

RECORDINGS = ESXI_RECORDINGS


def _recording_list(path: Path = STANDIN / "releases") -> dict[str, list[str]]:
    rows = [line.split("|") for line in path.read_text().splitlines() if line and not line.startswith("#")]
    return {row[0]: row for row in rows}


def _columns(recording: str) -> tuple[str, ...]:
    """The header of a recorded ruleset list, split at its column gaps (as ``parse_table`` reads it)."""
    lines = (RECORDINGS / recording).read_text().splitlines()
    dashes = next(i for i, line in enumerate(lines) if line.startswith("---"))
    header = lines[dashes - 1]
    starts = [m.start() for m in re.finditer(r"-+", lines[dashes])]
    ends: list[int | None] = [*starts[1:], None]
    return tuple(header[start:end].strip() for start, end in zip(starts, ends, strict=True))


def test_the_recording_list_agrees_with_the_table() -> None:
    """Every stand-in profile is a release of the table, with the table's ruleset layout and execInstalledOnly knob."""
    listing = _recording_list()
    assert sorted(listing) == ["6.7", "7.0", "8.0"]
    for name, row in listing.items():
        release, known = releases.release_of(int(row[1].split(".")[0]))
        assert known, f"stand-in profile {name} has no row in esxi/releases.py"
        assert _columns(row[7]) in release.ruleset_layouts, (name, _columns(row[7]))
        assert (row[9] != "-") is (release.exec_option is not None), name
        assert (row[9] == "1") is release.exec_on_by_default, name


def test_the_table_names_what_the_firewall_parser_reads() -> None:
    layouts = {layout for release in releases.RELEASES for layout in release.ruleset_layouts}
    assert all(layout == releases.RULESET_COLUMNS[: len(layout)] for layout in layouts)
    four = parse_ruleset_list((RECORDINGS / "8.0U2b__network-firewall-ruleset-list__4col.txt").read_text())
    assert {field_key(c) for c in releases.RULESET_COLUMNS} == {
        "name",
        "enabled",
        "enabledisableconfigurable",
        "allowedipconfigurable",
    }
    assert any(r.enable_disable_configurable is False for r in four)


def test_one_row_per_major_and_the_oldest_is_the_floor() -> None:
    majors = [release.major for release in releases.RELEASES]
    assert majors == sorted(set(majors))
    assert releases.release_of(9) == (releases.RELEASES[-1], False)  # planned like the newest, flagged unknown
    with pytest.raises(PlanError) as err:
        releases.release_of(5, "VMware ESXi 5.5.0")
    assert "VMware ESXi 5.5.0 is not supported: this collection prepares ESXi 6.7, 7.x and 8.x" in str(err.value)
    assert [r.install_method for r in releases.RELEASES] == ["vib", "bundled", "bundled"]
    assert releases.COPIES == (BUNDLED_IPERF3_COPY, "/opt/iperf/bin/iperf.copy")


@pytest.fixture
def release_9(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 9.x release added the way a maintainer adds one: a table row (the 8.x one, renamed) and a
    recording-list row (the 8.0 recordings as 9.0.0)."""
    eight = releases.RELEASES[-1]
    monkeypatch.setattr(releases, "RELEASES", (*releases.RELEASES, dataclasses.replace(eight, family="9.x", major=9)))
    text = (STANDIN / "releases").read_text()
    row = "|".join(["9.0", "9.0.0", *_recording_list()["8.0"][2:]])
    listing = tmp_path / "releases"
    listing.write_text(text + row + "\n")
    monkeypatch.setenv("ESXI_STANDIN_RELEASES", str(listing))


def _window_on(host: MappedHost, tmp_path: Path) -> tuple[dict[str, object], dict[str, object], Journal]:
    journal = Journal(host.execute, str(tmp_path / "journal"), deadline_seconds=0)
    installed = install_run.run({"relax_exec_policy": True}, host.execute, check_mode=False, journal=journal)
    opened = firewall_run.run({"enabled": False}, host.execute, check_mode=False, journal=journal)
    return installed, opened, journal


@pytest.mark.usefixtures("release_9")
def test_a_9_x_row_is_all_a_new_release_needs(tmp_path: Path) -> None:
    host = MappedHost(tmp_path / "standin", "9.0")
    assert host.sh("vmware -vl").stdout.splitlines() == ["VMware ESXi 9.0.0 build-24585383", "VMware ESXi 9.0 Update 3"]
    checked = install_run.run({"relax_exec_policy": True}, host.execute, check_mode=True)
    assert checked["esxi_version"] == "9.0.0"
    assert "warnings" not in checked  # a release of the table: no "newer than the releases" warning

    installed, opened, journal = _window_on(host, tmp_path)
    assert (installed["method"], installed["tool"], installed["binary"]) == ("bundled", "iperf3", BUNDLED_IPERF3_COPY)
    assert installed["commands"] == [
        "esxcli system settings advanced set -o /User/execInstalledOnly -i 0",
        f"cp {BUNDLED_IPERF3} {BUNDLED_IPERF3_COPY}",
    ]
    assert installed["verified"] is True
    assert opened["commands"] == ["esxcli network firewall set --enabled false"]
    state = journal.read()
    assert state.install == {"created_files": [BUNDLED_IPERF3_COPY], "exec_installed_only_previous": 1}
    assert state.firewall == {"enabled": True}

    assert firewall_run.run({"restore": {}}, host.execute, check_mode=False, journal=journal)["changed"] is True
    assert install_run.run({"restore": {}}, host.execute, check_mode=False, journal=journal)["changed"] is True
    assert (host.get("fw_enabled"), host.get("eio_runtime")) == ("true", "1")
    assert not host.exists(BUNDLED_IPERF3_COPY)
    assert not journal.read().pending


def test_without_its_row_a_newer_release_is_planned_as_the_newest_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stand-in knows 9.0 (its recording list), the table does not: the plan says so."""
    text = (STANDIN / "releases").read_text()
    listing = tmp_path / "releases"
    listing.write_text(text + "|".join(["9.0", "9.0.0", *_recording_list()["8.0"][2:]]) + "\n")
    monkeypatch.setenv("ESXI_STANDIN_RELEASES", str(listing))
    host = MappedHost(tmp_path / "standin", "9.0")
    checked = install_run.run({"relax_exec_policy": True}, host.execute, check_mode=True)
    assert checked["warnings"] == [
        "esxilab.iperf.esxi_iperf_install: VMware ESXi 9.0.0 Update 3 build-24585383 is newer than the releases"
        " this collection was checked against (6.7, 7.x, 8.x)"
    ]


def test_the_stand_in_refuses_a_release_missing_from_its_recording_list(tmp_path: Path) -> None:
    host = MappedHost(tmp_path / "standin", "8.0")
    refused = host.sh("esxi-standin init 9.0")
    assert refused.returncode == 1
    assert "esxi-standin: unknown version '9.0' (use one of: 6.7 7.0 8.0 )" in refused.stderr
