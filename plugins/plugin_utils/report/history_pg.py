# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The PostgreSQL backend of the history (``postgresql://...``): psycopg 3, PostgreSQL's client library.

The URL is a libpq connection URI (``postgresql://USER@HOST:PORT/DB``; a Unix socket directory as
``postgresql:///DB?host=/run/postgresql``); libpq's environment (``PGPASSWORD``, ``PGHOST``,
``PGUSER``, ``PGSSLMODE``, ``~/.pgpass``) applies as to ``psql``. A password given as an option is
passed to libpq apart from the URL and never shown. ``transaction()`` is psycopg's transaction
block: the report's rows are committed together or not at all.

Before connecting, the URL is parsed by libpq itself (``conninfo_to_dict``), so a URL libpq reads
otherwise than ``history_url.parse_target`` checked is refused, not tried. Every psycopg error is a
``HistoryError`` whose text has the URL, the password option and the URL's secrets masked
(``secrets.mask_text``): libpq quotes the whole URI in some of its messages.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.secrets import SECRET_PARAMS, mask_text
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


class _Masker:
    """Masks a psycopg message: the URL by its shown form, then every secret."""

    def __init__(self, dsn: str, shown: str, secrets: Iterable[str]) -> None:
        self.dsn, self.shown, self.secrets = dsn, shown, list(secrets)

    def __call__(self, exc: BaseException) -> str:
        text = str(exc).replace(self.dsn, self.shown)
        for secret in self.secrets:  # the password option too, however short
            text = text.replace(secret, "***") if secret else text
        return mask_text(text, self.secrets).strip()


class PgConnection:
    """A ``history.Connection`` over psycopg 3."""

    dialect = "postgresql"

    def __init__(self, raw: Any, shown: str, mask: _Masker | None = None) -> None:
        self._raw = raw
        self.name = f"report_history={shown}"
        self._mask = mask or _Masker(shown, shown, ())

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        import psycopg  # pylint: disable=import-outside-toplevel

        try:
            cursor = self._raw.execute(sql.replace("?", "%s"), tuple(params))
            return list(cursor.fetchall()) if cursor.description is not None else []
        except psycopg.Error as exc:
            raise HistoryError(
                f"{self.name}: {self._mask(exc)}; is it a history of esxilab.iperf? Otherwise point report_history "
                "at another database"
            ) from exc

    @contextmanager
    def transaction(self) -> Iterator[None]:
        import psycopg  # pylint: disable=import-outside-toplevel

        try:
            with self._raw.transaction():
                yield
        except psycopg.Error as exc:  # the commit itself failed (the server went away)
            raise HistoryError(f"{self.name}: the transaction failed: {self._mask(exc)}") from exc

    def close(self) -> None:
        self._raw.close()


def connect(dsn: str, shown: str, password: str | None = None, secrets: Iterable[str] = ()) -> PgConnection:
    """Connect to ``dsn`` (autocommit; ``transaction()`` makes the blocks).

    ``shown`` (the masked URL) names it in errors; ``secrets`` (``history_url.HistoryTarget.secrets``)
    and ``password`` are masked in every message.
    """
    problem = psycopg_problem()
    if problem is not None:
        raise HistoryError(f"report_history={shown}: {problem}")
    import psycopg  # pylint: disable=import-outside-toplevel
    from psycopg.conninfo import conninfo_to_dict  # pylint: disable=import-outside-toplevel

    known = [*secrets, *([password] if password else [])]
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.Error as exc:
        mask = _Masker(dsn, shown, known)
        raise HistoryError(
            f"report_history={shown}: libpq cannot read the URL: {mask(exc)}; write it as "
            "postgresql://USER@HOST:PORT/DB?sslmode=... (percent-encode the password's special characters, or give "
            "the password in report_history_password or PGPASSWORD)"
        ) from exc
    known += [str(params[k]) for k in SECRET_PARAMS if params.get(k)]
    mask = _Masker(dsn, shown, known)
    extra: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "esxilab.iperf"}
    if password:
        extra["password"] = password
    try:
        raw = psycopg.connect(dsn, autocommit=True, **extra)
    except psycopg.Error as exc:
        raise HistoryError(
            f"report_history={shown}: cannot connect to PostgreSQL: {mask(exc)}; check the URL, the server and "
            "the password (report_history_password or PGPASSWORD)"
        ) from exc
    return PgConnection(raw, shown, mask)
