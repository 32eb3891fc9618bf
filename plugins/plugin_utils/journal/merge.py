# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The earliest value wins: what the journal recorded over a task's ``restore`` value.

The journal is written before the first change of a window and a key that exists is never
overwritten on the host (``store.record_script``: ``[ -e "$d/KEY" ] || _put KEY VALUE``), so it
holds the value from before the window. A task's ``restore`` value may come from a later task of
the same window (a value already changed), so on a restore the journal's values go on top of it:
this is the one place that rule is applied on the controller (``esxi/firewall_run.py`` and
``esxi/install_run.py`` call it).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["earliest_wins"]


def earliest_wins(given: Mapping[str, Any], recorded: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` (a ``restore`` value) with the ``recorded`` (earliest) values on top.

    A mapping (firewall ``rulesets``) is merged key by key, the recorded key winning; a list
    (install ``created_files``) is joined, ``given``'s first, each item once; an empty recorded
    mapping or list adds nothing; any other value of ``recorded`` replaces ``given``'s.
    """
    merged = dict(given)
    for key, value in recorded.items():
        before = merged.get(key)
        if isinstance(value, Mapping):
            if value:
                merged[key] = {**(before or {}), **value}
        elif isinstance(value, list | tuple):
            joined = list(dict.fromkeys([*(before or []), *value]))
            if joined:
                merged[key] = joined
        else:
            merged[key] = value
    return merged
