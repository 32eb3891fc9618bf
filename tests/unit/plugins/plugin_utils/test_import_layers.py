# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Layers that keep to themselves (issue 24): the generic host layer imports nothing of ESXi or the
journal, and no backend under ``plugin_utils/`` imports a module file (the action plugin reads the
module's DOCUMENTATION and hands the options over)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.collection_path import REPO

PLUGIN_UTILS = REPO / "plugins" / "plugin_utils"
_PACKAGE = "ansible_collections.esxilab.iperf.plugins."


def _imports(path: Path) -> list[str]:
    """The collection modules ``path`` imports (``plugins.``-relative dotted names)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found += [name[len(_PACKAGE) :] for name in names if name.startswith(_PACKAGE)]
    return found


@pytest.mark.parametrize("path", sorted((PLUGIN_UTILS / "host").glob("*.py")), ids=lambda p: p.name)
def test_the_host_layer_imports_nothing_of_esxi_or_the_journal(path: Path) -> None:
    wrong = [name for name in _imports(path) if name.startswith(("plugin_utils.esxi", "plugin_utils.journal"))]
    wrong += [name for name in _imports(path) if name.split(".")[1].startswith("_esxi")]
    assert not wrong, f"{path.relative_to(REPO)} imports {wrong}: the ESXi parts belong in plugin_utils/esxi/"


def test_no_backend_imports_a_module_file() -> None:
    wrong = {
        str(path.relative_to(REPO)): [name for name in _imports(path) if name.startswith("modules")]
        for path in sorted(PLUGIN_UTILS.rglob("*.py"))
    }
    assert not {k: v for k, v in wrong.items() if v}, "pass the spec from the action plugin instead"


def test_the_checks_see_imports() -> None:
    """The checks above read real imports (a check that finds nothing anywhere proves nothing)."""
    assert "plugin_utils.host.command" in _imports(PLUGIN_UTILS / "host" / "action.py")
    assert "modules.esxi_firewall.DOCUMENTATION" in _imports(REPO / "plugins" / "action" / "esxi_firewall.py")
