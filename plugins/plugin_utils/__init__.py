# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The collection's controller-side code, imported with Python's bytecode cache.

Ansible's plugin loader loads an action, filter or callback file itself with Python's file loader (bytecode cached),
but what such a file imports by name from the collection goes through Ansible's collection loader, which compiles the
Python file from source on every import and keeps no bytecode (``_AnsibleCollectionPkgLoaderBase.get_code``): a play
that runs ``esxilab.iperf.paired_test`` compiled about 110 modules of this package, 0.1 s of the play's process on the
2-core lab, before each play. The modules of this package (never sent to a host: the controller's side of the
actions, filters and callbacks) are therefore found by Python's own file finder for the directory Ansible chose for
the package (placed right before Ansible's collection finder), whose loader reads and writes the bytecode cache
(``__pycache__``, as for any installed package; not written when Python is told not to - ``PYTHONDONTWRITEBYTECODE``).
Only this package's submodules are found so; every other import goes through Ansible's loader as before. Should
Ansible put its finder first again (it does when it installs it), this package is merely compiled from source again.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.machinery import SOURCE_SUFFIXES, FileFinder, ModuleSpec, SourceFileLoader
from types import ModuleType

_PREFIX = __name__ + "."


class CachedFinder:
    """Finds the submodules of this package with Python's file finder (bytecode cache) in the directories of the
    package Ansible imported."""

    finders: dict[str, FileFinder] = {}

    @classmethod
    def invalidate_caches(cls) -> None:
        """``importlib.invalidate_caches()``: each directory's file finder forgets its listing."""
        for finder in cls.finders.values():
            finder.invalidate_caches()

    @classmethod
    def find_spec(
        cls, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        """The spec of ``fullname`` when it is a module of this package, else None (the next finder's)."""
        if path is None or not fullname.startswith(_PREFIX):
            return None
        for entry in path:
            finder = cls.finders.get(entry)
            if finder is None:
                finder = cls.finders[entry] = FileFinder(entry, (SourceFileLoader, SOURCE_SUFFIXES))
            spec = finder.find_spec(fullname, target)
            if spec is not None and spec.loader is not None:
                return spec
        return None


def install() -> None:
    """Put :class:`CachedFinder` right before Ansible's collection finder on ``sys.meta_path`` (once, whichever copy of
    this package ran first): it takes this package's modules from that finder only, and whatever comes before it
    (``ansible-test``'s import checks) still sees every import first. Without Ansible's finder (a plain ``sys.path``
    import, as in the unit tests) Python's own finder, with its cache, already finds them."""
    mine = (__name__, CachedFinder.__qualname__)
    names = [(getattr(finder, "__module__", None), getattr(finder, "__qualname__", None)) for finder in sys.meta_path]
    if mine in names:
        return
    for index, finder in enumerate(sys.meta_path):
        if type(finder).__name__ == "_AnsibleCollectionFinder":
            sys.meta_path.insert(index, CachedFinder)
            return


install()
