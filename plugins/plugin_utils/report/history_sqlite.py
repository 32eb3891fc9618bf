# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The SQLite backend of the history (``sqlite:///PATH``): Python's own ``sqlite3``, no server.

The connection runs in autocommit mode and ``transaction()`` opens ``BEGIN IMMEDIATE`` (the write
lock is taken at the start, so two writers queue instead of failing half-way) and commits at the
end, or rolls back on an error. The journal is SQLite's default rollback journal: a writer killed
mid-transaction leaves a hot journal that the next opener rolls back -- the earlier reports stay,
none of the killed one does. A symbolic link at the database path is refused (never followed).

Every ``sqlite3`` error is a ``HistoryError`` naming the file and the fix: a file that is not a
SQLite database (random bytes, a text file, a truncated or damaged database) is found when it is
opened (its schema is read at once) or at the first query that reaches the damage, never as a
traceback.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history import HistoryError

__all__ = ["SqliteConnection", "connect", "problem"]

BUSY_TIMEOUT_S = 30.0


_DAMAGED = ("file is not a database", "malformed", "disk image", "not a database", "corrupt")


def problem(path: str, exc: sqlite3.Error) -> HistoryError:
    """The ``HistoryError`` of a ``sqlite3`` error on the history ``path``: what it means and the fix."""
    text = str(exc)
    where = f"report_history=sqlite:///{path}"
    if any(word in text.lower() for word in _DAMAGED):
        return HistoryError(
            f"{where}: {path} is not a SQLite database or is damaged ({text}): move the file away (a new history is "
            "made in its place) or point report_history at another sqlite:/// file"
        )
    if "locked" in text.lower() or "busy" in text.lower():
        return HistoryError(
            f"{where}: {path} stayed locked by another writer for {BUSY_TIMEOUT_S:.0f} s ({text}): run again when "
            "the other play has recorded its report"
        )
    return HistoryError(
        f"{where}: {path} cannot be used as the history ({type(exc).__name__}: {text}): it may be another "
        "program's database; point report_history at another sqlite:/// file"
    )


class SqliteConnection:
    """A ``history.Connection`` over ``sqlite3``."""

    dialect = "sqlite"

    def __init__(self, raw: sqlite3.Connection, path: str) -> None:
        self._raw = raw
        self._path = path
        self.name = f"report_history=sqlite:///{path}"

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return list(self._raw.execute(sql, tuple(params)).fetchall())
        except sqlite3.Error as exc:
            raise problem(self._path, exc) from exc

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if self._raw.in_transaction:
                self._raw.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

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
    except (OSError, sqlite3.Error) as exc:
        raise HistoryError(
            f"report_history=sqlite:///{path}: cannot open the SQLite history {path}: {exc}; check the directory's "
            "permissions or choose another sqlite:/// path"
        ) from exc
    conn = SqliteConnection(raw, path)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("SELECT COUNT(*) FROM sqlite_master")  # reads the header and the schema: garbage fails here
    except HistoryError:
        conn.close()
        raise
    return conn
