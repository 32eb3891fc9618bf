# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Idempotent, atomic file writes on the controller, shared by the report-writing actions.

``write_if_changed()`` leaves a file alone when it already holds the content (and, unless told
otherwise, the permission bits); otherwise it writes a temporary file in the same directory and
renames it over the target, so a reader never sees a half-written file. Used by the actions
``report_write`` and ``paired_test_report``.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import os
import tempfile

__all__ = ["write_if_changed"]


def write_if_changed(
    path: str,
    content: bytes,
    *,
    mode: int,
    check_mode: bool,
    prefix: str,
    enforce_mode: bool = True,
) -> bool:
    """Write ``content`` to ``path`` atomically unless it already holds it; return whether it changed.

    ``mode`` is given to a file that is written. With ``enforce_mode`` a file that holds the
    content but has other permission bits is written again; without it such a file is left
    alone. In ``check_mode`` nothing is written, the return value says whether it would be.
    ``prefix`` names the temporary file (in the directory of ``path``) until it is renamed.
    """
    try:
        with open(path, "rb") as handle:
            same = handle.read() == content
        if same and (not enforce_mode or (os.stat(path).st_mode & 0o777) == mode):
            return False
    except FileNotFoundError:
        pass
    if check_mode:
        return True
    fd, tmp = tempfile.mkstemp(prefix=prefix, dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return True
