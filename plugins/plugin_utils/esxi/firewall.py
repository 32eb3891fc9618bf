# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Firewall state: ``esxcli network firewall get`` and ``network firewall ruleset list`` (the
column layouts of ``releases.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.errors import EsxiParseError
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.releases import RULESET_COLUMNS
from ansible_collections.esxilab.iperf.plugins.plugin_utils.esxi.tables import (
    field_key,
    kv_fields,
    parse_bool,
    parse_table,
    required_field,
)

DefaultAction = Literal["PASS", "DROP"]


@dataclass(frozen=True, slots=True)
class FirewallStatus:
    """``esxcli network firewall get``. ``loaded`` is ``None`` if the field was not printed."""

    enabled: bool
    default_action: DefaultAction
    loaded: bool | None = None


def parse_firewall_get(text: str) -> FirewallStatus:
    """``Default Action: DROP`` / ``Enabled: true`` / ``Loaded: true`` (any order)."""
    kv = kv_fields(text)
    enabled = parse_bool(kv.get("enabled"))
    action = kv.get("defaultaction", "").upper()
    if enabled is None or action not in ("PASS", "DROP"):
        raise EsxiParseError("not 'esxcli network firewall get' output (Enabled/Default Action missing)", raw=text)
    default_action: DefaultAction = "PASS" if action == "PASS" else "DROP"
    return FirewallStatus(enabled=enabled, default_action=default_action, loaded=parse_bool(kv.get("loaded")))


@dataclass(frozen=True, slots=True)
class Ruleset:
    """A row of ``esxcli network firewall ruleset list``.

    The two ``*_configurable`` columns appear from 8.0 U2 on; before that they are ``None``.
    """

    name: str
    enabled: bool
    enable_disable_configurable: bool | None = None
    allowed_ip_configurable: bool | None = None


def parse_ruleset_list(text: str) -> list[Ruleset]:
    """The layouts of :data:`~.releases.RULESET_COLUMNS`: 2 columns (Name, Enabled) and 4 (8.0 U2+)."""
    name, enabled_column, configurable, allowed_ip = (field_key(c) for c in RULESET_COLUMNS)
    rulesets = []
    for row in parse_table(text, RULESET_COLUMNS[0]):
        enabled = parse_bool(required_field(row, enabled_column, "ruleset list"))
        if enabled is None:
            raise EsxiParseError(f"ruleset {row.get(name)!r}: Enabled is {row.get(enabled_column)!r}", raw=text)
        rulesets.append(
            Ruleset(
                name=required_field(row, name, "ruleset list"),
                enabled=enabled,
                enable_disable_configurable=parse_bool(row.get(configurable)),
                allowed_ip_configurable=parse_bool(row.get(allowed_ip)),
            )
        )
    return rulesets
