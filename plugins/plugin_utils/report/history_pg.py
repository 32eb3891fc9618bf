# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The PostgreSQL backend of the history (``postgresql://...``): psycopg 3, PostgreSQL's client library.

The URL is a libpq connection URI (``postgresql://USER@HOST:PORT/DB``; a Unix socket directory as
``postgresql:///DB?host=/run/postgresql``); libpq's environment (``PGPASSWORD``, ``PGHOST``,
``PGUSER``, ``PGSSLMODE``, ``~/.pgpass``) applies as to ``psql``. A password given as an option is
passed to libpq apart from the URL and never shown. ``transaction()`` is psycopg's transaction
block: the report's rows are committed together or not at all.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history import HistoryError

__all__ = ["PgConnection", "connect", "psycopg_problem"]

CONNECT_TIMEOUT_S = 10


def psycopg_problem() -> str | None:
    """Why psycopg cannot be used here, or None."""
    try:
        import psycopg  # noqa: F401  # pylint: disable=unused-import,import-outside-toplevel
    except ImportError as exc:
        return f"the Python package psycopg 3 is missing on the controller ({exc}): pip install 'psycopg[binary]'"
    return None


class PgConnection:
    """A ``history.Connection`` over psycopg 3."""

    dialect = "postgresql"

    def __init__(self, raw: Any) -> None:
        self._raw = raw

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cursor = self._raw.execute(sql.replace("?", "%s"), tuple(params))
        return list(cursor.fetchall()) if cursor.description is not None else []

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._raw.transaction():
            yield

    def close(self) -> None:
        self._raw.close()


def connect(dsn: str, shown: str, password: str | None = None) -> PgConnection:
    """Connect to ``dsn`` (autocommit; ``transaction()`` makes the blocks); ``shown`` names it in errors."""
    problem = psycopg_problem()
    if problem is not None:
        raise HistoryError(f"report_history={shown}: {problem}")
    import psycopg  # pylint: disable=import-outside-toplevel

    extra: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "esxilab.iperf"}
    if password:
        extra["password"] = password
    try:
        raw = psycopg.connect(dsn, autocommit=True, **extra)
    except psycopg.Error as exc:
        message = str(exc).replace(password, "***") if password else str(exc)
        raise HistoryError(
            f"report_history={shown}: cannot connect to PostgreSQL: {message.strip()}; check the URL, the server and "
            "the password (report_history_password or PGPASSWORD)"
        ) from exc
    return PgConnection(raw)
