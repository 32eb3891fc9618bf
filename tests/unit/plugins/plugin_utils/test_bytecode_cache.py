# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugin_utils is imported with Python's bytecode cache, under Ansible's own collection loader as in a play."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
PLUGINS = "ansible_collections.esxilab.iperf.plugins"

# As in ansible-playbook: Ansible's collection finder is the only way to the collection (no sys.path entry).
_IMPORT = f"""
import json, sys
from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
_AnsibleCollectionFinder(paths=[sys.argv[1]])._install()
import {PLUGINS}.plugin_utils.paired.plan as plan
import {PLUGINS}.action.paired_test_preflight as action
import {PLUGINS}.plugin_utils as package
package.install()  # a second time: still one finder
print(json.dumps({{
    "plan": [type(plan.__loader__).__name__, plan.__spec__.cached],
    "action": type(action.__loader__).__name__,
    "finders": sum(getattr(f, "__module__", None) == package.__name__ for f in sys.meta_path),
}}))
"""


def _imported(collections: Path, env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT, str(collections)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={k: v for k, v in env.items() if k != "PYTHONPATH"},
        cwd="/",
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_plugin_utils_modules_use_the_bytecode_cache_and_actions_stay_with_ansible(tmp_path: Path) -> None:
    collections = tmp_path / "collections"
    tree = collections / "ansible_collections" / "esxilab" / "iperf"
    shutil.copytree(ROOT / "plugins", tree / "plugins", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "galaxy.yml", tree / "galaxy.yml")
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPYCACHEPREFIX", None)  # the cache beside the source, where the assertion looks
    first = _imported(collections, env)
    plan = first["plan"]
    assert isinstance(plan, list)
    loader, cached = str(plan[0]), Path(str(plan[1]))
    assert loader == "SourceFileLoader" and first["action"] == "_AnsibleCollectionLoader", first
    assert first["finders"] == 1, first
    assert cached.is_file() and cached.parent == tree / "plugins/plugin_utils/paired/__pycache__"
    # told not to write bytecode: nothing is written, the modules are still found
    shutil.rmtree(tree / "plugins/plugin_utils/paired/__pycache__")
    second = _imported(collections, {**env, "PYTHONDONTWRITEBYTECODE": "1"})
    assert second["plan"] == ["SourceFileLoader", str(cached)]  # the path it would be cached at
    assert not (tree / "plugins/plugin_utils/paired/__pycache__").exists()
