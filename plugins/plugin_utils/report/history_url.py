# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where the history is: ``report_history`` parsed and checked as libpq reads it, and shown masked.

``parse_target()`` gives a ``HistoryTarget`` (sqlite with its path, postgresql with its DSN, or
none) or a ``HistoryError`` naming the option and the fix: for a libpq URI, a port that is not a
number from 1 to 65535 (``:notaport``, ``?port=abc``), an IPv6 address without its closing bracket
(``[::1``), a raw ``@`` or ``/`` in the password -- checked before anything connects, by
``report_gate`` and by ``paired_test``'s preflight alike. Every shown form of the URL is
``secrets.mask_url``'s (passwords and secret parameters as ``***``); a value that may be a piece
of a password is never echoed.

Private module: not part of the collection's public API.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ansible_collections.esxilab.iperf.plugins.plugin_utils.common.secrets import mask_url, url_secrets
from ansible_collections.esxilab.iperf.plugins.plugin_utils.report.history import HistoryError

__all__ = ["HistoryTarget", "parse_target"]


@dataclass(frozen=True)
class HistoryTarget:
    """``kind`` sqlite (``path``), postgresql (``dsn``) or none; ``shown`` is the URL with its secrets masked.

    ``secrets`` are the secret values of the URL (``secrets.url_secrets``): whatever shows a driver's
    message masks them too. Neither ``dsn`` nor ``secrets`` is in the ``repr``.
    """

    kind: str
    path: str | None = None
    dsn: str | None = field(default=None, repr=False)
    shown: str = ""
    secrets: tuple[str, ...] = field(default=(), repr=False)


_FORMS = (
    "use sqlite:///PATH (a file; sqlite:////abs/history.sqlite), postgresql://USER@HOST:PORT/DB (password from the "
    "password option or PGPASSWORD) or none"
)


def _port_problem(port: str) -> bool:
    return port != "" and (not port.isdigit() or not 1 <= int(port) <= 65535)


def _check_libpq_uri(url: str, option: str, shown: str) -> None:
    """The host list and ports of a libpq URI, read as libpq reads them (``HistoryError`` naming ``option``).

    libpq's user part ends at the first ``@`` or ``/``; the host list at the next ``/`` or ``?``.
    A value that may be a piece of a password is never echoed.
    """
    rest = url.split("://", 1)[1]
    stops = [i for i in (rest.find("@"), rest.find("/")) if i >= 0]
    first = min(stops) if stops else -1
    has_user = first >= 0 and rest[first] == "@"
    after = rest[first + 1 :] if has_user else rest
    hosts = after[: min([i for i in (after.find("/"), after.find("?")) if i >= 0], default=len(after))]
    password_seen = mask_url(url) != url
    if has_user and "@" in hosts:
        raise HistoryError(
            f"{option}={shown}: the user part holds an '@' that is not percent-encoded, so libpq would read the rest "
            "as the host: write it as %40 in the URL, or leave the password out of the URL and give it in the "
            "password option (report_history_password) or PGPASSWORD"
        )
    for host in hosts.split(","):
        if host.startswith("["):
            close = host.find("]")
            if close < 0:
                raise HistoryError(
                    f"{option}={shown}: the IPv6 address {host!r} has no closing ']': write it as [ADDRESS] or "
                    "[ADDRESS]:PORT, for example postgresql://USER@[::1]:5432/DB"
                )
            if host[close + 1 :] and not host[close + 1 :].startswith(":"):
                raise HistoryError(
                    f"{option}={shown}: {host!r} has text after ']' that is not :PORT; write [ADDRESS]:PORT"
                )
            port = host[close + 2 :]
        else:
            port = host.partition(":")[2]
        if _port_problem(port):
            if password_seen and not has_user:
                raise HistoryError(
                    f"{option}={shown}: libpq reads the text before the first '/' as HOST:PORT and finds no port "
                    "number there: a '/' in the password must be percent-encoded as %2F (or leave the password out of "
                    "the URL and give it in report_history_password or PGPASSWORD)"
                )
            raise HistoryError(
                f"{option}={shown}: the port {port!r} is not a number from 1 to 65535: write "
                "postgresql://USER@HOST:5432/DB, or leave :PORT out for 5432"
            )
    query = after.split("?", 1)[1] if "?" in after else ""
    for item in query.split("&") if query else ():
        key, _eq, value = item.partition("=")
        if key == "port" and any(_port_problem(p) or p == "" for p in value.split(",")):
            raise HistoryError(f"{option}={shown}: port={value!r} in the query is not a port number from 1 to 65535")


def parse_target(url: str, *, option: str = "report_history") -> HistoryTarget:
    """``sqlite:///PATH`` (``sqlite:////abs/path`` or a relative path), ``postgresql://...`` or ``none``.

    Every problem is a ``HistoryError`` naming ``option`` with the URL masked (``secrets.mask_url``).
    """
    text = url.strip() if isinstance(url, str) else ""
    if text.lower() in ("none", "off", "false", ""):
        return HistoryTarget(kind="none", shown="none")
    shown = mask_url(text)
    if text.startswith("sqlite:///") and len(text) > len("sqlite:///"):
        path = text[len("sqlite:///") :]
        if "\0" in path or "\n" in path:
            raise HistoryError(f"{option}={shown!r}: the path holds a NUL or a newline; {_FORMS}")
        return HistoryTarget(kind="sqlite", path=path, shown=f"sqlite:///{path}")
    if text.startswith(("postgresql://", "postgres://")):
        _check_libpq_uri(text, option, shown)
        return HistoryTarget(kind="postgresql", dsn=text, shown=shown, secrets=tuple(url_secrets(text)))
    raise HistoryError(f"{option}={shown!r} is not a history: {_FORMS}")
