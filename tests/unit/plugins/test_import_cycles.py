# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""No import cycle in plugins/: every import of the collection's own code counts, also those under
``if TYPE_CHECKING:`` (a cycle hidden there is still two files that cannot be read one without the other)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.collection_path import REPO

PKG = "ansible_collections.esxilab.iperf.plugins"
PLUGINS = REPO / "plugins"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PLUGINS).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PKG, *parts])


def import_graph(files: dict[str, str]) -> dict[str, set[str]]:
    """Module name -> the modules of the collection it imports (``from package import module`` is the module)."""
    graph: dict[str, set[str]] = {}
    for name, source in files.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PKG):
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    deps.add(full if full in files else node.module)
            elif isinstance(node, ast.Import):
                deps.update(alias.name for alias in node.names if alias.name.startswith(PKG))
        graph[name] = {dep for dep in deps if dep in files and dep != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (each one holds a cycle)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for dep in sorted(graph[node]):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle_hidden_under_type_checking() -> None:
    files = {
        f"{PKG}.a": f"from {PKG}.b import x\n",
        f"{PKG}.b": f"from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from {PKG}.a import y\n",
        f"{PKG}.c": f"import {PKG}.a\n",
    }
    assert cycles(import_graph(files)) == [[f"{PKG}.a", f"{PKG}.b"]]


def test_plugins_have_no_import_cycle() -> None:
    files = {_module_name(path): path.read_text() for path in sorted(PLUGINS.rglob("*.py"))}
    assert f"{PKG}.plugin_utils.report.figures" in files
    assert cycles(import_graph(files)) == []
