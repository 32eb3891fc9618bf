# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one "earliest value wins" merge on the controller: the journal's values over a task's ``restore`` value."""

from __future__ import annotations

from ansible_collections.esxilab.iperf.plugins.plugin_utils.journal.merge import earliest_wins


def test_firewall_values_and_rulesets() -> None:
    given = {"enabled": False, "default_action": "PASS", "rulesets": {"a": False, "b": True}}
    recorded = {"enabled": True, "rulesets": {"b": False, "c": True}}
    assert earliest_wins(given, recorded) == {
        "enabled": True,  # the journal's, written before the window
        "default_action": "PASS",  # only the task's
        "rulesets": {"a": False, "b": False, "c": True},
    }


def test_install_copies_are_joined_and_scalars_replaced() -> None:
    given = {"created_files": ["/x.copy"], "exec_installed_only_previous": 0}
    recorded = {"created_files": ["/y.copy", "/x.copy"], "exec_installed_only_previous": 1, "installed_vib": "iperf"}
    assert earliest_wins(given, recorded) == {
        "created_files": ["/x.copy", "/y.copy"],
        "exec_installed_only_previous": 1,
        "installed_vib": "iperf",
    }


def test_empty_recorded_mappings_and_lists_add_nothing() -> None:
    assert earliest_wins({}, {"rulesets": {}, "created_files": []}) == {}
    assert earliest_wins({"rulesets": {"a": True}}, {}) == {"rulesets": {"a": True}}
