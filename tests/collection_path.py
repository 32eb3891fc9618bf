# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Expose this checkout as ``ansible_collections.esxilab.iperf`` (for tests and benchmarks)."""

from __future__ import annotations

import atexit
import contextlib
import gzip
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Where the real iperf2/iperf3 outputs are kept in the repository (provenance in its README.md).
#: A recording whose bytes the text checks would reject (CRLF line endings, the very input the
#: parsers must accept) is kept gzip-compressed as ``NAME.gz``, byte for byte.
FIXTURE_STORE = REPO / "tests" / "fixtures" / "iperf"


def _materialize(store: Path) -> Path:
    """A private directory with every recording under its own name (``NAME.gz`` unpacked)."""
    target = Path(tempfile.mkdtemp(prefix="esxilab-iperf-fixtures-"))
    atexit.register(shutil.rmtree, target, True)
    for entry in store.iterdir():
        if entry.name.endswith(".gz"):
            (target / entry.name[: -len(".gz")]).write_bytes(gzip.decompress(entry.read_bytes()))
        else:
            (target / entry.name).symlink_to(entry)
    return target


#: The real ESXi outputs (esxcli, vmware, vmkping, ...) the ESXi parsers and the stand-in
#: (``tests/esxi_standin/``) are checked against; provenance in its ``SOURCES.md``.
ESXI_RECORDINGS = REPO / "tests" / "fixtures" / "esxi"
#: The real iperf2/iperf3 outputs the parsers are tested against, each under its recorded name.
FIXTURES = _materialize(FIXTURE_STORE)
#: The normalized result contract every parser result is validated against (docs/schema/README.md).
SCHEMA = REPO / "docs" / "schema" / "iperf-result.schema.json"


def ensure_collection_path() -> Path:
    """Create (once) the symlink tree and put it on ``sys.path``; return its root."""
    digest = hashlib.sha256(str(REPO).encode()).hexdigest()[:10]
    base = Path(tempfile.gettempdir()) / f"esxilab-iperf-{os.getuid()}-{digest}"
    link = base / "ansible_collections" / "esxilab" / "iperf"
    if not link.exists():
        link.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            link.symlink_to(REPO, target_is_directory=True)
    if str(base) not in sys.path:
        sys.path.insert(0, str(base))
    return base
