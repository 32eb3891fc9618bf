# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The SQLite backend of the history (``sqlite:///PATH``): Python's own ``sqlite3``, no server.

The connection runs in autocommit mode and ``transaction()`` opens ``BEGIN IMMEDIATE`` (the write
lock is taken at the start, so two writers queue instead of failing half-way) and commits at the
end, or rolls back on an error. The journal is SQLite's default rollback journal: a writer killed
mid-transaction leaves a hot journal that the next opener rolls back -- the earlier reports stay,
none of the killed one does. A symbolic link at the database path is refused (never followed).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history import HistoryError

__all__ = ["SqliteConnection", "connect"]

BUSY_TIMEOUT_S = 30.0


class SqliteConnection:
    """A ``history.Connection`` over ``sqlite3``."""

    dialect = "sqlite"

    def __init__(self, raw: sqlite3.Connection) -> None:
        self._raw = raw

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return list(self._raw.execute(sql, tuple(params)).fetchall())

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self._raw.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._raw.execute("ROLLBACK")
            raise
        self._raw.execute("COMMIT")

    def close(self) -> None:
        self._raw.close()


def connect(path: str) -> SqliteConnection:
    """Open (create) the database file ``path``; its directory is created if missing (mode 0755)."""
    if os.path.islink(path):
        raise HistoryError(f"report_history: {path} is a symbolic link; give the database file itself")
    if os.path.exists(path) and not os.path.isfile(path):
        raise HistoryError(f"report_history: {path} exists and is not a file; choose another sqlite:/// path")
    directory = os.path.dirname(path)
    try:
        if directory:
            os.makedirs(directory, mode=0o755, exist_ok=True)
        raw = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        raw.execute("PRAGMA foreign_keys = ON")
    except (OSError, sqlite3.Error) as exc:
        raise HistoryError(f"report_history: cannot open the SQLite history {path}: {exc}") from exc
    return SqliteConnection(raw)
