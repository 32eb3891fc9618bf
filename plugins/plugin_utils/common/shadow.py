# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Other copies of the collection that Ansible could load instead of the one running (shadowing).

Ansible loads a collection from the first of its collection paths that holds it and says nothing
about the others: a copy installed in ``~/.ansible/collections`` (``ansible-galaxy collection
install``) silently wins over a checkout listed later, or the reverse. ``copies`` lists every
``ansible_collections/<namespace>/<name>`` under the given search paths, one per real directory
(symbolic links resolved: a link to the checkout is the checkout), each with its version
(``MANIFEST.json`` of a built/installed copy, else ``galaxy.yml`` of a checkout); ``warning``
names the one in use and the others, or returns None when there is only one copy.

Plain data in, plain data out; reading directories and the two metadata files is the only I/O
(used by the action plugin ``esxilab.iperf.role_vars_check``).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass

import yaml

__all__ = ["Copy", "copies", "describe", "warning"]


@dataclass(frozen=True)
class Copy:
    """One copy of the collection: its real directory, its version (None if unreadable), and its kind."""

    path: str
    version: str | None
    installed: bool  # True: MANIFEST.json (built or installed by ansible-galaxy); False: a checkout (galaxy.yml)


def _read(path: str) -> Copy:
    manifest = os.path.join(path, "MANIFEST.json")
    try:
        with open(manifest, encoding="utf-8") as handle:
            info = json.load(handle).get("collection_info", {})
        version = info.get("version") if isinstance(info, dict) else None
        return Copy(path, str(version) if version is not None else None, True)
    except (OSError, ValueError, AttributeError):
        pass
    try:
        with open(os.path.join(path, "galaxy.yml"), encoding="utf-8") as handle:
            meta = yaml.safe_load(handle)
        version = meta.get("version") if isinstance(meta, dict) else None
        return Copy(path, str(version) if version is not None else None, False)
    except (OSError, yaml.YAMLError):
        return Copy(path, None, os.path.exists(manifest))


def copies(search_paths: Iterable[str], namespace: str, name: str) -> list[Copy]:
    """Every distinct copy of ``namespace.name`` under ``search_paths``, in search order.

    A search path is a directory holding ``ansible_collections`` (or ``ansible_collections`` itself,
    as Ansible accepts both). Copies are compared by real path; a missing or unreadable path is skipped.
    """
    seen: dict[str, Copy] = {}
    for entry in search_paths:
        base = (
            entry
            if os.path.basename(os.path.normpath(entry)) == "ansible_collections"
            else os.path.join(entry, "ansible_collections")
        )
        candidate = os.path.join(base, namespace, name)
        if not os.path.isdir(candidate):
            continue
        real = os.path.realpath(candidate)
        if real not in seen:
            seen[real] = _read(real)
    return list(seen.values())


def describe(copy: Copy) -> str:
    """``/path (a checkout, 1.0.0)`` or ``/path (installed, 0.9.0)``."""
    kind = "installed" if copy.installed else "a checkout"
    return f"{copy.path} ({kind}, {copy.version or 'version unknown'})"


def warning(fqcn: str, in_use: str, found: list[Copy]) -> str | None:
    """The shadowing warning, or None when ``found`` holds no copy besides ``in_use`` (a real path)."""
    in_use = os.path.realpath(in_use)
    others = [copy for copy in found if copy.path != in_use]
    if not others:
        return None
    current = next((copy for copy in found if copy.path == in_use), None) or _read(in_use)
    listed = "; ".join(describe(copy) for copy in others)
    plural = "other copies are" if len(others) > 1 else "another copy is"
    return (
        f"{fqcn} is loaded from {describe(current)}; {plural} on the collection paths and not used: "
        f"{listed}. Remove the unused copy (ansible-galaxy collection list {fqcn} shows them) or put the one you "
        "want first in ANSIBLE_COLLECTIONS_PATH / collections_path of ansible.cfg."
    )
