# Copyright (c) esxilab.iperf contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one masker of secrets in URLs: what a message, a result, a report or the history may show of a URL.

A URL may carry a secret in three places, and every one is replaced by ``***`` (``MASK``):

* the password of ``scheme://user:password@host``. The password ends at the **last** ``@`` of the
  URL, so a raw ``#``, ``/``, ``?``, ``:`` or ``@`` in it (libpq reads ``#`` and ``?`` raw) is
  masked whole; an ``@`` inside the query then hides the host as well: over-masking, never a leak;
* a query parameter: for ``postgresql://`` (and ``postgres://``) libpq's secret parameters
  (``SECRET_PARAMS``: ``password``, ``sslpassword``, ``oauth_client_secret``, their names
  percent-decoded); for every other scheme (a ``vib_source`` ``https://...?token=...``) **every**
  query value and the fragment, because any of them may be a signature or a token. A value ends at
  the next ``&`` only (libpq keeps a raw ``#`` in a value);
* libpq's ``key=value`` form (``host=db password=x``): the secret keys' values.

``url_secrets()`` gives the secret values of a URL (raw and percent-decoded) so that
``mask_text()`` also masks them where they appear outside a URL (a driver's error message, a
host's output echoing an argument). Values shorter than ``MIN_SECRET`` characters are masked only
where they stand in the URL (replacing every ``a`` of a message would hide the message, not a secret).

Private module: not part of the collection's public API.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote

__all__ = ["MASK", "SECRET_PARAMS", "mask_text", "mask_url", "redact", "url_secrets"]

MASK = "***"
#: libpq's connection parameters that hold a secret.
SECRET_PARAMS = frozenset(("password", "sslpassword", "oauth_client_secret"))
MIN_SECRET = 3

_SCHEME = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://")
# A URL inside free text: up to white space or a quote (a secret beyond that is masked by url_secrets)
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")
_KEYWORD = re.compile(
    r"(?i)(?P<key>\b(?:" + "|".join(sorted(SECRET_PARAMS)) + r"))(?P<eq>\s*=\s*)(?P<value>'(?:[^'\\]|\\.)*'|\S*)"
)


def _libpq(scheme: str) -> bool:
    return scheme.lower() in ("postgresql", "postgres")


def _split(url: str) -> tuple[str, str | None, str, str] | None:
    """``(scheme, password or None, masked URL without query masking, rest)`` or None when ``url`` is no URL."""
    match = _SCHEME.match(url)
    if match is None:
        return None
    scheme = match["scheme"]
    rest = url[match.end() :]
    at = rest.rfind("@")
    if at >= 0 and ":" in rest[:at]:
        user, password = rest[:at].split(":", 1)
        return scheme, password, f"{match.group(0)}{user}:{MASK}@", rest[at + 1 :]
    return scheme, None, match.group(0), rest


def _query_values(scheme: str, rest: str) -> list[tuple[int, int]]:
    """The spans (in ``rest``) of the query values and the fragment to mask."""
    spans: list[tuple[int, int]] = []
    end = len(rest)
    if not _libpq(scheme) and "#" in rest:  # libpq has no fragment: a raw '#' is part of a value
        end = rest.index("#")
        spans.append((end + 1, len(rest)))
    start = rest.find("?", 0, end)
    if start < 0:
        return spans
    position = start + 1
    for item in rest[start + 1 : end].split("&"):
        key, eq, _value = item.partition("=")
        if eq and (not _libpq(scheme) or unquote(key).strip().lower() in SECRET_PARAMS):
            spans.append((position + len(key) + 1, position + len(item)))
        position += len(item) + 1
    return spans


def mask_url(url: str) -> str:
    """``url`` with its password, its secret query values and libpq ``key=value`` secrets masked."""
    if not isinstance(url, str):
        return url
    parts = _split(url)
    if parts is None:
        return _KEYWORD.sub(lambda m: f"{m['key']}{m['eq']}{MASK}", url)
    scheme, _password, head, rest = parts
    out: list[str] = []
    last = 0
    for begin, end in sorted(_query_values(scheme, rest)):
        if end > begin:
            out.extend((rest[last:begin], MASK))
            last = end
    out.append(rest[last:])
    return head + "".join(out)


def url_secrets(url: str) -> list[str]:
    """The secret values ``url`` holds, raw and percent-decoded, longest first (see the module docstring)."""
    if not isinstance(url, str):
        return []
    found: set[str] = set()
    parts = _split(url)
    if parts is None:
        found.update(m["value"].strip("'") for m in _KEYWORD.finditer(url))
    else:
        scheme, password, _head, rest = parts
        if password:
            found.add(password)
        found.update(rest[begin:end] for begin, end in _query_values(scheme, rest))
    found |= {unquote(value) for value in found}
    return sorted((v for v in found if len(v) >= MIN_SECRET), key=lambda v: (-len(v), v))


def mask_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every URL in it masked (``mask_url``) and every one of ``secrets`` replaced by ``***``."""
    if not isinstance(text, str):
        return text
    for secret in sorted({s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return _URL_IN_TEXT.sub(lambda m: mask_url(m.group(0)), text)


def redact(value: Any, secrets: Iterable[str] = ()) -> Any:
    """``value`` (strings, mappings, lists) with ``mask_text`` applied to every string in it."""
    known = list(secrets)
    if isinstance(value, str):
        return mask_text(value, known)
    if isinstance(value, Mapping):
        return {k: redact(v, known) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v, known) for v in value]
    return value
