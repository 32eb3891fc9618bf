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


#: What each package of plugin_utils/ may import of the collection (docs/architecture.md, "What each layer may
#: import"): a package sees only those below it; the host-side concerns see each other.
HOST_SIDE = ("esxi", "journal", "iperf_run", "nic", "guest")
MAY_IMPORT: dict[str, tuple[str, ...]] = {
    "common": (),
    "iperf": (),
    "cpu": (),
    "host": ("common", "iperf"),
    # the ping figures of latency under load: parsed like the iperf output, read by the client and the plan
    "latency": ("common", "iperf"),
    # cpu: the CPU reading a NIC reading carries (nic/facts_script.py)
    **{name: ("common", "iperf", "host", "latency", "cpu", *HOST_SIDE) for name in HOST_SIDE},
    "report": ("common", "iperf"),
    "paired": ("common", "iperf", "report", "cpu", "latency"),
    "ratesearch": ("common", "iperf", "report"),
}


def _layer_imports(package: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted((PLUGIN_UTILS / package).rglob("*.py")):
        names = [name.split(".") for name in _imports(path)]
        found[str(path.relative_to(REPO))] = sorted(
            {".".join(n[:2]) if n[0] == "plugin_utils" else n[0] for n in names} - {f"plugin_utils.{package}"}
        )
    return found


def test_every_package_of_plugin_utils_is_in_the_layer_table() -> None:
    packages = {p.name for p in PLUGIN_UTILS.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert packages == set(MAY_IMPORT)
    assert not [p.name for p in PLUGIN_UTILS.glob("*.py") if p.name != "__init__.py"], "no loose file in plugin_utils/"


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_a_package_imports_only_the_layers_below_it(package: str) -> None:
    allowed = {f"plugin_utils.{name}" for name in MAY_IMPORT[package]}
    wrong = {path: sorted(set(names) - allowed) for path, names in _layer_imports(package).items()}
    assert not {k: v for k, v in wrong.items() if v}, f"{package} may import only {sorted(allowed)}"


def test_the_layer_check_sees_imports() -> None:
    assert "plugin_utils.report" in {n for names in _layer_imports("paired").values() for n in names}
    assert "plugin_utils.host" in {n for names in _layer_imports("esxi").values() for n in names}


def test_no_source_file_of_the_plugins_is_over_1000_lines() -> None:
    long = {
        str(path.relative_to(REPO)): n
        for path in sorted((REPO / "plugins").rglob("*.py"))
        if (n := len(path.read_text().splitlines())) > 1000
    }
    assert not long, f"split these by concern (issue 24): {long}"
