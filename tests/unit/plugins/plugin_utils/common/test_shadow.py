# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Other copies of the collection on the search paths: found by real path, with their versions, named once."""

from __future__ import annotations

import json
from pathlib import Path

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.shadow import Copy, copies, warning


def _collection(root: Path, *, manifest: str | None = None, galaxy: str | None = None) -> Path:
    path = root / "ansible_collections" / "esxilab" / "iperf"
    path.mkdir(parents=True)
    if manifest is not None:
        (path / "MANIFEST.json").write_text(json.dumps({"collection_info": {"version": manifest}}))
    if galaxy is not None:
        (path / "galaxy.yml").write_text(f"namespace: esxilab\nname: iperf\nversion: {galaxy}\n")
    return path


def test_copies_in_search_order_one_per_real_path(tmp_path: Path) -> None:
    checkout = _collection(tmp_path / "src", galaxy="1.0.0")
    link = tmp_path / "link" / "ansible_collections" / "esxilab"
    link.mkdir(parents=True)
    (link / "iperf").symlink_to(checkout)
    installed = _collection(tmp_path / "home", manifest="0.9.0", galaxy="1.0.0")  # MANIFEST.json wins
    search = [
        str(tmp_path / "link"),
        str(tmp_path / "missing"),
        str(tmp_path / "home" / "ansible_collections"),  # Ansible accepts the ansible_collections directory too
        str(tmp_path / "src"),
    ]
    assert copies(search, "esxilab", "iperf") == [
        Copy(str(checkout.resolve()), "1.0.0", False),
        Copy(str(installed.resolve()), "0.9.0", True),
    ]


def test_unreadable_metadata_gives_an_unknown_version(tmp_path: Path) -> None:
    path = _collection(tmp_path / "a")
    (path / "MANIFEST.json").write_text("{not json")
    (found,) = copies([str(tmp_path / "a")], "esxilab", "iperf")
    assert found == Copy(str(path.resolve()), None, True)


def test_warning_names_the_copy_in_use_and_the_others(tmp_path: Path) -> None:
    checkout = _collection(tmp_path / "src", galaxy="1.0.0")
    old = _collection(tmp_path / "old", manifest="0.9.0")
    found = copies([str(tmp_path / "src"), str(tmp_path / "old")], "esxilab", "iperf")
    assert warning("esxilab.iperf", str(checkout), found[:1]) is None
    text = warning("esxilab.iperf", str(checkout), found)
    assert text is not None
    assert text.startswith(
        f"esxilab.iperf is loaded from {checkout.resolve()} (a checkout, 1.0.0); another copy is on the collection"
        f" paths and not used: {old.resolve()} (installed, 0.9.0). Remove the unused copy"
    )
    third = _collection(tmp_path / "third", manifest="0.8.0")
    found = copies([str(tmp_path / p) for p in ("old", "src", "third")], "esxilab", "iperf")
    text = warning("esxilab.iperf", str(old), found)
    assert text is not None
    assert f"other copies are on the collection paths and not used: {checkout.resolve()} (a checkout, 1.0.0); " in text
    assert f"{third.resolve()} (installed, 0.8.0)." in text


def test_the_copy_in_use_is_the_collections_root() -> None:
    """The root a warning names is the directory with galaxy.yml, wherever controller.py sits below it."""
    from ansible_collections.esxilab.iperf.plugins.plugin_utils.common import controller

    root = Path(controller._IN_USE)  # pylint: disable=protected-access
    assert (root / "galaxy.yml").is_file() and (root / "plugins" / "plugin_utils").is_dir(), root
