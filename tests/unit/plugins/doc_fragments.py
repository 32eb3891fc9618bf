# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The options a module gets from the collection's journal doc fragment, for doc-vs-spec tests."""

from __future__ import annotations

from typing import Any

import yaml

from ansible_collections.esxilab.iperf.plugins.doc_fragments.journal import ModuleDocFragment


def journal_fragment_options(*names: str) -> dict[str, Any]:
    """The ``options`` of the named parts (``DOCUMENTATION``, ``DEADLINE``) of the journal fragment."""
    out: dict[str, Any] = {}
    for name in names:
        out.update(yaml.safe_load(getattr(ModuleDocFragment, name))["options"])
    return out
