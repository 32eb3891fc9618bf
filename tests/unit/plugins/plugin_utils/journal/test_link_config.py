# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The link scope's settings besides the MTU (``link.IF.addr``, ``.down``, ``.persist``, written by guest_network):
only values the collection writes are recorded, and planted ones are rejected, kept and never applied - a
planted ``persist`` entry can never make a restore remove a file that is not the collection's own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.journal_run import EsxiJournalError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.journal_run import run as journal_run
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.owner import RunId
from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.store import (
    Journal,
    JournalError,
    link_config_entries,
    persist_value,
)
from tests.unit.plugins.plugin_utils.guest.fake_guest import guest

A = RunId("controller-a", 4242, "170000")


def test_entries_are_checked_before_anything_is_written() -> None:
    assert link_config_entries({"ens224": {"addr": "198.18.60.12/24", "down": "true"}}) == [
        ("link.ens224.addr", "198.18.60.12/24"),
        ("link.ens224.down", "true"),
    ]
    assert link_config_entries({"ens224": {"persist": persist_value("netplan", "ens224")}}) == [
        ("link.ens224.persist", "file:/etc/netplan/60-esxilab-iperf-ens224.yaml")
    ]
    for config, why in [
        ({"a;b": {"down": "true"}}, "interface name 'a;b' cannot be journaled"),
        ({"ens224": {"addr": "198.18.60.12"}}, "has no prefix length"),
        ({"ens224": {"addr": "nonsense/24"}}, "is not an address/prefix"),
        ({"ens224": {"down": "false"}}, "'false' is not true"),
        ({"ens224": {"persist": "file:/etc/passwd"}}, "is not a setting it creates"),
        ({"ens224": {"persist": persist_value("netplan", "ens256")}}, "is not a setting it creates"),
        ({"ens224": {"route": "x"}}, "'route' is not one of addr, down, persist"),
    ]:
        with pytest.raises(JournalError, match=why):
            link_config_entries(config)


def test_planted_values_are_rejected_kept_and_never_applied(tmp_path: Path) -> None:
    host = guest()
    host.ifaces["eth1"].addresses.append("198.18.61.12/24")
    journal = Journal(host.execute, str(tmp_path / "j"), run=A, deadline_seconds=0)
    journal.record(link_config={"eth1": {"addr": "198.18.61.12/24"}})
    for name, value in [
        ("link.eth1.persist", "file:/etc/passwd"),
        ("link.eth2.addr", "rm -rf /"),
        ("link.eth1.down", "yes"),
    ]:
        (tmp_path / "j" / name).write_text(value + "\n")
    state = journal.read()
    assert state.link_config == {"eth1": {"addr": "198.18.61.12/24"}}
    assert state.rejected == {
        "link.eth1.persist": "'file:/etc/passwd' is not a setting it creates",
        "link.eth2.addr": "'rm -rf /' is not an address/prefix",
        "link.eth1.down": "'yes' is not true",
    }
    with pytest.raises(EsxiJournalError, match="keeps what could not"):
        journal_run({"mode": "restore", "scope": ["link"]}, journal, host.execute, check_mode=False)
    assert host.ifaces["eth1"].addresses == []  # the collection's own entry was put back
    assert host.config == [] and not [c for c in host.log if "/etc/passwd" in c and "rm " in c]
    assert sorted(os.listdir(tmp_path / "j")) == [
        ".esxilab-journal",
        "link.eth1.down",
        "link.eth1.persist",
        "link.eth2.addr",
        "owner",
    ]
